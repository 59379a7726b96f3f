#!/usr/bin/env node
// bregman-generate: the README's main job. Generates text with the small
// austen-kjv-2m model (a real Llama-style LM, run in JS, in models/ of this
// repository) and decodes every step with bregman-decoders, twice with the
// same seed: decoder A (default: adaptive Bregman) beside decoder B (default:
// top-k 40). Prints each continuation, the k each decoder kept per token,
// and a per-token table of the model's p against each decoder's q.
//
//   bregman-generate [--a SPEC] [--b SPEC] [--prompt TEXT] [--tokens 60]
//                    [--temperature 1] [--seed 1] [--table 10] [--show I]
//                    [--model DIR] [--json]
//   (older flags still work: --alpha --lambda --divergence set A's Bregman,
//    --compare-top-k K sets B to top-k K)
//
// SPEC: a family, an optional value after ':', then ',key=value' options:
//   bregman[:primal|dual],alpha=1.5,lambda=1e-3   (or k=8 for a fixed k)
//   top-k:40   top-p:0.9   min-p:0.05   typical:0.9
//   chain      llama.cpp's default chain (top_k 40, typical 1, top_p 0.95, min_p 0.05, temperature 0.8)
//   greedy     temperature 0
// Any other key=value is passed as a decoder option (e.g. top-p:0.9,temperature=0.7).
import { readFileSync, existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { load } from '../dist/node.mjs';
import { Llama2, Tokenizer } from '../web/model/llama2.mjs';
import { parseSpec, describe } from '../web/demo/decoders.mjs';

let a;
try {
  ({ values: a } = parseArgs({
    options: {
      a: { type: 'string' },
      b: { type: 'string' },
      prompt: { type: 'string', default: 'It is a truth universally acknowledged' },
      tokens: { type: 'string', default: '60' },
      alpha: { type: 'string', default: '1.5' },
      lambda: { type: 'string', default: '1e-3' },
      divergence: { type: 'string', default: 'primal' },
      temperature: { type: 'string', default: '1' },
      seed: { type: 'string', default: '1' },
      table: { type: 'string', default: '10' },
      show: { type: 'string' },
      model: { type: 'string' },
      json: { type: 'boolean', default: false },
      'compare-top-k': { type: 'string', default: '40' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }));
} catch (e) {
  console.error(`bregman-generate: ${e.message.replace(/\s*\n\s*/g, ' ')}`);
  process.exit(2);
}
if (a.help) {
  console.log(readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(1, 21)
    .map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(0);
}
// Counts and the seed: a whole number (Number() would take 'abc' as NaN, '' as 0).
for (const [flag, min] of [['tokens', 1], ['table', 0], ['show', 1], ['seed', 0]]) {
  if (a[flag] !== undefined && !(/^\d+$/.test(a[flag]) && Number(a[flag]) >= min &&
      Number.isSafeInteger(Number(a[flag])))) {
    console.error(`RangeError: --${flag} must be an integer >= ${min}, got '${a[flag]}'`);
    process.exit(2);
  }
}
if (!(/^\s*[-+0-9.eE]+\s*$/.test(a.temperature) && Number(a.temperature) >= 0 &&
    Number.isFinite(Number(a.temperature)))) {
  console.error(`RangeError: --temperature must be a number >= 0, got '${a.temperature}'`);
  process.exit(2);
}

const dir = a.model ?? fileURLToPath(new URL('../models/austen-kjv-2m/', import.meta.url));
if (!existsSync(`${dir}/model.bin`)) {
  console.error(`model not found in ${dir} (pass --model DIR)`);
  process.exit(2);
}
const bytes = (f) => { const b = readFileSync(`${dir}/${f}`); return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength); };
let model, tok;
try {
  model = new Llama2(bytes('model.bin'));
  tok = new Tokenizer(bytes('tokenizer.bin'), model.config.vocabSize);
} catch (e) {
  console.error(`--model ${dir}: not a model this demo reads (model.bin, tokenizer.bin): ${e.message}`);
  process.exit(2);
}
const bd = await load();

const seed = Number(a.seed);
const T = Number(a.temperature);
let specs;
try {
  specs = [
    parseSpec(a.a ?? `bregman:${a.divergence},alpha=${a.alpha},lambda=${a.lambda}`, T),
    parseSpec(a.b ?? `top-k:${a['compare-top-k']}`, T),
  ];
} catch (e) {
  console.error(`${e.name}: ${e.message}`);
  process.exit(2);
}

/** log softmax(logits / T)[id] in float64: the model's own p for the drawn token. */
function modelLogprob(logits, temperature, id) {
  if (temperature === 0) return 0;
  let mx = -Infinity;
  for (const v of logits) if (v > mx) mx = v;
  let z = 0;
  for (const v of logits) z += Math.exp((v - mx) / temperature);
  return (logits[id] - mx) / temperature - Math.log(z);
}

function generate(options) {
  const sampler = bd.createSampler({ ...options, seed, return_distribution: true });
  const ids = tok.encode(a.prompt);
  model.reset();
  let logits;
  for (let pos = 0; pos < ids.length; pos++) {
    logits = model.forward(ids[pos], pos);
    if (pos > 0) sampler.accept(ids[pos]);
  }
  const steps = [];
  const utf8 = new TextDecoder();
  let text = '';
  const t0 = performance.now();
  for (let pos = ids.length; steps.length < Number(a.tokens) && pos < model.config.seqLen; pos++) {
    const s = sampler.sample(logits);
    if (s.token === tok.eos) break;
    const piece = utf8.decode(tok.decodeBytes(s.token), { stream: true });
    // p: the model at the run's temperature (greedy: 1); q: the decoder's processed distribution.
    const pT = options.temperature === 0 ? 1 : (options.temperature ?? 1);
    steps.push({ token: s.token, piece, k: s.k, p: Math.exp(modelLogprob(logits, pT, s.token)), q: Math.exp(s.logprob),
      dist: s.distribution, logits: a.show !== undefined ? logits.slice() : undefined });
    text += piece;
    logits = model.forward(s.token, pos);
  }
  sampler.dispose();
  return { text: text + utf8.decode(), steps, ms: performance.now() - t0 };
}

let runs;
try {
  runs = specs.map((spec) => ({ spec, ...generate(spec.options) }));
} catch (e) {
  console.error(`${e.name}: ${e.message}`);
  process.exit(2);
}

const stats = (ks) => ({ mean: ks.reduce((s, x) => s + x, 0) / ks.length, min: Math.min(...ks), max: Math.max(...ks) });
if (a.json) {
  console.log(JSON.stringify({ prompt: a.prompt, seed, kernels: bd.target, runs: runs.map((r) => ({
    decoder: r.spec.label, options: r.spec.options, text: r.text,
    steps: r.steps.map(({ token, piece, k, p, q }) => ({ token, piece, k, p, q })) })) }));
  process.exit(0);
}

const show = (s) => JSON.stringify(s).slice(1, -1);
console.log(`model: austen-kjv-2m (${model.config.vocabSize} tokens, ${model.config.nLayers} layers), kernels: ${bd.target}`);
console.log(`prompt: "${a.prompt}", seed ${seed}, the same for both decoders`);
runs.forEach((r, i) => {
  const k = stats(r.steps.map((s) => s.k));
  console.log('');
  console.log(`${'AB'[i]}: ${r.spec.label}`);
  console.log(`  ${a.prompt}${r.text}`);
  console.log(`  k per token: ${r.steps.map((s) => s.k).join(' ')}`);
  console.log(`  mean k ${k.mean.toFixed(1)}, min ${k.min}, max ${k.max}; ${r.steps.length} tokens in ${r.ms.toFixed(0)} ms (model + decoding)`);
});

// Per token: the drawn token, the k kept, the model's p and the decoder's q
// for it (q/p > 1: the decoder moved mass onto it).
const rows = Math.min(Number(a.table), Math.max(...runs.map((r) => r.steps.length)));
if (rows > 0) {
  console.log('');
  console.log('per token: the drawn token, k kept, model p and decoder q of that token');
  const cell = (s) => (s ? `${show(s.piece).padEnd(12).slice(0, 12)} ${String(s.k).padStart(4)} ${s.p.toFixed(3)} ${s.q.toFixed(3)}` : ''.padEnd(30));
  console.log(`   # | A: token          k     p     q | B: token          k     p     q`);
  for (let i = 0; i < rows; i++) console.log(`${String(i + 1).padStart(4)} | ${cell(runs[0].steps[i])} | ${cell(runs[1].steps[i])}`);
  const sumLog = (r) => r.steps.reduce((acc, s) => acc + Math.log(s.p), 0) / r.steps.length;
  console.log(`mean log p of the drawn tokens (model): A ${sumLog(runs[0]).toFixed(3)}, B ${sumLog(runs[1]).toFixed(3)}`);
}

// --show I: the model's top tokens at step I of each run against that run's q.
if (a.show !== undefined) {
  const i = Number(a.show) - 1;
  runs.forEach((r, j) => {
    const s = r.steps[i];
    if (!s) return;
    const pT = r.spec.options.temperature === 0 ? 1 : (r.spec.options.temperature ?? 1);
    const q = new Map(Array.from(s.dist.ids, (id, z) => [id, s.dist.probs[z]]));
    const top = [...s.logits.keys()].sort((x, y) => s.logits[y] - s.logits[x] || x - y).slice(0, 10);
    console.log('');
    console.log(`${'AB'[j]} step ${i + 1} (drew ${show(s.piece)}, k = ${s.k}): model p vs q, the model's 10 most probable`);
    for (const id of top) {
      const p = Math.exp(modelLogprob(s.logits, pT, id));
      const qq = q.get(id) ?? 0;
      console.log(`  ${show(tok.decodeBytes(id).length ? new TextDecoder().decode(tok.decodeBytes(id)) : '').padEnd(12)} p ${p.toFixed(4)}  q ${qq.toFixed(4)}  ${'#'.repeat(Math.round(p * 40)).padEnd(20)}|${'*'.repeat(Math.round(qq * 40))}${id === s.token ? '  <- drawn' : ''}`);
    }
  });
}
