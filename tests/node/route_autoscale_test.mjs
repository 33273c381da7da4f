// surge route --spawn with --autoscale: the local actuator. A load ramp on one worker
// (--max-num-seqs 1, so requests queue) scales the pool up by its queue-depth target; when
// the load ends it scales back down to the minimum, draining each worker it stops, and a
// trickle of requests during the scale-down all succeed.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRouter, waitFor } from './route_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
let router;
after(() => new Promise((r) => { if (!router) return r(); router.proc.once('exit', r); router.proc.kill('SIGTERM'); }));

async function numRoutable(baseUrl) {
  return (await (await fetch(`${baseUrl}/health`)).json()).num_routable_backends;
}

async function complete(baseUrl, maxTokens) {
  const response = await fetch(`${baseUrl}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Once upon a time', max_tokens: maxTokens, ignore_eos: true }) });
  await response.arrayBuffer();
  return response.status;
}

test('a load ramp scales 1 -> 3 and back to 1; no request fails while scaling down', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'route-autoscale-'));
  const policy = join(dir, 'policy.json');
  writeFileSync(policy, JSON.stringify({
    interval: '300ms',
    pools: { default: {
      min_replicas: 1, max_replicas: 3, targets: { queue_depth_per_replica: 1 }, tolerance: 0.1,
      scale_up: { stabilization: '0s', max_factor: 2, max_step_replicas: 2, period: '300ms' },
      scale_down: { stabilization: '2s', max_percent: 100, period: '300ms' } } } }));
  router = await startRouter(SURGE, [], ['--spawn', '1', '--model', 'models/stories260K', '--autoscale', policy,
                                         '--health-interval-ms', '100', '--', '--threads', '1', '--max-num-seqs', '1']);
  assert.equal(await numRoutable(router.baseUrl), 1);
  // Ramp: 8 requests at a time against one sequence slot, until the pool has grown to 3.
  let loading = true;
  const load = (async () => {
    const statuses = [];
    while (loading) statuses.push(...await Promise.all(Array.from({ length: 8 }, () => complete(router.baseUrl, 300))));
    return statuses;
  })();
  const grew = await waitFor(async () => await numRoutable(router.baseUrl) === 3, 20_000);
  loading = false;
  const rampStatuses = await load;
  assert.ok(grew, `scaled up to 3 (stderr:\n${router.stderr().split('\n').filter((l) => l.includes('autoscale')).join('\n')})`);
  assert.deepEqual([...new Set(rampStatuses)], [200]);
  // Load gone: back to the minimum, while a trickle keeps going through the workers stopping.
  const trickle = [];
  const shrunk = await waitFor(async () => {
    trickle.push(await complete(router.baseUrl, 8));
    return await numRoutable(router.baseUrl) === 1;
  }, 20_000);
  assert.ok(shrunk, 'scaled back down to 1');
  assert.ok(trickle.length > 0);
  assert.deepEqual([...new Set(trickle)], [200], 'no request failed while workers were drained and stopped');
  assert.match(router.stderr(), /autoscale pool default: 1 -> [23]/);
  assert.match(router.stderr(), /autoscale pool default: [23] -> [12]/);
});
