// bench/targets.mjs judges the speed targets from a results.json: checked on
// synthetic runs whose ratios are set by hand (each target moved across its
// limit in turn, so a verdict that ignored its numbers would fail), and the
// generated blocks of docs/speed.md and README.md are the published run's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as suite from '../../bench/suite.mjs';
import { speedBlocks, DOC_BLOCK, README_BLOCK } from '../../bench/readme_speed.mjs';
import { maskTargets, targets, targetsTable, TARGET_V } from '../../bench/targets.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

// A run where every environment's floors are 1 ms (copy + max) and 10 ms
// (copy + max + sum of exp) on both rows, and each decoder costs `ms(env, row,
// config)` (default: 1.5x its floor in wasm, the same ratio natively;
// config 'transformers.js' for transformers.js's top-k 40).
function run(ms = () => undefined) {
  const configs = suite.configs().map((c) => ({ id: c.id, label: c.label, bregman: c.bregman }));
  const rows = ['llm', 'flat'].map((kind) => ({ id: `${kind}-${TARGET_V}`, kind, V: TARGET_V }));
  const results = [];
  for (const row of rows) {
    for (const env of ['node', 'native', 'chromium']) {
      results.push({ env, impl: 'floor-max', row: row.id, config: null, ms: 1 });
      results.push({ env, impl: 'floor-max-sum-exp', row: row.id, config: null, ms: 10 });
      for (const c of configs) {
        const exp = !['greedy', 'min_p_0.05', 'top_k_40', 'top_k_40_top_p_0.9', 'top_k_1', 'default_chain'].includes(c.id);
        const base = c.id.endsWith('_khalf') ? 200 : (exp ? 15 : 1.5);
        results.push({ env, impl: env === 'native' ? 'native' : 'wasm', row: row.id, config: c.id,
          ms: ms(env, row.id, c.id) ?? base });
      }
      if (env !== 'native') {
        // transformers.js's top-k 40: 2x (Node) and 4x (Chromium) slower than ours.
        results.push({ env, impl: 'transformers.js', row: row.id, config: 'top_k_40',
          ms: ms(env, row.id, 'transformers.js') ?? (env === 'node' ? 3 : 6) });
      }
    }
  }
  return { configs, rows, results };
}
const verdicts = (r) => Object.fromEntries(targets(r).map((t) => [t.name, t.met]));

test('every target is met on a run within every limit, and its worst case is named', () => {
  const all = targets(run());
  assert.equal(all.length, 12);
  for (const t of all) assert.equal(t.met, true, t.name);
  const large = all.find((t) => t.name.startsWith('native: Bregman, any lambda'));
  assert.equal(large.values.length, 8);  // 4 configs x 2 rows
  for (const v of large.values) assert.ok(Math.abs(v.value - 20) < 1e-12);  // 200 ms / 10 ms
  const cheap = all.find((t) => t.name.startsWith('wasm (Node): greedy'));
  assert.ok(Math.abs(cheap.worst.value - 1.5) < 1e-12);
});

test('each target fails when its own numbers cross its limit, and only that one', () => {
  const cases = [
    // [which target, a run that breaks only it]
    ['wasm (Node): greedy', (env, row, c) => (env === 'node' && row.startsWith('llm') && c === 'min_p_0.05' ? 2.6 : undefined)],
    ['wasm (Node): softmax', (env, row, c) => (env === 'node' && row.startsWith('flat') && c === 'typical_0.9' ? 20.5 : undefined)],
    ['top-k 40 + top-p 0.9 (Node wasm)', (env, row, c) => (env === 'node' && c === 'transformers.js' ? 1.4 : undefined)],
    ['top-k 40 + top-p 0.9 (Chromium wasm)', (env, row, c) => (env === 'chromium' && c === 'transformers.js' ? 4.4 : undefined)],
    ['wasm (Node): p-less', (env, row, c) => (env === 'node' && row.startsWith('flat') && c === 'top_h_0.4' ? 20.5 : undefined)],
    ['wasm (Node): Bregman, k <= 4096', (env, row, c) => (env === 'node' && c === 'bregman_dual_1.5_k1000' ? 30.5 : undefined)],
    ['wasm (Node): Bregman, any lambda', (env, row, c) => (env === 'node' && c === 'bregman_primal_2_khalf' ? 301 : undefined)],
    ['native: greedy', (env, row, c) => (env === 'native' && row.startsWith('llm') && c === 'greedy' ? 3.1 : undefined)],
    ['native: softmax', (env, row, c) => (env === 'native' && c === 'top_p_0.9' ? 30.5 : undefined)],
    ['native: p-less', (env, row, c) => (env === 'native' && c === 'p_less_norm' ? 30.5 : undefined)],
    ['native: Bregman, k <= 4096', (env, row, c) => (env === 'native' && c === 'bregman_primal_0.5_k10' ? 30.5 : undefined)],
    ['native: Bregman, any lambda', (env, row, c) => (env === 'native' && c === 'bregman_dual_1.5_khalf' ? 401 : undefined)],
  ];
  for (const [name, ms] of cases) {
    const v = verdicts(run(ms));
    for (const [target, met] of Object.entries(v)) {
      assert.equal(met, !target.startsWith(name), `${name}: ${target}`);
    }
  }
});

test('a run without V = 262144 leaves every target unjudged', () => {
  const r = run();
  r.results = r.results.map((x) => ({ ...x, row: x.row.replace(String(TARGET_V), '4096') }));
  for (const t of targets(r)) assert.equal(t.met, null, t.name);
  assert.match(targetsTable(r), /not measured in this run/);
});

test("a run's interleaved rounds (results.paired) decide its ratios to the floors; the medians only where it has none", () => {
  // Medians within every limit, rounds that put one ratio across it (and the
  // other way round): the rounds' ratio is the one judged.
  const r = run();
  const row = `flat-${TARGET_V}`;
  r.paired = { node: { [row]: { 'typical_0.9': { 'floor-max': 21, 'floor-max-sum-exp': 2.1 } } },
    native: { [row]: { 'bregman_primal_2_khalf': { 'floor-max': 410, 'floor-max-sum-exp': 41 } } } };
  const v = verdicts(r);
  for (const [target, met] of Object.entries(v)) {
    assert.equal(met, !target.startsWith('wasm (Node): softmax') && !target.startsWith('native: Bregman, any lambda'),
      target);
  }
  // Each environment's ratios are its own: native typical 1.5 (its median;
  // the wasm rounds' 2.1 does not enter), native k ~ V/2 41 (its rounds).
  const native = targets(r).find((t) => t.name.startsWith('native: softmax'));
  assert.ok(native.values.some((x) => Math.abs(x.value - 1.5) < 1e-12));
  assert.ok(native.values.every((x) => Math.abs(x.value - 1.5) < 1e-12));
  const breg = targets(r).find((t) => t.name.startsWith('native: Bregman, any lambda'));
  assert.ok(breg.values.some((x) => Math.abs(x.value - 41) < 1e-12));
  // Natively too: a median across its limit, its rounds within it: met.
  const large = 'native: Bregman, any lambda (k ~ V/2 here), within 40x of copy + max + sum exp';
  const r3 = run((env, rw, c) => (env === 'native' && rw === row && c === 'bregman_primal_2_khalf' ? 410 : undefined));
  assert.equal(verdicts(r3)[large], false);
  r3.paired = { native: { [row]: { 'bregman_primal_2_khalf': { 'floor-max': 390, 'floor-max-sum-exp': 39 } } } };
  assert.equal(verdicts(r3)[large], true);
  // A median across its limit, its rounds within it: met.
  const r2 = run((env, rw, c) => (env === 'node' && rw === row && c === 'top_p_0.9' ? 25 : undefined));
  assert.equal(verdicts(r2)['wasm (Node): softmax sample, top-p 0.9, typical 0.9 within 2x of copy + max + sum exp'], false);
  r2.paired = { node: { [row]: { 'top_p_0.9': { 'floor-max': 19, 'floor-max-sum-exp': 1.9 } } } };
  assert.equal(verdicts(r2)['wasm (Node): softmax sample, top-p 0.9, typical 0.9 within 2x of copy + max + sum exp'], true);
});

test('pairedRatios: the median of the rounds\' own ratios, so load that drifts across rounds cancels', () => {
  // The machine slows 3x over the rounds; each round's config takes 1.8x
  // its floor (one round an outlier): every ratio is the rounds' median.
  const drift = [1, 1.2, 1.5, 2, 2.5, 3, 3];
  const times = {
    'floor-max': drift.map((d) => 0.1 * d),
    'floor-max-sum-exp': drift.map((d) => 0.5 * d),
    top_p: drift.map((d, r) => 0.9 * d * (r === 3 ? 4 : 1)),
  };
  const p = suite.pairedRatios(times);
  assert.deepEqual(Object.keys(p), ['top_p']);
  assert.ok(Math.abs(p.top_p['floor-max-sum-exp'] - 1.8) < 1e-9);
  assert.ok(Math.abs(p.top_p['floor-max'] - 9) < 1e-9);
  // Medians taken at different times see different machines: the config's
  // slow phase against the floor's fast one would give 0.9 * 3 / (0.5 * 1) = 5.4.
});

test("docs/speed.md's and the README's generated blocks show the published run and its verdicts", () => {
  const r = JSON.parse(readFileSync(join(root, 'bench/results.json'), 'utf8'));
  const doc = readFileSync(join(root, 'docs/speed.md'), 'utf8').match(DOC_BLOCK)[0];
  assert.ok(doc.includes(targetsTable(r)), 'docs/speed.md is stale: run node bench/readme_speed.mjs');
  const want = speedBlocks(join(root, 'bench/results.json'), '/dev/null');
  assert.equal(doc, want.doc, 'docs/speed.md is stale: run node bench/readme_speed.mjs');
  const readme = readFileSync(join(root, 'README.md'), 'utf8').match(README_BLOCK)[0];
  assert.equal(readme, want.readme, 'README.md is stale: run node bench/readme_speed.mjs');
});

test('allowed_mask targets: judged from results.paired.mask, each on its own ratio', () => {
  const configs = suite.configs().map((c) => ({ id: c.id, label: c.label }));
  const mask = (vsPremasked, vsPlain) => Object.fromEntries(['llm', 'flat'].map((kind) => [`${kind}-${TARGET_V}`,
    Object.fromEntries(suite.MASK_CONFIGS.map((c) => [c, Object.fromEntries(suite.MASK_SHARES.map((share) =>
      [share, { allowed_mask: vsPlain(kind, c, share), allowed_mask_vs_premasked: vsPremasked(kind, c, share) }]))]))]));
  const judge = (vsPremasked, vsPlain) =>
    maskTargets({ configs, paired: { mask: mask(vsPremasked, vsPlain) } }).map((t) => t.met);
  assert.deepEqual(maskTargets({ configs, results: [] }).map((t) => t.met), [null, null]);
  assert.deepEqual(judge(() => 1.1, () => 1.15), [true, true]);
  const one = (kind, c, share) => (kind === 'flat' && c === 'greedy' && share === 0.5 ? 1.3 : 1.0);
  assert.deepEqual(judge(one, () => 1.0), [false, true]);
  assert.deepEqual(judge(() => 1.0, one), [true, false]);
  const t = maskTargets({ configs, paired: { mask: mask(one, () => 1) } })[0];
  assert.equal(t.values.length, 2 * suite.MASK_CONFIGS.length * suite.MASK_SHARES.length);
  assert.match(t.worst.where, /flat, greedy, 50% allowed/);
  assert.match(targetsTable({ configs }, TARGET_V, maskTargets({ configs, paired: { mask: mask(one, one) } })), /\*\*no\*\*/);
});
