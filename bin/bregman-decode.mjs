#!/usr/bin/env node
// bregman-decode: decodes one logits row and prints the drawn token, k and the
// top of the processed distribution.
//   bregman-decode [--logits row.f32] [--alpha 1.5] [--lambda 1e-3 | --k 20]
//                  [--divergence primal|dual] [--temperature 1] [--top-k N]
//                  [--top-p P] [--min-p P] [--seed N] [--show 10] [--json]
// Without --logits it decodes an embedded sample: a deterministic LLM-shaped
// row (Zipf head, V = 32000). --logits reads raw little-endian float32.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { load } from '../dist/node.mjs';

// Every failure is one line naming the argument and exit status 2 (a stack
// trace is for bugs, not for a mistyped flag or a missing file).
function fail(message) {
  console.error(message);
  process.exit(2);
}

let a;
try {
  ({ values: a } = parseArgs({
    options: {
      logits: { type: 'string' },
      alpha: { type: 'string' },
      lambda: { type: 'string' },
      k: { type: 'string' },
      divergence: { type: 'string' },
      temperature: { type: 'string' },
      'top-k': { type: 'string' },
      'top-p': { type: 'string' },
      'min-p': { type: 'string' },
      seed: { type: 'string', default: '1' },
      show: { type: 'string', default: '10' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }));
} catch (e) {
  // parseArgs names the flag (unknown, missing value, a negative value
  // without '=': --alpha=-1).
  fail(`${e.message.replace(/\s*\n\s*/g, ' ')} (see --help)`);
}
if (a.help) {
  console.log(readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(1, 8)
    .map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(0);
}

// The embedded sample: logit_i = -1.1 log(rank_i + 1) + small deterministic
// noise, ranks permuted by a fixed LCG, so the head is spread over the ids.
function sampleRow(v = 32000) {
  const row = new Float32Array(v);
  let state = 12345;
  const next = () => { state = (Math.imul(state, 1103515245) + 12345) >>> 0; return state / 2 ** 32; };
  const ids = Array.from({ length: v }, (_, i) => i);
  for (let i = v - 1; i > 0; i--) { const j = Math.floor(next() * (i + 1)); [ids[i], ids[j]] = [ids[j], ids[i]]; }
  for (let r = 0; r < v; r++) row[ids[r]] = -1.1 * Math.log(r + 1) + 0.2 * (next() - 0.5);
  return row;
}

// A decimal number (Number() would also take '', ' ', '0x10' and 'Infinity').
const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const num = (s, flag) => {
  if (s === undefined) return undefined;
  if (!DECIMAL.test(s)) fail(`RangeError: --${flag}: '${s}' is not a number`);
  return Number(s);
};

function readRow(path) {
  let bytes;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    fail(`--logits ${path}: ${e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'a directory' : e.message}`);
  }
  if (bytes.length % 4 !== 0) {
    fail(`RangeError: --logits ${path}: ${bytes.length} bytes is not a whole number of float32 values`);
  }
  return new Float32Array(new Uint8Array(bytes).buffer);
}

const logits = a.logits ? readRow(a.logits) : sampleRow();
if (a.k !== undefined && a.lambda !== undefined) fail('RangeError: give --lambda (adaptive k) or --k (fixed k), not both');
const showRows = num(a.show, 'show');
if (!Number.isInteger(showRows) || showRows < 0) fail(`RangeError: --show must be an integer >= 0, got '${a.show}'`);
const options = { seed: num(a.seed, 'seed') };
if (a.temperature !== undefined) options.temperature = num(a.temperature, 'temperature');
if (a['top-k'] !== undefined) options.top_k = num(a['top-k'], 'top-k');
if (a['top-p'] !== undefined) options.top_p = num(a['top-p'], 'top-p');
if (a['min-p'] !== undefined) options.min_p = num(a['min-p'], 'min-p');
const useBregman = a.alpha !== undefined || a.lambda !== undefined || a.k !== undefined || a.divergence !== undefined;
if (useBregman || (options.top_k === undefined && options.top_p === undefined && options.min_p === undefined)) {
  options.bregman = { divergence: a.divergence ?? 'primal', alpha: num(a.alpha, 'alpha') ?? 1.5 };
  if (a.k !== undefined) options.bregman.k = num(a.k, 'k');
  else options.bregman.lambda = num(a.lambda, 'lambda') ?? 1e-3;
}

const bd = await load();
try {
  const s = bd.sample(logits, options);
  const d = bd.decode(logits, options);
  const show = Math.min(showRows, d.k);
  if (a.json) {
    console.log(JSON.stringify({ options, vocab: logits.length, token: s.token, logprob: s.logprob, k: d.k,
      objective: d.objective, top: Array.from({ length: show }, (_, i) => [d.ids[i], d.probs[i]]) }));
  } else {
    console.log(`bregman-decoders (kernels: ${bd.target}) on ${a.logits ?? 'the embedded sample row'}, V = ${logits.length}`);
    console.log(`options: ${JSON.stringify(options)}`);
    console.log(`token ${s.token} (logprob ${s.logprob.toFixed(4)}), k = ${d.k}` +
      (d.objective !== undefined ? `, objective ${d.objective.toPrecision(6)}` : ''));
    console.log(`top ${show} of the processed distribution:`);
    for (let i = 0; i < show; i++) console.log(`  ${String(d.ids[i]).padStart(6)}  ${d.probs[i].toFixed(6)}`);
  }
} catch (e) {
  console.error(`${e.name}: ${e.message}`);
  process.exit(2);
}
