// surge route --alarm-rules with real spawned workers: each action the router takes.
// - webhook: the receiver answers the first POST 500; the alert comes again (the retry) and the
//   second POST is acknowledged; GET /alarms shows the firing alert and the action's result;
// - scale_up: a rule that fires at once grows the --autoscale pool from 1 to 2 though no
//   metric target asks for it;
// - restart_instance: a rule grouped by backend restarts that worker: a new process at a new
//   url, and the autoscaler does not take the requested restart for a spot reclaim.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRouter, waitFor } from './route_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const routers = [];
after(() => Promise.all(routers.map((router) => new Promise((r) => {
  if (router.proc.exitCode !== null) return r();
  router.proc.once('exit', r);
  router.proc.kill('SIGTERM');
}))));

function writeJson(name, value) {
  const path = join(mkdtempSync(join(tmpdir(), 'route-alarms-')), name);
  writeFileSync(path, JSON.stringify(value));
  return path;
}

// A policy that never scales on its own: only an alarm's scale_up can add a replica.
function quietPolicy(classes) {
  return writeJson('policy.json', {
    interval: '200ms',
    pools: { default: {
      min_replicas: 1, max_replicas: 2, targets: { queue_depth_per_replica: 1000 },
      scale_up: { stabilization: '0s', period: '200ms' },
      scale_down: { stabilization: '600s' }, ...(classes ? { classes } : {}) } } });
}

async function healthyBackends(baseUrl) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('surge_router_backend_healthy{') && l.endsWith(' 1'))
    .map((l) => l.match(/backend="([^"]+)"/)[1]);
}

async function numRoutable(baseUrl) {
  return (await (await fetch(`${baseUrl}/health`)).json()).num_routable_backends;
}

async function start(rules, classes) {
  const router = await startRouter(SURGE, [], [
    '--spawn', '1', '--model', 'models/stories260K', '--autoscale', quietPolicy(classes),
    '--alarm-rules', writeJson('rules.json', rules), '--health-interval-ms', '100', '--', '--threads', '1']);
  routers.push(router);
  return router;
}

test('webhook retried after a 500; scale_up grows the pool; GET /alarms shows both', async () => {
  const posts = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      posts.push(JSON.parse(body));
      res.writeHead(posts.length === 1 ? 500 : 200).end();
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  try {
    const hook = `http://127.0.0.1:${receiver.address().port}/alerts`;
    const router = await start({
      interval: '100ms',
      rules: [
        { name: 'PageOnCall', expr: { kind: 'value', metric: 'surge_router_backend_healthy' }, comparison: '>=',
          threshold: 1, severity: 'page', summary: 'a backend is up',
          action: { type: 'webhook', url: hook, retries: 3, backoff: '100ms', timeout: '2s' } },
        { name: 'MoreCapacity', expr: { kind: 'value', metric: 'surge_router_backend_healthy', aggregate: 'sum' },
          comparison: '>=', threshold: 1, for: '200ms', severity: 'warning',
          action: { type: 'scale_up', pool: 'default' } }] });
    assert.ok(await waitFor(() => posts.length >= 2, 15_000), `two POSTs (got ${posts.length}); stderr:\n${router.stderr()}`);
    for (const post of posts) assert.equal(JSON.stringify(post), JSON.stringify(posts[0]), 'the retry resends the same alert');
    assert.match(JSON.stringify(posts[0]), /PageOnCall/);
    assert.match(JSON.stringify(posts[0]), /firing/);
    assert.ok(await waitFor(async () => await numRoutable(router.baseUrl) === 2, 30_000),
      `scale_up grew the pool to 2; stderr:\n${router.stderr()}`);
    assert.match(router.stderr(), /autoscale pool default: 1 -> 2/);
    const alarms = await (await fetch(`${router.baseUrl}/alarms`)).json();
    const text = JSON.stringify(alarms);
    assert.match(text, /PageOnCall/);
    assert.match(text, /MoreCapacity/);
    assert.match(text, /firing/);
    assert.match(text, /scale-up requested for pool default/);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(posts.length, 2, 'an acknowledged alert is not sent again while it keeps firing');
  } finally {
    receiver.close();
  }
});

test('restart_instance restarts the alert\'s backend; not counted as a spot reclaim', async () => {
  const router = await start({
    interval: '100ms',
    rules: [{ name: 'RestartOnce', expr: { kind: 'value', metric: 'surge_router_backend_healthy', group_by: ['backend'] },
      comparison: '==', threshold: 1, for: '300ms', severity: 'warning', action: { type: 'restart_instance' } }] },
  [{ name: 'spot', max_replicas: 2, usd_per_hour: 1, preemptible: true, initial_backoff: '600s' },
   { name: 'on-demand', max_replicas: 2, usd_per_hour: 3 }]);
  const [first] = await waitFor(async () => { const up = await healthyBackends(router.baseUrl); return up.length ? up : null; },
    20_000) ?? [];
  assert.ok(first, `one healthy backend; stderr:\n${router.stderr()}`);
  const moved = await waitFor(async () => {
    const now = await healthyBackends(router.baseUrl);
    return now.length === 1 && now[0] !== first;
  }, 30_000);
  assert.ok(moved, `the worker came back at a new url; stderr:\n${router.stderr()}`);
  assert.match(router.stderr(), /restarted on request \(SIGTERM\)/);
  assert.doesNotMatch(router.stderr(), /reclaimed/, 'a requested restart is not a reclaim');
  const alarms = JSON.stringify(await (await fetch(`${router.baseUrl}/alarms`)).json());
  assert.match(alarms, new RegExp(`restarting worker ${first.replace(/[.:/]/g, '\\$&')}`));
});
