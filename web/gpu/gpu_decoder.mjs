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
//   readback.mjs: the GPU pipelines, selection and readback
//   planning.mjs: the planner
//   restate.mjs:  the candidate row and the calls that answer on it
//   gpu_sampler.mjs: stateful samplers over GPU rows
import { samplerOwner } from '../src/brand.js';
import { snapshotOptions } from '../src/options.js';
import { GPU_SAMPLER, defineGpuSampler } from './gpu_sampler.mjs';
import { configuredStages, isGreedy, listedIds, normaliserTemperature, plan } from './planning.mjs';
import { createSelector } from './readback.mjs';
import { bregmanCall, clearRow, editedTopPCall, fillRow, nucleusCall, patchRaw } from './restate.mjs';

function bufferUsage() {
  const U = globalThis.GPUBufferUsage;
  if (!U) throw new TypeError('createGpuDecoder needs WebGPU (GPUBufferUsage is not defined)');
  return U;
}

// The config's checks; returns { vocab, maxCandidates, dtype }.
function checkConfig(bd, device, config) {
  if (device === null || typeof device !== 'object' || typeof device.createBuffer !== 'function') {
    throw new TypeError('device must be a GPUDevice');
  }
  if (config === null || typeof config !== 'object') throw new TypeError('createGpuDecoder needs { vocab }');
  const { vocab, maxCandidates = 1024, dtype = 'f32' } = config;
  if (typeof vocab !== 'number') throw new TypeError('vocab must be a number');
  if (!Number.isInteger(vocab) || vocab < 1 || vocab > 0x7fffffff) throw new RangeError(`vocab must be an integer >= 1, got ${vocab}`);
  // As the CPU path, which refuses longer rows.
  if (vocab > bd.maxVocab) throw new RangeError(`vocab ${vocab} exceeds the largest vocabulary (${bd.maxVocab})`);
  if (typeof maxCandidates !== 'number') throw new TypeError('maxCandidates must be a number');
  if (!Number.isInteger(maxCandidates) || maxCandidates < 256 || maxCandidates > 65536) {
    throw new RangeError(`maxCandidates must be an integer in [256, 65536], got ${maxCandidates}`);
  }
  if (dtype !== 'f32' && dtype !== 'f16') throw new RangeError(`dtype must be 'f32' or 'f16', got ${dtype}`);
  return { vocab, maxCandidates, dtype };
}

function checkOptions(options) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object') throw new TypeError(`options must be an object, got ${typeof options}`);
  return options;
}

// A logits GPUBuffer and row index: a STORAGE buffer with row `rowIndex` of
// `vocab` elements of `dtype` in it.
function checkRowBuffer(U, buffer, rowIndex, { vocab, elemBytes, dtype }) {
  if (buffer === null || typeof buffer !== 'object' || typeof buffer.mapAsync !== 'function') {
    throw new TypeError('logits must be a GPUBuffer');
  }
  if ((buffer.usage & U.STORAGE) === 0) throw new TypeError('logits GPUBuffer needs GPUBufferUsage.STORAGE');
  // WebGPU binds storage buffers (and copies them) in whole 4-byte words.
  if (buffer.size % 4 !== 0) {
    throw new RangeError(`logits GPUBuffer of ${buffer.size} bytes: its size must be a multiple of 4 (pad the buffer)`);
  }
  if (typeof rowIndex !== 'number') throw new TypeError(`row must be a number, got ${typeof rowIndex}`);
  if (!Number.isInteger(rowIndex) || rowIndex < 0) {
    throw new RangeError(`row must be an integer >= 0, got ${rowIndex}`);
  }
  if ((rowIndex + 1) * vocab * elemBytes > buffer.size) {
    throw new RangeError(`logits GPUBuffer of ${buffer.size} bytes has no row ${rowIndex} of ${vocab} ${dtype}`);
  }
}

// The answer on the candidate path for plan `d`, or { reason } to fall back.
function answer(cx, d, o, sel, cpu, call) {
  if (d.kind === 'exact') {
    fillRow(cx, sel.m, call.nListed, null);
    try { return { result: cpu(cx.row, o), reason: d.reason }; } finally { clearRow(cx, sel.m, call.nListed, null); }
  }
  // A mirostat sampler (its state in wasm) cannot take rewritten options:
  // its top-p takes the edited call, which restates nothing (the nucleus
  // from a stateless call of the chain up to top-p, with the sampler's
  // history), and its Bregman falls back.
  if (d.kind === 'bregman') {
    return call.allowRewrite ? bregmanCall(cx, o, d.temp, sel, cpu, call.isSample)
      : { reason: 'bregman over the whole row in a mirostat sampler' };
  }
  if (d.kind === 'top_p' && call.allowRewrite) return nucleusCall(cx, o, d.temp, sel, cpu);
  if (d.kind === 'top_p' || d.kind === 'top_p_edited') return editedTopPCall(cx, o, d.temp, sel, cpu, call);
  return { reason: d.reason };
}

// decodeBatch / sampleBatch over rows [0, rows) of one buffer. ctx: { serial,
// GpuSampler, decodeNow, sampleNow }.
function runBatch(ctx, kind, buffer, rows, perRow) {
  const { GpuSampler } = ctx;
  if (typeof rows !== 'number') throw new TypeError('rows must be a number');
  if (!Number.isInteger(rows) || rows < 1) throw new RangeError(`rows must be an integer >= 1, got ${rows}`);
  if (Array.isArray(perRow) && perRow.length !== rows) {
    throw new RangeError(`per-row options: got ${perRow.length} entries for ${rows} rows`);
  }
  // As the CPU batch: the rows one after another, as one task (no other
  // call runs between them), and the first row that throws ends it: the
  // rows after it are not decoded and their samplers do not step. Its
  // samplers count it as pending (their accept() and the like wait for it).
  const held = [...new Set((Array.isArray(perRow) ? perRow : [perRow]).filter((o) => o instanceof GpuSampler))]
    .map((s) => [s, s._begin()]);
  return ctx.serial(async () => {
    try { return await runRows(ctx, kind, buffer, rows, perRow); } finally { for (const [s, call] of held) s._end(call); }
  });
}
// The rows of a batch, in one serial task.
async function runRows(ctx, kind, buffer, rows, perRow) {
  const { GpuSampler } = ctx;
  const out = [];
  for (let r = 0; r < rows; r++) {
    const o = Array.isArray(perRow) ? perRow[r] : perRow;
    if (o instanceof GpuSampler) {
      out.push(await (kind === 'sample' ? o._sampleNow(buffer, r) : o._decodeNow(buffer, r)));
      continue;
    }
    // A sampler of another GPU decoder or of the CPU path: TypeError, as
    // the CPU batch's.
    if (o !== null && typeof o === 'object' && (o[GPU_SAMPLER] !== undefined || samplerOwner(o) !== undefined)) {
      throw new TypeError(`per-row options[${r}] is a sampler of ${o[GPU_SAMPLER] !== undefined
        ? 'another GPU decoder' : 'the CPU path (bd.createSampler): use gd.createSampler'}`);
    }
    out.push(await (kind === 'sample' ? ctx.sampleNow(buffer, o, r) : ctx.decodeNow(buffer, o, r)));
  }
  return out;
}

// The host-side scratch of one decoder, reused across calls (restate.mjs).
function createScratch(bd, vocab, M) {
  return {
    bd, vocab, maxCandidates: M,
    candIds: new Int32Array(M), candLogits: new Float32Array(M), order: new Int32Array(M),
    listedIds: new Uint32Array(64), listedVals: new Float32Array(64), listedSet: new Set(),
    row: new Float32Array(vocab).fill(-Infinity), phantomIds: null,
  };
}

// Runs tasks one after another (a task's GPU work and CPU call alone); a
// task that throws does not stop the ones after it.
function createSerialQueue() {
  let queue = Promise.resolve();
  return (fn) => {
    const p = queue.then(fn);
    queue = p.catch(() => {});
    return p;
  };
}

// What the GPU's selection needs from one call's options: the stages they
// switch on (the core's answer), the chain, greedy, the listed ids (sorted)
// and the edit stages that act, and the normaliser's scales 1/T and alpha/T.
function prepareCall(dc, o, history) {
  const { bd, cx } = dc;
  const configured = configuredStages(bd, o);
  const chain = Array.isArray(o.samplers) ? o.samplers : bd.stages;
  const greedy = isGreedy(o);
  cx.listedSet.clear();
  const acting = listedIds(o, history, cx.vocab, chain, configured, cx.listedSet);
  const ids = Uint32Array.from([...cx.listedSet].sort((a, b) => a - b));
  const temp = normaliserTemperature(o, chain, greedy, configured);
  const alpha = o.bregman && typeof o.bregman.alpha === 'number' ? o.bregman.alpha : 1;
  return { configured, chain, greedy, acting, ids, scale: Math.fround(1 / temp), scalePow: Math.fround(alpha / temp) };
}

// The GPU's selection of one row, with its lowest candidate logit (sel.min).
async function selectRow(dc, buffer, rowIndex, p) {
  const { cx } = dc;
  const sel = await dc.gpu.select(buffer, rowIndex, p.scale, p.scalePow, p.ids);
  let min = Infinity;
  for (let i = 0; i < sel.m; i++) if (cx.candLogits[i] < min) min = cx.candLogits[i];
  sel.min = min;
  return sel;
}

// The fallback: reads the whole row, and counts it (with its reason) in
// `info` and the totals as soon as it is read.
async function readFallback(dc, buffer, rowIndex, info, reason) {
  const { totals } = dc;
  info.fallback = reason;
  info.path = 'full readback';
  totals.fallbacks += 1;
  totals.fallbackReasons[reason] = (totals.fallbackReasons[reason] ?? 0) + 1;
  const full = await dc.gpu.readFullRow(buffer, rowIndex);
  info.bytesRead += full.bytes;
  totals.bytesRead += full.bytes;
  dc.checkAlive();
  return full.row;
}

// The CPU's own checks of the options for a row of `vocab`, before any GPU
// work: the call `cpu` on the scratch row (all -Infinity) throws the error
// the call would throw on any row (type and message), or, options valid,
// the row's own complaint, which comes after every option check.
const ALL_BANNED = 'logits: every token is banned (all -Infinity)';
function checkOptionsAsCpu(cx, o, cpu) {
  try {
    cpu(cx.row, o);
  } catch (e) {
    if (e instanceof RangeError && e.message === ALL_BANNED) return;
    throw e;
  }
}

// One row: select on the GPU, plan, then run `cpu(row, options)` on the
// candidate row (or on the full row after a fallback). dc: the decoder's
// { bd, cx (host scratch), gpu (its selector), totals, checkAlive,
// rowBytes }. Bytes count in the totals when read, whatever happens next.
async function runRow(dc, buffer, rowIndex, o, history, cpu, allowRewrite, isSample) {
  const { cx, totals } = dc;
  // A mirostat sampler's options were checked at its creation (its CPU
  // sampler carries state a call would change).
  if (allowRewrite) checkOptionsAsCpu(cx, o, cpu);
  const p = prepareCall(dc, o, history);
  // (A full readback without a selection makes no pass over the row.)
  const info = { bytesRead: 0, fallback: null, path: null, candidates: 0, rowPasses: 0, dispatches: 0 };
  let result = null, fullRow = null;
  // The selection never reads back more than the row itself.
  if (dc.gpu.selectionBytes(p.ids.length) >= dc.rowBytes) {
    fullRow = await readFallback(dc, buffer, rowIndex, info, 'the selection reads more than the row');
  } else {
    const sel = await selectRow(dc, buffer, rowIndex, p);
    info.bytesRead = sel.bytes;
    totals.bytesRead += sel.bytes;
    dc.checkAlive();
    Object.assign(info, { candidates: sel.m, rowPasses: 2 + sel.levels, dispatches: 19 });
    const d = plan(o, p.chain, p.configured, p.acting, p.greedy, sel, isSample, cx.maxCandidates);
    info.path = d.reason;
    const call = { nListed: p.ids.length, chain: p.chain, greedy: p.greedy, history, allowRewrite, isSample };
    const { result: onCandidates = null, reason } = answer(cx, d, o, sel, cpu, call);
    result = onCandidates;
    if (result !== null) {
      info.path = reason;
      if (!d.complete && isSample && (o.logprobs || o.top_logprobs)) patchRaw(cx, result, sel, p.ids.length, o.top_logprobs ?? 0);
    } else {
      fullRow = await readFallback(dc, buffer, rowIndex, info, reason);
    }
  }
  if (result === null) result = cpu(fullRow, o);
  result.gpu = info;
  return result;
}

/**
 * @param {object} bd a loaded bregman-decoders instance
 * @param {GPUDevice} device
 * @param {{vocab: number, maxCandidates?: number, dtype?: 'f32'|'f16'}} config
 */
export function createGpuDecoder(bd, device, config) {
  const { vocab, maxCandidates, dtype } = checkConfig(bd, device, config);
  const U = bufferUsage();
  const elemBytes = dtype === 'f16' ? 2 : 4;
  const M = Math.min(maxCandidates, vocab);
  const cx = createScratch(bd, vocab, M);
  const gpu = createSelector(device, U, cx, dtype);
  const totals = { calls: 0, fallbacks: 0, bytesRead: 0, fallbackReasons: {} };
  const serial = createSerialQueue();
  let disposed = false;
  // A call in flight when dispose() comes ends with the error of the calls
  // queued after it (its GPU work is left to finish: the resources go once
  // every queued call has ended).
  const checkAlive = () => {
    if (disposed) throw new TypeError('this GPU decoder was disposed');
  };
  const dc = { bd, cx, gpu, totals, checkAlive, rowBytes: vocab * elemBytes };
  // Every call counts, whether it throws or not.
  const countCall = () => { totals.calls += 1; };

  const checkBuffer = (buffer, rowIndex) => {
    checkAlive();
    checkRowBuffer(U, buffer, rowIndex, { vocab, elemBytes, dtype });
  };
  const runRowOf = (...args) => runRow(dc, ...args);

  const GpuSampler = defineGpuSampler({
    bd, vocab, owner: () => api, isDisposed: () => disposed, serial, checkBuffer, countCall, runRow: runRowOf,
  });

  async function decodeNow(buffer, options, rowIndex) {
    countCall();
    checkBuffer(buffer, rowIndex);
    const o = checkOptions(options);
    return runRowOf(buffer, rowIndex, o, o.history, (x, oo) => bd.decode(x, oo), true, false);
  }
  async function sampleNow(buffer, options, rowIndex) {
    countCall();
    checkBuffer(buffer, rowIndex);
    const o = checkOptions(options);
    return runRowOf(buffer, rowIndex, o, o.history, (x, oo) => bd.sample(x, oo), true, true);
  }

  const batchCtx = { serial, GpuSampler, decodeNow, sampleNow };
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
    decodeBatch: (buffer, rows, perRow) => runBatch(batchCtx, 'decode', buffer, rows, perRow),
    sampleBatch: (buffer, rows, perRow) => runBatch(batchCtx, 'sample', buffer, rows, perRow),
    /** A stateful sampler over GPU rows (options fixed at creation: its own copy, as bd.createSampler's). */
    createSampler(options = {}) {
      if (disposed) throw new TypeError('this GPU decoder was disposed');
      return new GpuSampler(snapshotOptions(checkOptions(options)));
    },
    /** Calls, fallbacks (with their reasons) and bytes read back so far. */
    get stats() { return { ...totals, fallbackReasons: { ...totals.fallbackReasons } }; },
    /** Bytes one call reads back on the candidate path (at most). */
    get candidateReadbackBytes() { return gpu.candidateReadbackBytes; },
    /**
     * Frees the GPU resources once the calls already made have ended; those
     * not yet answered reject with a TypeError, as any call made after it.
     */
    dispose() {
      if (disposed) return;
      disposed = true;
      serial(() => gpu.destroy()).catch(() => {});
    },
  };
  return api;
}
