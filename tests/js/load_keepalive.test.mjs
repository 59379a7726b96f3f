// load() in Node holds a timer while the wasm compiles and instantiates, and
// only then: compiling holds no libuv handle, so a script whose only pending
// work is `await load()` would run its event loop empty, where Node 20 can
// deadlock on a background compile job waiting for a garbage collection
// (nodejs/node#54918; web/src/load_node.js). The deadlock is a race and is not
// reproduced here: this checks the handle that keeps the loop out of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { load } from '../../dist/node.mjs';

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

test('load() keeps a timer while it instantiates, and none after', async () => {
  const before = timers();
  const pending = load();
  assert.equal(timers(), before + 1, 'no handle keeps the loop alive during load()');
  const bd = await pending;
  assert.equal(timers(), before, 'load() left its timer behind');
  assert.equal(bd.sample(new Float32Array([0, 2, 1]), { temperature: 0 }).token, 1);
});

test('require()\'s load() does the same, and a refused option leaves no timer', async () => {
  const { load: loadCjs } = createRequire(import.meta.url)('../../dist/index.cjs');
  const before = timers();
  const pending = loadCjs();
  assert.equal(timers(), before + 1);
  await pending;
  assert.equal(timers(), before);
  await assert.rejects(() => loadCjs({ wasmBinary: 42 }), TypeError);
  assert.equal(timers(), before);
});
