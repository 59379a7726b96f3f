// load() for browsers, workers and bundlers: instantiates the ES module build
// of the wasm module (its .wasm fetched beside it, or given) and wraps it,
// with the WebGPU decoder.
import { createGpuDecoder } from '../gpu/gpu_decoder.mjs';
import { createApi } from './api.js';
import { checkLoadOptions, browserLoadError, instantiationMessages } from './instantiate.js';

function entropy32() {
  const a = new Uint32Array(1);
  globalThis.crypto.getRandomValues(a);
  return a[0];
}

/**
 * Instantiates the module that `createBregmanModule` (the emscripten factory)
 * makes, with load()'s options `init`.
 */
export async function loadBrowser(createBregmanModule, init) {
  const options = checkLoadOptions(init);
  // The module's own messages during instantiation (warnings before an
  // abort) go into the error below rather than to the console.
  const messages = instantiationMessages();
  const { early } = messages;
  options.printErr = messages.printErr;
  let M;
  try {
    M = await createBregmanModule(options);
  } catch (e) {
    const from = options.wasmBinary ? 'the given wasmBinary'
      : 'bregman_decoders.wasm beside this module (or where locateFile points)';
    throw browserLoadError(e, early, from);
  } finally {
    messages.done();
  }
  const bd = createApi(M, entropy32);
  // Logits in a GPUBuffer (WebGPU): docs/webgpu.md.
  bd.createGpuDecoder = (device, config) => createGpuDecoder(bd, device, config);
  return bd;
}
