// The shipped .wasm really contains SIMD128 instructions, and the module says
// its kernels run on Highway's WASM target.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { load } from '../../dist/node.mjs';

test('dist/bregman_decoders.wasm contains SIMD128 instructions', () => {
  const wasm = fileURLToPath(new URL('../../dist/bregman_decoders.wasm', import.meta.url));
  const dis = execFileSync('wasm-objdump', ['-d', wasm], { maxBuffer: 1 << 28 }).toString();
  const simd = dis.match(/\b(v128|f32x4|i32x4|i8x16|i16x8|i64x2|f64x2)\./g) ?? [];
  console.log(`# SIMD instructions in dist/bregman_decoders.wasm: ${simd.length}`);
  assert.ok(simd.length > 100, `only ${simd.length} SIMD instructions`);
  assert.ok(dis.includes('f32x4.'), 'no f32x4 arithmetic');
});

test('the module reports Highway target WASM', async () => {
  const bd = await load();
  assert.equal(bd.target, 'WASM');
  bd.dispose();
});
