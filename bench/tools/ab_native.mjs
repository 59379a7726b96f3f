// Side-by-side A/B of two native builds: each build's bd_native_bench times
// every `npm run bench` configuration and the two floors in interleaved
// rounds on the bench's V = 262144 rows (LLM-shaped and flat, the calibrated
// Bregman lambdas of bench/results.json); the builds alternate, so machine
// noise hits them alike. Prints each configuration's median ratio to the
// floor (copy + max + sum of exp) per build, and new / old.
//   node bench/tools/ab_native.mjs OLD_BUILD_DIR NEW_BUILD_DIR [TURNS] [ROUNDS]
// (a build dir holds bd_native_bench, e.g. a `git worktree` + `npm run build`)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as suite from '../suite.mjs';

const [oldDir, newDir, turnsArg, roundsArg] = process.argv.slice(2);
if (!oldDir || !newDir) {
  console.error('usage: node bench/tools/ab_native.mjs OLD_BUILD_DIR NEW_BUILD_DIR [TURNS] [ROUNDS]');
  process.exit(2);
}
const TURNS = Number(turnsArg ?? 4);  // alternations of the two builds
const ROUNDS = Number(roundsArg ?? 5);  // bd_native_bench rounds per turn
const V = 262144;
const results = JSON.parse(readFileSync(fileURLToPath(new URL('../results.json', import.meta.url)), 'utf8'));

const dir = mkdtempSync(join(tmpdir(), 'ab-native-'));
const jobs = [];
for (const kind of ['llm', 'flat']) {
  const id = `${kind}-${V}`;
  const file = join(dir, `${id}.f32`);
  const row = suite.makeRow(kind, V, V * 7 + (kind === 'flat' ? 1 : 0));
  writeFileSync(file, Buffer.from(row.buffer, row.byteOffset, row.byteLength));
  jobs.push([file, 'floor-max', 'floor=max'], [file, 'floor-max-sum-exp', 'floor=max_sum_exp']);
  for (const c of suite.configs()) {
    const lambda = c.bregman ? results.calibration[id][c.id].lambda : undefined;
    const o = { ...suite.optionsFor(c, lambda), seed: suite.SEED, step: suite.STEP };
    jobs.push([file, c.id, ...Object.entries(o).flatMap(([k, v]) => (k === 'bregman'
      ? [`bregman_divergence=${v.divergence}`, `bregman_alpha=${v.alpha}`, `bregman_lambda=${v.lambda}`]
      : [`${k}=${v}`]))]);
  }
}
const jobsFile = join(dir, 'jobs.tsv');
writeFileSync(jobsFile, jobs.map((j) => j.join('\t')).join('\n') + '\n');

// times[build][row file][config] = per-round ms, across every turn.
const times = [{}, {}];
const builds = [oldDir, newDir];
for (let turn = 0; turn < TURNS; turn++) {
  for (const b of turn % 2 ? [1, 0] : [0, 1]) {
    const p = spawnSync(join(builds[b], 'bd_native_bench'), ['--rounds', String(ROUNDS), jobsFile],
      { encoding: 'utf8', maxBuffer: 1 << 26 });
    if (p.status !== 0) throw new Error(`${builds[b]}/bd_native_bench exited ${p.status}: ${p.stderr}`);
    for (const line of p.stdout.trim().split('\n')) {
      const j = JSON.parse(line);
      ((times[b][j.row] ??= {})[j.config] ??= []).push(...j.times);
    }
  }
}
rmSync(dir, { recursive: true, force: true });

console.log(`native A/B, ${TURNS} turns x ${ROUNDS} rounds; median ratio to copy + max + sum of exp`);
console.log('| row | configuration | old | new | new / old |\n|---|---|---|---|---|');
for (const file of Object.keys(times[0])) {
  const [ro, rn] = times.map((t) => suite.pairedRatios(t[file]));
  for (const id of Object.keys(ro)) {
    const o = ro[id]['floor-max-sum-exp'], n = rn[id]['floor-max-sum-exp'];
    console.log(`| ${file.split('/').pop().replace('.f32', '')} | ${id} | ${o.toFixed(3)} | ${n.toFixed(3)} | ${(n / o).toFixed(3)} |`);
  }
}
