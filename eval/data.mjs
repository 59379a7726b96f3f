// The eval's data: held-out documents of the austen-kjv-2m model cut into
// (prompt, human continuation) chunks, and the model files. Everything here is
// deterministic: the same files give the same chunks in the same order.
import { readFileSync } from 'node:fs';
import { Llama2, Tokenizer } from '../web/model/llama2.mjs';

export const MODEL_DIR = new URL('../models/austen-kjv-2m/', import.meta.url);

/** A model file as a standalone ArrayBuffer. */
export function modelFile(name) {
  const b = readFileSync(new URL(name, MODEL_DIR));
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
}

export function loadModel() {
  const model = new Llama2(modelFile('model.bin'));
  const tokenizer = new Tokenizer(modelFile('tokenizer.bin'), model.config.vocabSize);
  return { model, tokenizer };
}

/** The held-out documents (NUL-separated in heldout.txt), non-empty ones only. */
export function heldoutDocs() {
  return readFileSync(new URL('heldout.txt', MODEL_DIR), 'utf8').split('\0').filter((d) => d.trim());
}

// Pieces of about PIECE_CHARS characters, cut at whitespace. The tokenizer's
// merge loop is quadratic in the text length, so documents are encoded a
// piece at a time; each piece starts a fresh context (BOS + dummy space), as
// a prompt would.
const PIECE_CHARS = 520;

function pieces(doc) {
  const text = doc.replace(/\s+/g, ' ').trim();
  const out = [];
  let a = 0;
  while (a < text.length) {
    let b = Math.min(text.length, a + PIECE_CHARS);
    if (b < text.length) {
      const sp = text.lastIndexOf(' ', b);
      if (sp > a + PIECE_CHARS / 2) b = sp;
    }
    out.push(text.slice(a, b).trim());
    a = b + 1;
  }
  return out;
}

/**
 * Up to `count` chunks of token ids: BOS + `promptLen` prompt tokens, then
 * `contLen` tokens of the human continuation. Pieces are taken round-robin
 * over the documents (piece 0 of every document, then piece 1, ...), so the
 * first chunks already mix Austen and the KJV; pieces too short are skipped.
 */
export function makeChunks(tokenizer, docs, { count, promptLen, contLen }) {
  const perDoc = docs.map(pieces);
  const need = 1 + promptLen + contLen;
  const chunks = [];
  const depth = Math.max(...perDoc.map((p) => p.length));
  for (let j = 0; j < depth && chunks.length < count; j++) {
    for (let d = 0; d < perDoc.length && chunks.length < count; d++) {
      if (j >= perDoc[d].length) continue;
      const ids = tokenizer.encode(perDoc[d][j]);
      if (ids.length >= need) chunks.push({ doc: d, piece: j, ids: ids.slice(0, need) });
    }
  }
  return chunks;
}
