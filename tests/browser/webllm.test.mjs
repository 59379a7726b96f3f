// bregman-decoders/webllm inside a module Web Worker in headless Chromium: the
// worker registers a BregmanLogitProcessor with WebLLM's WebWorkerMLCEngineHandler
// (as a WebLLM worker script does), and drives it in WebLLM's call order over the
// real model's rows. The tokens and {logprob, k} equal Node's plain sampler draws
// for the same seeds, and resetState (resetChat) makes the chat repeat.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { load } from '../../dist/node.mjs';
import { Llama2 } from '../../web/model/llama2.mjs';
import { launchChromium } from './chromium.mjs';
import { startServer } from './server.mjs';

let server, url, chrome, page;
const bd = await load();
const weights = readFileSync(new URL('../../models/austen-kjv-2m/model.bin', import.meta.url));
const PROMPT = [1, 722, 352, 261, 1539, 348];
const STEPS = 20;

before(async () => {
  ({ server, url } = await startServer());
  chrome = await launchChromium();
  page = await chrome.context.newPage();
  await page.goto(`${url}/tests/browser/page.html`);
  await page.evaluate(() => {
    const worker = new Worker('/tests/browser/webllm_worker.mjs', { type: 'module' });
    let next = 0;
    const pending = new Map();
    worker.onmessage = ({ data }) => { pending.get(data.id)(data); pending.delete(data.id); };
    worker.onerror = (e) => { for (const f of pending.values()) f({ error: `worker error: ${e.message}` }); };
    window.runInWorker = (msg) => new Promise((resolve) => { const id = next++; pending.set(id, resolve); worker.postMessage({ ...msg, id }); });
  });
});

after(async () => {
  await chrome?.close();
  server?.close();
});

function nodeReference(options) {
  const s = bd.createSampler(options);
  const m = new Llama2(weights);
  let logits;
  for (let pos = 0; pos < PROMPT.length; pos++) logits = m.forward(PROMPT[pos], pos);
  const out = [];
  for (let i = 0; i < STEPS; i++) {
    const r = s.sample(logits);
    out.push({ token: r.token, logprob: r.logprob, k: r.k });
    logits = m.forward(r.token, PROMPT.length + i);
  }
  s.dispose();
  return out;
}

for (const [options, genConfig] of [
  [{ min_p: 0.05, repetition_penalty: 1.3, penalty_last_n: -1, seed: 7 }, { temperature: 1, top_p: 1 }],
  [{ bregman: { divergence: 'primal', alpha: 1.5, lambda: 1e-3 }, seed: 8 }, { temperature: 0.7, top_p: 0.6, presence_penalty: 0.5 }],
  [{ mirostat: 2, mirostat_tau: 4, dry_multiplier: 0.8, seed: 9 }, {}],
]) {
  test(`in a Web Worker, WebLLM's call order draws Node's tokens: ${JSON.stringify(options)}`, async () => {
    const r = await page.evaluate((msg) => window.runInWorker(msg), { options, genConfig, prompt: PROMPT, steps: STEPS });
    assert.equal(r.error, undefined, r.error);
    assert.equal(r.inWorker, true);
    assert.equal(r.target, 'WASM');
    const want = nodeReference(options);
    assert.deepEqual(r.tokens, want.map((s) => s.token));
    assert.deepEqual(r.records, want);
    assert.deepEqual(r.again, r.tokens, 'after resetState the chat repeats');
  });
}
