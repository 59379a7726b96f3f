// npm pack, install the tarball offline into an empty folder, and use it there
// with both import and require, as a user would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' });
    for (const f of ['package/dist/bregman_decoders.wasm', 'package/dist/index.d.ts', 'package/dist/index.cjs', 'package/dist/index.mjs']) {
      assert.ok(files.includes(f), `${f} missing from the tarball`);
    }
    // Lean: the library, its CLI and README; no model weights, demo or sources.
    for (const f of files.trim().split('\n')) {
      assert.match(f, /^package\/(dist\/|bin\/bregman-decode\.mjs$|README\.md$|package\.json$)/, `${f} should not ship`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
