// The GPU half of a call: the pipelines and buffers of one GPU decoder, the
// dispatch of the statistics and the exact top-M selection of one row, and
// the readback of its results (a few kilobytes) or, for a fallback, of the
// whole row.
import { decoderWgsl, kChunk, kCtlWords, kPartialWords } from './wgsl.mjs';
import { f16ToF32, keyHiFloat } from './numbers.mjs';

function createPipelines(device, dtype) {
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
  return { layout, P };
}

// Merges the per-workgroup partials (float64) and copies the candidates and
// listed ids' logits out of the mapped words into cx.
function readSelection(words, cx, nWg, nListed, scale) {
  const M = cx.maxCandidates;
  const u = new Uint32Array(words), f = new Float32Array(words);
  const levels = u[0], m = u[6], count = u[7];
  // Z = sum_w s_w exp((m_w - max) scale).
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
    cx.candIds[i] = u[base + i];
    cx.candLogits[i] = f[base + M + i];
  }
  for (let i = 0; i < nListed; i++) cx.listedVals[i] = f[base + 2 * M + i];
  return { m, nSel, max, z, zRaw, tailPow, threshold, flags, levels, count };
}

// The decoder's buffers: the fixed ones, and those sized by the listed ids
// (grown only when a call lists more ids than any before: no allocation in
// steady state; growing drops the bind groups, which bind the old ones).
function createBuffers(device, U, { nWg, M }) {
  const b = {
    params: device.createBuffer({ size: 32, usage: U.UNIFORM | U.COPY_DST }),
    ctl: device.createBuffer({ size: kCtlWords * 4, usage: U.STORAGE | U.COPY_SRC }),
    hist: device.createBuffer({ size: 256 * 4, usage: U.STORAGE }),
    partials: device.createBuffer({ size: nWg * kPartialWords * 4, usage: U.STORAGE | U.COPY_SRC }),
    listedCap: 0, listed: null, out: null, staging: null, onGrow: () => {},
    ensureListed(n) {
      if (b.listed !== null && n <= b.listedCap) return;
      b.listedCap = Math.max(64, n, 2 * b.listedCap);
      b.listed?.destroy(); b.out?.destroy(); b.staging?.destroy();
      b.listed = device.createBuffer({ size: b.listedCap * 4, usage: U.STORAGE | U.COPY_DST });
      b.out = device.createBuffer({ size: (2 * M + b.listedCap) * 4, usage: U.STORAGE | U.COPY_SRC });
      const stagingBytes = (kCtlWords + nWg * kPartialWords + 2 * M + b.listedCap) * 4;
      b.staging = device.createBuffer({ size: stagingBytes, usage: U.MAP_READ | U.COPY_DST });
      b.onGrow();
    },
  };
  return b;
}

// The bind groups of a row's logits. The logits are bound as a window around
// the row: [offset, offset + size) with offset the row's start rounded down
// to the storage offset alignment, so a [rows, V] buffer larger than the
// device's maxStorageBufferBindingSize still binds. One bind group per buffer
// and window, kept while the buffer lives (and the listed-id buffers do).
function createBinder(device, layout, buffers, { vocab, elemBytes }) {
  let bindGroups = new WeakMap();
  buffers.onGrow = () => { bindGroups = new WeakMap(); };
  const offsetAlign = device.limits?.minStorageBufferOffsetAlignment ?? 256;
  return {
    /** Drops the bind groups of `buffer` (one that failed is never reused). */
    forget(buffer) { bindGroups.delete(buffer); },
    rowWindow(rowIndex) {
      const start = rowIndex * vocab * elemBytes;
      const offset = Math.floor(start / offsetAlign) * offsetAlign;
      const size = Math.ceil((start + vocab * elemBytes - offset) / 4) * 4;
      return { offset, size, rowBase: (start - offset) / elemBytes };
    },
    bindGroupFor(buffer, win) {
      let byWindow = bindGroups.get(buffer);
      if (!byWindow) bindGroups.set(buffer, byWindow = new Map());
      const key = `${win.offset}:${win.size}`;
      let g = byWindow.get(key);
      if (!g) {
        const { params, listed, ctl, hist, partials, out } = buffers;
        g = device.createBindGroup({
          layout,
          entries: [{ buffer, offset: win.offset, size: win.size }, ...[params, listed, ctl, hist, partials, out].map((b) => ({ buffer: b }))]
            .map((resource, binding) => ({ binding, resource })),
        });
        byWindow.set(key, g);
      }
      return g;
    },
  };
}

// The dispatch of one row's passes: its parameters, then init, the
// statistics, eight radix levels (histogram + pick) and the compaction, and
// the copies of the results into the staging buffer.
function createDispatcher(device, P, buffers, binder, { vocab, nWg, M }) {
  const paramWords = new ArrayBuffer(32);
  const paramU32 = new Uint32Array(paramWords), paramF32 = new Float32Array(paramWords);
  function writeParams(win, nListed, scale, scalePow) {
    paramU32[0] = vocab; paramU32[1] = win.rowBase; paramU32[2] = M; paramU32[3] = nListed;
    paramF32[4] = scale; paramF32[5] = scalePow; paramU32[6] = nWg; paramU32[7] = 0;
    device.queue.writeBuffer(buffers.params, 0, paramWords);
  }
  function encode(buffer, win, partialBytes, outWords) {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setBindGroup(0, binder.bindGroupFor(buffer, win));
    pass.setPipeline(P.init); pass.dispatchWorkgroups(1);
    pass.setPipeline(P.stats); pass.dispatchWorkgroups(nWg);
    for (let level = 0; level < 8; level++) {
      pass.setPipeline(P.histo); pass.dispatchWorkgroups(nWg);
      pass.setPipeline(P.pick); pass.dispatchWorkgroups(1);
    }
    pass.setPipeline(P.compact); pass.dispatchWorkgroups(nWg);
    pass.end();
    const { ctl, partials, out, staging } = buffers;
    enc.copyBufferToBuffer(ctl, 0, staging, 0, kCtlWords * 4);
    enc.copyBufferToBuffer(partials, 0, staging, kCtlWords * 4, partialBytes);
    enc.copyBufferToBuffer(out, 0, staging, kCtlWords * 4 + partialBytes, outWords * 4);
    device.queue.submit([enc.finish()]);
  }
  return { writeParams, encode };
}

// A WebGPU validation error about the caller's logits buffer, as a
// TypeError naming the cause where the message shows it (Chromium's Dawn
// names the device a buffer belongs to, and a destroyed buffer).
function bufferError(gpuError) {
  const m = gpuError.message;
  const cause = /destroyed/i.test(m) ? 'it was destroyed'
    : /associated with|cannot be used with|device/i.test(m) ? 'it belongs to another GPUDevice'
      : 'WebGPU refused it';
  return new TypeError(`logits GPUBuffer cannot be used (${cause}): WebGPU: ${m}`);
}

// Runs encode() inside a validation error scope. The scope is popped
// whatever happens: a throw in encode() (a buffer-like object that is no
// GPUBuffer) must not leave it pushed, where it would swallow the device's
// later validation errors, the caller's own. A validation error there comes
// from the caller's buffer (the decoder's own are valid while it lives):
// `onError` runs (the binder forgets the buffer's bind groups, so the next
// call meets the same cause again), and the error names it.
async function encodeChecked(device, encode, onError = () => {}) {
  device.pushErrorScope('validation');
  let thrown = null;
  try {
    encode();
  } catch (e) {
    thrown = e;
  }
  const gpuError = await device.popErrorScope();
  if (thrown || gpuError) onError();
  if (thrown) throw thrown;
  if (gpuError) throw bufferError(gpuError);
}

// The fallback's reader: the whole row, into a Float32Array (its staging
// buffer made at the first fallback); returns it and the bytes read.
function createFullRowReader(device, U, { vocab, elemBytes, dtype }) {
  let fullRow = null, fullStaging = null;
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
    await encodeChecked(device, () => {
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(buffer, start, fullStaging, 0, size);
      device.queue.submit([enc.finish()]);
    });
    await fullStaging.mapAsync(globalThis.GPUMapMode.READ, 0, size);
    const mapped = fullStaging.getMappedRange(0, size);
    if (dtype === 'f32') fullRow.set(new Float32Array(mapped, 0, vocab));
    else { const h = new Uint16Array(mapped, shift, vocab); for (let i = 0; i < vocab; i++) fullRow[i] = f16ToF32(h[i]); }
    fullStaging.unmap();
    return { row: fullRow, bytes };
  }
  return { readFullRow, destroy: () => fullStaging?.destroy() };
}

/**
 * The GPU resources of one decoder. cx: the decoder's host scratch
 * ({ vocab, maxCandidates, candIds, candLogits, listedIds, listedVals }), into
 * which select() reads its results; cx.listedIds and cx.listedVals grow here.
 */
export function createSelector(device, U, cx, dtype) {
  const { vocab } = cx, M = cx.maxCandidates;
  const elemBytes = dtype === 'f16' ? 2 : 4;
  const nWg = Math.ceil(vocab / kChunk);
  const { layout, P } = createPipelines(device, dtype);
  const buffers = createBuffers(device, U, { nWg, M });
  const binder = createBinder(device, layout, buffers, { vocab, elemBytes });
  buffers.ensureListed(64);
  const dispatcher = createDispatcher(device, P, buffers, binder, { vocab, nWg, M });
  const fullRowReader = createFullRowReader(device, U, { vocab, elemBytes, dtype });

  // Listed ids into the host scratch and their GPU buffer.
  function writeListed(ids) {
    const nListed = ids.length;
    buffers.ensureListed(nListed);
    if (cx.listedIds.length < nListed) {
      cx.listedIds = new Uint32Array(buffers.listedCap);
      cx.listedVals = new Float32Array(buffers.listedCap);
    }
    cx.listedIds.set(ids);
    if (nListed) device.queue.writeBuffer(buffers.listed, 0, cx.listedIds, 0, nListed);
  }

  // GPU: statistics and the exact top-M selection of one row; reads back
  // only the control block, the per-workgroup partials and the candidates.
  async function select(buffer, rowIndex, scale, scalePow, ids) {
    const nListed = ids.length;
    writeListed(ids);
    const win = binder.rowWindow(rowIndex);
    dispatcher.writeParams(win, nListed, scale, scalePow);
    const partialBytes = nWg * kPartialWords * 4;
    const outWords = 2 * M + nListed;
    await encodeChecked(device, () => dispatcher.encode(buffer, win, partialBytes, outWords), () => binder.forget(buffer));
    const bytes = kCtlWords * 4 + partialBytes + outWords * 4;
    const { staging } = buffers;
    await staging.mapAsync(globalThis.GPUMapMode.READ, 0, bytes);
    const sel = readSelection(staging.getMappedRange(0, bytes), cx, nWg, nListed, scale);
    staging.unmap();
    if (sel.count !== sel.m) throw new Error(`GPU selection wrote ${sel.count} candidates, expected ${sel.m}`);
    sel.bytes = bytes;
    return sel;
  }

  return {
    select,
    readFullRow: fullRowReader.readFullRow,
    /** Bytes one call reads back on the candidate path (at most). */
    candidateReadbackBytes: (kCtlWords + nWg * kPartialWords + 2 * M) * 4,
    /** Bytes select() reads back with nListed listed ids. */
    selectionBytes: (nListed) => (kCtlWords + nWg * kPartialWords + 2 * M + nListed) * 4,
    destroy() {
      const { params, ctl, hist, partials, listed, out, staging } = buffers;
      for (const b of [params, ctl, hist, partials, listed, out, staging]) b?.destroy();
      fullRowReader.destroy();
    },
  };
}
