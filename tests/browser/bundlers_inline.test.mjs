// The inline entry (dist/inline.mjs: the browser entry with its .wasm
// embedded) in headless Chromium, as a CDN <script type="module"> uses it:
// with every .wasm request refused it decodes and draws the same numbers as
// Node; its size, and its start-up time against the default entry's (each in
// a fresh page, HTTP cache off), are printed for docs/bundlers.md.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { launchChromium } from './chromium.mjs';
import { startServer } from './server.mjs';
import { checkRow, checkRun, expectedResult, pageResult, pageScript, repoRoot } from '../bundlers/harness.mjs';

let server, url, chrome;

before(async () => {
  ({ server, url } = await startServer());
  chrome = await launchChromium();
});

after(async () => {
  await chrome?.close();
  server?.close();
});

// A fresh page on the server's origin (an empty document), HTTP cache off.
async function blankPage({ refuseWasm = false } = {}) {
  const page = await chrome.context.newPage();
  const cdp = await chrome.context.newCDPSession(page);
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const wasmRequests = [];
  page.on('request', (r) => { if (/\.wasm(\?|$)/.test(r.url())) wasmRequests.push(r.url()); });
  if (refuseWasm) await page.route(/\.wasm(\?|$)/, (route) => route.abort());
  await page.route(`${url}/blank.html`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>blank</title>' }));
  await page.goto(`${url}/blank.html`);
  return { page, wasmRequests };
}

test('the inline entry decodes in Chromium with every .wasm request refused, as Node does', async () => {
  const want = await expectedResult();
  const { page, wasmRequests } = await blankPage({ refuseWasm: true });
  try {
    const got = await page.evaluate(async ({ entry, row, run }) => {
      const { load } = await import(entry);
      const checkRow = new Function(`return (${row})`)();
      const checkRun = new Function(`return (${run})`)();
      return checkRun(await load(), checkRow());
    }, { entry: `${url}/dist/inline.mjs`, row: checkRow.toString(), run: checkRun.toString() });
    assert.deepEqual(got, want);
    assert.deepEqual(wasmRequests, []);
    // The default entry, in the same conditions, cannot load: the test refuses what it needs.
    const bare = await page.evaluate(async (entry) => {
      const { load } = await import(entry);
      return load().then(() => 'loaded', (e) => e.message);
    }, `${url}/dist/index.mjs`);
    assert.match(bare, /could not instantiate bregman_decoders\.wasm/);
  } finally {
    await page.close();
  }
});

test("the inline entry under script-src 'self' 'wasm-unsafe-eval' (a Manifest V3 extension's policy)", async () => {
  const want = await expectedResult();
  const policy = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; object-src 'none'";
  const { server: strict, url: strictUrl } = await startServer(0, { headers: { 'content-security-policy': policy } });
  const headers = { 'content-security-policy': policy };
  const html = `${strictUrl}/inline.html`, script = `${strictUrl}/inline-check.mjs`;
  try {
    await chrome.context.route(html, (route) => route.fulfill({ contentType: 'text/html', headers,
      body: '<!doctype html><script type="module" src="/inline-check.mjs"></script>' }));
    await chrome.context.route(script, (route) => route.fulfill({ contentType: 'text/javascript', headers,
      body: pageScript('/dist/inline.mjs') }));
    const got = await pageResult(chrome.context, `${strictUrl}/inline.html`);
    const { wasmRequests, pageErrors, ...result } = got;
    assert.deepEqual(result, want);
    assert.deepEqual(wasmRequests, []);
  } finally {
    await chrome.context.unrouteAll();
    strict.close();
  }
});

test('the inline entry: size and start-up time against the default entry', async () => {
  const dist = (f) => readFileSync(`${repoRoot}/dist/${f}`);
  const wasm = dist('bregman_decoders.wasm');
  const inline = dist('inline.mjs');
  const defaultJs = Buffer.concat([dist('index.mjs'), dist('bregman_decoders.mjs')]);
  const kb = (b) => `${(b.length / 1024).toFixed(1)} KiB raw, ${(gzipSync(b, { level: 9 }).length / 1024).toFixed(1)} KiB gzip`;
  console.log(`# default entry: index.mjs + bregman_decoders.mjs ${kb(defaultJs)}; bregman_decoders.wasm ${kb(wasm)}`);
  console.log(`# inline entry: inline.mjs ${kb(inline)}`);
  // The .wasm is in it, as base64 (4 characters per 3 bytes).
  assert.ok(inline.length > (wasm.length * 4) / 3, 'inline.mjs is smaller than its .wasm as base64');
  // Start-up: import() of the entry to load()'s instance, each in a fresh page
  // with the HTTP cache off, turns alternating.
  const times = { default: [], inline: [] };
  for (let i = 0; i < 7; i++) {
    for (const [name, entry] of [['default', 'index.mjs'], ['inline', 'inline.mjs']]) {
      const { page } = await blankPage();
      try {
        times[name].push(await page.evaluate(async (src) => {
          const t0 = performance.now();
          const { load } = await import(src);
          const bd = await load();
          const ms = performance.now() - t0;
          bd.decode(new Float32Array([0, 1, 2]), { top_k: 1 });
          return ms;
        }, `${url}/dist/${entry}`));
      } finally {
        await page.close();
      }
    }
  }
  const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  console.log(`# start-up (import() to load() resolved, local server, median of 7): default ${median(times.default).toFixed(1)} ms, ` +
    `inline ${median(times.inline).toFixed(1)} ms`);
  for (const t of [...times.default, ...times.inline]) assert.ok(t > 0 && t < 30_000);
});
