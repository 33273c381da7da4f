// Measures the semantic cache's quality on a labelled set (tests/data/semantic_cache_pairs.jsonl:
// FAQ-style questions, paraphrases that should hit, near misses -- another number, a
// negation, another name, another intent -- that must not): for each threshold, with the
// guard on and off, a fresh `surge route --cache memory --semantic` in front of `surge serve`
// stores every question's answer, then asks each paraphrase and near miss with
// cache.no_store (so that queries never answer each other). The embeddings come from Universal
// Sentence Encoder lite (tests/node/sentence_embeddings_server.mjs). Prints a Markdown table
// (docs/BENCH.md: "Semantic cache").
// Run: node scripts/bench_semantic_cache.mjs [SURGE=build/surge] [THRESHOLDS=0.85,0.88,...]
import { readFileSync } from 'node:fs';

import { startEmbeddingsServer } from '../tests/node/sentence_embeddings_server.mjs';
import { startRouter } from '../tests/node/route_util.mjs';
import { startServer, stopServer } from '../tests/node/serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const THRESHOLDS = (process.env.THRESHOLDS ?? '0.85,0.88,0.90,0.92,0.94,0.97').split(',').map(Number);
const CONCURRENCY = 8;
const SET = readFileSync('tests/data/semantic_cache_pairs.jsonl', 'utf8').trim().split('\n').map((l) => JSON.parse(l));

function body(question, noStore) {
  return JSON.stringify({
    model: 'stories260K', temperature: 0, max_tokens: 4, ...(noStore ? { cache: { no_store: true } } : {}),
    messages: [{ role: 'system', content: 'You answer customer questions.' }, { role: 'user', content: question }],
  });
}

async function ask(baseUrl, question, noStore) {
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: body(question, noStore) });
  await response.text();
  if (response.status !== 200) throw new Error(`${question}: HTTP ${response.status}`);
  return response.headers.get('x-surge-cache') === 'hit';
}

// Runs `work` over `items`, CONCURRENCY at a time; the results in order.
async function pool(items, work) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]);
    }
  }));
  return results;
}

async function measure(engineUrl, embeddingsUrl, threshold, guard) {
  const router = await startRouter(SURGE, [engineUrl], ['--cache', 'memory', '--semantic', '--embeddings-url', embeddingsUrl,
    '--semantic-threshold', String(threshold), `--semantic-guard=${guard}`, '--embeddings-timeout-ms', '5000']);
  try {
    await pool(SET, (row) => ask(router.baseUrl, row.question, false));
    const paraphrases = SET.flatMap((row) => row.paraphrases);
    const nearMisses = SET.flatMap((row) => row.near_misses);
    const paraphraseHits = await pool(paraphrases, (q) => ask(router.baseUrl, q, true));
    const nearMissHits = await pool(nearMisses, (m) => ask(router.baseUrl, m.text, true));
    const byKind = {};
    nearMisses.forEach((m, i) => {
      byKind[m.kind] ??= { hits: 0, total: 0 };
      byKind[m.kind].total++;
      byKind[m.kind].hits += nearMissHits[i] ? 1 : 0;
    });
    const rate = (hits) => hits.filter(Boolean).length / hits.length;
    return { threshold, guard, paraphrase: rate(paraphraseHits), falseHit: rate(nearMissHits), byKind,
             numParaphrases: paraphrases.length, numNearMisses: nearMisses.length };
  } finally {
    await stopServer(router.proc);
  }
}

const pct = (x) => `${(100 * x).toFixed(1)}%`;
const [engine, embeddings] = await Promise.all([startServer(SURGE, ['--threads', '1']), startEmbeddingsServer()]);
try {
  const rows = [];
  for (const guard of [true, false]) {
    for (const threshold of THRESHOLDS) rows.push(await measure(engine.baseUrl, embeddings.url, threshold, guard));
  }
  const kinds = Object.keys(rows[0].byKind).sort();
  console.log(`${SET.length} questions, ${rows[0].numParaphrases} paraphrases, ${rows[0].numNearMisses} near misses ` +
              `(${kinds.map((k) => `${k} ${rows[0].byKind[k].total}`).join(', ')})\n`);
  console.log(`| threshold | guard | paraphrase hit rate | near-miss false-hit rate | ${kinds.map((k) => `false hits: ${k}`).join(' | ')} |`);
  console.log(`|---|---|---|---|${kinds.map(() => '---').join('|')}|`);
  for (const r of rows) {
    console.log(`| ${r.threshold.toFixed(2)} | ${r.guard ? 'on' : 'off'} | ${pct(r.paraphrase)} | ${pct(r.falseHit)} | ` +
                `${kinds.map((k) => `${r.byKind[k].hits}/${r.byKind[k].total}`).join(' | ')} |`);
  }
} finally {
  await stopServer(engine.proc);
  await embeddings.close();
}
