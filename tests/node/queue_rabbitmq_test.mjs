// `surge route --queue` against a real rabbitmq-server (tests/node/rabbitmq_util.mjs): a few
// thousand OpenAI requests published RPC-style (reply_to, correlation_id, message_id), the
// broker restarted mid-run, and every request answered with none run twice (the engine's
// own request count), duplicates of a message id answered from the dedup window, and a
// poison message dead-lettered with its error (a body that is not JSON, and issue 31's
// {"stream":"yes"}), counted in surge_queue_dead_lettered_total.
// Run: node --test tests/node/queue_rabbitmq_test.mjs
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';

import amqp from 'amqplib';

import { HAVE_RABBITMQ, makeBroker } from './rabbitmq_util.mjs';
import { engineGenerationRequests, startRouter, waitFor } from './route_util.mjs';
import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const NUM_REQUESTS = Number(process.env.QUEUE_TEST_REQUESTS ?? 2000);
const QUEUE = 'surge.requests';
const DEAD = `${QUEUE}.dead`;
const REPLIES = 'surge.test.replies';
let broker;
let engine;
let router;
let connection;

const state = { done: false };  // true: the reply consumer stops reconnecting

after(async () => {
  state.done = true;
  if (connection) await connection.close().catch(() => {});
  if (router) await stopServer(router.proc);
  if (engine) await stopServer(engine.proc);
  if (broker) {
    await broker.stop();
    rmSync(broker.dir, { recursive: true, force: true });
  }
});

// The queues as surge declares them (same arguments, or the broker refuses the second).
async function declare(channel) {
  await channel.assertQueue(DEAD, { durable: true });
  await channel.assertQueue(QUEUE, { durable: true, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': DEAD } });
  await channel.assertQueue(REPLIES, { durable: true });
}

// Connects and consumes replies into `replies` (correlation id -> replies); reconnects
// whenever the connection drops, until `state.done`.
async function consumeReplies(url, replies, state) {
  while (!state.done) {
    try {
      connection = await amqp.connect(url);
      const channel = await connection.createChannel();
      await declare(channel);
      await channel.consume(REPLIES, (msg) => {
        if (!msg) return;
        const id = msg.properties.correlationId;
        replies.set(id, [...(replies.get(id) ?? []), JSON.parse(msg.content.toString())]);
        channel.ack(msg);
      });
      const closed = new Promise((resolve) => connection.once('close', resolve));
      connection.on('error', () => {});
      return closed.then(() => { if (!state.done) return consumeReplies(url, replies, state); });
    } catch {
      if (state.done) return undefined;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

function request(i) {
  return { model: 'stories260K', prompt: `Once upon a time ${i % 97}`, max_tokens: 2 };
}

test(`${NUM_REQUESTS} requests over RabbitMQ, the broker restarted mid-run: all answered, none run twice`,
  { skip: HAVE_RABBITMQ ? false : 'rabbitmq-server is not installed (scripts/setup.sh installs it)' }, async (t) => {
    broker = await makeBroker();
    await broker.start();
    engine = await startServer(SURGE, ['--threads', '1']);
    router = await startRouter(SURGE, [engine.baseUrl],
      ['--queue', broker.url, '--queue-endpoint', '/v1/completions', '--batch-max-in-flight', '32']);
    const before = await engineGenerationRequests(engine.baseUrl);

    const publisher = await amqp.connect(broker.url);
    const channel = await publisher.createConfirmChannel();
    await declare(channel);
    const props = (i) => ({ persistent: true, replyTo: REPLIES, correlationId: `c-${i}`, messageId: `m-${i}` });
    for (let i = 0; i < NUM_REQUESTS; ++i) channel.sendToQueue(QUEUE, Buffer.from(JSON.stringify(request(i))), props(i));
    channel.sendToQueue(QUEUE, Buffer.from('not json'), { persistent: true, replyTo: REPLIES, correlationId: 'poison', messageId: 'poison' });
    // Issue 31: a "stream" of the wrong type threw in the consumer, which died and got it redelivered.
    channel.sendToQueue(QUEUE, Buffer.from('{"stream":"yes"}'),
                        { persistent: true, replyTo: REPLIES, correlationId: 'poison-stream', messageId: 'poison-stream' });
    // A publisher's retry of a message id: answered, not run again.
    channel.sendToQueue(QUEUE, Buffer.from(JSON.stringify(request(0))), props(0));
    await channel.waitForConfirms();
    await publisher.close();

    const replies = new Map();
    const consuming = consumeReplies(broker.url, replies, state);
    const third = await waitFor(() => replies.size >= NUM_REQUESTS / 3, 60_000);
    assert.ok(third, `only ${replies.size} replies before the restart; router stderr:\n${router.stderr().slice(-3000)}`);
    const atRestart = replies.size;
    await broker.stop();
    await broker.start();
    t.diagnostic(`broker restarted after ${atRestart} replies`);

    const all = await waitFor(() => replies.size >= NUM_REQUESTS, 90_000);
    assert.ok(all, `${replies.size} of ${NUM_REQUESTS} answered; router stderr:\n${router.stderr().slice(-3000)}`);
    for (let i = 0; i < NUM_REQUESTS; ++i) {
      const reply = replies.get(`c-${i}`);
      assert.ok(reply, `c-${i} not answered`);
      assert.equal(reply[0].status_code, 200, JSON.stringify(reply[0]));
      assert.ok(reply[0].body.choices.length === 1, JSON.stringify(reply[0]));
    }
    assert.ok(!replies.has('poison'), 'the poison message got a reply');
    assert.ok(!replies.has('poison-stream'), 'the poison message got a reply');
    const duplicates = [...replies.values()].filter((r) => r.length > 1).length;
    t.diagnostic(`${duplicates} correlation ids answered more than once (at-least-once replies)`);
    // Dedup: each request ran once on the engine, the restart's redeliveries and the retried
    // m-0 included.
    assert.equal(await engineGenerationRequests(engine.baseUrl) - before, NUM_REQUESTS);

    const checker = await amqp.connect(broker.url);
    const check = await checker.createChannel();
    const dead = await check.get(DEAD, { noAck: true });
    assert.ok(dead, 'no message in the dead-letter queue');
    assert.equal(dead.properties.correlationId, 'poison');
    assert.equal(dead.content.toString(), 'not json');
    assert.match(String(dead.properties.headers['x-surge-error']), /not valid JSON/);
    const deadStream = await check.get(DEAD, { noAck: true });
    assert.ok(deadStream, 'the {"stream":"yes"} message is not in the dead-letter queue');
    assert.equal(deadStream.properties.correlationId, 'poison-stream');
    assert.match(String(deadStream.properties.headers['x-surge-error']), /stream must be a boolean, got a string/);
    const metrics = await (await fetch(`${router.baseUrl}/metrics`)).text();
    assert.match(metrics, /surge_queue_dead_lettered_total\{reason="invalid"\} [2-9]/);
    await checker.close();
    state.done = true;
    await connection.close().catch(() => {});
    await consuming;
    connection = undefined;
  });
