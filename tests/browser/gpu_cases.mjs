// In-page helpers of the WebGPU tests (tests/browser/gpu.test.mjs): rows,
// option sets, and an exact comparison of a GPU result with the CPU path's.
import { llmRow, rng } from '/tests/js/reference.mjs';

export { llmRow, rng };

// A row of few distinct values: many ties at every selection boundary (the
// lower id must win, as on the CPU).
export function tiedRow(v, rand, levels = 6) {
  const row = new Float32Array(v);
  for (let i = 0; i < v; i++) row[i] = Math.floor(rand() * levels) * 0.5;
  return row;
}
// Nearly flat: a nucleus far larger than any candidate set.
export function flatRow(v, rand) {
  const row = new Float32Array(v);
  for (let i = 0; i < v; i++) row[i] = 1e-3 * rand();
  return row;
}

// An eighth of the ids finite (the rest -Infinity): at V = 4096 and
// maxCandidates 1024 every finite logit is a candidate.
export function sparseRow(v, rand) {
  const row = llmRow(v, rand);
  for (let i = 0; i < v; i++) if (i % 8 !== 3) row[i] = -Infinity;
  return row;
}

// Exact equality of two results (typed arrays element by element, -0 and NaN
// distinguished); the GPU report (`gpu`) is left out. Returns null or a message.
export function sameResult(got, want, path = '') {
  if (want === null || typeof want !== 'object') {
    return Object.is(got, want) ? null : `${path} ${got} != ${want}`;
  }
  if (ArrayBuffer.isView(want)) {
    if (!ArrayBuffer.isView(got) || got.length !== want.length) return `${path} length ${got?.length} != ${want.length}`;
    for (let i = 0; i < want.length; i++) {
      if (!Object.is(got[i], want[i])) return `${path}[${i}] ${got[i]} != ${want[i]}`;
    }
    return null;
  }
  for (const key of Object.keys(want)) {
    const e = sameResult(got?.[key], want[key], `${path}.${key}`);
    if (e) return e;
  }
  for (const key of Object.keys(got)) {
    if (key !== 'gpu' && !(key in want)) return `${path}.${key} is extra`;
  }
  return null;
}

// Stateless option sets: every decoder family and the default chain, the
// edit stages, custom orders. `top` is the row's argmax, `hist` a history.
export function optionSets(top, hist) {
  return [
    {}, { temperature: 0 }, { temperature: 0.7 },
    { top_k: 1 }, { top_k: 40, temperature: 0.7 }, { top_k: 1000 }, { top_k: 1023 }, { top_k: 1024 },
    { top_k: 5000 },
    { top_p: 0.3 }, { top_p: 0.9 }, { top_p: 0.95, temperature: 0.8 }, { top_p: 0.99, min_keep: 5 },
    { min_p: 0.05 }, { min_p: 0.2, temperature: 1.3 }, { min_p: 0.001 },
    { top_k: 50, top_p: 0.9, min_p: 0.02, temperature: 0.9 },
    { top_k: 200, bregman: { alpha: 1.5, lambda: 1e-3 } },
    { top_p: 0.8, bregman: { divergence: 'dual', alpha: 2, lambda: 1e-3 } },
    { min_p: 0.01, bregman: { alpha: 0.7, k: 5 } },
    { bregman: { alpha: 1.5, lambda: 1e-3 } },
    // (XTC with a seed: without one, decode()'s coin is random, as sample()'s draw is.)
    { top_k: 100, typical_p: 0.9 }, { top_k: 100, xtc_probability: 0.5, xtc_threshold: 0.05, seed: 7 },
    { top_k: 300, epsilon_cutoff: 3e-4, eta_cutoff: 1e-3 }, { top_k: 80, top_n_sigma: 1.5 },
    { top_k: 64, dynatemp_range: 0.5 }, { typical_p: 0.9 },
    { logit_bias: { 5: 10, 7: -Infinity, [top]: -3 }, top_k: 20 },
    { banned_tokens: [top], temperature: 0 }, { banned_tokens: [top, 3], top_p: 0.9 },
    { allowed_tokens: [1, 2, 3, 100, top] }, { allowed_tokens: [0, top], top_p: 0.5 },
    { history: hist, repetition_penalty: 1.5, top_k: 30 },
    { history: hist, dry_multiplier: 0.8, no_repeat_ngram_size: 2, min_p: 0.05 },
    { history: hist, frequency_penalty: 0.5, presence_penalty: 0.3, temperature: 0 },
    { history: hist, repetition_penalty: 1.3, top_p: 0.9 },
    { logit_bias: { [top]: -2, 11: 4 }, top_p: 0.5, min_p: 0.01 },
    { history: hist, dry_multiplier: 0.8, presence_penalty: 0.5, top_p: 0.8, temperature: 0 },
    { samplers: ['temperature', 'top_p'], temperature: 0.7, top_p: 0.9 },
    { samplers: ['min_p', 'top_k', 'temperature'], min_p: 0.1, top_k: 10, temperature: 1.5 },
    { top_k: 40, return_distribution: true },
  ];
}

// Numbers within a relative tolerance, everything else exactly (for the
// paths whose normaliser comes from the GPU's sums: Bregman on the whole row,
// logprobs). Returns null or a message.
export function closeResult(got, want, tol, path = '') {
  if (typeof want === 'number') {
    if (Object.is(got, want)) return null;
    return Math.abs(got - want) <= tol * (1 + Math.abs(want)) ? null : `${path} ${got} != ${want}`;
  }
  if (want === null || typeof want !== 'object') return Object.is(got, want) ? null : `${path} ${got} != ${want}`;
  if (ArrayBuffer.isView(want)) {
    if (!ArrayBuffer.isView(got) || got.length !== want.length) return `${path} length ${got?.length} != ${want.length}`;
    for (let i = 0; i < want.length; i++) {
      const e = closeResult(got[i], want[i], want instanceof Float32Array ? tol : 0, `${path}[${i}]`);
      if (e) return e;
    }
    return null;
  }
  for (const key of Object.keys(want)) {
    const t = key === 'token' || key === 'k' || key === 'ids' ? 0 : tol;
    const e = closeResult(got?.[key], want[key], t, `${path}.${key}`);
    if (e) return e;
  }
  return null;
}

// GPU result vs CPU result: exact on the candidate-row paths; the raw
// logprobs (GPU normaliser) and Bregman on the whole row within 1e-5.
export function compareGpu(g, c) {
  if (g.gpu.path === 'bregman with the tail mass') return closeResult(g, c, 1e-5);
  const { raw_logprob: gr, top_logprobs: gt, gpu, ...gRest } = g;
  const { raw_logprob: cr, top_logprobs: ct, ...cRest } = c;
  return sameResult(gRest, cRest) ?? closeResult({ gr, gt }, { gr: cr, gt: ct }, 1e-5);
}

// One call on the CPU path (row) and on the GPU (buf): errors must match (class
// and message; a mismatch goes to `bad`, and null comes back, as when both
// threw); else { c, g, path } with the GPU's path counted in `paths`.
export async function bothPaths(bd, gd, kind, row, buf, o, label, paths, bad) {
  let c, g;
  try { c = bd[kind](row, o); } catch (e) { c = `${e.constructor.name}: ${e.message}`; }
  try { g = await gd[kind](buf, o); } catch (e) { g = `${e.constructor.name}: ${e.message}`; }
  if (typeof c === 'string' || typeof g === 'string') {
    if (c !== g) bad.push(`${label}: gpu ${typeof g === 'string' ? g : 'ok'} / cpu ${typeof c === 'string' ? c : 'ok'}`);
    return null;
  }
  const path = g.gpu.fallback ? `fallback: ${g.gpu.fallback}` : g.gpu.path;
  paths[path] = (paths[path] ?? 0) + 1;
  return { c, g, path };
}

// Every option set on rows of several shapes and sizes: GPU vs CPU, decode and
// seeded sample. Returns { bad, n, paths }.
export async function statelessSweep({ bd, device, upload }, sizes, maxCandidates = 1024, only = null) {
  const bad = [], paths = {};
  let n = 0;
  for (const V of sizes) {
    const gd = bd.createGpuDecoder(device, { vocab: V, maxCandidates });
    const rand = rng(V);
    let rows = [['llm', llmRow(V, rand)], ['peaked', llmRow(V, rand, 1.8)], ['tied', tiedRow(V, rand)],
      ['flat', flatRow(V, rand)], ['sparse', sparseRow(V, rand)]];
    if (only) rows = rows.filter(([shape]) => only.shapes.includes(shape));
    for (const [shape, row] of rows) {
      const buf = upload(row);
      let top = 0;
      for (let i = 1; i < V; i++) if (row[i] > row[top]) top = i;
      const hist = [top, 5 % V, 9 % V, top, 5 % V, 100 % V, 7 % V];
      const sets = only?.sets ? only.sets.map((i) => optionSets(top, hist)[i]) : optionSets(top, hist);
      for (let s = 0; s < sets.length; s++) {
        const o = sets[s];
        for (const kind of only?.kinds ?? ['decode', 'sample']) {
          const oo = kind === 'sample' ? { ...o, seed: 1000 + s, step: V % 97, logprobs: s % 3 === 0, top_logprobs: s % 4 } : o;
          n++;
          const label = `V=${V} ${shape} ${kind} ${JSON.stringify(oo)}`;
          const both = await bothPaths(bd, gd, kind, row, buf, oo, label, paths, bad);
          if (both === null) continue;
          const { c, g } = both;
          if (!g.gpu.fallback && g.gpu.bytesRead >= 4 * V && V > 4 * maxCandidates) bad.push(`${label}: read ${g.gpu.bytesRead} bytes`);
          const e = compareGpu(g, c);
          if (e) bad.push(`${label} [${g.gpu.path}]: ${e}`);
        }
      }
      buf.destroy();
    }
    gd.dispose();
  }
  return { bad, n, paths };
}

// Float32 -> IEEE half bits (round to nearest even; |x| within the half range
// or +-Infinity) and the halves back as float32 (exact).
export function toHalf(data) {
  const n = data.length + (data.length % 2);
  const half = new Uint16Array(n), back = new Float32Array(data.length);
  const f = new Float32Array(1), u = new Uint32Array(f.buffer);
  for (let i = 0; i < data.length; i++) {
    f[0] = data[i];
    const x = u[0], sign = (x >>> 16) & 0x8000;
    let e = ((x >>> 23) & 0xff) - 127 + 15, m = x & 0x7fffff;
    let h;
    if (((x >>> 23) & 0xff) === 0xff) h = sign | 0x7c00 | (m ? 0x200 : 0);
    else if (e <= 0) h = sign;  // flush tiny values to zero (not used by the rows here)
    else {
      let hm = m >>> 13;
      const rest = m & 0x1fff;
      if (rest > 0x1000 || (rest === 0x1000 && (hm & 1))) { hm++; if (hm === 0x400) { hm = 0; e++; } }
      h = e >= 31 ? sign | 0x7c00 : sign | (e << 10) | hm;
    }
    half[i] = h;
    const he = (h >> 10) & 0x1f, hm = h & 0x3ff, s = h & 0x8000 ? -1 : 1;
    back[i] = he === 31 ? (hm ? NaN : s * Infinity) : he === 0 ? s * hm * 2 ** -24 : s * (1 + hm / 1024) * 2 ** (he - 15);
  }
  return { half, back };
}
