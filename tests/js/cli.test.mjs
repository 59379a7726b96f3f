// The README's main job: the CLI decodes the embedded sample row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../../bin/bregman-decode.mjs', import.meta.url));

test('bregman-decode prints the token, k and the top of the distribution', () => {
  const out = JSON.parse(execFileSync(process.execPath, [cli, '--json', '--alpha', '1.5', '--lambda', '1e-3'], { encoding: 'utf8' }));
  assert.equal(out.vocab, 32000);
  assert.ok(out.k >= 1 && out.k < 32000);
  assert.ok(out.top.length >= 1);
  const mass = out.top.reduce((s, [, p]) => s + p, 0);
  assert.ok(mass <= 1 + 1e-6);
  assert.ok(out.top.some(([id]) => id === out.token) || out.k > out.top.length);
});

test('bregman-decode reports bad options as a RangeError with exit code 2', () => {
  let code = 0, stderr = '';
  try {
    execFileSync(process.execPath, [cli, '--alpha=-1'], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) { code = e.status; stderr = e.stderr; }
  assert.equal(code, 2);
  assert.match(stderr, /RangeError: .*alpha/);
});

test('bregman-generate (the demo) generates with per-token k from the real model', () => {
  const gen = fileURLToPath(new URL('../../bin/bregman-generate.mjs', import.meta.url));
  const out = execFileSync(process.execPath, [gen, '--tokens', '12', '--seed', '3'], { encoding: 'utf8' });
  assert.match(out, /kernels: WASM/);
  const ks = out.match(/k per token: ([\d ]+)/)[1].trim().split(' ').map(Number);
  assert.equal(ks.length, 12);
  assert.ok(ks.every((k) => k >= 1 && k <= 4096));
  assert.match(out, /top-k 40, same seed:/);
  // Same seed, same text.
  assert.equal(execFileSync(process.execPath, [gen, '--tokens', '12', '--seed', '3'], { encoding: 'utf8' })
    .replace(/\d+ tokens in \d+ ms/, ''), out.replace(/\d+ tokens in \d+ ms/, ''));
});
