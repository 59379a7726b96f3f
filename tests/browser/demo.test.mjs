// The in-browser demo, as a person uses it: load the page (real model + the
// package), press "generate", and check the text, the per-token k plot and
// the distribution plot; a screenshot is written for a look.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startDemoServer } from '../../scripts/serve-demo.mjs';

test('the demo page generates text with per-token k and plots', async () => {
  const { server, url } = await startDemoServer(0);
  const profile = mkdtempSync(join(tmpdir(), 'bd-demo-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}/web/demo/`);
    await page.waitForFunction(() => !document.getElementById('go').disabled, null, { timeout: 60000 });
    await page.fill('#tokens', '40');
    await page.click('#go');
    await page.waitForFunction(() => document.body.dataset.done !== undefined, null, { timeout: 120000 });
    const r = await page.evaluate(() => ({
      done: Number(document.body.dataset.done),
      tokens: document.querySelectorAll('#text span.tok').length,
      text: document.getElementById('text').textContent,
      kbars: document.querySelectorAll('#kplot rect').length,
      dbars: document.querySelectorAll('#dplot rect').length,
      status: document.getElementById('status').textContent,
    }));
    assert.deepEqual(errors, []);
    assert.ok(r.done >= 20, r.status);
    assert.equal(r.tokens, r.done);
    assert.equal(r.kbars, r.done);
    assert.ok(r.dbars >= 2);
    assert.ok(r.text.startsWith('It is a truth universally acknowledged'));
    assert.match(r.status, /mean k/);
    await page.screenshot({ path: join(tmpdir(), 'bregman-demo.png'), fullPage: true });
    console.log(`# demo: ${r.status}; screenshot ${join(tmpdir(), 'bregman-demo.png')}`);
    // A bad option is reported on the page, not thrown.
    await page.fill('#alpha', '-1');
    await page.click('#go');
    await page.waitForFunction(() => /RangeError/.test(document.getElementById('status').textContent));
  } finally {
    await context.close();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
