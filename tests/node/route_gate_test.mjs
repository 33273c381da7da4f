// surge route's gate, end to end: API keys (401), per-key rate limits (429 with Retry-After
// and x-ratelimit-* headers), X-Priority validation (400), and priority tiers — realtime
// borrows the batch pool under a scripted overload of its own pool and gives it back after.
// model "auto" routes by complexity between two pools (a YAML config).
// The overloaded pool is a scripted backend (fault injection: answers after a fixed delay);
// the others are real `surge serve` workers the router spawns.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRouter, waitFor } from './route_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const cleanups = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

function stopOnExit(proc) {
  cleanups.push(() => new Promise((r) => { proc.once('exit', r); proc.kill('SIGTERM'); }));
}

const completion = (extra = {}) => JSON.stringify({ prompt: 'Once upon a time', max_tokens: 4, ...extra });

async function post(baseUrl, headers = {}, body = completion()) {
  const response = await fetch(`${baseUrl}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { response, json: await response.json() };
}

const spawnOne = ['--spawn', '1', '--model', 'models/stories260K', '--', '--threads', '1'];

test('keys: 401 without or with a wrong key, limits give 429 with Retry-After and x-ratelimit-*', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'route-gate-'));
  const keys = join(dir, 'keys.json');
  writeFileSync(keys, JSON.stringify([
    { key: 'sk-limited', tenant: 'acme', requests_per_minute: 2 },
    { key: 'sk-open', tenant: 'beta' }]));
  const r = await startRouter(SURGE, [], ['--api-keys', keys, ...spawnOne]);
  stopOnExit(r.proc);
  for (const headers of [{}, { authorization: 'Bearer sk-wrong' }, { authorization: 'Basic sk-limited' }]) {
    const { response, json } = await post(r.baseUrl, headers);
    assert.equal(response.status, 401);
    assert.equal(json.error.code, 'invalid_api_key');
    assert.ok(!JSON.stringify(json).includes('sk-wrong'), 'the key is never echoed');
  }
  const limited = { authorization: 'Bearer sk-limited' };
  for (const remaining of ['1', '0']) {
    const { response, json } = await post(r.baseUrl, limited);
    assert.equal(response.status, 200, JSON.stringify(json));
    assert.equal(response.headers.get('x-ratelimit-limit-requests'), '2');
    assert.equal(response.headers.get('x-ratelimit-remaining-requests'), remaining);
    assert.match(response.headers.get('x-ratelimit-reset-requests'), /^[0-9.]+(ms|s|m[0-9.]+s)$/);
  }
  const { response, json } = await post(r.baseUrl, limited);
  assert.equal(response.status, 429);
  assert.equal(json.error.code, 'rate_limit_exceeded');
  assert.ok(Number(response.headers.get('retry-after')) >= 1);
  assert.equal(response.headers.get('x-ratelimit-remaining-requests'), '0');
  // Another key is not limited by acme's bucket, and carries no limit headers.
  const other = await post(r.baseUrl, { authorization: 'Bearer sk-open' });
  assert.equal(other.response.status, 200);
  assert.equal(other.response.headers.get('x-ratelimit-limit-requests'), null);
});

test('a bad X-Priority or priority is a 400 naming it', async () => {
  const r = await startRouter(SURGE, [], spawnOne);
  stopOnExit(r.proc);
  const header = await post(r.baseUrl, { 'x-priority': 'urgent' });
  assert.equal(header.response.status, 400);
  assert.match(header.json.error.message, /X-Priority/);
  const body = await post(r.baseUrl, {}, completion({ priority: 'gold' }));
  assert.equal(body.response.status, 400);
  assert.equal(body.json.error.param, 'priority');
});

// A backend that answers every completion after `delayMs`: the realtime pool, overloaded.
async function slowBackend(delayMs) {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      if (req.url === '/health') return res.end('{"status":"ok"}');
      if (req.url === '/metrics') return res.end('');
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ object: 'text_completion', choices: [{ index: 0, text: 'slow', finish_reason: 'length' }],
                                 usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 } }));
      }, delayMs);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => { server.closeAllConnections(); server.close(r); }));
  return `http://127.0.0.1:${server.address().port}`;
}

async function metric(baseUrl, sample) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? NaN : Number(line.split(' ')[1]);
}

test('tiers: realtime borrows the batch pool under overload and gives it back after', async () => {
  const slowUrl = await slowBackend(300);
  const dir = mkdtempSync(join(tmpdir(), 'route-tiers-'));
  const config = join(dir, 'route.json');
  writeFileSync(config, JSON.stringify({
    backends: [{ url: slowUrl, pool: 'rt' }],
    pools: { rt: {}, bulk: { spawn: 1 } },
    workers: { model: 'models/stories260K', engine_args: ['--threads', '1'] },
    policy_options: { backend_capacity: 1 },  // one slot per backend: the slow pool fills at once
    tiers: { pools: { realtime: 'rt', normal: 'bulk', batch: 'bulk' },
             threshold_ms: { realtime: 400 }, min_samples: 4, window_ms: 1500, hold_ms: 500,
             eval_interval_ms: 1 } }));
  const r = await startRouter(SURGE, [], ['--config', config]);
  stopOnExit(r.proc);
  const realtime = { 'x-priority': 'realtime' };
  const burst = async () => {
    const results = await Promise.all(Array.from({ length: 4 }, () => post(r.baseUrl, realtime)));
    results.forEach(({ response }) => assert.equal(response.status, 200));
    return results.map(({ response }) => response.headers.get('x-surge-backend'));
  };
  // Before any TTFT evidence realtime queues on its own one-slot pool: all on the slow backend.
  assert.deepEqual(await burst(), Array(4).fill(slowUrl));
  assert.equal(await metric(r.baseUrl, 'surge_router_tier_borrowing{tier="realtime"}'), 1,
               'queueing behind 300 ms answers put realtime P95 TTFT over 400 ms');
  const borrowed = await burst();
  assert.ok(borrowed.some((url) => url !== slowUrl), `borrowing sends some to the bulk pool: ${borrowed}`);
  assert.equal(await metric(r.baseUrl, 'surge_router_pool_needs_capacity{pool="rt"}'), 1);
  // Load gone: once the window is empty for the hold time, realtime gives the capacity back.
  const gaveBack = await waitFor(async () =>
    await metric(r.baseUrl, 'surge_router_tier_borrowing{tier="realtime"}') === 0, 6000);
  assert.ok(gaveBack, 'realtime gave the bulk pool back');
  assert.equal(await metric(r.baseUrl, 'surge_router_tier_give_backs_total{tier="realtime"}'), 1);
  assert.equal(await metric(r.baseUrl, 'surge_router_pool_needs_capacity{pool="rt"}'), 0);
  // Batch never uses the realtime pool.
  const batch = await post(r.baseUrl, { 'x-priority': 'batch' });
  assert.notEqual(batch.response.headers.get('x-surge-backend'), slowUrl);
});

test('model "auto" routes by complexity: simple to the small pool, code or long output to the large', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'route-auto-'));
  const config = join(dir, 'route.yaml');
  writeFileSync(config, [
    'pools:', '  small: {spawn: 1}', '  large: {spawn: 1}',
    'workers: {model: models/stories260K, engine_args: ["--threads", "1"]}',
    'aliases:', '  auto: {small: small, large: large, max_tokens_over: 16, code: true}', ''].join('\n'));
  const r = await startRouter(SURGE, [], ['--config', config]);
  stopOnExit(r.proc);
  const ask = async (body) => {
    const { response, json } = await post(r.baseUrl, {}, JSON.stringify({ model: 'auto', ...body }));
    assert.equal(response.status, 200, JSON.stringify(json));
    assert.equal(json.model, 'stories260K', 'the engine answers with its own model name');
    return response.headers.get('x-surge-backend');
  };
  const small = await ask({ prompt: 'Once upon a time', max_tokens: 4 });
  assert.equal(await ask({ prompt: 'Tell me a story', max_tokens: 8 }), small);
  const large = await ask({ prompt: 'Once upon a time', max_tokens: 32 });
  assert.notEqual(large, small);
  assert.equal(await ask({ prompt: 'Fix this:\n```\nint x = y;\n```', max_tokens: 4 }), large);
  // Outside bytes (issue 31): an aliased body nested 100,000 deep (its re-encoding once
  // recursed that deep) and one holding invalid UTF-8 are answered, not fatal to the router.
  for (const body of [`{"model": "auto", "max_tokens": 2, "prompt": ${'['.repeat(100000)}${']'.repeat(100000)}}`,
                      Buffer.concat([Buffer.from('{"model": "auto", "max_tokens": 2, "prompt": "a'), Buffer.from([0xff]),
                                     Buffer.from('"}')])]) {
    const response = await fetch(`${r.baseUrl}/v1/completions`,
                                 { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.ok(response.status >= 400 && response.status < 600, `status ${response.status}`);
  }
  const text = await (await fetch(`${r.baseUrl}/metrics`)).text();
  assert.match(text, /surge_router_alias_routes_total\{alias="auto",pool="large",reason="code"\} 1/);
  assert.match(text, /surge_router_alias_routes_total\{alias="auto",pool="small",reason="simple"\} 2/);
});

test('bad flags and config exit 2 naming them', async () => {
  const { spawnSync } = await import('node:child_process');
  const run = (...args) => spawnSync(SURGE, ['route', ...args], { encoding: 'utf8', timeout: 10_000 });
  const dir = mkdtempSync(join(tmpdir(), 'route-bad-'));
  const badTiers = join(dir, 'tiers.json');
  writeFileSync(badTiers, JSON.stringify({ backends: [{ url: 'http://127.0.0.1:1' }], tiers: { weights: { gold: 3 } } }));
  const badKeys = join(dir, 'keys.json');
  writeFileSync(badKeys, JSON.stringify([{ key: 'sk-1', tokens_per_min: 5 }]));
  writeFileSync(join(dir, 'alias.json'), JSON.stringify({ backends: [{ url: 'http://127.0.0.1:1' }],
                                                          aliases: { auto: { small: 'default', large: 'big' } } }));
  const cases = [
    [['--tiers', 'a,b'], /--tiers/],
    [['--backend', 'http://127.0.0.1:1', '--tiers', 'P1,P2,P3'], /pool 'P1'/],
    [['--config', badTiers], /tiers\.weights\.gold/],
    [['--backend', 'http://127.0.0.1:1', '--api-keys', badKeys], /tokens_per_min/],
    [['--spawn', '1'], /model/],
    [['--pool', 'x:spawn=many', '--model', 'm'], /spawn/],
    [['--config', join(dir, 'alias.json')], /alias 'auto' routes to pool 'big'/],
  ];
  for (const [args, message] of cases) {
    const result = run(...args);
    assert.equal(result.status, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, message, args.join(' '));
  }
});
