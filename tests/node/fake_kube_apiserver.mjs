// A scripted Kubernetes API server for tests: the real JSON shapes of discovery.k8s.io/v1
// EndpointSlices (list, watch with resourceVersion, bookmarks, 410 Gone after compaction) and
// of apps/v1 Deployment scale subresources (autoscaling/v1 Scale; GET, PUT with optimistic
// concurrency and 409 Conflict, merge / strategic-merge / JSON patch). Scripted through
// /_fake/* endpoints. Checked against @kubernetes/client-node in kube_fake_client_test.mjs;
// the C++ clients in fleet/kubernetes/ are tested against it.
//
// As a process: node fake_kube_apiserver.mjs [--tls-dir DIR] [--token T] serves https with
// a CA and a certificate for IP 127.0.0.1 it makes in DIR (ca.crt, server.crt, server.key),
// prints {"port": N} on its first stdout line and serves until stdin closes.
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import path from 'node:path';
import {execFileSync} from 'node:child_process';

const SLICE_PREFIX = '/apis/discovery.k8s.io/v1/namespaces/';
const DEPLOY_PREFIX = '/apis/apps/v1/namespaces/';
// A watch that ends closes its connection: clients (client-node's Watch among them) notice
// a watch's end by the stream closing, and a kept-alive socket would hide it.
const WATCH_HEADERS = {'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Connection': 'close'};

function status(code, reason, message, details) {
  return {kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code,
          ...(details ? {details} : {})};
}

// "a=b,c!=d,e" (equality, inequality, existence): the subset the clients use.
export function matchesSelector(labels, selector) {
  if (!selector) return true;
  return selector.split(',').filter(Boolean).every((term) => {
    if (term.includes('!=')) { const [k, v] = term.split('!='); return labels?.[k] !== v; }
    if (term.includes('=')) { const [k, v] = term.split(/==?/); return labels?.[k] === v; }
    return labels && term in labels;
  });
}

export class FakeApiServer {
  constructor({token = null, tls = null} = {}) {
    this.token = token;
    this.rv = 100;              // the etcd revision: every write bumps it
    this.compactedRv = 0;       // watches from a resourceVersion below this get 410
    this.slices = new Map();    // "ns/name" -> EndpointSlice
    this.events = [];           // {rv, type, object}: the watch cache
    this.deployments = new Map();  // "ns/name" -> {replicas, rv, selector}
    this.numConflicts = 0;      // the next N scale writes lose a race with another writer
    this.rawAnswers = [];       // {method, path, watch, status, body, times}: bytes a broken server sends
    this.watches = new Set();
    this.requests = [];         // every API request: {method, path, query, contentType, body}
    this.watch410AsHttp = false;  // answer a too-old watch with HTTP 410 instead of an ERROR event
    const handler = (req, res) => this.handle(req, res).catch((e) => {
      res.writeHead(500); res.end(String(e?.stack ?? e));
    });
    this.server = tls ? https.createServer(tls, handler) : http.createServer(handler);
    this.sockets = new Set();  // destroyed on close: a client's keep-alive never holds it open
    this.server.on('connection', (socket) => {  // raw TCP: also sockets still in a TLS handshake
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  listen() {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', () => resolve(this.server.address().port)));
  }
  close() {
    for (const w of this.watches) w.res.destroy();
    for (const socket of this.sockets) socket.destroy();
    this.server.closeAllConnections?.();
    return new Promise((resolve) => this.server.close(resolve));
  }

  // Scripting (also reachable over HTTP as /_fake/*).
  // silent: the change reaches no watch and no watch cache, as when it happened while the
  // client was disconnected and was compacted away since: only a re-list can see it.
  applySlice(type, object, {silent = false} = {}) {
    const key = `${object.metadata.namespace}/${object.metadata.name}`;
    const stored = structuredClone(object);
    stored.kind = 'EndpointSlice';
    stored.apiVersion = 'discovery.k8s.io/v1';
    stored.metadata.resourceVersion = String(++this.rv);
    stored.metadata.uid ??= `uid-${key}`;
    if (type === 'DELETED') this.slices.delete(key); else this.slices.set(key, stored);
    if (!silent) this.publish({rv: this.rv, type, object: stored});
  }
  publish(event) {
    this.events.push(event);
    for (const w of this.watches) this.sendIfMatches(w, event);
  }
  compact() { this.compactedRv = this.rv; this.events = []; }
  closeWatches() { for (const w of this.watches) w.res.end(); this.watches.clear(); }
  bookmark() {
    for (const w of this.watches) {
      if (!w.bookmarks) continue;
      w.res.write(JSON.stringify({type: 'BOOKMARK', object: {kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1',
        metadata: {resourceVersion: String(this.rv)}}}) + '\n');
    }
  }
  setDeployment(namespace, name, replicas) {
    this.deployments.set(`${namespace}/${name}`, {replicas, rv: ++this.rv, selector: `app=${name}`});
  }

  sendIfMatches(w, event) {
    const m = event.object.metadata;
    if (m.namespace !== w.namespace || !matchesSelector(m.labels, w.selector)) return;
    w.res.write(JSON.stringify({type: event.type, object: event.object}) + '\n');
  }

  async handle(req, res) {
    const url = new URL(req.url, 'http://x');
    const body = await new Promise((resolve) => {
      let data = ''; req.on('data', (c) => { data += c; }); req.on('end', () => resolve(data));
    });
    if (url.pathname.startsWith('/_fake/')) return this.control(url, body, res);
    this.requests.push({method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams),
                        contentType: req.headers['content-type'] ?? null, body});
    const send = (code, obj) => { res.writeHead(code, {'Content-Type': 'application/json'}); res.end(JSON.stringify(obj)); };
    if (this.token && req.headers.authorization !== `Bearer ${this.token}`) {
      return send(401, status(401, 'Unauthorized', 'Unauthorized'));
    }
    const isWatch = ['1', 'true'].includes(url.searchParams.get('watch'));
    const raw = this.rawAnswers.find((r) => r.method === req.method && r.path === url.pathname && !!r.watch === isWatch);
    if (raw) {
      if (--raw.times <= 0) this.rawAnswers.splice(this.rawAnswers.indexOf(raw), 1);
      res.writeHead(raw.status, {'Content-Type': 'application/json'});
      return res.end(raw.bodyBase64 ? Buffer.from(raw.bodyBase64, 'base64') : raw.body);
    }
    let m = url.pathname.match(/^\/apis\/discovery\.k8s\.io\/v1\/namespaces\/([^/]+)\/endpointslices$/);
    if (m && req.method === 'GET') {
      const selector = url.searchParams.get('labelSelector') ?? '';
      const watch = ['1', 'true'].includes(url.searchParams.get('watch'));
      return watch ? this.watch(m[1], selector, url.searchParams, res, send) : this.list(m[1], selector, send);
    }
    m = url.pathname.match(/^\/apis\/apps\/v1\/namespaces\/([^/]+)\/deployments\/([^/]+)\/scale$/);
    if (m) return this.scale(req.method, m[1], m[2], req.headers['content-type'] ?? '', body, send);
    return send(404, status(404, 'NotFound', `the server could not find the requested resource (${url.pathname})`));
  }

  list(namespace, selector, send) {
    const items = [...this.slices.values()].filter((s) => s.metadata.namespace === namespace &&
      matchesSelector(s.metadata.labels, selector));
    send(200, {kind: 'EndpointSliceList', apiVersion: 'discovery.k8s.io/v1',
               metadata: {resourceVersion: String(this.rv)}, items});
  }

  watch(namespace, selector, params, res, send) {
    const from = Number(params.get('resourceVersion') ?? this.rv);
    if (from < this.compactedRv) {
      const gone = status(410, 'Expired', `too old resource version: ${from} (${this.compactedRv})`);
      if (this.watch410AsHttp) return send(410, gone);
      res.writeHead(200, WATCH_HEADERS);
      return res.end(JSON.stringify({type: 'ERROR', object: gone}) + '\n');
    }
    res.writeHead(200, WATCH_HEADERS);
    res.flushHeaders();
    const w = {namespace, selector, res, bookmarks: params.get('allowWatchBookmarks') === 'true'};
    for (const e of this.events) if (e.rv > from) this.sendIfMatches(w, e);
    this.watches.add(w);
    res.on('close', () => this.watches.delete(w));
    const timeout = Number(params.get('timeoutSeconds') ?? 0);
    // unref: a pending watch timeout must not keep a finished test process alive.
    if (timeout > 0) setTimeout(() => { this.watches.delete(w); res.end(); }, timeout * 1000).unref();
  }

  scaleObject(namespace, name, d) {
    return {kind: 'Scale', apiVersion: 'autoscaling/v1',
            metadata: {name, namespace, uid: `uid-${namespace}-${name}`, resourceVersion: String(d.rv),
                       creationTimestamp: '2026-01-01T00:00:00Z'},
            spec: {replicas: d.replicas}, status: {replicas: d.replicas, selector: d.selector}};
  }

  scale(method, namespace, name, contentType, body, send) {
    const d = this.deployments.get(`${namespace}/${name}`);
    if (!d) return send(404, status(404, 'NotFound', `deployments.apps "${name}" not found`,
                                    {name, group: 'apps', kind: 'deployments'}));
    if (method === 'GET') return send(200, this.scaleObject(namespace, name, d));
    if (method !== 'PUT' && method !== 'PATCH') return send(405, status(405, 'MethodNotAllowed', method));
    let parsed;
    try { parsed = JSON.parse(body); } catch { return send(400, status(400, 'BadRequest', 'body is not JSON')); }
    let replicas; let rv;
    if (method === 'PUT') {
      if (parsed.kind !== 'Scale' || parsed.apiVersion !== 'autoscaling/v1') {
        return send(400, status(400, 'BadRequest', 'body must be an autoscaling/v1 Scale'));
      }
      replicas = parsed.spec?.replicas; rv = parsed.metadata?.resourceVersion;
    } else if (contentType.startsWith('application/json-patch+json')) {
      const op = Array.isArray(parsed) && parsed.find((o) => o.path === '/spec/replicas' && ['replace', 'add'].includes(o.op));
      replicas = op?.value;
    } else if (/^application\/(merge-patch|strategic-merge-patch)\+json/.test(contentType)) {
      replicas = parsed.spec?.replicas; rv = parsed.metadata?.resourceVersion;
    } else {
      return send(415, status(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`));
    }
    if (!Number.isInteger(replicas) || replicas < 0) {
      return send(422, status(422, 'Invalid', `Scale.autoscaling "${name}" is invalid: spec.replicas: Invalid value`));
    }
    if (this.numConflicts > 0) { this.numConflicts--; d.rv = ++this.rv; rv = rv ?? 'lost-race'; }
    if (rv !== undefined && String(rv) !== String(d.rv)) {
      return send(409, status(409, 'Conflict', `Operation cannot be fulfilled on deployments.apps "${name}": the object has been modified; please apply your changes to the latest version and try again`,
                              {name, group: 'apps', kind: 'deployments'}));
    }
    d.replicas = replicas; d.rv = ++this.rv;
    return send(200, this.scaleObject(namespace, name, d));
  }

  control(url, body, res) {
    const args = body ? JSON.parse(body) : {};
    const op = url.pathname.slice('/_fake/'.length);
    let result = {};
    if (op === 'slice') this.applySlice(args.type, args.object, {silent: args.silent});
    else if (op === 'compact') this.compact();
    else if (op === 'close-watches') this.closeWatches();
    else if (op === 'bookmark') this.bookmark();
    else if (op === 'deployment') this.setDeployment(args.namespace, args.name, args.replicas);
    else if (op === 'conflicts') this.numConflicts = args.n;
    else if (op === 'watch410-as-http') this.watch410AsHttp = args.on;
    else if (op === 'raw') this.rawAnswers.push({...args, times: args.times ?? 1});  // the next answer(s) verbatim
    else if (op === 'watch-line') { for (const w of this.watches) w.res.write(args.line + '\n'); }
    else if (op === 'state') {
      result = {rv: this.rv, numWatches: this.watches.size, requests: this.requests,
                deployments: Object.fromEntries([...this.deployments].map(([k, d]) => [k, d.replicas]))};
    } else { res.writeHead(404); return res.end(); }
    res.writeHead(200, {'Content-Type': 'application/json'});
    res.end(JSON.stringify(result));
  }
}

// A test CA and a server certificate for IP 127.0.0.1 signed by it, made with the openssl CLI.
export function makeTestCertificates(dir) {
  fs.mkdirSync(dir, {recursive: true});
  const run = (...args) => execFileSync('openssl', args, {cwd: dir, stdio: ['ignore', 'ignore', 'pipe']});
  for (const key of ['ca.key', 'server.key']) {
    run('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key);
  }
  run('req', '-x509', '-new', '-key', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=fake-kube-ca');
  run('req', '-new', '-key', 'server.key', '-out', 'server.csr', '-subj', '/CN=kube-apiserver');
  fs.writeFileSync(path.join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1',
      '-extfile', 'server.ext', '-out', 'server.crt');
  const read = (name) => fs.readFileSync(path.join(dir, name), 'utf8');
  return {ca: read('ca.crt'), cert: read('server.crt'), key: read('server.key')};
}

// A ready (or not) slice of `addresses` on port `port` named "http".
export function makeSlice(namespace, name, labels, endpoints, port = 8000) {
  return {metadata: {name, namespace, labels}, addressType: 'IPv4',
          ports: [{name: 'http', port, protocol: 'TCP'}, {name: 'metrics', port: 9000, protocol: 'TCP'}],
          endpoints: endpoints.map(({ip, ready = true, terminating = false}) => ({
            addresses: [ip], conditions: {ready, serving: ready || terminating, terminating},
            targetRef: {kind: 'Pod', namespace, name: `pod-${ip}`}}))};
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const flag = (name) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : null; };
  const tls = flag('--tls-dir') ? makeTestCertificates(flag('--tls-dir')) : null;
  const fake = new FakeApiServer({token: flag('--token'), tls});
  const port = await fake.listen();
  process.stdout.write(JSON.stringify({port}) + '\n');
  process.stdin.resume();
  process.stdin.on('end', () => fake.close().then(() => process.exit(0)));
}
