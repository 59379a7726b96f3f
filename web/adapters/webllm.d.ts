// Typings of bregman-decoders/webllm (hand-written; tsc checks in tests/js/typings.test.mjs that the
// class is assignable to @mlc-ai/web-llm's LogitProcessor).
import type { BregmanDecoders, DecodeOptions, Sampler } from './index.js';

/** A loaded instance from any entry (require()'s has no createGpuDecoder, which the adapters do not use). */
export type LoadedDecoder = Omit<BregmanDecoders, 'createGpuDecoder'>;

export interface StepRecord {
  token: number;
  /** Log-probability of `token` under the processed distribution. */
  logprob: number;
  /** Number of tokens the processed distribution kept. */
  k: number;
}

/** WebLLM's LogitProcessor (processLogits, processSampledToken, resetState) over this library's chain. */
export class BregmanLogitProcessor {
  constructor(bd: LoadedDecoder, options?: Omit<DecodeOptions, 'history' | 'step'>);
  /** Draws the token, returns the row in place: 0 at that token, -Infinity elsewhere. */
  processLogits(logits: Float32Array): Float32Array;
  processSampledToken(token: number): void;
  resetState(): void;
  readonly steps: StepRecord[];
  readonly sampler: Sampler;
  dispose(): void;
}
export default BregmanLogitProcessor;

/** WebLLM options at which it leaves the forced row alone. */
export const NEUTRAL_GENERATION_OPTIONS: Readonly<{
  temperature: 1; top_p: 1; repetition_penalty: 1; frequency_penalty: 0; presence_penalty: 0;
}>;
