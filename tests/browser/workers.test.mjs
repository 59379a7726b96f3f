// Decoders in several Web Workers at once (headless Chromium): each module
// worker loads the package (its own wasm instance and memory), runs stateless
// seeded draws, a stateful sampler chain and a decode, all workers at the same
// time, plus errors and a dispose() in each. Every worker must return exactly
// the tokens Node draws for the same rows and seeds, and the errors must be
// the named RangeError/TypeError, never a trap.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../dist/node.mjs';
import { llmRow, rng } from '../js/reference.mjs';
import { launchChromium } from './chromium.mjs';
import { startServer } from './server.mjs';

let server, url, chrome, page;

before(async () => {
  ({ server, url } = await startServer());
  chrome = await launchChromium();
  page = await chrome.context.newPage();
  await page.goto(`${url}/tests/browser/page.html`);
});

after(async () => {
  await chrome?.close();
  server?.close();
});

// What each worker runs; also run by Node for the expected answer.
const WORK = `
export function work(bd, ref, id) {
  const v = 5000 + 1000 * id;
  const logits = ref.llmRow(v, ref.rng(100 + id));
  const stateless = [];
  for (let step = 0; step < 200; step++) {
    stateless.push(bd.sample(logits, { seed: id, step, top_k: 40, temperature: 0.9 }).token);
  }
  const s = bd.createSampler({ seed: 7 + id, repetition_penalty: 1.2, min_p: 0.02,
    bregman: { alpha: 1.5, lambda: 1e-3 } });
  const stateful = [];
  for (let i = 0; i < 200; i++) stateful.push(s.sample(logits).token);
  s.dispose();
  const d = bd.decode(logits, { top_p: 0.8 });
  const errors = [];
  for (const f of [() => bd.decode(logits, { bregman: { alpha: 1.5, k: v + 1 } }),
    () => bd.sample(logits, { history: [v], repetition_penalty: 1.1 }),
    () => bd.decode(new Float32Array(bd.maxVocab + 1)), () => bd.decode([1, 2])]) {
    try { f(); errors.push('none'); } catch (e) { errors.push(e.constructor.name); }
  }
  return { v, stateless, stateful, ids: Array.from(d.ids), errors };
}`;

test('four decoders in four Web Workers at once draw what Node draws', async () => {
  const n = 4;
  const results = await page.evaluate(async ({ origin, work, n }) => {
    const workUrl = URL.createObjectURL(new Blob([work], { type: 'text/javascript' }));
    const src = `
      import { load } from '${origin}/dist/index.mjs';
      import * as ref from '${origin}/tests/js/reference.mjs';
      import { work } from '${workUrl}';
      onmessage = async (e) => {
        const bd = await load();
        const out = work(bd, ref, e.data);
        out.target = bd.target;
        bd.dispose();
        let afterDispose = 'none';
        try { bd.decode(new Float32Array([1])); } catch (err) { afterDispose = err.constructor.name; }
        out.afterDispose = afterDispose;
        postMessage(out);
      };`;
    const url = URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
    const workers = Array.from({ length: n }, () => new Worker(url, { type: 'module' }));
    const answers = workers.map((w, id) => new Promise((resolve, reject) => {
      w.onmessage = (e) => resolve(e.data);
      w.onerror = (e) => reject(new Error(`worker ${id}: ${e.message}`));
    }));
    workers.forEach((w, id) => w.postMessage(id));  // all start together
    const out = await Promise.all(answers);
    workers.forEach((w) => w.terminate());
    return out;
  }, { origin: url, work: WORK, n });

  const { work } = await import(`data:text/javascript,${encodeURIComponent(WORK)}`);
  const bd = await load();
  const ref = { llmRow, rng };
  for (let id = 0; id < n; id++) {
    const want = work(bd, ref, id);
    const got = results[id];
    assert.equal(got.target, 'WASM');
    assert.equal(got.v, want.v);
    assert.deepEqual(got.stateless, want.stateless, `worker ${id}: stateless draws`);
    assert.deepEqual(got.stateful, want.stateful, `worker ${id}: sampler draws`);
    assert.deepEqual(got.ids, want.ids, `worker ${id}: decode`);
    assert.deepEqual(got.errors, ['RangeError', 'RangeError', 'RangeError', 'TypeError']);
    assert.deepEqual(want.errors, got.errors);
    assert.equal(got.afterDispose, 'TypeError');
  }
  bd.dispose();
});
