// Structured output through the official `openai` client against `surge serve` on the
// bundled model: a few hundred generated JSON schemas (string / integer / number / boolean /
// enum / array / nested properties, random required subsets) as response_format on chat
// and guided_json on completions, streamed and not, every output checked with ajv; plus
// guided_regex / guided_choice and the 400s. Run: node --test tests/node/structured_output_test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import Ajv from 'ajv';
import OpenAI from 'openai';

import { randomSchema } from './random_schema.mjs';
import { mulberry32, startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';
const NUM_SCHEMAS = 240;
const CONCURRENCY = 48;

let server;
let client;

before(async () => {
  server = await startServer(SURGE, ['--max-num-seqs', '64']);
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
});

after(async () => {
  if (server) assert.equal(await stopServer(server.proc), 0, 'surge serve exits 0 on SIGTERM');
});

async function complete(schema, index) {
  const stream = index % 2 === 1;
  const chat = index % 4 < 2;
  const common = { model: MODEL, max_tokens: 400, temperature: index % 3 === 0 ? 0 : 1, seed: index };
  if (chat) {
    const request = {
      ...common, messages: [{ role: 'user', content: 'Describe a cat.' }],
      response_format: { type: 'json_schema', json_schema: { name: `s${index}`, schema, strict: true } },
    };
    if (!stream) {
      const response = await client.chat.completions.create(request);
      return { text: response.choices[0].message.content, finish: response.choices[0].finish_reason };
    }
    let text = '';
    let finish = null;
    for await (const chunk of await client.chat.completions.create({ ...request, stream: true })) {
      for (const choice of chunk.choices) {
        text += choice.delta?.content ?? '';
        finish = choice.finish_reason ?? finish;
      }
    }
    return { text, finish };
  }
  const request = { ...common, prompt: 'Once upon a time', guided_json: schema };
  if (!stream) {
    const response = await client.completions.create(request);
    return { text: response.choices[0].text, finish: response.choices[0].finish_reason };
  }
  let text = '';
  let finish = null;
  for await (const chunk of await client.completions.create({ ...request, stream: true })) {
    for (const choice of chunk.choices) {
      text += choice.text;
      finish = choice.finish_reason ?? finish;
    }
  }
  return { text, finish };
}

test('generated JSON schemas: every output validates (ajv), streamed and not, chat and completions', async () => {
  const rng = mulberry32(2024);  // seeded: a failure reproduces
  const schemas = Array.from({ length: NUM_SCHEMAS }, () => randomSchema(rng));
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  const failures = [];
  let next = 0;
  async function worker() {
    while (next < schemas.length) {
      const index = next++;
      const { text, finish } = await complete(schemas[index], index);
      let value;
      try {
        value = JSON.parse(text);
      } catch {
        failures.push(`#${index} not JSON: ${text}`);
        continue;
      }
      const validate = ajv.compile(schemas[index]);
      if (!validate(value)) failures.push(`#${index} ${JSON.stringify(validate.errors)}: ${text}`);
      if (finish !== 'stop') failures.push(`#${index} finish_reason ${finish}: ${text}`);
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  assert.deepEqual(failures, [], failures.slice(0, 5).join('\n'));
});

test('guided_regex, guided_choice and json_object hold', async () => {
  for (let seed = 0; seed < 8; ++seed) {
    const regex = await client.completions.create({
      model: MODEL, prompt: 'Once', max_tokens: 64, seed, guided_regex: '[a-z]{2,6}-[0-9]{3}',
    });
    assert.match(regex.choices[0].text, /^[a-z]{2,6}-[0-9]{3}$/);
    const choice = await client.chat.completions.create({
      model: MODEL, messages: [{ role: 'user', content: 'Pick.' }], max_tokens: 16, seed, guided_choice: ['yes', 'no'],
    });
    assert.ok(['yes', 'no'].includes(choice.choices[0].message.content));
    const object = await client.chat.completions.create({
      model: MODEL, messages: [{ role: 'user', content: 'JSON.' }], max_tokens: 400, seed,
      response_format: { type: 'json_object' },
    });
    if (object.choices[0].finish_reason === 'stop') {
      assert.equal(typeof JSON.parse(object.choices[0].message.content), 'object');
    }
  }
});

test('unsupported keywords and conflicting constraints are 400s naming the field', async () => {
  await assert.rejects(
    client.chat.completions.create({
      model: MODEL, messages: [{ role: 'user', content: 'x' }],
      response_format: { type: 'json_schema', json_schema: { name: 'n', schema: { type: 'object', patternProperties: {} } } },
    }),
    (error) => error.status === 400 && error.param === 'response_format' && /patternProperties/.test(error.message));
  await assert.rejects(
    client.completions.create({ model: MODEL, prompt: 'x', guided_json: {}, guided_regex: 'a' }),
    (error) => error.status === 400 && error.param === 'guided_regex');
});
