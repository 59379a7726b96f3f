// Entry for browsers and workers without asset handling (a CDN
// <script type="module">, a sandbox, an extension, esbuild or Rollup without
// a copy step): the browser entry with its .wasm embedded, as the Node entry
// embeds its own. dist/inline.mjs is this file bundled with the ES module build
// of the wasm module and the .wasm as base64 (web/build.mjs: the import of
// 'bregman_decoders.wasm.base64' becomes that string); nothing is fetched.
import createBregmanModule from '../build-wasm/web/bregman_decoders.mjs';
import wasmBase64 from '../build-wasm/web/bregman_decoders.wasm.base64';
import { checkLoadOptions } from './src/instantiate.js';
import { loadBrowser } from './src/load_browser.js';

// The embedded .wasm bytes: decoded on the first load(), kept for the next.
let wasmBytes;
function embeddedWasm() {
  if (!wasmBytes) {
    if (typeof Uint8Array.fromBase64 === 'function') {
      wasmBytes = Uint8Array.fromBase64(wasmBase64);
    } else {
      const text = atob(wasmBase64);
      wasmBytes = new Uint8Array(text.length);
      for (let i = 0; i < text.length; i++) wasmBytes[i] = text.charCodeAt(i);
    }
  }
  return wasmBytes;
}

/**
 * Instantiates the wasm module from the bytes this entry embeds. Call once and
 * reuse the result. The options are checked as in the other entries; a
 * wasmBinary given is used instead of the embedded one.
 * @param {{wasmBinary?: ArrayBuffer|Uint8Array, locateFile?: (path: string, prefix: string) => string}} [init]
 */
export async function load(init) {
  const options = checkLoadOptions(init);
  if (!options.wasmBinary) options.wasmBinary = embeddedWasm();
  return loadBrowser(createBregmanModule, options);
}

export default load;
