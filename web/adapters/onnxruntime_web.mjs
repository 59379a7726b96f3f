// bregman-decoders/onnxruntime-web: decodes an onnxruntime-web output tensor
// of logits wherever it lives. A 'gpu-buffer' tensor (the WebGPU execution
// provider with preferredOutputLocation 'gpu-buffer') goes through the GPU
// decoder (bd.createGpuDecoder) on onnxruntime-web's own device, reading back
// a few kilobytes instead of the row; a CPU tensor goes through the wasm path.
// Both give the same answers for the same row, options and seed.
//
// The tensor is [batch, sequence, vocab] (or [batch, vocab]), float32 or
// float16; the row decoded is { batch, position } (default: batch 0, the last
// position). onnxruntime-web's rules this module enforces or works around:
// - Its WebGPU device exists only after InferenceSession.create, in
//   ort.env.webgpu.device; a device set there before create is replaced (its
//   buffers then belong to another device). The GPU decoder is made on the
//   device read at the first gpu-buffer tensor.
// - A device passed to the execution provider ({ name: 'webgpu', device })
//   together with gpu-buffer outputs fails in run(): webgpuSessionOptions()
//   refuses it.
// - tensor.dispose() returns the buffer to onnxruntime-web's pool, which may
//   reuse it at once: a tensor disposed before the decode resolves is an
//   Error (the answer may come from other data).
// - Its buffers are padded (a [1, 5, 4096] float32 tensor has 131072 bytes):
//   the batch and position are checked against the dims, not the buffer size.
//
// No import of onnxruntime-web (or of this package): the caller passes the
// loaded decoder instance and the `ort` module.

function checkDecoder(bd) {
  if (bd === null || typeof bd !== 'object' || typeof bd.createSampler !== 'function') {
    throw new TypeError('bd must be a loaded bregman-decoders instance (await load())');
  }
  if (typeof bd.createGpuDecoder !== 'function') {
    throw new TypeError('bd has no createGpuDecoder: load it from an ES module entry (import, not require())');
  }
}

function checkOrt(ort) {
  if (ort === null || typeof ort !== 'object' || ort.env === null || typeof ort.env !== 'object') {
    throw new TypeError('ort must be the onnxruntime-web module (import * as ort from \'onnxruntime-web/webgpu\')');
  }
}

const EP_DEVICE = 'webgpuSessionOptions: a device passed to the webgpu execution provider together with '
  + "gpu-buffer outputs fails in session.run() ('Failed to find allocator'): leave `device` out "
  + '(onnxruntime-web makes its own device; the decoder uses ort.env.webgpu.device after create)';

/**
 * InferenceSession options for logits (and the KV cache) that stay on the GPU:
 * the webgpu execution provider and every output at 'gpu-buffer', over the
 * caller's other options.
 */
export function webgpuSessionOptions(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('options must be an object');
  const eps = options.executionProviders ?? ['webgpu'];
  if (!Array.isArray(eps)) throw new TypeError('executionProviders must be an array');
  for (const ep of eps) {
    if (ep !== null && typeof ep === 'object' && ep.device !== undefined) throw new TypeError(EP_DEVICE);
  }
  if (!eps.some((ep) => (typeof ep === 'string' ? ep : ep?.name) === 'webgpu')) {
    throw new RangeError("executionProviders must include 'webgpu' for gpu-buffer outputs");
  }
  return { ...options, executionProviders: eps, preferredOutputLocation: options.preferredOutputLocation ?? 'gpu-buffer' };
}

const DTYPES = { float32: 'f32', float16: 'f16' };

// The tensor's shape as { rows, vocab, rowIndex, dtype }: [B, S, V] or [B, V],
// the row of (batch, position), both checked against the dims.
function locateRow(tensor, where) {
  if (tensor === null || typeof tensor !== 'object' || !Array.isArray(tensor.dims) && !ArrayBuffer.isView(tensor.dims)) {
    throw new TypeError('logits must be an onnxruntime-web Tensor');
  }
  const dtype = DTYPES[tensor.type];
  if (dtype === undefined) throw new TypeError(`logits must be a float32 or float16 tensor, got ${tensor.type}`);
  const dims = Array.from(tensor.dims);
  if (dims.length !== 2 && dims.length !== 3) {
    throw new RangeError(`logits dims [${dims.join(', ')}]: expected [batch, sequence, vocab] or [batch, vocab]`);
  }
  const [B, S, V] = dims.length === 3 ? dims : [dims[0], 1, dims[1]];
  if (where === null || typeof where !== 'object') throw new TypeError('where must be { batch, position }');
  const { batch = 0, position = S - 1 } = where;
  for (const [name, v, n] of [['batch', batch, B], ['position', position, S]]) {
    if (typeof v !== 'number') throw new TypeError(`${name} must be a number, got ${typeof v}`);
    // The buffer is padded: a row index past the dims would read padding
    // rather than fail, so the dims decide.
    if (!Number.isInteger(v) || v < 0 || v >= n) {
      throw new RangeError(`${name} ${v} is outside the logits dims [${dims.join(', ')}] (0 <= ${name} < ${n})`);
    }
  }
  return { vocab: V, rowIndex: batch * S + position, dtype };
}

// Half bits to float32 (exact), into `out`.
function halvesToFloats(bits, out) {
  for (let i = 0; i < out.length; i++) {
    const h = bits[i], sign = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
    out[i] = e === 0 ? sign * m * 2 ** -24 : e === 31 ? (m ? NaN : sign * Infinity) : sign * (1 + m / 1024) * 2 ** (e - 15);
  }
  return out;
}

const FOREIGN = "the logits tensor's GPUBuffer belongs to another GPUDevice than onnxruntime-web's "
  + '(ort.env.webgpu.device): make the tensor on that device, or decode the buffer with '
  + 'bd.createGpuDecoder(itsDevice, ...)';

const DISPOSED_DURING = 'the logits tensor was disposed before the decode finished (onnxruntime-web may reuse '
  + 'its buffer at once, so the answer may come from other data): await the decode, then tensor.dispose()';

/**
 * A decoder of onnxruntime-web logits tensors (gpu-buffer or CPU).
 *
 * @param {object} bd a loaded decoder (`await load()`, an ES module entry)
 * @param {object} ort the onnxruntime-web module
 * @param {{ maxCandidates?: number, device?: GPUDevice }} [config] device: only to check that it is
 *   onnxruntime-web's (a decoder on another device cannot read its buffers)
 */
export function createOrtDecoder(bd, ort, config = {}) {
  checkDecoder(bd);
  checkOrt(ort);
  if (config === null || typeof config !== 'object') throw new TypeError('config must be an object');
  const { maxCandidates = 1024, device: expected } = config;
  const gpuDecoders = new Map();  // `${vocab}/${dtype}` -> GPU decoder
  let device = null, halfRow = null, disposed = false;

  const live = () => {
    if (disposed) throw new TypeError('this onnxruntime-web decoder was disposed');
  };

  // onnxruntime-web's device, read when the first gpu-buffer tensor comes.
  async function ortDevice() {
    const d = await ort.env.webgpu?.device;
    if (d === undefined || d === null) {
      throw new Error('ort.env.webgpu.device is not set: create an InferenceSession with the webgpu execution '
        + 'provider before decoding a gpu-buffer tensor');
    }
    if (expected !== undefined && d !== expected) {
      throw new RangeError('config.device is not onnxruntime-web\'s device (ort.env.webgpu.device after '
        + 'InferenceSession.create): onnxruntime-web ignores a device set before create, and its buffers '
        + 'cannot be used on another device; leave config.device out');
    }
    if (device !== null && d !== device) {
      throw new Error('ort.env.webgpu.device changed since this decoder was made: make a new decoder');
    }
    device = d;
    return d;
  }

  async function gpuDecoderOf(vocab, dtype) {
    const d = await ortDevice();
    const key = `${vocab}/${dtype}`;
    let gd = gpuDecoders.get(key);
    if (gd === undefined) {
      gd = bd.createGpuDecoder(d, { vocab, maxCandidates, dtype });
      gpuDecoders.set(key, gd);
    }
    return gd;
  }

  // The row of a CPU tensor as float32 (a view, or the halves converted into
  // one reused array).
  function cpuRow(tensor, { vocab, rowIndex, dtype }) {
    const data = tensor.data;
    const row = data.subarray(rowIndex * vocab, (rowIndex + 1) * vocab);
    if (dtype === 'f32') return row;
    if (halfRow === null || halfRow.length !== vocab) halfRow = new Float32Array(vocab);
    return halvesToFloats(row instanceof Uint16Array ? row : new Uint16Array(row.buffer, row.byteOffset, vocab), halfRow);
  }

  // Runs `onGpu(gd, buffer, rowIndex)` or `onCpu(row)` for the tensor's row.
  async function route(tensor, where, onGpu, onCpu) {
    live();
    const at = locateRow(tensor, where);
    const location = tensor.location;
    if (location === 'cpu' || location === 'cpu-pinned') return onCpu(cpuRow(tensor, at), at);
    if (location === 'none') throw new TypeError('the logits tensor was disposed');
    if (location !== 'gpu-buffer') {
      throw new TypeError(`logits tensor at '${location}': only 'gpu-buffer' and 'cpu' tensors are decoded `
        + "(set preferredOutputLocation to 'gpu-buffer', or read it with getData())");
    }
    const buffer = tensor.gpuBuffer;  // now: a tensor disposed while the device is read has none
    const gd = await gpuDecoderOf(at.vocab, at.dtype);
    let r;
    try {
      r = await onGpu(gd, buffer, at.rowIndex, at);
    } catch (e) {
      // WebGPU's validation message ("... is associated with [Device], and
      // cannot be used with [Device]"), or the GPU decoder's own.
      if (/associated with \[Device|another (GPU)?device/i.test(e?.message)) throw new TypeError(FOREIGN, { cause: e });
      throw e;
    }
    if (tensor.location !== 'gpu-buffer') throw new Error(DISPOSED_DURING);
    return r;
  }

  function checkOptions(options) {
    if (options === undefined || options === null) return {};
    if (typeof options !== 'object') throw new TypeError(`options must be an object, got ${typeof options}`);
    return options;
  }

  return {
    /** The processed distribution of one row of the tensor. */
    decode(tensor, options, where = {}) {
      const o = checkOptions(options);
      return route(tensor, where, (gd, buf, i) => gd.decode(buf, o, i), (row) => bd.decode(row, o));
    },
    /** One draw from one row of the tensor. */
    sample(tensor, options, where = {}) {
      const o = checkOptions(options);
      return route(tensor, where, (gd, buf, i) => gd.sample(buf, o, i), (row) => bd.sample(row, o));
    },
    /** A stateful sampler over tensors: GPU or CPU, fixed by its first tensor. */
    createSampler(options = {}) {
      live();
      return createOrtSampler(bd, checkOptions(options), route, live);
    },
    /** onnxruntime-web's device once a gpu-buffer tensor was decoded, else null. */
    get device() { return device; },
    /** Totals of the GPU decoders: calls, fallbacks, bytes read back. */
    get stats() {
      const s = { calls: 0, fallbacks: 0, bytesRead: 0 };
      for (const gd of gpuDecoders.values()) for (const k of Object.keys(s)) s[k] += gd.stats[k];
      return s;
    },
    /** Frees the GPU decoders; every later call throws TypeError. Idempotent. */
    dispose() {
      if (disposed) return;
      disposed = true;
      for (const gd of gpuDecoders.values()) gd.dispose();
      gpuDecoders.clear();
    },
  };
}

// A stateful sampler (history, mirostat, draw counter) over tensors: a GPU
// sampler or a wasm one, made at the first tensor; every later tensor must
// live at the same place with the same vocab and dtype.
function createOrtSampler(bd, options, route, live) {
  let inner = null, kind = null, pending = [];
  let disposed = false;
  const alive = () => {
    live();
    if (disposed) throw new TypeError('this sampler was disposed');
  };
  const bind = (k, make) => {
    if (inner === null) {
      inner = make();
      kind = k;
      for (const t of pending) inner.accept(t);
      pending = [];
    } else if (kind !== k) {
      throw new TypeError(`this sampler decodes ${kind} tensors; got a ${k} one: make one sampler per kind`);
    }
    return inner;
  };
  const call = (method, tensor, where) => {
    alive();
    return route(tensor, where,
      (gd, buf, i, at) => bind(`gpu-buffer ${at.dtype} vocab ${at.vocab}`, () => gd.createSampler(options))[method](buf, i),
      (row, at) => bind(`cpu vocab ${at.vocab}`, () => bd.createSampler(options))[method](row));
  };
  return {
    sample: (tensor, where = {}) => call('sample', tensor, where),
    decode: (tensor, where = {}) => call('decode', tensor, where),
    accept(token) {
      alive();
      if (inner !== null) inner.accept(token);
      else {
        if (!Number.isInteger(token) || token < 0) throw new RangeError(`token must be an integer >= 0, got ${token}`);
        pending.push(token);
      }
    },
    reset() { alive(); if (inner !== null) inner.reset(); pending = []; },
    get step() { alive(); return inner === null ? 0 : inner.step; },
    get historyLength() { alive(); return inner === null ? pending.length : inner.historyLength; },
    dispose() {
      if (disposed) return;
      disposed = true;
      inner?.dispose();
    },
  };
}

export default createOrtDecoder;
