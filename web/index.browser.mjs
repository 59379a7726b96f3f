// Entry for browsers, workers and bundlers: the ES module build and its .wasm.
import createBregmanModule from './bregman_decoders.mjs';
import { createApi } from './api.mjs';
import { createGpuDecoder } from './gpu/gpu_decoder.mjs';

function entropy32() {
  const a = new Uint32Array(1);
  globalThis.crypto.getRandomValues(a);
  return a[0];
}

/**
 * Instantiates the wasm module. Call once and reuse the result.
 * @param {{wasmBinary?: ArrayBuffer|Uint8Array, locateFile?: (path: string, prefix: string) => string}} [init]
 */
export async function load(init = {}) {
  const M = await createBregmanModule({ ...init });
  const bd = createApi(M, entropy32);
  // Logits in a GPUBuffer (WebGPU): docs/webgpu.md.
  bd.createGpuDecoder = (device, config) => createGpuDecoder(bd, device, config);
  return bd;
}

export default load;
