// A synthetic causal LM in ONNX with a large vocabulary and a tiny hidden
// size, for measuring what happens after the logits (readback, decoding) at
// V = 262144 without a real model's weights:
//   node tools/synthetic_onnx.mjs [outDir] [--vocab V] [--hidden H]
// writes outDir/onnx/model.onnx, outDir/config.json and
// outDir/generation_config.json (default outDir: bench/.cache/synthetic-V).
//
// The graph (inputs and outputs named as tools/export_onnx.py names them, so
// onnxruntime-web, transformers.js and web/model/ort_feeds.mjs drive it
// as the repository's model): x = Embed[input_ids] ([B, S, H]); logits =
// x @ Head + Bias ([B, S, V]); present.0.key/value = Concat(past, x as
// [B, 1, S, H]) on the sequence axis (one layer, one head of size H: a KV
// cache that grows, as a real one does); attention_mask and position_ids are
// inputs the graph does not read. Bias is Zipf-like over a random permutation
// of the ids (-1.6 log(1 + rank)), so every row has an LLM's long tail, and
// x @ Head moves each row by a few nats per token. Deterministic: a fixed
// seed. The ONNX protobuf is written by hand (the few messages it needs).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// --- protobuf encoding (wire types 0: varint, 2: length-delimited) ---
function varint(n) {
  const out = [];
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return Uint8Array.from(out);
}
const cat = (parts) => {
  const n = parts.reduce((a, p) => a + p.length, 0), out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
};
const key = (field, wire) => varint((field << 3) | wire);
const int = (field, v) => cat([key(field, 0), varint(v)]);
const bytes = (field, b) => cat([key(field, 2), varint(b.length), b]);
const str = (field, s) => bytes(field, new TextEncoder().encode(s));
const msg = (field, parts) => bytes(field, cat(parts));

// --- ONNX messages (onnx.proto field numbers) ---
const FLOAT = 1, INT64 = 7;
// ValueInfoProto of a tensor: dims are numbers (dim_value) or names (dim_param).
const valueInfo = (field, name, elemType, dims) => msg(field, [
  str(1, name),
  msg(2, [msg(1, [int(1, elemType), msg(2, dims.map((d) => msg(1, [typeof d === 'number' ? int(1, d) : str(2, d)])))])]),
]);
const tensor = (name, elemType, dims, raw) => msg(5, [...dims.map((d) => int(1, d)), int(2, elemType), str(8, name), bytes(9, raw)]);
// NodeProto; attrs: { name: int }.
const node = (op, inputs, outputs, attrs = {}) => msg(1, [
  ...inputs.map((i) => str(1, i)), ...outputs.map((o) => str(2, o)), str(3, `${op}_${outputs[0]}`), str(4, op),
  ...Object.entries(attrs).map(([n, v]) => msg(5, [str(1, n), int(3, v), int(20, 2)])),
]);

// Seeded normal draws (xorshift + Box-Muller).
function normals(n, seed) {
  let s = seed >>> 0 || 1;
  const u = () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return (s + 0.5) / 4294967296; };
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(u())), t = 2 * Math.PI * u();
    out[i] = r * Math.cos(t);
    if (i + 1 < n) out[i + 1] = r * Math.sin(t);
  }
  return { values: out, uniform: u };
}

/** The model's protobuf bytes for vocabulary V and hidden size H. */
export function syntheticModel(V, H) {
  const embed = normals(V * H, 1).values;
  const head = normals(H * V, 2).values;
  for (let i = 0; i < head.length; i++) head[i] *= 0.3;  // x @ Head: about N(0, 0.09 H) per logit
  const { uniform } = normals(1, 3);
  const rank = Int32Array.from({ length: V }, (_, i) => i);
  for (let i = V - 1; i > 0; i--) { const j = Math.floor(uniform() * (i + 1)); [rank[i], rank[j]] = [rank[j], rank[i]]; }
  const bias = new Float32Array(V);
  for (let i = 0; i < V; i++) bias[i] = -1.6 * Math.log(1 + rank[i]);
  const raw = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const graph = [
    node('Gather', ['embed', 'input_ids'], ['x']),
    node('MatMul', ['x', 'head'], ['scores']),
    node('Add', ['scores', 'bias'], ['logits']),
    node('Unsqueeze', ['x', 'axis1'], ['x_kv']),
    node('Concat', ['past_key_values.0.key', 'x_kv'], ['present.0.key'], { axis: 2 }),
    node('Concat', ['past_key_values.0.value', 'x_kv'], ['present.0.value'], { axis: 2 }),
    str(2, `synthetic-${V}`),
    tensor('embed', FLOAT, [V, H], raw(embed)),
    tensor('head', FLOAT, [H, V], raw(head)),
    tensor('bias', FLOAT, [V], raw(bias)),
    tensor('axis1', INT64, [1], raw(BigInt64Array.from([1n]))),
    valueInfo(11, 'input_ids', INT64, ['batch_size', 'sequence_length']),
    valueInfo(11, 'attention_mask', INT64, ['batch_size', 'total_sequence_length']),
    valueInfo(11, 'position_ids', INT64, ['batch_size', 'sequence_length']),
    valueInfo(11, 'past_key_values.0.key', FLOAT, ['batch_size', 1, 'past_sequence_length', H]),
    valueInfo(11, 'past_key_values.0.value', FLOAT, ['batch_size', 1, 'past_sequence_length', H]),
    valueInfo(12, 'logits', FLOAT, ['batch_size', 'sequence_length', V]),
    valueInfo(12, 'present.0.key', FLOAT, ['batch_size', 1, 'total_sequence_length', H]),
    valueInfo(12, 'present.0.value', FLOAT, ['batch_size', 1, 'total_sequence_length', H]),
  ];
  return cat([int(1, 8), str(2, 'bregman-decoders tools/synthetic_onnx.mjs'), msg(7, graph), msg(8, [str(1, ''), int(2, 17)])]);
}

/** transformers.js's config for it (a one-layer llama with head_dim H). */
export function syntheticConfig(V, H) {
  return {
    architectures: ['LlamaForCausalLM'], model_type: 'llama', vocab_size: V, hidden_size: H, intermediate_size: H,
    num_hidden_layers: 1, num_attention_heads: 1, num_key_value_heads: 1, head_dim: H, max_position_embeddings: 4096,
    bos_token_id: 1, eos_token_id: V + 1, torch_dtype: 'float32', 'transformers.js_config': { dtype: 'fp32' },
  };
}

/** Writes the model's folder; returns the model.onnx path. */
export function writeSyntheticModel(outDir, V = 262144, H = 8) {
  mkdirSync(join(outDir, 'onnx'), { recursive: true });
  const file = join(outDir, 'onnx', 'model.onnx');
  writeFileSync(file, syntheticModel(V, H));
  writeFileSync(join(outDir, 'config.json'), `${JSON.stringify(syntheticConfig(V, H), null, 2)}\n`);
  // eos outside the vocabulary: generate() never stops early.
  writeFileSync(join(outDir, 'generation_config.json'), `${JSON.stringify({ bos_token_id: 1, eos_token_id: V + 1 }, null, 2)}\n`);
  return file;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (name, d) => { const i = args.indexOf(name); return i < 0 ? d : Number(args.splice(i, 2)[1]); };
  const V = opt('--vocab', 262144), H = opt('--hidden', 8);
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const out = args[0] ?? join(root, 'bench', '.cache', `synthetic-${V}`);
  const file = writeSyntheticModel(out, V, H);
  console.log(`${file}: V = ${V}, hidden ${H}`);
}
