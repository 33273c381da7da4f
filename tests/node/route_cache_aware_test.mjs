// Cache-aware routing against real engines: three `surge serve` engines on the bundled model
// behind `surge route --policy cache-aware`, and three fresh ones behind `--policy round-robin`,
// get the same multi-prefix workload (G groups of a long shared prefix, several KV blocks,
// plus a short distinct suffix; group-major order, so that round-robin spreads each group over
// the engines). The engines' own summed prefix-cache hit rate (their /metrics deltas) must be
// far higher under cache-aware, and the router's hit estimate (cached / prompt blocks) close to
// what the engines measured. Chat requests with the same system prompt must land on one engine.
// Run: SURGE=path/to/surge node --test tests/node/route_cache_aware_test.mjs
// ROUTE_POLICY_UNDER_TEST=round-robin puts that policy where cache-aware is: the test must fail.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { startRouter, waitFor } from './route_util.mjs';
import { CHAT_TEMPLATE, MODEL_DIR, mulberry32, startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const POLICY = process.env.ROUTE_POLICY_UNDER_TEST ?? 'cache-aware';
const MODEL = 'stories260K';
const NUM_ENGINES = 3;
const NUM_GROUPS = 8;
const PER_GROUP = 4;          // round-robin over 3 engines: one of 4 repeats an engine (hit rate ~1/4)
const MIN_PREFIX_BLOCKS = 6;  // "a long shared prefix of several KV blocks"

const WORDS = ['cat', 'dog', 'sun', 'tree', 'ball', 'park', 'girl', 'boy', 'bird', 'fish', 'cake', 'red',
               'big', 'happy', 'sad', 'ran', 'saw', 'jump', 'play', 'mom', 'car', 'toy', 'box', 'hat'];
const NAMES = ['Lily', 'Ben', 'Tom', 'Mia', 'Sam', 'Anna', 'Max', 'Sue', 'Tim', 'Zoe'];

const setups = {};  // policy -> {engines, router}

// The sum of every sample of a metric family (labelled or not) in Prometheus text.
async function familySum(baseUrl, name) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

async function engineCacheCounters(engines) {
  let hits = 0;
  let queries = 0;
  for (const e of engines) {
    hits += await familySum(e.baseUrl, 'surge_prefix_cache_hits_total');
    queries += await familySum(e.baseUrl, 'surge_prefix_cache_queries_total');
  }
  return { hits, queries };
}

async function routerEstimate(router) {
  return { cached: await familySum(router.baseUrl, 'surge_router_cache_aware_cached_blocks_total'),
           prompt: await familySum(router.baseUrl, 'surge_router_cache_aware_prompt_blocks_total') };
}

async function post(baseUrl, path, body) {
  const response = await fetch(baseUrl + path, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  const json = await response.json();
  assert.equal(response.status, 200, JSON.stringify(json));
  return { json, backend: response.headers.get('x-surge-backend') };
}

// Group g's prefix starts with its own words (no block is shared across groups) and is long
// enough for MIN_PREFIX_BLOCKS full blocks; the same seed gives both policies the same text.
function prefixText(group) {
  const random = mulberry32(1000 + group);
  const word = () => WORDS[Math.floor(random() * WORDS.length)];
  const sentences = [];
  for (let i = 0; i < 14; ++i) sentences.push(`${NAMES[group % NAMES.length]} ${word()} ${word()} ${word()} ${word()}.`);
  return `Story ${group}: ${sentences.join(' ')}`;
}
const suffixText = (group, i) => ` Then ${NAMES[(group + i + 1) % NAMES.length]} ${WORDS[(i * 7 + group) % WORDS.length]} again.`;

async function startSetup(policy) {
  const engines = await Promise.all(Array.from({ length: NUM_ENGINES }, () => startServer(SURGE, ['--threads', '1'])));
  const extra = policy === 'cache-aware' ? ['--tokenizer', MODEL_DIR, '--chat-template', CHAT_TEMPLATE] : [];
  const router = await startRouter(SURGE, engines.map((e) => e.baseUrl), ['--policy', policy, ...extra]);
  return { engines, router };
}

// cache-aware learns each engine's /kv_config in the background on its first decisions and is
// least-load until then: short warm-up requests until it has decided from the cache as often as
// there are engines (each decision started all fetches; by then they have answered).
async function warmUp({ router }, policy) {
  for (let i = 0; i < NUM_ENGINES; ++i) await post(router.baseUrl, '/v1/completions', { model: MODEL, prompt: `Hi ${i}`, max_tokens: 1 });
  if (policy !== 'cache-aware') return;
  const cacheDecisions = async () => {
    const text = await (await fetch(`${router.baseUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('surge_router_policy_decisions_total{') && l.includes('decision="cache"'));
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  const ready = await waitFor(async () => {
    if ((await cacheDecisions()) >= NUM_ENGINES) return true;
    await post(router.baseUrl, '/v1/completions', { model: MODEL, prompt: 'Warm', max_tokens: 1 });
    return false;
  }, 10_000);
  assert.ok(ready, `cache-aware never decided from the cache; router stderr:\n${router.stderr()}`);
}

// The workload, group-major, one request at a time; the engines' and the router's deltas.
async function runWorkload(setup) {
  const engineBefore = await engineCacheCounters(setup.engines);
  const routerBefore = await routerEstimate(setup.router);
  const backendsOfGroup = [];
  for (let g = 0; g < NUM_GROUPS; ++g) {
    const backends = new Set();
    for (let i = 0; i < PER_GROUP; ++i) {
      const { backend } = await post(setup.router.baseUrl, '/v1/completions',
                                     { model: MODEL, prompt: prefixText(g) + suffixText(g, i), max_tokens: 1, temperature: 0 });
      backends.add(backend);
    }
    backendsOfGroup.push(backends.size);
  }
  const engineAfter = await engineCacheCounters(setup.engines);
  const routerAfter = await routerEstimate(setup.router);
  const hits = engineAfter.hits - engineBefore.hits;
  const queries = engineAfter.queries - engineBefore.queries;
  return { hits, queries, rate: hits / queries, backendsOfGroup,
           cachedBlocks: routerAfter.cached - routerBefore.cached, promptBlocks: routerAfter.prompt - routerBefore.prompt };
}

before(async () => {
  const [underTest, baseline] = await Promise.all([startSetup(POLICY), startSetup('round-robin')]);
  setups.underTest = underTest;
  setups.baseline = baseline;
  await Promise.all([warmUp(underTest, POLICY), warmUp(baseline, 'round-robin')]);
});

after(async () => {
  for (const setup of Object.values(setups)) {
    assert.equal(await stopServer(setup.router.proc), 0, 'surge route exits 0 on SIGTERM');
    await Promise.all(setup.engines.map((e) => stopServer(e.proc)));
  }
});

test('cache-aware: the engines hit their prefix caches far more often than under round-robin', async (t) => {
  const kvConfig = await (await fetch(`${setups.underTest.engines[0].baseUrl}/kv_config`)).json();
  const blockSize = kvConfig.block_size;
  for (let g = 0; g < NUM_GROUPS; ++g) {
    const { json } = await post(setups.underTest.engines[0].baseUrl, '/tokenize', { model: MODEL, prompt: prefixText(g) });
    assert.ok(json.count >= MIN_PREFIX_BLOCKS * blockSize, `group ${g}'s prefix is ${json.count} tokens, under ${MIN_PREFIX_BLOCKS} blocks of ${blockSize}`);
  }
  const ca = await runWorkload(setups.underTest);
  const rr = await runWorkload(setups.baseline);
  const estimate = ca.promptBlocks > 0 ? ca.cachedBlocks / ca.promptBlocks : NaN;
  t.diagnostic(`${NUM_GROUPS} groups x ${PER_GROUP} requests on ${NUM_ENGINES} engines, block size ${blockSize}`);
  t.diagnostic(`${POLICY}: engines' prefix-cache hit rate ${ca.rate.toFixed(3)} (${ca.hits} of ${ca.queries} prompt tokens), ` +
               `engines per group ${ca.backendsOfGroup.join(',')}`);
  t.diagnostic(`round-robin: engines' prefix-cache hit rate ${rr.rate.toFixed(3)} (${rr.hits} of ${rr.queries} prompt tokens), ` +
               `engines per group ${rr.backendsOfGroup.join(',')}`);
  t.diagnostic(`router's hit estimate ${estimate.toFixed(3)} (${ca.cachedBlocks} of ${ca.promptBlocks} blocks; ` +
               `${ca.cachedBlocks * blockSize} tokens predicted, ${ca.hits} hit)`);
  assert.equal(ca.queries, rr.queries, 'both policies saw the same prompt tokens');
  // Ideal: every request but a group's first reuses its prefix blocks: (R-1)/R of ~90% of tokens.
  assert.ok(ca.rate >= 0.6, `${POLICY}'s hit rate ${ca.rate} is under 0.6`);
  assert.ok(rr.rate <= 0.35, `round-robin's hit rate ${rr.rate} is over 0.35: the workload does not spread groups`);
  assert.ok(ca.rate >= 2 * rr.rate, `${POLICY} ${ca.rate} is not far above round-robin ${rr.rate}`);
  assert.ok(ca.backendsOfGroup.every((n) => n === 1), `${POLICY} split a group: ${ca.backendsOfGroup}`);
  // The estimate is in full blocks, the engines count tokens (the suffix's partial block never
  // hits): close, not equal. In tokens it is the same count up to the blocks the engine evicted (none here).
  assert.ok(Math.abs(estimate - ca.rate) <= 0.1, `router estimate ${estimate} vs engines' ${ca.rate}`);
  assert.ok(Math.abs(ca.cachedBlocks * blockSize - ca.hits) <= 0.05 * ca.hits,
            `router predicted ${ca.cachedBlocks * blockSize} hit tokens, the engines hit ${ca.hits}`);
});

test('cache-aware: chat requests with the same system prompt land on the same engine', async (t) => {
  const blockSize = (await (await fetch(`${setups.underTest.engines[0].baseUrl}/kv_config`)).json()).block_size;
  const system = `You tell stories. ${prefixText(NUM_GROUPS + 1)}`;
  const chat = async (setup, user) => post(setup.router.baseUrl, '/v1/chat/completions', {
    model: MODEL, max_completion_tokens: 1, temperature: 0,
    messages: [{ role: 'system', content: system }, { role: 'user', content: user }],
  });
  const questions = ['A story about a cat.', 'What did the dog do?', 'Tell me about the park.'];
  const landed = [];
  const cachedTokens = [];
  for (const q of questions) {
    const { json, backend } = await chat(setups.underTest, q);
    landed.push(backend);
    cachedTokens.push(json.usage.prompt_tokens_details?.cached_tokens ?? 0);
  }
  const baseline = new Set();
  for (const q of questions) baseline.add((await chat(setups.baseline, q)).backend);
  t.diagnostic(`${POLICY}: chats landed on ${landed.join(' ')}, cached tokens ${cachedTokens.join(',')}; ` +
               `round-robin: ${baseline.size} engines`);
  assert.equal(new Set(landed).size, 1, `${POLICY} sent one system prompt to ${landed}`);
  assert.ok(cachedTokens.slice(1).every((n) => n >= MIN_PREFIX_BLOCKS * blockSize),
            `the later chats did not reuse the system prompt's blocks: ${cachedTokens}`);
  assert.equal(baseline.size, NUM_ENGINES, 'round-robin spreads the same chats (the check discriminates)');
});
