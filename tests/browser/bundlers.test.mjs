// The packed package in the bundlers a web app uses, each installed from npm
// at a pinned version (tests/bundlers/package-lock.json) into a temporary app
// folder beside the tarball: Vite 6 and Vite 8 (dev server and build),
// webpack 5, esbuild and Rollup build or serve a page that imports
// 'bregman-decoders' (or 'bregman-decoders/inline'), and the page, in headless
// Chromium, decodes and draws the same numbers as Node. Without configuration
// esbuild and Rollup leave the .wasm behind: there load()'s error names the
// fix, and the fix (the inline entry, or the .wasm copied beside the bundle)
// works. Next.js, heavier: tests/bundlers/next.test.mjs (npm run test:next).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, rmSync, writeFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { launchChromium } from './chromium.mjs';
import { startServer } from './server.mjs';
import { expectedResult, installApp, pageResult, pageScript, repoRoot } from '../bundlers/harness.mjs';

let app, chrome, want;

before(async () => {
  const t0 = Date.now();
  app = installApp(join(repoRoot, 'tests', 'bundlers'));
  console.log(`# npm ci of the bundlers + the tarball: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  chrome = await launchChromium();
  want = await expectedResult();
});

after(async () => {
  await chrome?.close();
  app?.remove();
});

// An import of the app's own node_modules (the bundlers are not the repository's).
const appImport = (name) => import(createRequire(join(app.dir, 'package.json')).resolve(name));

// The app's page: index.html loads main.js, which imports load() from `specifier`.
function writeApp(specifier, { moduleScript = true } = {}) {
  writeFileSync(join(app.dir, 'main.js'), pageScript(specifier));
  const tag = moduleScript ? '<script type="module" src="./main.js"></script>' : '<script defer src="./main.js"></script>';
  writeFileSync(join(app.dir, 'index.html'), `<!doctype html><html><head><meta charset="utf-8"></head><body>${tag}</body></html>`);
}

// Serves the folder `out` and returns the page's result.
async function served(out) {
  const { server, url } = await startServer(0, { dir: out });
  try {
    return await pageResult(chrome.context, `${url}/index.html`);
  } finally {
    server.close();
  }
}

function assertDecodes(got, label) {
  assert.equal(got.error, undefined, `${label}: ${got.error}`);
  assert.deepEqual(got.pageErrors, [], label);
  const { wasmRequests, pageErrors, ...result } = got;
  assert.deepEqual(result, want, `${label}: the page's numbers differ from Node's`);
}

async function viteDev(pkg, config = {}) {
  const { createServer } = await appImport(pkg);
  rmSync(join(app.dir, 'node_modules', '.vite'), { recursive: true, force: true });
  const server = await createServer({ root: app.dir, configFile: false, logLevel: 'error',
    server: { host: '127.0.0.1', port: 0 }, ...config });
  await server.listen();
  try {
    return await pageResult(chrome.context, server.resolvedUrls.local[0]);
  } finally {
    await server.close();
  }
}

async function viteBuild(pkg) {
  const { build } = await appImport(pkg);
  const out = join(app.dir, `out-${pkg}`);
  await build({ root: app.dir, configFile: false, logLevel: 'error', build: { outDir: out, emptyOutDir: true } });
  return out;
}

for (const pkg of ['vite', 'vite8']) {
  test(`${pkg} dev server: no configuration`, async () => {
    writeApp('bregman-decoders');
    const got = await viteDev(pkg);
    assertDecodes(got, `${pkg} dev`);
    assert.ok(got.wasmRequests.some((u) => /\/node_modules\/bregman-decoders\/dist\/bregman_decoders\.wasm$/.test(u)),
      `${pkg} dev: the package's .wasm was not fetched: ${got.wasmRequests}`);
  });

  test(`${pkg} build: no configuration, the .wasm emitted as an asset`, async () => {
    writeApp('bregman-decoders');
    const out = await viteBuild(pkg);
    assert.ok(readdirSync(join(out, 'assets')).some((f) => /^bregman_decoders-.*\.wasm$/.test(f)));
    assertDecodes(await served(out), `${pkg} build`);
  });
}

test('vite dev server with a cache folder outside node_modules: the error names optimizeDeps.exclude, which works', async () => {
  writeApp('bregman-decoders');
  const got = await viteDev('vite', { cacheDir: join(app.dir, '.vite-cache') });
  assert.match(got.error ?? '', /optimizeDeps: \{ exclude: \['bregman-decoders'\] \}/);
  assertDecodes(await viteDev('vite', { cacheDir: join(app.dir, '.vite-cache'),
    optimizeDeps: { exclude: ['bregman-decoders'] } }), 'vite dev, excluded');
});

test('vite build of the inline entry: one bundle, no .wasm asset, nothing fetched', async () => {
  writeApp('bregman-decoders/inline');
  const out = await viteBuild('vite');
  assert.deepEqual(readdirSync(join(out, 'assets')).filter((f) => f.endsWith('.wasm')), []);
  const got = await served(out);
  assertDecodes(got, 'vite build, inline');
  assert.deepEqual(got.wasmRequests, []);
});

async function webpackBuild(out) {
  const { default: webpack } = await appImport('webpack');
  const stats = await new Promise((resolve, reject) => webpack({
    mode: 'production', context: app.dir, entry: './main.js', output: { path: out, filename: 'main.js', clean: true },
    performance: { hints: false },
  }, (e, s) => (e ? reject(e) : resolve(s))));
  assert.ok(!stats.hasErrors(), stats.toString('errors-only'));
  copyFileSync(join(app.dir, 'index.html'), join(out, 'index.html'));
}

test('webpack 5: no configuration, the .wasm emitted as an asset', async () => {
  writeApp('bregman-decoders', { moduleScript: false });
  const out = join(app.dir, 'out-webpack');
  await webpackBuild(out);
  assert.ok(readdirSync(out).some((f) => f.endsWith('.wasm')));
  assertDecodes(await served(out), 'webpack');
});

test('webpack 5, the inline entry: no .wasm emitted, nothing fetched', async () => {
  writeApp('bregman-decoders/inline', { moduleScript: false });
  const out = join(app.dir, 'out-webpack-inline');
  await webpackBuild(out);
  assert.deepEqual(readdirSync(out).filter((f) => f.endsWith('.wasm')), []);
  const got = await served(out);
  assertDecodes(got, 'webpack, inline');
  assert.deepEqual(got.wasmRequests, []);
});

// esbuild and Rollup bundle the module and leave its .wasm behind (neither
// reads new URL(..., import.meta.url) as an asset).
const bundlers = {
  async esbuild(out) {
    const { build } = await appImport('esbuild');
    await build({ entryPoints: [join(app.dir, 'main.js')], bundle: true, format: 'esm', outdir: out, logLevel: 'error' });
  },
  async rollup(out) {
    const { rollup } = await appImport('rollup');
    const { nodeResolve } = await appImport('@rollup/plugin-node-resolve');
    const bundle = await rollup({ input: join(app.dir, 'main.js'), plugins: [nodeResolve({ browser: true })] });
    await bundle.write({ dir: out, format: 'es' });
    await bundle.close();
  },
};

for (const [name, bundle] of Object.entries(bundlers)) {
  test(`${name}: the error names the fix; the inline entry and the copied .wasm work`, async () => {
    const out = join(app.dir, `out-${name}`);
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    writeApp('bregman-decoders');
    await bundle(out);
    copyFileSync(join(app.dir, 'index.html'), join(out, 'index.html'));
    const bare = await served(out);
    assert.match(bare.error ?? '', /The \.wasm was not found beside this module/, name);
    assert.match(bare.error, /import \{ load \} from 'bregman-decoders\/inline'/, name);
    assert.match(bare.error, /copy node_modules\/bregman-decoders\/dist\/bregman_decoders\.wasm beside the bundle/, name);
    // The recipe of docs/bundlers.md: the .wasm copied beside the bundle.
    copyFileSync(join(app.dir, 'node_modules', 'bregman-decoders', 'dist', 'bregman_decoders.wasm'),
      join(out, 'bregman_decoders.wasm'));
    assertDecodes(await served(out), `${name}, .wasm copied`);
    // The inline entry, with no .wasm anywhere.
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    writeApp('bregman-decoders/inline');
    await bundle(out);
    copyFileSync(join(app.dir, 'index.html'), join(out, 'index.html'));
    const inline = await served(out);
    assertDecodes(inline, `${name}, inline`);
    assert.deepEqual(inline.wasmRequests, []);
  });
}

test('the inline entry is typed as the main entry, for bundler and node16 resolution', async () => {
  const { execFileSync } = await import('node:child_process');
  const use = `import { load } from 'bregman-decoders/inline';
import loadDefault from 'bregman-decoders/inline';
const bd = await load();
const k: number = bd.decode(new Float32Array(4), { top_k: 1 }).k;
const same: typeof loadDefault = load;
// @ts-expect-error an unknown option
bd.decode(new Float32Array(4), { top_kk: 1 });
// @ts-expect-error an unknown load() option
await load({ wasmBinray: new Uint8Array(0) });
export { k, same };
`;
  writeFileSync(join(app.dir, 'use_inline.mts'), use);
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  for (const [module, moduleResolution] of [['esnext', 'bundler'], ['node16', 'node16']]) {
    const config = join(app.dir, `tsconfig.${moduleResolution}.json`);
    writeFileSync(config, JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module, moduleResolution,
        lib: ['ES2022', 'DOM'], types: [], skipLibCheck: false },
      files: ['use_inline.mts'],
    }));
    execFileSync(process.execPath, [tsc, '-p', config], { cwd: app.dir, encoding: 'utf8' });
  }
});
