// Loads an exported model.bin + tokenizer.bin with web/model/llama2.mjs (what
// the demo and the tests run) and checks that the tokenizer round-trips a
// prompt and that every logit of a few greedy steps is finite.
//   node tools/train/check_export.mjs work/model
import { readFileSync } from 'node:fs';
import { Llama2, Tokenizer } from '../../web/model/llama2.mjs';

const dir = process.argv[2];
if (!dir) { console.error('usage: node tools/train/check_export.mjs MODEL_DIR'); process.exit(2); }
const bytes = (f) => { const b = readFileSync(`${dir}/${f}`); return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength); };
const model = new Llama2(bytes('model.bin'));
const tok = new Tokenizer(bytes('tokenizer.bin'), model.config.vocabSize);
const prompt = 'It is a truth universally acknowledged';
const ids = tok.encode(prompt);
let text = '';
for (let i = 1; i < ids.length; i++) text += tok.decode(ids[i - 1], ids[i]);
if (text !== prompt) throw new Error(`tokenizer round trip: ${JSON.stringify(text)}`);
let logits;
for (let pos = 0; pos < ids.length; pos++) logits = model.forward(ids[pos], pos);
let out = '';
for (let pos = ids.length, prev = ids.at(-1); pos < ids.length + 16; pos++) {
  if (!logits.every(Number.isFinite)) throw new Error(`non-finite logit at position ${pos}`);
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  out += tok.decode(prev, best);
  prev = best;
  logits = model.forward(best, pos);
}
console.log(`ok: ${JSON.stringify(model.config)}`);
console.log(`greedy: ${prompt}${out}`);
