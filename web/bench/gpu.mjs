// The WebGPU bench page (web/bench/gpu.html; `npm run bench:gpu` serves it).
import { load } from '../index.browser.mjs';
import { llmRow, rng } from '../../tests/js/reference.mjs';

const $ = (id) => document.getElementById(id);
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const params = new URLSearchParams(location.search);
const reps = Number(params.get('reps') ?? 30);
const sizes = (params.get('sizes') ?? '32000,131072,262144').split(',').map(Number);
const optionSets = [
  { top_k: 40, temperature: 0.8 },
  { top_p: 0.9 },
  { min_p: 0.05 },
  { bregman: { alpha: 1.5, lambda: 1e-3 } },
  { temperature: 0 },
];

async function run() {
  $('run').disabled = true;
  const bd = await load();
  if (!navigator.gpu) throw new Error('no navigator.gpu: open this page over https or http://127.0.0.1 in a WebGPU browser');
  const adapter = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) throw new Error('no WebGPU adapter');
  const device = await adapter.requestDevice({
    requiredLimits: { maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize },
  });
  $('adapter').textContent = `adapter: ${JSON.stringify({ vendor: adapter.info.vendor, architecture: adapter.info.architecture, description: adapter.info.description })}`;
  const body = $('out').tBodies[0];
  const results = [];
  for (const V of sizes) {
    // Peaked rows (the usual LLM step) so that top-p's nucleus fits the candidates.
    const row = llmRow(V, rng(V), 1.6);
    const buf = device.createBuffer({ size: V * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(buf, 0, row);
    const staging = device.createBuffer({ size: V * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const host = new Float32Array(V);
    const gd = bd.createGpuDecoder(device, { vocab: V, maxCandidates: 1024 });
    const readback = async (o) => {
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(buf, 0, staging, 0, V * 4);
      device.queue.submit([enc.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      host.set(new Float32Array(staging.getMappedRange()));
      staging.unmap();
      return bd.sample(host, o);
    };
    for (const o of optionSets) {
      $('status').textContent = `V = ${V} ${JSON.stringify(o)}`;
      const tr = [], tg = [];
      let last;
      for (let i = 0; i < reps + 3; i++) {
        const oo = { ...o, seed: 1, step: i };
        // Alternate which goes first, so neither always gets a warm cache.
        const order = i % 2 ? ['r', 'g'] : ['g', 'r'];
        for (const which of order) {
          const t0 = performance.now();
          if (which === 'r') await readback(oo); else last = await gd.sample(buf, oo);
          const dt = performance.now() - t0;
          if (i >= 3) (which === 'r' ? tr : tg).push(dt);
        }
      }
      const r = { V, options: o, readbackMs: median(tr), gpuMs: median(tg), readbackBytes: V * 4, gpuBytes: last.gpu.bytesRead, path: last.gpu.fallback ? `fallback: ${last.gpu.fallback}` : last.gpu.path };
      results.push(r);
      const tr_ = body.insertRow();
      for (const x of [`${V} ${JSON.stringify(o)}`, r.readbackMs.toFixed(3), r.gpuMs.toFixed(3), (r.readbackMs / r.gpuMs).toFixed(2) + 'x', r.readbackBytes, r.gpuBytes, r.path]) {
        tr_.insertCell().textContent = x;
      }
    }
    gd.dispose(); buf.destroy(); staging.destroy();
  }
  $('status').textContent = 'done';
  window.benchResults = results;
  $('run').disabled = false;
  return results;
}

$('run').onclick = () => run().catch((e) => { $('status').textContent = String(e); $('run').disabled = false; });
window.runBench = run;
if (params.has('auto')) $('run').click();
