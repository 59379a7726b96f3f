// What the bundler tests share (tests/browser/bundlers.test.mjs, and the
// opt-in tests/bundlers/next.test.mjs): a temporary app folder with the
// bundlers of a lockfile (npm ci) and the packed tarball installed, as a user's
// app has them; the app's page script; its result in headless Chromium; and
// the same computation in Node, which the page must match bit for bit.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Packs the repository (npm pack: the package as published), creates a
 * temporary app folder with `lockDir`'s package.json and package-lock.json,
 * installs them (npm ci) and then the tarball. Returns the folder and a
 * remove() for it.
 */
export function installApp(lockDir) {
  const dir = mkdtempSync(join(tmpdir(), 'bd-bundlers-'));
  const npm = (args) => execFileSync('npm', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: repoRoot, encoding: 'utf8' });
  const tarball = join(dir, packed.trim().split('\n').pop());
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(lockDir, f), join(dir, f));
  npm(['ci', '--no-audit', '--no-fund', '--loglevel=error']);
  npm(['install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', tarball]);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// A logits row from a fixed linear congruential sequence: the same numbers in
// the page and in Node (its source is pasted into the page script).
export function checkRow() {
  const row = new Float32Array(2048);
  let x = 12345;
  for (let i = 0; i < row.length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    row[i] = (x / 2 ** 32) * 12 - 6;
  }
  return row;
}

// What the page computes with the package, and the test in Node: a Bregman
// decode (ids and probabilities) and seeded draws through two chains.
export function checkRun(bd, row) {
  const d = bd.decode(row, { bregman: { alpha: 1.5, lambda: 1e-3 } });
  const tokens = [];
  for (let step = 0; step < 64; step++) {
    tokens.push(bd.sample(row, { seed: 7, step, top_k: 40, temperature: 0.8 }).token);
    tokens.push(bd.sample(row, { seed: 8, step, top_p: 0.9, bregman: { alpha: 1.5, k: 16 } }).token);
  }
  return { target: bd.target, ids: Array.from(d.ids), probs: Array.from(d.probs), tokens };
}

/**
 * The page script: imports load() from `specifier`, runs checkRun and leaves
 * its result (or load()'s error message) in window.bdResult.
 */
export function pageScript(specifier) {
  return `import { load } from '${specifier}';
${checkRow.toString()}
${checkRun.toString()}
load().then((bd) => { window.bdResult = checkRun(bd, checkRow()); },
  (e) => { window.bdResult = { error: String(e?.message ?? e) }; });
`;
}

/** What the page must report: checkRun in Node, through the repository's dist/. */
export async function expectedResult() {
  const { load } = await import('../../dist/node.mjs');
  const bd = await load();
  const want = checkRun(bd, checkRow());
  bd.dispose();
  return want;
}

/**
 * Opens `url` in a new page of the Chromium context and returns the page's
 * window.bdResult, with the URLs of the .wasm files it requested. `timeout`
 * (ms) bounds the navigation and the result each (a dev server compiles the
 * page on its first request).
 */
export async function pageResult(context, url, { timeout = 60_000 } = {}) {
  const page = await context.newPage();
  const wasmRequests = [];
  const errors = [];
  page.on('request', (r) => { if (/\.wasm(\?|$)/.test(r.url())) wasmRequests.push(r.url()); });
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(url, { timeout });
    await page.waitForFunction(() => window.bdResult !== undefined, null, { timeout });
    const result = await page.evaluate(() => window.bdResult);
    return { ...result, wasmRequests, pageErrors: errors };
  } finally {
    await page.close();
  }
}
