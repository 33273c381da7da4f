// deploy/ against a real kube-apiserver (scripts/k8s/control_plane.mjs): the manifests of
// deploy/kubernetes/ apply (server-side dry run, then for real; KEDA's own ScaledObject CRD
// first), the router's service account (a real TokenRequest token) can do what its Role grants
// and nothing more, the router runs with the shipped args and policy, and the Helm chart
// (deploy/helm/surge) lints, renders what deploy/kubernetes holds, and installs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import { KEDA_CRD, skipReason, startControlPlane, writeKubeconfig } from '../../scripts/k8s/control_plane.mjs';
import { apply, canI, serviceAccountToken } from './k8s_util.mjs';
import { startRouter, waitFor } from './route_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const DEPLOY = 'deploy/kubernetes';
const CHART = 'deploy/helm/surge';
const skip = skipReason() ?? false;
const read = (file) => readFileSync(join(DEPLOY, file), 'utf8');
let plane;

before(async () => { if (!skip) plane = await startControlPlane(); });
after(async () => { if (plane) await plane.stop(); });

async function applyCrd(plane, file) {
  await apply(plane, readFileSync(file, 'utf8'));
  const name = loadAllYaml(readFileSync(file, 'utf8'))[0].metadata.name;
  const established = await waitFor(async () => {
    const { body } = await plane.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    return body.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  }, 30_000);
  assert.ok(established, `CRD ${name} established`);
}

test('deploy/kubernetes applies: server-side dry run, then for real', { skip }, async () => {
  await apply(plane, 'apiVersion: v1\nkind: Namespace\nmetadata: {name: surge}\n');
  await applyCrd(plane, KEDA_CRD);  // KEDA's CRD from its Go module (build_control_plane.sh)
  const files = readdirSync(DEPLOY).filter((f) => f.endsWith('.yaml')).sort();
  assert.deepEqual(files, ['engine.yaml', 'hpa.yaml', 'keda-scaledobject.yaml', 'router.yaml']);
  for (const file of files) await apply(plane, read(file), { dryRun: true });
  assert.equal((await plane.get('/apis/apps/v1/namespaces/surge/deployments/surge-engine')).status, 404,
               'a dry run stores nothing');
  for (const file of files) await apply(plane, read(file));
  const engine = (await plane.get('/apis/apps/v1/namespaces/surge/deployments/surge-engine')).body;
  assert.equal(engine.spec.replicas, 2);
  assert.equal(engine.spec.template.spec.terminationGracePeriodSeconds, 45);
  const scaled = (await plane.get('/apis/keda.sh/v1alpha1/namespaces/surge/scaledobjects/surge-engine')).body;
  assert.equal(scaled.spec.triggers.filter((t) => t.type === 'cron').length, 4);
  const hpa = (await plane.get('/apis/autoscaling/v2/namespaces/surge/horizontalpodautoscalers/surge-engine')).body;
  assert.equal(hpa.spec.maxReplicas, 28);
});

test('the API server refuses broken copies (strict field validation, the CRD schema)', { skip }, async () => {
  const broken = read('engine.yaml').replace('  replicas: 2\n', '  replicas: two\n');
  await assert.rejects(apply(plane, broken, { dryRun: true }), /Deployment surge-engine \(dry run\): .*spec\.replicas/);
  const unknown = read('engine.yaml').replace('  revisionHistoryLimit: 5\n', '  revisionHistoryLimits: 5\n');
  await assert.rejects(apply(plane, unknown, { dryRun: true }), /revisionHistoryLimits/);
  const keda = read('keda-scaledobject.yaml').replace('    - type: cpu\n', '    - tipe: cpu\n');
  await assert.rejects(apply(plane, keda, { dryRun: true }), /ScaledObject surge-engine \(dry run\): .*triggers\[2\]\.tipe: field not declared/);
});

test('the router\'s service account can do what its Role grants and nothing more', { skip }, async () => {
  const token = await serviceAccountToken(plane, 'surge', 'surge-router');
  const ns = 'surge';
  const slices = { group: 'discovery.k8s.io', resource: 'endpointslices', namespace: ns };
  const scale = { group: 'apps', resource: 'deployments', subresource: 'scale', name: 'surge-engine', namespace: ns };
  for (const verb of ['get', 'list', 'watch']) assert.equal(await canI(plane, token, { verb, ...slices }), true, verb);
  for (const verb of ['get', 'update', 'patch']) assert.equal(await canI(plane, token, { verb, ...scale }), true, verb);
  const denied = [
    { verb: 'create', ...slices }, { verb: 'delete', ...slices }, { verb: 'update', ...slices },
    { verb: 'list', ...slices, namespace: 'default' },
    { verb: 'update', ...scale, name: 'surge-router' },
    { verb: 'get', group: 'apps', resource: 'deployments', name: 'surge-engine', namespace: ns },
    { verb: 'patch', group: 'apps', resource: 'deployments', name: 'surge-engine', namespace: ns },
    { verb: 'list', resource: 'pods', namespace: ns }, { verb: 'get', resource: 'secrets', namespace: ns },
    { verb: 'list', resource: 'configmaps', namespace: ns } ];
  for (const review of denied) assert.equal(await canI(plane, token, review), false, JSON.stringify(review));
  // The same through real requests with the token.
  const as = { token };
  const scalePath = '/apis/apps/v1/namespaces/surge/deployments/surge-engine/scale';
  const current = await plane.get(scalePath, as);
  assert.equal(current.status, 200);
  const put = await plane.call('PUT', scalePath, { ...current.body, spec: { replicas: 3 } }, as);
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.equal((await plane.get('/apis/discovery.k8s.io/v1/namespaces/surge/endpointslices', as)).status, 200);
  assert.equal((await plane.get('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', as)).status, 403);
  assert.equal((await plane.get('/apis/apps/v1/namespaces/surge/deployments/surge-engine', as)).status, 403);
  assert.equal((await plane.get('/apis/apps/v1/namespaces/surge/deployments/surge-router/scale', as)).status, 403);
  assert.equal((await plane.get('/api/v1/namespaces/surge/secrets', as)).status, 403);
  assert.equal((await plane.get(scalePath, { token: `${token}x` })).status, 401);
});

test('surge route runs with the shipped args, policy ConfigMap and service account', { skip }, async () => {
  const deployment = (await plane.get('/apis/apps/v1/namespaces/surge/deployments/surge-router')).body;
  const args = [...deployment.spec.template.spec.containers[0].args];
  const policy = (await plane.get('/api/v1/namespaces/surge/configmaps/surge-autoscale-policy')).body.data['policy.json'];
  const policyFile = join(plane.dir, 'policy.json');
  writeFileSync(policyFile, policy);
  args[args.indexOf('--autoscale') + 1] = policyFile;
  args.splice(args.indexOf('--host'), 4);  // startRouter's own 127.0.0.1 and a free port
  assert.equal(args.shift(), 'route');
  const kubeconfig = writeKubeconfig(join(plane.dir, 'router.kubeconfig'), plane.server, plane.caFile,
                                     await serviceAccountToken(plane, 'surge', 'surge-router'), 'surge');
  const router = await startRouter(SURGE, [], args, { KUBECONFIG: kubeconfig });
  try {
    // Every minute of the week is in one of the policy's schedule rules (min 5, 8 or 20): the
    // first evaluation (interval 15 s) raises the Deployment to that minimum through /scale.
    const replicas = async () => (await plane.get('/apis/apps/v1/namespaces/surge/deployments/surge-engine')).body.spec.replicas;
    assert.ok(await waitFor(async () => [5, 8, 20].includes(await replicas()), 45_000),
              `scaled to a schedule minimum (now ${await replicas()}):\n${router.stderr()}`);
  } finally {
    await new Promise((r) => { router.proc.once('exit', r); router.proc.kill('SIGTERM'); });
  }
});

// `helm` with the admin kubeconfig: its stdout, or an error with its output.
const helm = (args) => plane.run(args, { tool: 'helm' }).stdout;

test('helm lint; the chart renders what deploy/kubernetes holds', { skip }, async () => {
  for (const mode of ['router', 'hpa', 'keda', 'none']) helm(['lint', '--strict', CHART, '--set', `autoscaling.mode=${mode}`]);
  const rendered = loadAllYaml(helm(['template', 'surge', CHART, '--namespace', 'surge'])).filter(Boolean);
  const find = (docs, kind, name) => docs.find((d) => d.kind === kind && d.metadata.name === name);
  const shipped = readdirSync(DEPLOY).filter((f) => f.endsWith('.yaml')).flatMap((f) => loadAllYaml(read(f)));
  assert.deepEqual(rendered.map((d) => `${d.kind}/${d.metadata.name}`).sort(),
                   ['ConfigMap/surge-autoscale-policy', 'Deployment/surge-engine', 'Deployment/surge-router',
                    'PodDisruptionBudget/surge-engine', 'Role/surge-router', 'RoleBinding/surge-router',
                    'Service/surge-engine', 'Service/surge-router', 'ServiceAccount/surge-router']);
  for (const doc of rendered) {
    for (const key of ['name', 'instance', 'version', 'component', 'part-of', 'managed-by']) {
      assert.ok(doc.metadata.labels?.[`app.kubernetes.io/${key}`], `${doc.kind} ${doc.metadata.name}: ${key}`);
    }
  }
  assert.deepEqual(find(rendered, 'Role', 'surge-router').rules, find(shipped, 'Role', 'surge-router').rules);
  assert.deepEqual(JSON.parse(find(rendered, 'ConfigMap', 'surge-autoscale-policy').data['policy.json']),
                   JSON.parse(find(shipped, 'ConfigMap', 'surge-autoscale-policy').data['policy.json']));
  const container = (docs, name) => find(docs, 'Deployment', name).spec.template.spec.containers[0];
  for (const key of ['args', 'ports', 'readinessProbe', 'startupProbe', 'livenessProbe', 'lifecycle', 'resources']) {
    assert.deepEqual(container(rendered, 'surge-engine')[key], container(shipped, 'surge-engine')[key], key);
  }
  assert.deepEqual(container(rendered, 'surge-router').args, container(shipped, 'surge-router').args);
  const pod = (docs) => find(docs, 'Deployment', 'surge-engine').spec.template.spec;
  assert.equal(pod(rendered).terminationGracePeriodSeconds, pod(shipped).terminationGracePeriodSeconds);
  for (const [mode, kind] of [['hpa', 'HorizontalPodAutoscaler'], ['keda', 'ScaledObject']]) {
    const docs = loadAllYaml(helm(['template', 'surge', CHART, '-n', 'surge', '--set', `autoscaling.mode=${mode}`]));
    assert.deepEqual(find(docs, kind, 'surge-engine').spec, find(shipped, kind, 'surge-engine').spec, mode);
    assert.equal(find(docs, 'Deployment', 'surge-engine').spec.replicas, undefined, `${mode} owns replicas`);
    assert.equal(find(docs, 'ConfigMap', 'surge-autoscale-policy'), undefined);
    assert.equal(find(docs, 'Role', 'surge-router').rules.length, 1, 'no scale rights without the router\'s autoscaler');
  }
  // Values: sizes and tiers take effect; an unknown key is refused by name.
  const sized = loadAllYaml(helm(['template', 'x', CHART, '--set', 'engine.replicas=5,engine.gpusPerEngine=1',
                                  '--set', 'model.path=llama.gguf,router.tiers.enabled=true']));
  assert.equal(find(sized, 'Deployment', 'x-engine').spec.replicas, 5);
  assert.equal(container(sized, 'x-engine').resources.limits['nvidia.com/gpu'], 1);
  assert.equal(container(sized, 'x-engine').args[1], '/models/llama.gguf');
  assert.deepEqual(container(sized, 'x-router').args.slice(-2), ['--tiers', 'default,default,default']);
  assert.throws(() => helm(['template', 'x', CHART, '--set', 'engine.replica=3']), /replica/);
});

test('the chart applies to the API server: installed, and each scaling mode admitted', { skip }, async () => {
  helm(['install', 'surge', CHART, '--namespace', 'surge-helm', '--create-namespace']);
  const engine = (await plane.get('/apis/apps/v1/namespaces/surge-helm/deployments/surge-engine')).body;
  assert.equal(engine.metadata.labels['app.kubernetes.io/managed-by'], 'Helm');
  assert.equal(engine.spec.replicas, 2);
  const token = await serviceAccountToken(plane, 'surge-helm', 'surge-router');
  assert.equal(await canI(plane, token, { verb: 'update', group: 'apps', resource: 'deployments', subresource: 'scale',
                                          name: 'surge-engine', namespace: 'surge-helm' }), true);
  helm(['upgrade', 'surge', CHART, '--namespace', 'surge-helm', '--set', 'autoscaling.mode=hpa']);
  assert.equal((await plane.get('/apis/autoscaling/v2/namespaces/surge-helm/horizontalpodautoscalers/surge-engine')).status, 200);
  assert.equal((await plane.get('/api/v1/namespaces/surge-helm/configmaps/surge-autoscale-policy')).status, 404);
  assert.equal(await canI(plane, token, { verb: 'update', group: 'apps', resource: 'deployments', subresource: 'scale',
                                          name: 'surge-engine', namespace: 'surge-helm' }), false);
  // KEDA mode through the CRD the first test applied (its schema checks the triggers).
  const keda = helm(['template', 'surge', CHART, '-n', 'surge-helm', '--set', 'autoscaling.mode=keda']);
  assert.equal((await apply(plane, keda, { dryRun: true })).filter((o) => o.kind === 'ScaledObject').length, 1);
  helm(['uninstall', 'surge', '--namespace', 'surge-helm']);
});
