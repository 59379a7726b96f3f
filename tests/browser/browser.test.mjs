// The package in headless Chromium (Debian's, driven by playwright-core): the
// ES module + .wasm build loads, reports SIMD, matches the float64 reference
// and the golden vectors, and draws the same tokens as Node for the same seeds.
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
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  await page.goto(`${url}/tests/browser/page.html`);
  await page.waitForFunction(() => window.bdReady !== undefined);
  await page.evaluate(() => window.bdReady);
  assert.deepEqual(errors, []);
});

after(async () => {
  await chrome?.close();
  server?.close();
});

test('loads in Chromium with the WASM SIMD target', async () => {
  const info = await page.evaluate(async () => {
    const { bd } = await window.bdReady;
    return { target: bd.target, ua: navigator.userAgent };
  });
  console.log(`# ${info.ua}`);
  assert.equal(info.target, 'WASM');
});

test('matches the float64 reference chain in the browser', async () => {
  const failures = await page.evaluate(async () => {
    const { bd, ref } = await window.bdReady;
    const rand = ref.rng(21);
    const bad = [];
    let n = 0;
    for (const v of [1, 3, 64, 4096, 131072]) {
      const logits = ref.llmRow(v, rand);
      for (const o of [{}, { temperature: 0.6 }, { top_k: 10 }, { top_p: 0.9 }, { min_p: 0.05 },
        { top_k: 50, top_p: 0.7, temperature: 1.4 }, { temperature: 0 }]) {
        const err = ref.compareDist(bd.decode(logits, o), ref.chain(logits, o));
        if (err) bad.push(`V=${v} ${JSON.stringify(o)}: ${err}`);
        n++;
      }
    }
    return { bad, n };
  });
  assert.ok(failures.n >= 35);
  assert.deepEqual(failures.bad, []);
});

test('Bregman golden vectors in the browser', async () => {
  const r = await page.evaluate(async () => {
    const { bd, ref, golden } = await window.bdReady;
    const bad = [];
    const cases = ref.goldenCases(golden);
    for (const c of cases) {
      const d = bd.decode(c.logits, c.options);
      const err = d.k !== c.k ? `k ${d.k} != ${c.k}` : ref.compareDist(d, c, 1e-6);
      if (err) bad.push(`${c.name}: ${err}`);
    }
    return { bad, n: cases.length };
  });
  assert.ok(r.n >= 300);
  assert.deepEqual(r.bad, []);
});

test('same seed, same tokens in Node and in Chromium (1000 steps)', async () => {
  const node = await load();
  const logits = llmRow(32000, rng(5));
  const configs = [{ seed: 7 }, { seed: 8, top_k: 40, temperature: 0.8 }, { seed: 9, top_p: 0.9 },
    { seed: 10, bregman: { alpha: 1.5, lambda: 1e-4 } }, { seed: 11, min_p: 0.02, temperature: 1.2 }];
  const want = configs.map((c) => Array.from({ length: 200 }, (_, step) => node.sample(logits, { ...c, step }).token));
  const got = await page.evaluate(async ({ row, configs }) => {
    const { bd } = await window.bdReady;
    const logits = new Float32Array(row);
    return configs.map((c) => Array.from({ length: 200 }, (_, step) => bd.sample(logits, { ...c, step }).token));
  }, { row: Array.from(logits), configs });
  assert.deepEqual(got, want);
  node.dispose();
});

test('stateful mixed chains: same 1000 tokens in Node and in Chromium', async () => {
  const node = await load();
  const logits = llmRow(8192, rng(6), 0.9);
  const configs = [
    { seed: 21, repetition_penalty: 1.3, presence_penalty: 0.2, penalty_last_n: 32, dry_multiplier: 0.8,
      no_repeat_ngram_size: 3, top_k: 100, temperature: 0.9 },
    { seed: 22, typical_p: 0.9, xtc_probability: 0.5, xtc_threshold: 0.05, min_p: 0.01 },
    { seed: 23, mirostat: 2, mirostat_tau: 4, mirostat_eta: 0.2, frequency_penalty: 0.3 },
    { seed: 24, top_k: 300, bregman: { divergence: 'dual', alpha: 1.5, lambda: 1e-3 }, dynatemp_range: 0.4 },
  ];
  const run = (bd) => configs.map((c) => {
    const s = bd.createSampler(c);
    const tokens = Array.from({ length: 1000 }, () => s.sample(logits).token);
    s.dispose();
    return tokens;
  });
  const want = run(node);
  const got = await page.evaluate(async ({ row, configs }) => {
    const { bd } = await window.bdReady;
    const logits = new Float32Array(row);
    return configs.map((c) => {
      const s = bd.createSampler(c);
      const tokens = Array.from({ length: 1000 }, () => s.sample(logits).token);
      s.dispose();
      return tokens;
    });
  }, { row: Array.from(logits), configs });
  assert.deepEqual(got, want);
  node.dispose();
});

test('works inside a module Web Worker', async () => {
  const r = await page.evaluate(async (origin) => {
    const src = `
      import { load } from '${origin}/dist/index.mjs';
      const bd = await load();
      const d = bd.decode(new Float32Array([0.1, 2.5, 1.0, 2.0]), { top_k: 2 });
      const s = bd.sample(new Float32Array([0.1, 2.5, 1.0, 2.0]), { seed: 3, bregman: { alpha: 1.5, k: 2 } });
      postMessage({ target: bd.target, ids: Array.from(d.ids), token: s.token });`;
    const url = URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
    const w = new Worker(url, { type: 'module' });
    const msg = await new Promise((resolve, reject) => {
      w.onmessage = (e) => resolve(e.data);
      w.onerror = (e) => reject(new Error(e.message));
    });
    w.terminate();
    return msg;
  }, url);
  assert.equal(r.target, 'WASM');
  assert.deepEqual(r.ids, [1, 3]);
  assert.ok(r.token === 1 || r.token === 3);
});

test('errors in the browser are RangeError/TypeError and the module keeps working', async () => {
  const r = await page.evaluate(async () => {
    const { bd } = await window.bdReady;
    const names = [];
    for (const f of [() => bd.decode([1]), () => bd.decode(new Float32Array([NaN])),
      () => bd.decode(new Float32Array([1]), { top_p: 2 })]) {
      try { f(); names.push('none'); } catch (e) { names.push(`${e.constructor.name}:${e.message}`); }
    }
    return { names, ok: bd.decode(new Float32Array([1, 2])).ids[0] };
  });
  assert.match(r.names[0], /^TypeError:.*logits/);
  assert.match(r.names[1], /^RangeError:.*NaN/);
  assert.match(r.names[2], /^RangeError:.*top_p/);
  assert.equal(r.ok, 1);
});
