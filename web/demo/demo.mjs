// The in-browser demo: the austen-kjv-2m model (web/model/llama2.mjs) and the
// package's Bregman decoder, with per-token plots. Served by
// scripts/serve-demo.mjs, which maps /model/ to models/austen-kjv-2m/.
import { load } from '../../dist/index.mjs';
import { Llama2, Tokenizer } from '../model/llama2.mjs';

const $ = (id) => document.getElementById(id);
const status = (s) => { $('status').textContent = s; };
const MODEL_URL = new URLSearchParams(location.search).get('model') ?? '/model/';

const [bd, modelBytes, tokBytes] = await Promise.all([
  load(),
  fetch(`${MODEL_URL}model.bin`).then((r) => r.arrayBuffer()),
  fetch(`${MODEL_URL}tokenizer.bin`).then((r) => r.arrayBuffer()),
]);
const model = new Llama2(modelBytes);
const tok = new Tokenizer(tokBytes, model.config.vocabSize);
status(`ready: model ${model.config.vocabSize} tokens × ${model.config.nLayers} layers; kernels ${bd.target}`);
$('go').disabled = false;

const steps = [];  // per generated token: { token, k, pIds, pProbs, qIds, qProbs }

function svg(el, children) { el.innerHTML = children.join(''); }

function plotK() {
  const el = $('kplot'), W = +el.getAttribute('width'), H = +el.getAttribute('height');
  const left = 36, bottom = 20, top = 8, n = steps.length;
  if (!n) return svg(el, []);
  const kmax = Math.max(...steps.map((s) => s.k));
  const bw = (W - left - 6) / n;
  const y = (k) => top + (H - top - bottom) * (1 - k / kmax);
  const parts = [`<text x="4" y="${top + 10}" font-size="10">${kmax}</text>`, `<text x="4" y="${H - bottom}" font-size="10">0</text>`];
  steps.forEach((s, i) => parts.push(`<rect data-i="${i}" x="${left + i * bw}" y="${y(s.k)}" width="${Math.max(bw - 1, 1)}" height="${H - bottom - y(s.k)}" fill="${s.sel ? '#333' : '#4a7bd0'}"/>`));
  parts.push(`<text x="${left}" y="${H - 4}" font-size="10">token 1 … ${n}; mean k ${(steps.reduce((a, s) => a + s.k, 0) / n).toFixed(1)}</text>`);
  svg(el, parts);
}

function plotDist(i) {
  const s = steps[i];
  steps.forEach((t, j) => { t.sel = j === i; });
  document.querySelectorAll('#text span.tok').forEach((e) => e.classList.toggle('sel', +e.dataset.i === i));
  $('dtitle').textContent = `token ${i + 1}: "${s.piece}" — model p (grey) vs Bregman q (blue), k = ${s.k}`;
  const el = $('dplot'), W = +el.getAttribute('width'), H = +el.getAttribute('height');
  const n = Math.min(20, s.pIds.length), left = 30, bottom = 22, top = 8;
  const q = new Map(Array.from(s.qIds, (id, j) => [id, s.qProbs[j]]));
  const ymax = Math.max(s.pProbs[0], ...s.qProbs);
  const bw = (W - left) / n;
  const y = (v) => top + (H - top - bottom) * (1 - v / ymax);
  const parts = [`<text x="2" y="${top + 10}" font-size="10">${ymax.toFixed(2)}</text>`];
  for (let j = 0; j < n; j++) {
    const p = s.pProbs[j], qq = q.get(s.pIds[j]) ?? 0;
    const x = left + j * bw;
    parts.push(`<rect x="${x}" y="${y(p)}" width="${bw * 0.45}" height="${H - bottom - y(p)}" fill="#aaa"/>`);
    parts.push(`<rect x="${x + bw * 0.45}" y="${y(qq)}" width="${bw * 0.45}" height="${H - bottom - y(qq)}" fill="${s.pIds[j] === s.token ? '#d9534f' : '#4a7bd0'}"/>`);
  }
  parts.push(`<text x="${left}" y="${H - 6}" font-size="10">the model's 20 most probable tokens (red: the one drawn)</text>`);
  svg(el, parts);
  plotK();
}

$('text').addEventListener('click', (e) => { if (e.target.dataset.i) plotDist(+e.target.dataset.i); });
$('kplot').addEventListener('click', (e) => { if (e.target.dataset.i) plotDist(+e.target.dataset.i); });

async function generate() {
  $('go').disabled = true;
  steps.length = 0;
  const prompt = $('prompt').value;
  const options = {
    seed: Number($('seed').value), temperature: Number($('temperature').value),
    bregman: { divergence: $('divergence').value, alpha: Number($('alpha').value), lambda: Number($('lambda').value) },
  };
  const out = $('text');
  out.innerHTML = '';
  const p = document.createElement('span');
  p.className = 'prompt';
  p.textContent = prompt;
  out.append(p);
  let sampler;
  try {
    sampler = bd.createSampler({ ...options, return_distribution: true });
  } catch (e) {
    status(`${e.name}: ${e.message}`);
    $('go').disabled = false;
    return;
  }
  const ids = tok.encode(prompt);
  model.reset();
  let logits;
  for (let pos = 0; pos < ids.length; pos++) logits = model.forward(ids[pos], pos);
  const utf8 = new TextDecoder();
  const t0 = performance.now();
  const n = Number($('tokens').value);
  for (let pos = ids.length, i = 0; i < n && pos < model.config.seqLen; pos++, i++) {
    // The model's own distribution at this temperature (its head is plotted).
    const base = bd.decode(logits, { temperature: options.temperature });
    const s = sampler.sample(logits);
    if (s.token === tok.eos) break;
    const piece = utf8.decode(tok.decodeBytes(s.token), { stream: true });
    steps.push({ token: s.token, k: s.k, piece, pIds: base.ids.slice(0, 20), pProbs: base.probs.slice(0, 20), qIds: s.distribution.ids, qProbs: s.distribution.probs });
    const span = document.createElement('span');
    span.className = 'tok';
    span.dataset.i = String(steps.length - 1);
    span.textContent = piece;
    out.append(span);
    logits = model.forward(s.token, pos);
    if (i % 8 === 7) await new Promise((r) => setTimeout(r));  // let the page paint
  }
  sampler.dispose();
  const kmax = Math.max(...steps.map((s) => s.k));
  document.querySelectorAll('#text span.tok').forEach((e) => {
    const k = steps[+e.dataset.i].k;
    e.style.background = `rgba(74, 123, 208, ${(0.08 + 0.6 * Math.log1p(k) / Math.log1p(kmax)).toFixed(2)})`;
  });
  status(`${steps.length} tokens in ${(performance.now() - t0).toFixed(0)} ms (model + decoding); mean k ${(steps.reduce((a, s) => a + s.k, 0) / steps.length).toFixed(1)}`);
  if (steps.length) plotDist(0);
  $('go').disabled = false;
  document.body.dataset.done = String(steps.length);
}
$('go').addEventListener('click', generate);
