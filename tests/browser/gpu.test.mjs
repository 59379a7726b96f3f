// createGpuDecoder in headless Chromium with WebGPU (SwiftShader's software
// Vulkan here): logits in a GPUBuffer decode to exactly what the CPU path
// gives for the same rows, options and seeds; fallbacks are detected, counted
// and still give the CPU's answer. Fails (never skips) when the browser has no
// WebGPU adapter.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openGpuPage } from './gpu_page.mjs';

let url, chrome, page, close;

before(async () => {
  let errors;
  ({ url, chrome, page, errors, close } = await openGpuPage());
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

test('a WebGPU adapter is there (SwiftShader in headless Chromium)', async () => {
  const info = await inPage(async (h) => ({
    architecture: h.info.architecture, vendor: h.info.vendor, description: h.info.description, f16: h.f16,
  }));
  console.log(`# WebGPU adapter: ${JSON.stringify(info)}`);
  assert.ok(info.architecture !== undefined);
});

test('uniformDraw in JS equals the package draw', async () => {
  const r = await inPage(async (h) => {
    const { uniformDraw } = await import('/web/src/rng.js');
    // Equal logits, no truncation: the draw is the first i with (i + 1) / V > u.
    const V = 1000, row = new Float32Array(V), bad = [];
    for (let step = 0; step < 200; step++) {
      const u = uniformDraw(77n, BigInt(step));
      const t = h.bd.sample(row, { seed: 77, step }).token;
      if (Math.abs(t - Math.floor(u * V)) > 1) bad.push([step, u, t]);
    }
    return bad;
  });
  assert.deepEqual(r, []);
});

// SwiftShader runs the shaders on the CPU (tens of ms per row at V = 32000):
// the full option sweep runs up to V = 32000, a subset at 131072 and 262144.
test('stateless: every decoder family and the default chain equal the CPU path', async () => {
  const r = await inPage(async (h, cases) => cases.statelessSweep(h, [1000, 4096, 32000]));
  console.log(`# ${r.n} calls; paths: ${JSON.stringify(r.paths)}`);
  assert.deepEqual(r.bad, []);
  assert.ok(r.n >= 800);
  // Each kind of answer actually happened: candidate paths and fallbacks.
  for (const p of ['top_k', 'min_p', 'greedy', 'allowed_tokens', 'top_p nucleus restated', 'top_p with the tail mass',
    'bregman with the tail mass', 'every finite logit is a candidate']) {
    assert.ok(r.paths[p] > 0, `path ${p} never taken`);
  }
  for (const p of ['top_p nucleus larger than the candidates', 'no truncation: the draw walks the whole row',
    'top_p boundary within rounding of the normaliser',
    'top_k 1024 >= maxCandidates']) {
    assert.ok(r.paths[`fallback: ${p}`] > 0, `fallback ${p} never taken`);
  }
});

test('stateless at V = 131072 and 262144: the main families equal the CPU path', async () => {
  const r = await inPage(async (h, cases) => cases.statelessSweep(h, [131072, 262144], 2048,
    { shapes: ['llm', 'peaked', 'flat'], sets: [0, 1, 4, 10, 14, 16, 17, 20, 27, 32], kinds: ['sample'] }));
  console.log(`# ${r.n} calls; paths: ${JSON.stringify(r.paths)}`);
  assert.deepEqual(r.bad, []);
  assert.ok(r.n >= 60);
  assert.ok(r.paths.top_k > 0 && r.paths['bregman with the tail mass'] > 0);
});

// The objective of a Bregman decode on the whole row prices the tokens beyond
// the candidates with their sum of p^alpha. Where lambda is small the objective
// is tiny (~lambda k) and that tail far smaller than the row's sum of p^alpha:
// a tail taken as the row's float sum less the candidates' put 5 of the 21
// untempered objectives here more than 3e-5 off (up to 4e-2); summed from the
// tail's own tokens, all within 1.1e-5 (the GPU's normaliser, ~1e-6, times
// alpha / T). Relative tolerance, no absolute allowance. The tempered cases
// also check that a temperature before Bregman (the default order) gives the
// normaliser at that temperature, not at T = 1 (top-p, listed before the
// temperature but off, does not end the walk): such calls take the candidate
// path, not a full readback.
test('Bregman on the whole row: the objective keeps its relative precision when the tail is tiny, after a temperature too', async () => {
  const r = await inPage(async (h, cases) => {
    const out = [];
    for (const V of [4096, 32000]) {
      const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 1024 });
      for (const s of [1.1, 1.5]) {
        const row = cases.llmRow(V, cases.rng(V + 10 * s), s);
        const buf = h.upload(row);
        for (const o of [
          { bregman: { alpha: 4, lambda: 1e-10 } },
          { bregman: { alpha: 4, lambda: 1e-12 } },
          { bregman: { divergence: 'dual', alpha: 2.5, lambda: 1e-8 } },
          { bregman: { divergence: 'dual', alpha: 3, lambda: 1e-11 } },
          { bregman: { alpha: 2, lambda: 1e-7 } },
          { bregman: { divergence: 'dual', alpha: 1.5, lambda: 1e-6 } },
          // After a temperature (the default order runs it before Bregman).
          { temperature: 0.7, bregman: { alpha: 4, lambda: 1e-8 } },
          { temperature: 0.7, bregman: { divergence: 'dual', alpha: 2.5, lambda: 1e-10 } },
          { temperature: 0.5, bregman: { divergence: 'dual', alpha: 3, lambda: 1e-8 } },
          { temperature: 1.3, bregman: { alpha: 2, lambda: 1e-5 } },
        ]) {
          const c = h.bd.decode(row, o);
          const g = await gd.decode(buf, o);
          out.push({ label: `V=${V} s=${s} ${JSON.stringify(o)}`, path: g.gpu.fallback ?? g.gpu.path, k: [g.k, c.k],
            rel: Math.abs(g.objective - c.objective) / Math.abs(c.objective) });
        }
        buf.destroy();
      }
      gd.dispose();
    }
    return out;
  });
  let onPath = 0, temperedOnPath = 0;
  const bad = [];
  for (const x of r) {
    console.log(`# ${x.label}: ${x.path}, k ${x.k[0]}, objective within ${x.rel.toExponential(2)}`);
    assert.equal(x.k[0], x.k[1], x.label);
    if (x.path !== 'bregman with the tail mass') continue;
    onPath++;
    temperedOnPath += x.label.includes('temperature');
    if (!(x.rel <= 3e-5)) bad.push(`${x.label}: objective ${x.rel.toExponential(2)} off`);
  }
  assert.deepEqual(bad, []);
  assert.ok(onPath >= 25, `only ${onPath} of ${r.length} decodes took the tail-mass path`);
  assert.ok(temperedOnPath >= 14, `only ${temperedOnPath} of 16 tempered decodes took the tail-mass path`);
});

// Planner corner cases, each of which could give another answer than the CPU
// path, or read the row back for nothing: top-p before an acting edit in a
// custom order (a restated call would leave the listed ids out), a nucleus of
// exactly min_keep > 256 entries (another order), an invalid top_p (thrown,
// not restated), and greedy with a model's default top-p or a large top-k,
// Bregman after bans alone and decode() with a large top_logprobs (no
// needless full readbacks).
test('planner: custom orders with edits after top-p, min_keep nuclei, invalid top_p, greedy with truncations, Bregman after bans', async () => {
  const r = await inPage(async (h, cases) => {
    const bad = [], paths = {};
    let n = 0;
    for (const V of [4096, 32000]) {
      const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 1024 });
      for (const [shape, row] of [['peaked', cases.llmRow(V, cases.rng(V + 3), 1.8)],
        ['llm', cases.llmRow(V, cases.rng(V + 4), 1.1)]]) {
        const buf = h.upload(row);
        let top = 0;
        for (let i = 1; i < V; i++) if (row[i] > row[top]) top = i;
        const hist = [top, 5, 9, top, 5, 100, 7];
        const sets = [
          { samplers: ['top_p', 'logit_bias'], top_p: 0.5, banned_tokens: [top] },
          { samplers: ['top_p', 'logit_bias'], top_p: 0.9, logit_bias: { [top]: -5 } },
          { samplers: ['top_p', 'penalties', 'temperature'], history: hist, repetition_penalty: 1.3, top_p: 0.9, temperature: 0.8 },
          { top_p: 0.3, min_keep: 300 }, { top_p: 0.3, min_keep: 300, sorted: false },
          { top_p: 0 }, { top_p: -0.5 }, { top_p: 1e-50 }, { top_p: '0.9' },
          { temperature: 0, top_p: 0.9 }, { temperature: 0, top_p: 0.95, history: hist, repetition_penalty: 1.3 },
          { temperature: 0, top_k: 2000 }, { temperature: 0, top_k: 2000, min_p: 0.01, top_p: 0.9 },
          // Bans before Bregman leave the other values as they are: its candidate path.
          { banned_tokens: [top], bregman: { alpha: 1.5, lambda: 1e-3 } },
          { logit_bias: { [top]: -Infinity, 5: -Infinity }, bregman: { divergence: 'dual', alpha: 2, lambda: 1e-4 } },
          // decode() reports no log-probabilities: a large top_logprobs is no reason to read the row.
          { top_k: 10, top_logprobs: 2000 },
          // An edit after the truncation can change a greedy answer: planned as a draw.
          { samplers: ['top_k', 'logit_bias', 'temperature'], temperature: 0, top_k: 2000, logit_bias: { 7: 40 } },
        ];
        for (let s = 0; s < sets.length; s++) {
          for (const kind of ['decode', 'sample']) {
            const o = kind === 'sample' ? { ...sets[s], seed: 500 + s, step: 3 } : sets[s];
            n++;
            const label = `V=${V} ${shape} ${kind} ${JSON.stringify(o)}`;
            const both = await cases.bothPaths(h.bd, gd, kind, row, buf, o, label, paths, bad);
            if (both === null) continue;
            const { c, g, path } = both;
            if (o.temperature === 0 && !o.samplers && g.gpu.fallback) bad.push(`${label}: greedy fell back (${g.gpu.fallback})`);
            if (kind === 'decode' && o.top_logprobs && g.gpu.fallback) bad.push(`${label}: decode fell back (${g.gpu.fallback})`);
            const e = cases.compareGpu(g, c);
            if (e) bad.push(`${label} (${path}): ${e}`);
          }
        }
        buf.destroy();
      }
      gd.dispose();
    }
    return { bad, n, paths };
  });
  console.log(`# ${r.n} calls; paths: ${JSON.stringify(r.paths)}`);
  assert.deepEqual(r.bad, []);
  assert.ok(r.paths.greedy >= 16, 'greedy with truncations took the candidate path');
  assert.ok(r.paths['top_p with the tail mass'] > 0, 'top-p before an edit took the edited call');
  assert.ok(r.paths['fallback: top_k 2000 >= maxCandidates'] > 0, 'greedy with an edit after top-k was planned as a draw');
  assert.ok(r.paths['bregman with the tail mass'] >= 8, 'Bregman after bans took its candidate path');
});

test('stateful chains: 1000 steps, the same tokens as the CPU samplers', async () => {
  const r = await inPage(async (h, cases) => {
    const V = 4096, steps = 1000;
    const chains = [
      { seed: 21, repetition_penalty: 1.3, presence_penalty: 0.2, penalty_last_n: 32, dry_multiplier: 0.8,
        no_repeat_ngram_size: 3, top_k: 100, temperature: 0.9 },
      { seed: 22, top_k: 200, typical_p: 0.9, xtc_probability: 0.5, xtc_threshold: 0.05, min_p: 0.01 },
      { seed: 23, mirostat: 2, top_k: 500, mirostat_tau: 4, mirostat_eta: 0.2, frequency_penalty: 0.3 },
      { seed: 24, top_k: 300, bregman: { divergence: 'dual', alpha: 1.5, lambda: 1e-3 }, dynatemp_range: 0.4 },
      { seed: 25, top_p: 0.9, temperature: 0.8 },
      { seed: 26, bregman: { alpha: 1.5, lambda: 1e-3 } },
      { seed: 27, min_p: 0.05, repetition_penalty: 1.2, temperature: 1.1 },
      { seed: 28, temperature: 0, repetition_penalty: 1.5, penalty_last_n: 16 },
      { seed: 29, repetition_penalty: 1.3, dry_multiplier: 0.5, top_p: 0.85, temperature: 0.9 },
      // A mirostat sampler (state in wasm) with top-p: the edited call, not a restatement.
      { seed: 30, mirostat: 2, mirostat_tau: 5, repetition_penalty: 1.3, top_p: 0.9 },
    ];
    const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 1024 });
    const buf = h.device.createBuffer({ size: V * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    const base = [cases.llmRow(V, cases.rng(5), 1.5), cases.llmRow(V, cases.rng(6), 1.1)];
    const row = new Float32Array(V);
    const bad = [], perChain = [];
    for (const c of chains) {
      const gs = gd.createSampler(c), cs = h.bd.createSampler(c);
      let same = 0, fallbacks = 0;
      for (let t = 0; t < steps; t++) {
        // A new row each step: a rotation of one of two bases.
        const b = base[t % 2];
        for (let i = 0; i < V; i++) row[i] = b[(i + 37 * t) % V];
        h.device.queue.writeBuffer(buf, 0, row);
        const g = await gs.sample(buf);
        const w = cs.sample(row);
        if (g.gpu.fallback) fallbacks++;
        if (g.token === w.token) same++;
        else if (bad.length < 5) bad.push(`${JSON.stringify(c)} step ${t}: gpu ${g.token} cpu ${w.token} (${g.gpu.path})`);
      }
      perChain.push({ chain: JSON.stringify(c), same, fallbacks });
      cs.dispose();
      gs.dispose();
    }
    const stats = gd.stats;
    // The wasm side stays flat: the candidate row reuses one workspace.
    const mem0 = h.bd.memoryBytes(), ws0 = h.bd.workspaceBytes();
    const s2 = gd.createSampler(chains[0]);
    for (let t = 0; t < 50; t++) await s2.sample(buf);
    s2.dispose();
    const flat = h.bd.memoryBytes() === mem0 && h.bd.workspaceBytes() === ws0;
    gd.dispose();
    buf.destroy();
    return { bad, perChain, stats, steps, flat };
  });
  for (const c of r.perChain) console.log(`# ${c.same}/${r.steps} same tokens, ${c.fallbacks} fallbacks: ${c.chain}`);
  console.log(`# totals: ${JSON.stringify(r.stats)}`);
  assert.deepEqual(r.bad, []);
  assert.equal(r.stats.calls, r.steps * r.perChain.length);
  assert.ok(r.flat, 'wasm memory or workspace grew in steady state');
  // Only the top-p chain on the long-tailed base rows may need the whole row.
  for (const c of r.perChain) if (!c.chain.includes('top_p')) assert.equal(c.fallbacks, 0, c.chain);
  // The mirostat sampler's top-p fell back on every step before it took the edited call.
  const miro = r.perChain.find((c) => c.chain.includes('"mirostat":2,"mirostat_tau":5'));
  assert.ok(miro.fallbacks < r.steps / 4, `mirostat + top_p: ${miro.fallbacks} fallbacks`);
  assert.equal(r.stats.fallbacks, r.perChain.reduce((s, c) => s + c.fallbacks, 0));
});

// An unseeded GPU sampler draws a fresh sequence after reset(), as a wasm sampler.
test('GPU samplers: reset() of an unseeded sampler draws a fresh sequence, a seeded one replays', async () => {
  const r = await inPage(async (h, cases) => {
    const V = 4096, row = cases.llmRow(V, cases.rng(70), 0.9), buf = h.upload(row);
    const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 1024 });
    const out = {};
    for (const [name, o] of [['plain', { top_k: 200, temperature: 1.3 }], ['mirostat', { mirostat: 2, top_k: 500 }],
      ['seeded', { top_k: 200, temperature: 1.3, seed: 5 }]]) {
      const s = gd.createSampler(o);
      const draw = async () => { const t = []; for (let i = 0; i < 10; i++) t.push((await s.sample(buf)).token); return t; };
      const a = await draw();
      s.reset();
      out[name] = [a, await draw()];
      s.dispose();
    }
    gd.dispose();
    buf.destroy();
    return out;
  });
  assert.notDeepEqual(r.plain[0], r.plain[1]);
  assert.notDeepEqual(r.mirostat[0], r.mirostat[1]);
  assert.deepEqual(r.seeded[0], r.seeded[1]);
});

test('batches: [rows, V] with per-row options and samplers', async () => {
  const r = await inPage(async (h, cases) => {
    const V = 8192, rows = 3;
    const data = new Float32Array(rows * V);
    for (let b = 0; b < rows; b++) data.set(cases.llmRow(V, cases.rng(40 + b), 1.2 + 0.3 * b), b * V);
    const buf = h.upload(data);
    const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 512 });
    const per = [{ top_k: 20, seed: 1 }, { top_p: 0.8, seed: 2 }, { bregman: { alpha: 2, lambda: 1e-3 }, seed: 3 }];
    const bad = [];
    const g = await gd.sampleBatch(buf, rows, per);
    const c = h.bd.sampleBatch(data, V, per);
    g.forEach((x, i) => { const e = cases.compareGpu(x, c[i]); if (e) bad.push(`sample row ${i}: ${e}`); });
    const gdec = await gd.decodeBatch(buf, rows, { min_p: 0.05 });
    const cdec = h.bd.decodeBatch(data, V, { min_p: 0.05 });
    gdec.forEach((x, i) => { const e = cases.compareGpu(x, cdec[i]); if (e) bad.push(`decode row ${i}: ${e}`); });
    // Samplers per row: three steps each.
    const gsam = per.map((o) => gd.createSampler(o)), csam = per.map((o) => h.bd.createSampler(o));
    for (let t = 0; t < 3; t++) {
      const gs = await gd.sampleBatch(buf, rows, gsam);
      const cs = h.bd.sampleBatch(data, V, csam);
      gs.forEach((x, i) => { if (x.token !== cs[i].token) bad.push(`sampler row ${i} step ${t}`); });
    }
    gd.dispose();
    return { bad, paths: g.map((x) => x.gpu.path) };
  });
  assert.deepEqual(r.bad, []);
});

test('fallbacks are detected and counted; errors match the CPU path', async () => {
  const r = await inPage(async (h, cases) => {
    const V = 32000;
    const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 256 });
    const flat = cases.flatRow(V, cases.rng(9));
    const buf = h.upload(flat);
    const before = gd.stats;
    const a = await gd.sample(buf, { top_p: 0.9, seed: 4 });
    const b = await gd.decode(buf, { top_k: 300 });
    const c = await gd.decode(buf, { top_k: 100 });
    const after = gd.stats;
    const same = [cases.compareGpu(a, h.bd.sample(flat, { top_p: 0.9, seed: 4 })),
      cases.compareGpu(b, h.bd.decode(flat, { top_k: 300 })), cases.compareGpu(c, h.bd.decode(flat, { top_k: 100 }))];
    const nan = new Float32Array(V); nan[123] = NaN;
    const nanBuf = h.upload(nan);
    const errs = [];
    for (const f of [() => gd.decode(nanBuf, {}), () => gd.decode(new Float32Array(V), {}),
      () => gd.decode(buf, { top_p: 2 }), () => gd.decode(buf, {}, 1), () => gd.sample(buf, { banned_tokens: 5 }),
      () => gd.decode(buf, { logit_bias: { 40000: 1 }, top_k: 3 })]) {
      try { await f(); errs.push('none'); } catch (e) { errs.push(`${e.constructor.name}: ${e.message}`); }
    }
    const ctor = [];
    for (const cfg of [{ vocab: 0 }, { vocab: V, maxCandidates: 10 }, { vocab: V, dtype: 'bf16' }, null]) {
      try { h.bd.createGpuDecoder(h.device, cfg); ctor.push('none'); } catch (e) { ctor.push(e.constructor.name); }
    }
    return { a: a.gpu, b: b.gpu, c: c.gpu, before, after, same, errs, ctor, f16: h.f16, V };
  });
  assert.equal(r.a.fallback, 'top_p nucleus larger than the candidates');
  assert.equal(r.a.bytesRead > 4 * r.V, true);
  assert.equal(r.b.fallback, 'top_k 300 >= maxCandidates');
  assert.equal(r.c.fallback, null);
  assert.ok(r.c.bytesRead < 8 * 1024, `candidate path read ${r.c.bytesRead} bytes`);
  assert.equal(r.after.fallbacks - r.before.fallbacks, 2);
  assert.equal(r.after.calls - r.before.calls, 3);
  assert.deepEqual(r.same, [null, null, null]);
  assert.match(r.errs[0], /^RangeError: logits contains NaN/);
  assert.match(r.errs[1], /^TypeError: logits must be a GPUBuffer/);
  assert.match(r.errs[2], /^RangeError: top_p/);
  assert.match(r.errs[3], /^RangeError: .*no row 1/);
  assert.match(r.errs[4], /^TypeError: banned_tokens/);
  assert.match(r.errs[5], /^RangeError: logit_bias: token id 40000/);
  assert.deepEqual(r.ctor, ['RangeError', 'RangeError', 'RangeError', 'TypeError']);
});

// f16 rows are read as packed pairs and decoded from their bits: no
// shader-f16 needed, so SwiftShader runs them too. The CPU path gets the same
// halves as f32. A row of subnormal halves (|x| < 2^-14: logits near zero)
// checks that none is flushed (WGSL's unpack2x16float may flush them).
test('f16 logits: the same answers as the CPU path on the halves', async () => {
  const r = await inPage(async (h, cases) => {
    const bad = [], paths = {};
    for (const [V, rows] of [[4097, 2], [32000, 3]]) {
      const data = new Float32Array(rows * V);
      for (let b = 0; b < rows; b++) data.set(cases.llmRow(V, cases.rng(60 + b), 1.3 + 0.3 * b), b * V);
      data[7] = -Infinity;  // a banned token survives the half encoding
      const { half, back } = cases.toHalf(data);
      const buf = h.upload(new Uint8Array(half.buffer));
      const gd = h.bd.createGpuDecoder(h.device, { vocab: V, dtype: 'f16' });
      for (let b = 0; b < rows; b++) {
        const row = back.subarray(b * V, (b + 1) * V);
        for (const o of [{ top_k: 40, seed: 1 }, { min_p: 0.05, seed: 2 }, { temperature: 0 }, { seed: 3 },
          { top_p: 0.8, seed: 4 }, { bregman: { alpha: 1.5, lambda: 1e-3 }, seed: 5 }, { top_k: 10, logprobs: true, seed: 6 }]) {
          for (const kind of ['sample', 'decode']) {
            const g = await gd[kind](buf, o, b);
            paths[g.gpu.fallback ? `fallback: ${g.gpu.fallback}` : g.gpu.path] = 1;
            const e = cases.compareGpu(g, h.bd[kind](row, o));
            if (e) bad.push(`V=${V} row ${b} ${kind} ${JSON.stringify(o)}: ${e}`);
          }
        }
      }
      // Subnormal halves of both signs (and +-0), with a few normal ones: the
      // order among them decides every answer.
      const sub = new Uint16Array(V + (V % 2)), subBack = new Float32Array(V);
      const rand = cases.rng(V + 77);
      for (let i = 0; i < V; i++) {
        const normal = rand() < 0.01;
        const hm = Math.floor(rand() * 1024), sign = rand() < 0.4 ? 0x8000 : 0;
        sub[i] = normal ? sign | (1 << 10) | hm : sign | hm;
        subBack[i] = (sign ? -1 : 1) * (normal ? (1 + hm / 1024) * 2 ** -14 : hm * 2 ** -24);
      }
      const subBuf = h.upload(new Uint8Array(sub.buffer));
      for (const o of [{ top_k: 40, seed: 1 }, { temperature: 0 }, { min_p: 0.9999, seed: 2 }, { top_k: 5, seed: 3 }]) {
        for (const kind of ['sample', 'decode']) {
          const g = await gd[kind](subBuf, o);
          paths[g.gpu.fallback ? `fallback: ${g.gpu.fallback}` : g.gpu.path] = 1;
          const e = cases.compareGpu(g, h.bd[kind](subBack, o));
          if (e) bad.push(`V=${V} subnormal row ${kind} ${JSON.stringify(o)}: ${e}`);
        }
      }
      const nan = new Uint16Array(V + (V % 2)); nan[5] = 0x7e00;
      const nanBuf = h.upload(new Uint8Array(nan.buffer));
      try { await gd.decode(nanBuf, {}); bad.push('NaN half accepted'); } catch (e) {
        if (!/NaN/.test(e.message)) bad.push(`NaN half: ${e.message}`);
      }
      gd.dispose();
    }
    return { bad, paths: Object.keys(paths) };
  });
  console.log(`# f16 paths: ${r.paths.join(', ')}`);
  assert.deepEqual(r.bad, []);
  assert.ok(r.paths.includes('top_k') && r.paths.includes('top_p nucleus restated'));
});

test('the bench page (npm run bench:gpu) runs and reports bytes read back', async () => {
  const bench = await chrome.context.newPage();
  const errors = [];
  bench.on('pageerror', (e) => errors.push(String(e)));
  await bench.goto(`${url}/web/bench/gpu.html?auto&reps=1&sizes=32000`);
  await bench.waitForFunction(() => window.benchResults !== undefined || document.getElementById('status').textContent.startsWith('Error'), null, { timeout: 120000 });
  const r = await bench.evaluate(() => ({ results: window.benchResults, status: document.getElementById('status').textContent }));
  await bench.close();
  assert.deepEqual(errors, []);
  assert.equal(r.status, 'done');
  assert.equal(r.results.length, 5);
  for (const x of r.results) {
    assert.equal(x.readbackBytes, 4 * 32000);
    if (!x.path.startsWith('fallback')) assert.ok(x.gpuBytes < x.readbackBytes / 4, JSON.stringify(x));
  }
  console.log(`# bench (SwiftShader, meaningless timings): ${r.results.map((x) => `${JSON.stringify(x.options)} ${x.gpuBytes} B (${x.path})`).join('; ')}`);
});

// docs/api.md's rule for the wasm objects ("Using a disposed sampler or
// instance ... is a TypeError") holds for the GPU decoder and its samplers:
// they threw a plain Error, and a disposed GPU sampler went on drawing.
test('a disposed GPU decoder or GPU sampler throws TypeError, and dispose() twice is fine', async () => {
  const r = await inPage(async (h) => {
    const V = 4096;
    const kind = async (f) => {
      try { await f(); return 'no error'; } catch (e) { return `${e.constructor.name}: ${e.message}`; }
    };
    const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 256 });
    const buf = h.device.createBuffer({ size: V * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    h.device.queue.writeBuffer(buf, 0, new Float32Array(V).map((_, i) => Math.sin(i)));
    const out = {};
    for (const options of [{ seed: 1, top_k: 40 }, { seed: 2, mirostat: 2 }]) {
      const s = gd.createSampler(options);
      const live = (await s.sample(buf)).token;
      s.dispose();
      s.dispose();
      const key = JSON.stringify(options);
      out[key] = {
        live: typeof live,
        sample: await kind(() => s.sample(buf)),
        decode: await kind(() => s.decode(buf)),
        accept: await kind(() => s.accept(1)),
        reset: await kind(() => s.reset()),
        clone: await kind(() => s.clone()),
        step: await kind(() => s.step),
        historyLength: await kind(() => s.historyLength),
      };
    }
    const kept = gd.createSampler({ seed: 3 });
    gd.dispose();
    gd.dispose();
    out.decoder = {
      decode: await kind(() => gd.decode(buf, { seed: 1 })),
      sample: await kind(() => gd.sample(buf, { seed: 1 })),
      createSampler: await kind(() => gd.createSampler({})),
      samplerOfIt: await kind(() => kept.sample(buf)),
    };
    // The wasm instance keeps working.
    out.cpu = typeof h.bd.sample(new Float32Array(V).fill(1), { seed: 1 }).token;
    buf.destroy();
    return out;
  });
  for (const [key, calls] of Object.entries(r)) {
    if (key === 'cpu') continue;
    for (const [call, got] of Object.entries(calls)) {
      if (call === 'live') { assert.equal(got, 'number', key); continue; }
      const what = key === 'decoder' ? 'GPU decoder' : 'sampler';
      assert.equal(got, `TypeError: this ${what} was disposed`, `${key} ${call}`);
    }
  }
  assert.equal(r.cpu, 'number');
});
