// createGpuDecoder: decodes logits that live in a GPUBuffer, reading back a
// few kilobytes instead of the row. The GPU selects, exactly, the top
// `maxCandidates` logits of the row (a radix select on order-preserving keys,
// ties to the lower id, as the CPU orders them) plus the row's statistics; the
// CPU then runs the package's own chain (the wasm decoder, unchanged) on a
// "candidate row": the vocabulary-length row with the candidates (and the ids
// the edit stages touch) at their logits and -Infinity elsewhere. A planner
// proves, per call, that the chain's answer on that row equals its answer on
// the whole row, or rewrites the one stage that needs the whole row's
// normaliser (top-p) into an equivalent one, or falls back to a full readback
// and says so. docs/webgpu.md has the argument.
import { isGreedyTemperature, samplerOwner, snapshotOptions } from '../api.mjs';
import { decoderWgsl, kChunk, kCtlWords, kPartialWords } from './wgsl.mjs';

const DEFAULT_ORDER = ['logit_bias', 'penalties', 'dry', 'no_repeat_ngram', 'top_n_sigma', 'top_k',
  'typical_p', 'top_p', 'min_p', 'xtc', 'epsilon_cutoff', 'eta_cutoff', 'temperature', 'mirostat', 'bregman'];
const EDIT_STAGES = new Set(['logit_bias', 'penalties', 'dry', 'no_repeat_ngram']);
// Which options switch a stage on (as in src/api.js).
const SWITCHES = {
  temperature: (o) => (o.temperature ?? 1) !== 1 || (o.dynatemp_range ?? 0) > 0,
  top_k: (o) => (o.top_k ?? 0) > 0,
  top_p: (o) => (o.top_p ?? 1) < 1,
  min_p: (o) => (o.min_p ?? 0) > 0,
  typical_p: (o) => (o.typical_p ?? 1) < 1,
  epsilon_cutoff: (o) => (o.epsilon_cutoff ?? 0) > 0,
  eta_cutoff: (o) => (o.eta_cutoff ?? 0) > 0,
  top_n_sigma: (o) => (o.top_n_sigma ?? 0) > 0,
  xtc: (o) => (o.xtc_probability ?? 0) > 0,
  penalties: (o) => (o.repetition_penalty ?? 1) !== 1 || (o.frequency_penalty ?? 0) !== 0 ||
    (o.presence_penalty ?? 0) !== 0,
  dry: (o) => (o.dry_multiplier ?? 0) > 0,
  no_repeat_ngram: (o) => (o.no_repeat_ngram_size ?? 0) > 0,
  mirostat: (o) => (o.mirostat ?? 0) !== 0,
  logit_bias: (o) => o.logit_bias != null || o.banned_tokens != null || o.allowed_tokens != null,
  bregman: (o) => o.bregman != null,
};
// A sampler's stages see the latest this many accepted tokens (src/sampler_state.h).
const kMaxHistory = 8192;
// Relative margin on top-p's mass target: the GPU's normaliser and the CPU's
// agree to about 1e-6; a boundary closer than this falls back.
const kMassMargin = 1e-5;

// logit_bias / banned_tokens that only ban (every bias -Infinity).
const bansOnly = (o) => {
  const b = o.logit_bias;
  if (b == null) return true;
  if (typeof b !== 'object') return false;
  return [...(b instanceof Map ? b.values() : Object.values(b))].every((x) => x === -Infinity);
};

const isGreedy = (o) => isGreedyTemperature(o.temperature ?? 1);
// The GPU's normaliser at the scale 1/T the planner needs. Two temperature
// stages in a custom order multiply: T = 1e-20 twice has 1/T = 1e40, Infinity
// as the kernel's float scale, and exp(0 * Infinity) made Z NaN; the phantoms
// then carried no tail and Bregman's objective came out NaN where the CPU's
// was lambda k (found by a review).
const zUsable = (sel) => Number.isFinite(sel.z) && sel.z > 0;
// The options `o` with `extra` over them, keeping o's prototype: the CPU path
// reads options inherited from a defaults object (README), which a spread
// ({ ...o }) drops (found by a review: the restated top-p call and a GPU
// sampler's calls ran without them).
const withOptions = (o, extra) => Object.assign(Object.create(Object.getPrototypeOf(o)), o, extra);
// Brands a GpuSampler with its decoder (a batch refuses another decoder's).
const GPU_SAMPLER = Symbol('bregman-decoders GPU sampler');

function bufferUsage() {
  const U = globalThis.GPUBufferUsage;
  if (!U) throw new TypeError('createGpuDecoder needs WebGPU (GPUBufferUsage is not defined)');
  return U;
}

// Ids the edit stages read or write, for one call: they are left out of the
// GPU's selection and gathered with their logits, so the CPU applies the
// edits itself (bit for bit as on the whole row). Returns the stages that act.
function listedIds(o, history, vocab, order, out) {
  const acting = new Set();
  const add = (v) => {
    // Ill-typed options are left to the CPU call, which throws the package's TypeError.
    if (v === null || typeof v !== 'object') return;
    const it = v instanceof Map ? v.keys() : (typeof v === 'object' && !Array.isArray(v) &&
      !ArrayBuffer.isView(v)) ? Object.keys(v) : v;
    for (const x of it) {
      const id = Number(x);
      if (Number.isInteger(id) && id >= 0 && id < vocab) out.add(id);
    }
  };
  for (const s of order) {
    if (!EDIT_STAGES.has(s) || !SWITCHES[s](o)) continue;
    if (s === 'logit_bias') {
      add(o.logit_bias);
      add(o.banned_tokens);
      add(o.allowed_tokens);
      acting.add(s);
    } else if (history && history.length > 0) {
      add(history);
      acting.add(s);
    }
  }
  return acting;
}

/**
 * @param {object} bd a loaded bregman-decoders instance
 * @param {GPUDevice} device
 * @param {{vocab: number, maxCandidates?: number, dtype?: 'f32'|'f16'}} config
 */
export function createGpuDecoder(bd, device, config) {
  if (device === null || typeof device !== 'object' || typeof device.createBuffer !== 'function') {
    throw new TypeError('device must be a GPUDevice');
  }
  if (config === null || typeof config !== 'object') throw new TypeError('createGpuDecoder needs { vocab }');
  const { vocab, maxCandidates = 1024, dtype = 'f32' } = config;
  if (typeof vocab !== 'number') throw new TypeError('vocab must be a number');
  if (!Number.isInteger(vocab) || vocab < 1 || vocab > 0x7fffffff) throw new RangeError(`vocab must be an integer >= 1, got ${vocab}`);
  // The CPU path refuses longer rows (every call would select on the GPU, then
  // throw the CPU's RangeError on the candidate row: found by a review).
  if (vocab > bd.maxVocab) throw new RangeError(`vocab ${vocab} exceeds the largest vocabulary (${bd.maxVocab})`);
  if (typeof maxCandidates !== 'number') throw new TypeError('maxCandidates must be a number');
  if (!Number.isInteger(maxCandidates) || maxCandidates < 256 || maxCandidates > 65536) {
    throw new RangeError(`maxCandidates must be an integer in [256, 65536], got ${maxCandidates}`);
  }
  if (dtype !== 'f32' && dtype !== 'f16') throw new RangeError(`dtype must be 'f32' or 'f16', got ${dtype}`);
  const U = bufferUsage();
  const elemBytes = dtype === 'f16' ? 2 : 4;
  const M = Math.min(maxCandidates, vocab);
  const nWg = Math.ceil(vocab / kChunk);

  const module = device.createShaderModule({ code: decoderWgsl(dtype) });
  const entries = [
    { binding: 0, visibility: 4, buffer: { type: 'read-only-storage' } },
    { binding: 1, visibility: 4, buffer: { type: 'uniform' } },
    { binding: 2, visibility: 4, buffer: { type: 'read-only-storage' } },
    { binding: 3, visibility: 4, buffer: { type: 'storage' } },
    { binding: 4, visibility: 4, buffer: { type: 'storage' } },
    { binding: 5, visibility: 4, buffer: { type: 'storage' } },
    { binding: 6, visibility: 4, buffer: { type: 'storage' } },
  ];
  const layout = device.createBindGroupLayout({ entries });
  const pipelineLayout = device.createPipelineLayout({ bindGroupLayouts: [layout] });
  const pipe = (entryPoint) => device.createComputePipeline({
    layout: pipelineLayout, compute: { module, entryPoint },
  });
  const P = { init: pipe('init'), stats: pipe('stats'), histo: pipe('histo'), pick: pipe('pick'), compact: pipe('compact') };

  const params = device.createBuffer({ size: 32, usage: U.UNIFORM | U.COPY_DST });
  const ctl = device.createBuffer({ size: kCtlWords * 4, usage: U.STORAGE | U.COPY_SRC });
  const hist = device.createBuffer({ size: 256 * 4, usage: U.STORAGE });
  const partials = device.createBuffer({ size: nWg * kPartialWords * 4, usage: U.STORAGE | U.COPY_SRC });
  let listedCap = 0, listed = null, out = null, staging = null, stagingBytes = 0;
  // Grows the listed-id buffers (only when a call lists more ids than any
  // before: no allocation in steady state).
  function ensureListed(n) {
    if (listed !== null && n <= listedCap) return;
    listedCap = Math.max(64, n, 2 * listedCap);
    listed?.destroy(); out?.destroy(); staging?.destroy();
    listed = device.createBuffer({ size: listedCap * 4, usage: U.STORAGE | U.COPY_DST });
    out = device.createBuffer({ size: (2 * M + listedCap) * 4, usage: U.STORAGE | U.COPY_SRC });
    stagingBytes = (kCtlWords + nWg * kPartialWords + 2 * M + listedCap) * 4;
    staging = device.createBuffer({ size: stagingBytes, usage: U.MAP_READ | U.COPY_DST });
    bindGroups = new WeakMap();
  }
  // The logits are bound as a window around the row: [offset, offset + size)
  // with offset the row's start rounded down to the storage offset alignment.
  // (The whole buffer was bound before: a [rows, V] buffer larger than the
  // device's maxStorageBufferBindingSize, 128 MiB by default, i.e. 129 rows
  // at V = 262144, failed on every row; found by a review.) One bind group
  // per buffer and window, kept while the buffer lives.
  const offsetAlign = device.limits?.minStorageBufferOffsetAlignment ?? 256;
  function rowWindow(rowIndex) {
    const start = rowIndex * vocab * elemBytes;
    const offset = Math.floor(start / offsetAlign) * offsetAlign;
    const size = Math.ceil((start + vocab * elemBytes - offset) / 4) * 4;
    return { offset, size, rowBase: (start - offset) / elemBytes };
  }
  let bindGroups = new WeakMap();
  function bindGroupFor(buffer, win) {
    let byWindow = bindGroups.get(buffer);
    if (!byWindow) bindGroups.set(buffer, byWindow = new Map());
    const key = `${win.offset}:${win.size}`;
    let g = byWindow.get(key);
    if (!g) {
      g = device.createBindGroup({
        layout,
        entries: [{ buffer, offset: win.offset, size: win.size }, ...[params, listed, ctl, hist, partials, out].map((b) => ({ buffer: b }))]
          .map((resource, binding) => ({ binding, resource })),
      });
      byWindow.set(key, g);
    }
    return g;
  }
  ensureListed(64);

  // Host-side scratch, reused across calls.
  const paramWords = new ArrayBuffer(32);
  const paramU32 = new Uint32Array(paramWords), paramF32 = new Float32Array(paramWords);
  const candIds = new Int32Array(M), candLogits = new Float32Array(M);
  const order = new Int32Array(M);
  const row = new Float32Array(vocab).fill(-Infinity);  // the candidate row
  let fullRow = null, fullStaging = null;
  const listedSet = new Set();
  let listedIdsArr = new Uint32Array(64), listedVals = new Float32Array(64);

  const totals = { calls: 0, fallbacks: 0, bytesRead: 0, fallbackReasons: {} };
  let queue = Promise.resolve();
  const serial = (fn) => {
    const p = queue.then(fn);
    queue = p.catch(() => {});
    return p;
  };
  let disposed = false;

  function checkBuffer(buffer, rowIndex) {
    if (disposed) throw new TypeError('this GPU decoder was disposed');
    if (buffer === null || typeof buffer !== 'object' || typeof buffer.mapAsync !== 'function') {
      throw new TypeError('logits must be a GPUBuffer');
    }
    if ((buffer.usage & U.STORAGE) === 0) throw new TypeError('logits GPUBuffer needs GPUBufferUsage.STORAGE');
    // WebGPU binds storage buffers (and copies them) in whole 4-byte words: a
    // buffer of an odd number of halves failed at its bind group with a
    // WebGPU validation error, and every later call on it too (found by a review).
    if (buffer.size % 4 !== 0) {
      throw new RangeError(`logits GPUBuffer of ${buffer.size} bytes: its size must be a multiple of 4 (pad the buffer)`);
    }
    // (A fraction, a negative or NaN row read another row's logits, or the
    // middle of one, without an error: found by a review.)
    if (typeof rowIndex !== 'number') throw new TypeError(`row must be a number, got ${typeof rowIndex}`);
    if (!Number.isInteger(rowIndex) || rowIndex < 0) {
      throw new RangeError(`row must be an integer >= 0, got ${rowIndex}`);
    }
    if ((rowIndex + 1) * vocab * elemBytes > buffer.size) {
      throw new RangeError(`logits GPUBuffer of ${buffer.size} bytes has no row ${rowIndex} of ${vocab} ${dtype}`);
    }
  }

  // GPU: statistics and the exact top-m selection of one row; reads back
  // only the control block, the per-workgroup partials and the candidates.
  async function select(buffer, rowIndex, scale, scalePow, ids) {
    const nListed = ids.length;
    ensureListed(nListed);
    if (listedIdsArr.length < nListed) {
      listedIdsArr = new Uint32Array(listedCap);
      listedVals = new Float32Array(listedCap);
    }
    listedIdsArr.set(ids);
    if (nListed) device.queue.writeBuffer(listed, 0, listedIdsArr, 0, nListed);
    const win = rowWindow(rowIndex);
    paramU32[0] = vocab; paramU32[1] = win.rowBase; paramU32[2] = M; paramU32[3] = nListed;
    paramF32[4] = scale; paramF32[5] = scalePow; paramU32[6] = nWg; paramU32[7] = 0;
    device.queue.writeBuffer(params, 0, paramWords);
    const partialBytes = nWg * kPartialWords * 4;
    const outWords = 2 * M + nListed;
    device.pushErrorScope('validation');
    // The scope is popped whatever happens: a throw here (a buffer-like object
    // that is no GPUBuffer) left it pushed, and it swallowed the device's
    // later validation errors, the caller's own (found by a review).
    let thrown = null;
    try {
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setBindGroup(0, bindGroupFor(buffer, win));
      pass.setPipeline(P.init); pass.dispatchWorkgroups(1);
      pass.setPipeline(P.stats); pass.dispatchWorkgroups(nWg);
      for (let level = 0; level < 8; level++) {
        pass.setPipeline(P.histo); pass.dispatchWorkgroups(nWg);
        pass.setPipeline(P.pick); pass.dispatchWorkgroups(1);
      }
      pass.setPipeline(P.compact); pass.dispatchWorkgroups(nWg);
      pass.end();
      enc.copyBufferToBuffer(ctl, 0, staging, 0, kCtlWords * 4);
      enc.copyBufferToBuffer(partials, 0, staging, kCtlWords * 4, partialBytes);
      enc.copyBufferToBuffer(out, 0, staging, kCtlWords * 4 + partialBytes, outWords * 4);
      device.queue.submit([enc.finish()]);
    } catch (e) {
      thrown = e;
    }
    const gpuError = await device.popErrorScope();
    if (thrown) throw thrown;
    if (gpuError) throw new Error(`WebGPU: ${gpuError.message}`);
    const bytes = kCtlWords * 4 + partialBytes + outWords * 4;
    await staging.mapAsync(globalThis.GPUMapMode.READ, 0, bytes);
    const words = staging.getMappedRange(0, bytes);
    const u = new Uint32Array(words), f = new Float32Array(words);
    const levels = u[0], m = u[6], count = u[7];
    // Merge the partials in float64: Z = sum_w s_w exp((m_w - max) scale).
    let max = -Infinity, nSel = 0, flags = 0;
    for (let w = 0; w < nWg; w++) {
      const o = kCtlWords + w * kPartialWords;
      if (u[o + 2] > 0) max = Math.max(max, f[o]);
      nSel += u[o + 2];
      flags |= u[o + 3];
    }
    // The sums, relative to the selectable max: at the normaliser's scale
    // and at 1; and the part below the threshold at Bregman's power, relative
    // to the threshold's logit (every workgroup's sum to the same reference).
    let z = 0, zRaw = 0, tailPow = 0;
    for (let w = 0; w < nWg; w++) {
      const o = kCtlWords + w * kPartialWords;
      tailPow += f[o + 4];
      if (u[o + 2] === 0) continue;
      const d = f[o] - max;
      z += f[o + 1] * Math.exp(d * scale);
      zRaw += f[o + 5] * Math.exp(d);
    }
    const threshold = keyHiFloat(u[4]);
    const base = kCtlWords + nWg * kPartialWords;
    for (let i = 0; i < m; i++) {
      candIds[i] = u[base + i];
      candLogits[i] = f[base + M + i];
    }
    for (let i = 0; i < nListed; i++) listedVals[i] = f[base + 2 * M + i];
    staging.unmap();
    if (count !== m) throw new Error(`GPU selection wrote ${count} candidates, expected ${m}`);
    return { m, nSel, max, z, zRaw, tailPow, threshold, flags, bytes, levels };
  }

  async function readFullRow(buffer, rowIndex) {
    const bytes = vocab * elemBytes;
    if (fullStaging === null) {
      fullStaging = device.createBuffer({ size: Math.ceil(bytes / 4) * 4 + 4, usage: U.MAP_READ | U.COPY_DST });
      fullRow = new Float32Array(vocab);
    }
    if ((buffer.usage & U.COPY_SRC) === 0) {
      throw new TypeError('logits GPUBuffer needs GPUBufferUsage.COPY_SRC for the full-readback fallback');
    }
    // Copies need 4-byte alignment: an f16 row may start mid-word.
    const start = Math.floor((rowIndex * bytes) / 4) * 4, shift = rowIndex * bytes - start;
    const size = Math.min(Math.ceil((shift + bytes) / 4) * 4, buffer.size - start);
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(buffer, start, fullStaging, 0, size);
    device.queue.submit([enc.finish()]);
    await fullStaging.mapAsync(globalThis.GPUMapMode.READ, 0, size);
    const mapped = fullStaging.getMappedRange(0, size);
    if (dtype === 'f32') fullRow.set(new Float32Array(mapped, 0, vocab));
    else { const h = new Uint16Array(mapped, shift, vocab); for (let i = 0; i < vocab; i++) fullRow[i] = f16ToF32(h[i]); }
    fullStaging.unmap();
    return bytes;
  }

  const fallback = (reason) => ({ kind: 'fallback', reason });

  // Decides how a call is answered (docs/webgpu.md, "Exactness"): walks the
  // chain as the CPU does while the row is still untruncated, up to the first
  // stage whose answer needs more than the candidates.
  //   exact:   the candidate row gives the whole row's answer bit for bit
  //   top_p:   top-p on the whole row: restated on the nucleus (nucleusCall)
  //   bregman: Bregman on the whole row: tail mass carried by phantoms (bregmanCall)
  //   fallback: full readback
  function plan(o, chain, acting, greedy, sel, isSample) {
    if (sel.flags & 3) return fallback('NaN or +Infinity in the row (the CPU reports it)');
    if (sel.nSel <= M) return { kind: 'exact', reason: 'every finite logit is a candidate', complete: true };
    // (decode() reports no log-probabilities: its top_logprobs reads nothing.)
    const topLogprobs = isSample && typeof o.top_logprobs === 'number' ? o.top_logprobs : 0;
    if (topLogprobs >= sel.m) return fallback('top_logprobs larger than the candidates');
    const minKeep = Math.max(typeof o.min_keep === 'number' ? o.min_keep : 1, 1);
    const on = (s) => ((s === 'temperature' || s === 'mirostat' || s === 'bregman') && greedy ? false
      : Boolean(SWITCHES[s]?.(o)));
    // Greedy answers the first maximum of what survives the chain. Top-k,
    // top-p and min-p always keep it (they keep the sorted head), so where
    // only such stages follow, they cannot change a greedy answer and the
    // candidate row's greedy answer is the row's (an edit, typical or XTC
    // after them could: they are planned as without greedy).
    const keepsFirstMax = (x) => x === 'top_k' || x === 'top_p' || x === 'min_p';
    let temp = 1, edited = false;
    for (let i = 0; i < chain.length; i++) {
      const s = chain[i];
      if (!on(s)) continue;
      if (greedy && keepsFirstMax(s) && chain.slice(i + 1).every((x) => !on(x) || keepsFirstMax(x))) continue;
      if (EDIT_STAGES.has(s)) {
        if (!acting.has(s)) continue;
        // The allowed set bans every other id: every finite logit left is listed.
        if (s === 'logit_bias' && o.allowed_tokens != null) return { kind: 'exact', reason: 'allowed_tokens' };
        // Bans only remove listed ids, which are out of the selection and of
        // the GPU's normaliser already: the values that remain are the row's.
        if (!(s === 'logit_bias' && bansOnly(o))) edited = true;
        continue;
      }
      switch (s) {
        case 'top_k': {
          const k = Math.max(o.top_k, minKeep);
          return k < sel.m ? { kind: 'exact', reason: 'top_k' } : fallback(`top_k ${k} >= maxCandidates`);
        }
        case 'min_p': {
          // Every logit >= t is a candidate when the smallest selected one is
          // below t (the rest of the row is below it). The edits change listed
          // ids only, so they can only raise the max: t >= this bound.
          const t = sel.max + temp * Math.log(Math.fround(o.min_p));
          const fits = minKeep < sel.m && sel.min < t - 1e-6 * (1 + Math.abs(t));
          return fits ? { kind: 'exact', reason: 'min_p' } : fallback('min_p set larger than the candidates');
        }
        case 'top_p':
          if (!zUsable(sel)) return fallback('top_p normaliser not finite (1/T overflows float)');
          // A restated call rewrites top_p for every top-p stage of the chain.
          if (chain.slice(i + 1).some((t) => t === 'top_p' && on(t))) {
            return fallback('top_p listed twice in samplers');
          }
          // Listed ids (an edit stage acting anywhere in the chain, also after
          // top-p in a custom order) are out of the selection and of the GPU's
          // normaliser: only the edited call puts their logits back.
          return { kind: edited || acting.size > 0 ? 'top_p_edited' : 'top_p', temp };
        case 'bregman':
          if (edited) return fallback('bregman after value edits (needs the edited normaliser)');
          if (!zUsable(sel)) return fallback('Bregman normaliser not finite (1/T overflows float)');
          if (chain.slice(i + 1).some(on)) return fallback('stages after bregman over the whole row');
          return { kind: 'bregman', temp };
        case 'temperature':
          if ((o.dynatemp_range ?? 0) > 0) return fallback('dynamic temperature over the whole row');
          temp *= o.temperature;
          continue;
        default:
          return fallback(`${s} over the whole row`);
      }
    }
    return greedy ? { kind: 'exact', reason: 'greedy' } : fallback('no truncation: the draw walks the whole row');
  }

  // The candidates in the CPU's order (logit descending, lower id first).
  function sortCandidates(m) {
    for (let i = 0; i < m; i++) order[i] = i;
    return order.subarray(0, m).sort((a, b) => byKey(candLogits[a], candIds[a], candLogits[b], candIds[b]));
  }

  function fillRow(n, listedN, sorted) {
    for (let i = 0; i < n; i++) {
      const j = sorted ? sorted[i] : i;
      row[candIds[j]] = candLogits[j];
    }
    for (let i = 0; i < listedN; i++) row[listedIdsArr[i]] = listedVals[i];
  }
  function clearRow(n, listedN, sorted) {
    for (let i = 0; i < n; i++) row[candIds[sorted ? sorted[i] : i]] = -Infinity;
    for (let i = 0; i < listedN; i++) row[listedIdsArr[i]] = -Infinity;
  }

  // top-p on the untruncated row: finds the nucleus with the whole row's
  // normaliser, with a margin (the GPU's normaliser and the CPU's differ in
  // rounding), then states the same cut on the nucleus plus the next
  // candidate with top_p = p' (the same stage, so the survivors keep the CPU's
  // layout: sorted up to 256, id order beyond).
  function nucleusCall(o, temp, sel, cpu) {
    // Restating replaces the caller's top_p: an invalid one must reach the
    // CPU as it is, to throw its own error (after the full readback).
    if (!(typeof o.top_p === 'number' && o.top_p <= 1 && Math.fround(o.top_p) > 0)) {
      return { reason: 'top_p not a number in (0, 1] (the CPU reports it)' };
    }
    const m = sel.m, sorted = sortCandidates(m);
    const minKeep = Math.max(typeof o.min_keep === 'number' ? o.min_keep : 1, 1);
    const target = Math.fround(o.top_p) * (1 - 1e-6) * sel.z;
    const lo = target * (1 - kMassMargin), hi = target * (1 + kMassMargin);
    const max = candLogits[sorted[0]];
    let cum = 0, nLo = 0, nHi = 0, cumBefore = 0, cumAt = 0;
    for (let i = 0; i < m - 1; i++) {
      const prev = cum;
      cum += Math.exp((candLogits[sorted[i]] - max) / temp);
      if (i + 1 < minKeep) continue;
      if (nLo === 0 && cum >= lo) { nLo = i + 1; cumBefore = prev; cumAt = cum; }
      if (cum >= hi) { nHi = i + 1; break; }
    }
    if (nHi === 0) return { reason: 'top_p nucleus larger than the candidates' };
    if (nLo !== nHi) return { reason: 'top_p boundary within rounding of the normaliser' };
    const n = nLo;
    // A nucleus of exactly min_keep entries: the CPU keeps them by top-k, in
    // sorted order, where the restated call (whose nucleus by mass is
    // n + 1 or more) keeps them in id order past 256: another draw order.
    if (n === minKeep && minKeep > 256) return { reason: 'top_p nucleus of min_keep (> 256) entries' };
    const zNext = cumAt + Math.exp((candLogits[sorted[n]] - max) / temp);
    const p = Math.fround((cumBefore + cumAt) / 2 / ((1 - 1e-6) * zNext));
    const t2 = p * (1 - 1e-6) * zNext;
    const ok = p > 0 && p < 1 && cumAt >= t2 * (1 + kMassMargin) &&
      (n <= minKeep || cumBefore < t2 * (1 - kMassMargin));
    if (!ok) return { reason: 'top_p nucleus too flat to restate' };
    fillRow(n + 1, 0, sorted);
    try {
      return { result: cpu(row, withOptions(o, { top_p: p })), reason: 'top_p nucleus restated' };
    } finally {
      clearRow(n + 1, 0, sorted);
    }
  }

  let phantomIds = null;
  function placePhantoms(ph) {
    if (phantomIds === null) phantomIds = new Int32Array(vocab);
    let placed = 0;
    for (let id = 0; id < vocab && placed < ph.n; id++) {
      if (row[id] !== -Infinity || listedSet.has(id)) continue;
      row[id] = ph.l;
      phantomIds[placed++] = id;
    }
    ph.placed = placed;
  }
  function clearPhantoms(ph) {
    for (let i = 0; i < ph.placed; i++) row[phantomIds[i]] = -Infinity;
  }

  // The options of the chain up to and including `last` (the nucleus alone).
  const STAGE_KEYS = {
    logit_bias: ['logit_bias', 'banned_tokens', 'allowed_tokens'],
    penalties: ['repetition_penalty', 'frequency_penalty', 'presence_penalty', 'penalty_last_n'],
    dry: ['dry_multiplier', 'dry_base', 'dry_allowed_length', 'dry_penalty_last_n', 'dry_sequence_breakers'],
    no_repeat_ngram: ['no_repeat_ngram_size'],
    temperature: ['temperature', 'dynatemp_range', 'dynatemp_exponent'],
    top_p: ['top_p'],
  };
  // history: the penalties' history (a mirostat sampler's own, which its
  // options do not carry).
  function prefixOptions(o, chain, last, greedy, history) {
    const samplers = chain.slice(0, chain.indexOf(last) + 1);
    const p = { samplers };
    for (const k of ['min_keep', 'history', 'seed', 'step']) if (o[k] !== undefined) p[k] = o[k];
    if (history !== undefined && history.length > 0) p.history = history;
    for (const s of samplers) {
      if (greedy && s === 'temperature') continue;  // greedy skips it on the whole row too
      for (const k of STAGE_KEYS[s] ?? []) if (o[k] !== undefined) p[k] = o[k];
    }
    return p;
  }

  // top-p after edits that change values: the edited normaliser is the
  // candidates' and listed ids' (edited by the CPU on the candidate row) plus
  // the tail's mass, which the GPU knows. Phantoms carry the tail mass; the
  // nucleus (the chain up to top-p alone) must come out the same with that
  // mass moved by -+kMassMargin Z and must not reach the lowest selected
  // candidate (then every member ranks above the whole tail). The nucleus
  // grows with Z, so the CPU's own nucleus on the row is that one too, and
  // the rest of the chain and the draw run on the same list: identical.
  function editedTopPCall(o, temp, sel, cpu, nListed, chain, greedy, history) {
    const m = sel.m;
    let zSel = 0, last = 0;
    for (let i = 0; i < m; i++) {
      zSel += Math.exp((candLogits[i] - sel.max) / temp);
      if (byKey(candLogits[i], candIds[i], candLogits[last], candIds[last]) > 0) last = i;
    }
    const Z = sel.z, tail = Math.max(Z - zSel, 0);
    const eMin = Math.exp((sel.min - sel.max) / temp), slots = vocab - m - nListed;
    const phantoms = (mass) => {
      if (!(mass > 0)) return { n: 0, l: 0, mass: 0 };
      let n = Math.ceil(mass / eMin) + 1;
      for (let tries = 0; tries < 8 && n <= slots; tries++, n *= 2) {
        const l = Math.fround(sel.max + temp * Math.log(mass / n));
        if (l < sel.min && l > -3.4e38) return { n, l, mass: n * Math.exp((l - sel.max) / temp) };
      }
      return null;
    };
    const lower = phantoms(Math.max(tail - kMassMargin * Z, 0));
    const upper = phantoms(tail + kMassMargin * Z);
    const mid = phantoms(tail);
    if (!lower || !upper || !mid) return { reason: 'top_p tail mass does not fit the free slots' };
    const prefix = prefixOptions(o, chain, 'top_p', greedy, history);
    const lowest = candIds[last];
    fillRow(m, nListed, null);
    try {
      const nucleusWith = (ph) => {
        placePhantoms(ph);
        try { return bd.decode(row, prefix).ids; } finally { clearPhantoms(ph); }
      };
      const a = nucleusWith(lower), b = nucleusWith(upper);
      if (b.includes(lowest)) return { reason: 'top_p nucleus larger than the candidates' };
      if (a.length !== b.length || a.some((x, i) => x !== b[i])) {
        return { reason: 'top_p boundary within rounding of the normaliser' };
      }
      placePhantoms(mid);
      try { return { result: cpu(row, o), reason: 'top_p with the tail mass' }; } finally { clearPhantoms(mid); }
    } finally {
      clearRow(m, nListed, null);
    }
  }

  // Bregman on the untruncated row. Its k and q depend on the head's
  // probabilities p_i = e_i / Z, i.e. on the whole row's normaliser: the
  // candidate row gets "phantom" logits in free slots, all below every
  // candidate, carrying the tail's mass, so its normaliser is the row's. The
  // k must come out the same with the tail mass moved by +-kMassMargin Z (the
  // rounding of Z cannot move it), k + 1 must stay among the candidates, and a
  // draw must not fall within 1e-5 of a boundary of the cumulative q.
  function bregmanCall(o, temp, sel, cpu, isSample) {
    const b = o.bregman;
    const alpha = typeof b.alpha === 'number' ? b.alpha : 1;
    const m = sel.m, sorted = sortCandidates(m);
    const max = candLogits[sorted[0]];
    let zU = 0;
    for (let i = 0; i < m; i++) zU += Math.exp((candLogits[sorted[i]] - max) / temp);
    const Z = sel.z, tail = Math.max(Z - zU, 0);
    const lMin = candLogits[sorted[m - 1]];
    const eMin = Math.exp((lMin - max) / temp);
    const slots = vocab - m;
    const phantoms = (mass) => {
      if (!(mass > 0)) return { n: 0, l: 0, mass: 0 };
      let n = Math.ceil(mass / eMin) + 1;
      for (let tries = 0; tries < 8 && n <= slots; tries++, n *= 2) {
        const l = Math.fround(max + temp * Math.log(mass / n));
        if (l < lMin && l > -3.4e38) return { n, l, mass: n * Math.exp((l - max) / temp) };
      }
      return null;
    };
    const lower = phantoms(Math.max(tail - kMassMargin * Z, 0));
    const upper = phantoms(tail + kMassMargin * Z);
    const mid = phantoms(tail);
    if (!lower || !upper || !mid) return { reason: 'Bregman tail mass does not fit the free slots' };
    fillRow(m, 0, null);
    try {
      const kWith = (ph) => {
        placePhantoms(ph);
        try { return bd.decode(row, o).k; } finally { clearPhantoms(ph); }
      };
      const k = kWith(lower);
      if (kWith(upper) !== k) return { reason: 'Bregman k within rounding of lambda' };
      if (k >= m - 1) return { reason: 'Bregman k reaches the candidates' };
      placePhantoms(mid);
      try {
        if (!isSample) {
          const result = cpu(row, o);
          if (result.objective !== undefined && alpha !== 1) {
            // The phantoms price the dropped tokens with their own sum of
            // p^alpha: replace it with the row's tail, which the GPU summed
            // from the tokens below the candidates themselves (relative to the
            // threshold's logit, so it keeps its precision however small).
            const zP = zU + mid.mass;
            const tailPow = sel.tailPow * Math.exp((alpha * (sel.threshold - max)) / temp) / Z ** alpha;
            const phantomPow = mid.n * Math.exp((alpha * (mid.l - max)) / temp) / zP ** alpha;
            const c = b.divergence === 'dual' ? 1 / (alpha * (alpha - 1)) : 1 / alpha;
            result.objective += c * (tailPow - phantomPow);
          }
          return { result, reason: 'bregman with the tail mass' };
        }
        const seeded = o.seed !== undefined;
        const oo = withOptions(o, { return_distribution: true });
        if (!seeded) {
          if (o.step !== undefined) throw new RangeError('step needs a seed');  // as the CPU path
          oo.seed = randomSeed();
          oo.step = 0;
        }
        const result = cpu(row, oo);
        const u = uniformDraw(BigInt(oo.seed), BigInt(oo.step ?? 0));
        const { ids: dIds, probs } = result.distribution;
        let cum = 0, j = 0;
        for (; j < probs.length; j++) {
          const before = cum;
          cum += probs[j];
          if (cum > u) {
            if (u - before < 1e-5 || cum - u < 1e-5) return { reason: 'Bregman draw within rounding of a boundary' };
            break;
          }
        }
        if (dIds[Math.min(j, probs.length - 1)] !== result.token) return { reason: 'Bregman draw off the distribution' };
        if (!o.return_distribution) delete result.distribution;
        return { result, reason: 'bregman with the tail mass' };
      } finally {
        clearPhantoms(mid);
      }
    } finally {
      clearRow(m, 0, null);
    }
  }

  // log p under softmax(logits) (logprobs, top_logprobs) on a path whose
  // candidate row lacks the tail: from the GPU's raw sum plus the listed ids.
  function patchRaw(result, sel, nListed, topLogprobs) {
    let rawMax = sel.max;
    for (let i = 0; i < nListed; i++) if (listedVals[i] > rawMax) rawMax = listedVals[i];
    let z = sel.zRaw * Math.exp(sel.max - rawMax);
    for (let i = 0; i < nListed; i++) if (listedVals[i] > -Infinity) z += Math.exp(listedVals[i] - rawMax);
    const logZ = Math.log(z);
    const entries = [];
    for (let i = 0; i < sel.m; i++) entries.push([candIds[i], candLogits[i]]);
    for (let i = 0; i < nListed; i++) entries.push([listedIdsArr[i], listedVals[i]]);
    if (result.raw_logprob !== undefined) {
      const e = entries.find(([id]) => id === result.token);
      result.raw_logprob = e[1] - rawMax - logZ;
    }
    if (result.top_logprobs) {
      entries.sort((a, b) => byKey(a[1], a[0], b[1], b[0]));
      // The count asked for: a restated call ran on a shorter candidate row
      // (a nucleus and one more token), whose own list may be shorter.
      result.top_logprobs = entries.slice(0, topLogprobs)
        .map(([token, v]) => ({ token, logprob: Math.fround(v - rawMax - logZ) }));
    }
  }

  // One row: select on the GPU, plan, then run `cpu(row, options)` on the
  // candidate row (or on the full row after a fallback).
  async function runRow(buffer, rowIndex, o, history, cpu, allowRewrite, isSample) {
    const chain = Array.isArray(o.samplers) ? o.samplers : DEFAULT_ORDER;
    const greedy = isGreedy(o);
    listedSet.clear();
    const acting = listedIds(o, history, vocab, chain, listedSet);
    const ids = Uint32Array.from([...listedSet].sort((a, b) => a - b));
    // The normaliser is taken at the temperature in force where the first
    // stage that needs it (top-p, Bregman) runs: the first one switched on
    // (the default order lists top-p before the temperature, Bregman after).
    let temp = 1;
    for (const s of chain) {
      if ((s === 'top_p' || s === 'bregman') && SWITCHES[s](o)) break;
      if (s === 'temperature' && !greedy && typeof o.temperature === 'number' && o.temperature > 0) temp *= o.temperature;
    }
    const alpha = o.bregman && typeof o.bregman.alpha === 'number' ? o.bregman.alpha : 1;
    const sel = await select(buffer, rowIndex, Math.fround(1 / temp), Math.fround(alpha / temp), ids);
    let min = Infinity;
    for (let i = 0; i < sel.m; i++) if (candLogits[i] < min) min = candLogits[i];
    sel.min = min;
    const d = plan(o, chain, acting, greedy, sel, isSample);
    const info = {
      bytesRead: sel.bytes, fallback: null, path: d.reason, candidates: sel.m,
      rowPasses: 2 + sel.levels, dispatches: 19,
    };
    let result = null, reason = d.reason;
    if (d.kind === 'exact') {
      fillRow(sel.m, ids.length, null);
      try { result = cpu(row, o); } finally { clearRow(sel.m, ids.length, null); }
    } else if (d.kind === 'top_p' || d.kind === 'top_p_edited' || d.kind === 'bregman') {
      // A mirostat sampler (its state in wasm) cannot take rewritten options:
      // its top-p takes the edited call, which restates nothing (the nucleus
      // from a stateless call of the chain up to top-p, with the sampler's
      // history), and its Bregman falls back.
      const r = d.kind === 'bregman'
        ? (allowRewrite ? bregmanCall(o, d.temp, sel, cpu, isSample)
          : { reason: 'bregman over the whole row in a mirostat sampler' })
        : d.kind === 'top_p' && allowRewrite ? nucleusCall(o, d.temp, sel, cpu)
          : editedTopPCall(o, d.temp, sel, cpu, ids.length, chain, greedy, history);
      result = r.result ?? null;
      reason = r.reason;
    }
    if (result !== null) {
      info.path = reason;
      if (!d.complete && isSample && (o.logprobs || o.top_logprobs)) patchRaw(result, sel, ids.length, o.top_logprobs ?? 0);
    } else {
      info.bytesRead += await readFullRow(buffer, rowIndex);
      info.fallback = reason;
      info.path = 'full readback';
      totals.fallbacks += 1;
      totals.fallbackReasons[reason] = (totals.fallbackReasons[reason] ?? 0) + 1;
    }
    // Counted before a fallback's CPU call, which may throw (bad options, a
    // NaN in the row): its fallback and readback happened (a review found the
    // fallback counted without its call or bytes).
    totals.calls += 1;
    totals.bytesRead += info.bytesRead;
    if (result === null) result = cpu(fullRow, o);
    result.gpu = info;
    return result;
  }

  function checkOptions(options) {
    if (options === undefined || options === null) return {};
    if (typeof options !== 'object') throw new TypeError(`options must be an object, got ${typeof options}`);
    return options;
  }

  // A stateful sampler over GPU rows. Without mirostat its state (history,
  // draw counter, seed) is kept here and each step is the stateless call with
  // that history, seed and step (what the wasm sampler does); with mirostat a
  // wasm sampler carries mu.
  class GpuSampler {
    constructor(options, state) {
      this[GPU_SAMPLER] = api;
      this._options = options;
      this._disposed = false;
      if (state) {
        Object.assign(this, state);
        this._history = state._history.slice();
        this._cpu = state._cpu ? state._cpu.clone() : null;
        return;
      }
      if (options.history !== undefined) throw new RangeError('history is for the stateless calls; feed a sampler with accept()');
      if (options.step !== undefined) throw new RangeError('step is for the stateless calls; a sampler counts its own draws');
      this._seed = options.seed ?? randomSeed();
      this._history = [];
      this._step = 0;
      // A wasm sampler validates the options (TypeError / RangeError now, not
      // at the first draw); with mirostat it also carries mu.
      const cpu = bd.createSampler(withOptions(options, { seed: this._seed }));
      if ((options.mirostat ?? 0) !== 0) this._cpu = cpu;
      else { cpu.dispose(); this._cpu = null; }
    }
    // As the wasm sampler: a disposed sampler (or one of a disposed GPU
    // decoder) answers nothing, with a TypeError (README, "Errors").
    _alive() {
      if (disposed) throw new TypeError('this GPU decoder was disposed');
      if (this._disposed) throw new TypeError('this sampler was disposed');
    }
    _stateless() {
      return withOptions(this._options, { seed: this._seed, step: this._step, history: this._seen() });
    }
    // The tokens the stages see: the latest kMaxHistory.
    _seen() {
      return this._history.length > kMaxHistory ? this._history.slice(-kMaxHistory) : this._history;
    }
    sample(buffer, rowIndex = 0) { return serial(() => this._sampleNow(buffer, rowIndex)); }
    decode(buffer, rowIndex = 0) { return serial(() => this._decodeNow(buffer, rowIndex)); }
    // The calls' bodies (inside a serial task).
    async _sampleNow(buffer, rowIndex) {
      this._alive();
      checkBuffer(buffer, rowIndex);
      const r = this._cpu
        ? await runRow(buffer, rowIndex, this._options, this._seen(), (x) => this._cpu.sample(x), false, true)
        : await runRow(buffer, rowIndex, this._stateless(), this._seen(), (x, o) => bd.sample(x, o), true, true);
      this._push(r.token);
      if (!this._cpu) this._step += 1;
      return r;
    }
    async _decodeNow(buffer, rowIndex) {
      this._alive();
      checkBuffer(buffer, rowIndex);
      return this._cpu
        ? runRow(buffer, rowIndex, this._options, this._seen(), (x) => this._cpu.decode(x), false, false)
        : runRow(buffer, rowIndex, this._stateless(), this._seen(), (x, o) => bd.decode(x, o), true, false);
    }
    _push(token) {
      // As the wasm sampler (src/sampler_state.h): the stages see the latest
      // kMaxHistory tokens; the buffer drops the oldest kMaxHistory at twice that.
      if (this._history.length === 2 * kMaxHistory) this._history.splice(0, kMaxHistory);
      this._history.push(token);
    }
    accept(token) {
      this._alive();
      if (typeof token !== 'number') throw new TypeError(`token must be a number, got ${typeof token}`);
      if (!Number.isInteger(token) || token < 0) throw new RangeError(`token must be an integer >= 0, got ${token}`);
      // As a wasm sampler that has seen a row (this one's rows are all of
      // `vocab`): refused, and not accepted. Before, the id went into the
      // history and every later call threw the stateless call's history
      // RangeError (found by a review).
      if (token >= vocab) throw new RangeError(`token ${token} is outside the vocabulary [0, ${vocab})`);
      this._cpu?.accept(token);
      this._push(token);
    }
    // An unseeded sampler draws a fresh seed (a new sequence is not the last
    // one again), as the wasm sampler does.
    reset() {
      this._alive();
      if (this._options.seed === undefined) {
        this._seed = randomSeed();
        if (this._cpu) {
          const cpu = bd.createSampler(withOptions(this._options, { seed: this._seed }));
          this._cpu.dispose();
          this._cpu = cpu;
        }
      } else {
        this._cpu?.reset();
      }
      this._history = [];
      this._step = 0;
    }
    clone() {
      this._alive();
      return new GpuSampler(this._options, this);
    }
    get historyLength() {
      this._alive();
      return Math.min(this._history.length, kMaxHistory);
    }
    get step() {
      this._alive();
      return this._cpu ? this._cpu.step : this._step;
    }
    // Idempotent, as the wasm sampler's.
    dispose() {
      if (this._disposed) return;
      this._disposed = true;
      this._cpu?.dispose();
      this._cpu = null;
    }
  }

  function batch(kind, buffer, rows, perRow) {
    if (typeof rows !== 'number') throw new TypeError('rows must be a number');
    if (!Number.isInteger(rows) || rows < 1) throw new RangeError(`rows must be an integer >= 1, got ${rows}`);
    if (Array.isArray(perRow) && perRow.length !== rows) {
      throw new RangeError(`per-row options: got ${perRow.length} entries for ${rows} rows`);
    }
    // As the CPU batch: the rows one after another, as one task (no other
    // call runs between them), and the first row that throws ends it: the
    // rows after it are not decoded and their samplers do not step. (Before,
    // every row was queued as its own call: the promise rejected while the
    // later rows still ran, and their samplers stepped; found by a review.)
    return serial(async () => {
      const out = [];
      for (let r = 0; r < rows; r++) {
        const o = Array.isArray(perRow) ? perRow[r] : perRow;
        if (o instanceof GpuSampler) {
          out.push(await (kind === 'sample' ? o._sampleNow(buffer, r) : o._decodeNow(buffer, r)));
          continue;
        }
        // A sampler of another GPU decoder or of the CPU path: TypeError, as
        // the CPU batch's (before: a RangeError naming its private fields).
        if (o !== null && typeof o === 'object' && (o[GPU_SAMPLER] !== undefined || samplerOwner(o) !== undefined)) {
          throw new TypeError(`per-row options[${r}] is a sampler of ${o[GPU_SAMPLER] !== undefined
            ? 'another GPU decoder' : 'the CPU path (bd.createSampler): use gd.createSampler'}`);
        }
        out.push(await (kind === 'sample' ? sampleNow(buffer, o, r) : decodeNow(buffer, o, r)));
      }
      return out;
    });
  }

  async function decodeNow(buffer, options, rowIndex) {
    checkBuffer(buffer, rowIndex);
    const o = checkOptions(options);
    return runRow(buffer, rowIndex, o, o.history, (x, oo) => bd.decode(x, oo), true, false);
  }
  async function sampleNow(buffer, options, rowIndex) {
    checkBuffer(buffer, rowIndex);
    const o = checkOptions(options);
    return runRow(buffer, rowIndex, o, o.history, (x, oo) => bd.sample(x, oo), true, true);
  }

  const api = {
    vocab, maxCandidates: M, dtype,
    /** The processed distribution of row `row` (default 0) of a [rows, vocab] GPUBuffer. */
    decode(buffer, options, rowIndex = 0) {
      return serial(() => decodeNow(buffer, options, rowIndex));
    },
    /** One draw from row `row` (default 0). */
    sample(buffer, options, rowIndex = 0) {
      return serial(() => sampleNow(buffer, options, rowIndex));
    },
    decodeBatch: (buffer, rows, perRow) => batch('decode', buffer, rows, perRow),
    sampleBatch: (buffer, rows, perRow) => batch('sample', buffer, rows, perRow),
    /** A stateful sampler over GPU rows (options fixed at creation). */
    createSampler(options = {}) {
      if (disposed) throw new TypeError('this GPU decoder was disposed');
      // Its own copy of the options, as bd.createSampler's (before, the
      // caller's object was kept: changing it, or an array or object inside
      // it, after createSampler changed the GPU sampler's later draws only;
      // found by a review).
      return new GpuSampler(snapshotOptions(checkOptions(options)));
    },
    /** Calls, fallbacks (with their reasons) and bytes read back so far. */
    get stats() { return { ...totals, fallbackReasons: { ...totals.fallbackReasons } }; },
    /** Bytes one call reads back on the candidate path (at most). */
    get candidateReadbackBytes() { return (kCtlWords + nWg * kPartialWords + 2 * M) * 4; },
    dispose() {
      if (disposed) return;
      disposed = true;
      for (const b of [params, ctl, hist, partials, listed, out, staging, fullStaging]) b?.destroy();
    },
  };
  return api;
}

// The CPU's candidate order (src/candidates.cc, OrderKey): logit descending
// (-0 and +0 tie), then the lower id.
function byKey(la, ia, lb, ib) {
  if (la !== lb) return lb > la ? 1 : -1;  // (-0 === +0: they tie, as OrderKey folds them)
  return ia - ib;
}

// The float whose order-preserving bits (the WGSL's key_hi) are k; keys at or
// below -inf's give -FLT_MAX, as key_hi_float does on the GPU.
const keyWord = new Uint32Array(1), keyFloat = new Float32Array(keyWord.buffer);
function keyHiFloat(k) {
  if (k >= 0x80000000) keyWord[0] = k ^ 0x80000000;
  else if (k < 0x00800000) return -3.4028234663852886e38;
  else keyWord[0] = ~k;
  return keyFloat[0];
}

// The package's uniform for draw `step` of stream `seed` (src/rng.h).
const kMask64 = (1n << 64n) - 1n;
function mix64(z) {
  z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & kMask64;
  z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & kMask64;
  return z ^ (z >> 31n);
}
export function uniformDraw(seed, step) {
  const key = mix64(BigInt.asUintN(64, seed) ^ 0x6A09E667F3BCC909n);
  const bits = mix64((key + (BigInt.asUintN(64, step) + 1n) * 0x9E3779B97F4A7C15n) & kMask64);
  return Number(bits >> 11n) * 2 ** -53;
}

function randomSeed() {
  const a = new Uint32Array(2);
  globalThis.crypto.getRandomValues(a);
  return (BigInt(a[0]) << 32n) | BigInt(a[1]);
}

// IEEE half to float (exact).
function f16ToF32(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

