// Draws docs/bench.svg from bench/results.json (no dependencies: the SVG is
// written by hand) and prints docs/speed.md's tables (markdown) to stdout.
//   node bench/chart.mjs [results.json] [--svg docs/bench.svg] [--V 262144]
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const opt = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : def; };
const input = args.find((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--'))) ??
  join(root, 'bench', 'results.json');
const r = JSON.parse(readFileSync(input, 'utf8'));
const V = Number(opt('--V', Math.max(...r.rows.map((x) => x.V))));
const svgPath = opt('--svg', join(root, 'docs', 'bench.svg'));

const ms = (env, impl, row, config) =>
  r.results.find((x) => x.env === env && x.impl === impl && x.row === row && x.config === config);

// ---------------------------------------------------------------- SVG

const IMPLS = [
  { env: null, impl: 'wasm', name: 'bregman-decoders (wasm)', color: '#1f77b4' },
  { env: null, impl: 'wasm-zero-copy', name: 'wasm, inputBuffer (no copy)', color: '#17becf' },
  { env: 'native', impl: 'native', name: 'bregman-decoders (native C++, top panel)', color: '#2ca02c' },
  { env: null, impl: 'plain-js', name: 'plain JS', color: '#ff7f0e' },
  { env: null, impl: 'transformers.js', name: 'transformers.js 4.3.2 sampler', color: '#9467bd' },
];
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toPrecision(2));

function panel(env, title, rowId, y0, out) {
  const configs = r.configs;
  const left = 330, width = 560, barH = 5, group = IMPLS.length * barH + 8;
  const vals = r.results.filter((x) => x.row === rowId && (x.env === env || (env === 'node' && x.env === 'native')))
    .map((x) => x.ms).filter((x) => x > 0);
  const lo = Math.floor(Math.log10(Math.min(...vals))), hi = Math.ceil(Math.log10(Math.max(...vals)));
  const X = (v) => left + ((Math.log10(v) - lo) / (hi - lo)) * width;
  const top = y0 + 40;
  const h = configs.length * group;
  out.push(`<text x="10" y="${y0 + 18}" font-size="15" font-weight="bold">${esc(title)}</text>`);
  for (let e = lo; e <= hi; e++) {
    const x = X(10 ** e);
    out.push(`<line x1="${x}" y1="${top - 4}" x2="${x}" y2="${top + h}" stroke="#ddd"/>`);
    out.push(`<text x="${x}" y="${top - 8}" font-size="10" text-anchor="middle">${fmt(10 ** e)} ms</text>`);
  }
  const floors = [['floor-max', 'copy + max'], ['floor-max-sum-exp', 'copy + max + sum exp'], ['floor-max-no-copy', 'max (no copy)']];
  floors.forEach(([impl, name], i) => {
    const f = ms(env, impl, rowId, null);
    if (!f) return;
    const x = X(f.ms);
    out.push(`<line x1="${x}" y1="${top - 4}" x2="${x}" y2="${top + h}" stroke="#d62728" stroke-dasharray="${['6,3', '2,2', '1,4'][i]}"/>`);
    out.push(`<text x="${x + 3}" y="${top + h + 12 + 11 * i}" font-size="10" fill="#d62728">floor: ${name} ${fmt(f.ms)} ms</text>`);
  });
  configs.forEach((c, i) => {
    const gy = top + i * group;
    out.push(`<text x="${left - 6}" y="${gy + 2 * barH + 4}" font-size="11" text-anchor="end">${esc(c.label.replace(/ \(.*\)/, ''))}</text>`);
    IMPLS.forEach((m, j) => {
      if (m.env === 'native' && env !== 'node') return;
      const x = ms(m.env ?? env, m.impl, rowId, c.id);
      if (!x) return;
      out.push(`<rect x="${left}" y="${gy + j * barH}" width="${Math.max(1, X(x.ms) - left).toFixed(1)}" height="${barH - 1}" fill="${m.color}"><title>${esc(`${m.name}: ${fmt(x.ms)} ms`)}</title></rect>`);
    });
  });
  return top + h + 40;
}

const out = [];
let y = 70;
const rowId = `llm-${V}`;
const ver = (s) => (s ?? '').split(' ').slice(0, 2).join(' ');
y = panel('node', `Node ${r.machine.node}: V = ${V}, LLM-shaped row (median ms per call, log scale)`, rowId, y, out);
if (r.results.some((x) => x.env === 'chromium')) {
  y = panel('chromium', `Chromium ${ver(r.machine.chromium)} (headless): the same row`, rowId, y, out);
}
let lx = 10;
const legend = IMPLS.filter((m) => r.results.some((x) => x.impl === m.impl)).map((m) => {
  const s = `<rect x="${lx}" y="34" width="12" height="10" fill="${m.color}"/><text x="${lx + 16}" y="43" font-size="11">${esc(m.name)}</text>`;
  lx += 16 + m.name.length * 6 + 18;
  return s;
});
const head = `<text x="10" y="20" font-size="13">bregman-decoders bench, ${esc(r.machine.cpu)} (${r.machine.nproc} cores, shared), ` +
  `commit ${esc((r.commit ?? '').slice(0, 10))}${r.dirty ? ' (with local changes)' : ''}, ${esc(r.generated.slice(0, 16))} UTC</text>`;
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="920" height="${y}" viewBox="0 0 920 ${y}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
${head}
${legend.join('\n')}
${out.join('\n')}
</svg>
`;
writeFileSync(svgPath, svg);

// ---------------------------------------------------------------- markdown

const cell = (x) => (x ? fmt(x.ms) : '–');
const zc = r.results.some((x) => x.impl === 'wasm-zero-copy');
const COLUMNS = [
  ['node', 'wasm', 'Node wasm'], ...(zc ? [['node', 'wasm-zero-copy', 'no copy']] : []),
  ['native', 'native', 'native'], ['node', 'plain-js', 'plain JS'], ['node', 'transformers.js', 'transformers.js'],
  ['chromium', 'wasm', 'Chromium wasm'], ...(zc ? [['chromium', 'wasm-zero-copy', 'no copy']] : []),
  ['chromium', 'plain-js', 'plain JS'], ['chromium', 'transformers.js', 'transformers.js'],
];
const FLOORS = [['floor-max', 'floor: copy + max'], ['floor-max-sum-exp', 'floor: copy + max + sum exp'],
  ['floor-max-no-copy', 'floor: max (no copy)']];
function table(kind) {
  const id = `${kind}-${V}`;
  const lines = [
    `| ${kind === 'llm' ? 'LLM-shaped' : 'flat'}, V = ${V} | k | ${COLUMNS.map((c) => c[2]).join(' | ')} | plain JS / wasm (Node) |`,
    `|---|---|${COLUMNS.map(() => '---|').join('')}---|`,
  ];
  for (const [impl, name] of FLOORS) {
    if (!r.results.some((x) => x.impl === impl && x.row === id)) continue;
    // A floor sits in the library's columns of its environment.
    lines.push(`| ${name} | | ${COLUMNS.map(([env, col]) => (col === 'wasm' || col === 'native'
      ? cell(ms(env, impl, id, null)) : '')).join(' | ')} | |`);
  }
  for (const c of r.configs) {
    const w = ms('node', 'wasm', id, c.id);
    const j = ms('node', 'plain-js', id, c.id);
    lines.push(`| ${c.label} | ${w?.k ?? ''} | ${COLUMNS.map(([env, impl]) => cell(ms(env, impl, id, c.id))).join(' | ')} | ` +
      `${w && j ? (j.ms / w.ms).toFixed(1) + 'x' : '–'} |`);
  }
  return lines.join('\n');
}
console.log(table('llm'));
console.log();
console.log(table('flat'));
