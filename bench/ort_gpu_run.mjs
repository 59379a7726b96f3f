// Runs bench/ort_gpu.html headless (Chromium's WebGPU: SwiftShader's software
// Vulkan without a GPU, so its timings measure the CPU emulation, not a GPU)
// and prints its table as JSON; makes the synthetic model first if missing.
//   node bench/ort_gpu_run.mjs [--steps N]
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../tests/browser/chromium.mjs';
import { startServer } from '../tests/browser/server.mjs';
import { writeSyntheticModel } from '../tools/synthetic_onnx.mjs';

const args = process.argv.slice(2);
const steps = args.includes('--steps') ? Number(args[args.indexOf('--steps') + 1]) : 40;
const dir = fileURLToPath(new URL('./.cache/synthetic-262144', import.meta.url));
if (!existsSync(`${dir}/onnx/model.onnx`)) writeSyntheticModel(dir);

const { server, url } = await startServer();
const chrome = await launchChromium({ webgpu: true });
try {
  const page = await chrome.context.newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e}`));
  await page.goto(`${url}/bench/ort_gpu.html?auto&steps=${steps}`);
  await page.waitForFunction(() => window.benchResults !== undefined || document.getElementById('status').textContent.startsWith('Error'),
    null, { timeout: 0 });
  const r = await page.evaluate(() => window.benchResults ?? document.getElementById('status').textContent);
  if (typeof r === 'string') throw new Error(r);
  console.log(JSON.stringify(r, null, 1));
} finally {
  await chrome.close();
  server.close();
}
