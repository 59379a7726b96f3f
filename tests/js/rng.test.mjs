// The JS uniform draw (web/src/rng.js, the one JS definition: the WebGPU
// decoder and the tests' draw twin use it) equals UniformDraw of src/rng.h
// bit for bit. The pinned values are src/rng.h's UniformDraw(seed, step),
// printed by a native program with %.17g (exact for a double), over seeds and
// steps at the 32- and 64-bit edges.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../dist/node.mjs';
import { uniformDraw } from '../../web/src/rng.js';

const PINNED = [
  ['0x0', '0x0', 0.57448639765572762],
  ['0x0', '0x1', 0.84866868682480867],
  ['0x0', '0x2', 0.47685003689051042],
  ['0x0', '0x3e8', 0.51205501114090579],
  ['0x0', '0xffffffff', 0.13789662527387947],
  ['0x0', '0x100000000', 0.066816644009485837],
  ['0x0', '0xfffffffffffffffe', 0.56297201094636939],
  ['0x0', '0xffffffffffffffff', 0.51309203872285858],
  ['0x1', '0x0', 0.56311759882726919],
  ['0x1', '0x1', 0.73292711869044103],
  ['0x1', '0x2', 0.38490719452693845],
  ['0x1', '0x3e8', 0.67648617990650362],
  ['0x1', '0xffffffff', 0.4404670023410282],
  ['0x1', '0x100000000', 0.40360585045910691],
  ['0x1', '0xfffffffffffffffe', 0.51158628060880851],
  ['0x1', '0xffffffffffffffff', 0.51485268618588909],
  ['0x9', '0x0', 0.73277313937451827],
  ['0x9', '0x1', 0.96991965165194804],
  ['0x9', '0x2', 0.31057179172098059],
  ['0x9', '0x3e8', 0.15250596744323985],
  ['0x9', '0xffffffff', 0.034305965361292934],
  ['0x9', '0x100000000', 0.60955135335938249],
  ['0x9', '0xfffffffffffffffe', 0.76204404871888087],
  ['0x9', '0xffffffffffffffff', 0.51553598938748779],
  ['0x4d', '0x0', 0.85480942956982453],
  ['0x4d', '0x1', 0.47632427643376907],
  ['0x4d', '0x2', 0.92175804876963474],
  ['0x4d', '0x3e8', 0.22310257554854274],
  ['0x4d', '0xffffffff', 0.48654504938382903],
  ['0x4d', '0x100000000', 0.36270574910172859],
  ['0x4d', '0xfffffffffffffffe', 0.48509082857137265],
  ['0x4d', '0xffffffffffffffff', 0.14484846987513122],
  ['0x6a09e667f3bcc909', '0x0', 0.88331080821364261],
  ['0x6a09e667f3bcc909', '0x1', 0.43152799704850997],
  ['0x6a09e667f3bcc909', '0x2', 0.026433771592597743],
  ['0x6a09e667f3bcc909', '0x3e8', 0.17569250689332405],
  ['0x6a09e667f3bcc909', '0xffffffff', 0.74577950941055471],
  ['0x6a09e667f3bcc909', '0x100000000', 0.27357846347706083],
  ['0x6a09e667f3bcc909', '0xfffffffffffffffe', 0.20076011277725214],
  ['0x6a09e667f3bcc909', '0xffffffffffffffff', 0],
  ['0xffffffffffffffff', '0x0', 0.8826712747023614],
  ['0xffffffffffffffff', '0x1', 0.29707701854778767],
  ['0xffffffffffffffff', '0x2', 0.9317040631756266],
  ['0xffffffffffffffff', '0x3e8', 0.99326216493967845],
  ['0xffffffffffffffff', '0xffffffff', 0.60859606557749912],
  ['0xffffffffffffffff', '0x100000000', 0.65356175916738979],
  ['0xffffffffffffffff', '0xfffffffffffffffe', 0.088211712470715686],
  ['0xffffffffffffffff', '0xffffffffffffffff', 0.56511637185961916],
  ['0x8000000000000000', '0x0', 0.25586071612118277],
  ['0x8000000000000000', '0x1', 0.26328429054881641],
  ['0x8000000000000000', '0x2', 0.90365546454431522],
  ['0x8000000000000000', '0x3e8', 0.062970951951914489],
  ['0x8000000000000000', '0xffffffff', 0.47768666848593611],
  ['0x8000000000000000', '0x100000000', 0.70527544249733787],
  ['0x8000000000000000', '0xfffffffffffffffe', 0.57594217562537187],
  ['0x8000000000000000', '0xffffffffffffffff', 0.97933008513800512],
  ['0x7048860ddf79', '0x0', 0.90681939098744568],
  ['0x7048860ddf79', '0x1', 0.64598166693776715],
  ['0x7048860ddf79', '0x2', 0.87665877294463435],
  ['0x7048860ddf79', '0x3e8', 0.72787447001647154],
  ['0x7048860ddf79', '0xffffffff', 0.13104531690535537],
  ['0x7048860ddf79', '0x100000000', 0.80759509108597005],
  ['0x7048860ddf79', '0xfffffffffffffffe', 0.53117189090590711],
  ['0x7048860ddf79', '0xffffffffffffffff', 0.031403517203103193],
];

test('uniformDraw equals src/rng.h UniformDraw bit for bit (pinned values)', () => {
  for (const [seed, step, want] of PINNED) {
    assert.equal(uniformDraw(BigInt(seed), BigInt(step)), want, `seed ${seed} step ${step}`);
  }
});

test('uniformDraw takes safe integers and bigints alike', () => {
  for (const [seed, step] of [[0, 0], [9, 17], [77, 199], [2 ** 53 - 1, 2 ** 40]]) {
    assert.equal(uniformDraw(seed, step), uniformDraw(BigInt(seed), BigInt(step)));
  }
});

test('uniformDraw is the draw of the wasm module', async () => {
  const bd = await load();
  try {
    // Equal logits, no truncation: the draw is the first i with (i + 1) / V > u.
    const V = 1000, row = new Float32Array(V);
    for (let step = 0; step < 200; step++) {
      const u = uniformDraw(77, step);
      const t = bd.sample(row, { seed: 77, step }).token;
      assert.ok(Math.abs(t - Math.floor(u * V)) <= 1, `step ${step}: token ${t}, u ${u}`);
    }
  } finally {
    bd.dispose();
  }
});
