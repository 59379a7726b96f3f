// Assembles the npm package's dist/ from the emscripten build directory:
//   node web/build.mjs <build-wasm dir> <dist dir>
// The ES module API source (src/api.js) is also emitted as CommonJS by a
// fixed textual rewrite of its `export function` lines (no bundler needed).
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const [buildDir, distDir] = process.argv.slice(2);
if (!buildDir || !distDir) {
  console.error('usage: node web/build.mjs <build-wasm dir> <dist dir>');
  process.exit(2);
}
mkdirSync(distDir, { recursive: true });
const copy = (from, to) => copyFileSync(from, join(distDir, to));
copy(join(buildDir, 'web', 'bregman_decoders.mjs'), 'bregman_decoders.mjs');
copy(join(buildDir, 'web', 'bregman_decoders.wasm'), 'bregman_decoders.wasm');
copy(join(buildDir, 'node', 'bregman_decoders_node.cjs'), 'bregman_decoders_node.cjs');
copy(join(here, 'index.browser.mjs'), 'index.mjs');
copy(join(here, 'index.node.mjs'), 'node.mjs');
copy(join(here, 'index.node.cjs'), 'index.cjs');
copy(join(here, 'index.d.ts'), 'index.d.ts');
// The same declarations for require() (a .d.cts: TypeScript's node16 / nodenext
// resolution reads the .d.ts of a "type": "module" package as ESM only), except
// that the CommonJS entry has no WebGPU decoder (an ES module): optional there.
const dts = readFileSync(join(here, 'index.d.ts'), 'utf8');
const gpuMethod = '  createGpuDecoder(device: unknown';
if (!dts.includes(gpuMethod)) throw new Error('index.d.ts: createGpuDecoder not found for index.d.cts');
writeFileSync(join(distDir, 'index.d.cts'), dts.replace(gpuMethod, '  createGpuDecoder?(device: unknown'));
// Integrations (subpath exports bregman-decoders/transformers and /webllm): plain ES modules.
for (const f of ['transformers.mjs', 'transformers.d.ts', 'webllm.mjs', 'webllm.d.ts']) copy(join(here, 'adapters', f), f);
// The WebGPU decoder (ES module only): dist/gpu/.
mkdirSync(join(distDir, 'gpu'), { recursive: true });
for (const f of ['gpu_decoder.mjs', 'wgsl.mjs']) copy(join(here, 'gpu', f), join('gpu', f));

const api = readFileSync(join(here, 'src', 'api.js'), 'utf8');
writeFileSync(join(distDir, 'api.mjs'), api);
const exported = [...api.matchAll(/^export function (\w+)/gm)].map((m) => m[1]);
if (exported.length === 0) throw new Error('api.js exports nothing');
const cjs = "'use strict';\n" + api.replace(/^export function /gm, 'function ') +
  `\nmodule.exports = { ${exported.join(', ')} };\n`;
if (/^\s*(export|import)\s/m.test(cjs)) throw new Error('api.js has an import/export the CJS rewrite does not handle');
writeFileSync(join(distDir, 'api.cjs'), cjs);
console.log(`dist: ${distDir} (${exported.join(', ')})`);
