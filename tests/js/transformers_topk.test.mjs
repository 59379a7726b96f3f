// NEUTRAL_TOPK_GENERATION_OPTIONS: transformers.js picks the forced token by
// its top-k draw (do_sample: true, top_k: 1) instead of its greedy argmax;
// the tokens are those of NEUTRAL_GENERATION_OPTIONS for every option set and
// seed, in a real generate() on the repository's ONNX model (batch of two).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { AutoModelForCausalLM, Tensor, env } from '@huggingface/transformers';
import { load } from 'bregman-decoders';
import { createLogitsProcessor, NEUTRAL_GENERATION_OPTIONS, NEUTRAL_TOPK_GENERATION_OPTIONS } from 'bregman-decoders/transformers';

env.allowRemoteModels = false;
env.localModelPath = fileURLToPath(new URL('../../models/', import.meta.url));
const model = await AutoModelForCausalLM.from_pretrained('austen-kjv-2m', { dtype: 'fp32' });
const bd = await load();
const PROMPTS = [[1, 722, 352, 261, 1539], [1, 300, 500, 700, 900]];
const inputs = () => new Tensor('int64', BigInt64Array.from(PROMPTS.flat().map(BigInt)), [2, 5]);

test('NEUTRAL_TOPK_GENERATION_OPTIONS: the same tokens as NEUTRAL_GENERATION_OPTIONS', async () => {
  assert.deepEqual({ ...NEUTRAL_TOPK_GENERATION_OPTIONS }, { ...NEUTRAL_GENERATION_OPTIONS, do_sample: true, top_k: 1 });
  assert.ok(Object.isFrozen(NEUTRAL_TOPK_GENERATION_OPTIONS));
  for (const options of [{ top_k: 40, top_p: 0.9, seed: 1 }, { min_p: 0.05, temperature: 1.3, seed: 2 },
    { bregman: { alpha: 1.5, lambda: 1e-3 }, seed: 3 }, { typical_p: 0.9, repetition_penalty: 1.2, seed: 4 }]) {
    const out = [];
    for (const neutral of [NEUTRAL_GENERATION_OPTIONS, NEUTRAL_TOPK_GENERATION_OPTIONS]) {
      const processor = createLogitsProcessor(bd, options);
      const seq = await model.generate({ inputs: inputs(), max_new_tokens: 24, ...neutral, logits_processor: [processor] });
      out.push({ tokens: seq.tolist().map((r) => r.map(Number)), drawn: processor.steps.map((r) => r.map((s) => s.token)) });
      processor.dispose();
    }
    assert.deepEqual(out[1].tokens, out[0].tokens, JSON.stringify(options));
    // transformers.js appended the processor's tokens: the draws are the sequences' tails.
    for (let r = 0; r < 2; r++) assert.deepEqual(out[0].tokens[r].slice(5), out[0].drawn[r]);
    assert.ok(new Set(out[0].drawn[0]).size > 3, JSON.stringify(options));
  }
});
