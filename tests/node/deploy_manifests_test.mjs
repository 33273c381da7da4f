// Every manifest in deploy/kubernetes/ validates against the Kubernetes and KEDA schemas
// (npm kubernetes-models, @kubernetes-models/keda), parsed with @kubernetes/client-node's
// YAML loader; broken copies fail; and the manifests say what deploy/README.md promises
// (grace period >= pause + drain, readiness on /health, RBAC verbs, the policy's numbers).
import {test} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {loadAllYaml} from '@kubernetes/client-node';

const DIR = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '../../deploy/kubernetes');
const SEED = JSON.parse(fs.readFileSync(path.join(DIR, '../../autoscale/examples/seed_day.json'), 'utf8')).pools.chat;

async function modelFor(doc) {
  if (!doc?.apiVersion || !doc?.kind) throw new Error('a document without apiVersion/kind');
  const group = doc.apiVersion.includes('/') ? doc.apiVersion : `core/${doc.apiVersion}`;
  const module = group.startsWith('keda.sh/')
    ? `@kubernetes-models/keda/${doc.apiVersion}/${doc.kind}`
    : `kubernetes-models/${doc.apiVersion}/${doc.kind}`;
  let loaded;
  try { loaded = await import(module); } catch { throw new Error(`no schema for ${doc.apiVersion} ${doc.kind}`); }
  return loaded[doc.kind];
}

async function validateDoc(doc) {
  const Model = await modelFor(doc);
  new Model(doc).validate();  // throws with the schema's complaint
}

// Every document of every .yaml file in `dir`: [{file, name, error}] for those that fail.
async function validateDir(dir) {
  const failures = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of loadAllYaml(fs.readFileSync(path.join(dir, file), 'utf8'))) {
      try { await validateDoc(doc); } catch (e) { failures.push({file, name: doc?.metadata?.name, error: e.message}); }
    }
  }
  return failures;
}

const docs = () => fs.readdirSync(DIR).filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => loadAllYaml(fs.readFileSync(path.join(DIR, f), 'utf8')));
const find = (kind, name) => docs().find((d) => d.kind === kind && d.metadata.name === name);

test('every manifest validates against its schema', async () => {
  const failures = await validateDir(DIR);
  assert.deepEqual(failures, []);
  const kinds = docs().map((d) => d.kind).sort();
  for (const kind of ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Role',
                      'RoleBinding', 'ScaledObject', 'Service', 'ServiceAccount']) {
    assert.ok(kinds.includes(kind), `no ${kind}`);
  }
});

test('broken copies fail validation', async () => {
  const broken = fs.mkdtempSync(path.join(os.tmpdir(), 'broken-manifests-'));
  const engine = fs.readFileSync(path.join(DIR, 'engine.yaml'), 'utf8');
  assert.ok(engine.includes('  replicas: 2\n'));
  fs.writeFileSync(path.join(broken, 'engine.yaml'), engine.replace('  replicas: 2\n', '  replicas: two\n'));
  const keda = fs.readFileSync(path.join(DIR, 'keda-scaledobject.yaml'), 'utf8');
  fs.writeFileSync(path.join(broken, 'keda-scaledobject.yaml'), keda.replace('    - type: cpu\n', '    - tipe: cpu\n'));
  const failures = await validateDir(broken);
  assert.deepEqual(failures.map((f) => [f.file, f.name]),
                   [['engine.yaml', 'surge-engine'], ['keda-scaledobject.yaml', 'surge-engine']]);
  fs.rmSync(broken, {recursive: true});

  const hpa = structuredClone(find('HorizontalPodAutoscaler', 'surge-engine'));
  delete hpa.spec.scaleTargetRef;
  await assert.rejects(validateDoc(hpa));
  const pdb = structuredClone(find('PodDisruptionBudget', 'surge-engine'));
  pdb.spec.maxUnavailable = {one: 1};
  await assert.rejects(validateDoc(pdb));
  await assert.rejects(validateDoc({apiVersion: 'example.com/v1', kind: 'Widget', metadata: {name: 'x'}}), /no schema/);
});

test('engine: readiness on /health, preStop pause, grace period covers pause + drain', () => {
  const pod = find('Deployment', 'surge-engine').spec.template.spec;
  const engine = pod.containers[0];
  assert.equal(engine.readinessProbe.httpGet.path, '/health');
  const pause = Number(engine.lifecycle.preStop.exec.command[1]);
  const drain = Number(engine.args[engine.args.indexOf('--drain-timeout') + 1]);
  assert.ok(pause > 0 && drain > 0);
  assert.ok(pod.terminationGracePeriodSeconds >= pause + drain,
            `grace ${pod.terminationGracePeriodSeconds} < ${pause} + ${drain}`);
  assert.ok(engine.resources.requests.cpu && engine.resources.limits.memory);
  const service = find('Service', 'surge-engine');
  assert.equal(service.spec.ports[0].name, 'http');  // the router's port_name
});

test('router RBAC is exactly endpointslices get/list/watch and deployments/scale get/patch/update', () => {
  const rules = find('Role', 'surge-router').rules.map((r) => [r.apiGroups.join(), r.resources.join(), r.verbs.sort().join()]);
  assert.deepEqual(rules, [['discovery.k8s.io', 'endpointslices', 'get,list,watch'],
                           ['apps', 'deployments/scale', 'get,patch,update']]);
  const router = find('Deployment', 'surge-router');
  assert.equal(router.spec.template.spec.serviceAccountName, 'surge-router');
  assert.equal(JSON.parse(find('ConfigMap', 'surge-autoscale-policy').data['policy.json']).pools.default.targets.ttft_p95,
               SEED.targets.ttft_p95);
});

test('HPA and KEDA carry the seed policy\'s numbers', () => {
  const hpa = find('HorizontalPodAutoscaler', 'surge-engine').spec;
  assert.equal(hpa.minReplicas, SEED.min_replicas);
  assert.equal(hpa.maxReplicas, SEED.max_replicas);
  assert.equal(hpa.metrics.find((m) => m.type === 'Pods').pods.target.averageValue, String(SEED.targets.queue_depth_per_replica));
  assert.equal(hpa.metrics.find((m) => m.type === 'Resource').resource.target.averageUtilization, SEED.targets.busy_fraction * 100);
  assert.equal(hpa.behavior.scaleUp.stabilizationWindowSeconds, 30);
  assert.equal(hpa.behavior.scaleDown.policies[0].value, SEED.scale_down.max_percent);
  const keda = find('ScaledObject', 'surge-engine').spec;
  assert.equal(keda.minReplicaCount, SEED.min_replicas);
  assert.equal(keda.maxReplicaCount, SEED.max_replicas);
  const trigger = (name) => keda.triggers.find((t) => t.name === name);
  assert.equal(trigger('queue-depth-per-replica').metadata.threshold, String(SEED.targets.queue_depth_per_replica));
  assert.equal(Number(trigger('ttft-p95').metadata.threshold) * 1000, Number(SEED.targets.ttft_p95.replace('ms', '')));
  const crons = keda.triggers.filter((t) => t.type === 'cron');
  assert.ok(crons.every((t) => t.metadata.timezone === SEED.schedule.time_zone));
  const minOf = (rule) => String(SEED.schedule.rules.find((r) => r.name === rule).min_replicas);
  assert.equal(trigger('workday').metadata.desiredReplicas, minOf('workday'));
  assert.equal(trigger('night').metadata.desiredReplicas, minOf('night'));
  assert.equal(trigger('weekend-saturday').metadata.desiredReplicas, minOf('weekend'));
  assert.equal(trigger('weekend-sunday').metadata.desiredReplicas, minOf('weekend'));
});
