// The OpenAI Batch API through the official `openai` SDK (files.create, batches.create,
// retrieve, files.content, list, cancel) against real engines on the bundled model: through
// `surge route --data-dir` in front of a `surge serve`, and on a lone `surge serve
// --data-dir`. Output lines equal the same requests sent live (temperature 0); validation
// errors come as OpenAI shapes them. Run: node --test tests/node/batch_api_test.mjs
// (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { toFile } from 'openai';

import { client, line, readOutput, upload, waitForBatch } from './batch_util.mjs';
import { startRouter } from './route_util.mjs';
import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';
const dirs = [];
let engine;
let router;
let lone;
let viaRouter;
let viaLone;
let direct;
let routerDir;

function dataDir() {
  const dir = mkdtempSync(join(tmpdir(), 'surge-batch-'));
  dirs.push(dir);
  return dir;
}

before(async () => {
  [engine, lone] = await Promise.all([
    startServer(SURGE, ['--threads', '1', '--scheduling-policy', 'priority']),
    startServer(SURGE, ['--threads', '1', '--scheduling-policy', 'priority', '--data-dir', dataDir()]),
  ]);
  routerDir = dataDir();
  router = await startRouter(SURGE, [engine.baseUrl], ['--data-dir', routerDir]);
  viaRouter = client(router.baseUrl);
  viaLone = client(lone.baseUrl);
  direct = client(engine.baseUrl);
});

after(async () => {
  if (router) assert.equal(await stopServer(router.proc), 0, 'surge route exits 0 on SIGTERM');
  await Promise.all([engine, lone].filter(Boolean).map((e) => stopServer(e.proc)));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const PROMPTS = ['Once upon a time', 'The little dog', 'Lily and Ben', 'One day', 'The sun was', 'Tom had a'];

test('a completions batch through the router equals the same requests sent live', async () => {
  const bodies = PROMPTS.map((prompt, i) => ({ model: MODEL, prompt, max_tokens: 12 + i, temperature: 0 }));
  const file = await upload(viaRouter, bodies.map((b, i) => line(`req-${i}`, '/v1/completions', b)));
  assert.equal(file.object, 'file');
  assert.equal(file.purpose, 'batch');
  assert.match(file.id, /^file-/);
  assert.equal((await viaRouter.files.retrieve(file.id)).bytes, file.bytes);
  const created = await viaRouter.batches.create({
    input_file_id: file.id, endpoint: '/v1/completions', completion_window: '24h', metadata: { job: 'nightly' },
  });
  assert.equal(created.status, 'validating');
  assert.equal(created.object, 'batch');
  assert.deepEqual(created.metadata, { job: 'nightly' });
  const { batch, seen } = await waitForBatch(viaRouter, created.id);
  assert.equal(batch.status, 'completed', JSON.stringify(batch));
  assert.deepEqual(batch.request_counts, { total: bodies.length, completed: bodies.length, failed: 0 });
  assert.equal(batch.error_file_id, null);
  for (const stamp of ['created_at', 'in_progress_at', 'finalizing_at', 'completed_at']) assert.equal(typeof batch[stamp], 'number', stamp);
  assert.ok(seen.every((s) => ['validating', 'in_progress', 'finalizing', 'completed'].includes(s)), seen.join());
  const output = await readOutput(viaRouter, batch.output_file_id);
  assert.equal(output.size, bodies.length);
  for (const [i, body] of bodies.entries()) {
    const row = output.get(`req-${i}`);
    assert.match(row.id, /^batch_req_/);
    assert.equal(row.error, null);
    assert.equal(row.response.status_code, 200);
    assert.equal(typeof row.response.request_id, 'string');
    const live = await direct.completions.create(body);
    assert.equal(row.response.body.choices[0].text, live.choices[0].text, `req-${i}`);
  }
  const outputFile = await viaRouter.files.retrieve(batch.output_file_id);
  assert.equal(outputFile.purpose, 'batch_output');
});

test('a chat batch on a lone surge serve equals live chat; a failed line goes to the error file', async () => {
  const bodies = PROMPTS.slice(0, 4).map((content) => ({
    model: MODEL, messages: [{ role: 'user', content }], max_tokens: 16, temperature: 0,
  }));
  const lines = bodies.map((b, i) => line(`chat-${i}`, '/v1/chat/completions', b));
  lines.push(line('chat-bad', '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'x' }], max_tokens: -3 }));
  const file = await upload(viaLone, lines);
  const created = await viaLone.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  const { batch } = await waitForBatch(viaLone, created.id);
  assert.equal(batch.status, 'completed');
  assert.deepEqual(batch.request_counts, { total: 5, completed: 4, failed: 1 });
  const output = await readOutput(viaLone, batch.output_file_id);
  for (const [i, body] of bodies.entries()) {
    const live = await viaLone.chat.completions.create(body);
    assert.equal(output.get(`chat-${i}`).response.body.choices[0].message.content, live.choices[0].message.content);
  }
  const errors = await readOutput(viaLone, batch.error_file_id);
  const bad = errors.get('chat-bad');
  assert.equal(bad.response.status_code, 400);
  assert.equal(typeof bad.error.code, 'string');
  assert.match(bad.error.message, /max_tokens/);
});

test('invalid lines fail the batch with OpenAI-shaped errors, each with its line', async () => {
  const ok = { model: MODEL, prompt: 'x', max_tokens: 2 };
  const lines = [line('a', '/v1/completions', ok), '{not json', line('a', '/v1/completions', ok),
                 line('c', '/v1/chat/completions', { messages: [] }), line('d', '/v1/completions', [1])];
  const file = await upload(viaRouter, lines);
  const created = await viaRouter.batches.create({ input_file_id: file.id, endpoint: '/v1/completions', completion_window: '24h' });
  const { batch } = await waitForBatch(viaRouter, created.id);
  assert.equal(batch.status, 'failed');
  assert.equal(typeof batch.failed_at, 'number');
  assert.equal(batch.errors.object, 'list');
  assert.deepEqual(batch.errors.data.map((e) => [e.code, e.line]),
                   [['invalid_json_line', 2], ['duplicate_custom_id', 3], ['mismatched_url', 4], ['invalid_body', 5]]);
  for (const e of batch.errors.data) assert.equal(typeof e.message, 'string');
  assert.equal(batch.output_file_id, null);
});

test('bad requests are 400s naming the parameter, unknown ids 404', async () => {
  const file = await upload(viaRouter, [line('a', '/v1/completions', { prompt: 'x', max_tokens: 1 })]);
  const cases = [
    [{ input_file_id: file.id, endpoint: '/v1/images/generations', completion_window: '24h' }, 'endpoint'],
    [{ input_file_id: file.id, endpoint: '/v1/completions', completion_window: '1h' }, 'completion_window'],
    [{ input_file_id: file.id, endpoint: '/v1/completions', completion_window: '24h', surprise: 1 }, 'surprise'],
    [{ input_file_id: file.id, endpoint: '/v1/completions', completion_window: '24h', metadata: { k: 3 } }, 'metadata'],
  ];
  for (const [params, param] of cases) {
    await assert.rejects(viaRouter.batches.create(params), (e) => e.status === 400 && e.param === param && e.type === 'invalid_request_error',
                         param);
  }
  await assert.rejects(viaRouter.batches.create({ input_file_id: 'file-nope', endpoint: '/v1/completions', completion_window: '24h' }),
                       (e) => e.status === 404 && e.param === 'input_file_id');
  await assert.rejects(viaRouter.batches.retrieve('batch_nope'), (e) => e.status === 404);
  await assert.rejects(viaRouter.files.create({ file: await toFile(Buffer.from('x\n'), 'a.jsonl'), purpose: 'fine-tune' }),
                       (e) => e.status === 400 && e.param === 'purpose');
  const deleted = await viaRouter.files.delete(file.id);
  assert.deepEqual(deleted, { id: file.id, object: 'file', deleted: true });
  await assert.rejects(viaRouter.files.retrieve(file.id), (e) => e.status === 404);
});

test('cancel stops a running batch with partial results; list pages newest first', async () => {
  const lines = [];
  // No fixed wait (a fast machine once finished all lines inside it): cancel as soon as the
  // first answers are in, with far more lines than can run meanwhile.
  for (let i = 0; i < 3000; ++i) lines.push(line(`c-${i}`, '/v1/completions', { model: MODEL, prompt: 'One day', max_tokens: 24 }));
  const file = await upload(viaRouter, lines);
  const created = await viaRouter.batches.create({ input_file_id: file.id, endpoint: '/v1/completions', completion_window: '24h' });
  for (let polls = 0; polls < 600; ++polls) {
    const seen = await viaRouter.batches.retrieve(created.id);
    if (seen.request_counts?.completed > 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const cancelling = await viaRouter.batches.cancel(created.id);
  assert.ok(['cancelling', 'cancelled'].includes(cancelling.status), cancelling.status);
  assert.equal(typeof cancelling.cancelling_at, 'number');
  const { batch } = await waitForBatch(viaRouter, created.id);
  assert.equal(batch.status, 'cancelled');
  assert.ok(batch.request_counts.completed < 3000, `${batch.request_counts.completed} of 3000 ran`);
  await assert.rejects(viaRouter.batches.cancel(created.id), (e) => e.status === 409);
  const firstPage = await viaRouter.batches.list({ limit: 2 });
  assert.equal(firstPage.data.length, 2);
  assert.equal(firstPage.data[0].id, created.id, 'newest first');
  assert.equal(firstPage.has_more, true);
  const all = [];
  for await (const b of viaRouter.batches.list({ limit: 2 })) all.push(b.id);
  assert.ok(all.length >= 3, `${all.length} batches listed`);
  assert.equal(all[0], created.id);
  assert.equal(new Set(all).size, all.length, 'pages do not overlap');
});

test('without --data-dir the Batch API answers 404 saying how to turn it on', async () => {
  await assert.rejects(direct.batches.list(), (e) => e.status === 404 && /--data-dir/.test(e.message));
  await assert.rejects(direct.files.create({ file: await toFile(Buffer.from('x\n'), 'a.jsonl'), purpose: 'batch' }),
                       (e) => e.status === 404 && /--data-dir/.test(e.message));
});

test('--data-dir with API keys is refused at start, naming both', async () => {
  const keys = join(dataDir(), 'keys.json');
  writeFileSync(keys, JSON.stringify([{ key: 'sk-batch', tenant: 'acme' }]));
  const run = spawnSync(SURGE, ['route', '--backend', 'http://127.0.0.1:1', '--api-keys', keys, '--data-dir', dataDir(),
                                '--port', '0'], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /--data-dir \(the Batch API\) cannot be used with API keys/);
});

// Issue 31: a line whose body has "stream": 1 threw on the runner's thread and aborted surge
// route, again on every restart with that data dir. Now the batch fails with that line's error,
// counted, and the router, restarted on the same data dir, serves and runs the next batch.
test('a "stream": 1 line fails its batch; the router, restarted on its data dir, still serves', async () => {
  const ok = { model: MODEL, prompt: 'x', max_tokens: 2 };
  const file = await upload(viaRouter, [line('p', '/v1/completions', { ...ok, stream: 1 })]);
  const created = await viaRouter.batches.create({ input_file_id: file.id, endpoint: '/v1/completions', completion_window: '24h' });
  const { batch } = await waitForBatch(viaRouter, created.id);
  assert.equal(batch.status, 'failed');
  assert.deepEqual(batch.errors.data.map((e) => [e.code, e.param, e.line]), [['invalid_body', 'body.stream', 1]]);
  assert.match(batch.errors.data[0].message, /stream must be a boolean, got an integer/);
  const metrics = await (await fetch(`${router.baseUrl}/metrics`)).text();
  assert.match(metrics, /surge_batch_errors_total\{kind="invalid_input"\} [1-9]/);
  assert.equal(await stopServer(router.proc), 0);
  router = await startRouter(SURGE, [engine.baseUrl], ['--data-dir', routerDir]);
  viaRouter = client(router.baseUrl);
  assert.equal((await viaRouter.batches.retrieve(created.id)).status, 'failed');
  const good = await upload(viaRouter, [line('g', '/v1/completions', ok)]);
  const next = await viaRouter.batches.create({ input_file_id: good.id, endpoint: '/v1/completions', completion_window: '24h' });
  assert.equal((await waitForBatch(viaRouter, next.id)).batch.status, 'completed');
});
