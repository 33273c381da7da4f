// The official `openai` client through `surge route` in front of three `surge serve`
// engines on the bundled model: completions and chat, streamed and not, at temperature 0,
// equal to the same requests sent to one engine directly; /v1/models is the union; the
// router's own /health and /metrics. Run: node --test tests/node/route_openai_test.mjs
// (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import OpenAI from 'openai';

import { startRouter } from './route_util.mjs';
import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';

let engines = [];
let router;
let viaRouter;
let direct;

before(async () => {
  engines = await Promise.all([0, 1, 2].map(() => startServer(SURGE, ['--threads', '1'])));
  router = await startRouter(SURGE, engines.map((e) => e.baseUrl), ['--policy', 'round-robin']);
  viaRouter = new OpenAI({ baseURL: `${router.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 30_000 });
  direct = new OpenAI({ baseURL: `${engines[0].baseUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 30_000 });
});

after(async () => {
  if (router) assert.equal(await stopServer(router.proc), 0, 'surge route exits 0 on SIGTERM');
  await Promise.all(engines.map((e) => stopServer(e.proc)));
});


async function collect(stream, pick) {
  let text = '';
  for await (const chunk of stream) if (chunk.choices.length > 0) text += pick(chunk.choices[0]) ?? '';
  return text;
}

test('completions through the router equal the engine\'s, whole and streamed', async () => {
  const seen = new Set();
  for (const prompt of ['Once upon a time', 'The little dog', 'Lily and Ben', 'One day']) {
    const params = { model: MODEL, prompt, max_tokens: 48, temperature: 0 };
    const expected = (await direct.completions.create(params)).choices[0].text;
    // Three times each: round-robin sends them to all three engines.
    for (let i = 0; i < 3; ++i) {
      const { data, response } = await viaRouter.completions.create(params).withResponse();
      assert.equal(data.choices[0].text, expected);
      seen.add(response.headers.get('x-surge-backend'));
    }
    const stream = await viaRouter.completions.create({ ...params, stream: true });
    assert.equal(await collect(stream, (c) => c.text), expected);
  }
  assert.deepEqual([...seen].sort(), engines.map((e) => e.baseUrl).sort());
});

test('chat through the router equals the engine\'s, whole and streamed', async () => {
  const messages = [{ role: 'system', content: 'You tell stories.' }, { role: 'user', content: 'A story about a cat.' }];
  const params = { model: MODEL, messages, max_completion_tokens: 40, temperature: 0 };
  const expected = await direct.chat.completions.create(params);
  for (let i = 0; i < 3; ++i) {
    const whole = await viaRouter.chat.completions.create(params);
    assert.equal(whole.choices[0].message.content, expected.choices[0].message.content);
    // (cached_tokens differs: the engine that answered may hold the prompt in its cache.)
    assert.equal(whole.usage.prompt_tokens, expected.usage.prompt_tokens);
    assert.equal(whole.usage.completion_tokens, expected.usage.completion_tokens);
    const stream = await viaRouter.chat.completions.create({ ...params, stream: true });
    assert.equal(await collect(stream, (c) => c.delta.content), expected.choices[0].message.content);
  }
});

test('engine errors pass through with the OpenAI shape', async () => {
  await assert.rejects(viaRouter.completions.create({ model: MODEL, prompt: 'x', max_tokens: -3 }),
                       (error) => error.status === 400 && typeof error.message === 'string');
});

test('models, tokenize, health and metrics', async () => {
  const models = [];
  for await (const model of viaRouter.models.list()) models.push(model.id);
  assert.deepEqual(models, [MODEL]);  // three engines, one model: deduplicated
  const tokenize = await fetch(`${router.baseUrl}/tokenize`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: 'Once' }),
  });
  assert.equal(tokenize.status, 200);
  assert.ok((await tokenize.json()).count > 0);
  assert.equal((await fetch(`${router.baseUrl}/health`)).status, 200);
  const metrics = await (await fetch(`${router.baseUrl}/metrics`)).text();
  for (const engine of engines) {
    assert.match(metrics, new RegExp(`surge_router_requests_total\\{backend="${engine.baseUrl}",pool="default",policy="round-robin",code="200"\\} [1-9]`));
    assert.match(metrics, new RegExp(`surge_router_backend_healthy\\{backend="${engine.baseUrl}"\\} 1`));
  }
  assert.match(metrics, /surge_router_decision_seconds_count [1-9]/);
  // promtool (Debian's prometheus package) lints the exposition when it is installed.
  const promtool = spawnSync('promtool', ['check', 'metrics'], { input: metrics, encoding: 'utf8' });
  if (promtool.error === undefined) {
    assert.equal(promtool.status, 0, `promtool check metrics: ${promtool.stdout}${promtool.stderr}`);
  } else {
    console.log('# promtool not installed: the exposition was not linted');
  }
});

test('bad flags and bad config exit 2 naming the flag or key; --help lists every flag', () => {
  const run = (...args) => spawnSync(SURGE, ['route', ...args], { encoding: 'utf8', timeout: 10_000 });
  const dir = mkdtempSync(join(tmpdir(), 'route-'));
  const badKey = join(dir, 'bad_key.json');
  writeFileSync(badKey, JSON.stringify({ backends: [{ url: 'http://127.0.0.1:1' }], health: { intervl_ms: 5 } }));
  const badPolicy = join(dir, 'bad_policy.json');
  writeFileSync(badPolicy, JSON.stringify({ backends: [{ url: 'http://127.0.0.1:1' }], pools: { default: { policy: 'magic' } } }));
  const cases = [
    [['--backend', 'http://127.0.0.1:1', '--bogus', '1'], /--bogus/],
    [['--backend', 'http://127.0.0.1:1', '--retries', '-1'], /--retries.*retry.max_retries/],
    [['--backend', 'http://127.0.0.1:1', '--port', 'x'], /--port/],
    [['--backend', 'http://127.0.0.1:1,colour=red'], /'colour'/],
    [['--backend', 'http://127.0.0.1:1,pool=nope'], /'nope'/],
    [['--backend', 'http://127.0.0.1:1', '--policy', 'magic'], /'magic'/],
    [['--backend', 'ftp://x'], /ftp/],
    [[], /no backends/],
    [['--config', badKey], /'health.intervl_ms'/],
    [['--config', badPolicy], /'magic'/],
    [['--config', join(dir, 'missing.json')], /missing.json/],
  ];
  for (const [args, message] of cases) {
    const result = run(...args);
    assert.equal(result.status, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, message, args.join(' '));
  }
  const help = run('--help');
  assert.equal(help.status, 0);
  for (const flag of ['--backend', '--pool', '--policy', '--config', '--host', '--port', '--first-byte-timeout-ms',
                      '--idle-timeout-ms', '--retries', '--health-interval-ms', '--breaker-failures',
                      '--eject-error-rate', '--session-header', '--max-body-bytes', '--drain-timeout-ms']) {
    assert.ok(help.stdout.includes(flag), `--help lacks ${flag}`);
  }
});
