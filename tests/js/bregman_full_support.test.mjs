// Bregman keeping every candidate (lambda 0): nothing is dropped, so q = p and
// the objective is 0. The full support is solved with the kept mass 1
// (src/bregman/decode.cc, PerK::KeptMass and solve_final), not 1 - (the kept
// mass in float64): that rounding (~1e-16) is left over at k = n unless the
// row's probabilities sum to exactly 1 (a flat row of 16 384 does, one of
// 14 000 does not), and spread as if dropped it gives a nonzero objective
// and, at a large alpha, a remainder per token (1e-16 / k)^(alpha - 1) below
// the double range, which sends the solve to the slow scalar log-scale path
// (docs/bregman.md, "Speed", "Extreme alphas"). Flat rows of 14 000 and
// 40 000 are such rows.
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
