// One eval worker (worker_threads): its own model instance (one KV cache) and
// its own decoder instance. Jobs come in as messages and leave with
// transferred typed arrays; a job's result depends only on the job, never on
// which worker ran it or in what order, so the run is reproducible for any
// number of workers.
import { parentPort } from 'node:worker_threads';
import { load } from '../dist/node.mjs';
import { loadModel } from './data.mjs';
import { MIX } from './metrics.mjs';

const { model } = loadModel();
const V = model.config.vocabSize;
const bd = await load();

// Teacher forcing over one chunk: the logits rows at the continuation
// positions picked by `stride` (copies), and the model's log-probability of
// every human continuation token (float64 log-softmax at temperature 1).
function teacherForce({ ids, promptLen, stride }) {
  const first = promptLen;            // forward(ids[first]) predicts ids[first + 1], the first continuation token
  const last = ids.length - 2;
  const kept = [];
  for (let pos = first; pos <= last; pos += stride) kept.push(pos);
  const rows = new Float32Array(kept.length * V);
  const humanLogp = new Float64Array(last - first + 1);
  model.reset();
  let r = 0;
  for (let pos = 0; pos <= last; pos++) {
    const logits = model.forward(ids[pos], pos);
    if (pos < first) continue;
    humanLogp[pos - first] = logSoftmaxAt(logits, ids[pos + 1]);
    if (r < kept.length && kept[r] === pos) rows.set(logits, V * r++);
  }
  return { rows, humanLogp, positions: Int32Array.from(kept) };
}

function logSoftmaxAt(logits, id) {
  let m = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > m) m = logits[i];
  let s = 0;
  for (let i = 0; i < logits.length; i++) s += Math.exp(logits[i] - m);
  return logits[id] - m - Math.log(s);
}

// Sampling a continuation of the prompt `ids` with the package: each step's
// token, its log-probability under the model (raw_logprob: softmax of the
// untempered logits, for the perplexity of the text) and the decoder's k.
// The draw is seeded by (seed, step), so every decoder sees the same
// uniforms for the same prompt (common random numbers).
function generate({ ids, contLen, options, seed }) {
  const tokens = new Int32Array(contLen);
  const logp = new Float64Array(contLen);
  const ks = new Int32Array(contLen);
  model.reset();
  let logits;
  for (let pos = 0; pos < ids.length; pos++) logits = model.forward(ids[pos], pos);
  let pos = ids.length;
  // A stateful stage (adaptive-p's EMA) needs a sampler; its t-th draw uses
  // the same uniform as the stateless call at step t.
  const sampler = options.adaptive_target >= 0 ? bd.createSampler({ ...options, seed, logprobs: true }) : null;
  for (let t = 0; t < contLen; t++) {
    const r = sampler ? sampler.sample(logits) : bd.sample(logits, { ...options, seed, step: t, logprobs: true });
    tokens[t] = r.token;
    logp[t] = r.raw_logprob;
    ks[t] = r.k;
    if (t + 1 < contLen) logits = model.forward(r.token, pos++);
  }
  sampler?.dispose();
  return { tokens, logp, ks };
}

// The teacher-forcing rows live in SharedArrayBuffers: `rows` (N x V float32
// logits), `next` (the true next token of each row) and, per temperature, a
// float64 [max, log Z_T, entropy, log p_T(true)] per row (metrics.rowStats).
const views = (d) => ({
  rows: new Float32Array(d.rows), next: new Int32Array(d.next), stats: new Float64Array(d.stats), N: new Int32Array(d.next).length,
});

// One decoder setting over every row: k, whether the true token survived,
// the kept mass under p_T and the mixed log-score of the true token; plus
// the sanity facts of every q (sums to 1, p's rank order, top prefix).
function sweep({ data, options, T, prefix }) {
  const { rows, next, stats, N } = views(data);
  const ks = new Float64Array(N);
  const covered = new Uint8Array(N);
  const mass = new Float64Array(N);
  const score = new Float64Array(N);
  const sanity = { decodes: 0, maxSumError: 0, rankViolations: 0, prefixDecodes: 0, prefixViolations: 0 };
  for (let r = 0; r < N; r++) {
    const logits = rows.subarray(r * V, (r + 1) * V);
    const max = stats[4 * r], logZ = stats[4 * r + 1], logpTrue = stats[4 * r + 3];
    const d = bd.decode(logits, options);
    const y = next[r];
    let qy = 0, m = 0, s = 0, rankBad = false;
    for (let j = 0; j < d.k; j++) {
      const id = d.ids[j];
      m += Math.exp((logits[id] - max) / T - logZ);
      s += d.probs[j];
      if (id === y) qy = d.probs[j];
      if (j > 0) {
        const a = logits[d.ids[j - 1]], b = logits[id];
        if (b > a || (b < a && d.probs[j] > d.probs[j - 1])) rankBad = true;
      }
    }
    sanity.decodes++;
    sanity.maxSumError = Math.max(sanity.maxSumError, Math.abs(s - 1));
    if (rankBad) sanity.rankViolations++;
    if (prefix) {
      // A most-probable prefix: no token outside it has a larger logit than the smallest kept one.
      const least = logits[d.ids[d.k - 1]];
      let above = 0;
      for (let i = 0; i < V; i++) if (logits[i] > least) above++;
      sanity.prefixDecodes++;
      if (above > d.k - 1) sanity.prefixViolations++;
    }
    ks[r] = d.k;
    covered[r] = qy > 0 ? 1 : 0;
    mass[r] = m;
    score[r] = Math.log((1 - MIX) * qy + MIX * Math.exp(logpTrue));
  }
  return { ks, covered, mass, score, sanity };
}

// Two settings that must decode to the same q, on every `every`-th row.
function pair({ data, a, b, every }) {
  const { rows, N } = views(data);
  let pairs = 0, mismatches = 0, maxAbsDiff = 0;
  for (let r = 0; r < N; r += every) {
    const logits = rows.subarray(r * V, (r + 1) * V);
    const x = bd.decode(logits, a), y = bd.decode(logits, b);
    pairs++;
    let same = x.k === y.k;
    for (let j = 0; same && j < x.k; j++) {
      if (x.ids[j] !== y.ids[j]) same = false;
      else maxAbsDiff = Math.max(maxAbsDiff, Math.abs(x.probs[j] - y.probs[j]));
    }
    if (!same) mismatches++;
  }
  return { pairs, mismatches, maxAbsDiff };
}

const KINDS = { tf: teacherForce, gen: generate, sweep, pair };
parentPort.on('message', ({ id, kind, job }) => {
  try {
    const out = KINDS[kind](job);
    parentPort.postMessage({ id, out }, Object.values(out).filter(ArrayBuffer.isView).map((a) => a.buffer));
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.stack || err) });
  }
});
parentPort.postMessage({ ready: true });
