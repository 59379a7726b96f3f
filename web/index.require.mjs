// Entry for Node's require(): dist/index.cjs is this file as CommonJS (bundled
// by web/build.mjs). The single-file Node build of the wasm module embeds its
// .wasm; from source it is the wasm build's (build-wasm/node/), in dist/ the
// copy beside index.cjs. No WebGPU decoder: that is Node's import (node.mjs).
import createBregmanModule from '../build-wasm/node/bregman_decoders_node.cjs';
import { loadNode } from './src/load_node.js';

/**
 * Instantiates the wasm module. Call once and reuse the result. The options
 * are checked as in the browser entry; this build embeds its .wasm, so
 * wasmBinary and locateFile have nothing to do here.
 */
export async function load(init) {
  return loadNode(createBregmanModule, init);
}

export default load;
