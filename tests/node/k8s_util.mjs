// Helpers for the k8s tests against the local control plane (scripts/k8s/control_plane.mjs):
// server-side apply of manifests (what `kubectl apply --server-side` sends), service-account
// tokens from the TokenRequest API, access reviews, and EndpointSlices written directly.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';

// The collection path of `doc`'s kind, found through the API server's discovery (cached).
async function collectionPath(plane, doc) {
  plane.discovery ??= new Map();
  const groupVersion = doc.apiVersion;
  if (!plane.discovery.has(groupVersion)) {
    const base = groupVersion.includes('/') ? `/apis/${groupVersion}` : `/api/${groupVersion}`;
    const { status, body } = await plane.get(base);
    if (status !== 200) throw new Error(`discovery of ${groupVersion}: ${status} ${JSON.stringify(body)}`);
    plane.discovery.set(groupVersion, { base, resources: body.resources });
  }
  const { base, resources } = plane.discovery.get(groupVersion);
  const resource = resources.find((r) => r.kind === doc.kind && !r.name.includes('/'));
  if (!resource) throw new Error(`the API server has no ${doc.kind} in ${groupVersion}`);
  const namespace = doc.metadata.namespace ?? 'default';
  return resource.namespaced ? `${base}/namespaces/${namespace}/${resource.name}` : `${base}/${resource.name}`;
}

// The documents of a multi-document YAML text: [{doc (parsed, for its kind and name), body (its
// own text)}]. The text itself is sent: client-node's loader types known kinds and renames
// fields on the way (a CRD's x-kubernetes-validations comes out as x_kubernetes_validations).
function documents(yamlText) {
  return yamlText.split(/^---[ \t]*$/m)
    .map((body) => ({ body, doc: loadAllYaml(body)[0] }))
    .filter(({ doc }) => doc);
}

// Server-side apply (what `kubectl apply --server-side` sends) of every document of
// `manifests` (YAML text, or objects) in order; dryRun: the server validates and admits each
// but stores nothing. Unknown fields are refused (fieldValidation=Strict, kubectl's default).
// Returns the objects the server answered; throws with the server's message on a refusal.
export async function apply(plane, manifests, { dryRun = false, token } = {}) {
  const items = typeof manifests === 'string' ? documents(manifests)
                                              : manifests.map((doc) => ({ doc, body: JSON.stringify(doc) }));
  const applied = [];
  for (const { doc, body } of items) {
    const path = `${await collectionPath(plane, doc)}/${doc.metadata.name}` +
                 `?fieldManager=surge-test&force=true&fieldValidation=Strict${dryRun ? '&dryRun=All' : ''}`;
    const answer = await plane.call('PATCH', path, body, { token, contentType: 'application/apply-patch+yaml' });
    if (answer.status !== 200 && answer.status !== 201) {
      throw new Error(`apply ${doc.kind} ${doc.metadata.name}${dryRun ? ' (dry run)' : ''}: ${answer.status} ` +
                      `${answer.body.message ?? answer.body}`);
    }
    applied.push(answer.body);
  }
  return applied;
}

// A real service-account token (TokenRequest API, signed by the API server's key).
export async function serviceAccountToken(plane, namespace, name) {
  const { status, body } = await plane.call('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
                                            { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest',
                                              spec: { expirationSeconds: 3600 } });
  if (status !== 201) throw new Error(`TokenRequest for ${namespace}/${name}: ${status} ${JSON.stringify(body)}`);
  return body.status.token;
}

// Whether `token` may do `verb` on the resource, as the API server's authorizer says
// (SelfSubjectAccessReview, what `kubectl auth can-i` asks).
export async function canI(plane, token, { verb, group = '', resource, subresource, name, namespace }) {
  const { status, body } = await plane.call('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes: { verb, group, resource, subresource, name, namespace } } }, { token });
  if (status !== 201) throw new Error(`SelfSubjectAccessReview: ${status} ${JSON.stringify(body)}`);
  return body.status.allowed;
}

// The name the slices give the local engines. The API server refuses loopback IPs in slices
// (and FQDN addresses need two labels, which nothing here resolves), so the router runs in a
// mount namespace of its own whose /etc/hosts maps this name to 127.0.0.1 (routerWrapper).
export const ENGINE_HOST = 'engine.surge.test';

// A script that runs `surgeBinary` with its arguments in a private mount namespace where
// /etc/hosts also maps ENGINE_HOST to 127.0.0.1 (nothing outside that process sees it; the
// script execs, so its PID is surge's).
export function routerWrapper(dir, surgeBinary) {
  const hosts = join(dir, 'hosts');
  writeFileSync(hosts, `${readFileSync('/etc/hosts', 'utf8')}\n127.0.0.1 ${ENGINE_HOST}\n`);
  const wrapper = join(dir, 'surge-with-hosts.sh');
  writeFileSync(wrapper, '#!/bin/sh\nexec unshare --mount --propagation private sh -c ' +
                `'mount --bind "$0" /etc/hosts && exec "$@"' '${hosts}' '${resolve(surgeBinary)}' "$@"\n`);
  chmodSync(wrapper, 0o755);
  return wrapper;
}

// The EndpointSlice a Service's controller would write: one endpoint per {ready, terminating},
// all on `port` (named http), labelled with the Service's name, addressed as ENGINE_HOST.
export function endpointSlice(namespace, name, service, port, endpoints) {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name, namespace, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'FQDN',
    ports: [{ name: 'http', port, protocol: 'TCP' }],
    endpoints: endpoints.map((e) => ({
      addresses: [ENGINE_HOST],
      conditions: { ready: e.ready ?? true, serving: e.ready ?? true, terminating: e.terminating ?? false } })),
  };
}

export async function deleteObject(plane, path) {
  const { status, body } = await plane.call('DELETE', path);
  if (status !== 200 && status !== 202) throw new Error(`DELETE ${path}: ${status} ${JSON.stringify(body)}`);
}
