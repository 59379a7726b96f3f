// Entry for Node's import (and Deno's, which resolves the 'node' condition):
// the same instance code as require(), loaded once, through a static import
// that bundlers follow (dist/node.mjs imports ./index.cjs; from source, the
// require() entry's ES module). As an ES module it also has the WebGPU
// decoder, as the browser entry does: Deno has navigator.gpu; in Node without
// WebGPU its TypeError says so.
import { load as loadRequire } from './index.require.mjs';
import { createGpuDecoder } from './gpu/gpu_decoder.mjs';

/**
 * Instantiates the wasm module. Call once and reuse the result.
 * @param {{wasmBinary?: ArrayBuffer|Uint8Array, locateFile?: (path: string, prefix: string) => string}} [init]
 */
export async function load(init) {
  const bd = await loadRequire(init);
  // Logits in a GPUBuffer (WebGPU): docs/webgpu.md.
  bd.createGpuDecoder = (device, config) => createGpuDecoder(bd, device, config);
  return bd;
}
export default load;
