// Side-by-side A/B of two (or more) builds of the package in one Node process:
// each build's dist/ loaded as its own wasm instance, the calls interleaved
// round by round so machine noise hits them alike; min / median ms per call.
//   node tools/ab_builds.mjs OLD_DIST NEW_DIST [...]
// (AB_CONFIGS, AB_ROWS, AB_V, AB_ROUNDS, AB_SEED: see below.)
// (a dist/ folder per build, e.g. from `git worktree add` + `npm run build`).
// Rows: bench/suite.mjs's LLM-shaped and flat rows at V = 262144.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeRow } from '../bench/suite.mjs';

const V = Number(process.env.AB_V ?? 262144);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 41);
const dirs = process.argv.slice(2);
if (dirs.length < 2) {
  console.error('usage: node tools/ab_builds.mjs OLD_DIST NEW_DIST [...]');
  process.exit(2);
}
const mods = [];
for (const d of dirs) mods.push((await import(pathToFileURL(path.resolve(d, 'node.mjs')).href)).load());
const bds = await Promise.all(mods);
// AB_CONFIGS='[["name", {options}, decode?], ...]' replaces the default set.
const configs = process.env.AB_CONFIGS ? JSON.parse(process.env.AB_CONFIGS) : [
  ['top_p 0.9 sample', { top_p: 0.9 }],
  ['typical 0.9 sample', { typical_p: 0.9 }],
  ['min_p 0.05 sample', { min_p: 0.05 }],
  ['top_p 0.9 decode', { top_p: 0.9 }, true],
];
const kinds = (process.env.AB_ROWS ?? 'llm,flat').split(',');
const cases = [];
for (const kind of kinds) {
  // AB_SEED=bench: the rows `npm run bench` times; else seed 1 (or AB_SEED).
  const seed = process.env.AB_SEED === 'bench' ? V * 7 + (kind === 'flat' ? 1 : 0)
    : Number(process.env.AB_SEED ?? 1);
  const row = makeRow(kind, V, seed);
  for (const [name, o, decode] of configs) cases.push([`${kind} ${name}`, row, o, decode]);
}
const times = cases.map(() => bds.map(() => []));
for (let r = 0; r < ROUNDS; ++r) {
  cases.forEach(([, row, o, decode], c) => bds.forEach((bd, b) => {
    const t0 = performance.now();
    for (let i = 0; i < 5; ++i) decode ? bd.decode(row, o) : bd.sample(row, { ...o, seed: 1, step: i });
    times[c][b].push((performance.now() - t0) / 5);
  }));
}
console.log(`V = ${V}, ${ROUNDS} rounds x 5 calls, min / median ms per call`);
cases.forEach(([name], c) => {
  const cols = times[c].map((t, b) => {
    t.sort((x, y) => x - y);
    return `${path.basename(path.dirname(path.resolve(dirs[b])))}/${path.basename(dirs[b])} ${t[0].toFixed(3)} / ${t[t.length >> 1].toFixed(3)}`;
  });
  console.log(name.padEnd(24), cols.join('   '));
});
