// The packed package in a Next.js app (pinned by tests/bundlers/next/package-lock.json),
// as a client component: `next build` + `next start` (Turbopack, Next 16's
// default), `next build --webpack` + `next start`, and `next dev`; the page, in
// headless Chromium, decodes and draws the same numbers as Node, through
// 'bregman-decoders' (route /) and 'bregman-decoders/inline' (route /inline).
// Its own layer (npm run test:next, run by npm test after the browser tests):
// Next's install and builds take minutes (docs/bundlers.md has the numbers).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium } from '../browser/chromium.mjs';
import { checkRow, checkRun, expectedResult, installApp, pageResult, repoRoot } from './harness.mjs';

let app, chrome, want;

// A client component that runs checkRun once mounted (not during the server render).
const component = (specifier) => `'use client';
import { useEffect } from 'react';
import { load } from '${specifier}';
${checkRow.toString()}
${checkRun.toString()}
export default function Check() {
  useEffect(() => {
    load().then((bd) => { window.bdResult = checkRun(bd, checkRow()); },
      (e) => { window.bdResult = { error: String(e?.message ?? e) }; });
  }, []);
  return <p>bregman-decoders</p>;
}
`;

before(async () => {
  const t0 = Date.now();
  app = installApp(join(repoRoot, 'tests', 'bundlers', 'next'));
  console.log(`# npm ci of Next.js + the tarball: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const dir = app.dir;
  mkdirSync(join(dir, 'app', 'inline'), { recursive: true });
  writeFileSync(join(dir, 'app', 'layout.js'),
    'export default function Layout({ children }) { return <html lang="en"><body>{children}</body></html>; }\n');
  writeFileSync(join(dir, 'app', 'check.js'), component('bregman-decoders'));
  writeFileSync(join(dir, 'app', 'page.js'), "import Check from './check';\nexport default function Page() { return <Check />; }\n");
  writeFileSync(join(dir, 'app', 'inline', 'check.js'), component('bregman-decoders/inline'));
  writeFileSync(join(dir, 'app', 'inline', 'page.js'), "import Check from './check';\nexport default function Page() { return <Check />; }\n");
  chrome = await launchChromium();
  want = await expectedResult();
});

after(async () => {
  await chrome?.close();
  app?.remove();
});

const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
const nextBin = () => join(app.dir, 'node_modules', 'next', 'dist', 'bin', 'next');

function nextBuild(args) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [nextBin(), 'build', ...args], { cwd: app.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    p.stdout.on('data', (d) => { log += d; });
    p.stderr.on('data', (d) => { log += d; });
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`next build ${args} failed:\n${log}`))));
  });
}

// Runs `next <command>` on a free port until it is ready; returns its URL and a stop().
async function nextServer(command) {
  const p = spawn(process.execPath, [nextBin(), command, '-H', '127.0.0.1', '-p', '0'], { cwd: app.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`next ${command}: not ready in 120 s:\n${log}`)), 120_000);
    const onData = (d) => {
      log += d;
      const m = /Local:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(log);
      if (m && /Ready/.test(log)) { clearTimeout(timer); resolve(m[1]); }
    };
    p.stdout.on('data', onData);
    p.stderr.on('data', onData);
    p.on('exit', (code) => reject(new Error(`next ${command} exited (${code}):\n${log}`)));
  });
  return { url, stop: () => p.kill() };
}

function assertDecodes(got, label) {
  assert.equal(got.error, undefined, `${label}: ${got.error}`);
  const { wasmRequests, pageErrors, ...result } = got;
  assert.deepEqual(pageErrors, [], label);
  assert.deepEqual(result, want, `${label}: the page's numbers differ from Node's`);
  return wasmRequests;
}

async function checkRoutes(label) {
  const server = await nextServer(label.startsWith('dev') ? 'dev' : 'start');
  try {
    const fetched = assertDecodes(await pageResult(chrome.context, `${server.url}/`, { timeout: 300_000 }), `${label} /`);
    assert.ok(fetched.some((u) => /bregman_decoders.*\.wasm$/.test(u)), `${label}: no .wasm fetched`);
    assert.deepEqual(assertDecodes(await pageResult(chrome.context, `${server.url}/inline`, { timeout: 300_000 }), `${label} /inline`), []);
  } finally {
    server.stop();
  }
}

for (const [label, args] of [['build (Turbopack)', []], ['build --webpack', ['--webpack']]]) {
  test(`next ${label} + next start: a client component decodes, no configuration`, { timeout: 600_000 }, async () => {
    const t0 = Date.now();
    await nextBuild(args);
    console.log(`# next ${label}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await checkRoutes(label);
  });
}

test('next dev: a client component decodes, no configuration', { timeout: 600_000 }, async () => {
  await checkRoutes('dev');
});
