// CORS in a real browser: headless Chromium loads a page from one 127.0.0.1 port whose
// script calls `surge serve` on another port (a different origin) with an Authorization
// header, which forces a preflight. From the origin in --allowed-origins the chat
// completion (whole and streamed) and a 404 are readable; from another origin the
// browser blocks every call and the POST never reaches surge. The page reports to the
// server that served it (same origin), so no DevTools protocol is needed.
// Run: node --test tests/node/cors_browser_test.mjs (SURGE=..., CHROMIUM=path/to/chromium).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { startServer, stopServer } from './serve_util.mjs';

const SURGE = process.env.SURGE ?? 'build/surge';
const CHROMIUM = process.env.CHROMIUM || 'chromium';
const MODEL = 'stories260K';
const REPORT_TIMEOUT_MS = 20_000;

// Runs in the browser. Every outcome (a status, a body, or the fetch's TypeError) is
// reported, so that the test sees what the page's script could read.
const PAGE_SCRIPT = `
const api = new URLSearchParams(location.search).get('api');
const headers = { 'Content-Type': 'application/json', Authorization: 'Bearer sk-test', 'X-Stainless-Lang': 'js' };
const body = (stream) => JSON.stringify({ model: '${MODEL}', messages: [{ role: 'user', content: 'Hi' }],
                                          max_tokens: 8, temperature: 0, stream });
async function attempt(call) {
  try { return await call(); } catch (error) { return { error: String(error) }; }
}
async function run() {
  const whole = await attempt(async () => {
    const response = await fetch(api + '/v1/chat/completions', { method: 'POST', headers, body: body(false) });
    const json = await response.json();
    return { status: response.status, content: json.choices[0].message.content };
  });
  const stream = await attempt(async () => {
    const response = await fetch(api + '/v1/chat/completions', { method: 'POST', headers, body: body(true) });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    for (let part = await reader.read(); !part.done; part = await reader.read()) text += part.value;
    return { status: response.status, contentType: response.headers.get('content-type'), text };
  });
  const missing = await attempt(async () => {
    const response = await fetch(api + '/v1/nowhere', { headers });
    return { status: response.status, body: await response.json() };
  });
  await fetch('/report', { method: 'POST', body: JSON.stringify({ whole, stream, missing }) });
}
run();
`;

// Serves the page and takes its report; resolves with {port, report: Promise}.
function startPageServer() {
  let deliver;
  const report = new Promise((resolve) => { deliver = resolve; });
  const server = http.createServer((request, response) => {
    if (request.method === 'POST' && request.url === '/report') {
      let data = '';
      request.on('data', (chunk) => { data += chunk; });
      request.on('end', () => { response.end('ok'); deliver(JSON.parse(data)); });
      return;
    }
    response.setHeader('Content-Type', 'text/html');
    response.end(`<!doctype html><title>surge cors</title><script type="module">${PAGE_SCRIPT}</script>`);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port, report }));
  });
}

// Loads `url` in a fresh headless Chromium until the page reports; the browser (its own
// process group) is killed afterwards whatever happened.
async function browse(url, page) {
  const profile = mkdtempSync(join(tmpdir(), 'surge-chromium-'));
  const browser = spawn(CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
                                   '--disable-extensions', `--user-data-dir=${profile}`, url],
                        { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  browser.stderr.on('data', (data) => { stderr += data; });
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no report from the page in ${REPORT_TIMEOUT_MS} ms; chromium:\n${stderr.slice(-2000)}`)),
                       REPORT_TIMEOUT_MS);
  });
  try {
    return await Promise.race([page.report, timeout]);
  } finally {
    clearTimeout(timer);
    const exited = new Promise((resolve) => browser.once('exit', resolve));
    if (browser.exitCode === null) process.kill(-browser.pid, 'SIGKILL');
    await exited;
    rmSync(profile, { recursive: true, force: true });
  }
}

async function chatCount(baseUrl) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  let total = 0;
  for (const match of text.matchAll(/^surge_http_requests_total\{endpoint="\/v1\/chat\/completions",code="\d+"\} (\d+)/gm)) {
    total += Number(match[1]);
  }
  return total;
}

const haveChromium = spawnSync(CHROMIUM, ['--version'], { stdio: 'ignore' }).status === 0;
let allowedPage;
let otherPage;
let surge;

before(async () => {
  if (!haveChromium) return;
  allowedPage = await startPageServer();
  otherPage = await startPageServer();
  surge = await startServer(SURGE, ['--allowed-origins', `http://127.0.0.1:${allowedPage.port}`]);
});

after(async () => {
  for (const page of [allowedPage, otherPage]) page?.server.close();
  if (surge) assert.equal(await stopServer(surge.proc), 0, 'surge serve exits 0 on SIGTERM');
});

test('an allowed origin reads whole and streamed completions and errors', { skip: !haveChromium && `no ${CHROMIUM}` },
  async () => {
    const report = await browse(`http://127.0.0.1:${allowedPage.port}/?api=${surge.baseUrl}`, allowedPage);
    assert.equal(report.whole.status, 200, JSON.stringify(report.whole));
    assert.equal(typeof report.whole.content, 'string');
    assert.equal(report.stream.status, 200, JSON.stringify(report.stream));
    assert.match(report.stream.contentType, /^text\/event-stream/);
    assert.ok(report.stream.text.endsWith('data: [DONE]\n\n'), report.stream.text);
    assert.equal(report.missing.status, 404, JSON.stringify(report.missing));
    assert.equal(report.missing.body.error.code, 'unknown_url');
  });

test('another origin is blocked by the browser before its POST is sent', { skip: !haveChromium && `no ${CHROMIUM}` },
  async () => {
    const before = await chatCount(surge.baseUrl);
    const report = await browse(`http://127.0.0.1:${otherPage.port}/?api=${surge.baseUrl}`, otherPage);
    for (const name of ['whole', 'stream', 'missing']) {
      assert.match(report[name].error ?? '', /TypeError: Failed to fetch/, `${name}: ${JSON.stringify(report[name])}`);
    }
    assert.equal(await chatCount(surge.baseUrl), before, 'the failed preflight kept the POSTs away');
  });
