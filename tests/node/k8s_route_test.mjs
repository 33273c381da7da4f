// surge route --kubernetes against a real kube-apiserver (scripts/k8s/control_plane.mjs) with
// the router's real service-account token and deploy/kubernetes' Role: discovery follows
// EndpointSlices (add, not ready, remove) across a watch the server ends (a graceful stop) and
// a killed API server; --autoscale scales the Deployment through /scale under load and back
// down after the load drains, and keeps doing so after an API server restart.
// No kubelet or controller manager runs: the test writes the EndpointSlices itself, as the
// EndpointSlice controller would for ready pods, pointing them at local `surge serve`
// processes (in the autoscale test, one slice per engine for the first spec.replicas engines).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { skipReason, startControlPlane, writeKubeconfig } from '../../scripts/k8s/control_plane.mjs';
import { ENGINE_HOST, apply, deleteObject, endpointSlice, routerWrapper, serviceAccountToken } from './k8s_util.mjs';
import { startRouter, waitFor } from './route_util.mjs';
import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const NS = 'surge';
const SLICES = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`;
const SCALE = `/apis/apps/v1/namespaces/${NS}/deployments/surge-engine/scale`;
const skip = skipReason() ?? false;
let plane;
let kubeconfig;
const engines = [];  // [{proc, baseUrl, port}]
const cleanups = [];

before(async () => {
  if (skip) return;
  plane = await startControlPlane();
  await apply(plane, 'apiVersion: v1\nkind: Namespace\nmetadata: {name: surge}\n');
  for (const file of ['engine.yaml', 'router.yaml']) await apply(plane, readFileSync(join('deploy/kubernetes', file), 'utf8'));
  kubeconfig = writeKubeconfig(join(plane.dir, 'router.kubeconfig'), plane.server, plane.caFile,
                               await serviceAccountToken(plane, NS, 'surge-router'), NS);
  for (let i = 0; i < 3; ++i) {
    const engine = await startServer(SURGE, ['--threads', '1', '--max-num-seqs', '1']);
    engines.push({ ...engine, port: Number(new URL(engine.baseUrl).port) });
  }
});
after(async () => {
  for (const c of cleanups.reverse()) await c();
  for (const e of engines) await stopServer(e.proc);
  if (plane) await plane.stop();
});

async function startKubeRouter(extraArgs) {
  const router = await startRouter(routerWrapper(plane.dir, SURGE), [], [
    '--kubernetes', `${NS}/kubernetes.io/service-name=surge-engine`, '--health-interval-ms', '100', ...extraArgs],
  { KUBECONFIG: kubeconfig });
  const stop = () => new Promise((r) => {
    if (router.proc.exitCode !== null) return r();
    router.proc.once('exit', r);
    router.proc.kill('SIGTERM');
  });
  cleanups.push(stop);
  return { ...router, stop };
}

async function numRoutable(baseUrl) {
  return (await (await fetch(`${baseUrl}/health`)).json()).num_routable_backends;
}

// One completion through the router: [status, the engine that answered].
async function complete(baseUrl, maxTokens = 4) {
  const response = await fetch(`${baseUrl}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Once upon a time', max_tokens: maxTokens, ignore_eos: true }) });
  await response.arrayBuffer();
  return [response.status, response.headers.get('x-surge-backend')];
}

// The engine's slice, named after it, as the EndpointSlice controller would write it.
const sliceOf = (i, ready = true) => endpointSlice(NS, `surge-engine-e${i}`, 'surge-engine', engines[i].port,
                                                  [{ ready }]);
const urlOf = (i) => `http://${ENGINE_HOST}:${engines[i].port}`;  // the backend the router makes of it
const putSlice = (i, ready) => apply(plane, [sliceOf(i, ready)]);
const dropSlice = (i) => deleteObject(plane, `${SLICES}/surge-engine-e${i}`);

test('discovery follows slices: add, not ready, remove, a closed watch, a killed API server', { skip }, async () => {
  const router = await startKubeRouter([]);
  const routable = (n, ms = 15_000) => waitFor(async () => await numRoutable(router.baseUrl) === n, ms);
  assert.equal(await numRoutable(router.baseUrl), 0);
  await putSlice(0, true);
  assert.ok(await routable(1), `engine 0 added:\n${router.stderr()}`);
  assert.deepEqual(await complete(router.baseUrl), [200, urlOf(0)]);
  await putSlice(1, true);
  assert.ok(await routable(2), 'engine 1 added');
  await putSlice(0, false);  // not ready: leaves the pool, engine 1 answers
  assert.ok(await routable(1), 'engine 0 not ready');
  for (let i = 0; i < 4; ++i) assert.deepEqual(await complete(router.baseUrl), [200, urlOf(1)]);
  await dropSlice(1);
  assert.ok(await routable(0), 'engine 1 removed');
  assert.equal((await complete(router.baseUrl))[0], 503);
  await putSlice(0, true);
  assert.ok(await routable(1), 'engine 0 ready again');

  // A graceful stop: the API server ends the router's watch. The router keeps routing to what
  // it knows while the server is away, then watches again and sees what changed meanwhile.
  await plane.stopApiServer('SIGTERM');
  assert.deepEqual(await complete(router.baseUrl), [200, urlOf(0)]);
  await plane.startApiServer();
  await putSlice(1, true);
  assert.ok(await routable(2, 40_000), `after a graceful restart, engine 1 added:\n${router.stderr()}`);

  // Killed without warning, then back: the same.
  await plane.stopApiServer('SIGKILL');
  assert.equal(await numRoutable(router.baseUrl), 2);
  await plane.startApiServer();
  await putSlice(1, false);
  assert.ok(await routable(1, 40_000), `after a killed API server, engine 1 not ready:\n${router.stderr()}`);
  assert.equal(router.proc.exitCode, null);
  await dropSlice(0);
  await dropSlice(1);
  assert.ok(await routable(0));
  await router.stop();
});

// Plays the kubelet and the EndpointSlice controller: the first spec.replicas engines (of 3)
// each have a ready slice, the others none. Returns a stop function.
function followReplicas() {
  let running = true;
  const shown = new Set();
  const loop = (async () => {
    while (running) {
      const scale = await plane.get(SCALE).catch(() => null);
      if (scale?.status === 200) {
        const want = Math.min(scale.body.spec.replicas, engines.length);
        for (let i = 0; i < engines.length; ++i) {
          // A failed write (the API server is away) is tried again on the next round.
          if (i < want && !shown.has(i)) await putSlice(i, true).then(() => shown.add(i), () => {});
          if (i >= want && shown.has(i)) await dropSlice(i).then(() => shown.delete(i), () => {});
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return async () => { running = false; await loop; };
}

const specReplicas = async () => (await plane.get(SCALE)).body.spec.replicas;

async function setReplicas(n) {
  const current = (await plane.get(SCALE)).body;
  const put = await plane.call('PUT', SCALE, { ...current, spec: { replicas: n } });
  assert.equal(put.status, 200, JSON.stringify(put.body));
}

test('--autoscale scales the Deployment through /scale under load, back down after draining, across a restart',
     { skip }, async () => {
  await setReplicas(1);
  const stopKubelet = followReplicas();
  cleanups.push(stopKubelet);
  const policy = join(plane.dir, 'policy.json');
  writeFileSync(policy, JSON.stringify({ interval: '300ms', pools: { default: {
    min_replicas: 1, max_replicas: 3, targets: { queue_depth_per_replica: 1 }, tolerance: 0.1,
    scale_up: { stabilization: '0s', max_factor: 2, max_step_replicas: 2, period: '300ms' },
    scale_down: { stabilization: '2s', max_percent: 100, period: '300ms' } } } }));
  const router = await startKubeRouter(['--kubernetes-deployment', 'surge-engine', '--autoscale', policy]);
  const log = () => router.stderr().split('\n').filter((l) => /autoscale|kubernetes/.test(l)).join('\n');
  assert.ok(await waitFor(async () => await numRoutable(router.baseUrl) === 1, 15_000), 'one engine to start with');

  // Load: 8 requests at a time against one sequence slot per engine, until 3 engines serve.
  let loading = true;
  const load = (async () => {
    const statuses = [];
    while (loading) statuses.push(...await Promise.all(Array.from({ length: 8 }, () => complete(router.baseUrl, 200))));
    return statuses.map(([status]) => status);
  })();
  const grew = await waitFor(async () => await specReplicas() === 3 && await numRoutable(router.baseUrl) === 3, 60_000);
  loading = false;
  const statuses = await load;
  assert.ok(grew, `scaled up to 3 through /scale:\n${log()}`);
  assert.deepEqual([...new Set(statuses)], [200]);

  // The load drains: back to one, while a trickle of requests all succeed.
  const trickle = [];
  const shrunk = await waitFor(async () => {
    trickle.push((await complete(router.baseUrl, 8))[0]);
    return await specReplicas() === 1 && await numRoutable(router.baseUrl) === 1;
  }, 60_000);
  assert.ok(shrunk, `scaled back down to 1:\n${log()}`);
  assert.deepEqual([...new Set(trickle)], [200]);

  // The API server is killed and restarted: the autoscaler's next writes go through again.
  await plane.stopApiServer('SIGKILL');
  assert.equal((await complete(router.baseUrl))[0], 200);
  await plane.startApiServer();
  await setReplicas(3);  // an operator's change with no load behind it: the policy takes it back to 1
  const restored = await waitFor(async () => await specReplicas() === 1, 30_000);
  assert.ok(restored, `scaled back to 1 after the restart:\n${log()}`);
  assert.equal(router.proc.exitCode, null);
  await stopKubelet();
  await router.stop();
});
