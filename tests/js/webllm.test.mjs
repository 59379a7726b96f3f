// bregman-decoders/webllm: typings checked by tsc against @mlc-ai/web-llm's own
// (LogitProcessor, MLCEngineConfig), registered in WebLLM's real engine handler,
// and driven in WebLLM's call order (tests/js/webllm_engine.mjs) over the real
// model's rows: the tokens are the library's draws whatever WebLLM applies after
// the processor, processSampledToken/resetState keep the state right.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { WebWorkerMLCEngineHandler } from '@mlc-ai/web-llm';
import { load } from 'bregman-decoders';
import { BregmanLogitProcessor, NEUTRAL_GENERATION_OPTIONS } from 'bregman-decoders/webllm';
import { Llama2 } from '../../web/model/llama2.mjs';
import { rng } from './reference.mjs';
import { WebLLMEngineModel, generate } from './webllm_engine.mjs';

const bd = await load();
const weights = readFileSync(new URL('../../models/austen-kjv-2m/model.bin', import.meta.url));
const PROMPT = [1, 722, 352, 261, 1539, 348];
const OPTIONS = [
  { min_p: 0.05, repetition_penalty: 1.3, penalty_last_n: -1, seed: 7 },
  { bregman: { divergence: 'primal', alpha: 1.5, lambda: 1e-3 }, top_k: 40, seed: 8 },
  { mirostat: 2, mirostat_tau: 4, seed: 9 },
  { top_p: 0.9, dry_multiplier: 0.8, no_repeat_ngram_size: 3, temperature: 0.8, seed: 10 },
];

function forwardOf() {
  const m = new Llama2(weights);
  return (token, pos) => m.forward(token, pos).slice();
}

/** The plain sampler's tokens over the same autoregressive rows. */
function reference(o, steps) {
  const s = bd.createSampler(o);
  const fwd = forwardOf();
  let logits;
  for (let pos = 0; pos < PROMPT.length; pos++) logits = fwd(PROMPT[pos], pos);
  const out = [];
  for (let i = 0; i < steps; i++) {
    const r = s.sample(logits);
    out.push(r);
    logits = fwd(r.token, PROMPT.length + i);
  }
  s.dispose();
  return out;
}

test('tsc: BregmanLogitProcessor is a WebLLM LogitProcessor; the adapters\' typings accept the README usage', () => {
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  const project = fileURLToPath(new URL('./adapters-typings/tsconfig.json', import.meta.url));
  const r = spawnSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('webllm_engine.mjs follows the installed WebLLM\'s order (read from its source)', () => {
  const src = readFileSync(new URL('../../node_modules/@mlc-ai/web-llm/lib/index.js', import.meta.url), 'utf8');
  const body = (head) => {
    const i = src.indexOf(head);
    assert.ok(i >= 0, `${head} in WebLLM's source`);
    return src.slice(i, src.indexOf('\n    }\n', i));
  };
  const sample = body('    sampleFromRawLogits(logitsOnGPU, genConfig) {');
  const order = ['this.logitProcessor.processLogits(', 'this.fapplyLogitBias(', 'this.fapplyPenalty(',
    'this.fsoftmaxWithTemperature(', 'this.fsampleWithTopP('].map((c) => sample.indexOf(c));
  assert.ok(order.every((x, i) => x > 0 && (i === 0 || x > order[i - 1])), `order in sampleFromRawLogits: ${order}`);
  assert.match(sample, /logitsOnCPUArray = \(this\.logitsOnCPU\.toArray\(\)\);/, 'the processor gets a CPU copy');
  assert.match(body('    commitSamplerState(sampledToken, genConfig) {'), /processSampledToken\(sampledToken\)/);
  assert.match(body('    resetChat(keepStats = false) {'), /resetState\(\)/);
  assert.match(body('    resetGenerationRoundState() {'), /appearedTokensFreq\.clear\(\)/);
});

test('registered in WebLLM\'s engine handler, it comes back as the engine\'s processor', () => {
  const processor = new BregmanLogitProcessor(bd, OPTIONS[0]);
  const handler = new WebWorkerMLCEngineHandler();
  handler.setLogitProcessorRegistry(new Map([['austen-kjv-2m', processor]]));
  assert.equal(handler.engine.logitProcessorRegistry.get('austen-kjv-2m'), processor);
  processor.dispose();
});

for (const [name, genConfig] of [
  ['neutral WebLLM options', NEUTRAL_GENERATION_OPTIONS],
  ['WebLLM\'s own temperature, top_p, penalties and a finite logit_bias', {
    temperature: 0.6, top_p: 0.5, repetition_penalty: 1.5, frequency_penalty: 0.7, presence_penalty: 0.4,
    logit_bias: { 4032: 5, 262: -3 },
  }],
]) {
  test(`in WebLLM's call order the tokens are the library's draws (${name})`, () => {
    for (const o of OPTIONS) {
      const processor = new BregmanLogitProcessor(bd, o);
      const engine = new WebLLMEngineModel(processor, genConfig, rng(99));
      const tokens = generate(engine, forwardOf(), PROMPT, 24);
      const want = reference(o, 24);
      assert.deepEqual(tokens, want.map((r) => r.token), JSON.stringify(o));
      assert.deepEqual(processor.steps, want.map(({ token, logprob, k }) => ({ token, logprob, k })));
      processor.dispose();
    }
  });
}

test('state across replies and resetChat: the processor keeps history per chat, resetState starts over', () => {
  const o = OPTIONS[0];
  const processor = new BregmanLogitProcessor(bd, o);
  const engine = new WebLLMEngineModel(processor, NEUTRAL_GENERATION_OPTIONS, rng(1));
  const first = generate(engine, forwardOf(), PROMPT, 12);
  engine.newRound();                                   // a second reply in the same chat
  const second = generate(engine, forwardOf(), PROMPT, 12);
  // The reference sampler keeps the first reply's tokens (penalties see them) and its draw counter.
  const s = bd.createSampler(o);
  const want = [];
  for (let round = 0; round < 2; round++) {
    const fwd = forwardOf();
    let logits;
    for (let pos = 0; pos < PROMPT.length; pos++) logits = fwd(PROMPT[pos], pos);
    for (let i = 0; i < 12; i++) {
      const t = s.sample(logits).token;
      want.push(t);
      logits = fwd(t, PROMPT.length + i);
    }
  }
  assert.deepEqual([...first, ...second], want);
  engine.resetChat();
  assert.equal(processor.steps.length, 0);
  assert.deepEqual(generate(engine, forwardOf(), PROMPT, 12), first, 'after resetState the first reply repeats');
  s.dispose();
  processor.dispose();
});

test('processLogits forces the drawn token in place; processSampledToken checks it or accepts history', () => {
  const processor = new BregmanLogitProcessor(bd, { temperature: 0, repetition_penalty: 2, penalty_last_n: -1 });
  const logits = new Float32Array([3, 2.5, 1, 0]);
  const out = processor.processLogits(logits);
  assert.equal(out, logits);
  assert.deepEqual(Array.from(out), [0, -Infinity, -Infinity, -Infinity]);
  assert.throws(() => processor.processSampledToken(1), /forced 0/);
  // Without a pending draw a reported token is history: token 1 is penalised (2.5 / 2 < 1)... and 0 too.
  processor.processSampledToken(0);
  processor.processSampledToken(1);
  assert.equal(processor.sampler.historyLength, 3);
  assert.deepEqual(Array.from(processor.processLogits(new Float32Array([3, 2.5, 1.6, 0]))), [-Infinity, -Infinity, 0, -Infinity]);
  processor.processSampledToken(2);
  assert.throws(() => processor.processLogits([1, 2]), TypeError);
  assert.throws(() => processor.processSampledToken(-1), RangeError);
  assert.throws(() => processor.processSampledToken('3'), TypeError);
  assert.throws(() => new BregmanLogitProcessor(null), TypeError);
  assert.throws(() => new BregmanLogitProcessor(bd, { min_p: 2 }), RangeError);
  processor.resetState();
  assert.equal(processor.sampler.historyLength, 0);
  processor.dispose();
});

test('processor contract: a token outside the forced one is a RangeError; after dispose() nothing works', () => {
  const processor = new BregmanLogitProcessor(bd, { seed: 1 });
  processor.processLogits(new Float32Array([1, 2, 3, 4]));
  // A reported id far outside the vocabulary is an out-of-range value.
  assert.throws(() => processor.processSampledToken(1e9), RangeError);
  // dispose() between processLogits and processSampledToken: the report is refused like every other call.
  const token = processor.processLogits(new Float32Array([1, 2, 3, 4])).indexOf(0);
  processor.dispose();
  processor.dispose();   // idempotent
  assert.throws(() => processor.processSampledToken(token), TypeError);
  assert.throws(() => processor.processLogits(new Float32Array(4)), TypeError);
  assert.throws(() => processor.resetState(), TypeError);
});
