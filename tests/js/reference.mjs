// Float64 reference of the documented chain, in plain JS with a full sort:
// the oracle the package is checked against in Node and in Chromium. Shares
// no code with the package.

// Candidate ids sorted by (logit desc, id asc); -Infinity excluded.
export function sortedIds(logits) {
  const ids = [];
  for (let i = 0; i < logits.length; i++) if (logits[i] !== -Infinity) ids.push(i);
  ids.sort((a, b) => (logits[b] - logits[a]) || (a - b));
  return ids;
}

export function softmaxOf(logits, ids, t = 1) {
  let max = -Infinity;
  for (const i of ids) max = Math.max(max, logits[i] / t);
  const p = ids.map((i) => Math.exp(logits[i] / t - max));
  const z = p.reduce((s, x) => s + x, 0);
  return p.map((x) => x / z);
}

// temperature, top_k, top_p, min_p, min_keep in llama.cpp's order
// (truncations first, then temperature).
export function chain(logits, o = {}) {
  let ids = sortedIds(logits);
  const t = o.temperature ?? 1;
  if (t === 0) return { ids: [ids[0]], probs: [1] };
  const keepMin = Math.max(o.min_keep ?? 1, 1);
  if (o.top_k) ids = ids.slice(0, Math.max(o.top_k, keepMin));
  if (o.top_p !== undefined && o.top_p < 1) {
    const p = softmaxOf(logits, ids);
    let cum = 0;
    for (let i = 0; i < ids.length; i++) {
      cum += p[i];
      if (cum >= o.top_p * (1 - 1e-6) && i + 1 >= keepMin) { ids = ids.slice(0, i + 1); break; }
    }
  }
  if (o.min_p) {
    const p = softmaxOf(logits, ids);
    let kept = ids.filter((_, i) => p[i] >= o.min_p * p[0] * (1 - 1e-9));
    if (kept.length < keepMin) kept = ids.slice(0, keepMin);
    ids = kept;
  }
  return { ids, probs: softmaxOf(logits, ids, t) };
}

// A deterministic PRNG for test rows (mulberry32).
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// LLM-shaped logits: a Zipf head (exponent s) over noise, ranks shuffled.
export function llmRow(v, rand, s = 1.1) {
  const row = new Float32Array(v);
  const ids = Array.from({ length: v }, (_, i) => i);
  for (let i = v - 1; i > 0; i--) { const j = Math.floor(rand() * (i + 1)); [ids[i], ids[j]] = [ids[j], ids[i]]; }
  for (let r = 0; r < v; r++) row[ids[r]] = -s * Math.log(r + 1) + 0.3 * (rand() - 0.5);
  return row;
}

// Compares a decode() result with a reference distribution; returns an error
// string or null. Ties in the reference order are checked exactly.
export function compareDist(got, want, tol = 1e-6) {
  if (got.k !== want.ids.length) return `k ${got.k} != ${want.ids.length}`;
  let sum = 0;
  for (let i = 0; i < got.k; i++) {
    if (got.ids[i] !== want.ids[i]) return `ids[${i}] ${got.ids[i]} != ${want.ids[i]}`;
    if (Math.abs(got.probs[i] - want.probs[i]) > tol) return `probs[${i}] ${got.probs[i]} != ${want.probs[i]}`;
    sum += got.probs[i];
  }
  if (Math.abs(sum - 1) > 1e-6) return `probs sum to ${sum}`;
  return null;
}

// The golden vectors as (logits, options, expected) cases: logits = log p
// (-Infinity for p = 0), expected ids/probs in the package's order.
export function goldenCases(golden) {
  const cases = [];
  for (const g of golden) {
    const logits = Float32Array.from(g.p, (x) => (x > 0 ? Math.log(x) : -Infinity));
    for (const s of g.solutions) {
      // Adaptive dual needs alpha > 1 at the API (the spec's binding rule).
      if (g.mode === 'dual' && g.alpha <= 1) continue;
      const order = g.p.map((_, i) => i).filter((i) => s.q[i] > 0)
        .sort((a, b) => (s.q[b] - s.q[a]) || (a - b));
      cases.push({
        name: `${g.p_name} ${g.mode} alpha=${g.alpha} lambda=${s.lambda}`,
        logits,
        options: { bregman: { divergence: g.mode, alpha: g.alpha, lambda: s.lambda } },
        k: s.k, ids: order, probs: order.map((i) => s.q[i]), objective: s.objective,
      });
    }
  }
  return cases;
}
