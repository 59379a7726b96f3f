// The package's draw equals its plain-JS twin (tests/js/draw_twin.mjs) on
// rows built to put the uniform within about one float ulp of a CDF
// boundary: the arithmetic is the documented one, bit for bit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../dist/node.mjs';
import { boundaryRow, drawTwin, uniformDraw } from './draw_twin.mjs';

const bd = await load();

export function boundaryCases(steps) {
  const splits = [100, 256, 300, 512, 777, 999];
  return Array.from({ length: steps }, (_, step) => {
    const temperature = step % 3 === 0 ? 1 : 0.7;
    const u = uniformDraw(9, step);
    const { row, gap } = boundaryRow(1000, splits[step % 6], temperature, u);
    return { step, temperature, u, row, gap, want: drawTwin(row, temperature, u) };
  });
}

test('draws next to a CDF boundary equal the float-exact twin', () => {
  const cases = boundaryCases(300);
  let worst = 0;
  for (const c of cases) {
    worst = Math.max(worst, c.gap);
    const got = bd.sample(c.row, { seed: 9, step: c.step, temperature: c.temperature }).token;
    assert.equal(got, c.want, `step ${c.step}`);
  }
  console.log(`# 300 boundary rows; largest distance of u to the boundary ${worst.toExponential(2)} of Z`);
  assert.ok(worst < 1e-6);
});
