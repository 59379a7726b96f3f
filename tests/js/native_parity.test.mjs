// The same seed gives the same tokens natively (the C++ library, built by
// CMake with every attainable Highway target: each one this CPU can run --
// AVX-512, AVX2, SSE4, SSSE3, scalar -- is pinned in turn) and in wasm: a
// stateful mixed chain over 1000 steps, token by token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from '../../dist/node.mjs';
import { llmRow, rng } from './reference.mjs';

const tool = fileURLToPath(new URL('../../build/bd_sample_tokens', import.meta.url));
const bd = await load();

const CHAINS = [
  { seed: 1, temperature: 0.8, top_k: 40, top_p: 0.95, min_p: 0.02 },
  { seed: 2, repetition_penalty: 1.3, frequency_penalty: 0.2, presence_penalty: 0.1, penalty_last_n: 32,
    top_k: 100, temperature: 1.1 },
  { seed: 3, typical_p: 0.9, xtc_probability: 0.5, xtc_threshold: 0.05, temperature: 0.9 },
  { seed: 4, dry_multiplier: 0.8, dry_allowed_length: 2, no_repeat_ngram_size: 3, min_p: 0.05 },
  { seed: 5, mirostat: 2, mirostat_tau: 4, mirostat_eta: 0.2 },
  { seed: 6, epsilon_cutoff: 3e-4, eta_cutoff: 1e-3, top_n_sigma: 2, dynatemp_range: 0.5 },
  { seed: 7, top_k: 200, bregman: { divergence: 'primal', alpha: 1.5, lambda: 2e-3 } },
  { seed: 8, bregman: { divergence: 'dual', alpha: 2, lambda: 1e-3 }, repetition_penalty: 1.2 },
  { seed: 9, mirostat: 1, mirostat_tau: 3, mirostat_eta: 0.2, temperature: 1.1 },
];

function cliArgs(o) {
  const args = [];
  for (const [k, v] of Object.entries(o)) {
    if (k === 'bregman') for (const [bk, bv] of Object.entries(v)) args.push(`bregman_${bk}=${bv}`);
    else args.push(`${k}=${v}`);
  }
  return args;
}

test('native (every SIMD target) and wasm draw the same 1000 tokens for the same seed (mixed chains)', () => {
  assert.ok(existsSync(tool), `${tool} missing: run scripts/build.sh (npm test does)`);
  const targets = execFileSync(tool, ['--targets'], { encoding: 'utf8' }).trim().split(/\s+/);
  assert.ok(targets.length >= 1 && targets[0] !== '', 'no native target listed');
  const dir = mkdtempSync(join(tmpdir(), 'bd-parity-'));
  try {
    const logits = llmRow(8192, rng(77), 0.9);
    const rowFile = join(dir, 'row.f32');
    writeFileSync(rowFile, Buffer.from(logits.buffer));
    let compared = 0;
    for (const o of CHAINS) {
      const s = bd.createSampler(o);
      const wasm = Array.from({ length: 1000 }, () => s.sample(logits).token);
      s.dispose();
      for (const target of targets) {
        const native = execFileSync(tool, [rowFile, '1000', ...cliArgs(o), `target=${target}`],
          { encoding: 'utf8' }).trim().split('\n').map(Number);
        assert.deepEqual(wasm, native, `${target}: ${JSON.stringify(o)}`);
        compared += native.length;
      }
    }
    console.log(`# ${compared} tokens identical natively (${targets.join(', ')}) and in wasm over ${CHAINS.length} chains`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
