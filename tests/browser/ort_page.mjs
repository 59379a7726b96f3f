// The onnxruntime-web tests' page: tests/browser/ort.html served from
// 127.0.0.1 in headless Chromium with WebGPU (SwiftShader's software Vulkan
// without a GPU), with one InferenceSession over the repository's ONNX model
// (logits and KV cache at 'gpu-buffer'), its device and past shapes in
// window.ortSession. Its creation compiles the shaders: ~20 s on SwiftShader.
import { launchChromium } from './chromium.mjs';
import { startServer } from './server.mjs';

export async function openOrtPage(model = '/models/austen-kjv-2m/onnx/model.onnx') {
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
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${url}/tests/browser/ort.html`);
    await page.waitForFunction(() => window.ortReady !== undefined);
    await page.evaluate(async (model) => {
      const h = await window.ortReady;
      const cases = await import('/tests/browser/ort_cases.mjs');
      h.session = await h.ort.InferenceSession.create(model, h.adapter.webgpuSessionOptions());
      h.device = await h.ort.env.webgpu.device;
      h.past = cases.pastShapes(h.session, 4, 48);
      window.ortSession = h;
    }, model);
    const inPage = (fn, arg) => page.evaluate(async ({ src, arg }) => {
      const h = window.ortSession;
      const cases = await import('/tests/browser/ort_cases.mjs');
      // eslint-disable-next-line no-new-func
      return new Function('h', 'cases', 'arg', `return (${src})(h, cases, arg);`)(h, cases, arg);
    }, { src: fn.toString(), arg });
    return { url, chrome, page, errors, inPage, close };
  } catch (e) {
    await close();  // nothing left running when the page cannot open
    throw e;
  }
}
