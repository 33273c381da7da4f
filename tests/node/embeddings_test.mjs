// The official `openai` client's embeddings.create against `surge serve` on the bundled
// model: a string, a list, token ids and lists of them, floats and base64 (decoded by the
// SDK itself by default, or kept as a string when asked), dimensions, and errors.
// Every vector is compared with the others it must equal bit for bit (float32).
// Run: node --test tests/node/embeddings_test.mjs (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import OpenAI from 'openai';

import { postJson, startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';
const HIDDEN_SIZE = 64;  // models/stories260K/config.json

let server;
let client;

before(async () => {
  // Small steps: longer inputs are chunked across passes, and batched with each other.
  server = await startServer(SURGE, ['--max-num-batched-tokens', '16', '--pooling', 'mean']);
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
});

after(async () => {
  if (server) assert.equal(await stopServer(server.proc), 0, 'surge serve exits 0 on SIGTERM');
});

const TEXTS = ['Once upon a time, there was a little girl named Lily.', 'The cat sat on the mat.', 'Hi'];

function norm(vector) {
  return Math.sqrt(Array.from(vector).reduce((sum, x) => sum + x * x, 0));
}

// float32 values, compared exactly.
function assertSameVector(got, want, what) {
  assert.deepEqual(Array.from(Float32Array.from(got)), Array.from(Float32Array.from(want)), what);
}

function decodeBase64(text) {
  const bytes = Buffer.from(text, 'base64');
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
}

test('a string: normalized vector of the model width; the SDK decodes its default base64', async () => {
  const response = await client.embeddings.create({ model: MODEL, input: TEXTS[0] });
  assert.equal(response.object, 'list');
  assert.equal(response.model, MODEL);
  assert.equal(response.data.length, 1);
  assert.equal(response.data[0].object, 'embedding');
  assert.equal(response.data[0].index, 0);
  const vector = response.data[0].embedding;
  assert.equal(vector.length, HIDDEN_SIZE);
  assert.ok(Math.abs(norm(vector) - 1) < 1e-5, `norm ${norm(vector)}`);
  assert.ok(response.usage.prompt_tokens > 10);
  assert.equal(response.usage.total_tokens, response.usage.prompt_tokens);

  const floats = await client.embeddings.create({ model: MODEL, input: TEXTS[0], encoding_format: 'float' });
  assert.ok(Array.isArray(floats.data[0].embedding));
  assertSameVector(floats.data[0].embedding, vector, 'float == SDK-decoded base64');

  const base64 = await client.embeddings.create({ model: MODEL, input: TEXTS[0], encoding_format: 'base64' });
  assert.equal(typeof base64.data[0].embedding, 'string', 'an explicit base64 stays a string');
  assertSameVector(decodeBase64(base64.data[0].embedding), vector, 'explicit base64 decodes to the same floats');
});

test('a list of strings: one vector each, in order, equal to each embedded alone', async () => {
  const batch = await client.embeddings.create({ model: MODEL, input: TEXTS, encoding_format: 'float' });
  assert.equal(batch.data.length, TEXTS.length);
  let total = 0;
  for (let i = 0; i < TEXTS.length; ++i) {
    assert.equal(batch.data[i].index, i);
    const alone = await client.embeddings.create({ model: MODEL, input: TEXTS[i], encoding_format: 'float' });
    assertSameVector(batch.data[i].embedding, alone.data[0].embedding, `input ${i}`);
    total += alone.usage.prompt_tokens;
  }
  assert.equal(batch.usage.prompt_tokens, total);
});

test('token ids and lists of token ids equal the text they encode', async () => {
  const ids = [];
  for (const text of TEXTS.slice(0, 2)) ids.push((await postJson(server.baseUrl, '/tokenize', { prompt: text })).body.tokens);
  const fromText = await client.embeddings.create({ model: MODEL, input: TEXTS.slice(0, 2) });
  const one = await client.embeddings.create({ model: MODEL, input: ids[0] });
  assert.equal(one.usage.prompt_tokens, ids[0].length);
  assertSameVector(one.data[0].embedding, fromText.data[0].embedding, 'ids of text 0');
  const lists = await client.embeddings.create({ model: MODEL, input: ids });
  assert.equal(lists.data.length, 2);
  assertSameVector(lists.data[1].embedding, fromText.data[1].embedding, 'ids of text 1');
});

test('dimensions: the first D values, renormalized', async () => {
  const full = (await client.embeddings.create({ model: MODEL, input: TEXTS[1], encoding_format: 'float' })).data[0].embedding;
  for (const encoding_format of [undefined, 'float']) {
    const response = await client.embeddings.create({ model: MODEL, input: TEXTS[1], dimensions: 16, encoding_format });
    const vector = response.data[0].embedding;
    assert.equal(vector.length, 16);
    assert.ok(Math.abs(norm(vector) - 1) < 1e-5);
    const scale = norm(full.slice(0, 16));
    for (let i = 0; i < 16; ++i) assert.ok(Math.abs(vector[i] - full[i] / scale) < 1e-6, `value ${i}`);
  }
  const whole = await client.embeddings.create({ model: MODEL, input: TEXTS[1], dimensions: HIDDEN_SIZE, encoding_format: 'float' });
  assert.equal(whole.data[0].embedding.length, HIDDEN_SIZE);
});

test('bad requests are 400s that name the field', async () => {
  const cases = [
    [{ model: MODEL, input: 'x', dimensions: HIDDEN_SIZE + 1 }, 'dimensions'],
    [{ model: MODEL, input: 'x', dimensions: 0 }, 'dimensions'],
    [{ model: MODEL, input: '' }, 'input'],
    [{ model: MODEL, input: [] }, 'input'],
    [{ model: MODEL, input: Array(600).fill(5) }, 'input'],  // past the 512-token context
    [{ model: MODEL, input: 'x', encoding_format: 'int8' }, 'encoding_format'],
  ];
  for (const [body, param] of cases) {
    await assert.rejects(client.embeddings.create(body), (error) => {
      assert.ok(error instanceof OpenAI.BadRequestError, `${JSON.stringify(body).slice(0, 80)}: ${error}`);
      assert.equal(error.param, param);
      return true;
    });
  }
  await assert.rejects(client.embeddings.create({ model: 'other', input: 'x' }), OpenAI.NotFoundError);
  const unknown = await postJson(server.baseUrl, '/v1/embeddings', { input: 'x', normalize: false });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error.param, 'normalize');
  const long = await postJson(server.baseUrl, '/v1/embeddings', { input: Array(600).fill(5) });
  assert.equal(long.body.error.code, 'context_length_exceeded');
});
