// Side-by-side A/B of two (or more) builds of the package in one Node process
// (or, with --chromium, one headless Chromium page: a browser's V8 can rank
// two builds otherwise than Node's): each build's
// dist/ loaded as its own wasm instance, the calls interleaved round by round
// so machine noise hits them alike; min / median ms per call.
//   node bench/tools/ab_builds.mjs [--chromium] OLD_DIST NEW_DIST [...]
// (AB_CONFIGS, AB_ROWS, AB_V, AB_ROUNDS, AB_SEED: see below.)
// (a dist/ folder per build, e.g. from `git worktree add` + `npm run build`).
// Rows: bench/suite.mjs's LLM-shaped and flat rows at V = 262144.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeRow } from '../suite.mjs';
import { casesWithRows, timeRounds } from './ab_rounds.mjs';

const V = Number(process.env.AB_V ?? 262144);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 41);
const chromium = process.argv.includes('--chromium');
const dirs = process.argv.slice(2).filter((a) => a !== '--chromium');
if (dirs.length < 2) {
  console.error('usage: node bench/tools/ab_builds.mjs [--chromium] OLD_DIST NEW_DIST [...]');
  process.exit(2);
}
// AB_CONFIGS='[["name", {options}, decode?], ...]' replaces the default set.
const configs = process.env.AB_CONFIGS ? JSON.parse(process.env.AB_CONFIGS) : [
  ['top_p 0.9 sample', { top_p: 0.9 }],
  ['typical 0.9 sample', { typical_p: 0.9 }],
  ['min_p 0.05 sample', { min_p: 0.05 }],
  ['top_p 0.9 decode', { top_p: 0.9 }, true],
];
// The rows, as makeRow's arguments (each environment makes its own copy),
// and the cases over them (the row by its index).
const rows = (process.env.AB_ROWS ?? 'llm,flat').split(',').map((kind) => ({
  kind,
  // AB_SEED=bench: the rows `npm run bench` times; else seed 1 (or AB_SEED).
  seed: process.env.AB_SEED === 'bench' ? V * 7 + (kind === 'flat' ? 1 : 0)
    : Number(process.env.AB_SEED ?? 1),
}));
const spec = rows.flatMap(({ kind }, r) =>
  configs.map(([name, o, decode]) => [`${kind} ${name}`, r, o, decode]));
const times = chromium ? await timeInChromium() : await timeInNode();

async function timeInNode() {
  const bds = await Promise.all(
    dirs.map(async (d) => (await import(pathToFileURL(path.resolve(d, 'node.mjs')).href)).load()));
  return timeRounds(bds, casesWithRows(spec, rows.map(({ kind, seed }) => makeRow(kind, V, seed))),
    ROUNDS);
}

// Each dist/ copied under the bench server's /rows/ (a temporary folder) and
// loaded by the bench's page (cross-origin isolated: fine timer resolution),
// which makes the same rows with the same makeRow.
async function timeInChromium() {
  const { startServer } = await import('../server.mjs');
  const { launchChromium } = await import('../../tests/browser/chromium.mjs');
  const served = mkdtempSync(path.join(tmpdir(), 'bd-ab-'));
  dirs.forEach((d, b) => cpSync(d, path.join(served, `build${b}`), { recursive: true }));
  const { server, url } = await startServer(served);
  const browser = await launchChromium();
  try {
    const page = await browser.context.newPage();
    await page.goto(`${url}/bench/page.html`);
    await page.waitForFunction(() => window.benchReady !== undefined);
    await page.evaluate(() => window.benchReady);  // its own loads done before the rounds
    return await page.evaluate(async ({ builds, rows, V, spec, rounds }) => {
      const { casesWithRows: withRows, timeRounds: inRounds } = await import('/bench/tools/ab_rounds.mjs');
      const { makeRow: make } = await import('/bench/suite.mjs');
      const bds = [];
      for (let b = 0; b < builds; ++b) bds.push(await (await import(`/rows/build${b}/index.mjs`)).load());
      return inRounds(bds, withRows(spec, rows.map(({ kind, seed }) => make(kind, V, seed))), rounds);
    }, { builds: dirs.length, rows, V, spec, rounds: ROUNDS });
  } finally {
    await browser.close();
    server.close();
    rmSync(served, { recursive: true, force: true });
  }
}

console.log(`${chromium ? 'Chromium' : 'Node'}, V = ${V}, ${ROUNDS} rounds x 5 calls, min / median ms per call`);
spec.forEach(([name], c) => {
  const cols = times[c].map((t, b) => {
    t.sort((x, y) => x - y);
    return `${path.basename(path.dirname(path.resolve(dirs[b])))}/${path.basename(dirs[b])} ${t[0].toFixed(3)} / ${t[t.length >> 1].toFixed(3)}`;
  });
  console.log(name.padEnd(24), cols.join('   '));
});
