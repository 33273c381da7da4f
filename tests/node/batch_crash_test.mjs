// Crash safety of the Batch API: a batch of 2000 short requests through `surge route
// --data-dir`, the router killed with SIGKILL at three random moments while it runs and
// restarted on the same data dir each time. The batch still completes, and its output holds
// every custom_id exactly once. Run: node --test tests/node/batch_crash_test.mjs
// (SURGE=path/to/surge; BATCH_CRASH_SEED to replay a run).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { client, line, readOutput, upload, waitForBatch } from './batch_util.mjs';
import { startRouter } from './route_util.mjs';
import { mulberry32, startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const NUM_LINES = 2000;
const NUM_KILLS = 3;
const seed = Number(process.env.BATCH_CRASH_SEED ?? Date.now() % 100000);
const random = mulberry32(seed);
const dataDir = mkdtempSync(join(tmpdir(), 'surge-batch-crash-'));
let engine;
let router;

after(async () => {
  if (router) await stopServer(router.proc);
  if (engine) await stopServer(engine.proc);
  rmSync(dataDir, { recursive: true, force: true });
});

function killHard(proc) {
  return new Promise((resolve) => {
    proc.removeAllListeners('exit');
    proc.on('exit', () => resolve());
    proc.kill('SIGKILL');
  });
}

const routerArgs = ['--data-dir', dataDir, '--batch-max-in-flight', '32'];

test(`${NUM_LINES} lines, the router SIGKILLed ${NUM_KILLS} times: every custom_id exactly once (seed ${seed})`, async () => {
  engine = await startServer(SURGE, ['--threads', '1', '--scheduling-policy', 'priority']);
  router = await startRouter(SURGE, [engine.baseUrl], routerArgs);
  let api = client(router.baseUrl, 2);
  const lines = [];
  for (let i = 0; i < NUM_LINES; ++i) {
    lines.push(line(`line-${i}`, '/v1/completions', { model: 'stories260K', prompt: `Once upon a time ${i % 97}`, max_tokens: 3 }));
  }
  const file = await upload(api, lines);
  const { id } = await api.batches.create({ input_file_id: file.id, endpoint: '/v1/completions', completion_window: '24h' });
  const progress = [];
  for (let kill = 0; kill < NUM_KILLS; ++kill) {
    // A random moment while lines run: after a random share of what is left has completed.
    const before = (await api.batches.retrieve(id)).request_counts.completed;
    const target = before + Math.floor(random() * (NUM_LINES - before) / (NUM_KILLS - kill + 1));
    let seenCompleted = 0;
    for (;;) {
      const counts = (await api.batches.retrieve(id)).request_counts;
      seenCompleted = counts.completed;
      if (counts.completed >= target) break;
      await new Promise((r) => setTimeout(r, 10 + random() * 40));
    }
    await new Promise((r) => setTimeout(r, random() * 100));
    await killHard(router.proc);
    router = await startRouter(SURGE, [engine.baseUrl], routerArgs);
    api = client(router.baseUrl, 2);
    const after = await api.batches.retrieve(id);
    progress.push(`${after.status} ${after.request_counts.completed}`);
    assert.ok(after.request_counts.completed >= seenCompleted, 'what was committed survives the kill');
  }
  const { batch } = await waitForBatch(api, id, 60_000);
  assert.equal(batch.status, 'completed', `after kills at ${progress.join(', ')}`);
  assert.deepEqual(batch.request_counts, { total: NUM_LINES, completed: NUM_LINES, failed: 0 });
  assert.equal(batch.error_file_id, null);
  const output = await readOutput(api, batch.output_file_id);  // asserts no custom_id twice
  assert.equal(output.size, NUM_LINES);
  for (let i = 0; i < NUM_LINES; ++i) {
    const row = output.get(`line-${i}`);
    assert.ok(row, `line-${i} is in the output`);
    assert.equal(row.response.status_code, 200);
  }
  console.log(`kills at: ${progress.join(' | ')} (seed ${seed})`);
});
