// The official `openai` client against `surge serve` on the bundled model: completions and
// chat, streaming and not, errors, and 256 concurrent streams whose usage must match what
// was streamed. Run: node --test tests/node/openai_client_test.mjs (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';

import OpenAI from 'openai';

import { MODEL_DIR, postJson, startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';
const goldens = JSON.parse(readFileSync(`${MODEL_DIR}/goldens.json`, 'utf8')).cases;

let server;
let client;

before(async () => {
  server = await startServer(SURGE, ['--max-num-seqs', '256']);
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
});

after(async () => {
  if (server) assert.equal(await stopServer(server.proc), 0, 'surge serve exits 0 on SIGTERM');
});

// A completion continues its prompt, so it keeps the leading space that the golden's
// stand-alone decode strips.
function assertGoldenText(text, golden) {
  assert.equal(text.startsWith(' ') && !golden.output_text.startsWith(' ') ? text.slice(1) : text, golden.output_text);
}

test('models.list names the served model', async () => {
  const models = [];
  for await (const model of client.models.list()) models.push(model.id);
  assert.deepEqual(models, [MODEL]);
});

test('completions: greedy goldens, whole and streamed', async () => {
  for (const golden of goldens.filter((g) => g.prompt !== '').slice(0, 4)) {
    const whole = await client.completions.create({ model: MODEL, prompt: golden.prompt, max_tokens: 128, temperature: 0 });
    assert.equal(whole.object, 'text_completion');
    assertGoldenText(whole.choices[0].text, golden);
    assert.equal(whole.choices[0].finish_reason, 'length');
    assert.equal(whole.usage.prompt_tokens, golden.input_ids.length);
    assert.equal(whole.usage.completion_tokens, 128);

    const stream = await client.completions.create({
      model: MODEL, prompt: golden.prompt, max_tokens: 128, temperature: 0, stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage = null;
    for await (const chunk of stream) {
      if (chunk.choices.length > 0) text += chunk.choices[0].text;
      if (chunk.usage) usage = chunk.usage;
    }
    assertGoldenText(text, golden);
    assert.equal(usage.completion_tokens, 128);
    assert.equal(usage.total_tokens, golden.input_ids.length + 128);
  }
});

test('chat: whole and streamed agree, usage matches /tokenize', async () => {
  const messages = [{ role: 'system', content: 'You tell stories.' }, { role: 'user', content: 'A story about a cat.' }];
  const tokenized = await postJson(server.baseUrl, '/tokenize', { model: MODEL, messages });
  assert.equal(tokenized.status, 200);
  const whole = await client.chat.completions.create({ model: MODEL, messages, max_completion_tokens: 40, temperature: 0 });
  assert.equal(whole.object, 'chat.completion');
  assert.equal(whole.choices[0].message.role, 'assistant');
  assert.equal(whole.usage.prompt_tokens, tokenized.body.count);
  assert.equal(whole.usage.completion_tokens, 40);

  const stream = await client.chat.completions.create({
    model: MODEL, messages, max_completion_tokens: 40, temperature: 0, stream: true,
    stream_options: { include_usage: true },
  });
  let content = '';
  let role = null;
  let finish = null;
  let usage = null;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    for (const choice of chunk.choices) {
      role ??= choice.delta.role;
      content += choice.delta.content ?? '';
      finish = choice.finish_reason ?? finish;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(role, 'assistant');
  assert.equal(content, whole.choices[0].message.content);
  assert.equal(finish, 'length');
  assert.equal(usage.prompt_tokens, tokenized.body.count);
});

// Sampled, so that byte-fallback tokens (a character split over tokens) and leading
// spaces come up: the logprob tokens join into the text, their bytes into its UTF-8, and
// completions' text_offset slices it (in characters).
test('logprob tokens join into the text; text_offset slices it', async () => {
  for (let seed = 1; seed <= 12; ++seed) {
    const completion = await client.completions.create({ model: MODEL, prompt: 'Once upon a time', max_tokens: 48,
      temperature: 1.5, seed, logprobs: 2 });
    const { text, logprobs } = completion.choices[0];
    assert.equal(logprobs.tokens.join(''), text);
    const chars = Array.from(text);
    logprobs.tokens.forEach((token, i) => {
      assert.equal(chars.slice(logprobs.text_offset[i], logprobs.text_offset[i] + Array.from(token).length).join(''), token);
    });
    const chat = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 48, temperature: 1.5, seed, logprobs: true, top_logprobs: 2 });
    const { content } = chat.choices[0].message;
    const entries = chat.choices[0].logprobs.content;
    assert.equal(entries.map((entry) => entry.token).join(''), content);
    assert.deepEqual(Buffer.from(entries.flatMap((entry) => entry.bytes)), Buffer.from(content, 'utf8'));
    for (const entry of entries) {
      for (const top of entry.top_logprobs) assert.ok(top.bytes.length > 0 || top.token === '', JSON.stringify(top));
    }
  }
});

// Evaluation harnesses score prompts: echo + logprobs + max_tokens 0.
test('echo scores the prompt; with max_tokens it continues it, streamed or not', async () => {
  const prompt = 'Once upon a time, there was a little girl.';
  const scored = await client.completions.create({ model: MODEL, prompt, echo: true, logprobs: 1, max_tokens: 0 });
  const { text, logprobs, finish_reason: finish } = scored.choices[0];
  assert.equal(text, prompt);
  assert.equal(finish, 'length');
  assert.equal(logprobs.tokens.join(''), text);
  assert.equal(logprobs.token_logprobs[0], null);
  assert.equal(logprobs.top_logprobs[0], null);
  assert.ok(logprobs.token_logprobs.slice(1).every((value) => typeof value === 'number' && value <= 0));
  const tokenized = await postJson(server.baseUrl, '/tokenize', { model: MODEL, prompt });
  assert.equal(logprobs.tokens.length, tokenized.body.count);
  assert.equal(scored.usage.prompt_tokens, tokenized.body.count);
  assert.equal(scored.usage.completion_tokens, 0);
  const plain = await client.completions.create({ model: MODEL, prompt, max_tokens: 8, temperature: 0 });
  const echoed = await client.completions.create({ model: MODEL, prompt, max_tokens: 8, temperature: 0, echo: true, logprobs: 0 });
  assert.equal(echoed.choices[0].text, prompt + plain.choices[0].text);
  assert.equal(echoed.choices[0].logprobs.tokens.join(''), echoed.choices[0].text);
  let streamed = '';
  let first;
  for await (const chunk of await client.completions.create({ model: MODEL, prompt, max_tokens: 8, temperature: 0, echo: true, stream: true })) {
    first ??= chunk.choices[0]?.text;
    streamed += chunk.choices[0]?.text ?? '';
  }
  assert.equal(first, prompt, 'the echo comes first, whole');
  assert.equal(streamed, echoed.choices[0].text);
  await assert.rejects(client.completions.create({ model: MODEL, prompt, max_tokens: 0 }),
    (error) => error instanceof OpenAI.BadRequestError && error.param === 'max_tokens');
});

test('errors come back as the client\'s typed errors', async () => {
  await assert.rejects(
    client.completions.create({ model: 'no-such-model', prompt: 'x', max_tokens: 1 }),
    (error) => error instanceof OpenAI.NotFoundError && error.code === 'model_not_found' && error.param === 'model');
  await assert.rejects(
    client.completions.create({ model: MODEL, prompt: 'x', max_tokens: 100000 }),
    (error) => error instanceof OpenAI.BadRequestError && error.param === 'max_tokens' && /512/.test(error.message));
  await assert.rejects(
    client.chat.completions.create({ model: MODEL, messages: [], max_tokens: 1 }),
    (error) => error instanceof OpenAI.BadRequestError && error.param === 'messages');
});

test('256 concurrent chat streams all finish with exact usage', async () => {
  const numStreams = 256;
  const runOne = async (i) => {
    const messages = [{ role: 'user', content: `Tell story number ${i}.` }];
    const tokenized = await postJson(server.baseUrl, '/tokenize', { model: MODEL, messages });
    const stream = await client.chat.completions.create({
      model: MODEL, messages, max_completion_tokens: 16 + (i % 48), temperature: 0.8, seed: i,
      logprobs: true, stream: true, stream_options: { include_usage: true },
    });
    let numTokens = 0;
    let usage = null;
    let finish = null;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        numTokens += choice.logprobs?.content?.length ?? 0;  // one logprob entry per token
        finish = choice.finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    assert.ok(usage, `stream ${i} has a usage chunk`);
    assert.ok(finish === 'length' || finish === 'stop', `stream ${i} finished: ${finish}`);
    assert.equal(usage.completion_tokens, numTokens, `stream ${i}: completion_tokens = streamed tokens`);
    assert.equal(usage.prompt_tokens, tokenized.body.count, `stream ${i}: prompt_tokens = /tokenize count`);
    if (finish === 'length') assert.equal(numTokens, 16 + (i % 48));
  };
  await Promise.all(Array.from({ length: numStreams }, (_, i) => runOne(i)));
  const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
  assert.match(metrics, /^surge_generations_in_flight 0$/m);
});
