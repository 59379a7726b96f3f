// The eval's figures (dependency-free SVG) and tables, from results.json.
//   node eval/report.mjs            rewrites them from eval/results.json
// run.mjs calls writeReport() after each run.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const COLORS = {
  'top-k': '#7f7f7f', 'top-p': '#1f77b4', 'min-p': '#2ca02c', typical: '#8c564b', epsilon: '#bcbd22',
  'top-n-sigma': '#17becf', 'bregman primal a=0.5': '#ff7f0e', 'bregman primal a=1': '#aec7e8',
  'bregman primal a=1.5': '#d62728', 'bregman primal a=2': '#9467bd', 'bregman dual a=1.5': '#e377c2',
  'bregman dual a=2': '#5b2a86', 'pure sampling': '#000000',
};
const DASHED = new Set(['bregman dual a=1.5', 'bregman dual a=2']);
function meanSeOf(xs) {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  const v = xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1);
  return { mean: m, se: Math.sqrt(v / xs.length) };
}
const fmt = (v, d = 3) => (v === null || v === undefined || Number.isNaN(v) ? '–' : Number(v).toFixed(d));

// One plot panel: axes, grid, series of [x, y] points (lines and/or dots).
function panel({ x0, y0, w, h, title, xlabel, ylabel, xlog, xr, yr, series, marks = [] }) {
  const fx = xlog ? (v) => x0 + ((Math.log10(v) - Math.log10(xr[0])) / (Math.log10(xr[1]) - Math.log10(xr[0]))) * w
    : (v) => x0 + ((v - xr[0]) / (xr[1] - xr[0])) * w;
  const fy = (v) => y0 + h - ((v - yr[0]) / (yr[1] - yr[0])) * h;
  const clampX = (v) => Math.min(x0 + w, Math.max(x0, v));
  const clampY = (v) => Math.min(y0 + h, Math.max(y0, v));
  const out = [`<rect x="${x0}" y="${y0}" width="${w}" height="${h}" fill="none" stroke="#999"/>`];
  const xt = xlog ? [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 4096].filter((v) => v >= xr[0] && v <= xr[1]) : ticks(xr);
  for (const v of xt) {
    out.push(`<line x1="${fx(v).toFixed(1)}" x2="${fx(v).toFixed(1)}" y1="${y0}" y2="${y0 + h}" stroke="#eee"/>`);
    out.push(`<text x="${fx(v).toFixed(1)}" y="${y0 + h + 14}" text-anchor="middle" font-size="10">${+v.toPrecision(3)}</text>`);
  }
  for (const v of ticks(yr)) {
    out.push(`<line x1="${x0}" x2="${x0 + w}" y1="${fy(v).toFixed(1)}" y2="${fy(v).toFixed(1)}" stroke="#eee"/>`);
    out.push(`<text x="${x0 - 4}" y="${(fy(v) + 3).toFixed(1)}" text-anchor="end" font-size="10">${+v.toPrecision(3)}</text>`);
  }
  out.push(`<text x="${x0 + w / 2}" y="${y0 - 6}" text-anchor="middle" font-weight="bold">${title}</text>`);
  out.push(`<text x="${x0 + w / 2}" y="${y0 + h + 30}" text-anchor="middle">${xlabel}</text>`);
  out.push(`<text x="${x0 - 38}" y="${y0 + h / 2}" transform="rotate(-90 ${x0 - 38} ${y0 + h / 2})" text-anchor="middle">${ylabel}</text>`);
  for (const m of marks) out.push(m(fx, fy));
  for (const s of series) {
    const pts = s.points.map(([x, y]) => [clampX(fx(x)), clampY(fy(y))]);
    const dash = DASHED.has(s.name) ? ' stroke-dasharray="5 3"' : '';
    if (s.line !== false && pts.length > 1) {
      out.push(`<polyline fill="none" stroke="${COLORS[s.name]}" stroke-width="1.6"${dash} points="${pts.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ')}"/>`);
    }
    for (const [i, [x, y]] of pts.entries()) {
      const e = s.errors?.[i];
      if (e) {
        out.push(`<line x1="${clampX(fx(s.points[i][0] - e[0])).toFixed(1)}" x2="${clampX(fx(s.points[i][0] + e[0])).toFixed(1)}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="${COLORS[s.name]}" stroke-width="0.8"/>`);
        out.push(`<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${clampY(fy(s.points[i][1] - e[1])).toFixed(1)}" y2="${clampY(fy(s.points[i][1] + e[1])).toFixed(1)}" stroke="${COLORS[s.name]}" stroke-width="0.8"/>`);
      }
      out.push(`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="${s.r ?? 2.2}" fill="${COLORS[s.name]}"/>`);
    }
  }
  return out.join('\n');
}

function ticks([a, b]) {
  const span = b - a;
  const step = 10 ** Math.floor(Math.log10(span / 4));
  const nice = [1, 2, 2.5, 5, 10].map((m) => m * step).find((s) => span / s <= 6);
  const out = [];
  for (let v = Math.ceil(a / nice) * nice; v <= b + 1e-12; v += nice) out.push(Number(v.toPrecision(6)));
  return out;
}

function legend(names, x, y) {
  return names.map((n, i) => {
    const dash = DASHED.has(n) ? ' stroke-dasharray="5 3"' : '';
    return `<line x1="${x}" x2="${x + 18}" y1="${y + i * 17}" y2="${y + i * 17}" stroke="${COLORS[n]}" stroke-width="2.5"${dash}/>` +
      `<text x="${x + 24}" y="${y + i * 17 + 4}" font-size="11">${n}</text>`;
  }).join('\n');
}

function svg(W, H, body) {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">\n` +
    `<rect width="${W}" height="${H}" fill="white"/>\n${body}\n</svg>\n`;
}

// Mean k (log) against a teacher-forcing metric, one panel per temperature.
function sweepFigure(res, key, ylabel, yr) {
  const temps = res.config.tfTemperatures;
  const fams = [...new Set(res.teacherForcing.points.map((p) => p.family))];
  const pw = 330, ph = 280, left = 60, top = 30, gap = 70;
  const W = left + temps.length * (pw + gap) + 150, H = top + ph + 50;
  const parts = temps.map((T, i) => {
    const series = fams.map((f) => ({
      name: f,
      points: res.teacherForcing.points.filter((p) => p.family === f && p.T === T).sort((a, b) => a.meanK - b.meanK).map((p) => [p.meanK, p[key]]),
    }));
    const ref = res.teacherForcing.reference[T];
    const marks = key === 'score' ? [(fx, fy) => `<line x1="${fx(1)}" x2="${fx(4096)}" y1="${fy(ref.score).toFixed(1)}" y2="${fy(ref.score).toFixed(1)}" stroke="#000" stroke-dasharray="2 3"/>` +
      `<text x="${fx(4096) - 4}" y="${(fy(ref.score) - 4).toFixed(1)}" text-anchor="end" font-size="10">pure sampling</text>`] : [];
    return panel({ x0: left + i * (pw + gap), y0: top, w: pw, h: ph, title: `T = ${T}`, xlabel: 'mean k (log scale)', ylabel, xlog: true, xr: [1, 4096], yr, series, marks });
  });
  parts.push(legend(fams, left + temps.length * (pw + gap) - 30, top + 10));
  return svg(W, H, parts.join('\n'));
}

// Perplexity gap against repetition gap (both against the human
// continuations of the same prompts), one panel per temperature; the human
// text is the origin; bars are +-1 standard error over prompts.
function generationFigure(res) {
  const g = res.generation;
  const temps = [...new Set(g.points.map((p) => p.T))];
  const fams = [...new Set(g.points.map((p) => p.family))];
  const pad = (a, b) => [a - 0.08 * (b - a || 1), b + 0.08 * (b - a || 1)];
  const ys = g.points.flatMap((p) => [p.rep4Gap.mean - p.rep4Gap.se, p.rep4Gap.mean + p.rep4Gap.se]);
  const yr = pad(Math.min(0, ...ys), Math.max(0, ...ys));
  const pw = 300, ph = 280, left = 60, top = 30, gap = 70;
  const W = left + temps.length * (pw + gap) + 190, H = top + ph + 50;
  const parts = temps.map((T, i) => {
    // Each temperature gets its own perplexity range (pure sampling at T = 2 is far out).
    const xs = g.points.filter((p) => p.T === T).map((p) => p.logPplRatio.mean);
    const xr = pad(Math.min(0, ...xs), Math.max(0, ...xs));
    const series = fams.map((f) => {
      const pts = g.points.filter((p) => p.family === f && p.T === T).sort((a, b) => a.meanK - b.meanK);
      return { name: f, r: 3.2, points: pts.map((p) => [p.logPplRatio.mean, p.rep4Gap.mean]), errors: pts.map((p) => [p.logPplRatio.se, p.rep4Gap.se]) };
    });
    const marks = [(fx, fy) => `<line x1="${fx(0) - 7}" x2="${fx(0) + 7}" y1="${fy(0)}" y2="${fy(0)}" stroke="#000" stroke-width="2"/>` +
      `<line x1="${fx(0)}" x2="${fx(0)}" y1="${fy(0) - 7}" y2="${fy(0) + 7}" stroke="#000" stroke-width="2"/>` +
      `<text x="${fx(0) + 6}" y="${fy(0) - 6}" font-size="10">human</text>`];
    return panel({ x0: left + i * (pw + gap), y0: top, w: pw, h: ph, title: `T = ${T}`, xlabel: 'log(ppl generated / ppl human)', ylabel: 'repetition gap (4-grams)', xr, yr, series, marks });
  });
  parts.push(legend(fams, left + temps.length * (pw + gap) - 30, top + 10));
  return svg(W, H, parts.join('\n'));
}

function tables(res) {
  const tf = res.teacherForcing, g = res.generation;
  const out = [];
  out.push('# Decoding quality: the numbers');
  out.push('');
  out.push(`Made by \`npm run eval\` (eval/run.mjs; ${res.elapsedSeconds} s on ${res.config.workers} worker threads); every number is in eval/results.json. What they mean: [docs/quality.md](../docs/quality.md).`);
  out.push('');
  out.push(`## Truncation at matched mean k (teacher forcing, ${tf.rows} held-out positions)`);
  out.push('');
  out.push(`Each cell: coverage (share of positions whose true next token survives) / mean log((1 − ${res.config.mix}) q(y) + ${res.config.mix} p(y)), interpolated in log k between sweep points; – where the sweep does not reach that k.`);
  for (const T of res.config.tfTemperatures) {
    out.push('');
    out.push(`**T = ${T}** (pure sampling: coverage 1, score ${fmt(tf.reference[T].score)}; mean entropy of p ${fmt(tf.reference[T].meanEntropy, 2)} nats)`);
    out.push('');
    out.push(`| family | ${tf.matchedK.map((k) => `k = ${k}`).join(' | ')} |`);
    out.push(`|---|${tf.matchedK.map(() => '---').join('|')}|`);
    for (const [f, byK] of Object.entries(tf.matched[T])) {
      out.push(`| ${f} | ${tf.matchedK.map((k) => (byK[k].coverage === null ? '–' : `${fmt(byK[k].coverage)} / ${fmt(byK[k].score)}`)).join(' | ')} |`);
    }
  }
  out.push('');
  out.push('**Kept mass** of p_T at matched mean k (the share of the tempered distribution the truncation keeps):');
  for (const T of res.config.tfTemperatures) {
    out.push('');
    out.push(`| T = ${T} | ${tf.matchedK.map((k) => `k = ${k}`).join(' | ')} |`);
    out.push(`|---|${tf.matchedK.map(() => '---').join('|')}|`);
    for (const [f, byK] of Object.entries(tf.matched[T])) out.push(`| ${f} | ${tf.matchedK.map((k) => fmt(byK[k].keptMass)).join(' | ')} |`);
  }
  out.push('');
  out.push('## How k follows the entropy of p (T = 1, the setting of each family nearest mean k = 20)');
  out.push('');
  out.push('| family | setting | mean k | median k | k p10–p90 | Spearman(k, entropy) | mean k by entropy quartile (low → high) |');
  out.push('|---|---|---|---|---|---|---|');
  for (const f of [...new Set(tf.points.map((p) => p.family))]) {
    const pts = tf.points.filter((p) => p.family === f && p.T === 1);
    const p = pts.reduce((b, q) => (Math.abs(Math.log(q.meanK / 20)) < Math.abs(Math.log(b.meanK / 20)) ? q : b));
    out.push(`| ${f} | ${p.param} = ${p.value} | ${fmt(p.meanK, 1)} | ${fmt(p.medianK, 1)} | ${fmt(p.kP10, 0)}–${fmt(p.kP90, 0)} | ${fmt(p.kEntropySpearman, 2)} | ${p.meanKByEntropyQuartile.map((v) => fmt(v, 1)).join(', ')} |`);
  }
  out.push('');
  out.push(`## Open-ended generation (${g.prompts} held-out prompts of ${g.promptLen} tokens, ${g.contLen} tokens each)`);
  out.push('');
  out.push(`Human continuations of the same prompts: perplexity ${fmt(g.human.ppl, 2)}, repeated 4-grams ${fmt(g.human.rep4)}, distinct-2 ${fmt(g.human.distinct2)}, distinct-3 ${fmt(g.human.distinct3)}.`);
  out.push('Gaps are generated − human, paired by prompt, ± one standard error over prompts.');
  for (const T of [...new Set(g.points.map((p) => p.T))]) {
    out.push('');
    out.push(`**T = ${T}**`);
    out.push('');
    out.push('| family | setting | mean k | ppl | log ppl ratio | repetition | repetition gap | distinct-2 | distinct-3 |');
    out.push('|---|---|---|---|---|---|---|---|---|');
    for (const p of g.points.filter((q) => q.T === T)) {
      out.push(`| ${p.family} | ${p.param ? `${p.param} = ${p.value}` : '–'} | ${fmt(p.meanK, 1)} | ${fmt(p.ppl, 2)} | ${fmt(p.logPplRatio.mean)} ± ${fmt(p.logPplRatio.se)} | ${fmt(p.rep4)} | ${fmt(p.rep4Gap.mean)} ± ${fmt(p.rep4Gap.se)} | ${fmt(p.distinct2)} | ${fmt(p.distinct3)} |`);
    }
  }
  out.push('');
  out.push('**Paired against top-k** (same temperature, same target k, same prompts and seeds): Δ log ppl = log ppl(decoder) − log ppl(top-k), the mean over prompts of the difference in per-token negative log-likelihood of the generated text under the model, ± one standard error over prompts. Positive: the decoder\'s text is less probable under the model than top-k\'s (nearer the human text when both are below it).');
  out.push('');
  out.push('| T | target k | family | mean k | Δ log ppl vs top-k |');
  out.push('|---|---|---|---|---|');
  for (const p of g.points) {
    const ref = g.points.find((q) => q.family === 'top-k' && q.T === p.T && q.targetK === (p.targetK ?? q.targetK));
    if (!ref || p.family === 'top-k' || !p.perPrompt || p.targetK === null) continue;
    const d = meanSeOf(p.perPrompt.nll.map((v, i) => v - ref.perPrompt.nll[i]));
    out.push(`| ${p.T} | ${p.targetK} | ${p.family} | ${fmt(p.meanK, 1)} | ${fmt(d.mean)} ± ${fmt(d.se)} |`);
  }
  out.push('');
  out.push('## Sanity facts (asserted by the run)');
  out.push('');
  const s = res.sanity;
  out.push(`- every decoded q sums to 1: ${s.sums.decodes} decodes, max |sum − 1| = ${s.sums.maxAbsError.toExponential(2)}`);
  out.push(`- q keeps p's rank order on its support: ${s.rankOrder.violations} violations in ${s.rankOrder.decodes} decodes; the support is a most-probable prefix of p (all but typical): ${s.topPrefix.violations} violations in ${s.topPrefix.decodes}`);
  out.push(`- primal = dual at alpha 2: ${s.primalDualAlpha2.pairs} pairs, ${s.primalDualAlpha2.mismatches} support mismatches, max |Δq| = ${s.primalDualAlpha2.maxAbsDiff.toExponential(2)}`);
  out.push(`- Bregman alpha 1 with fixed k = top-k: ${s.alpha1FixedKIsTopK.pairs} pairs, ${s.alpha1FixedKIsTopK.mismatches} support mismatches, max |Δq| = ${s.alpha1FixedKIsTopK.maxAbsDiff.toExponential(2)}`);
  out.push('');
  out.push('## One prompt, every decoder');
  out.push('');
  out.push(`Prompt: "${g.human.example.prompt}"`);
  out.push('');
  out.push(`- human: "${g.human.example.continuation}"`);
  for (const p of g.points) out.push(`- T = ${p.T}, ${p.family}${p.param ? ` ${p.param} = ${p.value}` : ''}: "${p.example.replace(/\s+/g, ' ')}"`);
  out.push('');
  return out.join('\n');
}

/** Every report file, path (relative to the repository root) -> text. */
export function renderReport(res) {
  const scores = res.teacherForcing.points.map((p) => p.score);
  const lo = Math.floor(Math.min(...scores)), hi = Math.ceil(Math.max(...scores, ...Object.values(res.teacherForcing.reference).map((r) => r.score)));
  return {
    'docs/figures/quality_coverage.svg': sweepFigure(res, 'coverage', 'coverage of the true token', [0, 1]),
    'docs/figures/quality_score.svg': sweepFigure(res, 'score', `mean log((1−${res.config.mix})q + ${res.config.mix}p) of true token`, [lo, hi]),
    'docs/figures/quality_generation.svg': generationFigure(res),
    'notes/quality_results.md': tables(res),
  };
}

export function writeReport(res, outRoot) {
  mkdirSync(new URL('docs/figures/', outRoot), { recursive: true });
  mkdirSync(new URL('notes/', outRoot), { recursive: true });
  for (const [path, text] of Object.entries(renderReport(res))) writeFileSync(new URL(path, outRoot), text);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = new URL('../', import.meta.url);
  writeReport(JSON.parse(readFileSync(new URL('eval/results.json', root), 'utf8')), root);
}
