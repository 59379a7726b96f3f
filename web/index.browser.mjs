// Entry for browsers, workers and bundlers: the ES module build of the wasm
// module and its .wasm. From source the module is the wasm build's
// (build-wasm/web/); dist/index.mjs imports the copy beside it
// (web/build.mjs bundles this file and rewrites that one import).
import createBregmanModule from '../build-wasm/web/bregman_decoders.mjs';
import { loadBrowser } from './src/load_browser.js';

/**
 * Instantiates the wasm module. Call once and reuse the result.
 * @param {{wasmBinary?: ArrayBuffer|Uint8Array, locateFile?: (path: string, prefix: string) => string}} [init]
 */
export async function load(init) {
  return loadBrowser(createBregmanModule, init, import.meta.url);
}

export default load;
