// Type-checked by tsc in onnxruntime_web.test.mjs: the adapter's hand-written
// typings against onnxruntime-web's own (its module and Tensor fit the
// adapter's parameters) and docs/webgpu.md's recipe.
import { load } from 'bregman-decoders';
import { createOrtDecoder, webgpuSessionOptions, type OrtSample } from 'bregman-decoders/onnxruntime-web';
import * as ort from 'onnxruntime-web/webgpu';

async function main(): Promise<void> {
  const session = await ort.InferenceSession.create('model.onnx', webgpuSessionOptions({ graphOptimizationLevel: 'all' }));
  const dec = createOrtDecoder(await load(), ort, { maxCandidates: 1024 });
  const out = await session.run({});
  const r: OrtSample = await dec.sample(out.logits, { top_k: 40, top_p: 0.9, seed: 1 });
  const bytes: number | undefined = r.gpu?.bytesRead;
  const s = dec.createSampler({ min_p: 0.05, seed: 2 });
  const t: number = (await s.sample(out.logits, { batch: 0, position: 3 })).token;
  const d = await dec.decode(new ort.Tensor('float32', new Float32Array(8), [1, 8]), { top_k: 2 });
  const k: number = d.k + t + (bytes ?? 0) + dec.stats.bytesRead;
  // @ts-expect-error options are this library's (snake_case, known names)
  await dec.sample(out.logits, { topK: 40 });
  // @ts-expect-error the row is { batch, position }
  await dec.sample(out.logits, {}, 3);
  s.dispose();
  dec.dispose();
  console.log(k);
}
void main;
