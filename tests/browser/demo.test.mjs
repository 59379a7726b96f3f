// The in-browser demo, as a person uses it: load the page (real model + the
// package), pick two decoders, press "generate both", and check both texts,
// the per-token k plot and the p-vs-q plots; a screenshot is written to
// test-output/demo.png for a look.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { launchChromium } from './chromium.mjs';
import { startDemoServer } from '../../scripts/serve-demo.mjs';

const OUT_DIR = fileURLToPath(new URL('../../test-output/', import.meta.url));

test('the demo page compares two decoders with per-token k and p-vs-q plots', async () => {
  const { server, url } = await startDemoServer(0);
  const chrome = await launchChromium();
  try {
    const page = await chrome.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}/web/demo/`);
    await page.waitForFunction(() => !document.getElementById('go').disabled, null, { timeout: 60000 });
    await page.fill('#tokens', '40');
    // A: Bregman primal (the default), B: min-p 0.1 instead of the default top-k.
    await page.selectOption('#famB', 'min-p');
    await page.fill('#valueB', '0.1');
    await page.click('#go');
    await page.waitForFunction(() => document.body.dataset.done !== undefined, null, { timeout: 180000 });
    const r = await page.evaluate(() => ({
      done: Number(document.body.dataset.done),
      tokensA: document.querySelectorAll('#textA span.tok').length,
      tokensB: document.querySelectorAll('#textB span.tok').length,
      textA: document.getElementById('textA').textContent,
      textB: document.getElementById('textB').textContent,
      labelA: document.getElementById('labelA').textContent,
      labelB: document.getElementById('labelB').textContent,
      kbarsA: document.querySelectorAll('#kplot rect.kA').length,
      kbarsB: document.querySelectorAll('#kplot rect.kB').length,
      pA: document.querySelectorAll('#dplotA rect.p').length,
      qB: Array.from(document.querySelectorAll('#dplotB rect.q'), (e) => Number(e.getAttribute('height'))),
      status: document.getElementById('status').textContent,
    }));
    assert.deepEqual(errors, []);
    assert.ok(r.done >= 20, r.status);
    assert.equal(r.tokensA, r.done);
    assert.equal(r.kbarsA, r.tokensA);
    assert.equal(r.kbarsB, r.tokensB);
    assert.ok(r.tokensB >= 20, r.status);
    assert.equal(r.pA, 16);
    assert.ok(r.qB.some((h) => h > 0) && r.qB.some((h) => h === 0), `min-p 0.1 keeps some of the top 16, not all: ${r.qB}`);
    assert.match(r.labelA, /Bregman primal, alpha 1.5, lambda 0.001/);
    assert.match(r.labelB, /min-p 0.1/);
    assert.ok(r.textA.startsWith('It is a truth universally acknowledged'));
    assert.ok(r.textB.startsWith('It is a truth universally acknowledged'));
    assert.match(r.status, /mean k: A [\d.]+, B [\d.]+/);
    // Clicking a token of B selects that step in both distribution plots.
    await page.click('#textB span.tok[data-i="5"]');
    assert.match(await page.textContent('#dtitleB'), /^B, token 6 /);
    assert.match(await page.textContent('#dtitleA'), /^A, token 6 /);
    mkdirSync(OUT_DIR, { recursive: true });
    await page.screenshot({ path: join(OUT_DIR, 'demo.png'), fullPage: true });
    console.log(`# demo: ${r.status}; screenshot ${join(OUT_DIR, 'demo.png')}`);
    // A bad option is reported on the page, not thrown.
    await page.fill('#alphaA', '-1');
    await page.click('#go');
    await page.waitForFunction(() => /RangeError/.test(document.getElementById('status').textContent));
  } finally {
    await chrome.close();
    server.close();
  }
});
