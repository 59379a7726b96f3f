// [B, V] batches (bd.decodeBatch, bd.sampleBatch): `perRow` is one options
// object for every row, or an array of B options objects or Samplers
// (per-row state). Row r gives exactly what the single call on that row
// gives (tests/js/batch.test.mjs).
import { SAMPLER_BRAND } from './brand.js';
import { checkInteger } from './checks.js';
import { float32Length, float32View, typedArrayKind } from './typed_arrays.js';

// perRow read once, at the batch's entry, for `rows` rows: an array's entries
// each once, and each options object as snapshot(o) (Samplers as they are).
function readPerRow(ctx, perRow, rows) {
  const one = (o, r) => {
    if (o !== null && typeof o === 'object' && o[SAMPLER_BRAND] !== undefined && o[SAMPLER_BRAND] !== ctx.owner) {
      throw new TypeError(`per-row options${r === null ? '' : `[${r}]`} is a sampler of another bregman-decoders instance`);
    }
    return o instanceof ctx.Sampler ? o : ctx.snapshot(o);
  };
  if (!Array.isArray(perRow)) return new Array(rows).fill(one(perRow, null));
  const n = perRow.length;
  if (n !== rows) throw new RangeError(`per-row options: got ${n} entries for ${rows} rows`);
  const entries = new Array(n);
  for (let r = 0; r < n; r++) entries[r] = perRow[r];
  return entries.map(one);
}

/**
 * ctx: { M, inputs, owner: the instance's API object, Sampler, snapshot
 * (reads one options object), decode, sample (the unguarded single-row calls,
 * on snapshots) }; kind: 'decode' or 'sample'.
 */
export function runBatch(ctx, kind, logits, vocab, perRow) {
  const { M, Sampler } = ctx;
  // Measured and cut into rows through the intrinsic getters (typed_arrays.js).
  if (typedArrayKind(logits) === 'Float32Array' && ctx.inputs.isInputView(logits)) {
    throw new RangeError('logits: an inputBuffer() view holds one row; pass a batch in its own Float32Array');
  }
  const length = float32Length('logits', logits);
  checkInteger('vocab', vocab, 1);
  if (vocab > M.MAX_VOCAB) throw new RangeError(`vocab ${vocab} exceeds the largest vocabulary (${M.MAX_VOCAB})`);
  if (length % vocab !== 0) {
    throw new RangeError(`logits length ${length} is not a multiple of vocab ${vocab}`);
  }
  const rows = length / vocab;
  const given = readPerRow(ctx, perRow, rows);
  const out = new Array(rows);
  for (let r = 0; r < rows; r++) {
    const row = float32View(logits, r * vocab, vocab);
    const o = given[r];
    if (o instanceof Sampler) out[r] = kind === 'sample' ? o._sample(row) : o._decode(row);
    else out[r] = kind === 'sample' ? ctx.sample(row, o) : ctx.decode(row, o);
  }
  return out;
}
