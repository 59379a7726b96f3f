// Marks the samplers of bd.createSampler with the instance they belong to, so
// a batch can tell a sampler of another instance (another wasm module: its
// pointer means nothing there) from an options object. A registered symbol:
// every copy of this code (the CommonJS build, an ES module bundle) reads
// the same brand.
export const SAMPLER_BRAND = Symbol.for('bregman-decoders sampler');

/**
 * The instance a sampler of bd.createSampler belongs to, or undefined for
 * anything else (the WebGPU decoder's batch refuses such samplers).
 */
export function samplerOwner(o) {
  return o !== null && typeof o === 'object' ? o[SAMPLER_BRAND] : undefined;
}
