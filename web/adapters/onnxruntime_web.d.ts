// Typings of bregman-decoders/onnxruntime-web (hand-written, checked by tsc in tests/js/typings.test.mjs).
import type { BregmanDecoders, DecodeOptions, Distribution, GpuReport, Sample } from './index.js';

/** What the module reads of an onnxruntime-web Tensor (its own Tensor type fits). */
export interface OrtTensorLike {
  readonly type: string;
  readonly dims: readonly number[];
  readonly location: string;
  /** For location 'cpu' / 'cpu-pinned'. */
  readonly data?: unknown;
  /** For location 'gpu-buffer' (a GPUBuffer, typed loosely so these typings need no WebGPU lib). */
  readonly gpuBuffer?: unknown;
}

/** What the module reads of the onnxruntime-web module: `env.webgpu.device`. */
export interface OrtLike {
  env: { webgpu?: { device?: unknown } };
}

/** The row decoded: batch row and position along the sequence (default 0 and the last). */
export interface RowAt {
  batch?: number;
  position?: number;
}

export interface OrtDecoderConfig {
  /** Candidates the GPU decoder selects and reads back (256..65536, default 1024). */
  maxCandidates?: number;
  /** Only checked: a device other than ort.env.webgpu.device is a RangeError. */
  device?: unknown;
}

/** A result; `gpu` is there when the tensor was a gpu-buffer one. */
export type OrtSample = Sample & { gpu?: GpuReport };
export type OrtDistribution = Distribution & { gpu?: GpuReport };

export interface OrtSampler {
  sample(logits: OrtTensorLike, at?: RowAt): Promise<OrtSample>;
  decode(logits: OrtTensorLike, at?: RowAt): Promise<OrtDistribution>;
  accept(token: number): void;
  reset(): void;
  readonly step: number;
  readonly historyLength: number;
  dispose(): void;
}

export interface OrtDecoder {
  decode(logits: OrtTensorLike, options?: DecodeOptions, at?: RowAt): Promise<OrtDistribution>;
  sample(logits: OrtTensorLike, options?: DecodeOptions, at?: RowAt): Promise<OrtSample>;
  createSampler(options?: Omit<DecodeOptions, 'history' | 'step'>): OrtSampler;
  /** onnxruntime-web's GPUDevice once a gpu-buffer tensor was decoded, else null. */
  readonly device: unknown;
  readonly stats: { calls: number; fallbacks: number; bytesRead: number };
  dispose(): void;
}

export function createOrtDecoder(bd: BregmanDecoders, ort: OrtLike, config?: OrtDecoderConfig): OrtDecoder;
export default createOrtDecoder;

/**
 * InferenceSession options: the webgpu execution provider, every output at 'gpu-buffer' (unless
 * the options say otherwise), over the caller's other options. An execution provider entry with a
 * `device` is a TypeError (onnxruntime-web then fails in run() with gpu-buffer outputs).
 */
// eslint-disable-next-line @typescript-eslint/ban-types
export function webgpuSessionOptions<const T extends object = {}>(options?: T): Omit<T, 'executionProviders' | 'preferredOutputLocation'> & {
  executionProviders: T extends { executionProviders: infer E } ? E : ['webgpu'];
  preferredOutputLocation: T extends { preferredOutputLocation: infer L } ? L : 'gpu-buffer';
};
