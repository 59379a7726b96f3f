// bregman-decoders/onnxruntime-web in Node: CPU tensors (onnxruntime's own
// Tensor, float32 and float16, [B, S, V] and [B, V]) decode through the wasm
// path to exactly bd.sample's answer on the row; the row is checked against
// the dims; session options refuse a device passed to the execution provider;
// the typings check against onnxruntime-web's. The gpu-buffer path runs in
// tests/browser/ort.test.mjs and ort_errors.test.mjs (WebGPU).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load } from '../../dist/node.mjs';
import { createOrtDecoder, webgpuSessionOptions } from '../../dist/onnxruntime_web.mjs';
import { Tensor } from 'onnxruntime-common';
import { llmRow, rng } from './reference.mjs';

const bd = await load();
const ortLike = { env: { webgpu: {} } };

test('CPU tensors: float32 and float16, every row, equal bd.sample and bd.decode on the row', async () => {
  const B = 2, S = 3, V = 1000;
  const data = new Float32Array(B * S * V);
  for (let r = 0; r < B * S; r++) data.set(llmRow(V, rng(50 + r), 1.2), r * V);
  const dec = createOrtDecoder(bd, ortLike);
  const t32 = new Tensor('float32', data, [B, S, V]);
  // Halves: float32 -> half by truncation of the mantissa (exact in both directions for the CPU reference).
  const halves = new Uint16Array(data.length), back = new Float32Array(data.length);
  const f = new Float32Array(1), u = new Uint32Array(f.buffer);
  for (let i = 0; i < data.length; i++) {
    f[0] = data[i];
    const x = u[0], e = ((x >>> 23) & 255) - 112;
    halves[i] = ((x >>> 16) & 0x8000) | (e << 10) | ((x & 0x7fffff) >>> 13);
    u[0] = (x & 0xffffe000);
    back[i] = f[0];
  }
  const t16 = new Tensor('float16', halves, [B, S, V]);
  for (const o of [{ temperature: 0 }, { top_k: 40, seed: 1 }, { top_p: 0.9, seed: 2 }, { bregman: { alpha: 1.5, lambda: 1e-3 }, seed: 3 }]) {
    for (let b = 0; b < B; b++) {
      for (let p = 0; p < S; p++) {
        const row = (b * S + p) * V;
        assert.deepEqual(await dec.sample(t32, o, { batch: b, position: p }), bd.sample(data.subarray(row, row + V), o));
        assert.deepEqual(await dec.sample(t16, o, { batch: b, position: p }), bd.sample(back.subarray(row, row + V), o));
      }
    }
  }
  // Default: batch 0, the last position; [B, V] tensors too.
  assert.deepEqual(await dec.decode(t32, { top_k: 5 }), bd.decode(data.subarray(2 * V, 3 * V), { top_k: 5 }));
  const t2 = new Tensor('float32', data.subarray(0, 2 * V), [2, V]);
  assert.deepEqual(await dec.sample(t2, { top_k: 5, seed: 4 }, { batch: 1 }), bd.sample(data.subarray(V, 2 * V), { top_k: 5, seed: 4 }));
  // A stateful sampler over CPU tensors: bd.createSampler's draws.
  const o = { seed: 8, top_k: 20, repetition_penalty: 1.2 };
  const s = dec.createSampler(o), c = bd.createSampler(o);
  s.accept(5); c.accept(5);
  for (let r = 0; r < B * S; r++) {
    assert.equal((await s.sample(t32, { batch: Math.floor(r / S), position: r % S })).token, c.sample(data.subarray(r * V, (r + 1) * V)).token);
  }
  assert.equal(s.step, c.step);
  assert.equal(s.historyLength, c.historyLength);
  s.dispose(); c.dispose(); dec.dispose();
});

test('rows outside the dims, other dtypes and locations, and bad arguments are refused, naming what to do', async () => {
  const dec = createOrtDecoder(bd, ortLike);
  const t = new Tensor('float32', new Float32Array(2 * 3 * 10), [2, 3, 10]);
  const err = async (f) => { try { await f(); return 'none'; } catch (e) { return `${e.constructor.name}: ${e.message}`; } };
  assert.match(await err(() => dec.sample(t, {}, { position: 3 })), /^RangeError: position 3 is outside the logits dims \[2, 3, 10\]/);
  assert.match(await err(() => dec.sample(t, {}, { batch: 2 })), /^RangeError: batch 2 is outside/);
  assert.match(await err(() => dec.sample(t, {}, { batch: 0.5 })), /^RangeError: batch 0.5/);
  assert.match(await err(() => dec.sample(t, {}, { position: '1' })), /^TypeError: position must be a number/);
  assert.match(await err(() => dec.sample(new Tensor('int32', new Int32Array(10), [1, 10]), {})), /^TypeError: logits must be a float32 or float16 tensor, got int32/);
  assert.match(await err(() => dec.sample(new Tensor('float32', new Float32Array(10), [10]), {})), /^RangeError: logits dims \[10\]/);
  assert.match(await err(() => dec.sample({ type: 'float32', dims: [1, 10], location: 'texture' }, {})), /^TypeError: logits tensor at 'texture'/);
  assert.match(await err(() => dec.sample({ type: 'float32', dims: [1, 10], location: 'gpu-buffer', gpuBuffer: {} }, {})),
    /^Error: ort.env.webgpu.device is not set: create an InferenceSession with the webgpu execution provider/);
  assert.match(await err(() => dec.sample(t, { top_p: 2 })), /^RangeError: top_p/);
  const disposed = new Tensor('float32', new Float32Array(10), [1, 10]);
  disposed.dispose();
  assert.match(await err(() => dec.sample(disposed, {})), /^TypeError: the logits tensor was disposed/);
  assert.match(await err(() => createOrtDecoder({}, ortLike)), /^TypeError: bd must be a loaded bregman-decoders instance/);
  assert.match(await err(() => createOrtDecoder(bd, null)), /^TypeError: ort must be the onnxruntime-web module/);
  dec.dispose();
  assert.match(await err(() => dec.sample(t, {})), /^TypeError: this onnxruntime-web decoder was disposed/);
  assert.deepEqual(webgpuSessionOptions(), { executionProviders: ['webgpu'], preferredOutputLocation: 'gpu-buffer' });
  assert.deepEqual(webgpuSessionOptions({ preferredOutputLocation: { logits: 'gpu-buffer' }, executionProviders: [{ name: 'webgpu' }] }),
    { preferredOutputLocation: { logits: 'gpu-buffer' }, executionProviders: [{ name: 'webgpu' }] });
  assert.match(await err(() => webgpuSessionOptions({ executionProviders: [{ name: 'webgpu', device: {} }] })),
    /^TypeError: .*device passed to the webgpu execution provider together with gpu-buffer outputs fails/);
});

test('the subpath export and its typings (tsc against onnxruntime-web)', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  assert.deepEqual(pkg.exports['./onnxruntime-web'], { types: './dist/onnxruntime_web.d.ts', default: './dist/onnxruntime_web.mjs' });
  assert.equal(pkg.devDependencies['onnxruntime-web'], JSON.parse(readFileSync(new URL('../../node_modules/onnxruntime-web/package.json', import.meta.url), 'utf8')).version);
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  const project = fileURLToPath(new URL('./ort-typings/tsconfig.json', import.meta.url));
  const r = spawnSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
