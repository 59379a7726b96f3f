// A CPU model of how WebLLM 0.2.86 drives a LogitProcessor, step for step as in
// node_modules/@mlc-ai/web-llm/lib/index.js (LLMChatPipeline):
//   sampleFromRawLogits: 1. logitsOnCPU.toArray() (a copy) -> processLogits -> copied back;
//     2. logit_bias added; 3. penalties over appearedTokensFreq (when any is non-neutral);
//     4. softmax(logits / max(1e-6, temperature)), then its top-p draw with one uniform;
//   commitSamplerState: processSampledToken(token); processNextToken: appearedTokensFreq += token;
//   resetGenerationRoundState (each new reply): appearedTokensFreq cleared, the processor kept;
//   resetChat: logitProcessor.resetState().
// The GPU kernels are replaced by plain float64 JS with the same meaning. Used by
// tests/js/webllm.test.mjs and, inside a Web Worker, by tests/browser/webllm.test.mjs.

export class WebLLMEngineModel {
  constructor(processor, genConfig = {}, uniform = Math.random) {
    this.processor = processor;
    this.cfg = { temperature: 1, top_p: 1, repetition_penalty: 1, frequency_penalty: 0, presence_penalty: 0, ...genConfig };
    this.appearedTokensFreq = new Map();
    this.uniform = uniform;
  }

  /** One decode step on the model's raw logits row; returns the sampled token. */
  step(rawLogits) {
    const { temperature, top_p, repetition_penalty, frequency_penalty, presence_penalty, logit_bias } = this.cfg;
    // 1. The processor sees a CPU copy; its result is copied back over the GPU row.
    let cpu = Float32Array.from(rawLogits);
    cpu = this.processor.processLogits(cpu);
    const row = Float32Array.from(cpu);
    // 2. logit_bias.
    if (logit_bias) for (const [id, b] of Object.entries(logit_bias)) row[Number(id)] += b;
    // 3. Penalties on the tokens generated so far.
    if (frequency_penalty !== 0 || presence_penalty !== 0 || repetition_penalty !== 1) {
      for (const [id, cnt] of this.appearedTokensFreq) {
        let l = row[id] - (presence_penalty + cnt * frequency_penalty);
        l = l > 0 ? l / repetition_penalty : l * repetition_penalty;
        row[id] = l;
      }
    }
    // 4. Softmax with temperature, then the top-p draw.
    const t = Math.max(1e-6, temperature);
    let max = -Infinity;
    for (const x of row) if (x > max) max = x;
    const p = new Float64Array(row.length);
    let z = 0;
    for (let i = 0; i < row.length; i++) z += (p[i] = Math.exp((row[i] - max) / t));
    const order = Array.from(p.keys()).sort((a, b) => p[b] - p[a] || a - b);
    const topP = Math.max(top_p, 1e-5);
    let mass = 0, n = 0;
    while (n < order.length && (n === 0 || mass < topP * z)) mass += p[order[n++]];
    const u = this.uniform() * mass;
    let acc = 0, token = order[n - 1];
    for (let i = 0; i < n; i++) {
      acc += p[order[i]];
      if (u < acc) { token = order[i]; break; }
    }
    // commitSamplerState, then processNextToken.
    this.processor.processSampledToken(token);
    this.appearedTokensFreq.set(token, (this.appearedTokensFreq.get(token) ?? 0) + 1);
    return token;
  }

  /** A new reply: WebLLM's own penalties restart, the processor keeps its state. */
  newRound() { this.appearedTokensFreq.clear(); }

  resetChat() {
    this.appearedTokensFreq.clear();
    this.processor.resetState();
  }
}

/** Runs `steps` tokens autoregressively: `forward(token, pos)` gives the next logits row. */
export function generate(engine, forward, prompt, steps) {
  let logits;
  for (let pos = 0; pos < prompt.length; pos++) logits = forward(prompt[pos], pos);
  const out = [];
  for (let i = 0; i < steps; i++) {
    const token = engine.step(logits);
    out.push(token);
    logits = forward(token, prompt.length + i);
  }
  return out;
}
