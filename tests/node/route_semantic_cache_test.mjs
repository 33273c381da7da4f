// surge route's semantic response cache, end to end: the official `openai` client through
// `surge route --cache memory --semantic` in front of a real `surge serve` on the bundled
// model, with a real trained sentence encoder (sentence_embeddings_server.mjs) as the
// embeddings backend. A paraphrase is answered from the cache (x-surge-cache: hit, kind
// semantic, the engine's request counter unchanged); near misses (another number, a
// negation, another name) and another system prompt are not; streamed hits replay; an
// embeddings endpoint that is down leaves requests answered, uncached, and counted; with a
// real redis-server, a new router rebuilds its index from the vectors stored beside the answers.
// Run: node --test tests/node/route_semantic_cache_test.mjs (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { after, before, test } from 'node:test';

import OpenAI from 'openai';

import { startEmbeddingsServer } from './sentence_embeddings_server.mjs';
import { engineGenerationRequests, metricSum, startRouter } from './route_util.mjs';
import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';
const HAVE_REDIS = !spawnSync('redis-server', ['--version']).error;

let engine;
let embeddings;
let router;
const routers = [];

before(async () => {
  [engine, embeddings] = await Promise.all([startServer(SURGE, ['--threads', '1']), startEmbeddingsServer()]);
  router = await startRouter(SURGE, [engine.baseUrl], ['--cache', 'memory', '--semantic', '--embeddings-url', embeddings.url,
    // a timed-out embedding is a miss by design; on a loaded test machine that is not what is tested here
    '--embeddings-timeout-ms', '10000']);
  routers.push(router);
});

after(async () => {
  for (const r of routers) await stopServer(r.proc);
  if (engine) await stopServer(engine.proc);
  if (embeddings) await embeddings.close();
});

async function engineRequests() {
  return engineGenerationRequests(engine.baseUrl);
}

const routerCounter = metricSum;

function openai(baseUrl) {
  return new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
}

function params(question, system = 'You answer support questions.') {
  return { model: MODEL, temperature: 0, max_tokens: 8,
           messages: [{ role: 'system', content: system }, { role: 'user', content: question }] };
}

async function ask(baseUrl, question, system) {
  const { data, response } = await openai(baseUrl).chat.completions.create(params(question, system)).withResponse();
  return { data, cache: response.headers.get('x-surge-cache'), kind: response.headers.get('x-surge-cache-kind'),
           similarity: Number(response.headers.get('x-surge-cache-similarity')) };
}

test('a paraphrase is a semantic hit that costs the engine nothing', async () => {
  const first = await ask(router.baseUrl, 'How do I reset my password?');
  assert.equal(first.cache, 'miss');
  const before = await engineRequests();
  const paraphrase = await ask(router.baseUrl, 'How can I reset my password?');
  assert.equal(paraphrase.cache, 'hit');
  assert.equal(paraphrase.kind, 'semantic');
  assert.ok(paraphrase.similarity >= 0.92 && paraphrase.similarity <= 1, `similarity ${paraphrase.similarity}`);
  assert.equal(paraphrase.data.choices[0].message.content, first.data.choices[0].message.content);
  assert.notEqual(paraphrase.data.id, first.data.id);
  assert.equal(await engineRequests(), before, 'the engine answered nothing');
  assert.ok(await routerCounter(router.baseUrl, 'surge_router_cache_hits_total{kind="semantic"') >= 1);
  // The lookup after its embedding is timed on its own, by outcome (scripts/bench_cache_lookup.py).
  assert.ok(await routerCounter(router.baseUrl, 'surge_router_cache_semantic_search_seconds_count{outcome="hit"') >= 1);
  assert.ok(await routerCounter(router.baseUrl, 'surge_router_cache_semantic_search_seconds_count{outcome="miss"') >= 1);
  const exact = await ask(router.baseUrl, 'How do I reset my password?');
  assert.equal(exact.kind, 'exact');  // exact first
});

test('near misses are not hits: another number, a negation, another name, another system prompt', async () => {
  await ask(router.baseUrl, 'Can I return 2 items bought in March?');
  const before = await engineRequests();
  const rejectionsBefore = await routerCounter(router.baseUrl, 'surge_router_cache_semantic_guard_rejections_total');
  for (const question of ['Can I return 3 items bought in March?', 'Can I not return 2 items bought in March?',
                          'Can I return 2 items bought in April?']) {
    assert.equal((await ask(router.baseUrl, question)).cache, 'miss', question);
  }
  assert.equal((await ask(router.baseUrl, 'Can I return 2 items bought in March?', 'You are a pirate.')).cache, 'miss');
  assert.equal(await engineRequests(), before + 4, 'each near miss went to the engine');
  assert.ok(await routerCounter(router.baseUrl, 'surge_router_cache_semantic_guard_rejections_total') > rejectionsBefore,
            'the guard turned down at least one similar-enough candidate');
});

test('a streamed paraphrase replays the stored answer', async () => {
  const first = await ask(router.baseUrl, 'What are your opening hours on weekends?');
  const { data, response } = await openai(router.baseUrl).chat.completions
    .create({ ...params('What are your opening hours at the weekend?'), stream: true }).withResponse();
  let text = '';
  for await (const chunk of data) text += chunk.choices[0]?.delta?.content ?? '';
  assert.equal(response.headers.get('x-surge-cache'), 'hit');
  assert.equal(text, first.data.choices[0].message.content);
});

test('an embeddings endpoint that is down: answered uncached, counted', async () => {
  const dead = await startEmbeddingsServer();
  const deadUrl = dead.url;
  await dead.close();
  const r = await startRouter(SURGE, [engine.baseUrl], ['--cache', 'memory', '--semantic', '--embeddings-url', deadUrl,
                                                        '--embeddings-timeout-ms', '200']);
  routers.push(r);
  const first = await ask(r.baseUrl, 'How do I delete my account?');
  assert.equal(first.cache, 'miss');
  assert.ok(first.data.choices[0].message.content.length > 0);
  assert.equal((await ask(r.baseUrl, 'How can I delete my account?')).cache, 'miss');
  assert.equal((await ask(r.baseUrl, 'How do I delete my account?')).kind, 'exact', 'the exact cache still works');
  assert.ok(await routerCounter(r.baseUrl, 'surge_router_cache_errors_total{kind="semantic",backend="embeddings"') >= 2);
});

test('DELETE /cache drops the semantic index too', async () => {
  await ask(router.baseUrl, 'Where is my order confirmation email?');
  const flushed = await fetch(`${router.baseUrl}/cache`, { method: 'DELETE' });
  assert.equal(flushed.status, 200);
  assert.equal((await ask(router.baseUrl, 'Where is my order confirmation e-mail?')).cache, 'miss');
});

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('redis: a new router rebuilds its semantic index from the stored vectors', { skip: !HAVE_REDIS && 'no redis-server' },
  async () => {
    const port = await freePort();
    const redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    try {
      const args = ['--cache', `redis://127.0.0.1:${port}`, '--semantic', '--embeddings-url', embeddings.url,
                    '--embeddings-timeout-ms', '10000'];
      for (let i = 0; i < 100 && spawnSync('redis-cli', ['-p', String(port), 'ping']).stdout?.toString().trim() !== 'PONG'; ++i) {
        await new Promise((resolve) => setTimeout(resolve, 50));  // until redis-server listens
      }
      const r = await startRouter(SURGE, [engine.baseUrl], args);
      assert.equal((await ask(r.baseUrl, 'How do I close my bank account?')).cache, 'miss');
      await new Promise((resolve) => setTimeout(resolve, 200));  // the fire-and-forget stores land
      await stopServer(r.proc);
      const restarted = await startRouter(SURGE, [engine.baseUrl], args);
      routers.push(restarted);
      await new Promise((resolve) => setTimeout(resolve, 300));  // the rebuild's SCAN
      const hit = await ask(restarted.baseUrl, 'How can I close my bank account?');
      assert.equal(hit.cache, 'hit');
      assert.equal(hit.kind, 'semantic');
    } finally {
      redis.kill('SIGKILL');
    }
  });
