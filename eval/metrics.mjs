// The eval's measures, as plain functions over numbers and token arrays.
// Probabilities of the model are float64 softmaxes of the float32 logits.

/** Share of the model's p mixed into q when scoring the true token, so a cut token costs log(MIX * p) instead of -Infinity. */
export const MIX = 0.01;

/**
 * Per-row facts at temperature T: the max logit, log Z_T = log sum exp((l - max) / T),
 * the entropy of p_T, and log p_T of the true token.
 */
export function rowStats(logits, y, T) {
  let m = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > m) m = logits[i];
  let z = 0, zx = 0;
  for (let i = 0; i < logits.length; i++) {
    const x = (logits[i] - m) / T;
    const e = Math.exp(x);
    z += e;
    zx += e * x;
  }
  const logZ = Math.log(z);
  return { max: m, logZ, entropy: logZ - zx / z, logpTrue: (logits[y] - m) / T - logZ };
}

/** p_T(id) from rowStats. */
export function probAt(logits, st, id, T) {
  return Math.exp((logits[id] - st.max) / T - st.logZ);
}

export function mean(xs) {
  let s = 0;
  for (const x of xs) s += x;
  return xs.length ? s / xs.length : NaN;
}

/** The q-quantile (0..1) by linear interpolation between order statistics. */
export function quantile(xs, q) {
  const s = Float64Array.from(xs).sort();
  if (!s.length) return NaN;
  const h = (s.length - 1) * q;
  const lo = Math.floor(h), hi = Math.ceil(h);
  return s[lo] + (s[hi] - s[lo]) * (h - lo);
}

/** Mean and standard error of the mean. */
export function meanSe(xs) {
  const n = xs.length;
  const mu = mean(xs);
  let v = 0;
  for (const x of xs) v += (x - mu) ** 2;
  return { mean: mu, se: n > 1 ? Math.sqrt(v / (n - 1) / n) : NaN };
}

/** Average ranks (ties share the mean rank). */
function ranks(xs) {
  const idx = Array.from(xs, (_, i) => i).sort((a, b) => xs[a] - xs[b]);
  const r = new Float64Array(xs.length);
  for (let i = 0; i < idx.length;) {
    let j = i;
    while (j + 1 < idx.length && xs[idx[j + 1]] === xs[idx[i]]) j++;
    for (let t = i; t <= j; t++) r[idx[t]] = (i + j) / 2;
    i = j + 1;
  }
  return r;
}

export function pearson(a, b) {
  const ma = mean(a), mb = mean(b);
  let sab = 0, saa = 0, sbb = 0;
  for (let i = 0; i < a.length; i++) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) ** 2;
    sbb += (b[i] - mb) ** 2;
  }
  return saa > 0 && sbb > 0 ? sab / Math.sqrt(saa * sbb) : null;
}

/** Spearman's rank correlation (null when one side is constant, e.g. top-k's k). */
export function spearman(a, b) {
  return pearson(ranks(a), ranks(b));
}

/** Share of repeated n-grams within one token sequence: 1 - distinct / total. */
export function repetition(tokens, n = 4) {
  const total = tokens.length - n + 1;
  if (total <= 0) return 0;
  return 1 - distinctCount(tokens, n) / total;
}

/** distinct-n within one sequence: distinct n-grams / n-grams. */
export function distinct(tokens, n) {
  const total = tokens.length - n + 1;
  return total > 0 ? distinctCount(tokens, n) / total : 0;
}

function distinctCount(tokens, n) {
  const seen = new Set();
  for (let i = 0; i + n <= tokens.length; i++) seen.add(Array.prototype.slice.call(tokens, i, i + n).join(','));
  return seen.size;
}

/**
 * A family's metric at a chosen mean k, by linear interpolation in log k
 * between its sweep points; null outside the swept range.
 */
export function atMeanK(points, key, k) {
  const pts = points.filter((p) => Number.isFinite(p[key])).sort((a, b) => a.meanK - b.meanK);
  for (let i = 0; i + 1 < pts.length; i++) {
    const a = pts[i], b = pts[i + 1];
    if (k >= a.meanK && k <= b.meanK) {
      if (b.meanK === a.meanK) return a[key];
      const t = (Math.log(k) - Math.log(a.meanK)) / (Math.log(b.meanK) - Math.log(a.meanK));
      return a[key] + t * (b[key] - a[key]);
    }
  }
  return null;
}
