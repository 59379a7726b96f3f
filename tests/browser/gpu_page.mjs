// The GPU tests' page: tests/browser/gpu.html served from 127.0.0.1 (a secure
// context) in headless Chromium with WebGPU (SwiftShader's software Vulkan
// adapter without a GPU), opened and waited for (window.gpuReady). Shared by
// gpu.test.mjs and gpu_adversarial.test.mjs.
import { launchChromium } from './chromium.mjs';
import { startServer } from './server.mjs';

export async function openGpuPage() {
  const { server, url } = await startServer();
  let chrome;
  const close = async () => {
    await chrome?.close();
    server.close();
  };
  try {
    chrome = await launchChromium({ webgpu: true });
    const page = await chrome.context.newPage();
    const errors = [];  // the page's uncaught errors
    page.on('pageerror', (e) => errors.push(e));
    await page.goto(`${url}/tests/browser/gpu.html`);
    await page.waitForFunction(() => window.gpuReady !== undefined);
    await page.evaluate(async () => { await window.gpuReady; });
    return { url, chrome, page, errors, close };
  } catch (e) {
    await close();  // nothing left running when the page cannot open
    throw e;
  }
}
