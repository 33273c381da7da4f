// Live traffic first: live realtime requests through `surge route --tiers` keep their P95
// time to first token while a large batch runs behind the same router and engine (batch
// tier: the router's weighted admission, the engine's priority scheduling and the runner's
// adaptive window all make it yield), against the same live load with no batch. The bound
// is stated below with the measurements it comes from. Run: node --test
// tests/node/batch_priority_test.mjs (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { client, line, upload, waitForBatch } from './batch_util.mjs';
import { readSse, startRouter } from './route_util.mjs';
import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';
const NUM_LIVE = 40;
const LIVE_CONCURRENCY = 2;
// Live P95 TTFT with the batch running must stay within 2x the P95 without it, plus 25 ms
// for scheduling noise on a shared 2-core machine. Measured (stories260K, --threads 1):
// see batch/README.md "Live traffic first".
const BOUND = (alone) => 2 * alone + 25;
const dataDir = mkdtempSync(join(tmpdir(), 'surge-batch-priority-'));
let engine;
let router;

after(async () => {
  if (router) await stopServer(router.proc);
  if (engine) await stopServer(engine.proc);
  rmSync(dataDir, { recursive: true, force: true });
});

function p95(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)];
}

// NUM_LIVE streamed realtime completions, LIVE_CONCURRENCY at a time: their TTFTs in ms.
async function liveTtfts(baseUrl) {
  const ttfts = [];
  let next = 0;
  async function worker() {
    while (next < NUM_LIVE) {
      const i = next++;
      const start = performance.now();
      const response = await fetch(`${baseUrl}/v1/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Priority': 'realtime' },
        body: JSON.stringify({ model: MODEL, prompt: `Lily saw ${i}`, max_tokens: 8, stream: true }),
      });
      assert.equal(response.status, 200);
      let first;
      await readSse(response, () => { first = performance.now(); });
      ttfts.push(first - start);
    }
  }
  await Promise.all(Array.from({ length: LIVE_CONCURRENCY }, worker));
  return ttfts;
}

test('live realtime P95 TTFT holds while a large batch runs', async () => {
  engine = await startServer(SURGE, ['--threads', '1', '--scheduling-policy', 'priority']);
  router = await startRouter(SURGE, [engine.baseUrl], ['--data-dir', dataDir, '--tiers', 'default,default,default']);
  const api = client(router.baseUrl);
  await liveTtfts(router.baseUrl);  // warm-up
  const alone = p95(await liveTtfts(router.baseUrl));

  const lines = [];
  for (let i = 0; i < 5000; ++i) lines.push(line(`b${i}`, '/v1/completions', { model: MODEL, prompt: `Once ${i}`, max_tokens: 24 }));
  const file = await upload(api, lines);
  const { id } = await api.batches.create({ input_file_id: file.id, endpoint: '/v1/completions', completion_window: '24h' });
  for (;;) {
    const batch = await api.batches.retrieve(id);
    if (batch.request_counts.completed >= 200) break;
    assert.ok(batch.status === 'validating' || batch.status === 'in_progress', batch.status);
    await new Promise((r) => setTimeout(r, 50));
  }
  const startedAt = (await api.batches.retrieve(id)).request_counts.completed;
  const liveStart = performance.now();
  const withBatch = p95(await liveTtfts(router.baseUrl));
  const liveSeconds = (performance.now() - liveStart) / 1000;
  const duringLive = (await api.batches.retrieve(id)).request_counts.completed - startedAt;
  await new Promise((r) => setTimeout(r, 1000));
  const idleRate = (await api.batches.retrieve(id)).request_counts.completed - startedAt - duringLive;
  await api.batches.cancel(id);
  const { batch } = await waitForBatch(api, id);
  assert.equal(batch.status, 'cancelled');
  console.log(`live P95 TTFT: ${alone.toFixed(1)} ms alone, ${withBatch.toFixed(1)} ms with the batch running ` +
              `(bound ${BOUND(alone).toFixed(1)} ms); batch lines/s: ${(duringLive / liveSeconds).toFixed(0)} under live load, ` +
              `${idleRate} in the next idle second`);
  assert.ok(withBatch <= BOUND(alone), `P95 ${withBatch.toFixed(1)} ms > ${BOUND(alone).toFixed(1)} ms`);
});
