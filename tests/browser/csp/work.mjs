// What the CSP page, its module worker and Node each run on the same rows:
// seeded draws, a stateful sampler and a decode (tests/browser/csp.test.mjs
// compares the three).
export function cspWork(bd) {
  const v = 3000;
  const logits = new Float32Array(v);
  let s = 12345;
  for (let i = 0; i < v; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    logits[i] = (s / 4294967296) * 8 - 4 - i / 600;
  }
  const draws = [];
  for (let step = 0; step < 50; step++) {
    draws.push(bd.sample(logits, { seed: 3, step, top_k: 40, top_p: 0.9 }).token);
  }
  const sampler = bd.createSampler({ seed: 5, repetition_penalty: 1.1,
    bregman: { alpha: 1.5, lambda: 1e-3 } });
  const stateful = [];
  for (let i = 0; i < 50; i++) stateful.push(sampler.sample(logits).token);
  sampler.dispose();
  const d = bd.decode(logits, { min_p: 0.05 });
  let error = 'none';
  try { bd.decode(logits, { top_p: 2 }); } catch (e) { error = e.constructor.name; }
  return { draws, stateful, ids: Array.from(d.ids), probs: Array.from(d.probs), error };
}

// Whether this realm may evaluate strings as code: false under the test's
// CSP, which shows that the policy is enforced where the package runs.
export function evalAllowed() {
  try { return new Function('return true')(); } catch { return false; }
}
