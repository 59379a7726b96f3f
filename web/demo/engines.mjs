// The demo's two engines, each a generator of steps { token, k, pIds,
// pProbs, q, bytesRead } for one decoder's options:
//   js:  web/model/llama2.mjs on the CPU, the row decoded by a wasm sampler;
//   ort: the same model's ONNX export on onnxruntime-web's WebGPU execution
//        provider, logits and KV cache left on the GPU, each row decoded by
//        bregman-decoders/onnxruntime-web (a few kB read back per token).
// p (the model's own distribution) is softmax(logits / T) from the whole row
// for js; for ort the raw top 16 (T = 1) the GPU decoder reports
// (top_logprobs), since the row is never read back.

/** The model's own p = softmax(logits / T) in float64: its n most probable tokens. */
function modelHead(logits, T, n) {
  let mx = -Infinity;
  for (const v of logits) if (v > mx) mx = v;
  let z = 0;
  for (const v of logits) z += Math.exp((v - mx) / T);
  const ids = [...logits.keys()].sort((x, y) => logits[y] - logits[x] || x - y).slice(0, n);
  return { ids, probs: ids.map((id) => Math.exp((logits[id] - mx) / T) / z) };
}

const qOf = (s) => new Map(Array.from(s.distribution.ids, (id, z) => [id, s.distribution.probs[z]]));

/** The plain-JS engine: steps of `n` tokens after `ids` (the prompt). */
export function jsEngine(bd, model) {
  return {
    name: 'plain JS (llama2.mjs)',
    async *generate(ids, options, pT, n) {
      const sampler = bd.createSampler({ ...options, return_distribution: true });
      try {
        model.reset();
        let logits;
        for (let pos = 0; pos < ids.length; pos++) {
          logits = model.forward(ids[pos], pos);
          if (pos > 0) sampler.accept(ids[pos]);
        }
        for (let pos = ids.length, i = 0; i < n && pos < model.config.seqLen; pos++, i++) {
          const base = modelHead(logits, pT, 16);
          const s = sampler.sample(logits);
          yield { token: s.token, k: s.k, pIds: base.ids, pProbs: base.probs, q: qOf(s), bytesRead: null };
          logits = model.forward(s.token, pos);
        }
      } finally {
        sampler.dispose();
      }
    },
  };
}

/**
 * The onnxruntime-web WebGPU engine over `${modelUrl}onnx/model.onnx`
 * (onnxruntime-web from the repository's node_modules). Throws where the
 * browser has no WebGPU.
 */
export async function ortEngine(bd, modelUrl, seqLen) {
  if (!globalThis.navigator?.gpu) throw new Error('this browser has no WebGPU (navigator.gpu)');
  const ort = await import('/node_modules/onnxruntime-web/dist/ort.webgpu.min.mjs');
  const { createOrtDecoder, webgpuSessionOptions } = await import('../adapters/onnxruntime_web.mjs');
  const { disposeOutputs, pastShapes, promptFeeds, stepFeeds } = await import('/web/model/ort_feeds.mjs');
  ort.env.wasm.wasmPaths = '/node_modules/onnxruntime-web/dist/';
  if (!globalThis.crossOriginIsolated) ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(`${modelUrl}onnx/model.onnx`, webgpuSessionOptions());
  const dec = createOrtDecoder(bd, ort);
  const cfg = await fetch(`${modelUrl}config.json`).then((r) => r.json());
  const past = pastShapes(session, cfg.num_key_value_heads, cfg.head_dim ?? cfg.hidden_size / cfg.num_attention_heads);
  return {
    name: 'onnxruntime-web, WebGPU',
    async *generate(ids, options, pT, n) {
      const sampler = dec.createSampler({ ...options, return_distribution: true, top_logprobs: 16 });
      for (let i = 1; i < ids.length; i++) sampler.accept(ids[i]);
      let out = await session.run(promptFeeds(ort, ids, past));
      try {
        for (let pos = ids.length, i = 0; i < n && pos < seqLen; pos++, i++) {
          const s = await sampler.sample(out.logits);
          const top = s.top_logprobs;
          yield { token: s.token, k: s.k, pIds: top.map((t) => t.token), pProbs: top.map((t) => Math.exp(t.logprob)), q: qOf(s),
            bytesRead: s.gpu.bytesRead };
          const next = await session.run(stepFeeds(ort, s.token, pos, out, past));
          disposeOutputs(out);
          out = next;
        }
      } finally {
        disposeOutputs(out);
        sampler.dispose();
      }
    },
  };
}
