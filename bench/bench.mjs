// `npm run bench`: side by side in one run, on the same rows, in Node and in
// headless Chromium: this library (wasm; and the native build, through
// build/bd_native_bench), transformers.js 4.x's sampler (onnxruntime-node's
// TopK in Node, onnxruntime-web's WASM TopK in Chromium), plain JS (heap
// top-k, full-sort top-p) and the floor (copy + one SIMD max pass; copy + max
// + sum of exp). Writes bench/results.json (or --out FILE) and prints the
// medians; `node bench/chart.mjs` draws docs/bench.svg and the README table.
//
//   npm run bench                      V in {32000, 128256, 151936, 262144}
//   npm run bench -- --quick           V = 32000, fewer repetitions
//   npm run bench -- --sizes 4096 --out /tmp/r.json --no-browser --no-native
//   npm run bench -- --sizes 262144 --mask-only --out /tmp/m.json   (allowed_mask's cost alone)
//   npm run bench -- --sizes 262144 --only p_less,top_h_0.4 --no-browser  (those configurations only)
//
// Every configuration is also checked: the library's greedy / top-k 1 token
// equals plain JS's; its kept set (decode()) equals plain JS's for the
// truncations; transformers.js's top-k token and set equal plain JS's for the
// same uniform; the native build, Node and Chromium draw the same token for
// the same seed. A failed check makes the run exit 1 (after writing results).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir, cpus, platform, release, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from '../dist/node.mjs';
import * as suite from './suite.mjs';
import { TARGET_V } from './targets.mjs';
import { startServer } from './server.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const value = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
};
const quick = flag('--quick');
if (value('--only', null)) suite.setConfigFilter(value('--only', null).split(','));
const SIZES = value('--sizes', quick ? '32000' : '32000,128256,151936,262144').split(',').map(Number);
const OUT = value('--out', join(root, 'bench', 'results.json'));
const timing = quick ? { maxReps: 5, budgetMs: 40 } : { maxReps: 15, budgetMs: 300 };
const KINDS = ['llm', 'flat'];

const log = (m) => process.stderr.write(`${m}\n`);
const phases = {};
let phaseStart = performance.now();
// The machine's 1-minute load average at the start and at the end of each
// phase: a run that overlapped other work says so (the README prints it).
const loads = { start: Number(loadavg()[0].toFixed(2)) };
const phase = (name) => {
  const t = performance.now();
  phases[name] = Number(((t - phaseStart) / 1000).toFixed(1));
  loads[name] = Number(loadavg()[0].toFixed(2));
  phaseStart = t;
};
const sh = (cmd, a) => { try { return execFileSync(cmd, a, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(); } catch { return null; } };

// ---- rows (written once, read by every side)
const rowsDir = mkdtempSync(join(tmpdir(), 'bd-bench-'));
const rows = [];
for (const V of SIZES) {
  for (const kind of KINDS) {
    const id = `${kind}-${V}`;
    const data = suite.makeRow(kind, V, V * 7 + (kind === 'flat' ? 1 : 0));
    const file = `${id}.f32`;
    writeFileSync(join(rowsDir, file), Buffer.from(data.buffer));
    rows.push({ id, kind, V, file, data });
  }
}

const bd = await load();

// ---- allowed_mask's cost at TARGET_V (bench/targets.mjs): each MASK_CONFIGS
// call plain and with a mask, round-robin. --mask-only runs this alone.
const PAIRED_ROUNDS = quick ? 5 : 21;
const pairedRows = rows.filter((r) => r.V === TARGET_V);
const maskPaired = {};
const maskChecks = [];
for (const row of pairedRows) {
  log(`allowed_mask rounds ${row.id} ...`);
  const m = await suite.maskRatios({ bd, row, rounds: PAIRED_ROUNDS });
  maskPaired[row.id] = m.ratios;
  maskChecks.push(...m.checks);
}
if (flag('--mask-only')) {
  const configs = suite.configs().map((c) => ({ id: c.id, label: c.label }));
  writeFileSync(OUT, `${JSON.stringify({ schema: 1, generated: new Date().toISOString(), configs, results: [],
    checks: maskChecks, paired: { V: TARGET_V, rounds: PAIRED_ROUNDS, mask: maskPaired } }, null, 1)}\n`);
  console.log(JSON.stringify(maskPaired, null, 1));
  const failed = maskChecks.filter((c) => !c.ok);
  console.log(`${maskChecks.length} checks, ${failed.length} failed; wrote ${OUT}`);
  process.exit(failed.length ? 1 : 0);
}
const floor = await suite.loadFloor(readFileSync(join(root, 'build-wasm/bench/floor.wasm')));
const T = await import('@huggingface/transformers');

// ---- Bregman lambdas: per row, k ~ 10, ~ 1000, >= V/2 (found once, here,
// and used by every environment). k is non-increasing in lambda. Large-k
// calls are slow, so the search walks lambda two decades at a time from 1e-2
// until it brackets the target, then bisects log10(lambda) a few times
// between the last two points: to within 25% of 10 or 1000, or into
// [V/2, 0.9 V] for the third target.
function calibrate(data, { divergence, alpha, target }) {
  const V = data.length;
  const half = target === 'half';
  const want = half ? Math.ceil(V / 2) : Math.min(target, V);
  const kAt = (e) => bd.decode(data, { bregman: { divergence, alpha, lambda: 10 ** e } }).k;
  const good = (k) => (half ? k >= want && k <= 0.9 * V : Math.abs(Math.log(k / want)) <= Math.log(1.25));
  // Bracket: k(10^lo) >= want > k(10^hi).
  let lo = -2, kLo = kAt(lo), hi, kHi;
  if (kLo >= want) {
    hi = lo; kHi = kLo;
    while (kHi >= want && hi < 8) { lo = hi; kLo = kHi; hi += 2; kHi = kAt(hi); }
    if (kHi >= want) return { lambda: 10 ** hi, k: kHi };  // cannot get below the target
  } else {
    while (kLo < want && lo > -16) { hi = lo; kHi = kLo; lo -= 2; kLo = kAt(lo); }
    if (kLo < want) return { lambda: 10 ** lo, k: kLo };  // cannot reach the target
  }
  for (let it = 0; it < 8 && !good(kLo); it++) {
    const mid = (lo + hi) / 2;
    const k = kAt(mid);
    if (k >= want) { lo = mid; kLo = k; } else { hi = mid; kHi = k; }
  }
  // k ~ target: the closer of the two ends; >= V/2: the end that reaches it.
  if (!half && Math.abs(Math.log(Math.max(kHi, 1) / want)) < Math.abs(Math.log(kLo / want))) {
    return { lambda: 10 ** hi, k: kHi };
  }
  return { lambda: 10 ** lo, k: kLo };
}
const lambdas = {};
const calibration = {};
for (const row of rows) {
  lambdas[row.id] = {};
  calibration[row.id] = {};
  for (const c of suite.configs().filter((x) => x.bregman)) {
    const r = calibrate(row.data, c.bregman);
    lambdas[row.id][c.id] = r.lambda;
    calibration[row.id][c.id] = r;
  }
  log(`calibrated ${row.id}`);
}

phase('rows and calibration');

// ---- Node
log('node ...');
const node = await suite.runEnvironment({ env: 'node', bd, floor, T, rows, lambdas, timing, log });
const results = [...node.results];
const checks = [...node.checks, ...maskChecks];
phase('node');

// ---- the targets' ratios from interleaved rounds (bench/targets.mjs): at
// the targets' V (TARGET_V), every configuration and both floors round-robin, in Node and
// natively; each ratio the median of the rounds' own ratios.
const paired = { V: TARGET_V, rounds: PAIRED_ROUNDS, node: {}, native: {}, mask: maskPaired };
for (const row of pairedRows) {
  log(`node rounds ${row.id} ...`);
  paired.node[row.id] = await suite.pairedEnvironment({ bd, floor, row, lambdas, rounds: PAIRED_ROUNDS });
}
phase('node rounds');

// ---- native (build/bd_native_bench on the same row files and options)
const nativeBin = join(root, 'build', 'bd_native_bench');
let nativeInfo = null;
if (!flag('--no-native')) {
  if (!existsSync(nativeBin)) throw new Error(`${nativeBin} missing: run npm run build`);
  const jobs = [];
  const optionArgs = (o) => Object.entries(o).flatMap(([k, v]) => (k === 'bregman'
    ? [`bregman_divergence=${v.divergence}`, `bregman_alpha=${v.alpha}`, `bregman_lambda=${v.lambda}`]
    : [`${k}=${v}`]));
  for (const row of rows) {
    const f = join(rowsDir, row.file);
    jobs.push([f, 'floor-max', 'floor=max'], [f, 'floor-max-sum-exp', 'floor=max_sum_exp'],
      [f, 'floor-max-no-copy', 'floor=max_no_copy']);
    for (const c of suite.configs()) {
      const o = { ...suite.optionsFor(c, lambdas[row.id][c.id]), seed: suite.SEED, step: suite.STEP };
      jobs.push([f, c.id, ...optionArgs(o)]);
    }
  }
  const jobsFile = join(rowsDir, 'jobs.tsv');
  writeFileSync(jobsFile, jobs.map((j) => j.join('\t')).join('\n') + '\n');
  // bd_native_bench's output lines (one JSON object each), parsed.
  const runNative = (argv) => new Promise((resolve, reject) => {
    const p = spawn(nativeBin, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    let s = '';
    p.stdout.on('data', (d) => { s += d; });
    p.on('close', (code) => (code === 0
      ? resolve(s.trim().split('\n').map((line) => JSON.parse(line)))
      : reject(new Error(`bd_native_bench ${argv.join(' ')} exited ${code}`))));
  });
  log('native ...');
  const out = await runNative([jobsFile, String(timing.maxReps), String(timing.budgetMs)]);
  const byFile = Object.fromEntries(rows.map((r) => [join(rowsDir, r.file), r.id]));
  for (const j of out) {
    const isFloor = j.config.startsWith('floor-');
    results.push({ env: 'native', impl: isFloor ? j.config : 'native', row: byFile[j.row],
      config: isFloor ? null : j.config, ms: j.ms, reps: j.reps, batch: 1,
      ...(isFloor ? {} : { token: j.token, k: j.k }) });
  }
  phase('native');
  // The same round-robin natively: the paired rows' floors and configs.
  const pairedFiles = new Set(pairedRows.map((r) => join(rowsDir, r.file)));
  const roundJobs = jobs.filter((j) => pairedFiles.has(j[0]) && j[1] !== 'floor-max-no-copy');
  if (roundJobs.length > 0) {
    const roundsFile = join(rowsDir, 'rounds.tsv');
    writeFileSync(roundsFile, roundJobs.map((j) => j.join('\t')).join('\n') + '\n');
    log('native rounds ...');
    const times = {};
    for (const j of await runNative(['--rounds', String(PAIRED_ROUNDS), roundsFile])) {
      (times[byFile[j.row]] ??= {})[j.config] = j.times;
    }
    for (const [rowId, t] of Object.entries(times)) paired.native[rowId] = suite.pairedRatios(t);
    phase('native rounds');
  }
  nativeInfo = { binary: 'build/bd_native_bench', dispatch: 'Highway dynamic dispatch (best target of this CPU)' };
}

// ---- Chromium (bench/page.html, driven by playwright-core)
let chromiumInfo = null;
if (!flag('--no-browser')) {
  // The browser tests' launcher: the same flags (no GPU), a fresh profile.
  const { launchChromium } = await import('../tests/browser/chromium.mjs');
  const { server, url } = await startServer(rowsDir);
  const browser = await launchChromium();
  const { context } = browser;
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e));
    const wasmFiles = new Set();
    page.on('response', (resp) => {
      if (resp.url().endsWith('.wasm')) wasmFiles.add(new URL(resp.url()).pathname);
      if (resp.status() >= 400 && !resp.url().endsWith('/favicon.ico')) errors.push(`${resp.status()} ${resp.url()}`);
    });
    page.on('console', (m) => log(`chromium: ${m.text()}`));
    await page.goto(`${url}/bench/page.html`);
    await page.waitForFunction(() => window.benchReady !== undefined);
    log('chromium ...');
    const r = await page.evaluate((p) => window.runBench(p),
      { rows: rows.map(({ id, kind, V, file }) => ({ id, kind, V, file })), lambdas, timing });
    if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
    results.push(...r.results);
    checks.push(...r.checks);
    phase('chromium');
    chromiumInfo = { version: context.browser()?.version() ?? sh('/usr/bin/chromium', ['--version']),
      userAgent: r.ua, target: r.target, crossOriginIsolated: r.isolated, ort: r.ort, wasmFiles: [...wasmFiles] };
  } finally {
    await browser.close();
    server.close();
  }
}
rmSync(rowsDir, { recursive: true, force: true });

// ---- cross-environment checks: the same seed draws the same token
for (const row of rows) {
  for (const c of suite.configs()) {
    const got = results.filter((r) => r.row === row.id && r.config === c.id && (r.impl === 'wasm' || r.impl === 'native'));
    const tokens = got.map((r) => `${r.env}:${r.token}`);
    checks.push({ env: 'all', row: row.id, config: c.id, impl: got.map((r) => r.env).join('+'), ref: 'node',
      what: 'token across environments', ok: new Set(got.map((r) => r.token)).size === 1 && got.length >= 1,
      got: tokens.join(' '), want: got[0]?.token });
    if (c.bregman) {
      // The timed call kept the k the lambda was calibrated for, everywhere.
      const want = calibration[row.id][c.id].k;
      checks.push({ env: 'all', row: row.id, config: c.id, impl: got.map((r) => r.env).join('+'), ref: 'calibration',
        what: 'Bregman k', ok: got.every((r) => r.k === want), got: got.map((r) => `${r.env}:${r.k}`).join(' '), want });
    }
  }
}

const cpuModel = (readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) ?? [])[1] ?? cpus()[0]?.model;
const report = {
  schema: 1,
  generated: new Date().toISOString(),
  quick,
  commit: sh('git', ['-C', root, 'rev-parse', 'HEAD']),
  dirty: (sh('git', ['-C', root, 'status', '--porcelain', '--untracked-files=no']) ?? '') !== '',
  machine: { nproc: Number(sh('nproc', []) ?? cpus().length), cpu: cpuModel, os: `${platform()} ${release()}`,
    node: process.version, chromium: chromiumInfo?.version ?? null, load: loads },
  library: { target: bd.target, native: nativeInfo, chromium: chromiumInfo },
  zeroCopy: typeof bd.inputBuffer === 'function',
  transformers: { version: T.env?.version ?? null,
    onnxruntime_node: JSON.parse(readFileSync(join(root, 'node_modules/onnxruntime-node/package.json'), 'utf8')).version,
    measured: 'GreedySampler: max(logits.data) (a JS loop). MultinomialSampler (do_sample, top_k): topk(logits, k) ' +
      '(an ONNX TopK session: onnxruntime-node in Node, onnxruntime-web WASM, 1 thread, in Chromium), ' +
      'softmax(v.data), a linear-scan weighted index. top_p / min_p / typical_p are not applied by 4.3.2.' },
  seconds: phases,
  timing: { ...timing, statistic: 'median ms per call; calls batched to >= 1 ms per sample; >= 3 warm-up calls and ~20 ms; calls over 1 s timed once' },
  seed: suite.SEED, step: suite.STEP,
  rows: rows.map(({ id, kind, V }) => ({ id, kind, V })),
  configs: suite.configs().map((c) => ({ id: c.id, label: c.label, options: c.options, bregman: c.bregman ?? null,
    plain_js: !!c.js, transformers_js: c.tjs !== null })),
  calibration,
  // Issue 9's ratios at V = TARGET_V from interleaved rounds (bench/targets.mjs
  // judges on these): paired[env][row][config][floor] = the median over
  // rounds of the config's ms over the floor's ms in the same round.
  paired: { ...paired, statistic: 'median over rounds of (config ms / floor ms in the same round); each round times a batch (>= ~1 ms) of every floor and configuration in turn' },
  results,
  checks,
};
// One result / check per line: readable, and small diffs between runs.
const json = (v) => JSON.stringify(v);
const body = Object.entries(report).map(([k, v]) => (Array.isArray(v) && (k === 'results' || k === 'checks')
  ? `${json(k)}: [\n${v.map((x) => `  ${json(x)}`).join(',\n')}\n]`
  : `${json(k)}: ${JSON.stringify(v, null, 1).replace(/\n\s*/g, ' ')}`));
writeFileSync(OUT, `{\n${body.join(',\n')}\n}\n`);

// ---- console summary
for (const row of rows) {
  const table = {};
  for (const r of results.filter((x) => x.row === row.id)) {
    const key = r.config ?? r.impl;
    table[key] ??= {};
    table[key][`${r.env} ${r.config ? r.impl : ''}`.trim()] = Number(r.ms.toPrecision(3));
  }
  console.log(`\n${row.id} (median ms per call)`);
  console.table(table);
}
const failed = checks.filter((c) => !c.ok);
console.log(`\n${checks.length} checks, ${failed.length} failed; wrote ${OUT}`);
for (const f of failed) console.log(`FAILED ${JSON.stringify(f)}`);
process.exitCode = failed.length ? 1 : 0;
