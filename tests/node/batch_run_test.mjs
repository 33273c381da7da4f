// `surge batch run IN.jsonl OUT.jsonl --url URL` end to end against a real `surge serve`:
// every line answered in input order, outputs equal to the same requests sent live
// (temperature 0), a failing line written with its error, and bad input refused before
// anything is sent. Run: node --test tests/node/batch_run_test.mjs (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import OpenAI from 'openai';

import { line } from './batch_util.mjs';
import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';
const dir = mkdtempSync(join(tmpdir(), 'surge-batch-run-'));
let engine;
let live;

before(async () => {
  engine = await startServer(SURGE, ['--threads', '1']);
  live = new OpenAI({ baseURL: `${engine.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
});

after(async () => {
  if (engine) await stopServer(engine.proc);
  rmSync(dir, { recursive: true, force: true });
});

// Asynchronous, so that the test runner stays responsive while it runs.
function runBatch(...args) {
  return new Promise((resolve) => {
    const proc = spawn(SURGE, ['batch', 'run', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => { stdout += d; });
    proc.stderr.on('data', (d) => { stderr += d; });
    proc.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

test('every line answered in input order, equal to live requests', async () => {
  const bodies = [];
  for (let i = 0; i < 40; ++i) bodies.push({ model: MODEL, prompt: `Tom and ${i}`, max_tokens: 8 + (i % 5), temperature: 0 });
  const chat = { model: MODEL, messages: [{ role: 'user', content: 'A cat' }], max_tokens: 10, temperature: 0 };
  const input = [...bodies.map((b, i) => line(`c${i}`, '/v1/completions', b)), line('chat', '/v1/chat/completions', chat),
                 line('bad', '/v1/completions', { model: MODEL, prompt: 'x', max_tokens: -1 })];
  writeFileSync(join(dir, 'in.jsonl'), input.join('\n') + '\n');
  const run = await runBatch(join(dir, 'in.jsonl'), join(dir, 'out.jsonl'), '--url', engine.baseUrl, '--max-in-flight', '8');
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /42 lines \(41 completed, 1 failed\)/);
  const rows = readFileSync(join(dir, 'out.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(rows.map((r) => r.custom_id), [...bodies.map((_, i) => `c${i}`), 'chat', 'bad']);
  for (const [i, body] of bodies.entries()) {
    assert.equal(rows[i].response.body.choices[0].text, (await live.completions.create(body)).choices[0].text);
    assert.equal(rows[i].error, null);
  }
  assert.equal(rows[40].response.body.choices[0].message.content, (await live.chat.completions.create(chat)).choices[0].message.content);
  assert.equal(rows[41].response.status_code, 400);
  assert.match(rows[41].error.message, /max_tokens/);
});

test('bad input and bad usage are refused before anything runs', async () => {
  writeFileSync(join(dir, 'bad.jsonl'), `${line('a', '/v1/completions', { prompt: 'x' })}\n{oops\n`);
  const bad = await runBatch(join(dir, 'bad.jsonl'), join(dir, 'never.jsonl'), '--url', engine.baseUrl);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /line 2: the line: not valid JSON/);
  assert.throws(() => readFileSync(join(dir, 'never.jsonl')));
  assert.equal((await runBatch(join(dir, 'bad.jsonl'), join(dir, 'x.jsonl'))).status, 2, '--url is required');
  assert.equal((await runBatch(join(dir, 'missing.jsonl'), join(dir, 'x.jsonl'), '--url', engine.baseUrl)).status, 1);
  const help = spawnSync(SURGE, ['batch', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /surge batch run IN.jsonl OUT.jsonl --url URL/);
});
