// npm pack guard: the package must be built before it is packed.
import { existsSync } from 'node:fs';
for (const f of ['dist/index.mjs', 'dist/index.cjs', 'dist/node.mjs', 'dist/bregman_decoders.wasm',
                 'dist/bregman_decoders_node.cjs', 'dist/index.d.ts', 'dist/index.d.cts',
                 'dist/transformers.mjs', 'dist/webllm.mjs', 'dist/inline.mjs', 'dist/inline.d.ts',
                 'dist/onnxruntime_web.mjs']) {
  if (!existsSync(f)) {
    console.error(`prepack: ${f} is missing; run \`npm run build\` first`);
    process.exit(1);
  }
}

// The package must run under a strict CSP: no string evaluation in dist/.
const { stringEvaluations } = await import('./eval_scan.mjs');
const evals = stringEvaluations('dist');
if (evals.length) {
  console.error(`prepack: dist/ evaluates strings (a strict CSP forbids it):\n${evals.join('\n')}`);
  process.exit(1);
}
