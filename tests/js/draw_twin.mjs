// A plain-JS twin of the documented draw over an untruncated row, float op
// by float op (Math.fround after every + - * /, which is exact float32
// arithmetic): ExpF32 (src/kernels/exp-inl.h), the 16 virtual lanes per
// 256-token block (src/kernels/virtual_lanes-inl.h), the block walk, and
// UniformDraw (src/rng.h), the package's own JS definition (web/src/rng.js). Used to build rows whose CDF puts the
// uniform next to a boundary, and as the oracle of the token drawn there.
import { uniformDraw } from '../../web/src/rng.js';

export { uniformDraw };
const f = Math.fround;
const POLY = [1 / 720, 1 / 120, 1 / 24, 1 / 6, 0.5, 1, 1].map(f);

/** ExpF32(x) for a float32 x. */
export function expF32(x) {
  if (x < -87) return 0;
  x = Math.min(Math.max(x, -87.5), 88);
  const n = f(f(f(x * f(1.44269504088896341)) + 12582912) - 12582912);
  let r = f(x - f(n * f(0.693359375)));
  r = f(r + f(n * f(2.12194440e-4)));
  let p = f(1 / 5040);
  for (const c of POLY) p = f(f(p * r) + c);
  return f(p * 2 ** n);
}

function exps(row, max, scale) {
  return Float64Array.from(row, (v) => expF32(f(f(v - max) * scale)));
}

function blockSums(e) {
  const sums = [];
  for (let b = 0; b < e.length; b += 256) {
    const lanes = new Float64Array(16);
    for (let i = b; i < Math.min(e.length, b + 256); i++) lanes[(i - b) % 16] = f(lanes[(i - b) % 16] + e[i]);
    for (let w = 8; w >= 1; w /= 2) for (let j = 0; j < w; j++) lanes[j] = f(lanes[j] + lanes[j + w]);
    sums.push(lanes[0]);
  }
  return sums;
}

/** The token the documented draw picks from softmax(row / temperature) for uniform u. */
export function drawTwin(row, temperature, u) {
  const scale = f(1 / f(temperature));
  let max = -Infinity;
  for (const v of row) max = Math.max(max, v);
  const e = exps(row, max, scale);
  const bs = blockSums(e);
  let z = 0;
  for (const s of bs) z += s;
  const target = u * z;
  let cum = 0;
  let b = 0;
  for (; b < bs.length; b++) {
    if (bs[b] > 0 && cum + bs[b] > target) break;
    cum += bs[b];
  }
  let pick = -1;
  for (let i = b * 256; i < Math.min(row.length, b * 256 + 256); i++) {
    if (!(e[i] > 0)) continue;
    pick = i;
    cum += e[i];
    if (cum > target) break;
  }
  return pick;
}

/**
 * A row of n tokens: [0, split) at logit a, the rest at 0, a chosen among
 * nearby floats so that u * Z is as close as floats allow to the CDF boundary
 * after token split - 1. Returns { row, gap } (gap relative to Z).
 */
export function boundaryRow(n, split, temperature, u) {
  const scale = f(1 / f(temperature));
  let a = f(Math.log((u / (1 - u)) * (n - split) / split) / scale);
  let best = { a, gap: Infinity };
  const row = new Float32Array(n);
  for (let k = 0; k < 64; k++) {
    row.fill(a, 0, split);
    row.fill(0, split);
    const max = Math.max(a, 0);
    const e = exps(row, max, scale);
    const bs = blockSums(e);
    let z = 0, cum = 0;
    bs.forEach((s, b) => { z += s; if ((b + 1) * 256 <= split) cum += s; });
    for (let i = Math.floor(split / 256) * 256; i < split; i++) cum += e[i];
    const gap = Math.abs(u * z - cum) / z;
    if (gap < best.gap) best = { a, gap };
    const up = u * z > cum;
    // The next float toward the boundary.
    const buf = new Float32Array([a]);
    const bits = new Int32Array(buf.buffer);
    bits[0] += (a > 0) === up ? 1 : -1;
    if (a === 0) buf[0] = up ? 1e-45 : -1e-45;
    a = buf[0];
  }
  row.fill(best.a, 0, split);
  row.fill(0, split);
  return { row, gap: best.gap };
}
