// surge route in front of a hostile "engine" (issue 31): its /kv_config answers {"hash": 1}
// and then a block_size of 1e300 before a sane one, its /kv_events stream sends a batch with
// seq 1e300, its /metrics NaN and its /v1/models a list nested 100k deep. Each answer is
// refused, counted in surge_router_backend_bad_answers_total{answer=...} and ignored; the
// router (cache-aware, precise) keeps serving, from this engine too.
// Run: SURGE=path/to/surge node --test tests/node/route_hostile_engine_test.mjs
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, test } from 'node:test';

import { startRouter, waitFor } from './route_util.mjs';
import { CHAT_TEMPLATE, MODEL_DIR } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const GOOD_CONFIG = '{"prefix_caching":true,"block_size":16,"hash":"splitmix64-chain-v1",' +
  '"hash_seed":"0000000000000000","num_total_blocks":64,"events":"/kv_events"}';
const CONFIGS = ['{"hash": 1}', GOOD_CONFIG.replace('"block_size":16', '"block_size":1e300'), GOOD_CONFIG];
const cleanups = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

// The engine stand-in; counts what it was asked.
async function startHostileEngine() {
  const asked = { kvConfig: 0, kvEvents: 0, completions: 0 };
  const server = createServer((req, res) => {
    const json = (code, body) => { res.writeHead(code, { 'Content-Type': 'application/json' }); res.end(body); };
    if (req.url === '/health') return json(200, '{}');
    if (req.url === '/metrics') { res.writeHead(200); return res.end('surge_num_requests_running NaN\n'); }
    if (req.url === '/v1/models') return json(200, `{"object":"list","data":${'['.repeat(100000)}${']'.repeat(100000)}}`);
    if (req.url === '/kv_config') return json(200, CONFIGS[Math.min(asked.kvConfig++, CONFIGS.length - 1)]);
    if (req.url === '/kv_events') {
      ++asked.kvEvents;
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('data: {"seq":0,"snapshot":true,"events":[{"type":"cleared","block_hashes":[]}]}\n\n');
      return res.end('data: {"seq":1e300,"snapshot":false,"events":[]}\n\n');
    }
    req.resume();
    req.on('end', () => {
      ++asked.completions;
      json(200, '{"id":"c","object":"text_completion","choices":[{"index":0,"text":"ok","finish_reason":"stop"}],' +
                '"usage":{"prompt_tokens":9223372036854775807,"completion_tokens":1,"total_tokens":-1}}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
  return { url: `http://127.0.0.1:${server.address().port}`, asked };
}

async function badAnswers(baseUrl, answer) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('surge_router_backend_bad_answers_total{') &&
                                             l.includes(`answer="${answer}"`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('every unusable engine answer is refused, counted and ignored; the router keeps serving', async () => {
  const engine = await startHostileEngine();
  const router = await startRouter(SURGE, [engine.url], [
    '--policy', 'cache-aware', '--cache-mode', 'precise', '--tokenizer', MODEL_DIR, '--chat-template', CHAT_TEMPLATE,
    '--health-interval-ms', '100']);
  cleanups.push(() => new Promise((r) => { router.proc.once('exit', r); router.proc.kill('SIGTERM'); }));
  const complete = async () => {
    const response = await fetch(`${router.baseUrl}/v1/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'Once upon a time there was a little girl named Lily who liked to play.', max_tokens: 1 }) });
    assert.equal(response.status, 200, await response.text());
  };
  // Each decision starts a /kv_config fetch (retried 2 s after a refusal) until a sane one.
  assert.ok(await waitFor(async () => { await complete(); return engine.asked.kvEvents > 0; }, 15_000),
            `the sane /kv_config was never reached: ${JSON.stringify(engine.asked)}\n${router.stderr()}`);
  assert.ok(await waitFor(async () => await badAnswers(router.baseUrl, 'kv_events') >= 1, 10_000), router.stderr());
  assert.ok(await waitFor(async () => await badAnswers(router.baseUrl, 'metrics') >= 1, 10_000), router.stderr());
  assert.equal(await badAnswers(router.baseUrl, 'kv_config'), 2);  // {"hash": 1} and the 1e300 block_size
  const models = await fetch(`${router.baseUrl}/v1/models`);
  assert.equal(models.status, 503);  // the only engine's list was refused: no backend answered
  assert.equal(await badAnswers(router.baseUrl, 'models'), 1);
  await complete();  // and it still serves
  assert.match(router.stderr(), /block_size must be an integer/);
  assert.match(router.stderr(), /surge_num_requests_running is nan/);
});
