// Headless Chromium (Debian's, driven by playwright-core) for the browser
// tests, the bench and bench/tools/ab_builds.mjs --chromium: one launcher, so each
// runs the browser with the same flags.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const FLAGS = ['--headless', '--no-sandbox', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// Launches Chromium in a fresh profile. webgpu: WebGPU without a GPU
// (SwiftShader's Vulkan adapter; it needs a page served from 127.0.0.1, a
// secure context). Returns the context and a close() that removes the profile.
export async function launchChromium({ webgpu = false } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'bd-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [...FLAGS, webgpu ? '--enable-unsafe-webgpu' : '--disable-gpu'],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
