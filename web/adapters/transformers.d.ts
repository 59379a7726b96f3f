// Typings of bregman-decoders/transformers (hand-written, checked by tsc in tests/js/typings.test.mjs).
import type { BregmanDecoders, DecodeOptions, Sampler } from './index.js';

/** A loaded instance from any entry (require()'s has no createGpuDecoder, which the adapters do not use). */
export type LoadedDecoder = Omit<BregmanDecoders, 'createGpuDecoder'>;

/** Options of a per-row sampler (fixed for the processor's life). */
export type RowOptions = Omit<DecodeOptions, 'history' | 'step'>;

/** What transformers.js hands a logits processor: a float32 Tensor of dims [batch, vocab]. */
export interface TensorLike {
  data: Float32Array;
  dims: readonly number[];
}

export interface StepRecord {
  token: number;
  /** Log-probability of `token` under the processed distribution. */
  logprob: number;
  /** Number of tokens the processed distribution kept. */
  k: number;
}

/** A transformers.js logits processor: call it as transformers.js does, or pass it in `logits_processor`. */
export interface BregmanLogitsProcessor {
  <T extends TensorLike>(input_ids: (bigint | number)[][], logits: T): T;
  /**
   * The same call, typed as transformers.js's LogitsProcessor declares it (its
   * Tensor), for LogitsProcessorList.push; a tensor whose data is not a
   * Float32Array is a TypeError at run time.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  _call(input_ids: bigint[][], logits: any): any;
  /** Per row: one record per generated token. */
  readonly steps: StepRecord[][];
  /** Per row: the stateful sampler. */
  readonly samplers: Sampler[];
  /** Forgets every row; the next call starts new sequences. */
  reset(): void;
  /** Frees the per-row samplers. */
  dispose(): void;
}

export interface AdapterOptions {
  /** Feed each new sequence's prompt to its sampler with accept() (penalties, DRY see it). Default true. */
  acceptPrompt?: boolean;
}

export function createLogitsProcessor(
  bd: LoadedDecoder,
  options?: RowOptions | RowOptions[],
  adapterOptions?: AdapterOptions,
): BregmanLogitsProcessor;
export default createLogitsProcessor;

/** transformers.js generate() options that must stay neutral beside the processor. */
export const NEUTRAL_GENERATION_OPTIONS: Readonly<{
  do_sample: false; temperature: 1; top_k: 0; top_p: 1; repetition_penalty: 1; no_repeat_ngram_size: 0; num_beams: 1;
}>;

/** The same, with transformers.js picking the forced token by its TopK (cheaper at large vocabularies). */
export const NEUTRAL_TOPK_GENERATION_OPTIONS: Readonly<{
  do_sample: true; temperature: 1; top_k: 1; top_p: 1; repetition_penalty: 1; no_repeat_ngram_size: 0; num_beams: 1;
}>;
