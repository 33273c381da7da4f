// Request timeouts and the §7.1 metrics through real `surge serve` and `surge route`
// processes on the bundled model: a short `timeout` on a long generation is a fast 504
// (timeout_error) with every KV block back and the counters moved; streamed, an SSE error
// event then [DONE]; invalid values are 400 naming `timeout`; --request-timeout is the
// default and the cap; the router passes the 504 on without retrying. Both /metrics pass
// `promtool check metrics`, and every family they expose is in docs/METRICS.md.
// Run: node --test tests/node/metrics_timeout_test.mjs (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { readSse, startRouter } from './route_util.mjs';
import { postJson, startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
// Long: 8 choices of 500 tokens each (the context is 512).
const LONG = { prompt: 'Once upon a time', max_tokens: 500, n: 8, ignore_eos: true };

let engine;
let capped;  // --request-timeout 0.05
let router;
let fullSeconds;  // LONG without a timeout

async function metrics(baseUrl) {
  return (await fetch(`${baseUrl}/metrics`)).text();
}

// The value of one sample ("name" or "name{labels}"), 0 when absent (a counter not yet born).
function sample(text, name) {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

async function timed(promise) {
  const start = performance.now();
  const result = await promise;
  return { ...result, seconds: (performance.now() - start) / 1000 };
}

before(async () => {
  [engine, capped] = await Promise.all([startServer(SURGE, ['--threads', '1']),
                                        startServer(SURGE, ['--threads', '1', '--request-timeout', '0.05'])]);
  router = await startRouter(SURGE, [engine.baseUrl], ['--policy', 'round-robin', '--retries', '2']);
  const full = await timed(postJson(engine.baseUrl, '/v1/completions', LONG));
  assert.equal(full.status, 200);
  fullSeconds = full.seconds;
  console.log(`# the long request takes ${fullSeconds.toFixed(3)} s without a timeout`);
  assert.ok(fullSeconds > 0.1, `the long request must outlast the timeouts below (${fullSeconds} s)`);
});

after(async () => {
  if (router) await stopServer(router.proc);
  await Promise.all([engine, capped].filter((s) => s).map((s) => stopServer(s.proc)));
});

test('a short timeout on a long generation: a fast 504, KV freed, counted', async () => {
  const before = await metrics(engine.baseUrl);
  const timeout = Math.min(0.05, fullSeconds / 5);
  const reply = await timed(postJson(engine.baseUrl, '/v1/completions', { ...LONG, timeout }));
  assert.equal(reply.status, 504);
  assert.equal(reply.body.error.type, 'timeout_error');
  assert.match(reply.body.error.message, /timeout of [0-9.e-]+ s passed/);
  assert.ok(reply.seconds >= timeout * 0.9, `answered after ${reply.seconds} s, before its timeout`);
  assert.ok(reply.seconds < fullSeconds / 2, `answered after ${reply.seconds} s, not at once (full: ${fullSeconds} s)`);
  const text = await metrics(engine.baseUrl);
  assert.equal(sample(text, 'surge_kv_cache_free_blocks'), sample(text, 'surge_kv_cache_total_blocks'));
  assert.equal(sample(text, 'surge_kv_cache_used_bytes'), 0);
  assert.ok(sample(text, 'surge_kv_cache_total_bytes') > 0);
  assert.equal(sample(text, 'surge_request_timeouts_total'), sample(before, 'surge_request_timeouts_total') + 1);
  const kind = 'surge_request_errors_total{kind="timeout"}';
  assert.equal(sample(text, kind), sample(before, kind) + 1);
  const code = 'surge_http_requests_total{endpoint="/v1/completions",code="504"}';
  assert.equal(sample(text, code), sample(before, code) + 1);
});

test('streamed: an SSE timeout_error event, then [DONE]', async () => {
  const before = await metrics(engine.baseUrl);
  const response = await fetch(`${engine.baseUrl}/v1/chat/completions`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'Tell a story.' }], max_tokens: 450, n: 8,
                           ignore_eos: true, stream: true, timeout: Math.min(0.05, fullSeconds / 5) }),
  });
  assert.equal(response.status, 200);
  const events = await readSse(response);
  assert.equal(events.at(-1), '[DONE]');
  const error = JSON.parse(events.at(-2)).error;
  assert.equal(error.type, 'timeout_error', events.at(-2));
  const text = await metrics(engine.baseUrl);
  assert.equal(sample(text, 'surge_request_timeouts_total'), sample(before, 'surge_request_timeouts_total') + 1);
  assert.equal(sample(text, 'surge_kv_cache_free_blocks'), sample(text, 'surge_kv_cache_total_blocks'));
});

test('invalid timeouts are 400 naming the field, on every generation endpoint', async () => {
  const chat = { messages: [{ role: 'user', content: 'x' }], max_tokens: 2 };
  for (const [path, body] of [['/v1/completions', { prompt: 'x', max_tokens: 2 }], ['/v1/chat/completions', chat],
                              ['/v1/responses', { input: 'x', max_output_tokens: 2 }]]) {
    const valid = await postJson(engine.baseUrl, path, { ...body, timeout: 30 });
    assert.equal(valid.status, 200, `${path}: ${JSON.stringify(valid.body)}`);
    for (const timeout of [0, -1, '5', true, 1e9]) {
      const reply = await postJson(engine.baseUrl, path, { ...body, timeout });
      assert.equal(reply.status, 400, `${path} timeout ${timeout}: ${JSON.stringify(reply.body)}`);
      assert.equal(reply.body.error.param, 'timeout', `${path} timeout ${timeout}`);
    }
  }
});

test('--request-timeout: the default deadline and the most a body may ask', async () => {
  const reply = await timed(postJson(capped.baseUrl, '/v1/completions', LONG));
  assert.equal(reply.status, 504);
  assert.ok(reply.seconds < fullSeconds / 2, `${reply.seconds} s`);
  const over = await postJson(capped.baseUrl, '/v1/completions', { ...LONG, timeout: 5 });
  assert.equal(over.status, 400);
  assert.match(over.body.error.message, /--request-timeout of 0.05 s/);
  const short = await postJson(capped.baseUrl, '/v1/completions', { prompt: 'x', max_tokens: 2, timeout: 0.04 });
  assert.equal(short.status, 200);
  const bad = spawnSync(SURGE, ['serve', 'models/stories260K', '--request-timeout', '-1'], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /--request-timeout/);
  const help = spawnSync(SURGE, ['serve', '--help'], { encoding: 'utf8', timeout: 10_000 });
  assert.match(help.stdout, /--request-timeout/);
});

test('the router forwards timeout and passes the 504 on, not retried; its metrics move', async () => {
  const before = await metrics(router.baseUrl);
  const engineBefore = await metrics(engine.baseUrl);
  const reply = await postJson(router.baseUrl, '/v1/completions', { ...LONG, timeout: Math.min(0.05, fullSeconds / 5) });
  assert.equal(reply.status, 504);
  assert.equal(reply.body.error.type, 'timeout_error');
  const text = await metrics(router.baseUrl);
  const kind = 'surge_router_errors_total{kind="timeout"}';
  assert.equal(sample(text, kind), sample(before, kind) + 1);
  assert.equal(sample(text, 'surge_router_retries_total{pool="default"}'),
               sample(before, 'surge_router_retries_total{pool="default"}'));
  const engineText = await metrics(engine.baseUrl);
  assert.equal(sample(engineText, 'surge_request_timeouts_total'), sample(engineBefore, 'surge_request_timeouts_total') + 1);
  const count = 'surge_router_request_duration_seconds_count{pool="default"}';
  assert.equal(sample(text, count), sample(before, count) + 1);
  assert.ok(sample(text, 'surge_router_time_to_first_byte_seconds_count{pool="default"}') >= 1);
  assert.ok(sample(text, 'surge_http_active_connections') >= 1);
});

test('both /metrics pass promtool, and docs/METRICS.md lists every family', async () => {
  const docs = readFileSync('docs/METRICS.md', 'utf8');
  for (const baseUrl of [engine.baseUrl, router.baseUrl]) {
    const text = await metrics(baseUrl);
    const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    assert.equal(promtool.error, undefined, 'promtool is installed');
    assert.equal(promtool.status, 0, `promtool check metrics (${baseUrl}): ${promtool.stdout}${promtool.stderr}`);
    const families = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
    assert.ok(families.length > 20);
    for (const family of families) assert.ok(docs.includes(`\`${family}\``), `docs/METRICS.md lacks ${family}`);
  }
  const engineText = await metrics(engine.baseUrl);
  assert.ok(sample(engineText, 'surge_engine_step_tokens_count') > 0);
  assert.ok(sample(engineText, 'surge_engine_step_sequences_sum') >= sample(engineText, 'surge_engine_step_sequences_count'));
  assert.ok(sample(engineText, 'surge_inter_token_latency_seconds_count') > 0);
});
