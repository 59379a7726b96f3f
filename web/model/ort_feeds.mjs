// Feeds for a KV-cached generation loop on onnxruntime-web (the demo's
// WebGPU engine, the tests, the bench) over a causal LM exported as tools/export_onnx.py does
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
