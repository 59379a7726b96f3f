// Real next-token distributions for the docs scripts: runs the small
// austen-kjv-2m model (models/austen-kjv-2m in this repository) over held-out text and returns the
// logits rows at evenly spaced positions.
import { readFileSync } from 'node:fs';
import { Llama2, Tokenizer } from '../../web/model/llama2.mjs';

export const MODEL_DIR = new URL('../../models/austen-kjv-2m/', import.meta.url);

export function loadModel() {
  const bytes = (name) => {
    const b = readFileSync(new URL(name, MODEL_DIR));
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  };
  const model = new Llama2(bytes('model.bin'));
  const tokenizer = new Tokenizer(bytes('tokenizer.bin'), model.config.vocabSize);
  return { model, tokenizer };
}

// `count` logits rows (copies) from the first held-out documents, one every
// `stride` positions of windows of at most `window` tokens.
export function heldoutRows(count, { window = 128, stride = 4 } = {}) {
  const { model, tokenizer } = loadModel();
  const docs = readFileSync(new URL('heldout.txt', MODEL_DIR), 'utf8').split('\0').filter((d) => d.trim());
  const rows = [];
  const next = [];  // the held-out token that followed each row
  for (const doc of docs) {
    const ids = tokenizer.encode(doc).slice(0, window + 1);
    model.reset();
    for (let pos = 0; pos + 1 < ids.length; pos++) {
      const logits = model.forward(ids[pos], pos);
      if (pos % stride === stride - 1) {
        rows.push(Float32Array.from(logits));
        next.push(ids[pos + 1]);
        if (rows.length === count) return { rows, next };
      }
    }
  }
  return { rows, next };
}
