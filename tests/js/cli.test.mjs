// The README's main job: the CLI decodes the embedded sample row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

// Argument parsing and file reading are inside the CLI's error handling (no
// stack traces, no exit 1); --show and empty numbers are not taken as NaN / 0;
// --k beside --lambda is refused, not dropping the lambda silently.
test('bregman-decode: bad flags and files are one line naming the argument, exit code 2', () => {
  const run = (...args) => {
    try {
      execFileSync(process.execPath, [cli, ...args], { encoding: 'utf8', stdio: 'pipe' });
      return { code: 0, stderr: '' };
    } catch (e) { return { code: e.status, stderr: e.stderr }; }
  };
  const sevenBytes = join(mkdtempSync(join(tmpdir(), 'bd-cli-')), 'row.f32');
  writeFileSync(sevenBytes, Buffer.alloc(7));
  const cases = [
    [['--bogus'], /--bogus/], [['--alpha', '-1'], /--alpha/], [['--logits'], /--logits/], [['extra'], /extra/],
    [['--logits', '/nonexistent/row.f32'], /--logits .*no such file/], [['--logits', '/tmp'], /--logits .*directory/],
    [['--logits', sevenBytes], /--logits .*7 bytes is not a whole number of float32/],
    [['--show', 'abc'], /--show/], [['--show=-5'], /--show/], [['--show', '2.5'], /--show/],
    [['--seed', ''], /--seed/], [['--temperature', ''], /--temperature/], [['--seed', '0x10'], /--seed/],
    [['--k', '20', '--lambda', '1e-3'], /--lambda .*--k/],
  ];
  for (const [args, message] of cases) {
    const { code, stderr } = run(...args);
    assert.equal(code, 2, args.join(' '));
    assert.match(stderr, message, args.join(' '));
    assert.equal(stderr.trim().split('\n').length, 1, `one line for ${args.join(' ')}: ${stderr}`);
    assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
  }
});

const gen = fileURLToPath(new URL('../../bin/bregman-generate.mjs', import.meta.url));
const stripTime = (s) => s.replace(/\d+ tokens in \d+ ms/g, '');

test('bregman-generate (the demo) runs the repository model: Bregman beside top-k, per-token k and p/q table', () => {
  const out = execFileSync(process.execPath, [gen, '--tokens', '12', '--seed', '3'], { encoding: 'utf8' });
  assert.match(out, /kernels: WASM/);
  assert.match(out, /A: Bregman primal, alpha 1.5, lambda 0.001/);
  assert.match(out, /B: top-k 40/);
  const ks = [...out.matchAll(/k per token: ([\d ]+)/g)].map((m) => m[1].trim().split(' ').map(Number));
  assert.equal(ks.length, 2);
  for (const k of ks) {
    assert.equal(k.length, 12);
    assert.ok(k.every((x) => x >= 1 && x <= 4096));
  }
  assert.ok(ks[1].every((x) => x === 40), 'top-k 40 keeps 40 on this model (every row has > 40 finite logits)');
  const rows = out.split('\n').filter((l) => /^\s+\d+ \| /.test(l));
  assert.equal(rows.length, 10);
  // Same seed, same text.
  assert.equal(stripTime(execFileSync(process.execPath, [gen, '--tokens', '12', '--seed', '3'], { encoding: 'utf8' })), stripTime(out));
});

test('bregman-generate --json: q is the decoder renormalised p (top-p, min-p) and greedy keeps k = 1', () => {
  const run = (...args) => JSON.parse(execFileSync(process.execPath, [gen, '--json', '--tokens', '8', ...args], { encoding: 'utf8' }));
  const r = run('--a', 'top-p:0.5', '--b', 'min-p:0.2');
  assert.equal(r.runs.length, 2);
  for (const run of r.runs) {
    assert.equal(run.steps.length, 8);
    for (const s of run.steps) {
      // A truncation then renormalisation at temperature 1: q >= p for the drawn token, q <= 1.
      assert.ok(s.q >= s.p * (1 - 1e-5) && s.q <= 1 + 1e-6, JSON.stringify(s));
    }
  }
  assert.ok(r.runs[0].steps.every((s) => s.k >= 1));
  const g = run('--a', 'greedy', '--b', 'chain');
  assert.ok(g.runs[0].steps.every((s) => s.k === 1 && Math.abs(s.q - 1) < 1e-6));
  assert.match(g.runs[1].decoder, /default chain/);
  assert.ok(g.runs[1].steps.every((s) => s.k >= 1 && s.k <= 40));
  // Bregman dual and a fixed k.
  const b = run('--a', 'bregman:dual,alpha=2,lambda=1e-3', '--b', 'bregman,alpha=1.5,k=5');
  assert.ok(b.runs[1].steps.every((s) => s.k === 5));
});

test('bregman-generate reports a bad decoder spec or option with exit code 2', () => {
  // (--tokens abc printed 'mean k NaN' and exited 0; a broken model file gave a stack trace;
  // --seed '' ran with seed 0.)
  const badModel = mkdtempSync(join(tmpdir(), 'bd-model-'));
  writeFileSync(join(badModel, 'model.bin'), Buffer.alloc(3));
  for (const [args, re] of [[['--a', 'nucleus:0.9'], /unknown family/], [['--b', 'top-p:1.5'], /RangeError: .*top_p/],
    [['--a', 'bregman,alpha=-1'], /RangeError: .*alpha/], [['--tokens', 'abc'], /--tokens/], [['--tokens', '0'], /--tokens/],
    [['--table', '-1'], /--table/], [['--show', 'x'], /--show/], [['--model', badModel], /--model .*not a model/],
    [['--bogus'], /--bogus/], [['--seed', ''], /--seed/], [['--seed', '1.5'], /--seed/],
    [['--temperature', ''], /--temperature/], [['--temperature', 'hot'], /--temperature/]]) {
    let code = 0, stderr = '';
    try {
      execFileSync(process.execPath, [gen, '--tokens', '2', ...args], { encoding: 'utf8', stdio: 'pipe' });
    } catch (e) { code = e.status; stderr = e.stderr; }
    assert.equal(code, 2, args.join(' '));
    assert.match(stderr, re);
    assert.equal(stderr.trim().split('\n').length, 1, `one line for ${args.join(' ')}: ${stderr}`);
  }
  assert.match(execFileSync(process.execPath, [gen, '--help'], { encoding: 'utf8' }), /^bregman-generate: /);
});
