// web/model/llama2.mjs against the reference values shipped with
// models/austen-kjv-2m/ (README.md header, TRAINING.txt forward pass).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Llama2, Tokenizer, matmul, rmsnorm, softmax } from '../../web/model/llama2.mjs';
import { rng as uniform01 } from './reference.mjs';

const MODEL_DIR = new URL('../../models/austen-kjv-2m/', import.meta.url);

/** A file as a standalone ArrayBuffer (what a browser fetch() gives). */
function load(name) {
  const b = readFileSync(new URL(name, MODEL_DIR));
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
}

const modelBuf = load('model.bin');
const tokBuf = load('tokenizer.bin');

// Reference values from TRAINING.txt (float32 forward pass).
const PROMPT = 'It is a truth universally acknowledged';
const PROMPT_IDS = [1, 722, 352, 261, 1539, 348, 4023, 1161, 741, 3864];
const TOP5 = [[4032, 7.95068], [4039, 6.56489], [4043, 6.39608], [284, 5.70108], [292, 5.57051]];
const HEAD5 = [-9.35865, -1.26882, -9.33065, -9.07962, -9.31886];

function runPrompt(model, ids) {
  let logits;
  for (let pos = 0; pos < ids.length; pos++) logits = model.forward(ids[pos], pos);
  return logits.slice();
}

function argmax(a) {
  let b = 0;
  for (let i = 1; i < a.length; i++) if (a[i] > a[b]) b = i;
  return b;
}

function topK(a, k) {
  return [...a.keys()].sort((x, y) => a[y] - a[x] || x - y).slice(0, k);
}

function checkReference(logits) {
  assert.deepEqual(topK(logits, 5), TOP5.map(([id]) => id));
  for (const [id, want] of TOP5) assert.ok(Math.abs(logits[id] - want) < 1e-3, `logit[${id}] = ${logits[id]}, want ${want}`);
  HEAD5.forEach((want, i) => assert.ok(Math.abs(logits[i] - want) < 1e-3, `logit[${i}] = ${logits[i]}, want ${want}`));
}

test('config matches the model.bin header', () => {
  const m = new Llama2(modelBuf);
  const { dim, hiddenDim, nLayers, nHeads, nKvHeads, vocabSize, seqLen, sharedWeights } = m.config;
  assert.deepEqual({ dim, hiddenDim, nLayers, nHeads, nKvHeads, vocabSize, seqLen, sharedWeights },
    { dim: 192, hiddenDim: 512, nLayers: 4, nHeads: 4, nKvHeads: 4, vocabSize: 4096, seqLen: 256, sharedWeights: true });
  assert.throws(() => new Llama2(modelBuf.slice(0, modelBuf.byteLength - 4)), RangeError);
  assert.throws(() => new Llama2(modelBuf.slice(0, 20)), RangeError);
});

test('tokenizer encodes the reference prompt and decodes it back', () => {
  const tok = new Tokenizer(tokBuf, 4096);
  assert.equal(tok.vocabSize, 4096);
  const ids = tok.encode(PROMPT);
  assert.deepEqual(ids, PROMPT_IDS);
  assert.deepEqual(tok.encode(PROMPT, { bos: false }), PROMPT_IDS.slice(1));
  assert.deepEqual(tok.encode(''), [1]);
  assert.deepEqual(tok.encode('', { bos: false }), []);
  let text = '';
  for (let i = 1; i < ids.length; i++) text += tok.decode(ids[i - 1], ids[i]);
  assert.equal(text, PROMPT); // the dummy-prefix space is dropped after BOS
  assert.equal(tok.decode(722, 352), ' is');
});

test('tokenizer byte fallback round-trips non-ASCII text through decodeBytes', () => {
  const tok = new Tokenizer(tokBuf, 4096);
  // 'é' is not in the vocab: its UTF-8 bytes C3 A9 become ids 0xC3+3, 0xA9+3.
  // '£' is the one non-ASCII piece in the vocab (id 4095).
  const ids = tok.encode('café £5', { bos: false });
  assert.ok(ids.includes(0xc3 + 3) && ids.includes(0xa9 + 3), JSON.stringify(ids));
  assert.ok(ids.includes(4095), JSON.stringify(ids));
  assert.equal(tok.decode(2, 0x41 + 3), 'A');
  assert.deepEqual(tok.decodeBytes(0xc3 + 3), Uint8Array.of(0xc3));
  const td = new TextDecoder();
  let text = '';
  for (const id of ids) text += td.decode(tok.decodeBytes(id), { stream: true });
  text += td.decode();
  assert.equal(text, ' café £5');
  assert.throws(() => tok.decode(1, 4096), RangeError);
});

test('forward reproduces the reference logits after the prompt', () => {
  const m = new Llama2(modelBuf);
  checkReference(runPrompt(m, PROMPT_IDS));
});

test('a misaligned byte view takes the copying path and gives the same logits', () => {
  const bytes = new Uint8Array(modelBuf.byteLength + 1);
  bytes.set(new Uint8Array(modelBuf), 1);
  const m = new Llama2(bytes.subarray(1));
  checkReference(runPrompt(m, PROMPT_IDS));
});

test('greedy steps give valid ids and finite logits; reset() makes it deterministic', () => {
  const m = new Llama2(modelBuf);
  const { vocabSize } = m.config;
  const generate = () => {
    const out = [];
    let logits = runPrompt(m, PROMPT_IDS);
    const snapshots = [logits];
    let pos = PROMPT_IDS.length;
    for (let step = 0; step < 8; step++, pos++) {
      assert.ok(logits.every(Number.isFinite), `non-finite logit at step ${step}`);
      const next = argmax(logits);
      assert.ok(Number.isInteger(next) && next >= 0 && next < vocabSize);
      out.push(next);
      logits = m.forward(next, pos).slice();
      snapshots.push(logits);
    }
    return { out, snapshots };
  };
  const a = generate();
  assert.equal(a.out[0], 4032); // ',' is the reference top-1
  m.reset();
  const b = generate();
  assert.deepEqual(b.out, a.out);
  a.snapshots.forEach((s, i) => assert.deepEqual(b.snapshots[i], s, `logits differ at step ${i}`));
  assert.throws(() => m.forward(vocabSize, 0), RangeError);
  assert.throws(() => m.forward(1, m.config.seqLen), RangeError);
  assert.throws(() => m.forward(1, -1), RangeError);
});

/** Deterministic uniform(-1, 1) stream (reference.mjs's mulberry32). */
function rng(seed) {
  const u = uniform01(seed);
  return () => u() * 2 - 1;
}

test('matmul, rmsnorm and softmax match naive float64 on random data', () => {
  const r = rng(7);
  for (const [n, d] of [[1, 1], [3, 5], [192, 192], [193, 7], [512, 64]]) {
    const off = 11;
    const w = new Float32Array(off + n * d).map(r);
    const x = new Float32Array(n).map(r);
    const out = new Float32Array(d);
    matmul(out, x, w, n, d, off);
    for (let i = 0; i < d; i++) {
      let s = 0;
      for (let j = 0; j < n; j++) s += w[off + i * n + j] * x[j];
      assert.ok(Math.abs(out[i] - s) <= 1e-6 * (1 + Math.abs(s)), `matmul ${n}x${d} row ${i}: ${out[i]} vs ${s}`);
    }
    const g = new Float32Array(off + n).map(r);
    const y = new Float32Array(n);
    rmsnorm(y, x, g, n, off);
    let ss = 0;
    for (let j = 0; j < n; j++) ss += x[j] * x[j];
    const inv = 1 / Math.sqrt(ss / n + 1e-5);
    for (let j = 0; j < n; j++) {
      const want = g[off + j] * x[j] * inv;
      assert.ok(Math.abs(y[j] - want) <= 1e-6 * (1 + Math.abs(want)), `rmsnorm n=${n} [${j}]`);
    }
    const p = Float32Array.from(x, (v) => v * 20);
    const logits = Array.from(p);
    softmax(p, n);
    const mx = Math.max(...logits);
    const z = logits.reduce((a, v) => a + Math.exp(v - mx), 0);
    logits.forEach((v, j) => assert.ok(Math.abs(p[j] - Math.exp(v - mx) / z) <= 1e-6, `softmax n=${n} [${j}]`));
  }
});
