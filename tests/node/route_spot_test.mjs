// surge route --spawn with --autoscale and capacity classes: a spot worker killed without
// warning ("reclaimed") is replaced from the next class (on-demand), its non-streaming
// requests are retried on the other worker and succeed, and once the spot class's back-off
// ends a replica moves back to spot make-before-break. The classes' replicas and cost are
// on the router's /metrics.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRouter, waitFor } from './route_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
let router;
after(() => new Promise((r) => { if (!router) return r(); router.proc.once('exit', r); router.proc.kill('SIGTERM'); }));

async function complete(baseUrl) {
  const response = await fetch(`${baseUrl}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Once upon a time', max_tokens: 120, ignore_eos: true }) });
  await response.arrayBuffer();
  return response.status;
}

// {class: replicas} from surge_autoscale_replicas{pool="default",class=...}.
async function replicasByClass(baseUrl) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const out = {};
  for (const m of text.matchAll(/^surge_autoscale_replicas\{pool="default",class="([^"]+)"\} (\S+)$/gm)) out[m[1]] = Number(m[2]);
  return out;
}

function workerPid(stderr, name) {
  const pids = [...stderr.matchAll(new RegExp(`\\[worker ${name} pid (\\d+)\\]`, 'g'))].map((m) => Number(m[1]));
  return pids.at(-1);
}

test('a reclaimed spot worker is replaced on-demand, loses no request, and the pool returns to spot', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'route-spot-'));
  const policy = join(dir, 'policy.json');
  writeFileSync(policy, JSON.stringify({
    interval: '200ms',
    pools: { default: {
      min_replicas: 2, max_replicas: 2, targets: { queue_depth_per_replica: 100 },
      classes: [
        { name: 'spot', max_replicas: 1, usd_per_hour: 1, preemptible: true, initial_backoff: '2s' },
        { name: 'on-demand', max_replicas: 2, usd_per_hour: 3 }] } } }));
  router = await startRouter(SURGE, [], ['--spawn', '2', '--model', 'models/stories260K', '--autoscale', policy,
                                         '--health-interval-ms', '100', '--', '--threads', '1']);
  assert.ok(await waitFor(async () => (await replicasByClass(router.baseUrl)).spot === 1, 5_000));
  assert.deepEqual(await replicasByClass(router.baseUrl), { spot: 1, 'on-demand': 1 });
  // default-0 came first: it took the one spot slot.
  const spotPid = workerPid(router.stderr(), 'default-0');
  assert.ok(spotPid > 0, router.stderr());

  const inFlight = Array.from({ length: 8 }, () => complete(router.baseUrl));
  await new Promise((r) => setTimeout(r, 50));
  process.kill(spotPid, 'SIGKILL');
  const statuses = await Promise.all(inFlight);
  assert.deepEqual([...new Set(statuses)], [200], 'every request of the reclaimed worker was retried and succeeded');

  const replaced = await waitFor(async () => {
    const c = await replicasByClass(router.baseUrl);
    return c.spot === 0 && c['on-demand'] === 2;
  }, 5_000);
  assert.ok(replaced, `replaced on-demand: ${JSON.stringify(await replicasByClass(router.baseUrl))}\n${router.stderr()}`);
  assert.match(router.stderr(), /worker default-0 \(class spot\) reclaimed; replaced in class on-demand/);
  // The spot class's back-off (2 s) ends: one replica moves back, the on-demand one drained after.
  const back = await waitFor(async () => {
    const c = await replicasByClass(router.baseUrl);
    return c.spot === 1 && c['on-demand'] === 1;
  }, 20_000);
  assert.ok(back, `moved back to spot: ${JSON.stringify(await replicasByClass(router.baseUrl))}`);
  assert.match(router.stderr(), /moving a replica from class on-demand to spot/);
  assert.equal(await complete(router.baseUrl), 200);
  const metrics = await (await fetch(`${router.baseUrl}/metrics`)).text();
  assert.match(metrics, /^surge_autoscale_cost_usd_per_hour\{pool="default",class="on-demand"\} 3$/m);
  assert.match(metrics, /^surge_autoscale_cost_usd_total\{pool="default",class="spot"\} [0-9.e-]+$/m);
  const health = await (await fetch(`${router.baseUrl}/health`)).json();
  assert.equal(health.num_routable_backends, 2);
});
