// The core decides thresholds and draws with its own float64 log/exp/pow
// (src/kernels/det_math.h, exp_f64.h), never libm's: glibc (FMA variants
// chosen at run time) and musl (wasm) may differ in the last bit, and one ulp
// can keep or drop a token. This scan fails on any libm transcendental call
// under src/, Bregman's solver included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

// Comments and string/char literals out, newlines kept (line numbers).
export function stripComments(src) {
  return src.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, (m) =>
    m.replace(/[^\n]/g, ' '));
}

const names = 'log|exp|pow|exp2|log2|expm1|log1p|log10';
// std::log(, ::log(, log(, logf(, logl(, __builtin_log(; not LogF64(, x.log(, ns::log(.
const call = new RegExp(
  `(?<![\\w.:>])(?:std::|::|__builtin_)?(?:${names})[fl]?\\s*\\(|\\bstd::(?:${names})[fl]?\\s*\\(`, 'g');

export function libmCalls(src) {
  const out = [];
  const lines = stripComments(src).split('\n');
  lines.forEach((line, i) => {
    for (const m of line.matchAll(call)) out.push({ line: i + 1, text: m[0] });
  });
  return out;
}

function sources(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (/\.(cc|h|cpp|hpp)$/.test(name)) out.push(path);
  }
  return out;
}

test('the scanner finds libm calls and ignores comments and our own functions', () => {
  const found = (s) => libmCalls(s).map((c) => c.text.replace(/\s/g, ''));
  assert.deepEqual(found('double a = std::log(x) + logf(y);'), ['std::log(', 'logf(']);
  assert.deepEqual(found('x = ::pow(a, b); y = std::exp2 (t); z = __builtin_expm1(u);'),
    ['::pow(', 'std::exp2(', '__builtin_expm1(']);
  assert.deepEqual(found('r = log1p(a) * log2l(b) * exp(c) * std::powf(d, 2);'),
    ['log1p(', 'log2l(', 'exp(', 'std::powf(']);
  assert.deepEqual(found('// std::log(x)\n/* exp(y) */ const char* s = "pow(2)";'), []);
  assert.deepEqual(found('LogF64(x) + ExpF64(y) + PowIntF64(b, e) + Exp2F64(t) + hn::Exp(d, v)'), []);
  assert.deepEqual(found('ws.log(1); catalog(2); exponent(3); power(4);'), []);
});

test('no file under src/ calls libm log/exp/pow/exp2/log2/expm1/log1p', () => {
  const bad = [];
  for (const path of sources(join(root, 'src'))) {
    const rel = relative(root, path).split('\\').join('/');
    for (const c of libmCalls(readFileSync(path, 'utf8'))) bad.push(`${rel}:${c.line} ${c.text}`);
  }
  assert.deepEqual(bad, [], `libm transcendental calls under src/:\n${bad.join('\n')}`);
});
