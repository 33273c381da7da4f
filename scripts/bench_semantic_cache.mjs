// Measures the semantic cache's quality on labelled sets (FAQ-style questions, paraphrases
// that should hit, near misses -- another number, a negation, another name, another or the
// opposite intent, words swapped -- that must not): for each set, each threshold, with the
// guard on and off, a fresh `surge route --cache memory --semantic` in front of `surge serve`
// stores every question's answer, then asks each paraphrase and near miss with
// cache.no_store (so that queries never answer each other). The embeddings come from
// EMBEDDINGS_MODEL, a sentence-encoder directory served by its own `surge serve` (e.g.
// models/all-MiniLM-L6-v2), or without it from Universal Sentence Encoder lite
// (tests/node/sentence_embeddings_server.mjs). Prints a Markdown table per set (docs/BENCH.md:
// "Semantic cache").
// Sets: tests/data/semantic_cache_pairs.jsonl (the guard's rules were written after seeing it)
// and tests/data/semantic_cache_heldout.jsonl (held out: written after the guard, never tuned to).
// Run: node scripts/bench_semantic_cache.mjs [SURGE=build/surge] [THRESHOLDS=0.85,0.88,...]
//      [SETS=tests/data/a.jsonl,tests/data/b.jsonl] [EMBEDDINGS_MODEL=models/all-MiniLM-L6-v2]
import { readFileSync } from 'node:fs';

import { startEmbeddingsServer } from '../tests/node/sentence_embeddings_server.mjs';
import { startRouter } from '../tests/node/route_util.mjs';
import { startServer, stopServer } from '../tests/node/serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const THRESHOLDS = (process.env.THRESHOLDS ?? '0.85,0.88,0.90,0.92,0.94,0.97').split(',').map(Number);
const CONCURRENCY = 8;
const EMBEDDINGS_MODEL = process.env.EMBEDDINGS_MODEL ?? '';
const SETS = (process.env.SETS ?? 'tests/data/semantic_cache_pairs.jsonl,tests/data/semantic_cache_heldout.jsonl').split(',');
const readSet = (path) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

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
  return response.headers.get('x-surge-cache') === 'hit' ? Number(response.headers.get('x-surge-cache-similarity') ?? 1) : 0;
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

async function measure(engineUrl, embeddingsUrl, set, threshold, guard) {
  const router = await startRouter(SURGE, [engineUrl], ['--cache', 'memory', '--semantic', '--embeddings-url', embeddingsUrl,
    '--semantic-threshold', String(threshold), `--semantic-guard=${guard}`, '--embeddings-timeout-ms', '5000']);
  try {
    await pool(set, (row) => ask(router.baseUrl, row.question, false));
    const paraphrases = set.flatMap((row) => row.paraphrases);
    const nearMisses = set.flatMap((row) => row.near_misses);
    const paraphraseHits = await pool(paraphrases, (q) => ask(router.baseUrl, q, true));
    const nearMissHits = await pool(nearMisses, (m) => ask(router.baseUrl, m.text, true));
    const byKind = {};
    nearMisses.forEach((m, i) => {
      byKind[m.kind] ??= { hits: 0, total: 0 };
      byKind[m.kind].total++;
      byKind[m.kind].hits += nearMissHits[i] ? 1 : 0;
    });
    const rate = (hits) => hits.filter(Boolean).length / hits.length;
    // The near misses that hit, to stderr (which rules would have caught them).
    nearMisses.forEach((m, i) => {
      if (guard && nearMissHits[i]) console.error(`false hit at ${threshold} (${m.kind}, ${nearMissHits[i].toFixed(4)}): ${m.text}`);
    });
    return { threshold, guard, paraphrase: rate(paraphraseHits), falseHit: rate(nearMissHits), byKind,
             numParaphrases: paraphrases.length, numNearMisses: nearMisses.length };
  } finally {
    await stopServer(router.proc);
  }
}

const pct = (x) => `${(100 * x).toFixed(1)}%`;

function printTable(path, set, rows) {
  const kinds = Object.keys(rows[0].byKind).sort();
  console.log(`\n${path}: ${set.length} questions, ${rows[0].numParaphrases} paraphrases, ${rows[0].numNearMisses} near misses ` +
              `(${kinds.map((k) => `${k} ${rows[0].byKind[k].total}`).join(', ')})\n`);
  console.log(`| threshold | guard | paraphrase hit rate | near-miss false-hit rate | ${kinds.map((k) => `false hits: ${k}`).join(' | ')} |`);
  console.log(`|---|---|---|---|${kinds.map(() => '---').join('|')}|`);
  for (const r of rows) {
    console.log(`| ${r.threshold.toFixed(2)} | ${r.guard ? 'on' : 'off'} | ${pct(r.paraphrase)} | ${pct(r.falseHit)} | ` +
                `${kinds.map((k) => `${r.byKind[k].hits}/${r.byKind[k].total}`).join(' | ')} |`);
  }
}

// A sentence encoder on its own surge serve, or USE-lite: {url, close}.
async function startEmbeddings() {
  if (!EMBEDDINGS_MODEL) return startEmbeddingsServer();
  const encoder = await startServer(SURGE, ['--threads', '1'], EMBEDDINGS_MODEL);
  return { url: `${encoder.baseUrl}/v1`, close: () => stopServer(encoder.proc) };
}

const [engine, embeddings] = await Promise.all([startServer(SURGE, ['--threads', '1']), startEmbeddings()]);
try {
  for (const path of SETS) {
    const set = readSet(path);
    const rows = [];
    for (const guard of [true, false]) {
      for (const threshold of THRESHOLDS) rows.push(await measure(engine.baseUrl, embeddings.url, set, threshold, guard));
    }
    printTable(path, set, rows);
  }
} finally {
  await stopServer(engine.proc);
  await embeddings.close();
}
