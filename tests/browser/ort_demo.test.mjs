// The demo page's onnxruntime-web engine (headless Chromium with WebGPU on
// SwiftShader): the same two decoders and plots as the plain-JS engine, on
// the model's ONNX export with logits and KV cache on the GPU, and the bytes
// read back per token shown (fewer than the row's). The plain-JS engine, the
// default, is tests/browser/demo.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium } from './chromium.mjs';
import { startDemoServer } from '../../scripts/serve-demo.mjs';

test('the demo page generates with onnxruntime-web on WebGPU and shows the bytes read back per token', async () => {
  const { server, url } = await startDemoServer(0);
  const chrome = await launchChromium({ webgpu: true });
  try {
    const page = await chrome.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}/web/demo/`);
    await page.waitForFunction(() => !document.getElementById('go').disabled, null, { timeout: 60000 });
    assert.equal(await page.$eval('#engine option[value=ort]', (o) => o.disabled), false, 'WebGPU engine offered');
    await page.selectOption('#engine', 'ort');
    await page.fill('#tokens', '6');
    await page.selectOption('#famB', 'min-p');
    await page.fill('#valueB', '0.1');
    await page.click('#go');
    await page.waitForFunction(() => document.body.dataset.done !== undefined || /Error/.test(document.getElementById('status').textContent),
      null, { timeout: 300000 });
    const r = await page.evaluate(() => ({
      done: Number(document.body.dataset.done),
      tokensA: document.querySelectorAll('#textA span.tok').length,
      tokensB: document.querySelectorAll('#textB span.tok').length,
      kbarsA: document.querySelectorAll('#kplot rect.kA').length,
      pA: document.querySelectorAll('#dplotA rect.p').length,
      qB: Array.from(document.querySelectorAll('#dplotB rect.q'), (e) => Number(e.getAttribute('height'))),
      status: document.getElementById('status').textContent,
    }));
    console.log(`# ${r.status}`);
    assert.deepEqual(errors, []);
    assert.equal(r.done, 6, r.status);
    assert.equal(r.tokensA, 6);
    assert.equal(r.tokensB, 6);
    assert.equal(r.kbarsA, 6);
    assert.equal(r.pA, 16);
    assert.ok(r.qB.some((h) => h > 0), `${r.qB}`);
    const m = r.status.match(/^onnxruntime-web, WebGPU: .*read back (\d+) B per token \(the row: 16384 B\)$/);
    assert.ok(m, r.status);
    assert.ok(Number(m[1]) < 16384, r.status);
  } finally {
    await chrome.close();
    server.close();
  }
});
