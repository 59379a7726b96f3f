// Bregman keeping every candidate (lambda 0): nothing is dropped, so q = p and
// the objective is 0. Found by a fuzz review: the dropped mass is taken as
// 1 - (the kept mass in float64), whose rounding (~1e-16) is left over at
// k = n unless the row's probabilities sum to exactly 1 (a flat row of 16 384
// does, one of 14 000 does not). That residual is spread as if it had been
// dropped: the objective comes out 2.6e-107 instead of 0, and at a large alpha
// its remainder per token, (1e-16 / k)^(alpha - 1), is below the double range,
// which sends the solve to the scalar log-scale path (docs/bregman.md, "Speed",
// "Extreme alphas"): a flat row of 14 000 at dual alpha 20 took 0.6-1.5 s per call and
// one of 40 000 at dual alpha 40 took 10 s in this review (16 384: 1-8 ms).
// The full support is now solved with the kept mass 1 (src/bregman/decode.cc,
// PerK::KeptMass and solve_final).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../dist/node.mjs';

const bd = await load();

test('lambda 0 keeps the whole support with q = p and objective 0, at any vocabulary size', () => {
  for (const V of [16384, 14000, 40000]) {
    const flat = new Float32Array(V).fill(0.25);
    for (const bregman of [{ divergence: 'dual', alpha: 20, lambda: 0 }, { divergence: 'primal', alpha: 0.7, lambda: 0 },
      { divergence: 'dual', alpha: 3.3, lambda: 0 }]) {
      const d = bd.decode(flat, { bregman });
      assert.equal(d.k, V);
      assert.equal(d.objective, 0, `V ${V} ${JSON.stringify(bregman)}: objective ${d.objective}`);
      const p = Math.fround(1 / V);  // q = p, each the float64 1/V rounded to float32
      assert.ok(d.probs.every((x) => x === p), `V ${V} ${JSON.stringify(bregman)}: q != p`);
    }
  }
});
