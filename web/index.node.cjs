'use strict';
// Entry for Node's require() (and, through node.mjs, Node's import): the
// single-file Node build, which embeds its .wasm.
const createBregmanModule = require('./bregman_decoders_node.cjs');
const { checkLoadOptions, createApi } = require('./api.cjs');
const { randomInt } = require('node:crypto');

function entropy32() { return randomInt(0, 2 ** 32 - 1); }

/**
 * Instantiates the wasm module. Call once and reuse the result. The options
 * are checked as in the browser entry; this build embeds its .wasm, so
 * wasmBinary and locateFile have nothing to do here.
 */
async function load(init) {
  checkLoadOptions(init);
  const M = await createBregmanModule();
  return createApi(M, entropy32);
}

module.exports = { load, default: load };
// Marks the exports as a compiled ES module's, so that a default import of
// this file (TypeScript's and Babel's __importDefault, esbuild's __toESM)
// gives `default` (load), as the typings (index.d.cts) declare, rather than
// the exports object. require() and Node's import see the same object.
Object.defineProperty(module.exports, '__esModule', { value: true });
