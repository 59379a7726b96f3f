// Typings of the public contract (docs/api-contract.md), written by hand and
// checked by `tsc` in the tests (emscripten 3.1.6 cannot generate them).

/** Sparse Bregman decoding (Noarov et al., NeurIPS 2025). */
export type BregmanOptions =
  | {
      /** 'primal' (any alpha > 0) or 'dual' (alpha >= 1; adaptive needs alpha > 1). Default 'primal'. */
      divergence?: 'primal' | 'dual';
      /** Alpha-entropy generator; 1 is KL (plain top-k renormalisation). Default 1. */
      alpha?: number;
      /** Cost per kept token: larger lambda, smaller adaptive k. >= 0. */
      lambda: number;
      k?: undefined;
      /** Clamps of the adaptive k. */
      k_min?: number;
      k_max?: number;
    }
  | {
      divergence?: 'primal' | 'dual';
      alpha?: number;
      /** Fixed support size (top-k with the Bregman renormalisation). >= 1. */
      k: number;
      lambda?: undefined;
      k_min?: number;
      k_max?: number;
    };

/** A stage name for `samplers` (the chain order). */
export type StageName =
  | 'logit_bias' | 'penalties' | 'dry' | 'no_repeat_ngram' | 'top_n_sigma' | 'top_k'
  | 'typical_p' | 'top_p' | 'min_p' | 'xtc' | 'epsilon_cutoff' | 'eta_cutoff'
  | 'temperature' | 'mirostat' | 'bregman'
  | 'p_less' | 'top_h' | 'adaptive_p';

export type TokenIds = Int32Array | Uint32Array | number[];

export interface DecodeOptions {
  /** Default 1; 0 means greedy (the first maximum of what the other stages keep; typical and XTC can remove the argmax); at most 1e30. */
  temperature?: number;
  /** Dynamic (entropy-based) temperature in [temperature - range, temperature + range] (llama.cpp); range at most 1e30. */
  dynatemp_range?: number;
  dynatemp_exponent?: number;
  /** 0 or absent: off. */
  top_k?: number;
  /** 1: off. In (0, 1]. */
  top_p?: number;
  /** 0: off. In [0, 1]. */
  min_p?: number;
  /** Locally typical sampling; 1: off. */
  typical_p?: number;
  /** Keep logits >= max - n sigma (llama.cpp); 0: off. */
  top_n_sigma?: number;
  /** Hugging Face epsilon sampling; 0: off. */
  epsilon_cutoff?: number;
  /** Hugging Face eta sampling; 0: off. */
  eta_cutoff?: number;
  /**
   * p-less sampling (Tan, Wu, Howard 2025): keep p >= sum p^2 (true), or
   * p >= (V sum p^2 - 1)/(V - 1), V the vocabulary size ('norm', p-less-norm); false: off.
   */
  p_less?: boolean | 'norm';
  /**
   * Top-H (NeurIPS 2025): the longest most-probable prefix whose renormalised
   * entropy is at most top_h * H(p). In [0, 1]; 0: off (the paper's default is 0.4).
   */
  top_h?: number;
  /**
   * llama.cpp's adaptive-p: draw near this probability, steered by an EMA of the
   * drawn tokens' original probabilities (a sampler's state). At most 1; negative: off (default -1).
   */
  adaptive_target?: number;
  /** adaptive-p's EMA decay, in [0, 0.99] (default 0.9). */
  adaptive_decay?: number;
  /** Minimum survivors of each truncation. Default 1. */
  min_keep?: number;
  /** Exclude Top Choices (llama.cpp): probability of applying it, and its threshold (default 0.1). */
  xtc_probability?: number;
  xtc_threshold?: number;
  /** llama.cpp penalties over the last penalty_last_n tokens (-1: all; default 64). */
  repetition_penalty?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  penalty_last_n?: number;
  /** DRY (llama.cpp); breakers are token ids. */
  dry_multiplier?: number;
  dry_base?: number;
  dry_allowed_length?: number;
  dry_penalty_last_n?: number;
  dry_sequence_breakers?: TokenIds;
  /** Hugging Face no-repeat-n-gram; 0: off. */
  no_repeat_ngram_size?: number;
  /** 2: Mirostat 2.0, 1: Mirostat 1.0 (0: off), llama.cpp's values. */
  mirostat?: 0 | 1 | 2;
  mirostat_tau?: number;
  mirostat_eta?: number;
  /** Previous token ids, oldest first (for the stateless calls). */
  history?: TokenIds;
  /** Additive bias per token id (-Infinity bans). */
  logit_bias?: Record<number, number> | Map<number, number>;
  /** Tokens that may never be produced. */
  banned_tokens?: TokenIds;
  /** Only these tokens may be produced. */
  allowed_tokens?: TokenIds;
  /**
   * Only these tokens may be produced, as a packed bitmask (XGrammar's layout, e.g. web-xgrammar's
   * `GrammarMatcher.getNextTokenBitmask()`): bit `t % 32` of word `t >> 5` set = token t allowed.
   * Exactly ceil(vocab / 32) words (else RangeError); bits past vocab in the last word are ignored.
   * The same result as allowed_tokens with the same set; with allowed_tokens too, both apply (the
   * intersection).
   */
  allowed_mask?: Int32Array | Uint32Array;
  /** The stages to run, in this order (default: `stages`). */
  samplers?: StageName[];
  /** With sample(): also report raw_logprob, log p(token) under softmax(logits) (one more pass over the row). */
  logprobs?: boolean;
  /** With sample(): also return the processed distribution the token was drawn from (sorts the survivors). */
  return_distribution?: boolean;
  /**
   * decode() (and return_distribution): survivors most probable first (default true). false
   * skips the sort of a large nucleus: the same ids and probabilities, in an unspecified order.
   */
  sorted?: boolean;
  /** With sample(): also report the raw distribution's n most probable tokens (implies logprobs). */
  top_logprobs?: number;
  /**
   * Same seed, logits and options: same token on every platform. Without one,
   * draws (and XTC's coin, in decode() too) come from a random stream.
   */
  seed?: number | bigint;
  /** Index of the draw in the seeded stream (default 0); needs `seed`. */
  step?: number | bigint;
  bregman?: BregmanOptions;
}

export interface Distribution {
  /** Number of surviving tokens. */
  k: number;
  /** Token ids, most probable first; ties: lower id first. */
  ids: Int32Array;
  /** Their probabilities after the chain, summing to 1. */
  probs: Float32Array;
  /** With `bregman`: the objective D(k) + lambda k (fixed k: D(k)); absent when greedy (temperature 0), where Bregman does not run. */
  objective?: number;
}

export interface Sample {
  token: number;
  /** Log-probability of `token` under the processed distribution. */
  logprob: number;
  /** With `logprobs` or `top_logprobs`: log-probability of `token` under softmax(logits), before any stage. */
  raw_logprob?: number;
  k: number;
  /** With `top_logprobs: n`: the raw distribution's n most probable tokens. */
  top_logprobs?: { token: number; logprob: number }[];
  /** With `return_distribution`: the processed distribution (as decode() returns it). */
  distribution?: { ids: Int32Array; probs: Float32Array };
}

/** A stateful sampler (llama.cpp's sampler chain): options fixed at creation. */
export interface Sampler {
  /** Draws the next token and accepts it (history, mirostat, adaptive-p's EMA, draw counter). */
  sample(logits: Float32Array): Sample;
  /** The processed distribution at the current state; accepts nothing. */
  decode(logits: Float32Array): Distribution;
  /** Feeds a token that was not drawn here (prompt or forced tokens). */
  accept(token: number): void;
  /**
   * Forgets history, mirostat and adaptive-p state; the draw counter restarts. A seeded
   * sampler replays its stream; an unseeded one takes a fresh random seed.
   */
  reset(): void;
  /** An independent copy with the same options and state. */
  clone(): Sampler;
  readonly historyLength: number;
  readonly step: number;
  /** The chain as stage names. */
  readonly name: string;
  /** Frees its wasm memory now (a forgotten sampler is freed by a FinalizationRegistry). */
  dispose(): void;
}

export interface BregmanDecoders {
  /** Highway target of the kernels: 'WASM' when SIMD128 is in use. */
  readonly target: string;
  /** Stage names accepted in `samplers`, in the default order. */
  readonly stages: StageName[];
  /** The longest logits row accepted (2^22); a longer one is a RangeError (README "Limits"). */
  readonly maxVocab: number;
  /** Tokens a sampler's stages see: its latest maxHistory accepted ones (8192). */
  readonly maxHistory: number;
  decode(logits: Float32Array, options?: DecodeOptions): Distribution;
  sample(logits: Float32Array, options?: DecodeOptions): Sample;
  /**
   * Zero copy: a view of `vocab` floats inside the module's memory. Write the
   * row into it and pass the view itself to decode / sample / a sampler: it is
   * read in place (no copy) and never modified. Call inputBuffer(vocab) again
   * before writing each row: it returns the same view unless the module's
   * memory grew (which detaches earlier views; a stale one throws RangeError)
   * or vocab changed. A call given another array copies it into the same row,
   * and a longer row moves it: a view used after either throws RangeError
   * (ask again, write again). One row at a time (the batch calls refuse it).
   */
  inputBuffer(vocab: number): Float32Array;
  /** A stateful sampler; `history` and `step` are for the stateless calls. */
  createSampler(options?: Omit<DecodeOptions, 'history' | 'step'>): Sampler;
  /** Rows of a [B, V] buffer, with one options object, or per-row options or samplers. */
  decodeBatch(logits: Float32Array, vocab: number, perRow?: DecodeOptions | (DecodeOptions | Sampler)[]): Distribution[];
  sampleBatch(logits: Float32Array, vocab: number, perRow?: DecodeOptions | (DecodeOptions | Sampler)[]): Sample[];
  /** Bytes of scratch held by the decoder (flat after the first call). */
  workspaceBytes(): number;
  /** Bytes of wasm linear memory (flat in steady state). */
  memoryBytes(): number;
  /** Frees the wasm-side decoder. */
  dispose(): void;
  /**
   * A decoder for logits in a WebGPU buffer [rows, vocab] (docs/webgpu.md): every ES module
   * entry has it (browsers, workers, Node's and Deno's import; without WebGPU it throws a
   * TypeError saying so); require() has none, and index.d.cts types it optional.
   * `device` is a GPUDevice (typed loosely so these typings need no WebGPU lib).
   */
  createGpuDecoder(device: unknown, config: GpuDecoderConfig): GpuDecoder;
}

export interface GpuDecoderConfig {
  vocab: number;
  /** Candidates selected on the GPU and read back (256..65536, default 1024). */
  maxCandidates?: number;
  /** 'f16': the buffer holds IEEE halves (no shader-f16 feature needed). */
  dtype?: 'f32' | 'f16';
}

/** What one GPU call did. */
export interface GpuReport {
  bytesRead: number;
  /** null, or why the whole row was read back. */
  fallback: string | null;
  /** How the answer was obtained ('top_k', 'min_p', 'top_p nucleus restated', ..., 'full readback'). */
  path: string;
  candidates: number;
  /** Full-row reads on the GPU (statistics, histogram levels, compaction). */
  rowPasses: number;
  dispatches: number;
}

export interface GpuSampler {
  sample(buffer: unknown, row?: number): Promise<Sample & { gpu: GpuReport }>;
  decode(buffer: unknown, row?: number): Promise<Distribution & { gpu: GpuReport }>;
  accept(token: number): void;
  reset(): void;
  clone(): GpuSampler;
  readonly historyLength: number;
  readonly step: number;
  /** Frees its wasm sampler (mirostat); every later use throws TypeError. Idempotent. */
  dispose(): void;
}

export interface GpuDecoder {
  readonly vocab: number;
  readonly maxCandidates: number;
  readonly dtype: 'f32' | 'f16';
  decode(buffer: unknown, options?: DecodeOptions, row?: number): Promise<Distribution & { gpu: GpuReport }>;
  sample(buffer: unknown, options?: DecodeOptions, row?: number): Promise<Sample & { gpu: GpuReport }>;
  decodeBatch(buffer: unknown, rows: number, perRow?: DecodeOptions | (DecodeOptions | GpuSampler)[]): Promise<(Distribution & { gpu: GpuReport })[]>;
  sampleBatch(buffer: unknown, rows: number, perRow?: DecodeOptions | (DecodeOptions | GpuSampler)[]): Promise<(Sample & { gpu: GpuReport })[]>;
  createSampler(options?: Omit<DecodeOptions, 'history' | 'step'>): GpuSampler;
  /** Totals since creation. */
  readonly stats: { calls: number; fallbacks: number; bytesRead: number; fallbackReasons: Record<string, number> };
  /** Bytes a call reads back on the candidate path (at most, without listed ids). */
  readonly candidateReadbackBytes: number;
  /** Frees its GPU buffers; every later use (of it or its samplers) throws TypeError. Idempotent. */
  dispose(): void;
}

/**
 * load()'s options (browser entry; the Node entry embeds its .wasm and only
 * checks them). Another key, or a value of another type, is a RangeError /
 * TypeError naming it.
 */
export interface LoadOptions {
  /** The .wasm bytes, when the default fetch next to the module cannot work. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Maps 'bregman_decoders.wasm' to a URL. */
  locateFile?: (path: string, prefix: string) => string;
}

/** Instantiates the wasm module: call once, reuse the result. */
export function load(init?: LoadOptions): Promise<BregmanDecoders>;
export default load;
