// The Vercel AI SDK (`ai` with `@ai-sdk/openai-compatible`) against a real `surge serve` on
// the bundled random-weight model: generateText, streamText, structured output (the
// deprecated generateObject and its successor generateText + Output.object) validated by
// zod, tools with tool_choice auto (accepted; any call must parse), and toolChoice
// 'required' or a named tool (valid calls by constrained decoding).
// Run: node --test tests/node/ai_sdk_test.mjs (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateObject, generateText, Output, streamText, tool } from 'ai';

import { CityArgs, Pet } from './sdk_schemas.mjs';
import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';

let server;
let model;

before(async () => {
  server = await startServer(SURGE);
  const surge = createOpenAICompatible({
    name: 'surge', baseURL: `${server.baseUrl}/v1`, apiKey: 'unused', includeUsage: true, supportsStructuredOutputs: true,
  });
  model = surge.chatModel(MODEL);
});

after(async () => {
  if (server) assert.equal(await stopServer(server.proc), 0, 'surge serve exits 0 on SIGTERM');
});

const common = () => ({ model, maxRetries: 0, maxOutputTokens: 24, temperature: 0 });

test('generateText: text, finish reason and usage', async () => {
  const result = await generateText({ ...common(), prompt: 'Tell me a story.' });
  assert.equal(typeof result.text, 'string');
  assert.ok(result.text.length > 0);
  assert.equal(result.finishReason, 'length');
  assert.equal(result.usage.outputTokens, 24);
  assert.ok(result.usage.inputTokens > 0);
  assert.deepEqual(result.warnings ?? [], [], 'no setting was dropped by the provider');
  const again = await generateText({ ...common(), system: 'Be brief.', messages: [{ role: 'user', content: 'Tell me a story.' }] });
  assert.ok(again.text.length > 0);
});

test('streamText: deltas add up to the same text as generateText, usage at the end', async () => {
  const whole = await generateText({ ...common(), prompt: 'Once upon a time' });
  const contentTypes = [];
  const recording = createOpenAICompatible({
    name: 'surge', baseURL: `${server.baseUrl}/v1`, apiKey: 'unused', includeUsage: true,
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      contentTypes.push(response.headers.get('content-type'));
      return response;
    },
  });
  const result = streamText({ ...common(), model: recording.chatModel(MODEL), prompt: 'Once upon a time' });
  let text = '';
  for await (const delta of result.textStream) text += delta;
  // The number of deltas is not fixed: when the engine outpaces the drain, one SSE event
  // carries several tokens (all 24, at times).
  assert.match(contentTypes[0], /^text\/event-stream/);
  assert.equal(text, whole.text, 'greedy: the stream matches the whole answer');
  assert.equal(await result.finishReason, 'length');
  assert.equal((await result.usage).outputTokens, 24);
});

test('generateObject and Output.object: a zod-valid object by constrained decoding', async () => {
  for (let seed = 0; seed < 3; ++seed) {
    const { object } = await generateObject({
      ...common(), maxOutputTokens: 200, temperature: 1, seed, schema: Pet, schemaName: 'pet', prompt: 'Describe a pet.',
    });
    assert.deepEqual(Pet.parse(object), object);
  }
  const { output, warnings } = await generateText({
    ...common(), maxOutputTokens: 200, output: Output.object({ schema: Pet }), prompt: 'Describe a pet.',
  });
  assert.deepEqual(Pet.parse(output), output);
  assert.deepEqual(warnings ?? [], [], 'structured outputs go through as json_schema');
});

test('tools with tool choice auto are accepted; any tool call parses', async () => {
  const getWeather = tool({
    description: 'The weather in a city',
    inputSchema: CityArgs,
  });
  const sent = [];
  const recording = createOpenAICompatible({
    name: 'surge', baseURL: `${server.baseUrl}/v1`, apiKey: 'unused',
    fetch: (url, init) => { sent.push(JSON.parse(init.body)); return fetch(url, init); },
  });
  const result = await generateText({
    ...common(), model: recording.chatModel(MODEL), prompt: 'What is the weather in Paris?',
    tools: { get_weather: getWeather }, toolChoice: 'auto',
  });
  assert.equal(sent.length, 1);
  assert.equal(sent[0].tool_choice, 'auto');
  assert.equal(sent[0].tools[0].type, 'function');
  assert.equal(sent[0].tools[0].function.name, 'get_weather');
  assert.equal(sent[0].tools[0].function.parameters.properties.city.type, 'string');
  assert.ok(['length', 'stop', 'tool-calls'].includes(result.finishReason), result.finishReason);
  for (const call of result.toolCalls) {
    assert.equal(call.toolName, 'get_weather');
    assert.equal(typeof call.input.city, 'string');
  }
});

// toolChoice 'required' and a named tool: the output is held to the tool's schema.
test('toolChoice required and a named tool give valid calls', async () => {
  const getWeather = tool({ description: 'The weather in a city', inputSchema: CityArgs });
  for (const toolChoice of ['required', { type: 'tool', toolName: 'get_weather' }]) {
    const result = await generateText({
      ...common(), maxOutputTokens: 200, temperature: 1, seed: 5, prompt: 'What is the weather in Paris?',
      tools: { get_weather: getWeather }, toolChoice, providerOptions: { surge: { parallel_tool_calls: false } },
    });
    assert.equal(result.toolCalls.length, 1, JSON.stringify(result.toolCalls));
    assert.equal(result.toolCalls[0].toolName, 'get_weather');
    assert.deepEqual(CityArgs.parse(result.toolCalls[0].input), result.toolCalls[0].input);
    assert.equal(result.finishReason, 'tool-calls');
  }
});

test('a bad request surfaces as an APICallError with the server message', async () => {
  const surge = createOpenAICompatible({ name: 'surge', baseURL: `${server.baseUrl}/v1`, apiKey: 'unused' });
  await assert.rejects(
    generateText({ ...common(), model: surge.chatModel('no-such-model'), prompt: 'x' }),
    (error) => APICallError.isInstance(error) && error.statusCode === 404 && /no-such-model/.test(error.message));
  await assert.rejects(
    generateText({ ...common(), maxOutputTokens: 100_000, prompt: 'x' }),
    (error) => APICallError.isInstance(error) && error.statusCode === 400);
});
