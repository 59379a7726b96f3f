// npm run eval: decoding quality of every decoder of the package on real
// next-token distributions of the austen-kjv-2m model (held-out text).
//   1. Truncation trade-off: teacher forcing over held-out text; every decoder
//      setting decodes the same cached logits rows (temperatures 1 and 1.5).
//   2. Open-ended generation: continuations of held-out prompts by each
//      family at matched mean k (temperatures 1, 1.5, 2), scored against the
//      human continuations (perplexity under the model, 4-gram repetition,
//      distinct-2/3).
//   3. Sanity facts, asserted (a failure exits 1): primal = dual at alpha 2,
//      Bregman alpha 1 with fixed k = top-k, every q sums to 1 and keeps the
//      rank order of p.
// Writes eval/results.json, docs/figures/quality_*.svg, notes/quality_results.md.
//   node eval/run.mjs [--quick] [--out DIR] [--workers N] [--prompts N] [--no-cache]
// --quick: a small smoke run (the test runs it), written under --out
// (default eval/.cache/quick/) instead of the committed paths.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { FAMILIES, PURE, GEN_FAMILIES, PAPER_DEFAULTS, withTemperature } from './decoders.mjs';
import { heldoutDocs, loadModel, makeChunks, MODEL_DIR } from './data.mjs';
import { MIX, rowStats, mean, quantile, meanSe, spearman, repetition, distinct, atMeanK } from './metrics.mjs';
import { writeReport } from './report.mjs';

const ROOT = new URL('../', import.meta.url);
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const QUICK = flag('--quick');

const CONFIG = QUICK ? {
  tfChunks: 6, promptLen: 16, contLen: 24, stride: 3, tfTemperatures: [1, 1.5],
  genPrompts: 2, genTemperatures: [1, 2], genTargetsT1: [20], genTargetsHot: [20], seed: 20250525,
} : {
  // About 896 000 forward passes: ~35 minutes on an idle 2-core machine (see docs/quality.md).
  tfChunks: 200, promptLen: 16, contLen: 64, stride: 4, tfTemperatures: [1, 1.5],
  genPrompts: 200, genTemperatures: [1, 1.5, 2], genTargetsT1: [10, 40], genTargetsHot: [40], seed: 20250525,
};
function intOption(name, value, lo, hi) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < lo || n > hi) throw new RangeError(`${name}: expected an integer in [${lo}, ${hi}], got ${value}`);
  return n;
}
// Generation prompts are teacher-forced chunks (their human log-probabilities come from there).
if (opt('--prompts') !== undefined) CONFIG.genPrompts = intOption('--prompts', opt('--prompts'), 1, CONFIG.tfChunks);
const OUT = new URL(opt('--out', QUICK ? 'eval/.cache/quick/' : '.').replace(/\/?$/, '/'), ROOT);
const WORKERS = intOption('--workers', opt('--workers', Math.max(1, Math.min(availableParallelism(), 16))), 1, 64);
const t0 = performance.now();
const log = (...a) => console.log(`[${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s]`, ...a);

// The package, built if needed (npm run eval is one command).
if (!existsSync(new URL('dist/node.mjs', ROOT))) {
  log('dist/ missing: building (scripts/build.sh)');
  const r = spawnSync('bash', ['scripts/build.sh'], { cwd: fileURLToPath(ROOT), stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const { load } = await import('../dist/node.mjs');
const bd = await load();

// --- Data -----------------------------------------------------------------
const { model, tokenizer } = loadModel();
const V = model.config.vocabSize;
const chunkCount = Math.max(CONFIG.tfChunks, CONFIG.genPrompts);
const chunks = makeChunks(tokenizer, heldoutDocs(), { count: chunkCount, promptLen: CONFIG.promptLen, contLen: CONFIG.contLen });
if (chunks.length < chunkCount) throw new Error(`only ${chunks.length} held-out chunks, ${chunkCount} needed`);
log(`${chunks.length} held-out chunks of ${1 + CONFIG.promptLen} prompt + ${CONFIG.contLen} continuation tokens; ${WORKERS} workers`);

// --- Worker pool ------------------------------------------------------------
function startPool(n) {
  const workers = [];
  const queue = [];
  const pending = new Map();
  let nextId = 0;
  const idle = [];
  const pump = () => {
    while (idle.length && queue.length) {
      const w = idle.pop();
      const job = queue.shift();
      w.busy = job.id;
      w.postMessage({ id: job.id, kind: job.kind, job: job.job });
    }
  };
  for (let i = 0; i < n; i++) {
    const w = new Worker(new URL('./worker.mjs', import.meta.url));
    w.on('message', (msg) => {
      if (msg.ready) { idle.push(w); pump(); return; }
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p.reject(new Error(msg.error)); else p.resolve(msg.out);
      idle.push(w);
      pump();
    });
    w.on('error', (e) => { for (const p of pending.values()) p.reject(e); });
    workers.push(w);
  }
  return {
    run(kind, job) {
      return new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        queue.push({ id, kind, job });
        pump();
      });
    },
    close() { return Promise.all(workers.map((w) => w.terminate())); },
  };
}
const pool = startPool(WORKERS);

async function runAll(kind, jobs, label) {
  let done = 0, lastPct = -1;
  return Promise.all(jobs.map((job) => pool.run(kind, job).then((out) => {
    done++;
    const pct = Math.floor((100 * done) / jobs.length / 10) * 10;
    if (pct !== lastPct) { lastPct = pct; log(`${label}: ${done}/${jobs.length}`); }
    return out;
  })));
}

// --- 1. Teacher forcing: rows cached under eval/.cache/ -----------------------
const tfChunks = chunks.slice(0, CONFIG.tfChunks);
const cacheKey = createHash('sha256')
  .update(readFileSync(new URL('model.bin', MODEL_DIR)))
  .update(JSON.stringify({ ids: tfChunks.map((c) => c.ids), p: CONFIG.promptLen, s: CONFIG.stride, v: 1 }))
  .digest('hex').slice(0, 16);
const cacheDir = new URL('eval/.cache/', ROOT);
const cacheFile = new URL(`tf-${cacheKey}.bin`, cacheDir);
let tf;
if (!flag('--no-cache') && existsSync(cacheFile)) {
  const buf = readFileSync(cacheFile);
  const meta = JSON.parse(readFileSync(new URL(`tf-${cacheKey}.json`, cacheDir), 'utf8'));
  const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  tf = { rows: all.subarray(0, meta.rows * V), next: Int32Array.from(meta.next), humanLogp: meta.humanLogp };
  log(`teacher forcing: ${meta.rows} rows from the cache (${fileURLToPath(cacheFile)})`);
} else {
  log(`teacher forcing: ${tfChunks.length} chunks (${tfChunks.length * (CONFIG.promptLen + CONFIG.contLen)} forward passes)`);
  const outs = await runAll('tf', tfChunks.map((c) => ({ ids: c.ids, promptLen: CONFIG.promptLen, stride: CONFIG.stride })), 'teacher forcing');
  const nRows = outs.reduce((s, o) => s + o.positions.length, 0);
  const rows = new Float32Array(nRows * V);
  const next = new Int32Array(nRows);
  let r = 0;
  outs.forEach((o, c) => {
    rows.set(o.rows, r * V);
    for (const pos of o.positions) next[r++] = tfChunks[c].ids[pos + 1];
  });
  tf = { rows, next, humanLogp: outs.map((o) => Array.from(o.humanLogp)) };
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(cacheFile, rows);
  writeFileSync(new URL(`tf-${cacheKey}.json`, cacheDir), JSON.stringify({ rows: nRows, next: Array.from(next), humanLogp: tf.humanLogp }));
}
const N = tf.next.length;

// The rows and per-temperature row facts go to the workers as SharedArrayBuffers.
function shared(typed) {
  const sab = new SharedArrayBuffer(typed.byteLength);
  new typed.constructor(sab).set(typed);
  return sab;
}
const rowsSab = shared(tf.rows), nextSab = shared(tf.next);
const stats = {}, data = {};
for (const T of CONFIG.tfTemperatures) {
  stats[T] = Array.from({ length: N }, (_, r) => rowStats(tf.rows.subarray(r * V, (r + 1) * V), tf.next[r], T));
  data[T] = { rows: rowsSab, next: nextSab, stats: shared(Float64Array.from(stats[T].flatMap((s) => [s.max, s.logZ, s.entropy, s.logpTrue]))) };
}

// --- Sanity facts, gathered from every decode ----------------------------------
const sanity = {
  sums: { decodes: 0, maxAbsError: 0 },
  rankOrder: { decodes: 0, violations: 0 },
  topPrefix: { decodes: 0, violations: 0, note: 'every truncation but typical keeps a most-probable prefix of p' },
  primalDualAlpha2: { pairs: 0, maxAbsDiff: 0, mismatches: 0 },
  alpha1FixedKIsTopK: { pairs: 0, maxAbsDiff: 0, mismatches: 0 },
};

// --- 1. The sweep: every setting on every row, in the workers -------------------
const settings = CONFIG.tfTemperatures.flatMap((T) => FAMILIES.flatMap((fam) => fam.values.map((value) => ({ fam, value, T }))));
log(`sweep: ${settings.length} settings x ${N} rows`);
const sweepOut = await runAll('sweep', settings.map(({ fam, value, T }) => ({
  data: data[T], options: withTemperature(fam.options(value), T), T, prefix: fam.family !== 'typical',
})), 'sweep');
const points = settings.map(({ fam, value, T }, i) => {
  const o = sweepOut[i];
  sanity.sums.decodes += o.sanity.decodes;
  sanity.sums.maxAbsError = Math.max(sanity.sums.maxAbsError, o.sanity.maxSumError);
  sanity.rankOrder.decodes += o.sanity.decodes;
  sanity.rankOrder.violations += o.sanity.rankViolations;
  sanity.topPrefix.decodes += o.sanity.prefixDecodes;
  sanity.topPrefix.violations += o.sanity.prefixViolations;
  const ent = stats[T].map((s) => s.entropy);
  // Mean k per quartile of the entropy of p_T.
  const cuts = [0.25, 0.5, 0.75].map((q) => quantile(ent, q));
  const bins = [[], [], [], []];
  for (let r = 0; r < N; r++) bins[cuts.filter((c) => ent[r] > c).length].push(o.ks[r]);
  return {
    family: fam.family, param: fam.param, value, T,
    meanK: mean(o.ks), medianK: quantile(o.ks, 0.5), kP10: quantile(o.ks, 0.1), kP90: quantile(o.ks, 0.9),
    coverage: mean(o.covered), keptMass: mean(o.mass), score: mean(o.score),
    kEntropySpearman: spearman(o.ks, ent),
    meanKByEntropyQuartile: bins.map(mean),
  };
});
const reference = Object.fromEntries(CONFIG.tfTemperatures.map((T) => [T, {
  family: PURE.family, T, meanK: V, coverage: 1, keptMass: 1,
  score: mean(stats[T].map((s) => s.logpTrue)), meanEntropy: mean(stats[T].map((s) => s.entropy)),
}]));

// Primal and dual at alpha 2 (squared Euclidean: symmetric) over the lambda
// sweep, and Bregman alpha 1 with k fixed against top-k over the k sweep, on
// every 4th row.
const breg = (divergence, alpha, extra, T) => ({ samplers: ['temperature', 'bregman'], temperature: T, bregman: { divergence, alpha, ...extra } });
const pairJobs = CONFIG.tfTemperatures.flatMap((T) => [
  ...FAMILIES.find((f) => f.family === 'bregman dual a=2').values.map((lambda) => ({
    check: 'primalDualAlpha2', job: { data: data[T], every: QUICK ? 1 : 4, a: breg('primal', 2, { lambda }, T), b: breg('dual', 2, { lambda }, T) },
  })),
  ...FAMILIES.find((f) => f.family === 'top-k').values.map((k) => ({
    check: 'alpha1FixedKIsTopK', job: { data: data[T], every: QUICK ? 1 : 4, a: breg('primal', 1, { k }, T), b: { samplers: ['temperature', 'top_k'], temperature: T, top_k: k } },
  })),
]);
const pairOut = await runAll('pair', pairJobs.map((j) => j.job), 'sanity pairs');
pairJobs.forEach(({ check }, i) => {
  const o = pairOut[i], s = sanity[check];
  s.pairs += o.pairs;
  s.mismatches += o.mismatches;
  s.maxAbsDiff = Math.max(s.maxAbsDiff, o.maxAbsDiff);
});
const TOL = 1e-5;
sanity.pass = sanity.sums.maxAbsError < TOL && sanity.rankOrder.violations === 0 && sanity.topPrefix.violations === 0 &&
  sanity.primalDualAlpha2.mismatches === 0 && sanity.primalDualAlpha2.maxAbsDiff < TOL &&
  sanity.alpha1FixedKIsTopK.mismatches === 0 && sanity.alpha1FixedKIsTopK.maxAbsDiff < TOL;
sanity.tolerance = TOL;
log(`sanity: ${sanity.pass ? 'pass' : 'FAIL'}`, JSON.stringify(sanity));

// Metrics of each family at matched mean k (interpolated in log k).
const MATCH_K = [2, 5, 10, 20, 50, 100, 200];
const families = [...new Set(points.map((p) => p.family))];
const matched = Object.fromEntries(CONFIG.tfTemperatures.map((T) => [T, Object.fromEntries(families.map((f) => {
  const pts = points.filter((p) => p.family === f && p.T === T);
  return [f, Object.fromEntries(MATCH_K.map((k) => [k, {
    coverage: atMeanK(pts, 'coverage', k), score: atMeanK(pts, 'score', k), keptMass: atMeanK(pts, 'keptMass', k),
  }]))];
}))]));

// --- 2. Open-ended generation ---------------------------------------------------
// Each family runs at the sweep value whose mean k at T = 1 is nearest (in
// log k) to a target; hotter temperatures reuse the same value, as a user
// who raises T without retuning would.
function settingFor(family, targetK) {
  const pts = points.filter((p) => p.family === family && p.T === 1);
  return pts.reduce((best, p) => (Math.abs(Math.log(p.meanK / targetK)) < Math.abs(Math.log(best.meanK / targetK)) ? p : best));
}
const combos = [];
for (const T of CONFIG.genTemperatures) {
  combos.push({ family: PURE.family, param: null, value: null, T, targetK: null, options: withTemperature(PURE.options, T) });
  for (const d of PAPER_DEFAULTS) {
    combos.push({ family: d.family, param: d.param, value: d.value, T, targetK: null, options: withTemperature(d.options, T) });
  }
  const targets = T === 1 ? CONFIG.genTargetsT1 : CONFIG.genTargetsHot;
  for (const targetK of targets) {
    for (const family of GEN_FAMILIES) {
      const fam = FAMILIES.find((f) => f.family === family);
      // A family with one setting (p-less: no parameter) runs once per T.
      if (fam.values.length === 1 && targetK !== targets[0]) continue;
      const s = settingFor(family, targetK);
      combos.push({ family, param: fam.param, value: s.value, T, targetK, sweepMeanKAtT1: s.meanK, options: withTemperature(fam.options(s.value), T) });
    }
  }
}
const prompts = chunks.slice(0, CONFIG.genPrompts);
const jobs = [];
combos.forEach((c, ci) => prompts.forEach((p, pi) => jobs.push({
  ci, pi, job: { ids: p.ids.slice(0, 1 + CONFIG.promptLen), contLen: CONFIG.contLen, options: c.options, seed: CONFIG.seed + pi },
})));
log(`generation: ${combos.length} settings x ${prompts.length} prompts x ${CONFIG.contLen} tokens (${jobs.length * (CONFIG.promptLen + CONFIG.contLen)} forward passes)`);
const genOut = await runAll('gen', jobs.map((j) => j.job), 'generation');
await pool.close();

// The human continuations of the same prompts, scored the same way. Their
// log-probabilities come from the teacher-forcing pass (the generation
// prompts are the first chunks, all teacher-forced) or, for prompts beyond
// the teacher-forced ones, are not available.
if (prompts.length > tf.humanLogp.length) throw new Error('--prompts exceeds the teacher-forced chunks');
const human = prompts.map((p, pi) => {
  const toks = p.ids.slice(1 + CONFIG.promptLen);
  return { nll: -mean(tf.humanLogp[pi]), rep4: repetition(toks, 4), d2: distinct(toks, 2), d3: distinct(toks, 3), toks };
});
const text = (toks) => { let prev = 0, s = ''; for (const t of toks) { s += tokenizer.decode(prev, t); prev = t; } return s; };
const humanSummary = {
  ppl: Math.exp(mean(human.map((h) => h.nll))), rep4: mean(human.map((h) => h.rep4)),
  distinct2: mean(human.map((h) => h.d2)), distinct3: mean(human.map((h) => h.d3)),
  example: { prompt: text(prompts[0].ids.slice(1, 1 + CONFIG.promptLen)), continuation: text(human[0].toks) },
  perPrompt: { nll: human.map((h) => h.nll), rep4: human.map((h) => h.rep4) },
};
const genPoints = combos.map((c, ci) => {
  const outs = jobs.map((j, i) => [j, genOut[i]]).filter(([j]) => j.ci === ci).map(([j, o]) => ({ pi: j.pi, ...o }));
  const nll = outs.map((o) => -mean(o.logp));
  const ks = outs.flatMap((o) => Array.from(o.ks));
  const rep = outs.map((o) => repetition(o.tokens, 4));
  const logRatio = meanSe(outs.map((o, i) => nll[i] - human[o.pi].nll));
  const repGap = meanSe(outs.map((o, i) => rep[i] - human[o.pi].rep4));
  const ppl = Math.exp(mean(nll));
  const { options, ...rest } = c;
  return {
    ...rest, meanK: mean(ks), medianK: quantile(ks, 0.5),
    ppl, pplGap: ppl - humanSummary.ppl, logPplRatio: logRatio,
    rep4: mean(rep), rep4Gap: repGap,
    distinct2: mean(outs.map((o) => distinct(o.tokens, 2))), distinct3: mean(outs.map((o) => distinct(o.tokens, 3))),
    example: text(outs[0].tokens),
    // Per prompt (in prompt order), for paired comparisons between decoders.
    perPrompt: { nll: outs.map((o, i) => [o.pi, nll[i]]).sort((x, y) => x[0] - y[0]).map(([, v]) => v), rep4: outs.map((o, i) => [o.pi, rep[i]]).sort((x, y) => x[0] - y[0]).map(([, v]) => v) },
  };
});

// --- 3. Output ------------------------------------------------------------------
const results = {
  about: 'bregman-decoders decoding-quality eval (npm run eval); see docs/quality.md',
  model: { name: 'austen-kjv-2m', vocabSize: V },
  config: { ...CONFIG, quick: QUICK, workers: WORKERS, order: "samplers: ['temperature', stage]", mix: MIX },
  elapsedSeconds: Math.round((performance.now() - t0) / 1000),
  teacherForcing: { rows: N, reference, points, matchedK: MATCH_K, matched },
  generation: { prompts: prompts.length, promptLen: CONFIG.promptLen, contLen: CONFIG.contLen, human: humanSummary, points: genPoints },
  sanity,
};
mkdirSync(new URL('eval/', OUT), { recursive: true });
writeFileSync(new URL('eval/results.json', OUT), JSON.stringify(results, null, 1) + '\n');
writeReport(results, OUT);
log(`wrote ${fileURLToPath(new URL('eval/results.json', OUT))} and the report; sanity ${sanity.pass ? 'pass' : 'FAIL'}`);
if (!sanity.pass) process.exit(1);
