// In-page helpers of the onnxruntime-web tests and bench: a KV-cached
// generation loop over a causal LM exported as tools/export_onnx.py does
// (input_ids, attention_mask, position_ids, past_key_values.{l}.key/value ->
// logits, present.{l}.key/value), every tensor kept on the GPU.

// The session's past inputs and their [batch, heads, 0, headDim] shapes, read
// from the session's input metadata (or given).
export function pastShapes(session, heads, headDim) {
  return session.inputNames.filter((n) => n.startsWith('past_key_values.')).map((name) => ({ name, dims: [1, heads, 0, headDim] }));
}

// The first feeds: the prompt, an empty KV cache.
export function promptFeeds(ort, prompt, past) {
  const S = prompt.length;
  const feeds = {
    input_ids: new ort.Tensor('int64', BigInt64Array.from(prompt.map(BigInt)), [1, S]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(S).fill(1n), [1, S]),
    position_ids: new ort.Tensor('int64', BigInt64Array.from(prompt.map((_, i) => BigInt(i))), [1, S]),
  };
  for (const p of past) feeds[p.name] = new ort.Tensor('float32', new Float32Array(0), p.dims);
  return feeds;
}

// The next step's feeds: the drawn token at position `pos`, the previous
// step's present.* (GPU tensors) as the past.
export function stepFeeds(ort, token, pos, out, past) {
  const feeds = {
    input_ids: new ort.Tensor('int64', BigInt64Array.from([BigInt(token)]), [1, 1]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(pos + 1).fill(1n), [1, pos + 1]),
    position_ids: new ort.Tensor('int64', BigInt64Array.from([BigInt(pos)]), [1, 1]),
  };
  for (const p of past) feeds[p.name] = out[p.name.replace('past_key_values.', 'present.')];
  return feeds;
}

// Disposes a run's outputs except those kept (the tensors fed as the next past).
export function disposeOutputs(out, keep = new Set()) {
  for (const t of Object.values(out)) if (!keep.has(t)) t.dispose();
}

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
