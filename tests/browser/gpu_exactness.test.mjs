// The GPU decoder's exactness promise under adversarial rows and call
// orders (docs/webgpu.md): every call answers what the CPU path answers on
// the same row, or reports a fallback.
//   - phantoms (the tail mass on the candidate row): rows at large offsets
//     (logits 1e3 to 1e7, where one float step is up to a whole unit), bans
//     and logit biases, edited top-p and Bregman, scanned around the rows
//     where a single rounded phantom logit missed its mass;
//   - GPU samplers: accept / reset / clone / dispose made while a call is
//     pending act after it, as on the CPU sampler;
//   - errors before any GPU work, stats that count every call and byte,
//     dispose() in flight, buffers of another device or destroyed;
//   - readback never larger than the row.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openGpuPage } from './gpu_page.mjs';

let page, close, errors;

before(async () => {
  ({ page, close, errors } = await openGpuPage());
  await page.evaluate(async () => {
    const h = await window.gpuReady;
    window.unhandled = [];
    window.addEventListener('unhandledrejection', (e) => window.unhandled.push(String(e.reason)));
    window.uncaptured = [];
    h.device.addEventListener('uncapturederror', (e) => window.uncaptured.push(e.error.message));
  });
});

after(async () => {
  const left = await page?.evaluate(() => ({ unhandled: window.unhandled, uncaptured: window.uncaptured }));
  await close?.();
  assert.deepEqual(errors, []);
  // Nothing this file did left an error on the page's device or unhandled.
  assert.deepEqual(left, { unhandled: [], uncaptured: [] });
});

const inPage = (fn, arg) => page.evaluate(async ({ src, arg }) => {
  const h = await window.gpuReady;
  const cases = await import('/tests/browser/gpu_cases.mjs');
  const err = (e) => `${e.constructor.name}: ${e.message}`;
  // One call on both paths: { n, bad, fallbacks } updated; GPU == CPU or a
  // reported fallback (errors: the same class and message).
  const tally = { n: 0, bad: [], fallbacks: 0, paths: {} };
  const check = async (gd, kind, row, buf, o, label) => {
    let c, g;
    try { c = h.bd[kind](row, o); } catch (e) { c = err(e); }
    try { g = await gd[kind](buf, o); } catch (e) { g = err(e); }
    tally.n++;
    if (typeof c === 'string' || typeof g === 'string') {
      if (c !== g) tally.bad.push(`${label}: gpu ${typeof g === 'string' ? g : 'ok'} / cpu ${typeof c === 'string' ? c : 'ok'}`);
      return;
    }
    const path = g.gpu.fallback ? `fallback: ${g.gpu.fallback}` : g.gpu.path;
    tally.paths[path] = (tally.paths[path] ?? 0) + 1;
    if (g.gpu.fallback) tally.fallbacks++;
    const e = cases.compareGpu(g, c);
    if (e) tally.bad.push(`${label} [${path}]: ${e}`);
  };
  // eslint-disable-next-line no-new-func
  return new Function('h', 'cases', 'arg', 'ext', `return (${src})(h, cases, arg, ext);`)(h, cases, arg, { err, check, tally });
}, { src: fn.toString(), arg });

const report = (name, r) => {
  console.log(`# ${name}: ${r.n} calls, ${r.bad.length} mismatches, ${r.fallbacks} fallbacks; paths ${JSON.stringify(r.paths)}`);
  for (const b of r.bad.slice(0, 10)) console.log(`# BAD ${b}`);
};

test('edited top-p on rows at large offsets (1e3 .. 1e7) with a logit bias: GPU == CPU or a reported fallback', async () => {
  const r = await inPage(async (h, cases, arg, ext) => {
    const V = 4096;
    const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 256 });
    const row = new Float32Array(V);
    // The row where k was 4 for the CPU's 3, and its scan over top_p.
    for (let i = 0; i < V; i++) row[i] = i < 20 ? 1e6 + 5 - 0.25 * i : i < 720 ? 1e6 - 1 : -Infinity;
    const found = h.upload(row);
    for (let s = 1; s < 256; s++) {
      await ext.check(gd, 'decode', row, found, { top_p: Math.fround(s === 98 ? 0.383 : s / 256), logit_bias: { 1000: 0.5 } }, `found row, top_p #${s}`);
    }
    found.destroy();
    for (const off of [1e3, 1e4, 1e5, 1e6, 1e7, -1e6]) {
      // A head of 20 logits 0.25 apart above a plateau of 700 at off - 1 (the
      // rest -Infinity), and the plateau's width and the head's step varied.
      for (const [head, step, plateau] of [[20, 0.25, 720], [12, 0.5, 300], [40, 0.0625, 1500]]) {
        for (let i = 0; i < V; i++) row[i] = i < head ? off + 5 - step * i : i < plateau ? off - 1 : -Infinity;
        const buf = h.upload(row);
        for (let s = 1; s < 64; s++) {
          const top = Math.fround(s / 64 + 0.003 * (s % 5));
          const o = s % 3 === 0 ? { top_p: top, logit_bias: { 1000: 0.5, 3: -2 } }
            : s % 3 === 1 ? { top_p: top, logit_bias: { [head + 1]: 1.5 }, temperature: 0.7 }
              : { top_p: top, history: [0, 1, 1, head + 3], repetition_penalty: 1.3 };
          await ext.check(gd, s % 2 ? 'decode' : 'sample', row, buf, { ...o, seed: s }, `off ${off} ${head}/${step}/${plateau} ${JSON.stringify(o)}`);
        }
        buf.destroy();
      }
    }
    gd.dispose();
    return ext.tally;
  });
  report('edited top-p at large offsets', r);
  assert.deepEqual(r.bad, []);
  assert.ok(r.n >= 1300);
  // The candidate path, not only fallbacks.
  assert.ok(r.paths['top_p with the tail mass'] >= r.n / 2, JSON.stringify(r.paths));
});

test('Bregman with bans and at large offsets: GPU == CPU or a reported fallback', async () => {
  const r = await inPage(async (h, cases, arg, ext) => {
    // row[i] = i < 4 ? 2 : i < V / 2 ? 0 : -1 shifted by `off`, and the ban
    // set (the top of the row, from `from` V / 1024 on) varied around the
    // free slots. At V = 1024 the larger ban sets make the selection read
    // more than the row (a full readback); at V = 2048 they stay on the
    // candidate path.
    for (const V of [1024, 2048]) {
      const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 256 });
      const row = new Float32Array(V);
      for (const off of [0, 1e3, 1e5, 1e6, 1e7]) {
        for (let i = 0; i < V; i++) row[i] = off + (i < 4 ? 2 : i < V / 2 ? 0 : -1);
        const buf = h.upload(row);
        for (const from of [256, 384, 500, 512, 600, 768, 1000].map((x) => x * V / 1024)) {
          const banned = Array.from({ length: V - from }, (_, i) => from + i);
          for (const [b, extra] of [[{ alpha: 1.5, lambda: 1e-3 }, {}], [{ alpha: 2, lambda: 1e-2 }, { temperature: 0.8 }],
            [{ divergence: 'dual', alpha: 1.5, lambda: 1e-4 }, {}], [{ alpha: 0.7, k: 6 }, {}]]) {
            const o = { bregman: b, banned_tokens: banned, ...extra };
            for (const kind of ['decode', 'sample']) {
              await ext.check(gd, kind, row, buf, kind === 'sample' ? { ...o, seed: 97 + from } : o, `V=${V} off ${off} bans ${from}.. ${JSON.stringify(b)} ${kind}`);
            }
          }
        }
        buf.destroy();
      }
      gd.dispose();
    }
    const V = 1024;
    const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 256 });
    const row = new Float32Array(V);
    // The row that drew token 1 where the CPU draws 2 (phantoms counted in
    // banned slots), as it was found.
    {
      for (let i = 0; i < V; i++) row[i] = i < 4 ? 2 : i < 512 ? 0 : -1;
      const buf = h.upload(row);
      const o = { bregman: { alpha: 1.5, lambda: 1e-3 }, banned_tokens: Array.from({ length: 512 }, (_, i) => 512 + i), seed: 97 };
      await ext.check(gd, 'sample', row, buf, o, 'found row, sample');
      await ext.check(gd, 'decode', row, buf, o, 'found row, decode');
      buf.destroy();
    }
    // LLM-shaped rows at large offsets, with a few bans.
    for (const off of [1e3, 1e4, 1e6, 1e7]) {
      for (let s = 0; s < 6; s++) {
        const l = cases.llmRow(V, cases.rng(300 + s), 1.1 + 0.3 * s);
        for (let i = 0; i < V; i++) row[i] = off + l[i];
        const buf = h.upload(row);
        const o = { bregman: { alpha: 1.5, lambda: 1e-3 }, banned_tokens: [s, s + 7, 900 + s] };
        await ext.check(gd, 'decode', row, buf, o, `llm off ${off} #${s} decode`);
        await ext.check(gd, 'sample', row, buf, { ...o, seed: s }, `llm off ${off} #${s} sample`);
        buf.destroy();
      }
    }
    gd.dispose();
    return ext.tally;
  });
  report('Bregman with bans at large offsets', r);
  assert.deepEqual(r.bad, []);
  assert.ok(r.n >= 600);
  assert.ok(r.paths['bregman with the tail mass'] >= 100, JSON.stringify(r.paths));
});

test('GPU samplers: accept / reset / clone / dispose made while a call is pending act after it, as on the CPU sampler', async () => {
  const r = await inPage(async (h, cases, arg, ext) => {
    const V = 3000, bad = [];
    const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 256 });
    const row = cases.llmRow(V, cases.rng(17), 1.2), buf = h.upload(row);
    const state = (s) => [s.step, s.historyLength];
    const same = (label, g, c) => { if (JSON.stringify(g) !== JSON.stringify(c)) bad.push(`${label}: gpu ${JSON.stringify(g)} cpu ${JSON.stringify(c)}`); };
    // Each interleaving: the GPU sampler's calls made without awaiting, then
    // the CPU sampler's in the same order; tokens, steps and histories agree.
    const interleavings = {
      'sample, accept': async (s) => { const p = s.sample(buf); s.accept(7); return [(await p).token]; },
      'sample, accept, sample, accept': async (s) => {
        const p1 = s.sample(buf); s.accept(11); const p2 = s.sample(buf); s.accept(12);
        return [(await p1).token, (await p2).token];
      },
      'sample, reset': async (s) => { const p = s.sample(buf); s.reset(); return [(await p).token]; },
      'sample, clone': async (s) => {
        const p = s.sample(buf); const c = s.clone(); const t = (await p).token;
        const out = [t, ...state(c), (await c.sample(buf)).token, ...state(c)];
        c.dispose();
        return out;
      },
      'batch, accept': async (s) => { const p = gd.sampleBatch(buf, 1, [s]); s.accept(5); return [(await p)[0].token]; },
      'decode, accept': async (s) => { const p = s.decode(buf); s.accept(9); return [[...(await p).ids].slice(0, 5).join()]; },
    };
    const cpuOrder = {
      'sample, accept': (s) => { const t = s.sample(row).token; s.accept(7); return [t]; },
      'sample, accept, sample, accept': (s) => { const a = s.sample(row).token; s.accept(11); const b = s.sample(row).token; s.accept(12); return [a, b]; },
      'sample, reset': (s) => { const t = s.sample(row).token; s.reset(); return [t]; },
      'sample, clone': (s) => {
        const t = s.sample(row).token; const c = s.clone();
        const out = [t, ...state(c), c.sample(row).token, ...state(c)];
        c.dispose();
        return out;
      },
      'batch, accept': (s) => { const t = h.bd.sampleBatch(row, V, [s])[0].token; s.accept(5); return [t]; },
      'decode, accept': (s) => { const d = s.decode(row); s.accept(9); return [[...d.ids].slice(0, 5).join()]; },
    };
    let n = 0;
    for (const o of [{ seed: 1, top_k: 40 }, { seed: 2, top_p: 0.9, repetition_penalty: 1.3, penalty_last_n: -1 },
      { seed: 3, mirostat: 2, mirostat_tau: 3 }, { seed: 4, bregman: { alpha: 1.5, lambda: 1e-3 }, frequency_penalty: 0.2 }]) {
      for (const [name, run] of Object.entries(interleavings)) {
        const gs = gd.createSampler(o), cs = h.bd.createSampler(o);
        // A history first, so penalties see the accepted tokens.
        for (const t of [3, 4, 3]) { gs.accept(t); cs.accept(t); }
        const g = [...await run(gs), ...state(gs), (await gs.sample(buf)).token, ...state(gs)];
        const c = [...cpuOrder[name](cs), ...state(cs), cs.sample(row).token, ...state(cs)];
        same(`${JSON.stringify(o)} ${name}`, g, c);
        gs.dispose(); cs.dispose();
        n++;
      }
      // dispose() while a call is pending: the call made before it answers,
      // the calls and methods after it refuse.
      const gs = gd.createSampler(o), cs = h.bd.createSampler(o);
      const p = gs.sample(buf);
      gs.dispose();
      const after = await gs.sample(buf).then(() => 'resolved', ext.err);
      let acc;
      try { gs.accept(1); acc = 'ok'; } catch (e) { acc = ext.err(e); }
      same(`${JSON.stringify(o)} sample, dispose`, [(await p).token, after, acc],
        [cs.sample(row).token, 'TypeError: this sampler was disposed', 'TypeError: this sampler was disposed']);
      cs.dispose();
    }
    gd.dispose();
    return { bad, n };
  });
  for (const b of r.bad) console.log(`# BAD ${b}`);
  assert.equal(r.n, 24);
  assert.deepEqual(r.bad, []);
});

test('errors before any GPU work, as the CPU path; stats count every call and byte', async () => {
  const r = await inPage(async (h, cases, arg, ext) => {
    const V = 4096, out = { errors: [] };
    const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 256 });
    const row = cases.llmRow(V, cases.rng(5), 1.2), buf = h.upload(row);
    const delta = (a, b) => ({ calls: b.calls - a.calls, fallbacks: b.fallbacks - a.fallbacks, bytes: b.bytesRead - a.bytesRead });
    // Two invalid options, or one the core checks against the vocabulary:
    // the CPU's error (class and message), no fallback, no byte read.
    const invalid = [
      { temperature: 'x', history: [V + 5], top_p: 0.9, repetition_penalty: 1.2 },
      { top_p: 0.9, logit_bias: { 5: 1 }, history: [V + 1], repetition_penalty: 'no' },
      { top_k: -1 }, { bregman: { alpha: 1.5, k: V + 1 } }, { logit_bias: { [V]: 1 }, top_k: 3 },
      { step: 3, top_k: 5 }, { top_p: 2, bregman: { alpha: 1.5, lambda: -1 } }, { min_p: 0.1, banned_tokens: [-1] },
    ];
    const s0 = gd.stats;
    for (const o of invalid) {
      for (const kind of ['decode', 'sample']) {
        let c, g;
        try { h.bd[kind](row, o); c = 'ok'; } catch (e) { c = ext.err(e); }
        try { await gd[kind](buf, o); g = 'ok'; } catch (e) { g = ext.err(e); }
        if (c === 'ok' || c !== g) out.errors.push(`${kind} ${JSON.stringify(o)}: gpu ${g} / cpu ${c}`);
      }
    }
    out.invalid = { ...delta(s0, gd.stats), expected: 2 * invalid.length };
    // A throw after the GPU's work (a NaN in the row): the selection's bytes
    // and the fallback's row count.
    const nanRow = row.slice(); nanRow[77] = NaN;
    const nanBuf = h.upload(nanRow);
    const s1 = gd.stats;
    try { await gd.decode(nanBuf, { top_k: 3 }); out.nan = 'ok'; } catch (e) { out.nan = ext.err(e); }
    out.nanStats = { ...delta(s1, gd.stats), expectedBytes: gd.candidateReadbackBytes + 4 * V };
    // Stats add up: the sum of what the calls report, and one call per call.
    const s2 = gd.stats;
    let reported = 0, fb = 0;
    for (const o of [{ top_k: 5 }, { top_p: 0.9, seed: 1 }, { seed: 2 }, { bregman: { alpha: 1.5, lambda: 1e-3 } }]) {
      const g = await gd.sample(buf, o);
      reported += g.gpu.bytesRead;
      if (g.gpu.fallback) fb++;
    }
    out.sum = { ...delta(s2, gd.stats), reported, fb };
    gd.dispose();
    return out;
  });
  console.log(JSON.stringify(r));
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.invalid, { calls: r.invalid.expected, fallbacks: 0, bytes: 0, expected: r.invalid.expected });
  assert.equal(r.nan, 'RangeError: logits contains NaN');
  assert.deepEqual(r.nanStats, { calls: 1, fallbacks: 1, bytes: r.nanStats.expectedBytes, expectedBytes: r.nanStats.expectedBytes });
  assert.deepEqual(r.sum, { calls: 4, fallbacks: r.sum.fb, bytes: r.sum.reported, reported: r.sum.reported, fb: r.sum.fb });
  assert.ok(r.sum.fb >= 1);
});

test('dispose() with calls in flight: each rejects with the TypeError of the calls queued after it; the device stays clean', async () => {
  const r = await inPage(async (h, cases, arg, ext) => {
    const V = 32000, out = {};
    const row = cases.llmRow(V, cases.rng(8), 1.2), buf = h.upload(row);
    for (const [name, when] of [['at once', 0], ['after a microtask', 1], ['after a macrotask', 2]]) {
      const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 1024 });
      const s = gd.createSampler({ seed: 1, top_k: 5 });
      const calls = [gd.decode(buf, { top_k: 3 }), gd.sample(buf, { seed: 3 }), s.sample(buf), gd.decodeBatch(buf, 1, { top_p: 0.9 })];
      if (when === 1) await Promise.resolve();
      if (when === 2) await new Promise((res) => setTimeout(res, 0));
      gd.dispose();
      out[name] = await Promise.all(calls.map((p) => p.then(() => 'resolved', ext.err)));
    }
    await h.device.queue.onSubmittedWorkDone();
    await new Promise((res) => setTimeout(res, 50));
    out.uncaptured = window.uncaptured.slice();
    return out;
  });
  console.log(JSON.stringify(r));
  for (const k of ['at once', 'after a microtask', 'after a macrotask']) {
    for (const e of r[k]) assert.equal(e, 'TypeError: this GPU decoder was disposed', k);
  }
  assert.deepEqual(r.uncaptured, []);
});

test('a buffer of another device or a destroyed one: a TypeError naming the cause, on every call', async () => {
  const r = await inPage(async (h, cases, arg, ext) => {
    const V = 2048, out = {};
    const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: 256 });
    const row = cases.llmRow(V, cases.rng(4));
    const other = await (await navigator.gpu.requestAdapter()).requestDevice();
    const foreign = other.createBuffer({ size: 4 * V, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    other.queue.writeBuffer(foreign, 0, row);
    const gone = h.upload(row);
    const good = h.upload(row);
    await gd.decode(gone, { top_k: 3 });  // its bind group is made and kept
    gone.destroy();
    for (const [name, b] of [['foreign', foreign], ['destroyed', gone]]) {
      out[name] = [];
      for (const o of [{ top_k: 3 }, { top_k: 3 }, { seed: 1 }]) {
        try { await gd.sample(b, o); out[name].push('ok'); } catch (e) { out[name].push(ext.err(e)); }
      }
    }
    out.after = cases.compareGpu(await gd.decode(good, { top_k: 3 }), h.bd.decode(row, { top_k: 3 }));
    gd.dispose(); other.destroy();
    return out;
  });
  console.log(JSON.stringify(r));
  for (const e of r.foreign) assert.match(e, /^TypeError: logits GPUBuffer cannot be used \(it belongs to another GPUDevice\)/);
  for (const e of r.destroyed) assert.match(e, /^TypeError: logits GPUBuffer cannot be used \(it was destroyed\)/);
  assert.equal(r.after, null);
});

test('readback never larger than the row: the selection gives way to the full row where it would read more', async () => {
  const r = await inPage(async (h, cases, arg, ext) => {
    const over = [];
    for (const [V, M, dtype] of [[300, 256, 'f32'], [1000, 256, 'f32'], [1000, 1000, 'f32'], [2048, 1024, 'f32'], [4096, 2048, 'f32'],
      [4096, 1024, 'f16'], [16384, 1024, 'f16'], [4096, 256, 'f32']]) {
      const gd = h.bd.createGpuDecoder(h.device, { vocab: V, maxCandidates: M, dtype });
      const rowBytes = (dtype === 'f16' ? 2 : 4) * V;
      const data = cases.llmRow(V, cases.rng(V + M), 1.3);
      let row = data, buf;
      if (dtype === 'f16') { const t = cases.toHalf(data); row = t.back; buf = h.upload(new Uint8Array(t.half.buffer)); } else buf = h.upload(data);
      for (const o of [{ top_k: 5 }, { top_p: 0.9, seed: 1 }, { bregman: { alpha: 1.5, lambda: 1e-3 } }, { temperature: 0 },
        { min_p: 0.05, logit_bias: { 1: 2, 2: -1 } }]) {
        for (const kind of ['decode', 'sample']) {
          const oo = kind === 'sample' ? { ...o, seed: 9 } : o;
          await ext.check(gd, kind, row, buf, oo, `V=${V} M=${M} ${dtype} ${kind} ${JSON.stringify(o)}`);
          const g = await gd[kind](buf, oo);
          const sel = g.gpu.fallback === 'the selection reads more than the row';
          if (sel ? g.gpu.bytesRead !== rowBytes : !g.gpu.fallback && g.gpu.bytesRead >= rowBytes) {
            over.push(`V=${V} M=${M} ${dtype} ${JSON.stringify(o)}: ${g.gpu.bytesRead} B for a ${rowBytes} B row (${g.gpu.fallback ?? g.gpu.path})`);
          }
        }
      }
      buf.destroy();
      gd.dispose();
    }
    return { ...ext.tally, over };
  });
  report('readback', r);
  for (const o of r.over) console.log(`# OVER ${o}`);
  assert.deepEqual(r.bad, []);
  assert.deepEqual(r.over, []);
  assert.ok(r.paths['fallback: the selection reads more than the row'] > 0, JSON.stringify(r.paths));
  assert.ok(r.paths.top_k > 0, JSON.stringify(r.paths));
});
