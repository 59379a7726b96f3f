// Module Web Worker for tests/browser/webllm.test.mjs: what a WebLLM worker script
// does (WebWorkerMLCEngineHandler + setLogitProcessorRegistry with a loaded
// BregmanLogitProcessor), then the processor is driven in WebLLM's call order
// (tests/js/webllm_engine.mjs) over the real model's rows, inside the worker.
import { load } from '/dist/index.mjs';
import { BregmanLogitProcessor } from '/dist/webllm.mjs';
import { WebWorkerMLCEngineHandler } from '/node_modules/@mlc-ai/web-llm/lib/index.js';
import { Llama2 } from '/web/model/llama2.mjs';
import { rng } from '/tests/js/reference.mjs';
import { WebLLMEngineModel, generate } from '/tests/js/webllm_engine.mjs';

const ready = (async () => {
  const bd = await load();
  const weights = await (await fetch('/models/austen-kjv-2m/model.bin')).arrayBuffer();
  return { bd, weights };
})();

self.onmessage = async ({ data: { id, options, genConfig, prompt, steps } }) => {
  try {
    const { bd, weights } = await ready;
    const handler = new WebWorkerMLCEngineHandler();
    handler.setLogitProcessorRegistry(new Map([['austen-kjv-2m', new BregmanLogitProcessor(bd, options)]]));
    const processor = handler.engine.logitProcessorRegistry.get('austen-kjv-2m');
    const model = new Llama2(weights);
    const engine = new WebLLMEngineModel(processor, genConfig, rng(99));
    const tokens = generate(engine, (t, pos) => model.forward(t, pos).slice(), prompt, steps);
    const records = processor.steps.slice();
    engine.resetChat();
    const model2 = new Llama2(weights);
    const again = generate(engine, (t, pos) => model2.forward(t, pos).slice(), prompt, steps);
    processor.dispose();
    self.postMessage({ id, tokens, records, again, inWorker: typeof WorkerGlobalScope !== 'undefined', target: bd.target });
  } catch (e) {
    self.postMessage({ id, error: String(e && e.stack || e) });
  }
};
