// The onnxruntime-web WebGPU bench page (bench/ort_gpu.html; `npm run
// bench:gpu` serves it, bench/ort_gpu_run.mjs runs it headless).
// ?auto runs at once; ?steps=N tokens per option set; ?model=URL.
import { load } from '../dist/index.mjs';
import { createOrtDecoder, webgpuSessionOptions } from '../dist/onnxruntime_web.mjs';
import * as ort from '../node_modules/onnxruntime-web/dist/ort.webgpu.min.mjs';
import { disposeOutputs, promptFeeds, stepFeeds } from '../web/model/ort_feeds.mjs';

const $ = (id) => document.getElementById(id);
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const params = new URLSearchParams(location.search);
const steps = Number(params.get('steps') ?? 40);
const hidden = Number(params.get('hidden') ?? 8);  // the synthetic model's (its KV cache head size)
const warmup = 3;
const model = params.get('model') ?? '/bench/.cache/synthetic-262144/onnx/model.onnx';
const optionSets = [
  { temperature: 0 },
  { top_k: 40, top_p: 0.9 },
  { min_p: 0.05 },
  { top_p: 0.9 },
  { bregman: { alpha: 1.5, lambda: 1e-3 } },
];

// A row of a [S, V] float32 GPUBuffer read back (one staging buffer and
// host row, reused).
let staging = null, host = null;
async function readRow(device, buffer, r, V) {
  if (host === null || host.length !== V) {
    staging?.destroy();
    staging = device.createBuffer({ size: 4 * V, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    host = new Float32Array(V);
  }
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(buffer, 4 * r * V, staging, 0, 4 * V);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  host.set(new Float32Array(staging.getMappedRange()));
  staging.unmap();
  return host;
}

// One option set: `steps` tokens, each decoded both ways (same token, or an Error).
async function measure(bd, session, device, dec, past, o) {
  const tForward = [], tDownload = [], tGpu = [], paths = {};
  let gpuBytes = 0, downloadBytes = 0;
  let out = await session.run(promptFeeds(ort, [1, 2, 3, 4], past));
  await device.queue.onSubmittedWorkDone();
  for (let t = 0; t < steps + warmup; t++) {
    const oo = { ...o, seed: 7, step: t };
    const logits = out.logits;
    const [, S, V] = logits.dims;
    let g, c, dg, dc;
    const gpuArm = async () => { const t0 = performance.now(); g = await dec.sample(logits, oo); dg = performance.now() - t0; };
    // The row copied to a mappable buffer on onnxruntime-web's device and
    // mapped (what getData() does, without turning the tensor into a CPU one).
    const downloadArm = async () => {
      const t0 = performance.now();
      const row = await readRow(device, logits.gpuBuffer, S - 1, V);
      c = bd.sample(row, oo);
      dc = performance.now() - t0;
    };
    if (t % 2) { await downloadArm(); await gpuArm(); } else { await gpuArm(); await downloadArm(); }
    if (g.token !== c.token) throw new Error(`step ${t} ${JSON.stringify(o)}: GPU token ${g.token}, download token ${c.token}`);
    // run() resolves before the GPU is done with gpu-buffer outputs: the
    // forward pass is timed to the queue's end, not charged to the next arm.
    const t0 = performance.now();
    const next = await session.run(stepFeeds(ort, g.token, 4 + t, out, past));
    await device.queue.onSubmittedWorkDone();
    const df = performance.now() - t0;
    disposeOutputs(out);
    out = next;
    if (t < warmup) continue;
    tForward.push(df); tDownload.push(dc); tGpu.push(dg);
    gpuBytes = Math.max(gpuBytes, g.gpu.bytesRead);
    downloadBytes = 4 * V;
    const p = g.gpu.fallback ? `fallback: ${g.gpu.fallback}` : g.gpu.path;
    paths[p] = (paths[p] ?? 0) + 1;
  }
  disposeOutputs(out);
  return { options: o, forwardMs: median(tForward), downloadMs: median(tDownload), gpuMs: median(tGpu), downloadBytes, gpuBytes, paths };
}

async function run() {
  $('run').disabled = true;
  const bd = await load();
  if (!navigator.gpu) throw new Error('no navigator.gpu: open this page over https or http://127.0.0.1 in a WebGPU browser');
  ort.env.wasm.wasmPaths = '/node_modules/onnxruntime-web/dist/';
  if (!self.crossOriginIsolated) ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  $('status').textContent = `loading ${model} (run node tools/synthetic_onnx.mjs first)`;
  const session = await ort.InferenceSession.create(model, webgpuSessionOptions());
  const device = await ort.env.webgpu.device;
  const ai = device.adapterInfo ?? {};
  const info = { vendor: ai.vendor, architecture: ai.architecture, device: ai.device, description: ai.description };
  $('adapter').textContent = `adapter: ${JSON.stringify(info)}`;
  const past = session.inputNames.filter((n) => n.startsWith('past_key_values.')).map((name) => ({ name, dims: [1, 1, 0, hidden] }));
  const dec = createOrtDecoder(bd, ort);
  const body = $('out').tBodies[0];
  const results = [];
  for (const o of optionSets) {
    $('status').textContent = JSON.stringify(o);
    const r = await measure(bd, session, device, dec, past, o);
    results.push(r);
    const tr = body.insertRow();
    for (const x of [JSON.stringify(o), r.forwardMs.toFixed(2), r.downloadMs.toFixed(2), r.gpuMs.toFixed(2),
      `${(r.downloadMs / r.gpuMs).toFixed(2)}x`, r.downloadBytes, r.gpuBytes, Object.entries(r.paths).map(([p, n]) => `${p} (${n})`).join(', ')]) {
      tr.insertCell().textContent = x;
    }
  }
  dec.dispose();
  await session.release();
  $('status').textContent = 'done';
  window.benchResults = { adapter: info, steps, results };
  $('run').disabled = false;
}

$('run').onclick = () => run().catch((e) => { $('status').textContent = `Error: ${e.message}`; $('run').disabled = false; });
if (params.has('auto')) $('run').click();
