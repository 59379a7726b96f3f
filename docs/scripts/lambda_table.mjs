// docs/bregman.md's lambda -> k table: the mean (and median) adaptive k that
// each lambda gives on real next-token distributions of the austen-kjv-2m
// model (held-out text, temperature 1), per divergence and alpha.
//   node docs/scripts/lambda_table.mjs > docs/lambda_table.md
import { load } from '../../dist/node.mjs';
import { heldoutRows } from './model_rows.mjs';

const ROWS = 300;
const { rows } = heldoutRows(ROWS);
const bd = await load();

const CONFIGS = [
  ['primal', 1, [0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3]],
  ['primal', 0.5, [1, 0.5, 0.3, 0.2, 0.1, 0.05]],
  ['primal', 1.5, [0.1, 0.03, 0.01, 3e-3, 1e-3, 3e-4]],
  ['primal', 2, [0.05, 0.01, 3e-3, 1e-3, 3e-4, 1e-4]],
  ['primal', 3, [0.03, 3e-3, 1e-3, 1e-4, 3e-5, 1e-5]],
  ['dual', 1.5, [0.1, 0.03, 0.01, 3e-3, 1e-3, 3e-4]],
  ['dual', 3, [0.03, 3e-3, 1e-3, 1e-4, 3e-5, 1e-5]],
];

const median = (xs) => { const s = xs.slice().sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const out = [];
out.push(`Adaptive k on ${rows.length} real next-token distributions (austen-kjv-2m, V = ${rows[0].length}, held-out text, temperature 1).`);
out.push('Each cell: mean k (median k) over the rows. Made by `node docs/scripts/lambda_table.mjs`.');
out.push('');
for (const [divergence, alpha, lambdas] of CONFIGS) {
  out.push(`**${divergence}, alpha = ${alpha}**`);
  out.push('');
  out.push(`| lambda | ${lambdas.join(' | ')} |`);
  out.push(`|---|${lambdas.map(() => '---').join('|')}|`);
  const cells = lambdas.map((lambda) => {
    const ks = rows.map((row) => bd.decode(row, { bregman: { divergence, alpha, lambda } }).k);
    return `${(ks.reduce((s, k) => s + k, 0) / ks.length).toFixed(1)} (${median(ks)})`;
  });
  out.push(`| k | ${cells.join(' | ')} |`);
  out.push('');
}
console.log(out.join('\n'));
