// Failover through `surge route` with real `surge serve` engines on the bundled model:
// kill -9 one of three under concurrent load (no non-streaming request fails, streams
// that had started end with a clean SSE error event); a hung backend (accepts, never
// answers) does not stall the others; a backend whose /health says 503 (draining) gets no
// new requests; a client that disconnects cancels the engine's request at once.
// Run: node --test tests/node/route_failover_test.mjs (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, test } from 'node:test';

import { metricValue, readSse, startRouter, waitFor } from './route_util.mjs';
import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';
const FAST_HEALTH = ['--health-interval-ms', '100', '--health-timeout-ms', '300', '--retry-backoff-ms', '5'];

const cleanups = [];
after(async () => { for (const cleanup of cleanups.reverse()) await cleanup(); });

// SIGTERM unless it already died (the kill -9 victim); the exit code.
async function stop(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
  return stopServer(proc);
}

async function engine(extra = []) {
  const e = await startServer(SURGE, ['--threads', '1', ...extra]);
  cleanups.push(() => stop(e.proc));
  return e;
}

async function router(urls, extra = []) {
  const r = await startRouter(SURGE, urls, [...FAST_HEALTH, ...extra]);
  cleanups.push(async () => assert.equal(await stop(r.proc), 0, 'surge route exits 0 on SIGTERM'));
  return r;
}

function post(baseUrl, body, signal) {
  return fetch(`${baseUrl}/v1/completions`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ model: MODEL, ...body }), signal,
  });
}

// A local HTTP server standing in for an engine: /health answers `healthStatus`, and it
// counts the generation requests it gets.
async function fakeEngine(healthStatus) {
  const state = { numGenerations: 0 };
  const server = http.createServer((req, res) => {
    if (req.url === '/health') { res.writeHead(healthStatus); res.end('{}'); return; }
    if (req.url === '/metrics') { res.writeHead(200); res.end(''); return; }
    state.numGenerations += 1;
    res.writeHead(500); res.end('{"error":{"message":"should not be called"}}');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  state.url = `http://127.0.0.1:${server.address().port}`;
  return state;
}

test('kill -9 one of three engines under load: non-streams all succeed, started streams end cleanly', async () => {
  const engines = await Promise.all([0, 1, 2].map(() => engine()));
  const r = await router(engines.map((e) => e.baseUrl), ['--policy', 'round-robin', '--retries', '3']);
  const victim = engines[0];
  let killed = false;
  let killVictim;
  const victimStreamStarted = new Promise((resolve) => { killVictim = resolve; });

  // Streams long enough to be running when the victim dies (ignore_eos: no early stop).
  const streams = Array.from({ length: 6 }, async () => {
    const response = await post(r.baseUrl, { prompt: 'Once upon a time', max_tokens: 400, ignore_eos: true, stream: true });
    assert.equal(response.status, 200);
    const backend = response.headers.get('x-surge-backend');
    const events = await readSse(response, () => { if (backend === victim.baseUrl) killVictim(); });
    return { backend, events };
  });
  await victimStreamStarted;
  victim.proc.kill('SIGKILL');
  killed = true;
  // Non-streaming requests while it dies and after: every one must succeed.
  const wholes = await Promise.all(Array.from({ length: 30 }, (_, i) =>
    post(r.baseUrl, { prompt: `Story ${i}:`, max_tokens: 24 }).then(async (res) => ({ status: res.status, body: await res.json() }))));
  for (const whole of wholes) {
    assert.equal(whole.status, 200, JSON.stringify(whole.body));
    assert.equal(whole.body.object, 'text_completion');
  }
  let numBroken = 0;
  for (const { backend, events } of await Promise.all(streams)) {
    assert.equal(events.at(-1), '[DONE]', `a stream from ${backend} did not end with [DONE]`);
    if (backend === victim.baseUrl) {
      const error = JSON.parse(events.at(-2));
      assert.equal(typeof error.error.message, 'string');
      numBroken += 1;
    } else {
      assert.ok(!events.some((e) => e.includes('"error"')), `a stream from a live engine ${backend} has an error`);
    }
  }
  assert.ok(killed && numBroken >= 1, 'at least one stream was on the killed engine');
  // The router stops sending to it: its health gauge drops.
  const metricsHaveItDown = await waitFor(async () => {
    const text = await (await fetch(`${r.baseUrl}/metrics`)).text();
    return text.includes(`surge_router_backend_healthy{backend="${victim.baseUrl}"} 0`);
  });
  assert.ok(metricsHaveItDown, 'the killed engine is marked unhealthy');
});

test('a hung backend does not stall requests to the others', async () => {
  const live = await engine();
  const hung = net.createServer(() => {});  // accepts, never answers
  const sockets = [];
  hung.on('connection', (s) => sockets.push(s));
  await new Promise((r) => hung.listen(0, '127.0.0.1', r));
  cleanups.push(() => { sockets.forEach((s) => s.destroy()); return new Promise((r) => hung.close(r)); });
  const hungUrl = `http://127.0.0.1:${hung.address().port}`;
  const r = await router([hungUrl, live.baseUrl], ['--policy', 'round-robin', '--first-byte-timeout-ms', '500']);
  const start = Date.now();
  const results = await Promise.all(Array.from({ length: 12 }, () =>
    post(r.baseUrl, { prompt: 'Hello', max_tokens: 8 }).then(async (res) => ({
      status: res.status, backend: res.headers.get('x-surge-backend'), ms: Date.now() - start, body: await res.text() }))));
  for (const result of results) {
    assert.equal(result.status, 200, result.body);
    assert.equal(result.backend, live.baseUrl);
    // At worst one first-byte timeout, then the live engine: never stuck behind the hung one.
    assert.ok(result.ms < 5000, `took ${result.ms} ms`);
  }
  // Once its health checks time out it gets nothing at all: requests are fast again.
  await waitFor(async () => (await (await fetch(`${r.baseUrl}/metrics`)).text())
    .includes(`surge_router_backend_healthy{backend="${hungUrl}"} 0`));
  const t0 = Date.now();
  const res = await post(r.baseUrl, { prompt: 'Hello', max_tokens: 8 });
  assert.equal(res.status, 200);
  await res.text();
  assert.ok(Date.now() - t0 < 400, `a request took ${Date.now() - t0} ms with the hung backend out`);
});

test('a backend whose /health answers 503 (draining) gets no new requests', async () => {
  const live = await engine();
  const draining = await fakeEngine(503);
  const r = await router([draining.url, live.baseUrl], ['--policy', 'round-robin']);
  for (let i = 0; i < 8; ++i) {
    const res = await post(r.baseUrl, { prompt: 'Hi', max_tokens: 4 });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-surge-backend'), live.baseUrl);
    await res.json();
  }
  assert.equal(draining.numGenerations, 0);
});

test('a client disconnect cancels the engine request at once', async () => {
  const e = await engine();
  const r = await router([e.baseUrl]);
  const tokensBefore = await metricValue(e.baseUrl, 'surge_generation_tokens_total');
  const abort = new AbortController();
  const response = await post(r.baseUrl, { prompt: 'Once upon a time', max_tokens: 480, ignore_eos: true, stream: true },
                              abort.signal);
  const reader = response.body.getReader();
  await reader.read();  // the stream is running
  assert.equal(await metricValue(e.baseUrl, 'surge_num_requests_running'), 1);
  abort.abort();
  const stopped = await waitFor(async () => (await metricValue(e.baseUrl, 'surge_num_requests_running')) === 0, 3000);
  assert.ok(stopped, 'the engine still runs the request after the client left');
  // It stopped early: far fewer than the 480 tokens asked for were generated.
  const generated = (await metricValue(e.baseUrl, 'surge_generation_tokens_total')) - tokensBefore;
  assert.ok(generated < 480, `the engine generated ${generated} tokens`);
  const metrics = await (await fetch(`${r.baseUrl}/metrics`)).text();
  assert.match(metrics, /code="499"\} 1/);
});

test('SIGTERM lets a stream in flight finish, then the router exits 0', async () => {
  const e = await engine();
  const r = await startRouter(SURGE, [e.baseUrl], FAST_HEALTH);
  const response = await post(r.baseUrl, { prompt: 'Once upon a time', max_tokens: 200, ignore_eos: true, stream: true,
                                           stream_options: { include_usage: true } });
  const exited = new Promise((resolve) => r.proc.on('exit', (code) => resolve(code)));
  const events = await readSse(response, () => r.proc.kill('SIGTERM'));
  assert.equal(events.at(-1), '[DONE]');
  assert.ok(!events.some((data) => data.includes('"error"')), 'the stream was cut by the shutdown');
  assert.equal(JSON.parse(events.at(-2)).usage.completion_tokens, 200);  // all of it
  assert.equal(await exited, 0);
});
