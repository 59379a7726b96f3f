// `npm run bench` measures what it says: the quick mode runs end to end on a
// small vocabulary (Node, native, Chromium), writes results.json with every
// implementation for every configuration, and every check passes (same token
// as plain JS for greedy / top-k 1, same kept sets, same tokens across
// environments). The checks themselves are shown to catch a wrong decoder,
// and the published bench/results.json is a full, passing run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from '../../dist/node.mjs';
import * as suite from '../../bench/suite.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const ENVS = ['node', 'native', 'chromium'];

function checkShape(r, sizes, { fromGit = true } = {}) {
  assert.equal(r.schema, 1);
  // A run outside a git checkout (an exported tree, as CI tests it) has no commit.
  if (fromGit) assert.match(r.commit ?? '', /^[0-9a-f]{40}$/);
  else assert.ok(r.commit == null || /^[0-9a-f]{40}$/.test(r.commit), `commit ${r.commit}`);
  assert.ok(r.machine.nproc >= 1 && r.machine.cpu && r.machine.node && r.machine.chromium);
  assert.deepEqual(r.rows.map((x) => x.V), sizes.flatMap((v) => [v, v]));
  const ids = suite.configs().map((c) => c.id);
  assert.deepEqual(r.configs.map((c) => c.id), ids);
  const find = (env, impl, row, config) =>
    r.results.filter((x) => x.env === env && x.impl === impl && x.row === row && x.config === config);
  for (const row of r.rows) {
    for (const env of ENVS) {
      for (const f of ['floor-max', 'floor-max-sum-exp', 'floor-max-no-copy']) {
        assert.equal(find(env, f, row.id, null).length, 1, `${env} ${f} ${row.id}`);
      }
      for (const c of suite.configs()) {
        const lib = find(env, env === 'native' ? 'native' : 'wasm', row.id, c.id);
        assert.equal(lib.length, 1, `${env} ${row.id} ${c.id}`);
        assert.ok(lib[0].ms > 0 && Number.isFinite(lib[0].ms) && lib[0].reps >= 1);
        assert.ok(Number.isInteger(lib[0].token) && lib[0].token >= 0 && lib[0].token < row.V);
        if (env === 'native') continue;
        assert.equal(find(env, 'wasm-zero-copy', row.id, c.id).length, r.zeroCopy ? 1 : 0, `${env} zero copy ${c.id}`);
        assert.equal(find(env, 'plain-js', row.id, c.id).length, c.js ? 1 : 0, `${env} plain-js ${c.id}`);
        assert.equal(find(env, 'transformers.js', row.id, c.id).length, c.tjs !== null ? 1 : 0,
          `${env} transformers.js ${c.id}`);
      }
    }
    // Bregman lambdas were calibrated to the k targets.
    for (const c of suite.configs().filter((x) => x.bregman)) {
      const { k } = r.calibration[row.id][c.id];
      const t = c.bregman.target;
      if (t === 'half') assert.ok(k >= row.V / 2, `${row.id} ${c.id} k ${k}`);
      else assert.ok(k >= t / 2 && k <= t * 2, `${row.id} ${c.id} k ${k}`);
    }
  }
  // The checks that make the comparison meaningful are all there and pass.
  const bad = r.checks.filter((c) => !c.ok);
  assert.deepEqual(bad, []);
  for (const env of ['node', 'chromium']) {
    for (const row of r.rows) {
      for (const config of ['greedy', 'top_k_1']) {
        assert.ok(r.checks.some((c) => c.env === env && c.row === row.id && c.config === config &&
          c.impl === 'wasm' && c.what === 'token'), `${env} ${row.id} ${config} token check`);
        assert.ok(r.checks.some((c) => c.env === env && c.row === row.id && c.config === config &&
          c.impl === 'transformers.js'), `${env} ${row.id} ${config} transformers.js check`);
      }
      assert.ok(r.checks.filter((c) => c.env === env && c.row === row.id && c.config === 'sample' &&
        c.what === 'cdf').length === 2, `${env} ${row.id} sample checks`);
      for (const config of ['top_k_40', 'top_p_0.9', 'min_p_0.05', 'typical_0.9', 'default_chain']) {
        assert.ok(r.checks.some((c) => c.env === env && c.row === row.id && c.config === config &&
          c.what === 'set'), `${env} ${row.id} ${config} set check`);
      }
    }
  }
  const cross = r.checks.filter((c) => c.what === 'token across environments');
  assert.equal(cross.length, r.rows.length * ids.length);
  for (const c of cross) assert.equal(c.impl, 'node+native+chromium');
  assert.equal(r.checks.filter((c) => c.what === 'Bregman k').length,
    r.rows.length * suite.configs().filter((c) => c.bregman).length);
}

test('npm run bench -- --quick runs side by side and every decoder agrees with its reference', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bd-bench-test-'));
  try {
    const out = join(dir, 'results.json');
    execFileSync(process.execPath, [join(root, 'bench/bench.mjs'), '--quick', '--sizes', '4096', '--out', out],
      { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
    const r = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(r.quick, true);
    // The zero-copy path is timed exactly when this package has one.
    assert.equal(r.zeroCopy, typeof (await load()).inputBuffer === 'function');
    checkShape(r, [4096], { fromGit: false });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the checks catch a decoder that returns a different token or set', async () => {
  const bd = await load();
  const floor = await suite.loadFloor(readFileSync(join(root, 'build-wasm/bench/floor.wasm')));
  const data = suite.makeRow('llm', 512, 3);
  const rows = [{ id: 'llm-512', kind: 'llm', V: 512, data }];
  const lambdas = { 'llm-512': Object.fromEntries(suite.configs().filter((c) => c.bregman).map((c) => [c.id, 1e-3])) };
  const timing = { maxReps: 1, budgetMs: 0 };
  const honest = await suite.runEnvironment({ env: 'node', bd, floor, T: null, rows, lambdas, timing });
  assert.deepEqual(honest.checks.filter((c) => !c.ok), []);
  // One token off, and one kept set one short: both must be reported.
  const wrong = {
    sample: (l, o) => { const s = bd.sample(l, o); return o.temperature === 0 ? { ...s, token: (s.token + 1) % l.length } : s; },
    decode: (l, o) => { const d = bd.decode(l, o); return o.top_k === 40 && o.top_p === undefined ? { ...d, ids: d.ids.slice(1), k: d.k - 1 } : d; },
  };
  const caught = await suite.runEnvironment({ env: 'node', bd: wrong, floor, T: null, rows, lambdas, timing });
  const failed = caught.checks.filter((c) => !c.ok).map((c) => `${c.config} ${c.what}`).sort();
  assert.deepEqual(failed, ['greedy token', 'top_k_40 set']);
  // A zero-copy input that reads the wrong row is caught too.
  let buffer = null;
  const stale = {
    inputBuffer: (n) => (buffer = new Float32Array(n)),
    sample: (l, o) => bd.sample(l === buffer ? l.map((x, i) => (i === 0 ? 1e9 : x)) : l, o),
    decode: (l, o) => bd.decode(l, o),
  };
  const zc = await suite.runEnvironment({ env: 'node', bd: stale, floor, T: null, rows, lambdas, timing });
  assert.ok(zc.checks.some((c) => c.impl === 'wasm-zero-copy' && !c.ok));
  assert.ok(zc.checks.filter((c) => c.impl === 'wasm-zero-copy').length === suite.configs().length);
});

test('the published bench/results.json is a full run whose checks all pass', () => {
  const r = JSON.parse(readFileSync(join(root, 'bench/results.json'), 'utf8'));
  assert.equal(r.quick, false);
  checkShape(r, [32000, 128256, 151936, 262144]);
});

test('the floor module computes max and sum of exp (float64 reference)', async () => {
  const floor = await suite.loadFloor(readFileSync(join(root, 'build-wasm/bench/floor.wasm')));
  for (const v of [1, 3, 17, 4096, 100003]) {
    const row = suite.makeRow('flat', v, v);
    let m = -Infinity;
    for (const x of row) m = Math.max(m, x);
    let z = 0;
    for (const x of row) z += Math.exp(x - m);
    assert.equal(floor.max(row), m);
    assert.ok(Math.abs(floor.maxSumExp(row) - z) <= 1e-5 * z, `V=${v}: ${floor.maxSumExp(row)} vs ${z}`);
  }
});
