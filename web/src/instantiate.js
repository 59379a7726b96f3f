// What both entries' load() share before the API exists: the check of its
// options and the capture of the module's messages while it instantiates.

/**
 * The module's own messages while it instantiates (emscripten prints a
 * failure, and "Aborted(...)", before it rejects): kept in `early` for the
 * load error instead of the console; once done() is called they go to
 * console.warn. Both entries' load() pass printErr to the module.
 */
export function instantiationMessages() {
  const early = [];
  let loading = true;
  return {
    early,
    printErr: (m) => {
      if (loading) early.push(String(m));
      else console.warn(m);
    },
    done: () => { loading = false; },
  };
}

/**
 * Checks load()'s options (both entries): a plain object with the known keys
 * only, each of its type, so a typo or a wrong value is an error naming it
 * rather than an opaque failure to instantiate the module (or, in Node, a
 * silently ignored option). Returns the options to hand the module.
 */
export function checkLoadOptions(init) {
  if (init === undefined || init === null) return {};
  if (typeof init !== 'object' || Array.isArray(init)) {
    throw new TypeError(`load() options must be an object, got ${Array.isArray(init) ? 'an array' : typeof init}`);
  }
  for (const key of Object.keys(init)) {
    if (key !== 'wasmBinary' && key !== 'locateFile') {
      throw new RangeError(`load(): unknown option ${key} (known: wasmBinary, locateFile)`);
    }
  }
  const out = {};
  const b = init.wasmBinary;
  if (b !== undefined) {
    if (!(b instanceof ArrayBuffer) && !(b instanceof Uint8Array)) {
      throw new TypeError(`wasmBinary must be an ArrayBuffer or a Uint8Array, got ${b === null ? 'null' : typeof b}`);
    }
    out.wasmBinary = b instanceof ArrayBuffer ? new Uint8Array(b) : b;
  }
  if (init.locateFile !== undefined) {
    if (typeof init.locateFile !== 'function') {
      throw new TypeError(`locateFile must be a function, got ${typeof init.locateFile}`);
    }
    out.locateFile = init.locateFile;
  }
  return out;
}

/**
 * load()'s error when the module fails to instantiate, naming the cause where
 * it is known: a Content Security Policy that forbids WebAssembly compilation
 * (the page needs `script-src 'wasm-unsafe-eval'`, nothing more), else a
 * module that could not be fetched or compiled. `from` says where the bytes
 * came from; `early` holds the module's own messages; `advice` ends the
 * message of a module not fetched or compiled (what to do).
 */
export function browserLoadError(e, early, from, advice = '. Serve the .wasm with the module, or pass ' +
  "load({ wasmBinary }) or load({ locateFile }); in Node import 'bregman-decoders' (its entry embeds the .wasm)") {
  const said = [String(e?.message ?? e), ...early].join('\n');
  const detail = (early.length ? ` (${early.slice(-3).join('; ')})` : '');
  if (e?.name === 'EvalError' || /Content Security Policy|unsafe-eval/i.test(said)) {
    return new Error('bregman-decoders: the page\'s Content Security Policy blocks WebAssembly: ' +
      "add 'wasm-unsafe-eval' to its script-src (the package needs nothing more: no 'unsafe-eval'); " +
      `${e?.message ?? e}${detail}`);
  }
  return new Error(`bregman-decoders: could not instantiate ${from}: ${e?.message ?? e}${detail}${advice}`);
}
