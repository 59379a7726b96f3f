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

// Vite's dev server before Vite 8 serves a pre-bundled copy of this module from
// <root>/node_modules/.vite/deps/ without its .wasm, so the module's
// `new URL('bregman_decoders.wasm', import.meta.url)` answers with a 404 or
// the app's index.html. The package's own copy is served beside it, under
// <root>/node_modules/bregman-decoders/dist/. Returns a locateFile that points
// there when `moduleUrl` is such a copy, else null.
function viteDepsLocateFile(moduleUrl) {
  const m = /^(.*\/node_modules\/)\.vite\/deps(?:_temp_[^/]*)?\//.exec(String(moduleUrl));
  if (!m) return null;
  return (path) => `${m[1]}bregman-decoders/dist/${path}`;
}

// The .wasm was not where the module looked (a 404, or an HTML page in its
// place): the module was moved, by a bundler or a copy, without it.
const WASM_NOT_FOUND = /HTTP status code is not ok|both async and sync fetching|failed to load wasm binary|expected magic word 00 61 73 6d, found 3c/;

// What fixes a .wasm that was not found, per setup: one line each.
const NOT_FOUND_FIXES =
  '. The .wasm was not found beside this module: a bundler or a copy moved the module without it. ' +
  "Vite's dev server: add optimizeDeps: { exclude: ['bregman-decoders'] } to vite.config; " +
  "esbuild, Rollup, a CDN or any setup without asset handling: import { load } from 'bregman-decoders/inline' " +
  '(the .wasm embedded), or copy node_modules/bregman-decoders/dist/bregman_decoders.wasm beside the bundle; ' +
  'or pass load({ wasmBinary }) or load({ locateFile }). Recipes: docs/bundlers.md';

async function instantiate(createBregmanModule, options) {
  // The module's own messages during instantiation (warnings before an
  // abort) go into the error below rather than to the console.
  const messages = instantiationMessages();
  try {
    return { M: await createBregmanModule({ ...options, printErr: messages.printErr }) };
  } catch (error) {
    return { error, early: messages.early };
  } finally {
    messages.done();
  }
}

/**
 * Instantiates the module that `createBregmanModule` (the emscripten factory)
 * makes, with load()'s options `init`. `moduleUrl` is the URL of the bundle
 * this code runs from (the entry's import.meta.url), for the Vite dev server's
 * pre-bundled copy (viteDepsLocateFile).
 */
export async function loadBrowser(createBregmanModule, init, moduleUrl) {
  const options = checkLoadOptions(init);
  let { M, error, early } = await instantiate(createBregmanModule, options);
  const viteLocate = !M && !options.wasmBinary && !options.locateFile && viteDepsLocateFile(moduleUrl);
  if (viteLocate) {
    const second = await instantiate(createBregmanModule, { ...options, locateFile: viteLocate });
    if (second.M) M = second.M;
  }
  if (!M) {
    const from = options.wasmBinary ? 'the given wasmBinary'
      : 'bregman_decoders.wasm beside this module (or where locateFile points)';
    const notFound = !options.wasmBinary && WASM_NOT_FOUND.test([String(error?.message ?? error), ...early].join('\n'));
    throw browserLoadError(error, early, from, notFound ? NOT_FOUND_FIXES : undefined);
  }
  const bd = createApi(M, entropy32);
  // Logits in a GPUBuffer (WebGPU): docs/webgpu.md.
  bd.createGpuDecoder = (device, config) => createGpuDecoder(bd, device, config);
  return bd;
}
