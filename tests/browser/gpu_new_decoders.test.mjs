// The decoders after the Bregman paper on the WebGPU decoder (headless
// Chromium, SwiftShader): p-less and Top-H over the whole row are answered by
// the planner's explicit fallback (a full readback, reported in gpu.fallback),
// after a top-k by the candidate row; an adaptive-p GPU sampler keeps its EMA
// in a wasm sampler. Every answer equals the CPU path's, bit for bit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openGpuPage } from './gpu_page.mjs';

let page, close;

before(async () => {
  let errors;
  ({ page, errors, close } = await openGpuPage());
  assert.deepEqual(errors, []);
});

after(async () => {
  await close?.();
});

const inPage = (fn, arg) => page.evaluate(async ({ src, arg }) => {
  const h = await window.gpuReady;
  const cases = await import('/tests/browser/gpu_cases.mjs');
  // eslint-disable-next-line no-new-func
  return new Function('h', 'cases', 'arg', `return (${src})(h, cases, arg);`)(h, cases, arg);
}, { src: fn.toString(), arg });

test('p-less, Top-H and adaptive-p: the CPU answer, by fallback or by the candidate row', async () => {
  const r = await inPage(async (h, cases) => {
    const V = 4096;
    const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 1024 });
    const buf = h.device.createBuffer({ size: V * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    const row = cases.llmRow(V, cases.rng(41), 1.1);
    h.device.queue.writeBuffer(buf, 0, row);
    const optionSets = [
      { p_less: true }, { p_less: 'norm' }, { top_h: 0.4 },
      { p_less: true, temperature: 1.5, samplers: ['temperature', 'p_less'] },
      { top_k: 200, top_h: 0.6 }, { top_k: 300, p_less: 'norm' },
      { adaptive_target: 0.3 }, { min_p: 0.02, adaptive_target: 0.2 },
    ];
    const out = [];
    for (const o of optionSets) {
      for (const kind of ['decode', 'sample']) {
        const oo = { ...o, seed: 9 };
        const g = await gd[kind](buf, oo);
        const c = h.bd[kind](row, oo);
        out.push({ label: `${kind} ${JSON.stringify(o)}`, fallback: g.gpu.fallback, diff: cases.sameResult(g, c) });
      }
    }
    // An adaptive-p sampler: the same tokens as the CPU sampler, step by step.
    const sampler = { seed: 12, top_k: 400, adaptive_target: 0.25, adaptive_decay: 0.7 };
    const gs = gd.createSampler(sampler), cs = h.bd.createSampler(sampler);
    let same = 0;
    for (let t = 0; t < 40; t++) if ((await gs.sample(buf)).token === cs.sample(row).token) same++;
    gs.reset();
    cs.reset();
    for (let t = 0; t < 10; t++) if ((await gs.sample(buf)).token === cs.sample(row).token) same++;
    gs.dispose();
    cs.dispose();
    gd.dispose();
    buf.destroy();
    return { out, same };
  });
  for (const o of r.out) console.log(`# ${o.label}: ${o.fallback ?? 'candidate row'}`);
  assert.deepEqual(r.out.filter((o) => o.diff !== null), []);
  // Over the whole row: the planner's explicit fallback, named by the stage.
  for (const o of r.out.filter((x) => !x.label.includes('top_k') && !x.label.includes('min_p'))) {
    assert.match(o.fallback ?? '', /(p_less|top_h|adaptive_p) over the whole row/, o.label);
  }
  assert.equal(r.same, 50);
});
