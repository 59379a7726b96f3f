// Type-checked by tsc in webllm.test.mjs: the adapters' hand-written typings against
// the real @mlc-ai/web-llm typings (LogitProcessor, MLCEngineConfig) and the README's usage.
import { load } from 'bregman-decoders';
import { createLogitsProcessor, NEUTRAL_GENERATION_OPTIONS as TJS_NEUTRAL, type StepRecord } from 'bregman-decoders/transformers';
import { BregmanLogitProcessor, NEUTRAL_GENERATION_OPTIONS } from 'bregman-decoders/webllm';
import { LogitsProcessorList } from '@huggingface/transformers';
import type { LogitProcessor, MLCEngineConfig, ChatCompletionRequest } from '@mlc-ai/web-llm';

async function main(): Promise<void> {
  const bd = await load();
  // WebLLM: the class is a LogitProcessor, and goes in the engine config's registry.
  const processor: LogitProcessor = new BregmanLogitProcessor(bd, { min_p: 0.05, bregman: { alpha: 1.5, lambda: 1e-3 }, seed: 7 });
  const config: MLCEngineConfig = { logitProcessorRegistry: new Map([['my-model', processor]]) };
  const request: ChatCompletionRequest = { messages: [{ role: 'user', content: 'hi' }], ...NEUTRAL_GENERATION_OPTIONS };
  const row: Float32Array = processor.processLogits(new Float32Array(8));
  processor.processSampledToken(3);
  processor.resetState();
  const p = new BregmanLogitProcessor(bd);
  const k: number = p.steps.length + p.sampler.step;
  // @ts-expect-error options are this library's (snake_case, known names)
  new BregmanLogitProcessor(bd, { topP: 0.9 });
  // @ts-expect-error WebLLM hands a Float32Array
  p.processLogits([1, 2, 3]);

  // transformers.js: a callable processor over Tensor-like {data, dims}.
  const tp = createLogitsProcessor(bd, [{ top_p: 0.9, seed: 1 }, { top_p: 0.9, seed: 2 }], { acceptPrompt: false });
  const out = tp([[1n, 2n], [3n, 4n]], { data: new Float32Array(8), dims: [2, 4] });
  const first: StepRecord = tp.steps[0][0];
  const neutral: false = TJS_NEUTRAL.do_sample;
  // transformers.js's typings want a LogitsProcessorList (the README's array works at run time).
  const list = new LogitsProcessorList();
  list.push(tp);
  tp.reset();
  tp.dispose();
  // @ts-expect-error history belongs to the stateless calls
  createLogitsProcessor(bd, { history: [1, 2] });
  void [config, request, row, k, out, first, neutral];
}
void main;
