// npm run bench:gpu: serves the repository on http://127.0.0.1 (a secure
// context, so navigator.gpu exists) and prints the bench pages' addresses;
// makes the synthetic V = 262144 ONNX model for bench/ort_gpu.html if missing.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../tests/browser/server.mjs';
import { writeSyntheticModel } from '../../tools/synthetic_onnx.mjs';

const synthetic = fileURLToPath(new URL('../../bench/.cache/synthetic-262144', import.meta.url));
if (!existsSync(`${synthetic}/onnx/model.onnx`)) writeSyntheticModel(synthetic);
const { url } = await startServer(Number(process.env.PORT ?? 8090));
console.log(`open ${url}/web/bench/gpu.html in a WebGPU browser (npm run build first); Ctrl-C to stop`);
console.log(`onnxruntime-web end to end (V = 262144): ${url}/bench/ort_gpu.html`);
