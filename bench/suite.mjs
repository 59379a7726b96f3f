// The part of `npm run bench` that runs unchanged in Node and in headless
// Chromium: the rows, the configurations, the plain-JS samplers, the
// transformers.js sampler, the floor, the timing loop and the checks that
// every implementation computed the same decoder. bench/bench.mjs drives it
// in Node and through bench/page.html in Chromium.

// ---------------------------------------------------------------- rows

// Rows come from mulberry32 (tests/js/reference.mjs); the uniform of (seed, step)
// is the library's (src/rng.h), restated in tests/js/draw_twin.mjs, so the plain-JS
// and transformers.js draws use the same u as the library.
import { rng } from '../tests/js/reference.mjs';
import { uniformDraw } from '../tests/js/draw_twin.mjs';

export { rng, uniformDraw };

function gaussian(rand) {
  const u = 1 - rand();  // (0, 1]
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

export const HEAD = 64;  // Zipf head size of an LLM-shaped row

// 'llm': a Gaussian background (sd 1.5) with a Zipf head (exponent 1.1) of
// HEAD tokens at random ids, lifted so the head holds about 80% of the mass
// (a confident step with a long, thin tail, as real LLM rows have).
// 'flat': the Gaussian background alone (an uncertain step: every truncation
// has to keep a large share of the vocabulary).
export function makeRow(kind, V, seed) {
  const rand = rng(seed);
  const row = new Float32Array(V);
  for (let i = 0; i < V; i++) row[i] = (kind === 'flat' ? 1 : 1.5) * gaussian(rand);
  if (kind === 'llm') {
    // Tail mass ~ V e^{sd^2 / 2}; head mass e^c sum_r r^-1.1: choose c so the
    // head holds 4x the tail.
    const h = Math.min(HEAD, V);
    let zipf = 0;
    for (let r = 1; r <= h; r++) zipf += r ** -1.1;
    const c = Math.log(4 * V * Math.exp(1.125) / zipf);
    for (let r = 0; r < h; r++) row[Math.floor(rand() * V)] = c - 1.1 * Math.log(r + 1);
  }
  return row;
}

// ---------------------------------------------------------------- the draw

export const SEED = 1234;
export const STEP = 7;

// ---------------------------------------------------------------- plain JS

// What a JS runtime without this library would write. Each returns
// { token, ids } (ids: the kept set, for the checks).

function argmax(row) {
  let best = 0;
  let m = row[0];
  for (let i = 1; i < row.length; i++) if (row[i] > m) { m = row[i]; best = i; }
  return best;
}

// Top-k by a bounded min-heap of k (worst kept at the root): O(V log k).
// Order: logit descending, lower id first on ties (the library's order).
function heapTopK(row, k) {
  k = Math.min(k, row.length);
  const heap = new Int32Array(k);
  const worse = (a, b) => row[a] < row[b] || (row[a] === row[b] && a > b);
  const down = (i) => {
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let w = i;
      if (l < k && worse(heap[l], heap[w])) w = l;
      if (r < k && worse(heap[r], heap[w])) w = r;
      if (w === i) return;
      const t = heap[i]; heap[i] = heap[w]; heap[w] = t;
      i = w;
    }
  };
  for (let i = 0; i < k; i++) heap[i] = i;
  for (let i = (k >> 1) - 1; i >= 0; i--) down(i);
  for (let i = k; i < row.length; i++) {
    if (worse(heap[0], i)) { heap[0] = i; down(0); }
  }
  return Array.from(heap).sort((a, b) => row[b] - row[a] || a - b);
}

// Full sort of the ids by logit (descending, lower id first).
function sortAll(row) {
  const ids = new Int32Array(row.length);
  for (let i = 0; i < ids.length; i++) ids[i] = i;
  return ids.sort((a, b) => row[b] - row[a] || a - b);
}

// Probabilities of `ids` (renormalised over them) at temperature t.
function probsOf(row, ids, t = 1) {
  let m = -Infinity;
  for (const i of ids) if (row[i] > m) m = row[i];
  const p = new Float64Array(ids.length);
  let z = 0;
  for (let j = 0; j < ids.length; j++) z += (p[j] = Math.exp((row[ids[j]] - m) / t));
  for (let j = 0; j < p.length; j++) p[j] /= z;
  return p;
}

// Inverse CDF over ids in the given order.
function draw(ids, p, u) {
  let cum = 0;
  for (let j = 0; j < ids.length; j++) { cum += p[j]; if (cum > u) return ids[j]; }
  return ids[ids.length - 1];
}

// Smallest prefix of sorted ids (probabilities p) whose mass reaches top_p.
function nucleus(ids, p, topP) {
  let cum = 0;
  for (let j = 0; j < ids.length; j++) {
    cum += p[j];
    if (cum >= topP * (1 - 1e-6)) return ids.slice(0, j + 1);
  }
  return ids;
}

const minPKeep = (row, ids, minP) => {
  let m = -Infinity;
  for (const i of ids) if (row[i] > m) m = row[i];
  const t = m + Math.log(minP);
  return ids.filter((i) => row[i] >= t);
};

export const plainJs = {
  greedy: (row) => { const t = argmax(row); return { token: t, ids: [t] }; },
  // Softmax + inverse CDF in id order: a max pass, an exp-sum pass, a walk.
  sample: (row, u) => {
    let m = -Infinity;
    for (let i = 0; i < row.length; i++) if (row[i] > m) m = row[i];
    let z = 0;
    for (let i = 0; i < row.length; i++) z += Math.exp(row[i] - m);
    const target = u * z;
    let cum = 0;
    for (let i = 0; i < row.length; i++) { cum += Math.exp(row[i] - m); if (cum > target) return { token: i, ids: null }; }
    return { token: row.length - 1, ids: null };
  },
  topK: (k) => (row, u) => {
    const ids = heapTopK(row, k);
    return { token: draw(ids, probsOf(row, ids), u), ids };
  },
  topKTopP: (k, topP) => (row, u) => {
    const top = heapTopK(row, k);
    const ids = nucleus(top, probsOf(row, top), topP);
    return { token: draw(ids, probsOf(row, ids), u), ids };
  },
  topP: (topP) => (row, u) => {
    const all = sortAll(row);
    const ids = nucleus(all, probsOf(row, all), topP);
    return { token: draw(ids, probsOf(row, ids), u), ids };
  },
  // min-p needs no sort: one max pass, one filter pass (ids ascending).
  minP: (minP) => (row, u) => {
    let m = -Infinity;
    for (let i = 0; i < row.length; i++) if (row[i] > m) m = row[i];
    const t = m + Math.log(minP);
    const ids = [];
    for (let i = 0; i < row.length; i++) if (row[i] >= t) ids.push(i);
    return { token: draw(ids, probsOf(row, ids), u), ids };
  },
  // llama.cpp's locally typical sampling: full softmax, entropy, a full sort
  // by |-log p - H|, the shortest prefix whose mass exceeds p.
  typical: (typP) => (row, u) => {
    const all = new Int32Array(row.length);
    for (let i = 0; i < all.length; i++) all[i] = i;
    const p = probsOf(row, all);
    let h = 0;
    for (let i = 0; i < p.length; i++) if (p[i] > 0) h -= p[i] * Math.log(p[i]);
    const d = new Float64Array(p.length);
    for (let i = 0; i < p.length; i++) d[i] = Math.abs(-Math.log(p[i]) - h);
    all.sort((a, b) => d[a] - d[b] || a - b);
    let cum = 0, n = all.length;
    for (let j = 0; j < all.length; j++) {
      cum += p[all[j]];
      if (cum > typP * (1 + 1e-6)) { n = j + 1; break; }
    }
    const ids = Array.from(all.subarray(0, n));
    return { token: draw(ids, probsOf(row, ids), u), ids };
  },
  // p-less (norm: p-less-norm): a softmax, sum p^2, one filter pass.
  pLess: (norm) => (row, u) => {
    const all = new Int32Array(row.length);
    for (let i = 0; i < all.length; i++) all[i] = i;
    const p = probsOf(row, all);
    let s = 0;
    for (let i = 0; i < p.length; i++) s += p[i] * p[i];
    const cut = norm ? (row.length * s - 1) / (row.length - 1) : s;
    const ids = [];
    for (let i = 0; i < p.length; i++) if (p[i] >= cut) ids.push(i);
    return { token: draw(ids, probsOf(row, ids), u), ids };
  },
  // Top-H: a softmax and its entropy, a full sort, the walk of the prefix.
  topH: (alpha) => (row, u) => {
    const all = sortAll(row);
    const p = probsOf(row, all);
    let h = 0;
    for (let i = 0; i < p.length; i++) if (p[i] > 0) h -= p[i] * Math.log(p[i]);
    let mass = 0, plogp = 0, n = all.length;
    for (let j = 0; j < all.length; j++) {
      const m = mass + p[j];
      const q = plogp + (p[j] > 0 ? p[j] * Math.log(p[j]) : 0);
      if (j > 0 && Math.log(m) - q / m > alpha * h) { n = j; break; }
      mass = m;
      plogp = q;
    }
    const ids = all.slice(0, n);
    return { token: draw(ids, probsOf(row, ids), u), ids };
  },
  // llama.cpp's default chain: top-k 40, top-p 0.95, min-p 0.05, then T 0.8.
  chain: ({ top_k, top_p, min_p, temperature }) => (row, u) => {
    const top = heapTopK(row, top_k);
    const ids = minPKeep(row, nucleus(top, probsOf(row, top), top_p), min_p);
    return { token: draw(ids, probsOf(row, ids, temperature), u), ids };
  },
};

// ---------------------------------------------------------------- configurations

// Bregman configurations: lambda is found per row so that k is about 10,
// about 1000, or at least V/2 (bench.mjs calibrates once, in Node, and every
// environment uses the same lambda).
export const BREGMAN = [
  { divergence: 'primal', alpha: 0.5 }, { divergence: 'primal', alpha: 1.5 },
  { divergence: 'primal', alpha: 2 }, { divergence: 'dual', alpha: 1.5 },
];
export const K_TARGETS = [['k10', 10], ['k1000', 1000], ['khalf', 'half']];

export const DEFAULT_CHAIN = { top_k: 40, top_p: 0.95, min_p: 0.05, temperature: 0.8 };

// Each: id, label, options for the library; js: the plain-JS sampler (or
// null); tjs: what transformers.js does for it ('greedy', a top-k count, or
// 'all' for top_k = 0, or null where transformers.js 4.3.2 has no such
// decoder); same: how the plain JS result is checked ('token': the same token;
// 'set': the same kept set; 'cdf': the token is the draw of u from
// softmax(row) up to 1e-6 of float rounding).
// A run may time a subset of them (bench.mjs --only ID,...; the floors
// always run): setConfigFilter(ids) keeps those ids (null: every one).
let only = null;
export function setConfigFilter(ids) { only = ids ? new Set(ids) : null; }

export function configs() {
  return allConfigs().filter((c) => only === null || only.has(c.id));
}

function allConfigs() {
  const list = [
    { id: 'greedy', label: 'greedy', options: { temperature: 0 }, js: plainJs.greedy, tjs: 'greedy', same: 'token' },
    { id: 'sample', label: 'softmax sample (no truncation)', options: {}, js: plainJs.sample, tjs: 'all', same: 'cdf' },
    { id: 'top_k_1', label: 'top-k 1', options: { top_k: 1 }, js: plainJs.topK(1), tjs: 1, same: 'token' },
    { id: 'top_k_40', label: 'top-k 40', options: { top_k: 40 }, js: plainJs.topK(40), tjs: 40, same: 'set' },
    { id: 'top_k_40_top_p_0.9', label: 'top-k 40 + top-p 0.9', options: { top_k: 40, top_p: 0.9 }, js: plainJs.topKTopP(40, 0.9), tjs: null, same: 'set' },
    { id: 'top_p_0.9', label: 'top-p 0.9', options: { top_p: 0.9 }, js: plainJs.topP(0.9), tjs: null, same: 'set' },
    { id: 'min_p_0.05', label: 'min-p 0.05', options: { min_p: 0.05 }, js: plainJs.minP(0.05), tjs: null, same: 'set' },
    { id: 'typical_0.9', label: 'typical 0.9', options: { typical_p: 0.9 }, js: plainJs.typical(0.9), tjs: null, same: 'set' },
    { id: 'p_less', label: 'p-less', options: { p_less: true }, js: plainJs.pLess(false), tjs: null, same: 'set' },
    { id: 'p_less_norm', label: 'p-less-norm', options: { p_less: 'norm' }, js: plainJs.pLess(true), tjs: null, same: 'set' },
    { id: 'top_h_0.4', label: 'top-H 0.4', options: { top_h: 0.4 }, js: plainJs.topH(0.4), tjs: null, same: 'set' },
    { id: 'adaptive_p_0.3', label: 'adaptive-p target 0.3', options: { adaptive_target: 0.3 }, js: null, tjs: null, same: null },
    { id: 'default_chain', label: 'default chain (top-k 40, top-p 0.95, min-p 0.05, T 0.8)', options: { ...DEFAULT_CHAIN }, js: plainJs.chain(DEFAULT_CHAIN), tjs: null, same: 'set' },
  ];
  for (const b of BREGMAN) {
    for (const [kid, target] of K_TARGETS) {
      list.push({
        id: `bregman_${b.divergence}_${b.alpha}_${kid}`,
        label: `Bregman ${b.divergence} alpha ${b.alpha}, k ~ ${target === 'half' ? 'V/2' : target}`,
        bregman: { ...b, target }, options: null, js: null, tjs: null, same: null,
      });
    }
  }
  return list;
}

// Library options of a configuration on a row (Bregman: the calibrated lambda).
export function optionsFor(config, lambda) {
  if (!config.bregman) return config.options;
  const { divergence, alpha } = config.bregman;
  return { bregman: { divergence, alpha, lambda } };
}

// ---------------------------------------------------------------- transformers.js

// transformers.js 4.3.2 samples a row in LogitsSampler.getSampler(config):
// GreedySampler.sample is `max(logits.data)[1]` (a JS loop); the
// MultinomialSampler (do_sample) runs `topk(logits, k)` (an ONNX TopK session:
// onnxruntime-node natively, onnxruntime-web's WASM build in browsers), then
// `softmax(v.data)` and `_weightedIndex` (a linear scan with random.random()).
// The classes are not exported, so this re-states their bodies with the
// exported pieces (topk, softmax, Tensor); `rand` stands in for random.random
// so the checks can use the library's u. top_p, min_p and typical_p are not
// applied by transformers.js 4.3.2 (TopPLogitsWarper has no _call and
// _get_logits_processor leaves it out), so those configurations have no
// transformers.js entry.
export function tjsSampler(T, k) {
  if (k === 'greedy') {
    return async (tensor) => {
      const data = tensor.data;  // maths.js max(): the first maximum
      let m = data[0], idx = 0;
      for (let i = 1; i < data.length; ++i) if (data[i] > m) { m = data[i]; idx = i; }
      return { token: idx, ids: [idx] };
    };
  }
  return async (tensor, rand) => {
    const [v, i] = await T.topk(tensor, k === 'all' ? tensor.dims.at(-1) : Math.min(k, tensor.dims.at(-1)));
    const probabilities = T.softmax(v.data);
    let sum = 0;
    for (let j = 0; j < probabilities.length; ++j) sum += probabilities[j];
    let x = rand() * sum;
    let pick = probabilities.length - 1;
    for (let j = 0; j < probabilities.length; ++j) {
      x -= probabilities[j];
      if (x < 0) { pick = j; break; }
    }
    return { token: Number(i.data[pick]), ids: i.data };  // ids: BigInt64Array, converted by the checks
  };
}

// ---------------------------------------------------------------- the floor

// bench/floor (built to build-wasm/bench/floor.wasm): a standalone SIMD128
// module. The floor of a call is the copy of the row into the wasm heap (what
// every wasm sampler pays) plus one max pass, or plus max and sum of exp.
export async function loadFloor(bytes) {
  const { instance } = await WebAssembly.instantiate(bytes, {});
  const e = instance.exports;
  return {
    // The zero-copy floor: the row already sits in the module's memory.
    load(row) { new Float32Array(e.memory.buffer, e.bd_floor_buffer(row.length), row.length).set(row); },
    maxResident(n) { return e.bd_floor_max(n); },
    max(row) {
      new Float32Array(e.memory.buffer, e.bd_floor_buffer(row.length), row.length).set(row);
      return e.bd_floor_max(row.length);
    },
    maxSumExp(row) {
      new Float32Array(e.memory.buffer, e.bd_floor_buffer(row.length), row.length).set(row);
      return e.bd_floor_max_sum_exp(row.length);
    },
  };
}

// ---------------------------------------------------------------- timing

// Median milliseconds per call. Calls are timed in batches of at least
// ~1 ms (browsers coarsen performance.now()), after warm-up calls (at least
// three, and ~20 ms); at
// least 5 batches (3 for calls over 100 ms), at most maxReps, stopping once
// budgetMs is spent. A call slower than SLOW_MS is timed once (its warm-up
// call): reps = 1. The whole run has to fit in a few minutes on 2 cores.
export const SLOW_MS = 1000;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
// Calls per timed sample for a call of `single` ms: ~1 ms a sample
// (browsers coarsen performance.now()), 1 to 1000 calls.
const batchFor = (single) => Math.max(1, Math.min(1000, Math.ceil(1 / Math.max(single, 1e-4))));
export async function medianMs(fn, { maxReps, budgetMs }) {
  let t0 = performance.now();
  await fn();
  const first = performance.now() - t0;
  if (first > SLOW_MS) return { ms: first, reps: 1, batch: 1 };
  // Warm up (JIT tiers) for at least two more calls and ~20 ms.
  let single = Infinity;
  const warm = performance.now();
  for (let w = 0; w < 2 || (performance.now() - warm < 20 && w < 200); w++) {
    t0 = performance.now();
    await fn();
    single = Math.min(single, performance.now() - t0);
  }
  const batch = batchFor(single);
  const times = [];
  const start = performance.now();
  for (let r = 0; r < maxReps; r++) {
    const a = performance.now();
    for (let b = 0; b < batch; b++) await fn();
    const z = performance.now();
    times.push((z - a) / batch);
    if (r >= (single > 100 ? 2 : 4) && z - start > budgetMs) break;
  }
  return { ms: median(times), reps: times.length, batch };
}

// Round-robin timing: each round times one batch of every case in turn
// (batches of >= ~1 ms), so two cases' times from the same round saw the
// same machine: the shared machine's load drifts over seconds, and a ratio
// of two medians taken a minute apart carries that drift. Each batch
// follows one untimed call of its case, so it runs on the caches that case
// leaves, as medianMs's repeated calls do (not on the previous case's).
// Returns each case's per-call ms, round by round.
export async function roundRobin(cases, rounds) {
  const batch = [];
  for (const fn of cases) {
    await fn();
    await fn();
    const t0 = performance.now();
    await fn();
    const single = performance.now() - t0;
    batch.push(batchFor(single));
  }
  const times = cases.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let c = 0; c < cases.length; c++) {
      await cases[c]();
      const t0 = performance.now();
      for (let b = 0; b < batch[c]; b++) await cases[c]();
      times[c].push((performance.now() - t0) / batch[c]);
    }
  }
  return times;
}

// Per config, the median over rounds of its time over each floor's time in
// the same round: { [configId]: { 'floor-max': x, 'floor-max-sum-exp': y } }.
// times: { 'floor-max': [...], 'floor-max-sum-exp': [...], [configId]: [...] }.
export function pairedRatios(times) {
  const out = {};
  for (const [id, t] of Object.entries(times)) {
    if (id.startsWith('floor-')) continue;
    out[id] = {};
    for (const f of ['floor-max', 'floor-max-sum-exp']) {
      out[id][f] = Number(median(t.map((x, r) => x / times[f][r])).toFixed(4));
    }
  }
  return out;
}

// The library's configurations and the two floors on one row, round-robin
// (roundRobin): pairedRatios of the wasm calls in this environment.
export async function pairedEnvironment({ bd, floor, row, lambdas, rounds }) {
  const data = row.data;
  const ids = ['floor-max', 'floor-max-sum-exp'];
  const cases = [() => floor.max(data), () => floor.maxSumExp(data)];
  for (const c of configs()) {
    const lambda = c.bregman ? lambdas[row.id][c.id] : undefined;
    const opts = { ...optionsFor(c, lambda), seed: SEED, step: STEP };
    ids.push(c.id);
    cases.push(() => bd.sample(data, opts));
  }
  const t = await roundRobin(cases, rounds);
  return pairedRatios(Object.fromEntries(ids.map((id, i) => [id, t[i]])));
}

// ---------------------------------------------------------------- allowed_mask

// A grammar's packed token mask (XGrammar's layout: bit t % 32 of word t / 32
// set = token t allowed) allowing `share` of the V tokens, at random ids
// (seeded), always including the row's most probable token (a grammar that
// allows a share of the vocabulary rarely bans the model's favourite; the
// bench measures the mask, not a draw from a near-empty head).
export function makeMask(row, share, seed) {
  const V = row.length;
  const rand = rng(seed);
  const mask = new Uint32Array(Math.ceil(V / 32));
  for (let t = 0; t < V; t++) if (rand() < share) mask[t >>> 5] |= 1 << (t & 31);
  let best = 0;
  for (let t = 1; t < V; t++) if (row[t] > row[best]) best = t;
  mask[best >>> 5] |= 1 << (best & 31);
  return mask;
}

// The configurations and shares allowed_mask is timed with (bench/targets.mjs:
// each within 1.2x of the same call without the mask).
export const MASK_SHARES = [0.05, 0.5];
export const MASK_CONFIGS = ['greedy', 'sample', 'top_k_40', 'top_k_40_top_p_0.9', 'top_p_0.9', 'min_p_0.05',
  'default_chain'];

// allowed_mask's cost on one row: every MASK_CONFIGS configuration plain,
// and for each share with the mask, with the same set as allowed_tokens, and
// plain on the row with the disallowed logits already -Infinity (the same
// decode with no mask to apply), round-robin (roundRobin). Per configuration
// and share, the medians over rounds of each one's ms over the plain call's
// (allowed_mask, allowed_tokens) and of the mask's over the pre-masked row's
// (allowed_mask_vs_premasked) in the same round. Also checks that the mask
// and allowed_tokens draw the same token.
export async function maskRatios({ bd, row, rounds }) {
  const data = row.data;
  const byId = Object.fromEntries(configs().map((c) => [c.id, c]));
  const ids = [], cases = [], checks = [];
  // (A run filtered by --only times the mask with the configurations it keeps.)
  const timed = MASK_CONFIGS.filter((id) => byId[id] !== undefined);
  for (const id of timed) {
    const plain = { ...byId[id].options, seed: SEED, step: STEP };
    ids.push(`${id}`);
    cases.push(() => bd.sample(data, plain));
    MASK_SHARES.forEach((share, i) => {
      const allowed_mask = makeMask(data, share, row.V * 31 + i);
      const allowed_tokens = [];
      const premasked = data.slice();
      for (let t = 0; t < data.length; t++) {
        if ((allowed_mask[t >>> 5] >>> (t & 31)) & 1) allowed_tokens.push(t);
        else premasked[t] = -Infinity;
      }
      const masked = { ...plain, allowed_mask }, listed = { ...plain, allowed_tokens: Int32Array.from(allowed_tokens) };
      const a = bd.sample(data, masked), b = bd.sample(data, listed), c = bd.sample(premasked, plain);
      checks.push({ env: 'node', row: row.id, config: `${id}+allowed_mask_${share}`, impl: 'wasm', ref: 'allowed_tokens',
        what: 'token', ok: a.token === b.token && a.k === b.k && a.token === c.token, got: a.token, want: b.token });
      ids.push(`${id}|mask|${share}`, `${id}|list|${share}`, `${id}|premasked|${share}`);
      cases.push(() => bd.sample(data, masked), () => bd.sample(data, listed), () => bd.sample(premasked, plain));
    });
  }
  const t = await roundRobin(cases, rounds);
  const times = Object.fromEntries(ids.map((id, i) => [id, t[i]]));
  const ratio = (num, den) => Number(median(num.map((x, r) => x / den[r])).toFixed(4));
  const ratios = {};
  for (const id of timed) {
    ratios[id] = {};
    for (const share of MASK_SHARES) {
      const of = (kind) => times[`${id}|${kind}|${share}`];
      ratios[id][share] = { allowed_mask: ratio(of('mask'), times[id]), allowed_tokens: ratio(of('list'), times[id]),
        allowed_mask_vs_premasked: ratio(of('mask'), of('premasked')),
        plain_ms: Number(median(times[id]).toFixed(4)), mask_ms: Number(median(of('mask')).toFixed(4)),
        premasked_ms: Number(median(of('premasked')).toFixed(4)) };
    }
  }
  return { ratios, checks };
}

// ---------------------------------------------------------------- one environment

// Is `token` the inverse-CDF draw of u from softmax(row) walked in `order`
// (ids; null: id order), allowing tol for float32 exp and summation order?
function drawnWithin(row, token, u, order, tol = 1e-6) {
  let m = -Infinity;
  for (let i = 0; i < row.length; i++) if (row[i] > m) m = row[i];
  let z = 0;
  for (let i = 0; i < row.length; i++) z += Math.exp(row[i] - m);
  let cum = 0;
  for (let j = 0; j < row.length; j++) {
    const id = order ? order[j] : j;
    const next = cum + Math.exp(row[id] - m) / z;
    if (id === token) return u >= cum - tol && u < next + tol;
    cum = next;
  }
  return false;
}

const sameSet = (a, b) => {
  if (a.length !== b.length) return false;
  const s = new Set(a);
  for (const x of b) if (!s.has(x)) return false;
  return true;
};

// Runs every configuration on every row in this environment. rows: [{ id,
// kind, V, data: Float32Array }]; lambdas: { rowId: { configId: lambda } }.
// Returns { results, checks }. `log` reports progress.
export async function runEnvironment({ env, bd, floor, T, rows, lambdas, timing, log = () => {} }) {
  const results = [];
  const checks = [];
  const u = uniformDraw(SEED, STEP);
  const list = configs();
  const tjsCache = new Map();
  const tjsFor = (k) => {
    if (!tjsCache.has(k)) tjsCache.set(k, tjsSampler(T, k));
    return tjsCache.get(k);
  };
  // Warm the whole module first: V8 compiles wasm with its baseline
  // compiler and optimises hot functions in the background, so the first
  // configurations of the first row were measured partly on baseline code
  // (their Node column up to 20 % above the zero-copy column measured right
  // after). Every configuration on every row, twice, before any timing.
  for (let pass = 0; pass < 2; pass++) {
    for (const row of rows) {
      floor.max(row.data);
      floor.maxSumExp(row.data);
      for (const c of list) {
        const lambda = c.bregman ? lambdas[row.id][c.id] : undefined;
        bd.sample(row.data, { ...optionsFor(c, lambda), seed: SEED, step: STEP });
      }
    }
  }
  for (const row of rows) {
    const data = row.data;
    const put = (impl, config, t, extra = {}) =>
      results.push({ env, impl, row: row.id, config, ms: t.ms, reps: t.reps, batch: t.batch, ...extra });
    put('floor-max', null, await medianMs(() => floor.max(data), timing));
    put('floor-max-sum-exp', null, await medianMs(() => floor.maxSumExp(data), timing));
    // The floor without the copy: for a runtime that writes its logits into
    // the module's memory itself (the package's inputBuffer, where it has one).
    floor.load(data);
    put('floor-max-no-copy', null, await medianMs(() => floor.maxResident(data.length), timing));
    const zeroCopy = typeof bd.inputBuffer === 'function';
    const tensor = T ? new T.Tensor('float32', data, [data.length]) : null;
    for (const c of list) {
      const lambda = c.bregman ? lambdas[row.id][c.id] : undefined;
      const opts = { ...optionsFor(c, lambda), seed: SEED, step: STEP };
      const lib = bd.sample(data, opts);
      put('wasm', c.id, await medianMs(() => bd.sample(data, opts), timing), { token: lib.token, k: lib.k });
      if (zeroCopy) {
        // The workspace has grown by now; the view stays valid while timing.
        const view = bd.inputBuffer(data.length);
        view.set(data);
        const zc = bd.sample(view, opts);
        put('wasm-zero-copy', c.id, await medianMs(() => bd.sample(view, opts), timing), { token: zc.token, k: zc.k });
        checks.push({ env, row: row.id, config: c.id, impl: 'wasm-zero-copy', ref: 'wasm', what: 'token',
          ok: zc.token === lib.token, got: zc.token, want: lib.token });
      }
      if (c.js) {
        const ref = c.js(data, u);
        put('plain-js', c.id, await medianMs(() => c.js(data, u), timing), { token: ref.token, k: ref.ids ? ref.ids.length : data.length });
        if (c.same === 'cdf') {
          checks.push({ env, row: row.id, config: c.id, impl: 'wasm', ref: 'plain-js', what: 'cdf',
            ok: ref.token === lib.token || drawnWithin(data, lib.token, u, null), got: lib.token, want: ref.token });
        } else if (c.same === 'token') {
          checks.push({ env, row: row.id, config: c.id, impl: 'wasm', ref: 'plain-js', what: 'token',
            ok: lib.token === ref.token, got: lib.token, want: ref.token });
        } else {
          const d = bd.decode(data, opts);
          checks.push({ env, row: row.id, config: c.id, impl: 'wasm', ref: 'plain-js', what: 'set',
            ok: sameSet(Array.from(d.ids), ref.ids), got: d.k, want: ref.ids.length });
        }
        if (c.tjs !== null && T) {
          const s = tjsFor(c.tjs);
          const got = await s(tensor, () => u);
          const ids = Array.from(got.ids, Number);
          put('transformers.js', c.id, await medianMs(() => s(tensor, Math.random), timing), { token: got.token, k: ids.length });
          if (c.same === 'cdf') {
            // transformers.js walks the sorted row: the draw of u in that order.
            checks.push({ env, row: row.id, config: c.id, impl: 'transformers.js', ref: 'float64 CDF', what: 'cdf',
              ok: ids.length === data.length && drawnWithin(data, got.token, u, ids), got: got.token, want: null });
          } else {
            // Same decoder, same u, same walk order (sorted): same token and set.
            checks.push({ env, row: row.id, config: c.id, impl: 'transformers.js', ref: 'plain-js', what: 'token+set',
              ok: got.token === ref.token && sameSet(ids, ref.ids), got: got.token, want: ref.token });
          }
        }
      }
      log(`${env} ${row.id} ${c.id}`);
    }
  }
  return { results, checks };
}
