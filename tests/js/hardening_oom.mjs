// Run by hardening.test.mjs in its own process (it takes the wasm memory to
// its 2 GiB ceiling): samplers created in a synchronous loop, never disposed
// (no finalizer can run), until the module has no memory left. Every
// allocating call must then be a RangeError that says what to do, the
// instance must stay exact, and nothing may print "Aborted()". Prints "ok"
// and counts; exits non-zero on a failure.
import assert from 'node:assert/strict';
import { load } from '../../dist/node.mjs';
import { llmRow, rng } from './reference.mjs';

const bd = await load();
const V = 1000;
const row = llmRow(V, rng(1));
const want = bd.decode(row, { top_k: 40, seed: 1 });
const wantSample = bd.sample(row, { top_k: 40, seed: 1 });

const oom = (e) => e instanceof RangeError && /^out of wasm memory for .*dispose\(\) samplers/.test(e.message);
const samplers = [];
let refused = null;
for (let i = 0; i < 40000; i++) {
  try {
    const s = bd.createSampler({ seed: i });
    samplers.push(s);
    s.sample(row);
  } catch (e) {
    refused = e;
    break;
  }
}
assert.ok(refused !== null, 'memory never ran out');
assert.ok(oom(refused), String(refused));
console.log(`samplers before the RangeError: ${samplers.length}, memory ${(bd.memoryBytes() / 2 ** 20).toFixed(0)} MiB`);

// Full: each allocating call is the RangeError, and the calls that allocate
// nothing still work.
const calls = {
  createSampler: () => bd.createSampler({ seed: 1 }),
  clone: () => samplers[0].clone(),
  'decode of a larger row': () => bd.decode(llmRow(300000, rng(2))),
  'sample of a larger row': () => bd.sample(llmRow(300000, rng(2))),
  'a sampler on a larger row': () => samplers[1].reset() ?? samplers[1].sample(llmRow(300000, rng(2))),
  inputBuffer: () => bd.inputBuffer(1 << 21),
  'a long token list': () => bd.decode(row, { banned_tokens: new Int32Array(1 << 20) }),
  decodeBatch: () => bd.decodeBatch(llmRow(2 * 300000, rng(3)), 300000, {}),
  'no_repeat_ngram over a long history': () => bd.decode(row, { history: new Int32Array(1 << 20), no_repeat_ngram_size: 1 << 19 }),
};
for (const [name, call] of Object.entries(calls)) {
  assert.throws(call, oom, name);
  assert.deepEqual(bd.decode(row, { top_k: 40, seed: 1 }), want, `exact after ${name}`);
}
assert.deepEqual(bd.sample(row, { top_k: 40, seed: 1 }), wantSample);
// Freed: everything works again, exactly.
for (const s of samplers) s.dispose();
samplers.length = 0;
const s = bd.createSampler({ top_k: 40, seed: 1 });
samplers.push(s, s.clone());
for (const call of Object.values(calls)) {
  const r = call();
  if (r && typeof r.dispose === 'function') r.dispose();
}
assert.deepEqual(bd.decode(row, { top_k: 40, seed: 1 }), want);
s.reset();
assert.deepEqual(s.sample(row), wantSample);
for (const x of samplers) x.dispose();
console.log(`ok memory ${(bd.memoryBytes() / 2 ** 20).toFixed(0)} MiB`);
