// No shipped JS evaluates strings (new Function, eval, string timers), so the
// package runs under `script-src 'self' 'wasm-unsafe-eval'`; the scanner
// itself is checked on lines it must and must not flag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringEvaluations } from '../../scripts/eval_scan.mjs';

const dist = fileURLToPath(new URL('../../dist', import.meta.url));

test('dist/ has no string evaluation', () => {
  assert.deepEqual(stringEvaluations(dist), []);
});

test('the scan flags each form of string evaluation and nothing else', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bd-scan-'));
  try {
    const flagged = ['var f = new Function("a", "return a");', 'x = Function("return this")();',
      'eval("1+1");', 'y=(0,eval)("2")', 'setTimeout("tick()", 10);'];
    const clean = ['craftInvokerFunction(humanName, argTypes);', 'obj.eval(3);', 'retrieval(x);',
      'setTimeout(tick, 10);', 'isFunction(f)', 'typeof f === "function"'];
    writeFileSync(join(dir, 'bad.mjs'), flagged.join('\n'));
    writeFileSync(join(dir, 'good.cjs'), clean.join('\n'));
    writeFileSync(join(dir, 'notes.txt'), 'eval("ignored, not JS")');
    const found = stringEvaluations(dir);
    assert.equal(found.length, flagged.length, found.join('\n'));
    assert.ok(found.every((f) => f.startsWith('bad.mjs:')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
