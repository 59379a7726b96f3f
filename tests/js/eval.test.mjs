// npm run eval as an end-to-end test: the --quick smoke run (its own sanity
// facts must pass and its results.json must have the full shape), and the
// eval's sanity facts re-checked here on real next-token rows of the model
// against independent float64 computations:
//   - primal = dual at alpha = 2, both equal to the float64 argmin of
//     1/2 [(1 - s_k)^2 / k + sum_{i > k} p_i^2] + lambda k with q_i = p_i + (1 - s_k) / k;
//   - Bregman alpha = 1 with k fixed = top-k = p / s_k over the k most probable;
//   - every decoded q sums to 1 and keeps p's rank order (a top prefix of p,
//     except typical).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from '../../dist/node.mjs';
import { heldoutDocs, loadModel, makeChunks } from '../../eval/data.mjs';
import { FAMILIES, GEN_FAMILIES, PAPER_DEFAULTS } from '../../eval/decoders.mjs';
import { renderReport } from '../../eval/report.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const bd = await load();

// --- Real rows: teacher forcing over two held-out chunks ------------------------
const { model, tokenizer } = loadModel();
const V = model.config.vocabSize;
const rows = [];
for (const { ids } of makeChunks(tokenizer, heldoutDocs(), { count: 2, promptLen: 8, contLen: 24 })) {
  model.reset();
  for (let pos = 0; pos + 1 < ids.length; pos++) {
    const logits = model.forward(ids[pos], pos);
    if (pos >= 8 && pos % 2 === 0) rows.push(Float32Array.from(logits));
  }
}

/** float64 softmax(logits / T), token ids sorted most probable first (ties: lower id). */
function sortedP(logits, T) {
  let m = -Infinity;
  for (const l of logits) m = Math.max(m, l);
  const p = Array.from(logits, (l) => Math.exp((l - m) / T));
  const z = p.reduce((a, b) => a + b, 0);
  const order = p.map((_, i) => i).sort((a, b) => p[b] - p[a] || a - b);
  return { order, p: order.map((i) => p[i] / z) };
}

/** The float64 alpha = 2 decode: the smallest minimiser k of the objective, and q. */
function alpha2Oracle({ order, p }, lambda) {
  const n = p.length;
  const tail = new Float64Array(n + 1);          // tail[k] = sum_{i >= k} p_i^2
  for (let i = n - 1; i >= 0; i--) tail[i] = tail[i + 1] + p[i] * p[i];
  let s = 0, best = Infinity, bestK = 0;
  const cost = [];
  for (let k = 1; k <= n; k++) {
    s += p[k - 1];
    const c = 0.5 * ((1 - s) ** 2 / k + tail[k]) + lambda * k;
    cost[k] = c;
    if (c < best) { best = c; bestK = k; }
  }
  let sk = 0;
  for (let i = 0; i < bestK; i++) sk += p[i];
  return { k: bestK, ids: order.slice(0, bestK), q: p.slice(0, bestK).map((x) => x + (1 - sk) / bestK), cost };
}

function assertClose(got, ids, q, tol, what) {
  assert.deepEqual(Array.from(got.ids), ids, `${what}: support`);
  for (let j = 0; j < q.length; j++) assert.ok(Math.abs(got.probs[j] - q[j]) <= tol, `${what}: q[${j}] ${got.probs[j]} vs ${q[j]}`);
}

test('real rows: primal and dual coincide at alpha 2 and equal the float64 argmin', () => {
  assert.ok(rows.length >= 20);
  let compared = 0;
  for (const T of [1, 1.5]) {
    for (const row of rows) {
      const sp = sortedP(row, T);
      for (const lambda of [0.1, 1e-2, 1e-3, 1e-4, 1e-5]) {
        const want = alpha2Oracle(sp, lambda);
        const opts = (divergence) => ({ samplers: ['temperature', 'bregman'], temperature: T, bregman: { divergence, alpha: 2, lambda } });
        const primal = bd.decode(row, opts('primal')), dual = bd.decode(row, opts('dual'));
        assert.equal(primal.k, dual.k);
        assert.deepEqual(Array.from(primal.ids), Array.from(dual.ids));
        for (let j = 0; j < primal.k; j++) assert.ok(Math.abs(primal.probs[j] - dual.probs[j]) <= 1e-7);
        if (primal.k !== want.k) {
          // Only a float near-tie of the objective may pick another k.
          assert.ok(Math.abs(want.cost[primal.k] - want.cost[want.k]) <= 1e-12, `T ${T} lambda ${lambda}: k ${primal.k} vs ${want.k}`);
          continue;
        }
        assertClose(primal, want.ids, want.q, 1e-6, `alpha 2, T ${T}, lambda ${lambda}`);
        compared++;
      }
    }
  }
  assert.ok(compared > 150, `${compared} exact comparisons`);
});

test('real rows: Bregman alpha 1 with fixed k is top-k (float64 p / s_k)', () => {
  for (const T of [1, 1.5]) {
    for (const row of rows) {
      const { order, p } = sortedP(row, T);
      for (const k of [1, 2, 7, 40, 300]) {
        const sk = p.slice(0, k).reduce((a, b) => a + b, 0);
        const want = p.slice(0, k).map((x) => x / sk);
        const breg = bd.decode(row, { samplers: ['temperature', 'bregman'], temperature: T, bregman: { divergence: 'primal', alpha: 1, k } });
        const topk = bd.decode(row, { samplers: ['temperature', 'top_k'], temperature: T, top_k: k });
        assertClose(breg, order.slice(0, k), want, 1e-6, `bregman alpha 1 k ${k}`);
        assertClose(topk, order.slice(0, k), want, 1e-6, `top_k ${k}`);
      }
    }
  }
});

test('real rows: every decoder\'s q sums to 1 and keeps the rank order of p', () => {
  for (const T of [1, 1.5]) {
    for (const row of rows) {
      const { order, p } = sortedP(row, T);
      const rank = new Int32Array(V);
      order.forEach((id, r) => { rank[id] = r; });
      for (const fam of FAMILIES) {
        for (const value of [fam.values[1], fam.values[Math.floor(fam.values.length / 2)], fam.values.at(-2)]) {
          const d = bd.decode(row, { ...fam.options(value), temperature: T });
          const sum = Array.from(d.probs).reduce((a, b) => a + b, 0);
          assert.ok(Math.abs(sum - 1) < 1e-5, `${fam.family} ${value}: sum ${sum}`);
          const ranks = Array.from(d.ids, (id) => rank[id]);
          for (let j = 1; j < d.k; j++) {
            assert.ok(ranks[j] > ranks[j - 1], `${fam.family} ${value}: kept tokens out of p's order`);
            assert.ok(d.probs[j] <= d.probs[j - 1] || p[ranks[j]] === p[ranks[j - 1]], `${fam.family} ${value}: q not monotone in p`);
          }
          if (fam.family !== 'typical') assert.equal(ranks[d.k - 1], d.k - 1, `${fam.family} ${value}: not a top prefix`);
        }
      }
    }
  }
});

test('npm run eval --quick: sanity facts pass and results.json has every point', () => {
  const out = mkdtempSync(join(tmpdir(), 'bd-eval-'));
  try {
    const r = spawnSync(process.execPath, ['eval/run.mjs', '--quick', '--out', out], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const res = JSON.parse(readFileSync(join(out, 'eval/results.json'), 'utf8'));
    assert.equal(res.sanity.pass, true);
    assert.ok(res.sanity.sums.decodes > 1000 && res.sanity.primalDualAlpha2.pairs > 100 && res.sanity.alpha1FixedKIsTopK.pairs > 100);
    const tf = res.teacherForcing;
    assert.ok(tf.rows >= 40);
    for (const T of res.config.tfTemperatures) {
      for (const fam of FAMILIES) {
        const pts = tf.points.filter((p) => p.T === T && p.family === fam.family);
        assert.deepEqual(pts.map((p) => p.value), fam.values, `${fam.family} at T ${T}`);
        for (const p of pts) {
          assert.ok(p.meanK >= 1 && p.meanK <= V && p.medianK >= 1 && p.kP10 <= p.kP90);
          assert.ok(p.coverage >= 0 && p.coverage <= 1 && p.keptMass > 0 && p.keptMass <= 1 + 1e-9);
          assert.ok(Number.isFinite(p.score) && p.score <= 0);
          assert.equal(p.meanKByEntropyQuartile.length, 4);
        }
      }
      // top-k's k is its parameter; coverage and kept mass grow with it.
      const topk = tf.points.filter((p) => p.T === T && p.family === 'top-k');
      for (const p of topk) assert.equal(p.meanK, p.value);
      for (let i = 1; i < topk.length; i++) {
        assert.ok(topk[i].coverage >= topk[i - 1].coverage && topk[i].keptMass >= topk[i - 1].keptMass);
      }
      // Mixing in p means no decoder scores below log(mix) + log p(y) on average.
      for (const p of tf.points.filter((q) => q.T === T)) assert.ok(p.score >= Math.log(res.config.mix) + tf.reference[T].score - 1e-9);
    }
    const g = res.generation;
    for (const T of res.config.genTemperatures) {
      for (const family of ['pure sampling', ...GEN_FAMILIES, ...PAPER_DEFAULTS.map((d) => d.family)]) {
        const p = g.points.find((q) => q.T === T && q.family === family);
        assert.ok(p, `${family} at T ${T}`);
        assert.ok(p.ppl > 1 && p.rep4 >= 0 && p.rep4 <= 1 && p.distinct2 > 0 && p.distinct3 <= 1 && p.meanK >= 1);
        assert.ok(Number.isFinite(p.logPplRatio.mean) && Number.isFinite(p.rep4Gap.mean));
        assert.equal(typeof p.example, 'string');
      }
      assert.equal(g.points.find((q) => q.T === T && q.family === 'top-k').medianK, g.points.find((q) => q.T === T && q.family === 'top-k').value);
    }
    assert.ok(g.human.ppl > 1);
    for (const f of ['quality_coverage.svg', 'quality_score.svg', 'quality_generation.svg']) {
      const svg = readFileSync(join(out, 'docs/figures', f), 'utf8');
      assert.match(svg, /^<svg[^]*<\/svg>\n$/);
      assert.ok(svg.includes('<polyline') || svg.includes('<circle'));
    }
    assert.ok(existsSync(join(out, 'notes/quality_results.md')));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('the committed full run: complete, passing, and its tables and figures are what results.json gives', () => {
  const res = JSON.parse(readFileSync(join(ROOT, 'eval/results.json'), 'utf8'));
  assert.equal(res.config.quick, false);
  assert.equal(res.sanity.pass, true);
  assert.ok(res.teacherForcing.rows >= 1000 && res.generation.prompts >= 20 && res.generation.contLen >= 64);
  assert.deepEqual(res.config.tfTemperatures, [1, 1.5]);
  assert.deepEqual(res.config.genTemperatures, [1, 1.5, 2]);
  for (const T of res.config.tfTemperatures) {
    for (const fam of FAMILIES) {
      const pts = res.teacherForcing.points.filter((p) => p.T === T && p.family === fam.family);
      assert.deepEqual(pts.map((p) => p.value), fam.values);
    }
    // The Bregman sweeps span mean k from about 1 to a few hundred at T = 1.
    if (T === 1) {
      for (const fam of FAMILIES.filter((f) => f.bregman)) {
        const ks = res.teacherForcing.points.filter((p) => p.T === T && p.family === fam.family).map((p) => p.meanK);
        assert.ok(Math.min(...ks) < 2 && Math.max(...ks) > 150, `${fam.family}: mean k ${Math.min(...ks)}..${Math.max(...ks)}`);
      }
    }
  }
  for (const T of res.config.genTemperatures) {
    for (const family of ['pure sampling', ...GEN_FAMILIES, ...PAPER_DEFAULTS.map((d) => d.family)]) {
      assert.ok(res.generation.points.some((q) => q.T === T && q.family === family), `generation: ${family} at T ${T}`);
    }
  }
  for (const p of res.generation.points) assert.equal(p.perPrompt.nll.length, res.generation.prompts);
  for (const [path, text] of Object.entries(renderReport(res))) {
    assert.equal(readFileSync(join(ROOT, path), 'utf8'), text, `${path} is stale: run node eval/report.mjs`);
  }
});
