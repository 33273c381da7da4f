// LangChain's ChatOpenAI (@langchain/openai) against a real `surge serve` on the bundled
// random-weight model: invoke, stream, withStructuredOutput(zod, {method: "jsonSchema"})
// (schema-valid by constrained decoding), bindTools with tool_choice "auto" (accepted; any
// call must parse), withStructuredOutput(method "functionCalling", a named tool_choice) and
// tool_choice "required" (valid calls by constrained decoding), and a bad request
// surfacing as an error. Run: node --test tests/node/langchain_test.mjs (SURGE=...).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { AIMessageChunk, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';

import { CityArgs, Pet } from './sdk_schemas.mjs';
import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';

let server;

before(async () => {
  server = await startServer(SURGE);
});

after(async () => {
  if (server) assert.equal(await stopServer(server.proc), 0, 'surge serve exits 0 on SIGTERM');
});

function chat(fields = {}) {
  return new ChatOpenAI({
    model: MODEL, apiKey: 'unused', temperature: 0, maxTokens: 24, maxRetries: 0, timeout: 30_000,
    configuration: { baseURL: `${server.baseUrl}/v1` }, ...fields,
  });
}

test('invoke: an AIMessage with text and token usage', async () => {
  const message = await chat().invoke([new SystemMessage('Be brief.'), new HumanMessage('Tell me a story.')]);
  assert.equal(typeof message.content, 'string');
  assert.ok(message.content.length > 0);
  assert.equal(message.response_metadata.finish_reason, 'length');
  assert.equal(message.usage_metadata.output_tokens, 24);
  assert.ok(message.usage_metadata.input_tokens > 0);
});

test('stream: chunks concatenate to the invoked answer', async () => {
  const whole = await chat().invoke('Once upon a time');
  const contentTypes = [];
  const recordingFetch = async (url, init) => {
    const response = await fetch(url, init);
    contentTypes.push(response.headers.get('content-type'));
    return response;
  };
  const streaming = chat({ streamUsage: true, configuration: { baseURL: `${server.baseUrl}/v1`, fetch: recordingFetch } });
  let merged;
  for await (const chunk of await streaming.stream('Once upon a time')) {
    assert.ok(chunk instanceof AIMessageChunk);
    merged = merged === undefined ? chunk : merged.concat(chunk);
  }
  // How many chunks is not fixed: one SSE event may carry several tokens.
  assert.match(contentTypes[0], /^text\/event-stream/);
  assert.equal(merged.content, whole.content, 'greedy: the stream matches the whole answer');
  assert.equal(merged.usage_metadata.output_tokens, 24);
});

test('withStructuredOutput (jsonSchema): a zod-valid object by constrained decoding', async () => {
  for (let seed = 0; seed < 3; ++seed) {
    const structured = chat({ maxTokens: 200, temperature: 1, modelKwargs: { seed } })
      .withStructuredOutput(Pet, { method: 'jsonSchema', name: 'pet' });
    const pet = await structured.invoke('Describe a pet.');
    assert.deepEqual(Pet.parse(pet), pet);
  }
  const raw = await chat({ maxTokens: 200 }).withStructuredOutput(Pet, { method: 'jsonSchema', includeRaw: true })
    .invoke('Describe a pet.');
  assert.deepEqual(Pet.parse(raw.parsed), raw.parsed);
  assert.deepEqual(JSON.parse(raw.raw.content), raw.parsed);
});

test('bindTools with tool_choice auto is accepted; any tool call parses', async () => {
  const getWeather = {
    name: 'get_weather', description: 'The weather in a city',
    schema: CityArgs,
  };
  const sent = [];
  const recordingFetch = (url, init) => { sent.push(JSON.parse(init.body)); return fetch(url, init); };
  const model = chat({ configuration: { baseURL: `${server.baseUrl}/v1`, fetch: recordingFetch } })
    .bindTools([getWeather], { tool_choice: 'auto' });
  const message = await model.invoke('What is the weather in Paris?');
  assert.equal(sent[0].tool_choice, 'auto');
  assert.equal(sent[0].tools[0].function.name, 'get_weather');
  assert.equal(sent[0].tools[0].function.parameters.properties.city.type, 'string');
  assert.ok(['length', 'stop', 'tool_calls'].includes(message.response_metadata.finish_reason));
  for (const call of message.tool_calls) {
    assert.equal(call.name, 'get_weather');
    assert.equal(typeof call.args.city, 'string');
  }
  assert.deepEqual(message.invalid_tool_calls ?? [], []);
  let merged;
  for await (const chunk of await model.stream('What is the weather in Paris?')) merged = merged ? merged.concat(chunk) : chunk;
  for (const call of merged.tool_calls ?? []) assert.equal(call.name, 'get_weather');
});

// A named tool_choice (functionCalling) and "required": the output is held to the tool's
// schema, so even this model returns a valid call.
test('withStructuredOutput (functionCalling) and tool_choice required give valid calls', async () => {
  for (let seed = 0; seed < 3; ++seed) {
    const structured = chat({ maxTokens: 200, temperature: 1, modelKwargs: { seed } })
      .withStructuredOutput(Pet, { method: 'functionCalling', name: 'pet' });
    const pet = await structured.invoke('Describe a pet.');
    assert.deepEqual(Pet.parse(pet), pet);
  }
  const getWeather = { name: 'get_weather', description: 'The weather in a city', schema: CityArgs };
  const message = await chat({ maxTokens: 200, temperature: 1, modelKwargs: { seed: 4 } })
    .bindTools([getWeather], { tool_choice: 'required', parallel_tool_calls: false })
    .invoke('What is the weather in Paris?');
  assert.equal(message.tool_calls.length, 1, JSON.stringify(message.tool_calls));
  assert.equal(message.tool_calls[0].name, 'get_weather');
  assert.deepEqual(CityArgs.parse(message.tool_calls[0].args), message.tool_calls[0].args);
  assert.deepEqual(message.invalid_tool_calls ?? [], []);
});

test('a bad request surfaces as an error with the status and the server message', async () => {
  await assert.rejects(chat({ model: 'no-such-model' }).invoke('x'),
    (error) => error.status === 404 && /no-such-model/.test(error.message));
  await assert.rejects(chat({ topP: 3 }).invoke('x'),
    (error) => error.status === 400 && error.error?.param === 'top_p' && /top_p/.test(error.message));
  // LangChain recognizes surge's OpenAI-worded context error as a context overflow.
  await assert.rejects(chat({ maxTokens: 100_000 }).invoke('x'),
    (error) => error.name === 'ContextOverflowError' && /maximum context length is 512 tokens/.test(error.message));
});
