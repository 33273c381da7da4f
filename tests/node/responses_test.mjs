// The Responses API through the official `openai` client against `surge serve` on the
// bundled model: responses.create whole and streamed (typed events), instructions,
// max_output_tokens, previous_response_id from the store (and store: false keeping
// nothing), GET / DELETE by id, text.format json_schema checked with ajv, function tools
// with tool_choice "required", and the 400s / 404s. Run: node --test tests/node/responses_test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import Ajv from 'ajv';
import OpenAI from 'openai';

import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';

let server;
let client;

before(async () => {
  server = await startServer(SURGE);
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
});

after(async () => {
  if (server) assert.equal(await stopServer(server.proc), 0, 'surge serve exits 0 on SIGTERM');
});

const base = { model: MODEL, temperature: 0, max_output_tokens: 12 };

test('responses.create answers with a message, output_text and usage', async () => {
  const response = await client.responses.create({ ...base, input: 'Once upon a time', instructions: 'Tell a story.' });
  assert.match(response.id, /^resp_/);
  assert.equal(response.object, 'response');
  assert.equal(response.instructions, 'Tell a story.');
  assert.equal(response.output.length, 1);
  const [message] = response.output;
  assert.equal(message.type, 'message');
  assert.equal(message.role, 'assistant');
  assert.ok(response.output_text.length > 0);
  assert.equal(message.content[0].text, response.output_text);
  assert.equal(response.usage.output_tokens, 12);
  assert.equal(response.status, 'incomplete');  // max_output_tokens cut it
  assert.equal(response.incomplete_details.reason, 'max_output_tokens');
  const chat = await client.chat.completions.create({ model: MODEL, temperature: 0, max_tokens: 12,
    messages: [{ role: 'system', content: 'Tell a story.' }, { role: 'user', content: 'Once upon a time' }] });
  assert.equal(response.output_text, chat.choices[0].message.content, 'the same prompt as chat');
});

test('a stream sends typed events that add up to the whole response', async () => {
  const whole = await client.responses.create({ ...base, input: 'The cat' });
  const stream = await client.responses.create({ ...base, input: 'The cat', stream: true });
  const types = [];
  let text = '';
  let completed;
  let sequence = 0;
  for await (const event of stream) {
    types.push(event.type);
    assert.equal(event.sequence_number, sequence++);
    if (event.type === 'response.output_text.delta') text += event.delta;
    if (event.type === 'response.incomplete' || event.type === 'response.completed') completed = event.response;
  }
  assert.deepEqual(types.slice(0, 4), ['response.created', 'response.in_progress', 'response.output_item.added',
    'response.content_part.added']);
  assert.deepEqual(types.slice(-4), ['response.output_text.done', 'response.content_part.done',
    'response.output_item.done', 'response.incomplete']);
  assert.equal(text, whole.output_text);
  assert.equal(completed.output[0].content[0].text, whole.output_text);
});

test('previous_response_id continues the stored conversation; store: false keeps nothing', async () => {
  const first = await client.responses.create({ ...base, input: 'Lily had a dog.' });
  const second = await client.responses.create({ ...base, input: 'What did Lily have?', previous_response_id: first.id });
  assert.equal(second.previous_response_id, first.id);
  const manual = await client.responses.create({ ...base, input: [
    { role: 'user', content: 'Lily had a dog.' },
    { role: 'assistant', content: first.output_text },
    { role: 'user', content: 'What did Lily have?' }] });
  assert.equal(second.output_text, manual.output_text, 'the same history, the same greedy answer');
  assert.equal(second.usage.input_tokens, manual.usage.input_tokens);
  const fetched = await client.responses.retrieve(first.id);
  assert.equal(fetched.output_text, first.output_text);
  const unstored = await client.responses.create({ ...base, input: 'x', store: false });
  await assert.rejects(client.responses.retrieve(unstored.id), (error) => error instanceof OpenAI.NotFoundError);
  await assert.rejects(client.responses.create({ ...base, input: 'x', previous_response_id: unstored.id }),
    (error) => error instanceof OpenAI.NotFoundError && error.param === 'previous_response_id');
  await client.responses.delete(first.id);
  await assert.rejects(client.responses.retrieve(first.id), (error) => error instanceof OpenAI.NotFoundError);
});

test('text.format json_schema holds the output to the schema', async () => {
  const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 8 }, age: { type: 'integer', minimum: 0, maximum: 99 } },
    required: ['name', 'age'], additionalProperties: false };
  const validate = new Ajv().compile(schema);
  for (let seed = 1; seed <= 4; ++seed) {
    const response = await client.responses.create({ model: MODEL, input: 'A person:', temperature: 1, seed, max_output_tokens: 80,
      text: { format: { type: 'json_schema', name: 'person', schema, strict: true } } });
    assert.equal(response.status, 'completed', JSON.stringify(response));
    const value = JSON.parse(response.output_text);
    assert.ok(validate(value), `${response.output_text}: ${JSON.stringify(validate.errors)}`);
  }
});

test('function tools with tool_choice "required" give function_call items', async () => {
  const tools = [{ type: 'function', name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 8 } }, required: ['city'], additionalProperties: false } }];
  const response = await client.responses.create({ model: MODEL, input: 'Weather in Paris?', tools, tool_choice: 'required',
    temperature: 1, seed: 5, max_output_tokens: 80 });
  const calls = response.output.filter((item) => item.type === 'function_call');
  assert.ok(calls.length >= 1, JSON.stringify(response.output));
  for (const call of calls) {
    assert.equal(call.name, 'get_weather');
    assert.match(call.call_id, /^call_/);
    assert.equal(typeof JSON.parse(call.arguments).city, 'string');
  }
  const followUp = await client.responses.create({ ...base, previous_response_id: response.id, tools,
    input: [{ type: 'function_call_output', call_id: calls[0].call_id, output: 'sunny' }] });
  assert.equal(followUp.status === 'completed' || followUp.status === 'incomplete', true);
});

test('unsupported fields are 400s naming them', async () => {
  const refused = async (body, param) => assert.rejects(client.responses.create({ ...base, input: 'x', ...body }),
    (error) => error instanceof OpenAI.BadRequestError && error.param === param);
  await refused({ tools: [{ type: 'web_search' }] }, 'tools');
  await refused({ reasoning: { effort: 'high' } }, 'reasoning');
  await refused({ truncation: 'auto' }, 'truncation');
  await refused({ background: true }, 'background');
  await refused({ text: { format: { type: 'bogus' } } }, 'text.format');
  await refused({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'http://x' }] }] }, 'input');
});
