// What the random-weight and toy models could not show, on the trained default model
// (SmolLM2-135M-Instruct, Q4_1 GGUF) through the real clients: structured output (json_object,
// json_schema, the SDKs' parse helpers) finishes inside max_tokens (finish_reason "stop") and
// validates; tools with tool_choice required come back as calls (constrained decoding); with
// tool_choice auto the 135M model answers the weather question in prose rather than calling
// (it was not trained for tool use), so auto checks only that whatever comes back is
// well-formed: a parsed call or text. The model's own
// ChatML template has no tools, so the server runs with tests/data/chat_template_smollm2_tools.jinja
// (the same ChatML plus Hermes-style tools) and --tool-call-parser hermes.
// Run: node --test tests/node/smollm2_clients_test.mjs (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, Output, tool } from 'ai';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';

import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
export const SMOLLM2 = 'models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf';
const MODEL = 'SmolLM2-135M-Instruct.Q4_1.gguf';
const MAX_TOKENS = 200;

const Person = z.object({ name: z.string().max(40), age: z.number().int().min(0).max(150) });
const City = z.object({ city: z.string().max(40) });
const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather', description: 'Get the current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 40 } }, required: ['city'] },
  },
};
const WEATHER_QUESTION = [{ role: 'user', content: 'What is the weather like in Paris right now?' }];
const PERSON_QUESTION = [{ role: 'user', content: 'Give me the name and age of a famous scientist as JSON.' }];

let server;
let client;

before(async () => {
  assert.ok(existsSync(SMOLLM2), `${SMOLLM2} is missing: run scripts/setup.sh`);
  server = await startServer(SURGE, ['--chat-template', 'tests/data/chat_template_smollm2_tools.jinja',
                                     '--tool-call-parser', 'hermes'], SMOLLM2);
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120_000 });
});

after(async () => {
  if (server) assert.equal(await stopServer(server.proc), 0, 'surge serve exits 0 on SIGTERM');
});

function create(body) {
  return client.chat.completions.create({ model: MODEL, temperature: 0, max_tokens: MAX_TOKENS, ...body });
}

test('openai: json_object finishes with stop and parses', async () => {
  const reply = await create({ messages: PERSON_QUESTION, response_format: { type: 'json_object' } });
  assert.equal(reply.choices[0].finish_reason, 'stop', reply.choices[0].message.content);
  assert.equal(typeof JSON.parse(reply.choices[0].message.content), 'object');
});

test('openai: chat.completions.parse with zodResponseFormat (json_schema)', async () => {
  const reply = await client.chat.completions.parse({
    model: MODEL, temperature: 0, max_tokens: MAX_TOKENS, messages: PERSON_QUESTION,
    response_format: zodResponseFormat(Person, 'person'),
  });
  assert.equal(reply.choices[0].finish_reason, 'stop');
  assert.deepEqual(Person.parse(reply.choices[0].message.parsed), reply.choices[0].message.parsed);
});

test('openai: tool_choice auto gives a parsed call or text', async () => {
  const reply = await create({ messages: WEATHER_QUESTION, tools: [WEATHER_TOOL], tool_choice: 'auto' });
  const { message, finish_reason: finish } = reply.choices[0];
  if (finish === 'tool_calls') {
    assert.equal(message.tool_calls[0].function.name, 'get_weather');
    City.parse(JSON.parse(message.tool_calls[0].function.arguments));
  } else {
    assert.ok(message.content.length > 0);
  }
});

for (const toolChoice of ['required', { type: 'function', function: { name: 'get_weather' } }]) {
  test(`openai: tool_choice ${JSON.stringify(toolChoice)} comes back as a get_weather call`, async () => {
    const reply = await create({ messages: WEATHER_QUESTION, tools: [WEATHER_TOOL], tool_choice: toolChoice });
    const { message, finish_reason: finish } = reply.choices[0];
    assert.equal(finish, 'tool_calls', JSON.stringify(message));
    assert.equal(message.tool_calls.length >= 1, true);
    assert.equal(message.tool_calls[0].function.name, 'get_weather');
    assert.equal(typeof City.parse(JSON.parse(message.tool_calls[0].function.arguments)).city, 'string');
  });
}

function langchain(fields = {}) {
  return new ChatOpenAI({
    model: MODEL, apiKey: 'unused', temperature: 0, maxTokens: MAX_TOKENS, maxRetries: 0, timeout: 120_000,
    configuration: { baseURL: `${server.baseUrl}/v1` }, ...fields,
  });
}

test('langchain: withStructuredOutput (jsonSchema) validates', async () => {
  const raw = await langchain().withStructuredOutput(Person, { method: 'jsonSchema', name: 'person', includeRaw: true })
    .invoke(PERSON_QUESTION[0].content);
  assert.equal(raw.raw.response_metadata.finish_reason, 'stop');
  assert.deepEqual(Person.parse(raw.parsed), raw.parsed);
});

for (const toolChoice of ['required']) {
  test(`langchain: bindTools with tool_choice ${toolChoice} gives a tool call`, async () => {
    const getWeather = { name: 'get_weather', description: WEATHER_TOOL.function.description, schema: City };
    const message = await langchain().bindTools([getWeather], { tool_choice: toolChoice })
      .invoke(WEATHER_QUESTION[0].content);
    assert.equal(message.tool_calls.length >= 1, true, JSON.stringify(message.content));
    assert.equal(message.tool_calls[0].name, 'get_weather');
    assert.deepEqual(City.parse(message.tool_calls[0].args), message.tool_calls[0].args);
  });
}

function aiModel() {
  return createOpenAICompatible({
    name: 'surge', baseURL: `${server.baseUrl}/v1`, apiKey: 'unused', includeUsage: true, supportsStructuredOutputs: true,
  }).chatModel(MODEL);
}

test('ai sdk: generateText + Output.object validates and stops', async () => {
  const result = await generateText({
    model: aiModel(), maxRetries: 0, maxOutputTokens: MAX_TOKENS, temperature: 0,
    output: Output.object({ schema: Person }), prompt: PERSON_QUESTION[0].content,
  });
  assert.equal(result.finishReason, 'stop');
  assert.deepEqual(Person.parse(result.output), result.output);
});

for (const toolChoice of ['required']) {
  test(`ai sdk: tools with toolChoice ${toolChoice} give a call`, async () => {
    const result = await generateText({
      model: aiModel(), maxRetries: 0, maxOutputTokens: MAX_TOKENS, temperature: 0, toolChoice,
      tools: { get_weather: tool({ description: WEATHER_TOOL.function.description, inputSchema: City }) },
      prompt: WEATHER_QUESTION[0].content,
    });
    assert.equal(result.finishReason, 'tool-calls', result.text);
    assert.equal(result.toolCalls[0].toolName, 'get_weather');
    assert.deepEqual(City.parse(result.toolCalls[0].input), result.toolCalls[0].input);
  });
}
