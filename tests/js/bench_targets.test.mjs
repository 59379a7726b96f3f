// bench/targets.mjs judges issue 9's targets from a results.json: checked on
// synthetic runs whose ratios are set by hand (each target moved across its
// limit in turn, so a verdict that ignored its numbers would fail), and the
// README's generated block shows the verdicts of the published run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as suite from '../../bench/suite.mjs';
import { targets, targetsTable, TARGET_V } from '../../bench/targets.mjs';

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
  assert.equal(all.length, 10);
  for (const t of all) assert.equal(t.met, true, t.name);
  const ror = all.find((t) => t.name.startsWith('native: Bregman k ~ V/2'));
  assert.equal(ror.values.length, 8);  // 4 configs x 2 rows
  for (const v of ror.values) assert.ok(Math.abs(v.value - 1) < 1e-12);
  const cheap = all.find((t) => t.name.startsWith('wasm (Node): greedy'));
  assert.ok(Math.abs(cheap.worst.value - 1.5) < 1e-12);
});

test('each target fails when its own numbers cross its limit, and only that one', () => {
  const cases = [
    // [which target, a run that breaks only it]
    ['wasm (Node): greedy', (env, row, c) => (env === 'node' && row.startsWith('llm') && c === 'min_p_0.05' ? 2.6 : undefined)],
    ['wasm (Node): softmax', (env, row, c) => (env !== 'chromium' && row.startsWith('flat') && c === 'typical_0.9' ? 20.5 : undefined)],
    ['top-k 40 + top-p 0.9 (Node wasm)', (env, row, c) => (env === 'node' && c === 'transformers.js' ? 1.4 : undefined)],
    ['top-k 40 + top-p 0.9 (Chromium wasm)', (env, row, c) => (env === 'chromium' && c === 'transformers.js' ? 4.4 : undefined)],
    ['wasm (Node): Bregman, k <= 4096', (env, row, c) => (env !== 'chromium' && c === 'bregman_dual_1.5_k1000' ? 30.5 : undefined)],
    ['wasm (Node): Bregman, any lambda', (env, row, c) => (env !== 'chromium' && c === 'bregman_primal_2_khalf' ? 301 : undefined)],
    ['native: cheap', (env, row, c) => (env === 'native' && row.startsWith('llm') && c === 'greedy' ? 2.26 : undefined)],
    ['native: softmax', (env, row, c) => (env === 'native' && c === 'top_p_0.9' ? 22.6 : undefined)],
    ['native: Bregman k <= 4096', (env, row, c) => (env === 'native' && c === 'bregman_primal_0.5_k10' ? 22.6 : undefined)],
    ['native: Bregman k ~ V/2', (env, row, c) => (env === 'native' && c === 'bregman_dual_1.5_khalf' ? 301 : undefined)],
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

test("the README's generated block shows the published run's verdicts", () => {
  const r = JSON.parse(readFileSync(join(root, 'bench/results.json'), 'utf8'));
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = readme.match(/<!-- bench:begin[^]*?<!-- bench:end -->/)[0];
  assert.ok(block.includes(targetsTable(r)), 'README is stale: run node bench/readme_speed.mjs');
});
