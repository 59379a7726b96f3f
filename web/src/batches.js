// [B, V] batches (bd.decodeBatch, bd.sampleBatch): `perRow` is one options
// object for every row, or an array of B options objects or Samplers
// (per-row state). Row r gives exactly what the single call on that row
// gives (tests/js/batch.test.mjs).
import { SAMPLER_BRAND } from './brand.js';
import { checkInteger } from './checks.js';

/**
 * ctx: { M, inputs, owner: the instance's API object, Sampler, decode, sample
 * (the unguarded single-row calls) }; kind: 'decode' or 'sample'.
 */
export function runBatch(ctx, kind, logits, vocab, perRow) {
  const { M, Sampler } = ctx;
  if (!(logits instanceof Float32Array)) throw new TypeError('logits must be a Float32Array');
  if (ctx.inputs.isInputView(logits)) {
    throw new RangeError('logits: an inputBuffer() view holds one row; pass a batch in its own Float32Array');
  }
  checkInteger('vocab', vocab, 1);
  if (vocab > M.MAX_VOCAB) throw new RangeError(`vocab ${vocab} exceeds the largest vocabulary (${M.MAX_VOCAB})`);
  if (logits.length % vocab !== 0) {
    throw new RangeError(`logits length ${logits.length} is not a multiple of vocab ${vocab}`);
  }
  const rows = logits.length / vocab;
  if (Array.isArray(perRow) && perRow.length !== rows) {
    throw new RangeError(`per-row options: got ${perRow.length} entries for ${rows} rows`);
  }
  const out = new Array(rows);
  for (let r = 0; r < rows; r++) {
    const row = logits.subarray(r * vocab, (r + 1) * vocab);
    const o = Array.isArray(perRow) ? perRow[r] : perRow;
    if (o !== null && typeof o === 'object' && o[SAMPLER_BRAND] !== undefined && o[SAMPLER_BRAND] !== ctx.owner) {
      throw new TypeError(`per-row options[${r}] is a sampler of another bregman-decoders instance`);
    }
    if (o instanceof Sampler) out[r] = kind === 'sample' ? o._sample(row) : o._decode(row);
    else out[r] = kind === 'sample' ? ctx.sample(row, o) : ctx.decode(row, o);
  }
  return out;
}
