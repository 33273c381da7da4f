// surge route --kubernetes against the scripted API server (tests/node/fake_kube_apiserver.mjs,
// itself checked against @kubernetes/client-node), over real TLS with a kubeconfig: a real
// `surge serve` becomes a backend when its EndpointSlice endpoint is ready and leaves when
// it is not; --autoscale with --kubernetes-deployment writes the Deployment's scale.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeApiServer, makeSlice, makeTestCertificates } from './fake_kube_apiserver.mjs';
import { startRouter, waitFor } from './route_util.mjs';
import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const NS = 'surge';
const LABELS = { 'kubernetes.io/service-name': 'surge-engine' };
const cleanups = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

async function numRoutable(baseUrl) {
  return (await (await fetch(`${baseUrl}/health`)).json()).num_routable_backends;
}

// The scripted API server over TLS, one `surge serve` behind a ready EndpointSlice, a
// Deployment of 1, and `surge route --kubernetes --autoscale` (min 2) reading the kubeconfig
// that writeKubeconfig(dir, apiPort) writes and returns the path of.
async function startFleet(writeKubeconfig) {
  const dir = mkdtempSync(join(tmpdir(), 'route-kube-'));
  const fake = new FakeApiServer({ token: 's3cret', tls: makeTestCertificates(dir) });
  const port = await fake.listen();
  cleanups.push(() => fake.close());
  const kubeconfig = writeKubeconfig(dir, port);
  const engine = await startServer(SURGE, ['--threads', '1']);
  cleanups.push(() => stopServer(engine.proc));
  const enginePort = Number(new URL(engine.baseUrl).port);
  fake.applySlice('ADDED', makeSlice(NS, 'surge-engine-abc', LABELS, [{ ip: '127.0.0.1' }], enginePort));
  fake.setDeployment(NS, 'surge-engine', 1);
  const policy = join(dir, 'policy.json');
  writeFileSync(policy, JSON.stringify({ interval: '200ms', pools: { default: {
    min_replicas: 2, max_replicas: 4, targets: { queue_depth_per_replica: 4 } } } }));
  const router = await startRouter(SURGE, [], [
    '--kubernetes', `${NS}/kubernetes.io/service-name=surge-engine`, '--kubernetes-deployment', 'surge-engine',
    '--autoscale', policy, '--health-interval-ms', '100'], { KUBECONFIG: kubeconfig });
  cleanups.push(() => new Promise((r) => { router.proc.once('exit', r); router.proc.kill('SIGTERM'); }));
  return { fake, enginePort, router };
}

test('discovery follows the slice; --autoscale scales the Deployment', async () => {
  const { fake, enginePort, router } = await startFleet((dir, port) => {
    const kubeconfig = join(dir, 'kubeconfig.json');
    writeFileSync(kubeconfig, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'test',
      clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${port}`, 'certificate-authority': join(dir, 'ca.crt') } }],
      users: [{ name: 'u', user: { token: 's3cret' } }],
      contexts: [{ name: 'test', context: { cluster: 'c', user: 'u', namespace: NS } }] }));
    return kubeconfig;
  });
  assert.ok(await waitFor(async () => await numRoutable(router.baseUrl) === 1), 'the ready endpoint is a backend');
  const response = await fetch(`${router.baseUrl}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Once upon a time', max_tokens: 4 }) });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-surge-backend'), `http://127.0.0.1:${enginePort}`);
  // min_replicas 2 over a Deployment of 1: the scale subresource is written.
  assert.ok(await waitFor(() => fake.deployments.get(`${NS}/surge-engine`).replicas === 2, 5000),
            `scaled to 2: ${router.stderr()}`);
  // The endpoint turns not ready (the pod is terminating): no longer routed to.
  fake.applySlice('MODIFIED', makeSlice(NS, 'surge-engine-abc', LABELS, [{ ip: '127.0.0.1', ready: false }], enginePort));
  assert.ok(await waitFor(async () => await numRoutable(router.baseUrl) === 0), 'the endpoint left the pool');
  const none = await fetch(`${router.baseUrl}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'x', max_tokens: 1 }) });
  assert.equal(none.status, 503);
});

// Issue 31: a watch event that is not JSON, nests 100k deep or holds a port of 2^32 + 80, and
// a Scale of 1e300 replicas are refused, counted and logged; the router keeps serving and,
// once the API answers sanely again, scales as ever.
test('hostile API answers are counted; discovery, serving and scaling go on', async () => {
  // A YAML kubeconfig here (the other test's is JSON), with a CA path relative to it.
  const { fake, enginePort, router } = await startFleet((dir, port) => {
    const kubeconfig = join(dir, 'kubeconfig.yaml');
    writeFileSync(kubeconfig, `current-context: t\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:${port}\n` +
      `    certificate-authority: ca.crt\nusers:\n- name: u\n  user: {token: s3cret}\n` +
      `contexts:\n- name: t\n  context: {cluster: c, user: u, namespace: ${NS}}\n`);
    return kubeconfig;
  });
  const scalePath = `/apis/apps/v1/namespaces/${NS}/deployments/surge-engine/scale`;
  fake.rawAnswers.push({ method: 'GET', path: scalePath, status: 200, times: 1e9,
                         body: '{"kind":"Scale","spec":{"replicas":1e300}}' });
  assert.ok(await waitFor(async () => await numRoutable(router.baseUrl) === 1), 'the ready endpoint is a backend');
  const bad = makeSlice(NS, 'surge-engine-abc', LABELS, [{ ip: '127.0.0.2' }], enginePort);
  bad.ports = [{ name: 'http', port: 4294967376 }];
  // The endpoint can be routable from the initial list before the watch is open: lines written
  // with no watch open would be lost.
  assert.ok(await waitFor(async () => fake.watches.size > 0), 'the router watches the slices');
  for (const line of ['not json', `{"type":"ADDED","object":${'['.repeat(100000)}${']'.repeat(100000)}}`,
                      JSON.stringify({ type: 'MODIFIED', object: bad })]) {
    for (const w of fake.watches) w.res.write(line + '\n');
  }
  const metric = async (name) => {
    const text = await (await fetch(`${router.baseUrl}/metrics`)).text();
    const m = text.match(new RegExp(`^${name} (\\S+)$`, 'm'));
    return m ? Number(m[1]) : 0;
  };
  assert.ok(await waitFor(async () => await metric('surge_router_kubernetes_refused_total') === 3, 10000),
            `three watch lines refused: ${router.stderr()}`);
  assert.ok(await waitFor(async () => await metric('surge_autoscale_errors_total\\{pool="default",op="resize"\\}') >= 1,
                          10000), `a resize failed on the Scale of 1e300: ${router.stderr()}`);
  assert.match(router.stderr(), /replicas/);
  const response = await fetch(`${router.baseUrl}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Once upon a time', max_tokens: 4 }) });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-surge-backend'), `http://127.0.0.1:${enginePort}`);  // 127.0.0.2 never came
  fake.rawAnswers.length = 0;  // the API server heals: scaling goes on
  assert.ok(await waitFor(() => fake.deployments.get(`${NS}/surge-engine`).replicas === 2, 10000),
            `scaled to 2: ${router.stderr()}`);
});

test('a bad --kubernetes target exits 2 naming it', async () => {
  const { spawnSync } = await import('node:child_process');
  const result = spawnSync(SURGE, ['route', '--kubernetes', 'no-selector'], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(result.status, 2);
  assert.match(result.stderr, /--kubernetes wants NAMESPACE\/SELECTOR/);
});
