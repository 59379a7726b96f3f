// Typings of the public contract (shared/spec/api.md), written by hand and
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

export interface DecodeOptions {
  /** Default 1; 0 means greedy. */
  temperature?: number;
  /** 0 or absent: off. */
  top_k?: number;
  /** 1: off. In (0, 1]. */
  top_p?: number;
  /** 0: off. In [0, 1]. */
  min_p?: number;
  /** Not implemented yet in this release (throws RangeError unless 1). */
  typical_p?: number;
  /** Not implemented yet in this release (throws RangeError). */
  top_n_sigma?: number;
  /** Not implemented yet in this release (throws RangeError unless 0). */
  epsilon_cutoff?: number;
  /** Not implemented yet in this release (throws RangeError unless 0). */
  eta_cutoff?: number;
  /** Minimum survivors of each truncation. Default 1. */
  min_keep?: number;
  /** Not implemented yet in this release (throws RangeError unless 1). */
  repetition_penalty?: number;
  /** Not implemented yet in this release (throws RangeError unless 0). */
  presence_penalty?: number;
  /** Not implemented yet in this release (throws RangeError unless 0). */
  frequency_penalty?: number;
  /** Not implemented yet in this release (throws RangeError). */
  penalty_last_n?: number;
  /** Not implemented yet in this release (throws RangeError). */
  history?: Int32Array;
  /** Not implemented yet in this release (throws RangeError). */
  logit_bias?: Record<number, number> | Map<number, number>;
  /** Same seed, logits and options: same token on every platform. */
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
  /** With `bregman`: the objective D(k) + lambda k (fixed k: D(k)). */
  objective?: number;
}

export interface Sample {
  token: number;
  /** Log-probability of `token` under the processed distribution. */
  logprob: number;
  k: number;
}

export interface BregmanDecoders {
  /** Highway target of the kernels: 'WASM' when SIMD128 is in use. */
  readonly target: string;
  decode(logits: Float32Array, options?: DecodeOptions): Distribution;
  sample(logits: Float32Array, options?: DecodeOptions): Sample;
  /** Bytes of scratch held by the decoder (flat after the first call). */
  workspaceBytes(): number;
  /** Bytes of wasm linear memory (flat in steady state). */
  memoryBytes(): number;
  /** Frees the wasm-side decoder. */
  dispose(): void;
}

export interface LoadOptions {
  /** The .wasm bytes, when the default fetch next to the module cannot work. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Maps 'bregman_decoders.wasm' to a URL. */
  locateFile?: (path: string, prefix: string) => string;
}

/** Instantiates the wasm module: call once, reuse the result. */
export function load(init?: LoadOptions): Promise<BregmanDecoders>;
export default load;
