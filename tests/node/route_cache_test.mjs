// surge route's exact response cache, end to end: the official `openai` client through the
// router in front of a real `surge serve` on the bundled model. A hit equals the live answer
// (whole and streamed, the same chunk shapes) and costs the engine nothing (its
// surge_http_requests_total does not move); tenants are apart; sampled requests are not
// cached; the controls, the TTL, the LRU bound and DELETE /cache; and with a real
// redis-server on a free port: entries outlive a router restart, a killed Redis leaves
// requests answered (uncached) and caching resumes once it is back on the same port.
// Run: node --test tests/node/route_cache_test.mjs (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import OpenAI from 'openai';

import { engineGenerationRequests, metricSum, startRouter, waitFor } from './route_util.mjs';
import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';
const HAVE_REDIS = !spawnSync('redis-server', ['--version']).error;

let engine;
let router;  // memory cache, API keys (acme is an admin), LRU bound of 4 entries
let keysFile;
const routers = [];

function client(baseUrl, apiKey = 'sk-acme') {
  return new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey, maxRetries: 0, timeout: 20_000 });
}

async function startCacheRouter(args) {
  const r = await startRouter(SURGE, [engine.baseUrl], ['--api-keys', keysFile, ...args]);
  routers.push(r);
  return r;
}

async function engineRequests() {
  return engineGenerationRequests(engine.baseUrl);
}

const routerCounter = metricSum;

async function chat(openai, params) {
  const { data, response } = await openai.chat.completions.create(params).withResponse();
  return { data, cache: response.headers.get('x-surge-cache') };
}

async function completion(openai, params) {
  const { data, response } = await openai.completions.create(params).withResponse();
  return { data, cache: response.headers.get('x-surge-cache') };
}

// The stream's chunks and its x-surge-cache header.
async function stream(create, params) {
  const { data, response } = await create({ ...params, stream: true }).withResponse();
  const chunks = [];
  for await (const chunk of data) chunks.push(chunk);
  return { chunks, cache: response.headers.get('x-surge-cache') };
}

// What a stream says and how it is shaped, without the per-response id and created.
function streamShape(chunks, pick) {
  return {
    text: chunks.map((c) => (c.choices[0] ? pick(c.choices[0]) ?? '' : '')).join(''),
    objects: [...new Set(chunks.map((c) => c.object))],
    keys: [...new Set(chunks.flatMap((c) => Object.keys(c)))].sort(),
    choiceKeys: [...new Set(chunks.flatMap((c) => c.choices.flatMap((x) => Object.keys(x))))].sort(),
    finish: chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter((f) => f !== null),
    usage: chunks.filter((c) => c.usage).map((c) => [c.usage.prompt_tokens, c.usage.completion_tokens]),
  };
}

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'route-cache-'));
  keysFile = join(dir, 'keys.json');
  writeFileSync(keysFile, JSON.stringify([{ key: 'sk-acme', tenant: 'acme', admin: true },
                                          { key: 'sk-globex', tenant: 'globex' }]));
  engine = await startServer(SURGE, ['--threads', '1']);
  router = await startCacheRouter(['--cache', 'memory', '--cache-max-entries', '4']);
});

after(async () => {
  for (const r of routers) if (r.proc.exitCode === null) await stopServer(r.proc);
  if (engine) await stopServer(engine.proc);
});

test('chat: a hit equals the live answer, whole and streamed, and the engine does no work', async () => {
  const openai = client(router.baseUrl);
  const params = { model: MODEL, messages: [{ role: 'user', content: 'A story about a cat.' }], max_tokens: 24,
                   temperature: 0 };
  const live = await stream(openai.chat.completions.create.bind(openai.chat.completions),
                            { ...params, stream_options: { include_usage: true } });
  assert.equal(live.cache, 'miss');
  const before = await engineRequests();
  const hit = await stream(openai.chat.completions.create.bind(openai.chat.completions),
                           { ...params, stream_options: { include_usage: true } });
  assert.equal(hit.cache, 'hit');
  assert.deepEqual(streamShape(hit.chunks, (c) => c.delta.content), streamShape(live.chunks, (c) => c.delta.content));
  assert.equal(hit.chunks[0].choices[0].delta.role, 'assistant');
  // The stream carried usage, so the same request asked whole is a hit too.
  const whole = await chat(openai, params);
  assert.equal(whole.cache, 'hit');
  assert.equal(whole.data.object, 'chat.completion');
  assert.equal(whole.data.choices[0].message.content, streamShape(live.chunks, (c) => c.delta.content).text);
  assert.equal(whole.data.usage.prompt_tokens_details.cached_tokens, whole.data.usage.prompt_tokens);
  assert.equal(await engineRequests(), before, 'hits never reach the engine');
  // Parameter order and stream flags are not part of the key; a changed parameter is.
  const reordered = { temperature: 0, max_tokens: 24, messages: params.messages, model: MODEL, user: 'someone' };
  assert.equal((await chat(openai, reordered)).cache, 'hit');
  assert.equal((await chat(openai, { ...params, max_tokens: 23 })).cache, 'miss');
});

test('completions: whole and streamed hits equal the live answers', async () => {
  const openai = client(router.baseUrl);
  const create = openai.completions.create.bind(openai.completions);
  const params = { model: MODEL, prompt: 'Once upon a time', max_tokens: 20, temperature: 0 };
  const live = await completion(openai, params);
  assert.equal(live.cache, 'miss');
  const liveStream = await stream(create, params);  // a whole entry answers a stream
  assert.equal(liveStream.cache, 'hit');
  const hit = await completion(openai, params);
  assert.equal(hit.cache, 'hit');
  assert.equal(hit.data.choices[0].text, live.data.choices[0].text);
  assert.equal(hit.data.choices[0].finish_reason, live.data.choices[0].finish_reason);
  assert.equal(hit.data.usage.completion_tokens, live.data.usage.completion_tokens);
  assert.notEqual(hit.data.id, live.data.id, 'a fresh id per response');
  // The replayed stream has the live stream's shape: compare with the engine's own.
  const direct = client(engine.baseUrl);
  const engineStream = await stream(direct.completions.create.bind(direct.completions), params);
  assert.deepEqual(streamShape(liveStream.chunks, (c) => c.text), streamShape(engineStream.chunks, (c) => c.text));
});

test('tenants are apart, sampling is not cached, controls and bad fields', async () => {
  const params = { model: MODEL, messages: [{ role: 'user', content: 'Lily and Ben' }], max_tokens: 16,
                   temperature: 0 };
  assert.equal((await chat(client(router.baseUrl), params)).cache, 'miss');
  assert.equal((await chat(client(router.baseUrl), params)).cache, 'hit');
  const before = await engineRequests();
  assert.equal((await chat(client(router.baseUrl, 'sk-globex'), params)).cache, 'miss', 'globex never sees acme\'s');
  assert.equal(await engineRequests(), before + 1);

  const sampled = { ...params, temperature: 0.8 };
  for (let i = 0; i < 2; ++i) assert.equal((await chat(client(router.baseUrl), sampled)).cache, 'bypass');
  assert.equal(await engineRequests(), before + 3);
  const seeded = { ...sampled, seed: 42 };
  assert.equal((await chat(client(router.baseUrl), seeded)).cache, 'miss');
  assert.equal((await chat(client(router.baseUrl), seeded)).cache, 'hit');

  const post = (body, headers = {}) => fetch(`${router.baseUrl}/v1/chat/completions`, {
    method: 'POST', body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-acme', ...headers } });
  const fresh = { ...params, messages: [{ role: 'user', content: 'One day' }] };
  let response = await post({ ...fresh, cache: { no_store: true } });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-surge-cache'), 'miss');
  response = await post(fresh, { 'cache-control': 'no-cache' });
  assert.equal(response.headers.get('x-surge-cache'), 'bypass', 'no-cache skips the lookup');
  assert.equal((await post(fresh)).headers.get('x-surge-cache'), 'hit', '... but still stores');
  response = await post({ ...fresh, cache: { no_cahce: true } });
  assert.equal(response.status, 400);
  assert.match((await response.json()).error.message, /cache\.no_cahce/);
  response = await post({ ...fresh, cache: { ttl_s: 'long' } });
  assert.equal(response.status, 400);
  assert.match((await response.json()).error.message, /cache\.ttl_s/);
});

test('LRU bound, DELETE /cache by scope for admin keys only', async () => {
  const flush = (query, key) => fetch(`${router.baseUrl}/cache${query}`,
                                      { method: 'DELETE', headers: { authorization: `Bearer ${key}` } });
  assert.equal((await flush('', 'sk-globex')).status, 403);
  assert.equal((await flush('', 'sk-nobody')).status, 401);
  assert.equal((await flush('', 'sk-acme')).status, 200);
  const openai = client(router.baseUrl);
  const ask = (i) => completion(openai, { model: MODEL, prompt: `Story ${i}`, max_tokens: 4, temperature: 0 });
  for (let i = 0; i < 5; ++i) assert.equal((await ask(i)).cache, 'miss');
  assert.equal((await ask(4)).cache, 'hit');
  assert.equal((await ask(0)).cache, 'miss', 'the least recently used went when the fifth came');
  assert.ok(await routerCounter(router.baseUrl, 'surge_router_cache_evictions_total{kind="exact",scope="acme",reason="lru"}') >= 1);
  assert.equal(await routerCounter(router.baseUrl, 'surge_router_cache_entries{'), 4);

  const params = { model: MODEL, prompt: 'The little dog', max_tokens: 4, temperature: 0 };
  await completion(client(router.baseUrl, 'sk-globex'), params);
  await completion(openai, params);
  const flushed = await flush('?scope=globex', 'sk-acme');
  assert.deepEqual(await flushed.json(), { flushed: 1, scope: 'globex' });
  assert.equal((await completion(client(router.baseUrl, 'sk-globex'), params)).cache, 'miss');
  assert.equal((await completion(openai, params)).cache, 'hit', 'acme kept its entry');
});

test('entries expire after --cache-ttl', async () => {
  const short = await startCacheRouter(['--cache', 'memory', '--cache-ttl', '1']);
  const openai = client(short.baseUrl);
  const params = { model: MODEL, prompt: 'The sun', max_tokens: 4, temperature: 0 };
  assert.equal((await completion(openai, params)).cache, 'miss');
  assert.equal((await completion(openai, params)).cache, 'hit');
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal((await completion(openai, params)).cache, 'miss');
  await stopServer(short.proc);
});

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// Listening a moment later: the callers wait for their first hit rather than for the port.
function startRedis(port) {
  return spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
               { stdio: 'ignore' });
}

test('redis: entries outlive a router restart; a killed redis costs caching, never a request', {
  skip: HAVE_REDIS ? false : 'redis-server is not installed (scripts/setup.sh installs it)',
}, async () => {
  const port = await freePort();
  let redis = startRedis(port);
  const args = ['--cache', `redis://127.0.0.1:${port}/1`, '--cache-redis-timeout-ms', '200'];
  let r = await startCacheRouter(args);
  const params = { model: MODEL, prompt: 'A big red ball', max_tokens: 8, temperature: 0 };
  const ask = async () => completion(client(r.baseUrl), params);
  // redis-server may take a moment to listen: the first store may be lost, not the request.
  assert.ok(await waitFor(async () => (await ask()).cache === 'hit', 10_000), 'a hit once redis answers');
  const answer = (await ask()).data.choices[0].text;

  assert.equal(await stopServer(r.proc), 0);
  r = await startCacheRouter(args);
  const before = await engineRequests();
  const afterRestart = await ask();
  assert.equal(afterRestart.cache, 'hit', 'the entry is in redis, not in the router');
  assert.equal(afterRestart.data.choices[0].text, answer);
  assert.equal(await engineRequests(), before);

  redis.kill('SIGKILL');
  await new Promise((resolve) => redis.on('exit', resolve));
  for (let i = 0; i < 3; ++i) {
    const down = await ask();
    assert.equal(down.cache, 'miss', 'uncached while redis is down');
    assert.equal(down.data.choices[0].text, answer);
  }
  assert.ok(await routerCounter(r.baseUrl, 'surge_router_cache_errors_total{') >= 1);
  assert.equal(await routerCounter(r.baseUrl, 'surge_router_cache_backend_up{'), 0);

  redis = startRedis(port);  // empty: it kept nothing on disk
  assert.ok(await waitFor(async () => (await ask()).cache === 'hit', 10_000), 'caching resumes');
  assert.equal(await routerCounter(r.baseUrl, 'surge_router_cache_backend_up{'), 1);
  redis.kill('SIGKILL');
});
