// Mutation soak (issue 12): for SOAK_SECONDS (default 60) 64 concurrent clients send
// randomly mutated valid requests — byte flips, truncation, deep nesting, huge numbers,
// wrong types, invalid UTF-8, clients that leave mid-answer — to a live `surge serve`.
// Every answer must be a 200 or a clean 4xx with an OpenAI error body, the process must
// stay up, its memory flat, and once the load stops no KV block or generation may be left.
// Run: SURGE=build/surge node --test tests/node/mutation_soak_test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { test } from 'node:test';

import { mulberry32, startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const CONCURRENCY = 64;
const SEED = Number(process.env.SOAK_SEED ?? Date.now() % 1e9);

const random = mulberry32(SEED);  // a failing run replays by its seed
const pick = (items) => items[Math.floor(random() * items.length)];
const int = (n) => Math.floor(random() * n);

const SEEDS = [
  ['/v1/completions', { prompt: 'Once upon a time', max_tokens: 4, temperature: 0 }],
  ['/v1/completions', { prompt: ['Lily', 'Tom'], max_tokens: 3, n: 2, stop: ['.'], logprobs: 2, seed: 7 }],
  ['/v1/completions', { prompt: [1, 400, 20], max_tokens: 4, stream: true, stream_options: { include_usage: true } }],
  ['/v1/chat/completions', { model: 'stories260K', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 }],
  ['/v1/chat/completions', {
    messages: [{ role: 'system', content: 'Be short.' },
      { role: 'user', content: [{ type: 'text', text: 'Tell' }, { type: 'text', text: 'a story' }] }],
    max_completion_tokens: 3, stream: true, top_p: 0.9, top_k: 5, logprobs: true, top_logprobs: 2,
    priority: 'batch', presence_penalty: 0.5,
  }],
  ['/v1/chat/completions', {
    messages: [{ role: 'user', content: 'x' },
      { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a": [1]}' } }] },
      { role: 'tool', tool_call_id: 'c', content: '1' }],
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'array' } } } } }],
    max_tokens: 2,
  }],
  ['/tokenize', { prompt: 'Once upon a time', add_special_tokens: true }],
  ['/tokenize', { messages: [{ role: 'user', content: 'Hello there' }] }],
  ['/detokenize', { tokens: [1, 400, 20, 30] }],
];

const WRONG_VALUES = [null, true, 0, -1, 1.5, 1e308, -1e308, 99999999999999999999, '', 'x', [], {}, [[[]]], { a: {} }];
const HUGE_NUMBERS = ['1e400', '-1e400', '99999999999999999999999999', '-0', '1E-400', '4294967296', '9223372036854775808'];

function nested(depth) {
  return '['.repeat(depth) + ']'.repeat(depth);
}

// A JSON-level mutation: one field gets a wrong type, a huge number, deep nesting, or goes.
function mutateValue(body) {
  const copy = structuredClone(body);
  const keys = Object.keys(copy);
  const key = pick(keys);
  switch (int(4)) {
    case 0: copy[key] = pick(WRONG_VALUES); return JSON.stringify(copy);
    case 1: delete copy[key]; return JSON.stringify(copy);
    case 2: copy[pick(['extra', key])] = '@@'; return JSON.stringify(copy).replace('"@@"', nested(pick([10, 63, 65, 1000, 100000])));
    default: copy[key] = '@@'; return JSON.stringify(copy).replace('"@@"', pick(HUGE_NUMBERS));
  }
}

// A byte-level mutation of the serialized body.
function mutateBytes(text) {
  const bytes = Buffer.from(text);
  switch (int(5)) {
    case 0: { // flip a few bytes
      for (let i = 0; i < 1 + int(4); ++i) bytes[int(bytes.length)] ^= 1 << int(8);
      return bytes;
    }
    case 1: return bytes.subarray(0, int(bytes.length)); // truncate
    case 2: { // splice in something hostile
      const at = int(bytes.length);
      const insert = Buffer.from(pick(['\\ud800', '\u0000', '\xff\xfe', '"', '{', ']', ',,', nested(5000), '\\', '\\u12']));
      return Buffer.concat([bytes.subarray(0, at), insert, bytes.subarray(at)]);
    }
    case 3: return Buffer.concat([bytes, bytes]); // two documents
    default: return Buffer.from([0xc3, 0x28, ...bytes]); // invalid UTF-8 up front
  }
}

function mutatedRequest() {
  const [path, body] = pick(SEEDS);
  const choice = random();
  if (choice < 0.15) return { path, body: Buffer.from(JSON.stringify(body)) }; // some stay valid
  if (choice < 0.6) return { path, body: Buffer.from(mutateValue(body)) };
  return { path, body: mutateBytes(choice < 0.8 ? JSON.stringify(body) : mutateValue(body)) };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

// Sends one request; resolves with {status, body} or {aborted: true} when we left early.
function send(url, { path, body }, abortAfterMs) {
  return new Promise((resolve, reject) => {
    const request = http.request(url + path, {
      method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': body.length },
    }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode, headers: response.headers,
                                          body: Buffer.concat(chunks).toString() }));
      response.on('error', (error) => (abortAfterMs >= 0 ? resolve({ aborted: true }) : reject(error)));
    });
    request.on('error', (error) => (abortAfterMs >= 0 ? resolve({ aborted: true }) : reject(error)));
    if (abortAfterMs >= 0) setTimeout(() => { request.destroy(); resolve({ aborted: true }); }, abortAfterMs);
    request.end(body);
  });
}

// 200, or a 4xx whose body is OpenAI's error object; never a 5xx, never a reset.
function checkAnswer(request, answer, tally) {
  if (answer.aborted) return ++tally.aborted;
  const what = `${request.path} ${request.body.toString('latin1').slice(0, 120)} -> ${answer.status} ${answer.body.slice(0, 200)}`;
  assert.ok(answer.status === 200 || (answer.status >= 400 && answer.status < 500), what);
  tally[answer.status] = (tally[answer.status] ?? 0) + 1;
  if (answer.status === 200) return;
  const error = JSON.parse(answer.body).error;
  assert.equal(typeof error.message, 'string', what);
  if (answer.status === 429) assert.ok(answer.headers['retry-after'], what);
}

function rssBytes(pid) {
  const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return Number(match[1]) * 1024;
}

function metric(text, name) {
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  assert.ok(line, `metric ${name} present`);
  return Number(line.split(' ')[1]);
}

async function idleMetrics(url) {
  for (let i = 0; i < 50; ++i) {
    const text = await (await fetch(url + '/metrics')).text();
    const values = ['surge_generations_in_flight', 'surge_num_requests_running', 'surge_num_requests_waiting',
      'surge_kv_cache_usage_ratio'].map((name) => metric(text, name));
    if (values.every((v) => v === 0)) return values;
    await new Promise((r) => setTimeout(r, 100));
  }
  return null;
}

test(`mutated requests at concurrency ${CONCURRENCY} for ${SOAK_SECONDS} s (seed ${SEED})`, { timeout: (SOAK_SECONDS + 60) * 1000 }, async () => {
  const { proc, baseUrl, stderr } = await startServer(SURGE, ['--max-waiting', '256', '--kv-cache-memory', '16MiB']);
  try {
    const tally = { aborted: 0 };
    const deadline = Date.now() + SOAK_SECONDS * 1000;
    // Sampled from a third of the way in: by then the KV pool's pages have all been touched
    // (blocks cycle through the prefix cache's LRU) and the allocator holds its working set.
    let rssWarm = 0;
    const warmAt = Date.now() + (SOAK_SECONDS / 3) * 1000;
    const samples = [];
    const sampler = setInterval(() => samples.push((rssBytes(proc.pid) / 2 ** 20).toFixed(1)), 2000);
    const client = async () => {
      while (Date.now() < deadline) {
        const request = mutatedRequest();
        const abortAfterMs = random() < 0.05 ? int(30) : -1;
        checkAnswer(request, await send(baseUrl, request, abortAfterMs), tally);
        if (!rssWarm && Date.now() >= warmAt) rssWarm = rssBytes(proc.pid);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, client));
    clearInterval(sampler);
    console.log(`RSS every 2 s (MiB): ${samples.join(' ')}`);
    const total = Object.entries(tally).reduce((sum, [, n]) => sum + n, 0);
    console.log(`seed ${SEED}: ${total} requests`, JSON.stringify(tally));
    assert.ok(tally[200] > 0 && tally[400] > 0, 'both valid and refused requests were exercised');
    assert.equal(proc.exitCode, null, `the server is still running; stderr:\n${stderr()}`);
    const settled = await idleMetrics(baseUrl);
    assert.ok(settled, 'no generation, sequence or KV block left after the load');
    const rssEnd = rssBytes(proc.pid);
    console.log(`RSS after warm-up ${(rssWarm / 2 ** 20).toFixed(1)} MiB, at the end ${(rssEnd / 2 ** 20).toFixed(1)} MiB`);
    assert.ok(rssEnd <= rssWarm * 1.1 + 16 * 2 ** 20, 'memory stays flat');
    const after = await send(baseUrl, { path: '/v1/completions', body: Buffer.from('{"prompt": "Once", "max_tokens": 3}') }, -1);
    assert.equal(after.status, 200, after.body);
  } finally {
    agent.destroy();
    assert.equal(await stopServer(proc), 0);
  }
});
