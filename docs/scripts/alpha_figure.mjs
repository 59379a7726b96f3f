// docs/figures/alpha_renorm.svg: the renormalised distribution of one real
// next-token row for several alphas (primal, fixed k = 8), beside the model's
// own top-8 probabilities: alpha < 1 sharpens the head, alpha = 1 is plain
// top-k renormalisation, alpha > 1 flattens it.
//   node docs/scripts/alpha_figure.mjs > docs/figures/alpha_renorm.svg
import { load } from '../../dist/node.mjs';
import { heldoutRows } from './model_rows.mjs';

const K = 8;
const ALPHAS = [0.5, 1, 1.5, 2, 3];
const COLORS = ['#999999', '#1b9e77', '#d95f02', '#7570b3', '#e7298a', '#66a61e'];
const { rows } = heldoutRows(40);
// A row with a moderately flat head, where the maps differ visibly.
const bd = await load();
const row = rows.find((r) => { const d = bd.decode(r, { top_k: 2 }); return d.probs[0] < 0.6; }) ?? rows[0];
const base = bd.decode(row, {});
const series = [['model p (top 8)', Array.from(base.probs.slice(0, K))]];
for (const alpha of ALPHAS) {
  const d = bd.decode(row, { bregman: { divergence: 'primal', alpha, k: K } });
  series.push([`alpha = ${alpha}`, Array.from(d.probs)]);
}

const W = 760, H = 370, left = 60, bottom = 50, top = 20, right = 170;
const plotW = W - left - right, plotH = H - top - bottom;
const ymax = Math.ceil(Math.max(...series.flatMap(([, p]) => p)) * 10) / 10;
const groupW = plotW / K, barW = groupW / (series.length + 1);
const y = (v) => top + plotH - (v / ymax) * plotH;
const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
  `<rect width="${W}" height="${H}" fill="white"/>`];
for (let t = 0; t <= 5; t++) {
  const v = (ymax * t) / 5;
  parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
  parts.push(`<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(2)}</text>`);
}
series.forEach(([, p], s) => p.forEach((v, i) => {
  const x = left + i * groupW + (s + 0.5) * barW;
  parts.push(`<rect x="${x.toFixed(1)}" y="${y(v).toFixed(1)}" width="${barW.toFixed(1)}" height="${(top + plotH - y(v)).toFixed(1)}" fill="${COLORS[s]}"/>`);
}));
for (let i = 0; i < K; i++) {
  parts.push(`<text x="${left + (i + 0.5) * groupW}" y="${top + plotH + 14}" text-anchor="middle">#${i + 1}</text>`);
  parts.push(`<text x="${left + (i + 0.5) * groupW}" y="${top + plotH + 27}" text-anchor="middle" font-size="10">id ${base.ids[i]}</text>`);
}
parts.push(`<text x="${left + plotW / 2}" y="${H - 6}" text-anchor="middle">kept token, by rank</text>`);
parts.push(`<text x="14" y="${top + plotH / 2}" transform="rotate(-90 14 ${top + plotH / 2})" text-anchor="middle">probability</text>`);
series.forEach(([name], s) => {
  parts.push(`<rect x="${left + plotW + 16}" y="${top + s * 20}" width="12" height="12" fill="${COLORS[s]}"/>`);
  parts.push(`<text x="${left + plotW + 34}" y="${top + s * 20 + 10}">${name}</text>`);
});
parts.push('</svg>');
console.log(parts.join('\n'));
