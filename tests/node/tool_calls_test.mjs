// The official `openai` client gets tool calls from `surge serve --tool-call-parser hermes`,
// whole and streamed. stories260K never calls tools, so the server gets a tokenizer in
// which one token of the model's greedy answer decodes as a whole <tool_call>…</tool_call>
// (an added token over that id): model, sampler, detokenizer and server are the real ones.
// Run: node --test tests/node/tool_calls_test.mjs (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import OpenAI from 'openai';

import { MODEL_DIR, postJson, startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';
const CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
const messages = [{ role: 'user', content: 'Tell me a story.' }];
const tools = [{
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
}];
const request = { model: MODEL, messages, tools, max_tokens: 24, temperature: 0 };

let server;
let client;

// An id of the plain server's greedy answer that comes once, a few tokens in.
async function pickCallToken() {
  const plain = await startServer(SURGE);
  try {
    const answer = await postJson(plain.baseUrl, '/v1/chat/completions', { model: MODEL, messages, max_tokens: 24, temperature: 0 });
    const text = answer.body.choices[0].message.content;
    const tokenized = await postJson(plain.baseUrl, '/tokenize', { model: MODEL, prompt: text, add_special_tokens: false });
    const ids = tokenized.body.tokens;
    for (let i = 3; i + 4 < ids.length; ++i) {
      if (ids.indexOf(ids[i]) === i) return ids[i];
    }
    throw new Error(`no token of the greedy answer fits: ${JSON.stringify(ids)}`);
  } finally {
    await stopServer(plain.proc);
  }
}

function writeToolTokenizer(id) {
  const dir = mkdtempSync(join(tmpdir(), 'surge-tool-tokenizer-'));
  const tokenizer = JSON.parse(readFileSync(`${MODEL_DIR}/tokenizer.json`, 'utf8'));
  tokenizer.added_tokens.push({ id, content: CALL, special: false });
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  for (const name of ['tokenizer_config.json', 'generation_config.json']) {
    copyFileSync(`${MODEL_DIR}/${name}`, join(dir, name));
  }
  return dir;
}

before(async () => {
  const dir = writeToolTokenizer(await pickCallToken());
  server = await startServer(SURGE, ['--tokenizer', dir, '--tool-call-parser', 'hermes']);
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
});

after(async () => {
  if (server) assert.equal(await stopServer(server.proc), 0, 'surge serve exits 0 on SIGTERM');
});

function assertCall(call) {
  assert.match(call.id, /^call_[A-Za-z0-9]{24}$/);
  assert.equal(call.type, 'function');
  assert.equal(call.function.name, 'get_weather');
  assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris' });
}

test('chat.completions.create returns message.tool_calls', async () => {
  const completion = await client.chat.completions.create(request);
  const { message } = completion.choices[0];
  assert.equal(message.tool_calls.length, 1, JSON.stringify(message));
  assertCall(message.tool_calls[0]);
  assert.ok(!(message.content ?? '').includes('tool_call'), message.content);
  assert.equal(completion.choices[0].finish_reason, 'length');  // max_tokens cut it: not "tool_calls"
});

test('streamed tool_calls deltas add up as the client accumulates them', async () => {
  const stream = await client.chat.completions.create({ ...request, stream: true });
  const calls = [];
  let content = '';
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta ?? {};
    content += delta.content ?? '';
    for (const part of delta.tool_calls ?? []) {
      if (part.id) {
        assert.equal(part.index, calls.length);
        calls.push({ id: part.id, type: part.type, function: { name: part.function.name, arguments: '' } });
      }
      calls[part.index].function.arguments += part.function?.arguments ?? '';
    }
  }
  assert.equal(calls.length, 1);
  assertCall(calls[0]);
  assert.ok(!content.includes('tool_call'), content);
  const whole = await client.chat.completions.create(request);
  assert.equal(content, whole.choices[0].message.content ?? '');
});

test('tool_choice "required" is refused until constrained decoding exists', async () => {
  await assert.rejects(client.chat.completions.create({ ...request, tool_choice: 'required' }),
    (error) => error instanceof OpenAI.BadRequestError && error.param === 'tool_choice');
});
