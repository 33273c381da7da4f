// A local Kubernetes control plane on 127.0.0.1 for the k8s tests (and by hand): etcd and
// kube-apiserver from the cache scripts/k8s/build_control_plane.sh fills, with TLS under a CA
// made here with openssl, RBAC, a static token for the test admin (system:masters) and
// service-account signing keys (so the TokenRequest API issues real tokens). No controller
// manager and no kubelet: the tests write EndpointSlices themselves (scripts/k8s/README.md).
// Every process is started here and stopped here by PID; ports are free ones of 127.0.0.1.
//
//   node scripts/k8s/control_plane.mjs     # starts one, prints KUBECONFIG=..., Ctrl-C stops it
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const K8S_VERSION = process.env.K8S_VERSION ?? 'v1.37.2';
export const K8S_ROOT = join(process.env.SURGE_CACHE ?? '/var/cache/surge', 'k8s', K8S_VERSION);
export const K8S_BIN = join(K8S_ROOT, 'bin');
export const KEDA_CRD = join(K8S_ROOT, 'crds', 'keda.sh_scaledobjects.yaml');
export const bin = (name) => join(K8S_BIN, name);
const ADMIN_TOKEN = 'surge-test-admin-token';

// Why the k8s tests cannot run here (a string for node:test's skip), or null when they can.
// Only an impossible build (build_control_plane.sh's `unavailable` note) skips; a build that
// was never run or failed is an error the tests report.
export function skipReason() {
  const ready = ['etcd', 'kube-apiserver', 'helm'].every((b) => existsSync(bin(b))) && existsSync(KEDA_CRD);
  if (ready) return null;
  const note = join(K8S_ROOT, 'unavailable');
  if (existsSync(note)) return `no local control plane: ${readFileSync(note, 'utf8').trim()}`;
  throw new Error(`${K8S_BIN} lacks etcd, kube-apiserver or helm: run scripts/k8s/build_control_plane.sh ` +
                  '(scripts/setup.sh does)');
}

export function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function openssl(dir, args) {
  const result = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${result.stderr}`);
}

// The CA, the API server's serving certificate (127.0.0.1, localhost) and the service-account key.
export function makeCertificates(dir) {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(dir, ['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=surge-test-ca',
                '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  openssl(dir, ['req', ...ec, '-keyout', 'apiserver.key', '-out', 'apiserver.csr', '-subj', '/CN=kube-apiserver']);
  writeFileSync(join(dir, 'apiserver.ext'),
                'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n');
  openssl(dir, ['x509', '-req', '-in', 'apiserver.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
                '-out', 'apiserver.crt', '-days', '2', '-extfile', 'apiserver.ext']);
  openssl(dir, ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'sa.key']);
  openssl(dir, ['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
  writeFileSync(join(dir, 'tokens.csv'), `${ADMIN_TOKEN},surge-test-admin,surge-test-admin-uid,system:masters\n`);
}

// A kubeconfig (JSON, which kubectl, helm and surge all read) for `token` in `namespace`.
export function writeKubeconfig(path, server, caFile, token, namespace = 'default') {
  writeFileSync(path, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'local',
    clusters: [{ name: 'local', cluster: { server, 'certificate-authority': caFile } }],
    users: [{ name: 'user', user: { token } }],
    contexts: [{ name: 'local', context: { cluster: 'local', user: 'user', namespace } }] }));
  return path;
}

class Child {
  constructor(name, args, logFile) {
    this.name = name;
    this.log = '';
    this.proc = spawn(bin(name), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (data) => { this.log = (this.log + data).slice(-20_000); };
    this.proc.stdout.on('data', keep);
    this.proc.stderr.on('data', keep);
    this.exited = new Promise((resolve) => this.proc.once('exit', (code, signal) => {
      writeFileSync(logFile, this.log);
      resolve(code ?? signal);
    }));
  }

  async stop(signal = 'SIGTERM', timeoutMs = 30_000) {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return this.exited;
    this.proc.kill(signal);
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), timeoutMs);
    const result = await this.exited;
    clearTimeout(timer);
    return result;
  }
}

export class ControlPlane {
  constructor(dir) {
    this.dir = dir;
    this.caFile = join(dir, 'ca.crt');
    this.adminToken = ADMIN_TOKEN;
  }

  async start() {
    makeCertificates(this.dir);
    [this.etcdPort, this.peerPort, this.port] = [await freePort(), await freePort(), await freePort()];
    this.server = `https://127.0.0.1:${this.port}`;
    this.kubeconfig = writeKubeconfig(join(this.dir, 'admin.kubeconfig'), this.server, this.caFile, ADMIN_TOKEN);
    this.startEtcd();
    await this.startApiServer();
    return this;
  }

  startEtcd() {
    const client = `http://127.0.0.1:${this.etcdPort}`;
    const peer = `http://127.0.0.1:${this.peerPort}`;
    this.etcd = new Child('etcd', [
      '--name', 'surge-test', '--data-dir', join(this.dir, 'etcd'), '--listen-client-urls', client,
      '--advertise-client-urls', client, '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer,
      '--initial-cluster', `surge-test=${peer}`, '--log-level', 'warn', '--unsafe-no-fsync'], join(this.dir, 'etcd.log'));
  }

  // Starts kube-apiserver on this.port (again, after stopApiServer) and waits for /readyz.
  async startApiServer(timeoutMs = 120_000) {
    const d = this.dir;
    this.apiserver = new Child('kube-apiserver', [
      `--etcd-servers=http://127.0.0.1:${this.etcdPort}`, '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1',
      `--secure-port=${this.port}`, `--cert-dir=${join(d, 'certs')}`,
      `--tls-cert-file=${join(d, 'apiserver.crt')}`, `--tls-private-key-file=${join(d, 'apiserver.key')}`,
      `--client-ca-file=${this.caFile}`, `--token-auth-file=${join(d, 'tokens.csv')}`, '--authorization-mode=RBAC',
      `--service-account-key-file=${join(d, 'sa.pub')}`, `--service-account-signing-key-file=${join(d, 'sa.key')}`,
      '--service-account-issuer=https://kubernetes.default.svc', '--service-cluster-ip-range=10.96.0.0/24',
      // 127.0.0.1 cannot be the kubernetes Service's endpoint: no endpoint reconciler.
      '--endpoint-reconciler-type=none', '--profiling=false', '--v=0'], join(d, 'kube-apiserver.log'));
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.apiserver.proc.exitCode !== null) break;
      const ready = await this.get('/readyz').catch(() => null);
      if (ready?.status === 200) return;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`kube-apiserver not ready on ${this.server}:\n${this.apiserver.log.slice(-4000)}`);
  }

  // SIGTERM (a graceful stop: the server ends its watches) or SIGKILL.
  stopApiServer(signal = 'SIGTERM') { return this.apiserver.stop(signal); }

  async stop() {
    if (this.apiserver) await this.apiserver.stop();
    if (this.etcd) await this.etcd.stop();
  }

  // One https request with `token` (the admin's by default): {status, body (parsed JSON or text)}.
  call(method, path, body, { token = ADMIN_TOKEN, contentType = 'application/json' } = {}) {
    const data = body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = request(`${this.server}${path}`, {
        method, ca: readFileSync(this.caFile), timeout: 10_000,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json',
                   ...(data === undefined ? {} : { 'content-type': contentType }) } }, (res) => {
        let text = '';
        res.on('data', (chunk) => { text += chunk; });
        res.on('end', () => {
          let parsed = text;
          try { parsed = JSON.parse(text); } catch { /* not JSON: /readyz says "ok" */ }
          resolve({ status: res.statusCode, body: parsed });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on('error', reject);
      req.end(data);
    });
  }

  get(path, options) { return this.call('GET', path, undefined, options); }

  // A cached tool (helm) with the admin kubeconfig; throws with its output on failure.
  run(args, { tool = 'helm', input, kubeconfig = this.kubeconfig, check = true } = {}) {
    const result = spawnSync(bin(tool), args, {
      input, encoding: 'utf8', timeout: 120_000, env: { ...process.env, KUBECONFIG: kubeconfig, HOME: this.dir } });
    if (check && result.status !== 0) {
      throw new Error(`${tool} ${args.join(' ')} -> ${result.status}:\n${result.stdout}\n${result.stderr}`);
    }
    return result;
  }
}

// Starts a control plane in a fresh temporary directory; stop() ends it and removes the directory.
export async function startControlPlane() {
  const dir = mkdtempSync(join(tmpdir(), 'surge-k8s-'));
  mkdirSync(join(dir, 'certs'));
  const plane = new ControlPlane(dir);
  const stop = plane.stop.bind(plane);
  plane.stop = async () => { await stop(); rmSync(dir, { recursive: true, force: true }); };
  try {
    return await plane.start();
  } catch (error) {
    await plane.stop();
    throw error;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const reason = skipReason();
  if (reason) { console.error(reason); process.exit(2); }
  const plane = await startControlPlane();
  console.log(`kube-apiserver ready on ${plane.server}\nKUBECONFIG=${plane.kubeconfig}  (admin; Ctrl-C stops)`);
  const stop = async () => { await plane.stop(); process.exit(0); };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
