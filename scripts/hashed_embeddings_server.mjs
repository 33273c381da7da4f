// A cheap, deterministic OpenAI-compatible /v1/embeddings server for benchmarks only: each
// input's lowercased words ([a-z0-9']+) are hashed (FNV-1a) into a 512-d bag of words with a
// sign bit, then L2-normalized. Not a sentence encoder -- it knows no synonyms -- but it answers
// in microseconds, so scripts/bench_cache_lookup.py --kind semantic can drive the semantic
// lookup at 1,000 req/s on a small machine, where Universal Sentence Encoder lite on TF.js
// (tests/node/sentence_embeddings_server.mjs) cannot. Same vector size as USE-lite, so the
// index search costs what it would with it.
// Run: node scripts/hashed_embeddings_server.mjs [PORT]   prints "ready on http://127.0.0.1:PORT/v1"
import { createServer } from 'node:http';

const DIMENSIONS = 512;

function fnv1a(word) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < word.length; ++i) hash = Math.imul(hash ^ word.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

function embed(text) {
  const vector = new Array(DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9']+/g) ?? []) {
    const hash = fnv1a(word);
    vector[hash % DIMENSIONS] += (hash & 0x80000000) ? -1 : 1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((x) => Number((x / norm).toFixed(6)));
}

function sendJson(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const server = createServer(async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/v1/embeddings') return sendJson(res, 404, { error: { message: 'not found' } });
  let text = '';
  for await (const chunk of req) text += chunk;
  let body;
  try { body = JSON.parse(text); } catch { return sendJson(res, 400, { error: { message: 'bad JSON' } }); }
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(inputs) || inputs.some((x) => typeof x !== 'string')) {
    return sendJson(res, 400, { error: { message: 'input must be a string or a list of strings' } });
  }
  sendJson(res, 200, {
    object: 'list', model: body.model ?? 'hashed-bag-of-words-512',
    data: inputs.map((input, index) => ({ object: 'embedding', index, embedding: embed(input) })),
    usage: { prompt_tokens: 0, total_tokens: 0 },
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  console.log(`ready on http://127.0.0.1:${server.address().port}/v1`);
});
