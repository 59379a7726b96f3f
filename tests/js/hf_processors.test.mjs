// The stages that follow Hugging Face's semantics against transformers.js's
// own processors, called directly on the same rows (random, tied, with
// -Infinity, tiny V): RepetitionPenaltyLogitsProcessor (penalty_last_n: -1,
// its whole-sequence window), NoRepeatNGramLogitsProcessor, the temperature
// warper and the multinomial sampler's top-k (an ONNX TopK: exactly k, lower
// index first on ties). Edits run in both; the kept set must be the same and
// the probabilities softmax of transformers.js's logits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NoRepeatNGramLogitsProcessor, RepetitionPenaltyLogitsProcessor, TemperatureLogitsWarper, Tensor, topk,
} from '@huggingface/transformers';
import { load } from '../../dist/node.mjs';
import { rng } from './reference.mjs';

const bd = await load();

function row(rand, kind) {
  const v = kind === 'tiny' ? 1 + Math.floor(rand() * 4) : 2 + Math.floor(rand() * 40);
  const a = new Float32Array(v);
  for (let i = 0; i < v; i++) {
    a[i] = kind === 'ties' ? Math.round(4 * rand() - 2) : 6 * rand() - 3;
    if (rand() < 0.15) a[i] = -Infinity;
  }
  if (!a.some(Number.isFinite)) a[0] = 0;
  return a;
}

// Compares decode() with softmax(logits) over transformers.js's finite logits.
function same(d, logits, what) {
  const want = [];
  for (let i = 0; i < logits.length; i++) if (logits[i] !== -Infinity) want.push(i);
  assert.deepEqual(Array.from(d.ids).sort((a, b) => a - b), want, what);
  const max = Math.max(...want.map((i) => logits[i]));
  const z = want.reduce((s, i) => s + Math.exp(logits[i] - max), 0);
  for (let j = 0; j < d.k; j++) {
    const p = Math.exp(logits[d.ids[j]] - max) / z;
    assert.ok(Math.abs(d.probs[j] - p) <= 1e-5 * p + 1e-7, `${what}: p(${d.ids[j]}) ${d.probs[j]} != ${p}`);
  }
}

test('repetition penalty, no-repeat-n-gram and temperature equal transformers.js processors', () => {
  const rand = rng(17);
  for (let it = 0; it < 600; it++) {
    const logits = row(rand, ['rand', 'ties', 'tiny'][it % 3]);
    const v = logits.length;
    const alphabet = Math.min(v, 1 + Math.floor(rand() * 5));
    const history = Array.from({ length: Math.floor(rand() * 14) }, () => Math.floor(rand() * alphabet));
    const ids = [history.map(BigInt)];
    const penalty = [1.3, 0.7, 2][it % 3];
    const n = 1 + (it % 4);
    const t = [0.5, 2, 0.9][it % 3];
    const hf = new Tensor('float32', logits.slice(), [1, v]);
    new RepetitionPenaltyLogitsProcessor(penalty)(ids, hf);
    new NoRepeatNGramLogitsProcessor(n)(ids, hf);
    new TemperatureLogitsWarper(t)(ids, hf);
    const what = `case ${it}: ${JSON.stringify({ logits: Array.from(logits), history, penalty, n, t })}`;
    if (!hf.data.some((x) => x !== -Infinity)) {
      assert.throws(() => bd.decode(logits, { repetition_penalty: penalty, penalty_last_n: -1, no_repeat_ngram_size: n, history }), RangeError);
      continue;
    }
    const o = { repetition_penalty: penalty, penalty_last_n: -1, no_repeat_ngram_size: n, temperature: t, history };
    same(bd.decode(logits, o), hf.data, what);
    // The same stages on a list (after a top-k that keeps everything).
    same(bd.decode(logits, { ...o, top_k: v, samplers: ['top_k', 'penalties', 'no_repeat_ngram', 'temperature'] }), hf.data, `${what} (list)`);
  }
});

test('top_k keeps the tokens of transformers.js top-k (ties: exactly k, lower ids first)', async () => {
  const rand = rng(23);
  for (let it = 0; it < 200; it++) {
    const logits = row(rand, it % 2 ? 'ties' : 'tiny');
    const finite = logits.filter(Number.isFinite).length;
    const k = 1 + Math.floor(rand() * finite);
    const [, i] = await topk(new Tensor('float32', logits.slice(), [1, logits.length]), k);
    const want = Array.from(i.data, Number).sort((a, b) => a - b);
    const got = Array.from(bd.decode(logits, { top_k: k }).ids).sort((a, b) => a - b);
    assert.deepEqual(got, want, JSON.stringify({ logits: Array.from(logits), k }));
  }
});
