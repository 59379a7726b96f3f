// bregman-decoders/onnxruntime-web in headless Chromium (WebGPU on
// SwiftShader's software Vulkan): onnxruntime-web's WebGPU execution provider
// runs the repository's ONNX model (models/austen-kjv-2m/onnx/model.onnx) with
// the logits and the KV cache left on the GPU ('gpu-buffer' outputs); the
// adapter decodes each step's logits where they live, and every token equals
// bd.sample() on the downloaded row (same options, seed and step). Fails
// (never skips) when the browser has no WebGPU adapter.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOrtPage } from './ort_page.mjs';

let inPage, close, pageErrors;

before(async () => {
  ({ inPage, close, errors: pageErrors } = await openOrtPage());
});

after(async () => {
  await close?.();
});

const STEPS = 8;
const OPTION_SETS = [
  { temperature: 0 },
  { top_k: 40, top_p: 0.9, min_p: 0.05, temperature: 0.8 },
  { top_p: 0.9 },
  { min_p: 0.05 },
  { typical_p: 0.9 },
  { top_k: 100, typical_p: 0.9 },
  { bregman: { alpha: 1.5, lambda: 1e-3 } },
  { bregman: { divergence: 'dual', alpha: 2, lambda: 1e-3 } },
];

test('generation with the KV cache on the GPU: every token equals bd.sample on the downloaded row', async () => {
  const r = await inPage(async (h, cases, { sets, steps }) => {
    const dec = h.adapter.createOrtDecoder(h.bd, h.ort);
    const out = [];
    for (let s = 0; s < sets.length; s++) {
      const rec = await cases.generateAndCompare({ bd: h.bd, ort: h.ort, session: h.session, dec, past: h.past,
        prompt: [1, 300, 301, 302, 303], steps, options: sets[s], seed: 100 + s });
      out.push({ options: sets[s], rec });
    }
    const stats = dec.stats;
    const sameDevice = dec.device === h.device;
    dec.dispose();
    return { out, stats, sameDevice };
  }, { sets: OPTION_SETS, steps: STEPS });
  assert.ok(r.sameDevice, "the decoder did not run on onnxruntime-web's device");
  let steps = 0, candidatePath = 0;
  for (const { options, rec } of r.out) {
    const bytes = rec.map((x) => x.bytesRead);
    const paths = [...new Set(rec.map((x) => x.path))];
    const ms = rec.map((x) => x.ms).sort((a, b) => a - b)[rec.length >> 1];
    console.log(`# ${JSON.stringify(options)}: ${rec.map((x) => x.gpu).join(' ')}; bytes read back per token ${Math.min(...bytes)}..${Math.max(...bytes)} (full row ${4 * 4096}); decode ${ms.toFixed(1)} ms (SwiftShader); ${paths.join(', ')}`);
    for (const [t, x] of rec.entries()) assert.equal(x.gpu, x.cpu, `${JSON.stringify(options)} step ${t}`);
    steps += rec.length;
    candidatePath += rec.filter((x) => !x.path.startsWith('fallback')).length;
    // Tokens vary (the loop feeds each token back): not one repeated id.
    if (options.temperature !== 0) assert.ok(new Set(rec.map((x) => x.gpu)).size > 1, JSON.stringify(options));
  }
  console.log(`# totals: ${JSON.stringify(r.stats)}`);
  assert.equal(steps, OPTION_SETS.length * STEPS);
  assert.equal(r.stats.calls, steps);
  // Only a first-stage typical_p (over the whole row, by design) and top-p
  // (a nucleus beyond the candidates or a boundary within rounding, on this
  // small model's flat rows) may read the row back; the rest take the
  // candidate path at every step, reading back half the row or less.
  for (const { options, rec } of r.out) {
    const mayFallBack = options.typical_p !== undefined && options.top_k === undefined || options.top_p !== undefined && options.top_k === undefined;
    for (const x of rec) {
      if (x.path.startsWith('fallback')) assert.ok(mayFallBack, `${JSON.stringify(options)}: ${x.path}`);
      else assert.ok(x.bytesRead <= 2 * 4096 + 128, `${JSON.stringify(options)} read ${x.bytesRead} B`);
    }
  }
  assert.ok(candidatePath >= steps - 2 * STEPS, `${steps - candidatePath} fallbacks`);
});

test('a stateful sampler over gpu-buffer tensors draws what bd.createSampler draws over the downloaded rows', async () => {
  const r = await inPage(async (h, cases) => {
    const dec = h.adapter.createOrtDecoder(h.bd, h.ort, { maxCandidates: 256 });
    const options = { seed: 9, top_k: 50, temperature: 0.9, repetition_penalty: 1.3, dry_multiplier: 0.8 };
    const gs = dec.createSampler(options), cs = h.bd.createSampler(options);
    const prompt = [1, 500, 501, 502];
    for (const id of prompt) { gs.accept(id); cs.accept(id); }
    let out = await h.session.run(cases.promptFeeds(h.ort, prompt, h.past));
    const bad = [], tokens = [];
    for (let t = 0; t < 16; t++) {
      const g = await gs.sample(out.logits);
      const [, S, V] = out.logits.dims;
      const c = cs.sample((await out.logits.getData()).subarray((S - 1) * V, S * V));
      if (g.token !== c.token) bad.push(`step ${t}: ${g.token} != ${c.token}`);
      tokens.push(g.token);
      const next = await h.session.run(cases.stepFeeds(h.ort, g.token, prompt.length + t, out, h.past));
      cases.disposeOutputs(out);
      out = next;
    }
    cases.disposeOutputs(out);
    const state = [gs.step, cs.step, gs.historyLength, cs.historyLength];
    gs.dispose(); cs.dispose(); dec.dispose();
    return { bad, tokens, state };
  });
  assert.deepEqual(r.bad, []);
  assert.deepEqual(r.state, [16, 16, 20, 20]);
  assert.ok(new Set(r.tokens).size > 3, r.tokens.join(' '));
});

test('CPU tensors (float32 and float16) go through the wasm path; float16 gpu-buffer tensors through the GPU', async () => {
  const r = await inPage(async (h, cases) => {
    const { ort, bd } = h;
    const out = await h.session.run(cases.promptFeeds(ort, [1, 700, 701], h.past));
    const [B, S, V] = out.logits.dims;
    const data = await out.logits.getData();
    cases.disposeOutputs(out);
    const dec = h.adapter.createOrtDecoder(bd, ort);
    const halves = new Uint16Array(data.length), back = new Float32Array(data.length);
    {
      // float32 -> nearest half, by a float16 round trip through the DataView rounding rules.
      const f = new Float32Array(1), u = new Uint32Array(f.buffer);
      for (let i = 0; i < data.length; i++) {
        f[0] = data[i];
        const x = u[0], sign = (x >>> 16) & 0x8000, e = ((x >>> 23) & 255) - 127 + 15;
        let m = x & 0x7fffff;
        // Normal halves only (logits of this model are well inside the range).
        let hbits = sign | (e << 10) | (m >>> 13);
        const rest = m & 0x1fff;
        if (rest > 0x1000 || (rest === 0x1000 && (hbits & 1))) hbits += 1;
        halves[i] = hbits;
        const he = (hbits >> 10) & 31, hm = hbits & 1023;
        back[i] = (hbits & 0x8000 ? -1 : 1) * (1 + hm / 1024) * 2 ** (he - 15);
      }
    }
    const bad = [];
    const cpu32 = new ort.Tensor('float32', data, [B, S, V]);
    const cpu16 = new ort.Tensor('float16', halves, [B, S, V]);
    const gbuf = h.device.createBuffer({ size: halves.byteLength + 64, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    h.device.queue.writeBuffer(gbuf, 0, halves);
    const gpu16 = ort.Tensor.fromGpuBuffer(gbuf, { dataType: 'float16', dims: [B, S, V] });
    for (const o of [{ temperature: 0 }, { top_k: 40, seed: 1 }, { top_p: 0.9, seed: 2 }, { bregman: { alpha: 1.5, lambda: 1e-3 }, seed: 3 }]) {
      for (let p = 0; p < S; p++) {
        const want32 = bd.sample(data.subarray(p * V, (p + 1) * V), o).token;
        const want16 = bd.sample(back.subarray(p * V, (p + 1) * V), o).token;
        const a = await dec.sample(cpu32, o, { position: p });
        const b = await dec.sample(cpu16, o, { position: p });
        const c = await dec.sample(gpu16, o, { position: p });
        if (a.token !== want32 || a.gpu !== undefined) bad.push(`cpu f32 ${JSON.stringify(o)} pos ${p}`);
        if (b.token !== want16) bad.push(`cpu f16 ${JSON.stringify(o)} pos ${p}`);
        if (c.token !== want16 || c.gpu === undefined) bad.push(`gpu f16 ${JSON.stringify(o)} pos ${p}`);
      }
    }
    const dist = await dec.decode(gpu16, { top_k: 5 }, { batch: 0, position: 1 });
    const distCpu = bd.decode(back.subarray(V, 2 * V), { top_k: 5 });
    if (Array.from(dist.ids).join() !== Array.from(distCpu.ids).join()) bad.push('decode f16 ids');
    gpu16.dispose();
    gbuf.destroy();
    dec.dispose();
    return { bad, S };
  });
  assert.equal(r.S, 3);
  assert.deepEqual(r.bad, []);
});

test("onnxruntime-web's pitfalls are refused with errors that say what to do; the next call is exact", async () => {
  const r = await inPage(async (h, cases) => {
    const { ort, bd, adapter } = h;
    const kind = async (f) => { try { await f(); return 'none'; } catch (e) { return `${e.constructor.name}: ${e.message}`; } };
    const got = {};
    // A device of one's own: not onnxruntime-web's (which ignores one set before create).
    const own = await (await navigator.gpu.requestAdapter()).requestDevice();
    got.sessionDevice = await kind(() => adapter.webgpuSessionOptions({ executionProviders: [{ name: 'webgpu', device: own }] }));
    got.noWebgpu = await kind(() => adapter.webgpuSessionOptions({ executionProviders: ['wasm'] }));
    const opts = adapter.webgpuSessionOptions({ graphOptimizationLevel: 'all' });
    got.opts = JSON.stringify(opts);
    // The reference row from a second run of the same prompt: getData() turns
    // the tensor it downloads into a CPU tensor.
    const prompt = [1, 900, 901, 902, 903];
    const ref = await h.session.run(cases.promptFeeds(ort, prompt, h.past));
    const data = await ref.logits.getData();
    cases.disposeOutputs(ref);
    const out = await h.session.run(cases.promptFeeds(ort, prompt, h.past));
    const logits = out.logits;
    const [, S, V] = logits.dims;
    const want = (p, o) => bd.sample(data.subarray(p * V, (p + 1) * V), o).token;
    const o = { top_k: 40, seed: 5 };
    const onOwn = adapter.createOrtDecoder(bd, ort, { device: own });
    got.ownDevice = await kind(() => onOwn.sample(logits, o));
    const dec = adapter.createOrtDecoder(bd, ort, { device: h.device });
    // Rows outside the dims, inside the padded buffer (131072 B for [1, 5, 4096]).
    got.bufferSize = logits.gpuBuffer.size;
    got.position = await kind(() => dec.sample(logits, o, { position: S }));
    got.batch = await kind(() => dec.sample(logits, o, { batch: 1 }));
    got.negative = await kind(() => dec.sample(logits, o, { position: -1 }));
    const atRow2 = await dec.sample(logits, o, { position: 2 });
    got.afterBadRows = atRow2.token === want(2, o) && atRow2.gpu !== undefined;
    // Disposed while the decode runs: refused, not answered from a reused buffer.
    const p = dec.sample(logits, o);
    const keep = new Set([logits]);
    logits.dispose();
    got.disposedDuring = await kind(() => p);
    got.disposedBefore = await kind(() => dec.sample(logits, o));
    // The next valid call, on a fresh tensor of the same row, is exact.
    cases.disposeOutputs(out, keep);
    const out2 = await h.session.run(cases.promptFeeds(ort, prompt, h.past));
    const next = await dec.sample(out2.logits, o);
    got.afterDisposed = next.token === want(S - 1, o) && next.gpu !== undefined;
    got.int = await kind(() => dec.sample(out2['present.0.key'], o));
    got.notTensor = await kind(() => dec.sample(new Float32Array(V), o));
    cases.disposeOutputs(out2);
    dec.dispose();
    got.disposedDecoder = await kind(() => dec.sample(logits, o));
    own.destroy();
    return got;
  });
  console.log(`# ${JSON.stringify(r)}`);
  assert.match(r.sessionDevice, /^TypeError: .*device passed to the webgpu execution provider.*leave `device` out/);
  assert.match(r.noWebgpu, /^RangeError: executionProviders must include 'webgpu'/);
  assert.deepEqual(JSON.parse(r.opts), { graphOptimizationLevel: 'all', executionProviders: ['webgpu'], preferredOutputLocation: 'gpu-buffer' });
  assert.match(r.ownDevice, /^RangeError: config.device is not onnxruntime-web's device .*leave config.device out/);
  assert.ok(r.bufferSize > 4 * 5 * 4096, `buffer of ${r.bufferSize} B is not padded: the padding case is not tested`);
  assert.match(r.position, /^RangeError: position 5 is outside the logits dims \[1, 5, 4096\]/);
  assert.match(r.batch, /^RangeError: batch 1 is outside the logits dims/);
  assert.match(r.negative, /^RangeError: position -1/);
  assert.equal(r.afterBadRows, true);
  assert.match(r.disposedDuring, /^Error: the logits tensor was disposed before the decode finished.*await the decode, then tensor.dispose\(\)/);
  assert.match(r.disposedBefore, /^TypeError: the logits tensor was disposed/);
  assert.equal(r.afterDisposed, true);
  assert.match(r.int, /^RangeError: logits dims \[1, 4, 5, 48\]: expected \[batch, sequence, vocab\]/);
  assert.match(r.notTensor, /^TypeError: logits must be an onnxruntime-web Tensor/);
  assert.match(r.disposedDecoder, /^TypeError: this onnxruntime-web decoder was disposed/);
});

test('the page raised no uncaught errors', () => {
  assert.deepEqual(pageErrors, []);
});
