// Helpers for the Batch API tests: JSONL inputs, polling a batch to a final status, and
// reading a batch's output file into lines by custom_id.
import assert from 'node:assert/strict';

import OpenAI, { toFile } from 'openai';

export const FINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);

// The SDK against a surge base URL.
export function client(baseUrl, maxRetries = 0) {
  return new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: 'unused', maxRetries, timeout: 30_000 });
}

// One batch input line.
export function line(customId, url, body) {
  return JSON.stringify({ custom_id: customId, method: 'POST', url, body });
}

export async function upload(client, lines, name = 'input.jsonl') {
  return client.files.create({ file: await toFile(Buffer.from(lines.join('\n') + '\n'), name), purpose: 'batch' });
}

// Polls until the batch reaches a final status (or `timeoutMs` passes); the last Batch
// object and every status seen on the way.
export async function waitForBatch(client, id, timeoutMs = 40_000) {
  const deadline = Date.now() + timeoutMs;
  const seen = [];
  for (;;) {
    const batch = await client.batches.retrieve(id);
    if (seen.at(-1) !== batch.status) seen.push(batch.status);
    if (FINAL.has(batch.status)) return { batch, seen };
    assert.ok(Date.now() < deadline, `batch ${id} still ${batch.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// The JSONL of a file as objects, by custom_id (each custom_id must appear once).
export async function readOutput(client, fileId) {
  const text = await (await client.files.content(fileId)).text();
  const byId = new Map();
  for (const row of text.split('\n').filter((l) => l !== '')) {
    const parsed = JSON.parse(row);
    assert.ok(!byId.has(parsed.custom_id), `custom_id ${parsed.custom_id} twice in the output`);
    byId.set(parsed.custom_id, parsed);
  }
  return byId;
}
