// Bit-identical draws in Chromium: 10^4 steps of mixed stateful chains (the
// row nudged every step) give the same tokens in Chromium as in Node, and rows
// built to put the uniform within about one float ulp of a CDF boundary draw
// the token of the float-exact JS twin (tests/js/draw_twin.mjs) in both.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../dist/node.mjs';
import { llmRow, rng } from '../js/reference.mjs';
import { boundaryRow, drawTwin, uniformDraw } from '../js/draw_twin.mjs';
import { launchChromium } from './chromium.mjs';
import { startServer } from './server.mjs';

let server, url, chrome, page;

before(async () => {
  ({ server, url } = await startServer());
  chrome = await launchChromium();
  page = await chrome.context.newPage();
  await page.goto(`${url}/tests/browser/page.html`);
  await page.waitForFunction(() => window.bdReady !== undefined);
  await page.evaluate(() => window.bdReady);
});

after(async () => {
  await chrome?.close();
  server?.close();
});

const STEPS = 10000;
const CONFIGS = [
  { seed: 31, temperature: 0.8, top_k: 40, top_p: 0.95, min_p: 0.02 },
  { seed: 32, repetition_penalty: 1.3, frequency_penalty: 0.2, penalty_last_n: 32, top_k: 100 },
  { seed: 33, typical_p: 0.9, xtc_probability: 0.5, xtc_threshold: 0.05, temperature: 0.9 },
  { seed: 34, top_p: 0.9, temperature: 3 },
  { seed: 35 },
  { seed: 36, bregman: { divergence: 'primal', alpha: 1.5, lambda: 2e-3 }, top_k: 200 },
];

// Runs in Node and (as source) in the page: every chain over STEPS rows.
function runChains(bd, base, configs, steps) {
  const row = new Float32Array(base.length);
  return configs.map((c) => {
    const s = bd.createSampler(c);
    const tokens = new Array(steps);
    for (let t = 0; t < steps; t++) {
      for (let i = 0; i < row.length; i++) {
        const k = (Math.imul(i, 2654435761) + Math.imul(t, 40503)) >>> 0;
        row[i] = base[i] + Math.fround(Math.fround(0.25 * ((k >>> 7) % 17)) / 17);
      }
      tokens[t] = s.sample(row).token;
    }
    s.dispose();
    return tokens;
  });
}

test(`stateful mixed chains: the same ${STEPS} tokens in Node and in Chromium`, async () => {
  const node = await load();
  const base = llmRow(1200, rng(8), 0.9);
  const want = runChains(node, base, CONFIGS, STEPS);
  const got = await page.evaluate(async ({ base, configs, steps, src }) => {
    const { bd } = await window.bdReady;
    const run = new Function(`return (${src})`)();
    return run(bd, new Float32Array(base), configs, steps);
  }, { base: Array.from(base), configs: CONFIGS, steps: STEPS, src: runChains.toString() });
  assert.deepEqual(got, want);
  console.log(`# ${CONFIGS.length * STEPS} tokens identical in Node and Chromium`);
  node.dispose();
});

test('rows with the uniform at a CDF boundary: Node, Chromium and the twin draw the same token', async () => {
  const node = await load();
  const splits = [100, 256, 300, 512, 777, 999];
  const cases = Array.from({ length: 300 }, (_, step) => {
    const temperature = step % 3 === 0 ? 1 : 0.7;
    const u = uniformDraw(9, step);
    const { row } = boundaryRow(1000, splits[step % 6], temperature, u);
    return { step, temperature, row: Array.from(row), want: drawTwin(row, temperature, u) };
  });
  const inNode = cases.map((c) =>
    node.sample(new Float32Array(c.row), { seed: 9, step: c.step, temperature: c.temperature }).token);
  const inChromium = await page.evaluate(async (cases) => {
    const { bd } = await window.bdReady;
    return cases.map((c) => bd.sample(new Float32Array(c.row), { seed: 9, step: c.step, temperature: c.temperature }).token);
  }, cases);
  assert.deepEqual(inNode, cases.map((c) => c.want));
  assert.deepEqual(inChromium, inNode);
  node.dispose();
});
