// Tracing end to end: a real `surge serve` exports its spans over OTLP/HTTP to a test
// receiver here, which decodes the protobuf with the official OTLP definitions (the
// protobufjs root generated from opentelemetry-proto that @opentelemetry/otlp-transformer
// ships) or reads the OTLP/JSON, and checks one trace per request with the client's trace
// id, a SERVER span with children queue_wait, prefill and decode in time order, and
// durations consistent with the TTFT and end-to-end time the client measured.
// Run: node --test tests/node/tracing_test.mjs (SURGE=path/to/surge).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';

import { startRouter } from './route_util.mjs';
import { startServer, stopServer } from './serve_util.mjs';

const require = createRequire(import.meta.url);
const otlpRoot = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const ExportTraceServiceRequest = otlpRoot.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const SURGE = process.env.SURGE ?? 'build/surge';
const MODEL = 'stories260K';
const SLACK_MS = 2;  // clock reads on two sides of a socket

function anyValue(value) {
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  if ('boolValue' in value) return value.boolValue;
  if ('arrayValue' in value) return (value.arrayValue.values ?? []).map(anyValue);
  throw new Error(`unexpected AnyValue ${JSON.stringify(value)}`);
}

function attributeMap(attributes = []) {
  return Object.fromEntries(attributes.map((kv) => [kv.key, anyValue(kv.value)]));
}

const hex = (bytes) => (bytes === undefined ? '' : Buffer.from(bytes).toString('hex'));

// One span as both encodings normalize: hex ids, BigInt nanoseconds, attributes by key.
function normalize(span, resource, ids) {
  return {
    traceId: ids(span.traceId), spanId: ids(span.spanId), parentSpanId: ids(span.parentSpanId),
    traceState: span.traceState ?? '', name: span.name, kind: span.kind ?? 0,
    start: BigInt(span.startTimeUnixNano), end: BigInt(span.endTimeUnixNano),
    attributes: attributeMap(span.attributes), status: span.status ?? {}, flags: span.flags ?? 0,
    service: attributeMap(resource.attributes)['service.name'],
  };
}

function decodeRequest(contentType, body) {
  if (contentType === 'application/x-protobuf') {
    const message = ExportTraceServiceRequest.decode(body);
    const request = ExportTraceServiceRequest.toObject(message, { longs: String, enums: Number });
    return { request, ids: hex };
  }
  assert.equal(contentType, 'application/json');
  return { request: JSON.parse(body.toString('utf8')), ids: (id) => id ?? '' };
}

// A receiver on 127.0.0.1 that keeps every span it is sent and the content types used.
async function startReceiver() {
  const receiver = { spans: [], contentTypes: new Set(), errors: [] };
  receiver.server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      try {
        assert.equal(req.method, 'POST');
        assert.equal(req.url, '/v1/traces');
        const contentType = req.headers['content-type'];
        receiver.contentTypes.add(contentType);
        const { request, ids } = decodeRequest(contentType, Buffer.concat(chunks));
        for (const resourceSpans of request.resourceSpans) {
          for (const scopeSpans of resourceSpans.scopeSpans) {
            for (const span of scopeSpans.spans) receiver.spans.push(normalize(span, resourceSpans.resource, ids));
          }
        }
        res.writeHead(200, { 'Content-Type': contentType }).end(contentType === 'application/json' ? '{}' : '');
      } catch (error) {
        receiver.errors.push(error);
        res.writeHead(400).end();
      }
    });
  });
  await new Promise((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${receiver.server.address().port}/v1/traces`;
  return receiver;
}

function newTraceparent() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, header: `00-${traceId}-${spanId}-01` };
}

// A streamed chat request; TTFT is when the first content text arrived.
async function streamChat(baseUrl, headers) {
  const start = performance.now();
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({
      model: MODEL, messages: [{ role: 'user', content: 'Tell me a story' }], stream: true, max_tokens: 12,
      temperature: 0, ignore_eos: true, stream_options: { include_usage: true },
    }),
  });
  assert.equal(response.status, 200);
  const decoder = new TextDecoder();
  let ttftMs;
  let text = '';
  let usage;
  for await (const chunk of response.body) {
    text += decoder.decode(chunk, { stream: true });
    const events = text.split('\n\n');
    text = events.pop();
    for (const event of events) {
      const data = event.replace(/^data: /, '');
      if (data === '[DONE]') continue;
      const parsed = JSON.parse(data);
      if (parsed.usage) usage = parsed.usage;
      if (ttftMs === undefined && parsed.choices?.[0]?.delta?.content) ttftMs = performance.now() - start;
    }
  }
  return { traceparent: response.headers.get('traceparent'), ttftMs, e2eMs: performance.now() - start, usage };
}

async function completion(baseUrl, headers = {}) {
  const start = performance.now();
  const response = await fetch(`${baseUrl}/v1/completions`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ model: MODEL, prompt: 'Once upon a time', max_tokens: 8, temperature: 0, ignore_eos: true }),
  });
  const body = await response.json();
  return { status: response.status, traceparent: response.headers.get('traceparent'), body,
           e2eMs: performance.now() - start };
}

async function waitFor(predicate, what, timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const spansOf = (receiver, traceId) => receiver.spans.filter((span) => span.traceId === traceId);
const ms = (nanos) => Number(nanos) / 1e6;

// The trace of one request: the server span and its three children, in time order.
function checkTrace(receiver, traceId, { parentSpanId, serverSpanId, name, ttftMs, e2eMs }) {
  const spans = spansOf(receiver, traceId);
  const server = spans.filter((span) => span.kind === 2);
  assert.equal(server.length, 1, 'one SERVER span per request');
  const root = server[0];
  assert.equal(root.name, name);
  assert.equal(root.spanId, serverSpanId, 'the response names the server span');
  assert.equal(root.parentSpanId, parentSpanId, "the client's span is the parent");
  assert.equal(root.service, 'surge');
  const children = spans.filter((span) => span.parentSpanId === root.spanId);
  assert.deepEqual(children.map((span) => span.name).sort(), ['decode', 'prefill', 'queue_wait']);
  for (const child of children) assert.equal(child.kind, 1, 'children are INTERNAL');
  const [queue, prefill, decode] = ['queue_wait', 'prefill', 'decode'].map((n) => children.find((s) => s.name === n));
  const times = [root.start, queue.start, queue.end, prefill.start, prefill.end, decode.start, decode.end, root.end];
  for (let i = 1; i < times.length; ++i) assert.ok(times[i - 1] <= times[i], `time order at ${i}: ${times}`);
  assert.equal(prefill.start, queue.end);
  assert.equal(decode.start, prefill.end);
  const serverMs = ms(root.end - root.start);
  assert.ok(serverMs <= e2eMs + SLACK_MS, `server span ${serverMs} ms within the client's E2E ${e2eMs} ms`);
  assert.ok(serverMs > 0);
  if (ttftMs !== undefined) {
    const firstTokenMs = ms(prefill.end - root.start);
    assert.ok(firstTokenMs <= ttftMs + SLACK_MS, `first token at ${firstTokenMs} ms within the client's TTFT ${ttftMs}`);
    assert.ok(Math.abs(root.attributes['gen_ai.latency.time_to_first_token'] * 1000 - firstTokenMs) < 0.01);
  }
  assert.ok(Math.abs(root.attributes['gen_ai.latency.e2e'] * 1000 - serverMs) < 0.01);
  assert.ok(Math.abs(root.attributes['gen_ai.latency.time_in_queue'] * 1000 - ms(queue.end - queue.start)) < 1);
  return root;
}

describe('OTLP/HTTP protobuf', () => {
  let receiver;
  let server;
  before(async () => {
    receiver = await startReceiver();
    server = await startServer(SURGE, ['--otlp-endpoint', receiver.url]);
  });
  after(async () => {
    if (server) assert.equal(await stopServer(server.proc), 0);
    receiver?.server.close();
  });

  test("streamed chat requests continue the client's traces", async () => {
    const sent = [newTraceparent(), newTraceparent(), newTraceparent()];
    const results = await Promise.all(sent.map((parent) =>
      streamChat(server.baseUrl, { traceparent: parent.header, tracestate: 'congo=t61rcWkgMzE, rojo=00f067aa0ba902b7' })));
    await waitFor(() => sent.every((p) => spansOf(receiver, p.traceId).length === 4), 'four spans per trace');
    assert.deepEqual(receiver.errors, []);
    assert.deepEqual([...receiver.contentTypes], ['application/x-protobuf']);
    sent.forEach((parent, i) => {
      const result = results[i];
      const [version, traceId, spanId, flags] = result.traceparent.split('-');
      assert.deepEqual([version, traceId, flags], ['00', parent.traceId, '01']);
      const root = checkTrace(receiver, parent.traceId, {
        parentSpanId: parent.spanId, serverSpanId: spanId, name: 'POST /v1/chat/completions',
        ttftMs: result.ttftMs, e2eMs: result.e2eMs,
      });
      assert.equal(root.traceState, 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
      assert.equal(root.flags & 0x301, 0x301, 'sampled, parent known to be remote');
      const a = root.attributes;
      assert.equal(a['http.response.status_code'], 200);
      assert.equal(a['gen_ai.operation.name'], 'chat');
      assert.equal(a['gen_ai.request.model'], MODEL);
      assert.equal(a['gen_ai.request.max_tokens'], 12);
      assert.equal(a['gen_ai.request.temperature'], 0);
      assert.equal(a['gen_ai.request.top_p'], 1);
      assert.equal(a['gen_ai.usage.input_tokens'], result.usage.prompt_tokens);
      assert.equal(a['gen_ai.usage.output_tokens'], 12);
      assert.deepEqual(a['gen_ai.response.finish_reasons'], ['length']);
      assert.equal(a['surge.priority_tier'], 'normal');
      assert.equal(typeof a['surge.prefix_cache.hit_tokens'], 'number');
    });
    assert.equal(spansOf(receiver, sent[0].traceId).filter((s) => s.name === 'decode').length, 1);
  });

  test('a request without traceparent starts a trace of its own', async () => {
    const result = await completion(server.baseUrl);
    assert.equal(result.status, 200);
    const [, traceId, spanId, flags] = result.traceparent.split('-');
    assert.equal(flags, '01');
    await waitFor(() => spansOf(receiver, traceId).length === 4, 'the new trace');
    const root = checkTrace(receiver, traceId, {
      parentSpanId: '', serverSpanId: spanId, name: 'POST /v1/completions', e2eMs: result.e2eMs,
    });
    assert.equal(root.attributes['gen_ai.operation.name'], 'text_completion');
    assert.equal(root.attributes['gen_ai.usage.output_tokens'], result.body.usage.completion_tokens);
  });

  test('embeddings get a server span with queue_wait and prefill', async () => {
    const parent = newTraceparent();
    const start = performance.now();
    const response = await fetch(`${server.baseUrl}/v1/embeddings`, {
      method: 'POST', headers: { 'Content-Type': 'application/json', traceparent: parent.header },
      body: JSON.stringify({ model: MODEL, input: ['Once upon a time', 'The cat sat'] }),
    });
    const body = await response.json();
    const e2eMs = performance.now() - start;
    assert.equal(response.status, 200);
    await waitFor(() => spansOf(receiver, parent.traceId).length === 3, 'the embedding trace');
    const spans = spansOf(receiver, parent.traceId);
    const root = spans.find((span) => span.kind === 2);
    assert.equal(root.name, 'POST /v1/embeddings');
    assert.equal(root.parentSpanId, parent.spanId);
    assert.ok(ms(root.end - root.start) <= e2eMs + SLACK_MS);
    assert.equal(root.attributes['gen_ai.operation.name'], 'embeddings');
    assert.equal(root.attributes['gen_ai.usage.input_tokens'], body.usage.prompt_tokens);
    const [queue, prefill] = ['queue_wait', 'prefill'].map((n) => spans.find((s) => s.name === n));
    assert.equal(queue.parentSpanId, root.spanId);
    assert.equal(prefill.parentSpanId, root.spanId);
    assert.ok(root.start <= queue.start && queue.end === prefill.start && prefill.end <= root.end);
  });

  test('a refused request still gets its span, and /metrics counts the exports', async () => {
    const parent = newTraceparent();
    const response = await fetch(`${server.baseUrl}/v1/completions`, {
      method: 'POST', headers: { 'Content-Type': 'application/json', traceparent: parent.header }, body: '{"prompt": 1',
    });
    assert.equal(response.status, 400);
    assert.equal(response.headers.get('traceparent').split('-')[1], parent.traceId);
    await waitFor(() => spansOf(receiver, parent.traceId).length === 1, 'the span of the 400');
    assert.equal(spansOf(receiver, parent.traceId)[0].attributes['http.response.status_code'], 400);
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    const exported = Number(metrics.match(/^surge_trace_spans_exported_total (\S+)$/m)[1]);
    assert.ok(exported >= receiver.spans.length, `${exported} exported, ${receiver.spans.length} received`);
    assert.match(metrics, /^surge_trace_spans_dropped_total 0$/m);
  });
});

describe('OTLP/HTTP JSON, sample ratio 0', () => {
  let receiver;
  let server;
  before(async () => {
    receiver = await startReceiver();
    server = await startServer(SURGE, ['--otlp-endpoint', receiver.url, '--otlp-protocol', 'http/json',
                                       '--trace-sample-ratio', '0']);
  });
  after(async () => {
    if (server) assert.equal(await stopServer(server.proc), 0);
    receiver?.server.close();
  });

  test("the client's sampled trace is recorded in OTLP/JSON; new traces are not", async () => {
    const parent = newTraceparent();
    const result = await streamChat(server.baseUrl, { traceparent: parent.header });
    const unsampled = await completion(server.baseUrl);
    assert.equal(unsampled.traceparent.split('-')[3], '00', 'ratio 0: a new trace is not sampled');
    await waitFor(() => spansOf(receiver, parent.traceId).length === 4, 'the JSON trace');
    assert.deepEqual(receiver.errors, []);
    assert.deepEqual([...receiver.contentTypes], ['application/json']);
    checkTrace(receiver, parent.traceId, {
      parentSpanId: parent.spanId, serverSpanId: result.traceparent.split('-')[2],
      name: 'POST /v1/chat/completions', ttftMs: result.ttftMs, e2eMs: result.e2eMs,
    });
    // Nothing of the unsampled trace arrives, even after another export would have run.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    assert.equal(spansOf(receiver, unsampled.traceparent.split('-')[1]).length, 0);
  });
});

describe('collector down', () => {
  test('requests are served as usual and the failed export is counted', async () => {
    const receiver = await startReceiver();
    const url = receiver.url;
    await new Promise((resolve) => receiver.server.close(resolve));  // nothing listens there now
    const server = await startServer(SURGE, ['--otlp-endpoint', url]);
    try {
      const result = await completion(server.baseUrl);
      assert.equal(result.status, 200);
      assert.equal(result.body.usage.completion_tokens, 8);
      let metrics = '';
      const until = Date.now() + 15_000;
      while (!/^surge_trace_spans_failed_total [1-9]/m.test(metrics) && Date.now() < until) {
        metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.match(metrics, /^surge_trace_spans_failed_total [1-9]/m);
      assert.match(metrics, /^surge_trace_spans_exported_total 0$/m);
    } finally {
      assert.equal(await stopServer(server.proc), 0);
    }
  });

  test('a collector that never answers does not slow requests down', async () => {
    const sockets = [];
    const hanging = createServer(() => {});  // reads the POST, never answers
    let exporterGaveUp = false;  // the exporter closed its hanging POST (its 5 s timeout)
    hanging.on('connection', (socket) => {
      sockets.push(socket);
      socket.on('close', () => { exporterGaveUp = true; });
    });
    await new Promise((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${hanging.address().port}/v1/traces`;
    const server = await startServer(SURGE, ['--otlp-endpoint', url]);
    try {
      // The first batch goes out 1 s after the first span and then hangs in its POST (5 s
      // timeout): requests made meanwhile must complete while that POST is still open, i.e.
      // without waiting for the exporter (a wall-clock bound would fail on a loaded machine).
      const first = await completion(server.baseUrl);
      assert.equal(first.status, 200);
      await new Promise((resolve) => setTimeout(resolve, 1300));
      assert.ok(sockets.length >= 1, 'the exporter is waiting on the collector');
      for (let i = 0; i < 5; ++i) {
        const result = await completion(server.baseUrl);
        assert.equal(result.status, 200);
      }
      assert.ok(!exporterGaveUp, 'the requests completed only after the exporter gave up on the collector');
    } finally {
      assert.equal(await stopServer(server.proc), 0);
      for (const socket of sockets) socket.destroy();
      hanging.close();
    }
  });
});

describe('through surge route', () => {
  test('one trace spans client, router (route, backend_attempt) and engine', async () => {
    const receiver = await startReceiver();
    const server = await startServer(SURGE, ['--otlp-endpoint', receiver.url]);
    const router = await startRouter(SURGE, [server.baseUrl], ['--otlp-endpoint', receiver.url]);
    try {
      const parent = newTraceparent();
      const result = await streamChat(router.baseUrl, { traceparent: parent.header });
      await waitFor(() => spansOf(receiver, parent.traceId).length === 6, 'route, backend_attempt and 4 engine spans');
      assert.deepEqual(receiver.errors, []);
      const spans = spansOf(receiver, parent.traceId);
      const route = spans.find((span) => span.attributes['surge.span'] === 'route');
      assert.equal(route.kind, 2);
      assert.equal(route.service, 'surge-route');
      assert.equal(route.parentSpanId, parent.spanId, "the client's span is the route span's parent");
      assert.equal(result.traceparent.split('-')[2], route.spanId, "the router's answer names its route span");
      assert.equal(route.attributes['surge.backend'], server.baseUrl);
      assert.equal(route.attributes['http.response.status_code'], 200);
      const attempt = spans.find((span) => span.name === 'backend_attempt');
      assert.equal(attempt.kind, 3, 'CLIENT');
      assert.equal(attempt.parentSpanId, route.spanId);
      const engine = spans.find((span) => span.service === 'surge' && span.kind === 2);
      assert.equal(engine.parentSpanId, attempt.spanId, 'the engine continues the attempt');
      for (const [outer, inner] of [[route, attempt], [attempt, engine]]) {
        assert.ok(outer.start <= inner.start + 2_000_000n && inner.end <= outer.end + 2_000_000n, 'nested in time');
      }
      assert.ok(ms(route.end - route.start) <= result.e2eMs + SLACK_MS);
    } finally {
      router.proc.kill('SIGTERM');
      await new Promise((resolve) => router.proc.once('exit', resolve));
      assert.equal(await stopServer(server.proc), 0);
      receiver.server.close();
    }
  });
});
