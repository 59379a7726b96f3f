// The onnxruntime-web tests' and bench's in-page generation loop, over the
// model's feeds (web/model/ort_feeds.mjs), every tensor kept on the GPU.
import { disposeOutputs, promptFeeds, stepFeeds } from '/web/model/ort_feeds.mjs';
export { disposeOutputs, pastShapes, promptFeeds, stepFeeds } from '/web/model/ort_feeds.mjs';

// Generates `steps` tokens from `prompt` with the KV cache on the GPU; each
// step decodes the gpu-buffer logits through `dec` (the adapter) and,
// as the reference, downloads the row and runs bd.sample on it with the same
// options, seed and step. Returns per step { gpu, cpu, bytesRead, path, ms }.
export async function generateAndCompare({ bd, ort, session, dec, past, prompt, steps, options, seed }) {
  let out = await session.run(promptFeeds(ort, prompt, past));
  let pos = prompt.length;
  const record = [];
  for (let t = 0; t < steps; t++) {
    const logits = out.logits;
    const o = { ...options, seed, step: t };
    const t0 = performance.now();
    const g = await dec.sample(logits, o);
    const ms = performance.now() - t0;
    const [, S, V] = logits.dims;
    const data = await logits.getData();
    const c = bd.sample(data.subarray((S - 1) * V, S * V), o);
    record.push({ gpu: g.token, cpu: c.token, bytesRead: g.gpu.bytesRead, path: g.gpu.fallback ? `fallback: ${g.gpu.fallback}` : g.gpu.path, ms });
    const next = await session.run(stepFeeds(ort, g.token, pos, out, past));
    disposeOutputs(out);
    out = next;
    pos += 1;
  }
  disposeOutputs(out);
  return record;
}
