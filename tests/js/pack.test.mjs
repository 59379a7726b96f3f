// npm pack, install the tarball offline into an empty folder, and use it there
// with both import and require, as a user would (and type-check both).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('the packed tarball installs offline and works with import and require', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bd-pack-'));
  try {
    const out = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: root, encoding: 'utf8' });
    const tarball = join(dir, out.trim().split('\n').pop());
    const app = join(dir, 'app');
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), '{"name":"app","version":"1.0.0","private":true}');
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: app, encoding: 'utf8' });
    const script = `
      const logits = new Float32Array([0.5, 3, 1, 2]);
      const bd = await load();
      const d = bd.decode(logits, { bregman: { alpha: 1.5, k: 2 } });
      const s = bd.sample(logits, { top_k: 1 });
      console.log(JSON.stringify({ target: bd.target, ids: Array.from(d.ids), token: s.token }));`;
    writeFileSync(join(app, 'esm.mjs'), `import { load } from 'bregman-decoders';\n${script}`);
    writeFileSync(join(app, 'cjs.cjs'), `const { load } = require('bregman-decoders');\n(async () => {${script}})();`);
    const want = { target: 'WASM', ids: [1, 3], token: 1 };
    for (const f of ['esm.mjs', 'cjs.cjs']) {
      const got = JSON.parse(execFileSync(process.execPath, [f], { cwd: app, encoding: 'utf8' }));
      assert.deepEqual(got, want, f);
    }
    // TypeScript through the installed package's exports, as node16 resolution
    // reads them: import from an ES module, require from a CommonJS one (the
    // ESM-only .d.ts made that TS1471; the require condition has a .d.cts).
    const use = `
      const bd = await load();
      const d = bd.decode(new Float32Array(4), { top_k: 1 });
      const k: number = d.k;
      // @ts-expect-error an unknown option
      bd.decode(new Float32Array(4), { top_kk: 1 });
      export { k };`;
    writeFileSync(join(app, 'use_esm.mts'), `import { load } from 'bregman-decoders';\n${use}`);
    writeFileSync(join(app, 'use_cjs.cts'), `import bd_ = require('bregman-decoders');\nconst load = bd_.load;\n` +
      `export async function f() {${use.replace('export { k };', 'return k;')}}`);
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'node16', moduleResolution: 'node16',
        lib: ['ES2022', 'DOM'], types: [] },
      files: ['use_esm.mts', 'use_cjs.cts'],
    }));
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    execFileSync(process.execPath, [tsc, '-p', join(app, 'tsconfig.json')], { cwd: app, encoding: 'utf8' });
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' });
    for (const f of ['package/dist/bregman_decoders.wasm', 'package/dist/index.d.ts', 'package/dist/index.d.cts',
      'package/dist/index.cjs', 'package/dist/index.mjs']) {
      assert.ok(files.includes(f), `${f} missing from the tarball`);
    }
    // Lean: the library, its CLI, README, LICENSE and the user docs; no model
    // weights, demo, sources, math spec or engineering notes.
    const shipped = files.trim().split('\n');
    for (const f of shipped) {
      assert.match(f, /^package\/(dist\/|bin\/bregman-decode\.mjs$|README\.md$|LICENSE$|package\.json$|docs\/([\w-]+\.md|bench\.svg|figures\/[\w-]+\.svg)$)/,
        `${f} should not ship`);
    }
    assert.ok(shipped.includes('package/LICENSE'), 'LICENSE missing from the tarball (package.json says MIT)');
    // Every relative link of the shipped README and docs resolves inside the
    // package: a file that stays in the repository is named, not linked (the
    // package has no repository URL to link it by).
    for (const doc of shipped.filter((f) => /\.md$/.test(f))) {
      const text = execFileSync('tar', ['-xzOf', tarball, doc], { encoding: 'utf8' });
      for (const [, link] of text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(link)) continue;
        const target = posix.normalize(posix.join(posix.dirname(doc), link)).replace(/\/$/, '');
        assert.ok(shipped.some((f) => f === target || f.startsWith(`${target}/`)), `${doc} links to ${link}, not in the tarball`);
      }
    }
    // The user docs stay readable: no shipped doc over 40 KB, 160 KB of docs in all.
    const sizes = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: root, encoding: 'utf8' }))[0].files
      .filter((f) => /^docs\/.*\.md$/.test(f.path));
    for (const f of sizes) assert.ok(f.size <= 40 * 1024, `${f.path} is ${f.size} bytes, over 40 KB`);
    const total = sizes.reduce((a, f) => a + f.size, 0);
    assert.ok(total <= 160 * 1024, `the shipped docs are ${total} bytes, over 160 KB`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
