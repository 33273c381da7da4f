// Starts `surge route` in front of given backends (port 0: a free one) and reads the
// router's and the engines' metrics: shared by the route_* tests.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export function startRouter(surgeBinary, backendUrls, extraArgs = [], env = {}) {
  const args = ['route', '--host', '127.0.0.1', '--port', '0',
                ...backendUrls.flatMap((url) => ['--backend', url]), ...extraArgs];
  const proc = spawn(surgeBinary, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  proc.stderr.on('data', (data) => { stderr += data; });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line after 20 s; stderr:\n${stderr}`)), 20_000);
    proc.on('exit', (code) => reject(new Error(`surge route exited with ${code}; stderr:\n${stderr}`)));
    createInterface({ input: proc.stdout }).on('line', (line) => {
      const match = line.match(/ready on (http:\/\/[^ ]+)/);
      if (!match) return;
      clearTimeout(timer);
      resolve({ proc, baseUrl: match[1], stderr: () => stderr });
    });
  });
}

// The value of one unlabelled sample in Prometheus text, or NaN.
export async function metricValue(baseUrl, name) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.split(' ')[1]);
}

// Generation requests (/v1/completions, /v1/chat/completions) the engine itself answered.
export async function engineGenerationRequests(engineUrl) {
  const text = await (await fetch(`${engineUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('surge_http_requests_total{') && l.includes('completions"'))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

// The sum of every sample whose line starts with `prefix` (a name and some of its labels).
export async function metricSum(baseUrl, prefix) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith(prefix)).reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

// Waits until `predicate()` holds (polled every 20 ms) or `timeoutMs` passes; its last value.
export async function waitFor(predicate, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

// Reads an SSE response to its end: the data payloads in order and whether it ended cleanly.
export async function readSse(response, onFirst = () => {}) {
  const decoder = new TextDecoder();
  let buffer = '';
  const events = [];
  let first = true;
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      if (data === '') continue;
      events.push(data);
      if (first) { first = false; onFirst(); }
    }
  }
  return events;
}
