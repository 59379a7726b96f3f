// The package under a strict Content Security Policy (Chrome's Manifest V3
// extensions, hardened sites): `script-src 'self' 'wasm-unsafe-eval'` allows
// WebAssembly but no evaluation of strings. The page and a module worker
// load dist/index.mjs, draw, run a sampler and decode, and must give what
// Node gives; without 'wasm-unsafe-eval', load() must name the policy.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../dist/node.mjs';
import { launchChromium } from './chromium.mjs';
import { startServer } from './server.mjs';
import { cspWork } from './csp/work.mjs';

const STRICT = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; object-src 'none'";
const NO_WASM = "default-src 'self'; script-src 'self'; object-src 'none'";

const closers = [];
after(async () => { for (const close of closers.reverse()) await close(); });

async function openUnder(policy) {
  const { server, url } = await startServer(0, { headers: { 'content-security-policy': policy } });
  closers.push(async () => server.close());
  const chrome = await launchChromium();
  closers.push(() => chrome.close());
  const page = await chrome.context.newPage();
  const violations = [];
  page.on('console', (m) => { if (/Content Security Policy/.test(m.text())) violations.push(m.text()); });
  await page.goto(`${url}/tests/browser/csp/page.html`);
  await page.waitForFunction(() => window.cspResult !== undefined);
  return { result: await page.evaluate(() => window.cspResult), violations };
}

test("under script-src 'self' 'wasm-unsafe-eval' the page and a worker draw what Node draws", async () => {
  const bd = await load();
  const expected = cspWork(bd);
  bd.dispose();
  const { result, violations } = await openUnder(STRICT);
  assert.equal(result.loadError, undefined, result.loadError);
  for (const [where, got] of Object.entries(result)) {
    assert.equal(got.loadError, undefined, `${where}: ${got.loadError}`);
    assert.equal(got.evalAllowed, false, `${where}: the policy must forbid eval for the test to mean anything`);
    const { evalAllowed, ...answers } = got;
    assert.deepEqual(answers, expected, where);
  }
  assert.deepEqual(violations.filter((v) => !/new Function|evalAllowed/.test(v)), []);
});

test("without 'wasm-unsafe-eval', load() says the policy blocks WebAssembly", async () => {
  const { result } = await openUnder(NO_WASM);
  assert.match(result.loadError ?? '', /Content Security Policy/);
  assert.match(result.loadError, /'wasm-unsafe-eval'/);
  assert.doesNotMatch(result.loadError, /Serve the \.wasm/);
});
