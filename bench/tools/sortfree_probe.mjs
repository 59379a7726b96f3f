// What a sort-free large-k Bregman path would cost natively
// (bench/tools/sortfree_probe.cc), next to the library's sample() at the same
// k (bd_native_bench), on the bench's rows (V = 262144; lambdas from
// bench/results.json's calibration, k ~ V/2). For each: ms (min over rounds)
// and the ratio to the native floor (copy + max + sum of exp, bench/floor),
// the ratio the bench's native targets judge. Run after `npm run build`
// (build/ for the native tools, dist/ for k):
//   node bench/tools/sortfree_probe.mjs
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as suite from '../suite.mjs';
import { load } from '../../dist/node.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const V = 262144;
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 200);
const CONFIGS = (process.env.PROBE_CONFIGS ?? 'bregman_dual_1.5_khalf,bregman_primal_2_khalf').split(',');
const calibration = JSON.parse(readFileSync(join(root, 'bench/results.json'), 'utf8')).calibration;
const bd = await load();
const dir = mkdtempSync(join(tmpdir(), 'bd-probe-'));
const fmt = (x) => x.toFixed(3);

for (const kind of ['llm', 'flat']) {
  const row = suite.makeRow(kind, V, V * 7 + (kind === 'flat' ? 1 : 0));
  const file = join(dir, `${kind}.f32`);
  writeFileSync(file, Buffer.from(row.buffer));
  for (const id of CONFIGS) {
    const c = suite.configs().find((x) => x.id === id);
    const lambda = calibration[`${kind}-${V}`][id].lambda;
    const opts = { ...suite.optionsFor(c, lambda), seed: suite.SEED, step: suite.STEP };
    const k = bd.decode(row, suite.optionsFor(c, lambda)).k;
    // The probe's stages (stage 0: the floor) and the library's Decoder::Sample.
    const stages = execFileSync(join(root, 'build/bd_sortfree_probe'), [file, String(k), String(ROUNDS)],
      { encoding: 'utf8' }).trim().split('\n').map((l) => JSON.parse(l).ms);
    const jobs = join(dir, 'jobs.tsv');
    const b = opts.bregman;
    writeFileSync(jobs, [file, id, `bregman_divergence=${b.divergence}`, `bregman_alpha=${b.alpha}`,
      `bregman_lambda=${b.lambda}`, `seed=${opts.seed}`, `step=${opts.step}`].join('\t') + '\n');
    const sample = JSON.parse(execFileSync(join(root, 'build/bd_native_bench'), [jobs, String(ROUNDS), '4000'],
      { encoding: 'utf8' }).trim()).ms;
    const floor = stages[0];
    console.log(`\n${kind} row, ${c.label} (k = ${k}); native floor ${fmt(floor)} ms`);
    console.log('| | native ms | ratio to the floor |');
    console.log('|---|---|---|');
    const line = (label, ms) => console.log(`| ${label} | ${fmt(ms)} | ${fmt(ms / floor)} |`);
    const names = ['floor', '+ gather', '+ cells', '+ scatter', '+ float64 p', '+ moments', '+ increments'];
    for (let s = 1; s <= 6; s++) line(`probe ${s}: ${names[s]}`, stages[s]);
    line('library sample()', sample);
  }
}
