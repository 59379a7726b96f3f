// The transformers.js adapter's cost at a large vocabulary: transformers.js
// generate() in Node (onnxruntime-node, CPU) on the synthetic V = 262144
// model (tools/synthetic_onnx.mjs, made if missing), per generated token:
//   greedy          transformers.js's own greedy (do_sample: false)
//   tjs top_k 40    transformers.js's own sampling (do_sample: true, top_k 40)
//   bd top-k+top-p  bregman-decoders/transformers, { top_k: 40, top_p: 0.9 }
//   bd bregman      bregman-decoders/transformers, { bregman: { alpha 1.5, lambda 1e-3 } }
//   forced row, ... transformers.js's own step after a processor that only
//                   forces a token (0 there, -Infinity elsewhere): greedy's
//                   JS argmax over V, or (do_sample, top_k 1) its TopK
//   ..., NEUTRAL_TOPK the adapter with NEUTRAL_TOPK_GENERATION_OPTIONS (do_sample:
//                   true, top_k: 1): transformers.js's TopK picks the forced token
// Each run of a configuration is a process of its own (transformers.js's
// shared helpers would otherwise be compiled for whichever configurations ran
// before); runs alternate between the configurations; medians of per-token
// time over all tokens of all runs (one interval per token). Also, per token, the
// forward pass (onnxruntime-node), the processor, and of it the time in the
// sampler's sample() (the row's copy into wasm and the chain).
// Each process first generates as many tokens unmeasured (V8 tiers up the
// wasm and the JS it runs, onnxruntime warms its threads): --tokens 96 by
// default, as the first few dozen tokens of a process run slower.
//   node bench/transformers_cost.mjs [--tokens N] [--runs R]
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AutoModelForCausalLM, Tensor, env } from '@huggingface/transformers';
import { load } from '../dist/node.mjs';
import { createLogitsProcessor, NEUTRAL_GENERATION_OPTIONS, NEUTRAL_TOPK_GENERATION_OPTIONS } from '../dist/transformers.mjs';
import { writeSyntheticModel } from '../tools/synthetic_onnx.mjs';

const args = process.argv.slice(2);
const arg = (name, d) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : d);
const tokens = arg('--tokens', 96), runs = arg('--runs', 5);
const only = args.includes('--config') ? args[args.indexOf('--config') + 1] : null;
const cache = fileURLToPath(new URL('./.cache/', import.meta.url));
if (!existsSync(`${cache}synthetic-262144/onnx/model.onnx`)) writeSyntheticModel(`${cache}synthetic-262144`);
env.allowRemoteModels = false;
env.localModelPath = cache;
const model = await AutoModelForCausalLM.from_pretrained('synthetic-262144', { dtype: 'fp32' });
const bd = await load();
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const prompt = [1n, 2n, 3n, 4n];
const inputs = () => ({
  input_ids: new Tensor('int64', BigInt64Array.from(prompt), [1, prompt.length]),
  attention_mask: new Tensor('int64', new BigInt64Array(prompt.length).fill(1n), [1, prompt.length]),
});

// The instance the processors get: its samplers' sample() calls timed (the
// row's copy into wasm and the chain), the rest of the processor's time is
// the adapter's own (checks, bookkeeping, the forced row).
let chainMs = [];
const bdTimed = Object.create(bd);
bdTimed.createSampler = (o) => {
  const s = bd.createSampler(o);
  const sample = s.sample.bind(s);
  s.sample = (row) => {
    const t0 = performance.now();
    const r = sample(row);
    chainMs.push(performance.now() - t0);
    return r;
  };
  return s;
};

// The model's forward pass timed (onnxruntime-node): the rest of a token's
// time is transformers.js's own step (logits slice, processors, sampler).
let forwardMs = [];
const forward = model.forward.bind(model);
model.forward = async (...a) => {
  const t0 = performance.now();
  const r = await forward(...a);
  forwardMs.push(performance.now() - t0);
  return r;
};

// A processor wrapped to time its calls.
function timed(processor) {
  const f = (ids, logits) => {
    const t0 = performance.now();
    const r = processor(ids, logits);
    f.ms.push(performance.now() - t0);
    return r;
  };
  f.ms = [];
  return f;
}

const configs = {
  greedy: () => ({ options: { do_sample: false } }),
  'tjs top_k 40': () => ({ options: { do_sample: true, top_k: 40, temperature: 1, top_p: 1 } }),
  'bd top-k 40 + top-p 0.9': () => {
    const p = timed(createLogitsProcessor(bdTimed, { top_k: 40, top_p: 0.9, seed: 1 }));
    return { options: { ...NEUTRAL_GENERATION_OPTIONS, logits_processor: [p] }, p };
  },
  'bd top-k 40 + top-p 0.9, NEUTRAL_TOPK': () => {
    const p = timed(createLogitsProcessor(bdTimed, { top_k: 40, top_p: 0.9, seed: 1 }));
    return { options: { ...NEUTRAL_TOPK_GENERATION_OPTIONS, logits_processor: [p] }, p };
  },
  'forced row, TopK 1': () => ({ options: { do_sample: true, top_k: 1, temperature: 1, top_p: 1, logits_processor: [(i, l) => { l.data.fill(-Infinity); l.data[7] = 0; return l; }] } }),
  'forced row, greedy': () => ({ options: { do_sample: false, logits_processor: [(i, l) => { l.data.fill(-Infinity); l.data[7] = 0; return l; }] } }),
  'bd bregman': () => {
    const p = timed(createLogitsProcessor(bdTimed, { bregman: { alpha: 1.5, lambda: 1e-3 }, seed: 1 }));
    return { options: { ...NEUTRAL_GENERATION_OPTIONS, logits_processor: [p] }, p };
  },
  'bd bregman, NEUTRAL_TOPK': () => {
    const p = timed(createLogitsProcessor(bdTimed, { bregman: { alpha: 1.5, lambda: 1e-3 }, seed: 1 }));
    return { options: { ...NEUTRAL_TOPK_GENERATION_OPTIONS, logits_processor: [p] }, p };
  },
};

// Per-token wall time: the intervals between transformers.js's streamer
// calls (one per generated token), so a load spike on a shared machine
// moves a few tokens' times, not a whole run's mean.
function intervals() {
  const at = [];
  return { at, put() { at.push(performance.now()); }, end() {} };
}

// One run of one configuration (in this process): a warm-up generate(), then
// the measured one; its per-token times and tokens.
async function runOne(name) {
  let result;
  for (let r = 0; r < 2; r++) {
    const { options, p } = configs[name]();
    chainMs = [];
    forwardMs = [];
    const streamer = intervals();
    const out = await model.generate({ ...inputs(), max_new_tokens: tokens, min_new_tokens: tokens, ...options, streamer });
    if (out.dims[1] !== prompt.length + tokens) throw new Error(`${name}: ${out.dims[1] - prompt.length} tokens`);
    // put() once for the prompt, then once per token: the first token's
    // interval holds the prompt's forward pass, left out.
    const perToken = [];
    for (let i = 2; i < streamer.at.length; i++) perToken.push(streamer.at[i] - streamer.at[i - 1]);
    result = { perToken, processor: p ? p.ms.slice(1) : [0], chain: chainMs.length ? chainMs.slice(1) : [0],
      forward: forwardMs.slice(1), sequence: out.tolist()[0].map(Number) };
  }
  return result;
}

if (only !== null) {
  console.log(JSON.stringify(await runOne(only)));
  process.exit(0);
}

const sequences = {};  // the latest run's tokens per configuration
const perToken = Object.fromEntries(Object.keys(configs).map((k) => [k, []]));
const inProcessor = Object.fromEntries(Object.keys(configs).map((k) => [k, []]));
const inChain = Object.fromEntries(Object.keys(configs).map((k) => [k, []]));
const inForward = Object.fromEntries(Object.keys(configs).map((k) => [k, []]));
const self = fileURLToPath(import.meta.url);
for (let r = 0; r < runs; r++) {
  const names = Object.keys(configs);
  if (r % 2) names.reverse();
  for (const name of names) {
    const x = JSON.parse(execFileSync(process.execPath, [self, '--config', name, '--tokens', String(tokens)], { encoding: 'utf8', maxBuffer: 1 << 26 }));
    perToken[name].push(...x.perToken);
    inProcessor[name].push(...x.processor);
    inChain[name].push(...x.chain);
    inForward[name].push(...x.forward);
    sequences[name] = x.sequence;
  }
}
// The same processor options and seed give the same tokens whichever
// transformers.js sampler picks the forced token.
for (const [a, b] of [['bd top-k 40 + top-p 0.9', 'bd top-k 40 + top-p 0.9, NEUTRAL_TOPK'], ['bd bregman', 'bd bregman, NEUTRAL_TOPK']]) {
  if (sequences[a].join() !== sequences[b].join()) throw new Error(`${a} and ${b} generated different tokens`);
}
const base = median(perToken['tjs top_k 40']);
const rows = Object.keys(configs).map((name) => ({
  config: name,
  msPerToken: +median(perToken[name]).toFixed(3),
  vsTjsTopK: +(median(perToken[name]) / base).toFixed(3),
  forwardMsPerToken: +median(inForward[name]).toFixed(3),
  restMsPerToken: +(median(perToken[name]) - median(inForward[name])).toFixed(3),
  processorMsPerToken: +median(inProcessor[name]).toFixed(3),
  chainMsPerToken: +median(inChain[name]).toFixed(3),
}));
console.log(JSON.stringify({ V: 262144, tokens, runs, node: process.version, rows }, null, 1));
