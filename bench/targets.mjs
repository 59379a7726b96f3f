// The speed targets, checked against one bench run (bench/results.json):
// each target's measured ratios, its worst case and whether it is met. The
// docs/speed.md shows this table (bench/readme_speed.mjs), so its
// verdicts come from the run it describes, not from prose.
//   node bench/targets.mjs [results.json]     (prints the markdown table)
// The ratios to a floor come from the run's interleaved rounds
// (results.paired: each round times every floor and configuration in turn,
// and a ratio is the median of the rounds' own ratios), so the machine's
// load drifting between two medians taken a minute apart does not enter
// them; runs without rounds fall back to the ratio of the two medians. A
// ratio near its limit can still land on either side from run to run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TARGET_V = 262144;

// The decoders whose floor is copy + max (no normaliser needed) and those
// that need the sum of exp (the two floors).
const MAX_FLOOR = ['greedy', 'min_p_0.05', 'top_k_40', 'top_k_40_top_p_0.9'];
const EXP_FLOOR = ['sample', 'top_p_0.9', 'typical_0.9'];
// The truncations after the Bregman paper: the exp floor too (each needs Z).
const LATER_TRUNCATIONS = ['p_less', 'p_less_norm', 'top_h_0.4'];

// targets(results) -> [{ name, limit, values: [{ where, value }], worst, met }]
// (met: null where the run did not measure it, e.g. a --quick run).
export function targets(r, V = TARGET_V) {
  const find = (env, impl, row, config) =>
    r.results.find((x) => x.env === env && x.impl === impl && x.row === row && x.config === config)?.ms;
  const floor = (env, row, impl) => find(env, impl, row, null);
  const label = (id) => r.configs.find((c) => c.id === id)?.label ?? id;
  const bregman = r.configs.filter((c) => c.bregman).map((c) => c.id);
  const out = [];
  // values: [{ where, value }]; the worst is the largest (ratios that must
  // stay below the limit) or the smallest (speed-ups that must reach it).
  const add = (name, limit, values, atLeast = false) => {
    const measured = values.filter((v) => Number.isFinite(v.value));
    const worst = measured.length === 0 ? null : measured.reduce((a, b) =>
      ((atLeast ? b.value < a.value : b.value > a.value) ? b : a));
    const met = worst === null ? null : (atLeast ? worst.value >= limit : worst.value <= limit);
    out.push({ name, limit, atLeast, values: measured, worst, met });
  };
  // The ratio to a floor: from the run's interleaved rounds where it has
  // them (results.paired, the same machine state for both), else the ratio
  // of the two medians.
  const pairedRatio = (env, row, config, floorImpl) => r.paired?.[env]?.[row]?.[config]?.[floorImpl];
  const wasmRatio = (row, config, floorImpl) => pairedRatio('node', row, config, floorImpl) ??
    find('node', 'wasm', row, config) / floor('node', row, floorImpl);
  const nativeRatio = (row, config, floorImpl) => pairedRatio('native', row, config, floorImpl) ??
    find('native', 'native', row, config) / floor('native', row, floorImpl);
  const llm = `llm-${V}`, flat = `flat-${V}`;
  const where = (row, config) => `${row.split('-')[0] === 'llm' ? 'LLM-shaped' : 'flat'}, ${label(config)}`;
  const each = (rows, configs, f) => rows.flatMap((row) => configs.map((c) => ({ where: where(row, c), value: f(row, c) })));

  const cheap = each([llm], MAX_FLOOR, (row, c) => wasmRatio(row, c, 'floor-max'));
  add('wasm (Node): greedy, min-p, top-k 40 (+ top-p 0.9) within 2.5x of copy + max (LLM-shaped)', 2.5, cheap);
  const normalised = each([llm, flat], EXP_FLOOR, (row, c) => wasmRatio(row, c, 'floor-max-sum-exp'));
  add('wasm (Node): softmax sample, top-p 0.9, typical 0.9 within 2x of copy + max + sum exp', 2, normalised);
  add('wasm (Node): p-less, p-less-norm, top-H 0.4 within 2x of copy + max + sum exp', 2,
    each([llm, flat], LATER_TRUNCATIONS, (row, c) => wasmRatio(row, c, 'floor-max-sum-exp')));
  add('top-k 40 + top-p 0.9 (Node wasm) faster than transformers.js top-k 40 (onnxruntime-node): speed-up', 1,
    each([llm, flat], ['top_k_40_top_p_0.9'], (row) =>
      find('node', 'transformers.js', row, 'top_k_40') / find('node', 'wasm', row, 'top_k_40_top_p_0.9')), true);
  add('top-k 40 + top-p 0.9 (Chromium wasm) at least 3x faster than transformers.js top-k 40 (onnxruntime-web)', 3,
    each([llm, flat], ['top_k_40_top_p_0.9'], (row) =>
      find('chromium', 'transformers.js', row, 'top_k_40') / find('chromium', 'wasm', row, 'top_k_40_top_p_0.9')), true);
  const small = bregman.filter((id) => !id.endsWith('_khalf'));
  const large = bregman.filter((id) => id.endsWith('_khalf'));
  add('wasm (Node): Bregman, k <= 4096, within 3x of copy + max + sum exp', 3,
    each([llm, flat], small, (row, c) => wasmRatio(row, c, 'floor-max-sum-exp')));
  add('wasm (Node): Bregman, any lambda (k ~ V/2 here), within 30x of copy + max + sum exp', 30,
    each([llm, flat], large, (row, c) => wasmRatio(row, c, 'floor-max-sum-exp')));
  // Native: each decoder against its own native floor, absolute limits.
  add('native: greedy, min-p, top-k 40 (+ top-p 0.9) within 3x of copy + max (LLM-shaped)', 3,
    each([llm], MAX_FLOOR, (row, c) => nativeRatio(row, c, 'floor-max')));
  add('native: softmax sample, top-p 0.9, typical 0.9 within 3x of copy + max + sum exp', 3,
    each([llm, flat], EXP_FLOOR, (row, c) => nativeRatio(row, c, 'floor-max-sum-exp')));
  add('native: p-less, p-less-norm, top-H 0.4 within 3x of copy + max + sum exp', 3,
    each([llm, flat], LATER_TRUNCATIONS, (row, c) => nativeRatio(row, c, 'floor-max-sum-exp')));
  add('native: Bregman, k <= 4096, within 3x of copy + max + sum exp', 3,
    each([llm, flat], small, (row, c) => nativeRatio(row, c, 'floor-max-sum-exp')));
  add('native: Bregman, any lambda (k ~ V/2 here), within 40x of copy + max + sum exp', 40,
    each([llm, flat], large, (row, c) => nativeRatio(row, c, 'floor-max-sum-exp')));
  return out;
}

// allowed_mask's targets (bench --mask-only, or results.paired.mask of a
// full run): each call with a grammar's packed mask against the same call on
// the row with the disallowed logits already -Infinity (the mask's own cost:
// the same decode, nothing to apply), and against the same call on the
// unmasked row, in the same round (suite.maskRatios). Same shape as targets().
export function maskTargets(r, V = TARGET_V) {
  const label = (id) => r.configs?.find((c) => c.id === id)?.label ?? id;
  const out = [];
  const add = (name, limit, values) => {
    const measured = values.filter((v) => Number.isFinite(v.value));
    const worst = measured.length === 0 ? null : measured.reduce((a, b) => (b.value > a.value ? b : a));
    out.push({ name, limit, atLeast: false, values: measured, worst, met: worst === null ? null : worst.value <= limit });
  };
  const values = (field) => [`llm-${V}`, `flat-${V}`].flatMap((row) => Object.entries(r.paired?.mask?.[row] ?? {})
    .flatMap(([c, byShare]) => Object.entries(byShare).map(([share, x]) => ({
      where: `${row.startsWith('llm') ? 'LLM-shaped' : 'flat'}, ${label(c)}, ${Number(share) * 100}% allowed`,
      value: x[field] }))));
  add('wasm (Node): allowed_mask (5% or 50% of V allowed) within 1.2x of the same call on the row already masked',
    1.2, values('allowed_mask_vs_premasked'));
  add('wasm (Node): allowed_mask (5% or 50% of V allowed) within 1.2x of the same call on the unmasked row',
    1.2, values('allowed_mask'));
  return out;
}

const fmt = (x) => (x >= 10 ? x.toFixed(1) : x.toFixed(2));

export function targetsTable(r, V = TARGET_V, list = targets(r, V)) {
  const lines = [
    `| issue 9's target (V = ${V}) | measured | worst case | met |`,
    '|---|---|---|---|',
  ];
  for (const t of list) {
    if (t.worst === null) {
      lines.push(`| ${t.name} | not measured in this run | | – |`);
      continue;
    }
    const vs = t.values.map((v) => v.value);
    const range = `${fmt(Math.min(...vs))}-${fmt(Math.max(...vs))}x`;
    lines.push(`| ${t.name} | ${range} (limit ${t.atLeast ? '>=' : '<='} ${t.limit}x) | ${t.worst.where}: ${fmt(t.worst.value)}x | ${t.met ? 'yes' : '**no**'} |`);
  }
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const input = process.argv[2] ?? join(root, 'bench', 'results.json');
  const r = JSON.parse(readFileSync(input, 'utf8'));
  console.log(targetsTable(r));
  if (r.paired?.mask) console.log(`\n${targetsTable(r, TARGET_V, maskTargets(r))}`);
}
