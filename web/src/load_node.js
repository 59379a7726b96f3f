// load() for Node's require() and import: instantiates the single-file Node
// build of the wasm module (it embeds its .wasm) and wraps it. The options are
// checked as in the browser entry; wasmBinary and locateFile have nothing to
// do here.
import { randomInt } from 'node:crypto';
import { createApi } from './api.js';
import { checkLoadOptions, instantiationMessages } from './instantiate.js';

function entropy32() { return randomInt(0, 2 ** 32 - 1); }

// The error for a failed instantiation: what failed, instead of emscripten's
// "Aborted(<it>). Build with -s ASSERTIONS=1 ...".
function instantiationError(e, early) {
  const message = String(e?.message ?? e).replace(/^Aborted\(([\s\S]*)\)(\. Build with [\s\S]*)?$/, '$1');
  const other = early.filter((m) => !m.startsWith('failed to asynchronously prepare wasm') && !m.startsWith('Aborted('));
  // V8 reserves the address space of a wasm memory's whole 32-bit range
  // (about 10 GiB with its guard regions) per instance: many live
  // instances, or a virtual memory limit (ulimit -v), leave no room for one more.
  const hint = /out of memory|cannot allocate/i.test(message)
    ? '. Each load() is its own wasm instance with its own memory (V8 reserves about 10 GiB of ' +
      'address space for each): reuse one instance, or dispose() and drop the ones no longer used'
    : '';
  return new Error(`bregman-decoders: could not instantiate the embedded wasm module: ${message}` +
    (other.length ? ` (${other.slice(-3).join('; ')})` : '') + hint, { cause: e });
}

/** Instantiates the module that `createBregmanModule` (the emscripten factory) makes. */
export async function loadNode(createBregmanModule, init) {
  checkLoadOptions(init);
  // Node's platform can deadlock when the event loop runs empty while a
  // background compile job waits for the main thread to collect garbage: the
  // main thread then blocks in NodePlatform::DrainTasks for good (a TurboFan
  // job in CollectionBarrier::AwaitCollectionBackground; nodejs/node#54918,
  // in Node 20). Compiling the wasm holds no libuv handle, so a script whose
  // only pending work is `await load()` runs the loop empty; a timer held
  // until the instance is ready keeps it running.
  const keepAlive = setInterval(() => {}, 1 << 30);
  // The module's own messages during instantiation (emscripten prints the
  // failure and "Aborted(...)" before it rejects) go into the error rather
  // than to stderr.
  const messages = instantiationMessages();
  let M;
  try {
    M = await createBregmanModule({ printErr: messages.printErr });
  } catch (e) {
    throw instantiationError(e, messages.early);
  } finally {
    messages.done();
    clearInterval(keepAlive);
  }
  return createApi(M, entropy32);
}
