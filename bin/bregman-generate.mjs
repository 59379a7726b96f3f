#!/usr/bin/env node
// bregman-generate: the README's main job. Generates text with the small
// austen-kjv-2m model (a real Llama-style LM, run in JS) and decodes every
// step with bregman-decoders, printing the continuation and, per token, the
// adaptive k the Bregman decoder chose.
//   bregman-generate [--prompt TEXT] [--tokens 60] [--alpha 1.5] [--lambda 1e-3]
//                    [--divergence primal|dual] [--temperature 1] [--seed 1]
//                    [--model DIR] [--compare-top-k K]
// The model defaults to ../shared/models/austen-kjv-2m beside the repository.
import { readFileSync, existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { load } from '../dist/node.mjs';
import { Llama2, Tokenizer } from '../web/model/llama2.mjs';

const { values: a } = parseArgs({
  options: {
    prompt: { type: 'string', default: 'It is a truth universally acknowledged' },
    tokens: { type: 'string', default: '60' },
    alpha: { type: 'string', default: '1.5' },
    lambda: { type: 'string', default: '1e-3' },
    divergence: { type: 'string', default: 'primal' },
    temperature: { type: 'string', default: '1' },
    seed: { type: 'string', default: '1' },
    model: { type: 'string' },
    'compare-top-k': { type: 'string', default: '40' },
  },
});
const dir = a.model ?? fileURLToPath(new URL('../../shared/models/austen-kjv-2m/', import.meta.url));
if (!existsSync(`${dir}/model.bin`)) {
  console.error(`model not found in ${dir} (pass --model DIR)`);
  process.exit(2);
}
const bytes = (f) => { const b = readFileSync(`${dir}/${f}`); return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength); };
const model = new Llama2(bytes('model.bin'));
const tok = new Tokenizer(bytes('tokenizer.bin'), model.config.vocabSize);
const bd = await load();

function generate(options) {
  const sampler = bd.createSampler(options);
  const ids = tok.encode(a.prompt);
  model.reset();
  let logits;
  for (let pos = 0; pos < ids.length; pos++) {
    logits = model.forward(ids[pos], pos);
    if (pos > 0) sampler.accept(ids[pos]);
  }
  const ks = [];
  const out = [];
  const utf8 = new TextDecoder();
  let text = '';
  for (let pos = ids.length; out.length < Number(a.tokens) && pos < model.config.seqLen; pos++) {
    const s = sampler.sample(logits);
    if (s.token === tok.eos) break;
    ks.push(s.k);
    out.push(s.token);
    text += utf8.decode(tok.decodeBytes(s.token), { stream: true });
    logits = model.forward(s.token, pos);
  }
  sampler.dispose();
  return { text: text + utf8.decode(), ks };
}

const seed = Number(a.seed);
const T = Number(a.temperature);
const bregman = { divergence: a.divergence, alpha: Number(a.alpha), lambda: Number(a.lambda) };
const t0 = performance.now();
const b = generate({ seed, temperature: T, bregman });
const ms = performance.now() - t0;
const topk = generate({ seed, temperature: T, top_k: Number(a['compare-top-k']) });
const mean = (xs) => (xs.reduce((s, x) => s + x, 0) / xs.length).toFixed(1);

console.log(`model: austen-kjv-2m (${model.config.vocabSize} tokens, ${model.config.nLayers} layers), kernels: ${bd.target}`);
console.log(`prompt: "${a.prompt}"`);
console.log('');
console.log(`Bregman (${bregman.divergence}, alpha ${bregman.alpha}, lambda ${bregman.lambda}), temperature ${T}, seed ${seed}:`);
console.log(`  ${a.prompt}${b.text}`);
console.log(`  k per token: ${b.ks.join(' ')}`);
console.log(`  mean k ${mean(b.ks)}, min ${Math.min(...b.ks)}, max ${Math.max(...b.ks)}; ${b.ks.length} tokens in ${ms.toFixed(0)} ms (model + decoding)`);
console.log('');
console.log(`top-k ${a['compare-top-k']}, same seed:`);
console.log(`  ${a.prompt}${topk.text}`);
