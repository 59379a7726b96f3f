// Failed calls leave the GPU decoder usable: on onnxruntime-web's device
// (headless Chromium, SwiftShader's WebGPU), a logits buffer of another
// device, a destroyed buffer, one too small for the row and one without
// STORAGE usage each throw an error naming the cause, and the next valid call
// equals the CPU path. Through bd.createGpuDecoder and through
// bregman-decoders/onnxruntime-web (a tensor over such a buffer).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOrtPage } from './ort_page.mjs';

let inPage, close, errors;

before(async () => {
  ({ inPage, close, errors } = await openOrtPage());
});

after(async () => {
  await close?.();
});

// The four bad buffers, each followed by a valid call on a tensor of the
// model's logits; returns per case the error and whether the next call was exact.
const runCases = (via) => inPage(async (h, cases, via) => {
  const { ort, bd, adapter, device } = h;
  const kind = async (f) => { try { await f(); return 'none'; } catch (e) { return `${e.constructor.name}: ${e.message}`; } };
  const ref = await h.session.run(cases.promptFeeds(ort, [1, 1200, 1201, 1202], h.past));
  const [, S, V] = ref.logits.dims;
  const data = (await ref.logits.getData()).slice((S - 1) * V, S * V);
  cases.disposeOutputs(ref);
  const out = await h.session.run(cases.promptFeeds(ort, [1, 1200, 1201, 1202], h.past));
  const U = GPUBufferUsage;
  const own = await (await navigator.gpu.requestAdapter()).requestDevice();
  const make = (dev, size, usage) => {
    const b = dev.createBuffer({ size, usage });
    dev.queue.writeBuffer(b, 0, data.buffer, data.byteOffset, Math.min(size, data.byteLength));
    return b;
  };
  const full = U.STORAGE | U.COPY_SRC | U.COPY_DST;
  const bad = {
    foreign: make(own, 4 * V, full),
    destroyed: make(device, 4 * V, full),
    tooSmall: make(device, 4 * V - 256, full),
    noStorage: make(device, 4 * V, U.COPY_SRC | U.COPY_DST),
  };
  bad.destroyed.destroy();
  const gd = bd.createGpuDecoder(device, { vocab: V });
  const dec = adapter.createOrtDecoder(bd, ort);
  const opts = [{ top_k: 40, seed: 3 }, { temperature: 0 }, { bregman: { alpha: 1.5, lambda: 1e-3 }, seed: 4 }, { min_p: 0.05, seed: 5 }];
  const got = {};
  let i = 0;
  for (const [name, buf] of Object.entries(bad)) {
    const o = opts[i++ % opts.length];
    const error = via === 'gpu decoder'
      ? await kind(() => gd.sample(buf, o))
      : await kind(() => dec.sample(ort.Tensor.fromGpuBuffer(buf, { dataType: 'float32', dims: [1, 1, V] }), o));
    const want = bd.sample(data, o);
    const next = via === 'gpu decoder' ? await gd.sample(out.logits.gpuBuffer, o, S - 1) : await dec.sample(out.logits, o);
    got[name] = { error, nextExact: next.token === want.token && next.k === want.k && next.gpu.fallback === null };
  }
  cases.disposeOutputs(out);
  gd.dispose();
  dec.dispose();
  for (const b of Object.values(bad)) b.destroy();
  own.destroy();
  return got;
}, via);

const expected = (via) => ({
  foreign: via === 'gpu decoder' ? /^TypeError: logits GPUBuffer cannot be used \(it belongs to another GPUDevice\)/
    : /^TypeError: the logits tensor's GPUBuffer belongs to another GPUDevice than onnxruntime-web's/,
  destroyed: /^TypeError: logits GPUBuffer cannot be used \(it was destroyed\)/,
  tooSmall: /^RangeError: logits GPUBuffer of 16128 bytes has no row 0 of 4096 f32/,
  noStorage: /^TypeError: logits GPUBuffer needs GPUBufferUsage.STORAGE/,
});

for (const via of ['gpu decoder', 'onnxruntime-web adapter']) {
  test(`${via}: a foreign, destroyed, too small or non-storage buffer is an error naming the cause; the next call is exact`, async () => {
    const r = await runCases(via);
    const EXPECTED = expected(via);
    for (const [name, x] of Object.entries(r)) {
      console.log(`# ${name}: ${x.error}`);
      assert.match(x.error, EXPECTED[name], name);
      assert.equal(x.nextExact, true, `${name}: the next valid call`);
    }
    assert.deepEqual(Object.keys(r), Object.keys(EXPECTED));
  });
}

test('the page raised no uncaught errors', () => {
  assert.deepEqual(errors, []);
});
