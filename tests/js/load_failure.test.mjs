// load() when the engine cannot instantiate the module: the promise settles
// (never hangs) with an Error that says what failed, and nothing is printed.
// V8 reserves about 10 GiB of address space per wasm memory: when none is
// left, the Node entry rejects with such an Error, not emscripten's bare
// "RuntimeError: Aborted(RangeError: ...)", and prints nothing to stderr.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { load } from '../../dist/node.mjs';

test('load(): an instantiation failure is an Error naming it, with nothing printed', async () => {
  const instantiate = WebAssembly.instantiate;
  const consoleError = console.error, consoleWarn = console.warn;
  const printed = [];
  console.error = console.warn = (...a) => printed.push(a.join(' '));
  WebAssembly.instantiate = () => Promise.reject(
    new RangeError('WebAssembly.instantiate(): Out of memory: Cannot allocate Wasm memory for new instance'));
  try {
    await assert.rejects(load(), (e) => {
      assert.ok(e instanceof Error && !(e instanceof WebAssembly.RuntimeError), `${e?.constructor?.name}: ${e?.message}`);
      assert.match(e.message, /^bregman-decoders: could not instantiate the embedded wasm module: RangeError: .*Out of memory/);
      assert.match(e.message, /address space/);
      assert.doesNotMatch(e.message, /ASSERTIONS/);
      return true;
    });
  } finally {
    WebAssembly.instantiate = instantiate;
    console.error = consoleError;
    console.warn = consoleWarn;
  }
  assert.deepEqual(printed, []);
  // The next load() works.
  const bd = await load();
  assert.equal(bd.sample(new Float32Array([0, 3, 1]), { temperature: 0 }).token, 1);
  bd.dispose();
});

// The real thing, in a child process whose address space is capped (Linux):
// instances kept alive until load() fails; it must reject (the child would
// time out on a hang), print nothing, and work again once they are dropped.
test('load(): out of address space with live instances rejects clearly and recovers', {
  skip: process.platform !== 'linux' && 'ulimit -v is Linux-specific here',
}, () => {
  const entry = fileURLToPath(new URL('../../dist/node.mjs', import.meta.url));
  const script = `
    const { load } = await import(${JSON.stringify(entry)});
    let live = [], error = null;
    for (let i = 0; i < 64 && error === null; i++) {
      try { live.push(await load()); } catch (e) { error = e; }
    }
    const loaded = live.length;
    live = null;
    globalThis.gc();
    const again = await load();
    again.sample(new Float32Array([1, 2]), { seed: 1 });
    console.log(JSON.stringify({ loaded, name: error?.constructor?.name, message: error?.message }));`;
  // 40 GiB: Node itself and about three instances.
  const child = spawnSync('sh', ['-c', `ulimit -v ${40 * 1024 * 1024} && exec "$0" --expose-gc --input-type=module -e "$1"`,
    process.execPath, script], { encoding: 'utf8', timeout: 120000 });
  assert.equal(child.status, 0, `exit ${child.status} ${child.signal ?? ''}: ${child.stderr}`);
  assert.equal(child.stderr, '');
  const r = JSON.parse(child.stdout);
  assert.ok(r.loaded >= 1 && r.loaded < 64, `loaded ${r.loaded}`);
  assert.equal(r.name, 'Error');
  assert.match(r.message, /could not instantiate the embedded wasm module: .*Out of memory.*address space/);
});
