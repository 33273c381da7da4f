// Starts `surge serve` on a free port of 127.0.0.1 and stops it: shared by the node tests
// that drive the server as a real client would.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export const MODEL_DIR = 'models/stories260K';
export const CHAT_TEMPLATE = 'tests/data/chat_template_simple.jinja';

// Resolves with {proc, baseUrl} once the server prints its ready line (port 0: the
// kernel picks the port, so parallel tests never collide). `modelDir` defaults to the
// bundled model with a simple chat template; another model serves with its own template.
export function startServer(surgeBinary, extraArgs = [], modelDir = MODEL_DIR) {
  const template = modelDir === MODEL_DIR ? ['--chat-template', CHAT_TEMPLATE] : [];
  const args = ['serve', modelDir, '--host', '127.0.0.1', '--port', '0', ...template,
                '--threads', '2', ...extraArgs];
  const proc = spawn(surgeBinary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (data) => { stderr += data; });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line after 60 s; stderr:\n${stderr}`)), 60_000);
    proc.on('exit', (code) => reject(new Error(`surge serve exited with ${code}; stderr:\n${stderr}`)));
    createInterface({ input: proc.stdout }).on('line', (line) => {
      const match = line.match(/ready on (http:\/\/[^ ]+)/);
      if (!match) return;
      clearTimeout(timer);
      resolve({ proc, baseUrl: match[1], stderr: () => stderr });
    });
  });
}

// SIGTERM, then the exit code (rejects after `timeoutMs`).
export function stopServer(proc, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    if (proc.exitCode !== null) return resolve(proc.exitCode);
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error('no exit after SIGTERM')); }, timeoutMs);
    proc.removeAllListeners('exit');
    proc.on('exit', (code) => { clearTimeout(timer); resolve(code); });
    proc.kill('SIGTERM');
  });
}

// mulberry32: a small seeded PRNG returning floats in [0, 1), so that a failing randomized
// test can be replayed by its seed.
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function postJson(baseUrl, path, body) {
  const response = await fetch(baseUrl + path, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}
