'use strict';
// Entry for Node's require() (and, through node.mjs, Node's import): the
// single-file Node build, which embeds its .wasm.
const createBregmanModule = require('./bregman_decoders_node.cjs');
const { checkLoadOptions, createApi, instantiationMessages } = require('./api.cjs');
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
  // As in the browser entry: the module's own messages during instantiation
  // (emscripten prints the failure and "Aborted(...)" before it rejects) go
  // into the error below rather than to stderr, and the error says what
  // failed instead of emscripten's "Aborted(...). Build with -s ASSERTIONS=1".
  const messages = instantiationMessages();
  const { early } = messages;
  let M;
  try {
    M = await createBregmanModule({ printErr: messages.printErr });
  } catch (e) {
    // emscripten's abort wraps the engine's error: "Aborted(<it>). Build with -s ASSERTIONS=1 ...".
    const message = String(e?.message ?? e).replace(/^Aborted\(([\s\S]*)\)(\. Build with [\s\S]*)?$/, '$1');
    const other = early.filter((m) => !m.startsWith('failed to asynchronously prepare wasm') && !m.startsWith('Aborted('));
    // V8 reserves the address space of a wasm memory's whole 32-bit range
    // (about 10 GiB with its guard regions) per instance: many live
    // instances, or a virtual memory limit (ulimit -v), leave no room for one more.
    const hint = /out of memory|cannot allocate/i.test(message)
      ? '. Each load() is its own wasm instance with its own memory (V8 reserves about 10 GiB of ' +
        'address space for each): reuse one instance, or dispose() and drop the ones no longer used'
      : '';
    throw new Error(`bregman-decoders: could not instantiate the embedded wasm module: ${message}` +
      (other.length ? ` (${other.slice(-3).join('; ')})` : '') + hint, { cause: e });
  } finally {
    messages.done();
    clearInterval(keepAlive);
  }
  return createApi(M, entropy32);
}

module.exports = { load, default: load };
// Marks the exports as a compiled ES module's, so that a default import of
// this file (TypeScript's and Babel's __importDefault, esbuild's __toESM)
// gives `default` (load), as the typings (index.d.cts) declare, rather than
// the exports object. require() and Node's import see the same object.
Object.defineProperty(module.exports, '__esModule', { value: true });
