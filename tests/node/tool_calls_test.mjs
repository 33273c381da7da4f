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

import Ajv from 'ajv';
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

// tool_choice "required" / named: the output is held to the tools' schemas, so even this
// model, which never calls tools of its own accord, returns calls whose arguments validate.
const forcedTools = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 8 } }, required: ['city'] } } },
  {
    type: 'function',
    function: {
      name: 'get_weather_strict',
      strict: true,
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', maxLength: 8 }, days: { type: 'integer', minimum: 1, maximum: 7 } },
        required: ['city', 'days'],
        additionalProperties: false,
      },
    },
  },
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { enum: ['UTC', 'CET'] } }, required: ['tz'] } } },
];
const ajv = new Ajv({ strict: false });
const validators = Object.fromEntries(forcedTools.map((t) => [t.function.name, ajv.compile(t.function.parameters)]));

function assertValidCall(call) {
  assert.match(call.id, /^call_[A-Za-z0-9]{24}$/);
  const validate = validators[call.function.name];
  assert.ok(validate, `unknown tool ${call.function.name}`);
  const args = JSON.parse(call.function.arguments);
  assert.ok(validate(args), `${call.function.arguments}: ${ajv.errorsText(validate.errors)}`);
}

async function streamedCalls(body) {
  const stream = await client.chat.completions.create({ ...body, stream: true });
  const calls = [];
  let finish;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    finish = choice.finish_reason ?? finish;
    assert.ok(!choice.delta.content, `content beside a forced call: ${choice.delta.content}`);
    for (const part of choice.delta.tool_calls ?? []) {
      if (part.id) calls[part.index] = { id: part.id, function: { name: part.function.name, arguments: '' } };
      calls[part.index].function.arguments += part.function?.arguments ?? '';
    }
  }
  return { calls, finish };
}

test('tool_choice "required" returns valid calls of the given tools, whole and streamed', async () => {
  for (let seed = 1; seed <= 6; ++seed) {
    const body = { ...request, tools: forcedTools, tool_choice: 'required', max_tokens: 120, temperature: 1, seed };
    const whole = await client.chat.completions.create(body);
    const { message, finish_reason: finish } = whole.choices[0];
    // A list of calls has no end of its own: this model may add calls until max_tokens
    // (the cut one is not sent).
    assert.ok(finish === 'tool_calls' || finish === 'length', JSON.stringify(whole.choices[0]));
    assert.ok(message.tool_calls.length >= 1);
    message.tool_calls.forEach(assertValidCall);
    const streamed = await streamedCalls(body);
    assert.equal(streamed.finish, finish);
    assert.deepEqual(streamed.calls.map((c) => [c.function.name, c.function.arguments]),
      message.tool_calls.map((c) => [c.function.name, c.function.arguments]), 'same seed, same calls');
  }
  for (let seed = 1; seed <= 3; ++seed) {
    const single = await client.chat.completions.create({ ...request, tools: forcedTools, tool_choice: 'required',
      parallel_tool_calls: false, max_tokens: 120, temperature: 1, seed });
    assert.equal(single.choices[0].finish_reason, 'tool_calls', JSON.stringify(single.choices[0]));
    assert.equal(single.choices[0].message.tool_calls.length, 1);
    assertValidCall(single.choices[0].message.tool_calls[0]);
  }
});

test('a named tool_choice returns that function with valid arguments', async () => {
  for (const name of ['get_weather_strict', 'get_time']) {
    const body = { ...request, tools: forcedTools, tool_choice: { type: 'function', function: { name } }, max_tokens: 120, temperature: 1, seed: 7 };
    const whole = await client.chat.completions.create(body);
    const calls = whole.choices[0].message.tool_calls;
    assert.equal(calls.length, 1);
    assert.equal(calls[0].function.name, name);
    assertValidCall(calls[0]);
    const streamed = await streamedCalls(body);
    assert.equal(streamed.calls.length, 1);
    assert.equal(streamed.calls[0].function.arguments, calls[0].function.arguments);
  }
});

test('bad tool choices are 400s naming the field', async () => {
  const refused = async (body, param) => assert.rejects(client.chat.completions.create({ ...request, ...body }),
    (error) => error instanceof OpenAI.BadRequestError && error.param === param);
  await refused({ tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice');
  await refused({ tools: forcedTools }, 'tools');  // strict under "auto": not enforceable
  await refused({ tool_choice: 'required', response_format: { type: 'json_object' } }, 'response_format');
});
