// The fake API server (fake_kube_apiserver.mjs) checked against the official
// @kubernetes/client-node: its typed list, its Watch, its ListWatch informer (which re-lists
// on 410), and readNamespacedDeploymentScale / replace / patch work against the fake, so the
// C++ clients tested against the same fake speak what a real client speaks.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {FakeApiServer, makeSlice, makeTestCertificates} from './fake_kube_apiserver.mjs';

const CERTS = makeTestCertificates(fs.mkdtempSync(path.join(os.tmpdir(), 'fake-kube-')));

const NS = 'serving';
const LABELS = {'app.kubernetes.io/name': 'surge-engine', 'kubernetes.io/service-name': 'engine'};
const SELECTOR = 'app.kubernetes.io/name=surge-engine';

async function start() {
  const fake = new FakeApiServer({token: 's3cret', tls: CERTS});
  const port = await fake.listen();
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{name: 'fake', server: `https://127.0.0.1:${port}`, caData: Buffer.from(CERTS.ca).toString('base64')}],
    users: [{name: 'router', token: 's3cret'}],
    contexts: [{name: 'fake', cluster: 'fake', user: 'router', namespace: NS}],
    currentContext: 'fake',
  });
  return {fake, kc};
}

function waitFor(predicate, what, timeoutMs = 5000) {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const poll = () => {
      if (predicate()) return resolve();
      if (Date.now() - start > timeoutMs) {
        return reject(new Error(`timed out waiting for ${typeof what === 'function' ? what() : what}`));
      }
      setTimeout(poll, 5);
    };
    poll();
  });
}

test('typed list of EndpointSlices by label selector', async () => {
  const {fake, kc} = await start();
  try {
    fake.applySlice('ADDED', makeSlice(NS, 'engine-a', LABELS, [{ip: '10.0.0.1'}, {ip: '10.0.0.2', ready: false}]));
    fake.applySlice('ADDED', makeSlice(NS, 'other', {app: 'other'}, [{ip: '10.9.9.9'}]));
    const api = kc.makeApiClient(k8s.DiscoveryV1Api);
    const list = await api.listNamespacedEndpointSlice({namespace: NS, labelSelector: SELECTOR});
    assert.equal(list.items.length, 1);
    assert.equal(list.metadata.resourceVersion, String(fake.rv));
    const slice = list.items[0];
    assert.equal(slice.addressType, 'IPv4');
    assert.deepEqual(slice.endpoints.map((e) => [e.addresses[0], e.conditions.ready]), [['10.0.0.1', true], ['10.0.0.2', false]]);
    assert.equal(slice.ports.find((p) => p.name === 'http').port, 8000);
    // The token is checked: a client without it gets the real 401 Status.
    const anonymous = new k8s.KubeConfig();
    anonymous.loadFromOptions({clusters: [kc.getCurrentCluster()], users: [{name: 'u'}],
      contexts: [{name: 'f', cluster: 'fake', user: 'u'}], currentContext: 'f'});
    await assert.rejects(anonymous.makeApiClient(k8s.DiscoveryV1Api).listNamespacedEndpointSlice({namespace: NS}),
      (e) => e.code === 401);
  } finally { await fake.close(); }
});

test('Watch from a resourceVersion: ADDED, MODIFIED, DELETED, BOOKMARK, then 410 as an ERROR event', async () => {
  const {fake, kc} = await start();
  try {
    fake.applySlice('ADDED', makeSlice(NS, 'engine-a', LABELS, [{ip: '10.0.0.1'}]));
    const fromRv = String(fake.rv);
    fake.applySlice('MODIFIED', makeSlice(NS, 'engine-a', LABELS, [{ip: '10.0.0.1'}, {ip: '10.0.0.2'}]));
    const seen = [];
    const watch = new k8s.Watch(kc);
    const req = await watch.watch(`/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`,
      {labelSelector: SELECTOR, resourceVersion: fromRv, allowWatchBookmarks: true},
      (type, obj) => seen.push([type, obj.metadata?.name ?? null, obj.metadata?.resourceVersion, obj.endpoints?.length]),
      () => {});
    await waitFor(() => seen.length === 1, 'the replayed MODIFIED');  // events after fromRv only
    assert.deepEqual(seen[0].slice(0, 2), ['MODIFIED', 'engine-a']);
    fake.applySlice('ADDED', makeSlice(NS, 'engine-b', LABELS, [{ip: '10.0.1.1'}]));
    fake.applySlice('ADDED', makeSlice(NS, 'not-ours', {app: 'x'}, [{ip: '10.0.2.1'}]));
    fake.applySlice('DELETED', makeSlice(NS, 'engine-a', LABELS, []));
    fake.bookmark();
    await waitFor(() => seen.length === 4, 'ADDED, DELETED, BOOKMARK');
    assert.deepEqual(seen.slice(1).map((s) => s[0]), ['ADDED', 'DELETED', 'BOOKMARK']);
    assert.equal(seen[3][2], String(fake.rv));
    req.abort();

    fake.compact();
    fake.applySlice('ADDED', makeSlice(NS, 'engine-c', LABELS, [{ip: '10.0.3.1'}]));
    const errors = [];
    await watch.watch(`/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`,
      {labelSelector: SELECTOR, resourceVersion: fromRv}, (type, obj) => errors.push([type, obj.code, obj.reason]), () => {});
    await waitFor(() => errors.length === 1, 'the 410 ERROR event');
    assert.deepEqual(errors[0], ['ERROR', 410, 'Expired']);
  } finally { await fake.close(); }
});

test('ListWatch informer follows slices and re-lists after 410', async () => {
  const {fake, kc} = await start();
  let cleanup = null;
  try {
    fake.applySlice('ADDED', makeSlice(NS, 'engine-a', LABELS, [{ip: '10.0.0.1'}]));
    const api = kc.makeApiClient(k8s.DiscoveryV1Api);
    const path = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`;
    const informer = k8s.makeInformer(kc, path, () => api.listNamespacedEndpointSlice({namespace: NS, labelSelector: SELECTOR}), SELECTOR);
    const names = () => informer.list().map((s) => s.metadata.name).sort().join(',');
    cleanup = () => informer.stop();
    const errors = [];
    informer.on('error', (e) => errors.push(String(e?.message ?? e)));
    await informer.start();

    assert.equal(names(), 'engine-a');
    fake.applySlice('ADDED', makeSlice(NS, 'engine-b', LABELS, [{ip: '10.0.1.1'}]));
    await waitFor(() => names() === 'engine-a,engine-b', () => `engine-b from the watch (errors: ${errors})`);

    // A change the watch never sees, compaction, and the watch dropped: the informer's
    // resourceVersion is gone (410), and only a re-list finds engine-a deleted.
    const numLists = () => fake.requests.filter((r) => r.path === path && !r.query.watch).length;
    const listsBefore = numLists();
    fake.applySlice('DELETED', makeSlice(NS, 'engine-a', LABELS, []), {silent: true});
    fake.compact();
    fake.closeWatches();
    await waitFor(() => names() === 'engine-b' && numLists() > listsBefore,
                  () => `re-list after 410 (have ${names()}, lists ${numLists()} vs ${listsBefore})`, 10000);
  } finally { await cleanup?.(); await fake.close(); }
});

test('Deployment scale: read, replace with resourceVersion (409 on a stale one), merge and JSON patch', async () => {
  const {fake, kc} = await start();
  try {
    fake.setDeployment(NS, 'engine', 2);
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const scale = await apps.readNamespacedDeploymentScale({name: 'engine', namespace: NS});
    assert.equal(scale.kind, 'Scale');
    assert.equal(scale.apiVersion, 'autoscaling/v1');
    assert.equal(scale.spec.replicas, 2);
    assert.equal(scale.status.replicas, 2);
    const stale = structuredClone(scale);
    scale.spec.replicas = 3;
    const replaced = await apps.replaceNamespacedDeploymentScale({name: 'engine', namespace: NS, body: scale});
    assert.equal(replaced.spec.replicas, 3);
    stale.spec.replicas = 9;
    await assert.rejects(apps.replaceNamespacedDeploymentScale({name: 'engine', namespace: NS, body: stale}),
      (e) => e.code === 409 && /the object has been modified/.test(e.body));
    const merged = await apps.patchNamespacedDeploymentScale({name: 'engine', namespace: NS, body: {spec: {replicas: 5}}},
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    assert.equal(merged.spec.replicas, 5);
    const patched = await apps.patchNamespacedDeploymentScale(
      {name: 'engine', namespace: NS, body: [{op: 'replace', path: '/spec/replicas', value: 4}]});
    assert.equal(patched.spec.replicas, 4);
    assert.equal(fake.requests.at(-1).contentType, 'application/json-patch+json');
    await assert.rejects(apps.readNamespacedDeploymentScale({name: 'missing', namespace: NS}), (e) => e.code === 404);
  } finally { await fake.close(); }
});
