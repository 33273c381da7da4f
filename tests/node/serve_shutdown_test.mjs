// Graceful shutdown of `surge serve`: SIGTERM during a stream lets the stream finish and
// the process exit 0; with --drain-timeout 0 the stream is cut short cleanly ("abort",
// then [DONE]) and the process still exits 0. Run: node --test tests/node/serve_shutdown_test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';

// Starts one completion stream; `onFirstEvent` runs once the first SSE event arrives.
// Resolves with the parsed data payloads.
async function stream(baseUrl, maxTokens, onFirstEvent) {
  const response = await fetch(`${baseUrl}/v1/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ prompt: 'Once upon a time', max_tokens: maxTokens, ignore_eos: true, stream: true }),
  });
  assert.equal(response.status, 200);
  const decoder = new TextDecoder();
  let text = '';
  let bytesAtSignal = -1;
  for await (const bytes of response.body) {
    text += decoder.decode(bytes, { stream: true });
    if (bytesAtSignal < 0 && text.includes('\n\n')) {
      bytesAtSignal = text.length;
      onFirstEvent();
    }
  }
  assert.ok(text.length > bytesAtSignal, 'events kept coming after the signal');
  assert.ok(text.endsWith('data: [DONE]\n\n'), `the stream ends with [DONE]: ...${text.slice(-200)}`);
  return text.split('\n\n').filter((event) => event).map((event) => event.slice('data: '.length));
}

function completionTokens(events) {
  const chunks = events.slice(0, -1).map((data) => JSON.parse(data));
  return { text: chunks.map((c) => c.choices[0].text).join(''), finish: chunks.at(-1).choices[0].finish_reason };
}

test('SIGTERM during a stream: the stream completes, the process exits 0', async () => {
  const server = await startServer(SURGE, ['--drain-timeout', '30']);
  let exit = null;
  const events = await stream(server.baseUrl, 300, () => { exit = stopServer(server.proc); });
  assert.equal(completionTokens(events).finish, 'length');
  // No new work is accepted once draining began.
  const health = await fetch(`${server.baseUrl}/health`).then((r) => r.status, () => 'refused');
  assert.ok(health === 503 || health === 'refused', `health after SIGTERM: ${health}`);
  assert.equal(await exit, 0, server.stderr());
});

test('drain timeout: streams still running are cancelled, the process exits 0', async () => {
  const server = await startServer(SURGE, ['--drain-timeout', '0']);
  let exit = null;
  const events = await stream(server.baseUrl, 500, () => { exit = stopServer(server.proc); });
  assert.equal(completionTokens(events).finish, 'abort');
  assert.equal(await exit, 0, server.stderr());
});
