// A dependency-free, platform-neutral Llama-2 forward pass and tokenizer for
// llama2.c "version 0" checkpoints (e.g. models/austen-kjv-2m/).
// Works unchanged in Node and browsers: everything comes in as ArrayBuffers.
//
// Numerics: weights are float32 views into the caller's buffer (no copies);
// activations are float32 arrays, while dot products and norms accumulate in
// float64 JS locals, so results match a float32 C forward pass to ~1e-4.

const HEADER_INTS = 7;
const HEADER_BYTES = HEADER_INTS * 4;
const RMS_EPS = 1e-5;
const ROPE_THETA = 10000;

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Returns {buffer, byteOffset, byteLength} for an ArrayBuffer or any ArrayBufferView. */
function bytesOf(input, what) {
  if (input instanceof ArrayBuffer) return { buffer: input, byteOffset: 0, byteLength: input.byteLength };
  if (ArrayBuffer.isView(input)) return { buffer: input.buffer, byteOffset: input.byteOffset, byteLength: input.byteLength };
  throw new TypeError(`${what}: expected an ArrayBuffer or ArrayBufferView, got ${Object.prototype.toString.call(input)}`);
}

// ---------------------------------------------------------------------------
// Kernels (exported for tests). All are allocation-free.

/**
 * out[i] = sum_j w[wOff + i*n + j] * x[j] for i < d: a row-major (d, n) matrix
 * times an n-vector. `out` must not alias `x`. Accumulates in float64.
 */
export function matmul(out, x, w, n, d, wOff = 0) {
  const n4 = n & ~3;
  for (let i = 0; i < d; i++) {
    const base = wOff + i * n;
    let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    let j = 0;
    for (; j < n4; j += 4) {
      const b = base + j;
      s0 += w[b] * x[j];
      s1 += w[b + 1] * x[j + 1];
      s2 += w[b + 2] * x[j + 2];
      s3 += w[b + 3] * x[j + 3];
    }
    for (; j < n; j++) s0 += w[base + j] * x[j];
    out[i] = (s0 + s1) + (s2 + s3);
  }
}

/**
 * out[i] = w[wOff + i] * x[i] / sqrt(mean(x^2) + eps) for i < n (eps = 1e-5).
 * `out` may alias `x`.
 */
export function rmsnorm(out, x, w, n, wOff = 0) {
  let ss = 0;
  for (let i = 0; i < n; i++) ss += x[i] * x[i];
  const scale = 1 / Math.sqrt(ss / n + RMS_EPS);
  for (let i = 0; i < n; i++) out[i] = w[wOff + i] * (scale * x[i]);
}

/** In-place softmax over x[0..n). */
export function softmax(x, n, off = 0) {
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (x[off + i] > max) max = x[off + i];
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const e = Math.exp(x[off + i] - max);
    x[off + i] = e;
    sum += e;
  }
  const inv = 1 / sum;
  for (let i = 0; i < n; i++) x[off + i] *= inv;
}

// ---------------------------------------------------------------------------
// Tokenizer

const BOS = 1;
const EOS = 2;
const BYTE_TOKEN_OFFSET = 3; // <0x00> is id 3, <0xFF> is id 258

/** Latin-1 "binary string" of bytes: one char per byte, used as an exact byte key. */
function binaryString(bytes, start, end) {
  let s = '';
  for (let i = start; i < end; i++) s += String.fromCharCode(bytes[i]);
  return s;
}

/**
 * llama2.c tokenizer (tokenizer.bin): uint32 max token length, then for each
 * token a float32 score, a uint32 byte length and that many UTF-8 bytes.
 * '▁' is stored as a plain space; ids 3..258 are the byte-fallback tokens.
 */
export class Tokenizer {
  #pieces;      // Uint8Array per id: the raw piece bytes
  #text;        // string per id: the piece decoded as UTF-8
  #scores;      // Float32Array of merge scores
  #lookup;      // Map: binary string of piece bytes -> id
  #byteToken;   // Int16Array: id -> byte value for <0xNN> pieces, else -1
  #vocabSize;
  #maxTokenLength;

  constructor(arrayBuffer, vocabSize) {
    const { buffer, byteOffset, byteLength } = bytesOf(arrayBuffer, 'Tokenizer');
    if (!Number.isInteger(vocabSize) || vocabSize <= 0) throw new RangeError(`Tokenizer: bad vocabSize ${vocabSize}`);
    const bytes = new Uint8Array(buffer, byteOffset, byteLength);
    const view = new DataView(buffer, byteOffset, byteLength);
    const utf8 = new TextDecoder('utf-8');
    const truncated = () => new RangeError(`Tokenizer: file truncated (${byteLength} bytes for ${vocabSize} tokens)`);
    if (byteLength < 4) throw truncated();
    this.#maxTokenLength = view.getUint32(0, true);
    this.#vocabSize = vocabSize;
    this.#pieces = new Array(vocabSize);
    this.#text = new Array(vocabSize);
    this.#scores = new Float32Array(vocabSize);
    this.#lookup = new Map();
    this.#byteToken = new Int16Array(vocabSize).fill(-1);
    let o = 4;
    for (let id = 0; id < vocabSize; id++) {
      if (o + 8 > byteLength) throw truncated();
      this.#scores[id] = view.getFloat32(o, true);
      const len = view.getUint32(o + 4, true);
      o += 8;
      if (o + len > byteLength) throw truncated();
      const piece = bytes.slice(o, o + len);
      o += len;
      this.#pieces[id] = piece;
      this.#text[id] = utf8.decode(piece);
      const key = binaryString(piece, 0, len);
      // First occurrence wins, like a stable sort + bsearch in llama2.c would
      // for (non-existent in practice) duplicate pieces.
      if (!this.#lookup.has(key)) this.#lookup.set(key, id);
      const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(this.#text[id]);
      if (m) this.#byteToken[id] = parseInt(m[1], 16);
    }
  }

  get vocabSize() { return this.#vocabSize; }
  get maxTokenLength() { return this.#maxTokenLength; }
  get bos() { return BOS; }
  get eos() { return EOS; }

  /** The merge score of a token id. */
  score(id) { return this.#scores[id]; }

  /**
   * Encodes text like llama2.c's `encode`: optional BOS, a dummy-prefix space
   * token when text is non-empty, then one token per UTF-8 code point (byte
   * fallback ids b+3 for code points not in the vocab), then repeatedly merges
   * the adjacent pair whose concatenation is in the vocab with the highest
   * score (leftmost on ties). O(n^2) in the text length: meant for prompts.
   */
  encode(text, { bos = true, eos = false } = {}) {
    if (typeof text !== 'string') throw new TypeError(`Tokenizer.encode: expected a string, got ${typeof text}`);
    const lookup = this.#lookup;
    const tokens = [];
    if (bos) tokens.push(BOS);
    const ids = [];
    const keys = [];
    if (text.length > 0) {
      const dummy = lookup.get(' ');
      if (dummy === undefined) throw new Error('Tokenizer.encode: vocab has no " " piece for the dummy prefix');
      ids.push(dummy);
      keys.push(' ');
      const bytes = new TextEncoder().encode(text);
      let i = 0;
      while (i < bytes.length) {
        // One UTF-8 code point: a lead byte and its continuation bytes (at most 4).
        let j = i + 1;
        while (j < bytes.length && (bytes[j] & 0xc0) === 0x80 && j - i < 4) j++;
        const key = binaryString(bytes, i, j);
        const id = lookup.get(key);
        if (id !== undefined) {
          ids.push(id);
          keys.push(key);
        } else {
          for (let k = i; k < j; k++) {
            ids.push(bytes[k] + BYTE_TOKEN_OFFSET);
            keys.push(null); // byte-fallback pieces never merge: their text is "<0xNN>"
          }
        }
        i = j;
      }
    }
    const scores = this.#scores;
    for (;;) {
      let best = -Infinity, bestId = -1, bestIdx = -1;
      for (let i = 0; i + 1 < ids.length; i++) {
        if (keys[i] === null || keys[i + 1] === null) continue;
        const id = lookup.get(keys[i] + keys[i + 1]);
        if (id !== undefined && scores[id] > best) {
          best = scores[id];
          bestId = id;
          bestIdx = i;
        }
      }
      if (bestIdx < 0) break;
      ids[bestIdx] = bestId;
      keys[bestIdx] = keys[bestIdx] + keys[bestIdx + 1];
      ids.splice(bestIdx + 1, 1);
      keys.splice(bestIdx + 1, 1);
    }
    for (const id of ids) tokens.push(id);
    if (eos) tokens.push(EOS);
    return tokens;
  }

  /**
   * The text of `token` following `prevToken`, like llama2.c's `decode`: the
   * leading space of a piece right after BOS is dropped, and a byte token
   * <0xNN> becomes String.fromCharCode(NN). That is exact for ASCII bytes; a
   * byte >= 0x80 is only a fragment of a UTF-8 sequence, so to print
   * non-ASCII text feed decodeBytes() into a streaming TextDecoder instead.
   */
  decode(prevToken, token) {
    this.#check(token);
    const b = this.#byteToken[token];
    if (b >= 0) return String.fromCharCode(b);
    const s = this.#text[token];
    return prevToken === BOS && s.charCodeAt(0) === 32 ? s.slice(1) : s;
  }

  /**
   * The raw UTF-8 bytes of `token` (one byte for <0xNN> tokens; a space
   * for '▁'; no BOS stripping). A fresh copy each call. Concatenate through
   * `new TextDecoder().decode(bytes, { stream: true })` to print any text.
   */
  decodeBytes(token) {
    this.#check(token);
    const b = this.#byteToken[token];
    return b >= 0 ? Uint8Array.of(b) : this.#pieces[token].slice();
  }

  #check(token) {
    if (!Number.isInteger(token) || token < 0 || token >= this.#vocabSize) {
      throw new RangeError(`Tokenizer: token id ${token} out of range [0, ${this.#vocabSize})`);
    }
  }
}

// ---------------------------------------------------------------------------
// Model

/**
 * A Llama-2 transformer read from a llama2.c "version 0" model.bin: a header
 * of 7 little-endian int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
 * vocab_size, seq_len; vocab_size > 0 means the classifier shares the token
 * embedding) then float32 weights. Weights stay views into the buffer, so
 * keep it alive and unmodified. One instance = one sequence (one KV cache).
 */
export class Llama2 {
  #cfg;
  #w;
  #s;

  constructor(arrayBuffer) {
    let { buffer, byteOffset, byteLength } = bytesOf(arrayBuffer, 'Llama2');
    if (byteLength < HEADER_BYTES) throw new RangeError(`Llama2: file too short for a header (${byteLength} bytes)`);
    const view = new DataView(buffer, byteOffset, byteLength);
    const h = [];
    for (let i = 0; i < HEADER_INTS; i++) h.push(view.getInt32(i * 4, true));
    const [dim, hiddenDim, nLayers, nHeads, nKvHeads, rawVocab, seqLen] = h;
    const sharedWeights = rawVocab > 0;
    const vocabSize = Math.abs(rawVocab);
    if (!(dim > 0 && hiddenDim > 0 && nLayers > 0 && nHeads > 0 && nKvHeads > 0 && vocabSize > 0 && seqLen > 0)
        || dim % nHeads !== 0 || nHeads % nKvHeads !== 0 || (dim / nHeads) % 2 !== 0) {
      throw new RangeError(`Llama2: bad header [${h.join(', ')}]`);
    }
    const headSize = dim / nHeads;
    const kvDim = nKvHeads * headSize;

    // Float counts, in file order.
    const sizes = [
      ['tokenEmbedding', vocabSize * dim],
      ['rmsAtt', nLayers * dim],
      ['wq', nLayers * dim * dim],
      ['wk', nLayers * kvDim * dim],
      ['wv', nLayers * kvDim * dim],
      ['wo', nLayers * dim * dim],
      ['rmsFfn', nLayers * dim],
      ['w1', nLayers * hiddenDim * dim],
      ['w2', nLayers * dim * hiddenDim],
      ['w3', nLayers * hiddenDim * dim],
      ['rmsFinal', dim],
      ['ropeTables', seqLen * headSize], // legacy cos + sin tables, skipped
      ['wcls', sharedWeights ? 0 : vocabSize * dim],
    ];
    const nFloats = sizes.reduce((a, [, n]) => a + n, 0);
    const need = HEADER_BYTES + 4 * nFloats;
    if (byteLength < need) throw new RangeError(`Llama2: file truncated: ${byteLength} bytes, header implies ${need}`);

    // One float32 view over all weights: zero-copy when aligned and
    // little-endian, else a single converted copy.
    let all;
    if (LITTLE_ENDIAN && (byteOffset + HEADER_BYTES) % 4 === 0) {
      all = new Float32Array(buffer, byteOffset + HEADER_BYTES, nFloats);
    } else {
      all = new Float32Array(nFloats);
      for (let i = 0; i < nFloats; i++) all[i] = view.getFloat32(HEADER_BYTES + 4 * i, true);
    }
    const w = {};
    let off = 0;
    for (const [name, n] of sizes) {
      w[name] = all.subarray(off, off + n);
      off += n;
    }
    if (sharedWeights) w.wcls = w.tokenEmbedding;
    this.#w = w;

    this.#cfg = Object.freeze({ dim, hiddenDim, nLayers, nHeads, nKvHeads, vocabSize, seqLen, sharedWeights, headSize, kvDim });

    // Inverse RoPE frequencies per pair within a head: 10000^(-2i/headSize).
    const invFreq = new Float64Array(headSize / 2);
    for (let i = 0; i < invFreq.length; i++) invFreq[i] = 1 / Math.pow(ROPE_THETA, (2 * i) / headSize);

    this.#s = {
      x: new Float32Array(dim),
      xb: new Float32Array(dim),
      xb2: new Float32Array(dim),
      hb: new Float32Array(hiddenDim),
      hb2: new Float32Array(hiddenDim),
      q: new Float32Array(dim),
      att: new Float32Array(seqLen),
      logits: new Float32Array(vocabSize),
      keyCache: new Float32Array(nLayers * seqLen * kvDim),
      valueCache: new Float32Array(nLayers * seqLen * kvDim),
      invFreq,
      cos: new Float64Array(headSize / 2),
      sin: new Float64Array(headSize / 2),
    };
  }

  /** {dim, hiddenDim, nLayers, nHeads, nKvHeads, vocabSize, seqLen, sharedWeights, headSize, kvDim} */
  get config() { return this.#cfg; }

  /** Clears the KV cache. forward() at pos only reads cache rows 0..pos, so this is hygiene, not required. */
  reset() {
    this.#s.keyCache.fill(0);
    this.#s.valueCache.fill(0);
  }

  /**
   * Runs `token` at position `pos` (0-based; positions 0..pos-1 must already
   * have been run since construction/reset) and returns the next-token
   * logits. The returned Float32Array is the model's internal buffer: it is
   * overwritten by the next forward() call, so copy it (`.slice()`) to keep it.
   */
  forward(token, pos) {
    const { dim, hiddenDim, nLayers, nHeads, nKvHeads, vocabSize, seqLen, headSize, kvDim } = this.#cfg;
    if (!Number.isInteger(token) || token < 0 || token >= vocabSize) throw new RangeError(`Llama2.forward: token ${token} out of range [0, ${vocabSize})`);
    if (!Number.isInteger(pos) || pos < 0 || pos >= seqLen) throw new RangeError(`Llama2.forward: pos ${pos} out of range [0, ${seqLen})`);
    const w = this.#w;
    const s = this.#s;
    const { x, xb, xb2, hb, hb2, q, att, keyCache, valueCache, cos, sin, invFreq } = s;
    const kvMul = nHeads / nKvHeads;
    const half = headSize / 2;
    const scale = 1 / Math.sqrt(headSize);

    x.set(w.tokenEmbedding.subarray(token * dim, (token + 1) * dim));
    for (let i = 0; i < half; i++) {
      const a = pos * invFreq[i];
      cos[i] = Math.cos(a);
      sin[i] = Math.sin(a);
    }

    for (let l = 0; l < nLayers; l++) {
      // Attention.
      rmsnorm(xb, x, w.rmsAtt, dim, l * dim);
      const cacheOff = l * seqLen * kvDim;
      const rowOff = cacheOff + pos * kvDim;
      const k = keyCache.subarray(rowOff, rowOff + kvDim);
      const v = valueCache.subarray(rowOff, rowOff + kvDim);
      matmul(q, xb, w.wq, dim, dim, l * dim * dim);
      matmul(k, xb, w.wk, dim, kvDim, l * kvDim * dim);
      matmul(v, xb, w.wv, dim, kvDim, l * kvDim * dim);

      // RoPE: rotate pairs (2i, 2i+1) within each head.
      for (let h0 = 0; h0 < dim; h0 += headSize) {
        for (let i = 0; i < half; i++) {
          const c = cos[i], sn = sin[i], j = h0 + 2 * i;
          const q0 = q[j], q1 = q[j + 1];
          q[j] = q0 * c - q1 * sn;
          q[j + 1] = q0 * sn + q1 * c;
          if (h0 < kvDim) {
            const k0 = k[j], k1 = k[j + 1];
            k[j] = k0 * c - k1 * sn;
            k[j + 1] = k0 * sn + k1 * c;
          }
        }
      }

      // Causal multi-head attention over cache rows 0..pos.
      for (let h = 0; h < nHeads; h++) {
        const qOff = h * headSize;
        const kvHeadOff = cacheOff + ((h / kvMul) | 0) * headSize;
        for (let t = 0; t <= pos; t++) {
          const kOff = kvHeadOff + t * kvDim;
          let dot = 0;
          for (let i = 0; i < headSize; i++) dot += q[qOff + i] * keyCache[kOff + i];
          att[t] = dot * scale;
        }
        softmax(att, pos + 1);
        for (let i = 0; i < headSize; i++) xb[qOff + i] = 0;
        for (let t = 0; t <= pos; t++) {
          const a = att[t];
          const vOff = kvHeadOff + t * kvDim;
          for (let i = 0; i < headSize; i++) xb[qOff + i] += a * valueCache[vOff + i];
        }
      }
      matmul(xb2, xb, w.wo, dim, dim, l * dim * dim);
      for (let i = 0; i < dim; i++) x[i] += xb2[i];

      // SwiGLU feed-forward.
      rmsnorm(xb, x, w.rmsFfn, dim, l * dim);
      matmul(hb, xb, w.w1, dim, hiddenDim, l * hiddenDim * dim);
      matmul(hb2, xb, w.w3, dim, hiddenDim, l * hiddenDim * dim);
      for (let i = 0; i < hiddenDim; i++) {
        const g = hb[i];
        hb[i] = (g / (1 + Math.exp(-g))) * hb2[i];
      }
      matmul(xb, hb, w.w2, hiddenDim, dim, l * dim * hiddenDim);
      for (let i = 0; i < dim; i++) x[i] += xb[i];
    }

    rmsnorm(x, x, w.rmsFinal, dim);
    matmul(s.logits, x, w.wcls, dim, vocabSize);
    return s.logits;
  }
}
