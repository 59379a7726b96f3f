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
  // Node's platform can deadlock when the event loop runs empty while a
  // background compile job waits for the main thread to collect garbage: the
  // main thread then blocks in NodePlatform::DrainTasks for good (a TurboFan
  // job in CollectionBarrier::AwaitCollectionBackground; nodejs/node#54918,
  // still in Node 20). Compiling the wasm holds no libuv handle, so a script
  // whose only pending work is `await load()` runs the loop empty; a timer
  // held until the instance is ready keeps it running.
  const keepAlive = setInterval(() => {}, 1 << 30);
  try {
    const M = await createBregmanModule();
    return createApi(M, entropy32);
  } finally {
    clearInterval(keepAlive);
  }
}

module.exports = { load, default: load };
// Marks the exports as a compiled ES module's, so that a default import of
// this file (TypeScript's and Babel's __importDefault, esbuild's __toESM)
// gives `default` (load), as the typings (index.d.cts) declare, rather than
// the exports object. require() and Node's import see the same object.
Object.defineProperty(module.exports, '__esModule', { value: true });
