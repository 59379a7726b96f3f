// Assembles the npm package's dist/ from the emscripten build directory:
//   node web/build.mjs <build-wasm dir> <dist dir>
// The entries (web/index.*.mjs, ES modules) are bundled by esbuild: the
// browser entry as dist/index.mjs, the require() entry as CommonJS
// (dist/index.cjs), Node's import entry as dist/node.mjs over ./index.cjs.
// The emscripten modules stay separate files beside them: the entries'
// imports of the wasm build (build-wasm/...) become imports of those copies.
// The inline entry (dist/inline.mjs) is the exception: it bundles the ES
// module build and embeds the .wasm (inlineWasm below).
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const [buildDir, distDir] = process.argv.slice(2);
if (!buildDir || !distDir) {
  console.error('usage: node web/build.mjs <build-wasm dir> <dist dir>');
  process.exit(2);
}
mkdirSync(distDir, { recursive: true });
// dist/ ships bundles, no unbundled modules: a dist/ that has them loses them.
for (const f of ['api.mjs', 'api.cjs', 'gpu']) rmSync(join(distDir, f), { recursive: true, force: true });
const copy = (from, to) => copyFileSync(from, join(distDir, to));
copy(join(buildDir, 'web', 'bregman_decoders.mjs'), 'bregman_decoders.mjs');
copy(join(buildDir, 'web', 'bregman_decoders.wasm'), 'bregman_decoders.wasm');
copy(join(buildDir, 'node', 'bregman_decoders_node.cjs'), 'bregman_decoders_node.cjs');

// Imports that stay imports in dist/: [what a source file imports (its
// basename), what the bundle imports instead (a file beside it)].
const EXTERNAL = [
  [/\/bregman_decoders\.mjs$/, './bregman_decoders.mjs'],
  [/\/bregman_decoders_node\.cjs$/, './bregman_decoders_node.cjs'],
  [/\/index\.require\.mjs$/, './index.cjs'],
];
function externals(names) {
  return {
    name: 'dist-externals',
    setup(b) {
      for (const [filter, path] of EXTERNAL) {
        if (!names.includes(path)) continue;
        b.onResolve({ filter }, () => ({ path, external: true }));
      }
    },
  };
}
// The inline entry's plugin: the import of 'bregman_decoders.wasm.base64'
// becomes the .wasm as a base64 string (esbuild's base64 loader), and the
// bundled ES module build loses its `new URL('bregman_decoders.wasm',
// import.meta.url)`: bundlers (webpack, Vite, Parcel) read that pattern as an
// asset to emit, a .wasm this entry never fetches (it always passes wasmBinary).
const WASM_URL = 'new URL("bregman_decoders.wasm",import.meta.url).toString()';
function inlineWasm() {
  const wasm = resolve(buildDir, 'web', 'bregman_decoders.wasm');
  const module = resolve(buildDir, 'web', 'bregman_decoders.mjs');
  return {
    name: 'inline-wasm',
    setup(b) {
      b.onResolve({ filter: /\/bregman_decoders\.wasm\.base64$/ }, () => ({ path: wasm, namespace: 'wasm-base64' }));
      b.onLoad({ filter: /.*/, namespace: 'wasm-base64' }, () => ({ contents: readFileSync(wasm), loader: 'base64' }));
      b.onResolve({ filter: /\/bregman_decoders\.mjs$/ }, () => ({ path: module, namespace: 'wasm-module' }));
      b.onLoad({ filter: /.*/, namespace: 'wasm-module' }, () => {
        const text = readFileSync(module, 'utf8');
        if (text.split(WASM_URL).length !== 2) throw new Error(`${module}: expected ${WASM_URL} once`);
        return { contents: text.replace(WASM_URL, '"bregman_decoders.wasm"'), loader: 'js' };
      });
    },
  };
}
async function bundle(entry, out, format, platform, names, plugins = [externals(names)]) {
  await build({
    entryPoints: [join(here, entry)],
    outfile: join(distDir, out),
    bundle: true,
    format,
    platform,
    plugins,
    banner: { js: `// bregman-decoders: web/${entry} bundled by web/build.mjs (esbuild).` },
    logLevel: 'warning',
  });
}
await bundle('index.browser.mjs', 'index.mjs', 'esm', 'browser', ['./bregman_decoders.mjs']);
await bundle('index.require.mjs', 'index.cjs', 'cjs', 'node', ['./bregman_decoders_node.cjs']);
await bundle('index.node.mjs', 'node.mjs', 'esm', 'node', ['./index.cjs']);
await bundle('index.inline.mjs', 'inline.mjs', 'esm', 'browser', [], [inlineWasm()]);

copy(join(here, 'index.d.ts'), 'index.d.ts');
copy(join(here, 'index.inline.d.ts'), 'inline.d.ts');
// The same declarations for require() (a .d.cts: TypeScript's node16 / nodenext
// resolution reads the .d.ts of a "type": "module" package as ESM only), except
// that the CommonJS entry has no WebGPU decoder (an ES module): optional there.
const dts = readFileSync(join(here, 'index.d.ts'), 'utf8');
const gpuMethod = '  createGpuDecoder(device: unknown';
if (!dts.includes(gpuMethod)) throw new Error('index.d.ts: createGpuDecoder not found for index.d.cts');
writeFileSync(join(distDir, 'index.d.cts'), dts.replace(gpuMethod, '  createGpuDecoder?(device: unknown'));
// Integrations (subpath exports bregman-decoders/transformers, /webllm and
// /onnxruntime-web): plain ES modules.
for (const f of ['transformers.mjs', 'transformers.d.ts', 'webllm.mjs', 'webllm.d.ts', 'onnxruntime_web.mjs',
  'onnxruntime_web.d.ts']) copy(join(here, 'adapters', f), f);
console.log(`dist: ${distDir} (index.mjs, index.cjs, node.mjs, inline.mjs)`);
