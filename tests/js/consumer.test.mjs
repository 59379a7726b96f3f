// The package as its consumers' tool chains see it (the packed tarball):
// TypeScript's CommonJS interop, TypeScript's node10
// resolution, bundlers following the Node entry, the .wasm for load()'s
// locateFile / wasmBinary, and createGpuDecoder from Node's and Deno's import.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
// The package's own name resolves to this checkout (self-reference through
// package.json's exports), as it resolves to node_modules/ in a consumer.
const require = createRequire(join(root, 'package.json'));

// A consumer folder whose node_modules/bregman-decoders is this checkout.
function consumer() {
  const dir = mkdtempSync(join(tmpdir(), 'bd-consumer-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(root, join(dir, 'node_modules', 'bregman-decoders'), 'dir');
  return dir;
}

function typecheck(dir, compilerOptions, files) {
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: 'ES2022', types: [], skipLibCheck: false, ...compilerOptions },
    files,
  }));
  const r = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir, encoding: 'utf8' });
  return r.status === 0 ? '' : r.stdout + r.stderr;
}

// `import load from 'bregman-decoders'` type-checks against index.d.cts (its
// `export default load`), and TypeScript compiles it for CommonJS (tsc --init's
// module commonjs + esModuleInterop; esbuild and Babel read it the same way) to
// __importDefault(require(...)).default: without __esModule on the exports that
// is the exports object, and load() threw 'is not a function'.
test('a CommonJS TypeScript default import of the package calls load()', async () => {
  const source = "import load from 'bregman-decoders';\n" +
    "import * as ns from 'bregman-decoders';\n" +
    'module.exports = { viaDefault: load, viaNamespace: ns.load };\n';
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, esModuleInterop: true, target: ts.ScriptTarget.ES2022 },
  });
  const mod = { exports: {} };
  new Function('require', 'module', 'exports', outputText)(require, mod, mod.exports);
  assert.equal(typeof mod.exports.viaDefault, 'function', 'the default import is not load');
  assert.equal(typeof mod.exports.viaNamespace, 'function');
  const bd = await mod.exports.viaDefault();
  assert.equal(bd.target, 'WASM');
  bd.dispose();
  // require() itself is unchanged.
  const cjs = require('bregman-decoders');
  assert.equal(cjs.load, cjs.default);
  assert.deepEqual(Object.keys(cjs).sort(), ['default', 'load']);
});

// TypeScript's node10 resolution (module commonjs without moduleResolution, or
// moduleResolution "node") does not read exports: the subpaths' types must be
// found without them (no TS2307), as the root's are.
test('the adapters\' typings resolve under TypeScript\'s node10 resolution too', () => {
  const dir = consumer();
  try {
    // The adapters are ES modules (README): an ES module consumer.
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    writeFileSync(join(dir, 'use.ts'), [
      "import { load } from 'bregman-decoders';",
      "import { createLogitsProcessor } from 'bregman-decoders/transformers';",
      "import { BregmanLogitProcessor } from 'bregman-decoders/webllm';",
      'export async function f() {',
      '  const bd = await load();',
      '  const p = createLogitsProcessor(bd, { top_p: 0.9 });',
      '  const w = new BregmanLogitProcessor(bd, { min_p: 0.05 });',
      '  // @ts-expect-error an unknown option',
      '  createLogitsProcessor(bd, { top_pp: 0.9 });',
      '  return [p.steps, w.steps];',
      '}',
    ].join('\n'));
    for (const options of [{ module: 'esnext', moduleResolution: 'node10' }, { module: 'commonjs' },
      { module: 'esnext', moduleResolution: 'bundler' }, { module: 'node16', moduleResolution: 'node16' }]) {
      assert.equal(typecheck(dir, options, ['use.ts']), '', JSON.stringify(options));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// A bundler (esbuild --platform=node --format=esm, the usual serverless
// bundle) inlines dist/node.mjs and follows its static imports; a require()
// made with createRequire(import.meta.url) it cannot follow, so the bundle
// looked for ./index.cjs beside itself: "Cannot find module './index.cjs'".
test('the Node ES module entry reaches the CommonJS build through a static import', () => {
  const src = readFileSync(join(root, 'dist', 'node.mjs'), 'utf8').replace(/^\s*\/\/.*$/gm, '');
  assert.doesNotMatch(src, /createRequire|\brequire\s*\(/, 'node.mjs loads code that bundlers cannot follow');
  assert.match(src, /^import\s[^;]*from\s+(['"])\.\/index\.cjs\1;/m);
});

// load({ locateFile }) / load({ wasmBinary }) are how a bundled or served app
// points at the .wasm: exports list it, so require.resolve / import.meta.resolve
// / a bundler's `?url` import of it resolve (no ERR_PACKAGE_PATH_NOT_EXPORTED).
test('the .wasm is reachable through the package name', () => {
  const path = require.resolve('bregman-decoders/bregman_decoders.wasm');
  assert.equal(path, join(root, 'dist', 'bregman_decoders.wasm'));
  assert.equal(import.meta.resolve('bregman-decoders/bregman_decoders.wasm'),
    new URL('../../dist/bregman_decoders.wasm', import.meta.url).href);
});

// docs/webgpu.md imports 'bregman-decoders' for the GPU decoder (browsers,
// Deno, workers): Node's and Deno's import (the 'node' condition) has
// createGpuDecoder too (Deno has navigator.gpu), and in Node its error says
// WebGPU is missing. The documented call type-checks (the method is not
// optional in the typings: no TS2722).
test('createGpuDecoder from Node\'s import: present, and an error naming WebGPU without it', async () => {
  const { load } = await import('bregman-decoders');
  const bd = await load();
  try {
    assert.equal(typeof bd.createGpuDecoder, 'function');
    assert.equal(globalThis.GPUBufferUsage, undefined, 'this test expects Node without WebGPU');
    const fakeDevice = { createBuffer() {} };
    assert.throws(() => bd.createGpuDecoder(fakeDevice, { vocab: 8 }),
      (e) => e instanceof TypeError && /needs WebGPU/.test(e.message));
    assert.throws(() => bd.createGpuDecoder(undefined, { vocab: 8 }),
      (e) => e instanceof TypeError && /GPUDevice/.test(e.message));
    // require() is CommonJS: no GPU decoder (docs/webgpu.md).
    const viaRequire = await require('bregman-decoders').load();
    assert.equal(viaRequire.createGpuDecoder, undefined);
    viaRequire.dispose();
  } finally {
    bd.dispose();
  }
  const dir = consumer();
  try {
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    writeFileSync(join(dir, 'gpu.mts'), [
      "import { load, type GpuDecoder } from 'bregman-decoders';",
      'declare const device: unknown, logitsBuffer: unknown;',
      'const bd = await load();',
      "const gd: GpuDecoder = bd.createGpuDecoder(device, { vocab: 262144, maxCandidates: 1024, dtype: 'f16' });",
      'const r = await gd.sample(logitsBuffer, { top_p: 0.9, temperature: 0.8, seed: 1 });',
      'const path: string = r.gpu.path;',
      'export { path };',
    ].join('\n'));
    assert.equal(typecheck(dir, { module: 'node16', moduleResolution: 'node16' }, ['gpu.mts']), '');
    assert.equal(typecheck(dir, { module: 'esnext', moduleResolution: 'bundler' }, ['gpu.mts']), '');
    // The CommonJS typings keep it optional, as require() has none.
    writeFileSync(join(dir, 'gpu.cts'), [
      "import bd_ = require('bregman-decoders');",
      'export async function f(device: unknown) {',
      '  const bd = await bd_.load();',
      '  // @ts-expect-error possibly undefined under require()',
      '  return bd.createGpuDecoder(device, { vocab: 8 });',
      '}',
    ].join('\n'));
    // ... and that instance still goes to the adapters (their typings' bd).
    writeFileSync(join(dir, 'adapters.mts'), [
      "import { createLogitsProcessor } from 'bregman-decoders/transformers';",
      "import { BregmanLogitProcessor } from 'bregman-decoders/webllm';",
      'declare const viaRequire: Awaited<ReturnType<typeof import(\'bregman-decoders\', { with: { \'resolution-mode\': \'require\' } }).load>>;',
      'createLogitsProcessor(viaRequire, { top_p: 0.9 });',
      'new BregmanLogitProcessor(viaRequire, { min_p: 0.05 });',
      'export {};',
    ].join('\n'));
    assert.equal(typecheck(dir, { module: 'node16', moduleResolution: 'node16' }, ['gpu.cts', 'adapters.mts']), '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
