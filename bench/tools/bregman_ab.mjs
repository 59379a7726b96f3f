// Side-by-side A/B of two (or more) builds on Bregman decodes, in one Node
// process: for each (divergence, alpha) and target k the lambda is found on
// the row with the last build's decode().k, then every build decodes that
// row at that lambda, round by round; min ms per call.
//   MODES='[["primal",4],["dual",3]]' TARGETS='[1000,131072]' ROUNDS=5 \
//     node bench/tools/bregman_ab.mjs OLD_DIST NEW_DIST [...]
// (KIND=flat for bench/suite.mjs's flat row; the default is its LLM-shaped
// row, seed 1, V = 262144; SEED=N for another row, e.g. bench/bench.mjs's
// V * 7 (LLM-shaped) and V * 7 + 1 (flat). CALL=sample times sample(), as
// the bench does: no objective, so no pass for its tail sum.)
// The first build a process loads can run 10-30 % slow at small k even
// after a warm-up: load each build twice, interleaved (OLD NEW OLD' NEW',
// copies of the dist directories), and compare the pairs.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeRow } from '../suite.mjs';

const V = 262144;
const dirs = process.argv.slice(2);
if (dirs.length < 1) {
  console.error('usage: node bench/tools/bregman_ab.mjs DIST [DIST ...]');
  process.exit(2);
}
const bds = await Promise.all(
  dirs.map(async (d) => (await import(pathToFileURL(path.resolve(d, 'node.mjs')).href)).load()));
const row = makeRow(process.env.KIND ?? 'llm', V, Number(process.env.SEED ?? 1));
const modes = JSON.parse(process.env.MODES ?? '[["primal",4],["primal",0.25],["dual",3]]');
const targets = JSON.parse(process.env.TARGETS ?? '[1000, 131072]');
const last = bds[bds.length - 1];
const call = process.env.CALL ?? 'decode';
for (const [divergence, alpha] of modes) {
  for (const target of targets) {
    // The largest lambda (bisection on log10) whose k reaches the target.
    const kAt = (e) => last.decode(row, { bregman: { divergence, alpha, lambda: 10 ** e } }).k;
    let lo = -300, hi = 1;
    // (24 halvings: lambda within ~1e-5 of where k steps. Closer, tau_k lies
    // within the solver's slack of lambda, a tie it settles on the costs, a
    // path that rows hit about once in 1e4 decodes.)
    for (let it = 0; it < 24; it++) {
      const mid = (lo + hi) / 2;
      if (kAt(mid) >= target) lo = mid; else hi = mid;
    }
    const o = { bregman: { divergence, alpha, lambda: 10 ** lo } };
    // Every build as warm as the last one, which the calibration ran ~24
    // times (without this the first builds measured 10-30 % slow at small k:
    // V8 tiers a module's functions up by their call counts).
    for (const bd of bds) for (let w = 0; w < Number(process.env.WARM ?? 24); w++) bd[call](row, o);
    const times = bds.map(() => []);
    for (let r = 0; r < Number(process.env.ROUNDS ?? 5); r++) {
      bds.forEach((bd, b) => {
        const t = performance.now();
        bd[call](row, o);
        times[b].push(performance.now() - t);
      });
    }
    const cols = times.map((t, b) => `${dirs[b]} ${Math.min(...t).toFixed(2)}`);
    console.log(`${divergence} ${alpha} k=${kAt(lo)} lambda=${(10 ** lo).toPrecision(4)}  ${cols.join('  ')}`);
  }
}
