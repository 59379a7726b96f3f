// The in-browser demo: the austen-kjv-2m model (web/model/llama2.mjs) and two
// decoders of the package side by side (same prompt, same seed), with the k
// each kept per token and the model's p against each decoder's q at any step.
// Served by scripts/serve-demo.mjs, which maps /model/ to models/austen-kjv-2m/.
import { load } from '../index.browser.mjs';
import { Llama2, Tokenizer } from '../model/llama2.mjs';
import { parseSpec, specFromFields } from './decoders.mjs';
import { jsEngine, ortEngine } from './engines.mjs';

const $ = (id) => document.getElementById(id);
const status = (s) => { $('status').textContent = s; };
const MODEL_URL = new URLSearchParams(location.search).get('model') ?? '/model/';
const COLORS = ['#4a7bd0', '#e08a2c'];
const RUNS = ['A', 'B'];

const [bd, modelBytes, tokBytes] = await Promise.all([
  load(),
  fetch(`${MODEL_URL}model.bin`).then((r) => r.arrayBuffer()),
  fetch(`${MODEL_URL}tokenizer.bin`).then((r) => r.arrayBuffer()),
]);
const model = new Llama2(modelBytes);
const tok = new Tokenizer(tokBytes, model.config.vocabSize);
status(`ready: model ${model.config.vocabSize} tokens × ${model.config.nLayers} layers; kernels ${bd.target}`);
$('go').disabled = false;

// The engine: the plain-JS model, or its ONNX export on onnxruntime-web's
// WebGPU execution provider where the browser has WebGPU (made at first use).
const engines = { js: jsEngine(bd, model), ort: null };
if (!navigator.gpu) {
  const o = $('engine').querySelector('option[value=ort]');
  o.disabled = true;
  o.textContent += ' (no WebGPU here)';
}
async function engineOf(name) {
  if (name === 'ort' && engines.ort === null) {
    status('loading onnxruntime-web and the ONNX model...');
    engines.ort = await ortEngine(bd, MODEL_URL, model.config.seqLen);
  }
  return engines[name];
}

// Show the fields each family uses.
for (const X of RUNS) {
  const sync = () => {
    const f = $(`fam${X}`).value;
    document.querySelectorAll(`#fam${X}`)[0].closest('fieldset').querySelectorAll('.bp')
      .forEach((e) => { e.style.display = f === 'bregman' ? '' : 'none'; });
    const v = $(`value${X}`).closest('label');
    v.style.display = ['top-k', 'top-p', 'min-p', 'typical'].includes(f) ? '' : 'none';
    v.firstChild.textContent = { 'top-k': 'k ', 'top-p': 'p ', 'min-p': 'min p ', typical: 'typical p ' }[f] ?? 'value ';
  };
  $(`fam${X}`).addEventListener('change', () => {
    const f = $(`fam${X}`).value;
    $(`value${X}`).value = { 'top-k': 40, 'top-p': 0.9, 'min-p': 0.05, typical: 0.9 }[f] ?? '';
    sync();
  });
  sync();
}

let runs = [];  // per decoder: { label, steps: [{ token, piece, k, pIds, pProbs, q: Map }] }
let selected = 0;

const svg = (el, parts) => { el.innerHTML = parts.join(''); };
const esc = (s) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

function plotK() {
  const el = $('kplot'), W = +el.getAttribute('width'), H = +el.getAttribute('height');
  const left = 40, bottom = 22, top = 10;
  const n = Math.max(0, ...runs.map((r) => r.steps.length));
  if (!n) return svg(el, []);
  const kmax = Math.max(1, ...runs.flatMap((r) => r.steps.map((s) => s.k)));
  // log scale: k spans 1 .. thousands.
  const y = (k) => top + (H - top - bottom) * (1 - Math.log(k) / Math.log(Math.max(kmax, 2)));
  const slot = (W - left - 6) / n, bw = Math.max(slot / 2 - 0.5, 0.5);
  const parts = [`<text x="4" y="${top + 8}" font-size="10">${kmax}</text>`, `<text x="4" y="${H - bottom}" font-size="10">1</text>`,
    `<line x1="${left}" y1="${H - bottom}" x2="${W}" y2="${H - bottom}" stroke="#ccc"/>`];
  parts.push(`<rect x="${left + selected * slot - 1}" y="${top}" width="${slot + 1}" height="${H - top - bottom}" fill="#eee"/>`);
  runs.forEach((r, j) => r.steps.forEach((s, i) => parts.push(
    `<rect data-i="${i}" class="k${RUNS[j]}" x="${left + i * slot + j * (slot / 2)}" y="${y(s.k) - 2}" width="${bw}" height="${H - bottom - y(s.k) + 2}" fill="${COLORS[j]}"/>`)));
  const mean = (r) => (r.steps.reduce((a, s) => a + s.k, 0) / Math.max(1, r.steps.length)).toFixed(1);
  parts.push(`<text x="${left}" y="${H - 6}" font-size="10">token 1 … ${n} (log scale); mean k: A ${mean(runs[0])}, B ${mean(runs[1])}</text>`);
  svg(el, parts);
}

function plotDist(j) {
  const X = RUNS[j], r = runs[j], s = r.steps[selected];
  const el = $(`dplot${X}`), W = +el.getAttribute('width'), H = +el.getAttribute('height');
  if (!s) { $(`dtitle${X}`).textContent = `${X}: no token ${selected + 1}`; return svg(el, []); }
  $(`dtitle${X}`).textContent = `${X}, token ${selected + 1} "${s.piece}": model p (grey) vs q (colour), k = ${s.k}`;
  const n = Math.min(16, s.pIds.length), left = 30, bottom = 34, top = 8;
  const qs = Array.from(s.pIds.slice(0, n), (id) => s.q.get(id) ?? 0);
  const ymax = Math.max(s.pProbs[0], ...qs, 1e-9);
  const bw = (W - left) / n;
  const y = (v) => top + (H - top - bottom) * (1 - v / ymax);
  const parts = [`<text x="2" y="${top + 8}" font-size="10">${ymax.toFixed(2)}</text>`, `<text x="2" y="${H - bottom}" font-size="10">0</text>`];
  for (let i = 0; i < n; i++) {
    const p = s.pProbs[i], q = qs[i], x = left + i * bw, drawn = s.pIds[i] === s.token;
    parts.push(`<rect class="p" x="${x}" y="${y(p)}" width="${bw * 0.42}" height="${H - bottom - y(p)}" fill="#aaa"/>`);
    parts.push(`<rect class="q" x="${x + bw * 0.42}" y="${y(q)}" width="${bw * 0.42}" height="${H - bottom - y(q)}" fill="${COLORS[j]}" stroke="${drawn ? '#c00' : 'none'}" stroke-width="2"/>`);
    const piece = esc(new TextDecoder().decode(tok.decodeBytes(s.pIds[i])).replace(/\n/g, '⏎'));
    parts.push(`<text x="${x + bw * 0.42}" y="${H - bottom + 11}" font-size="9" text-anchor="middle" fill="${drawn ? '#c00' : '#444'}">${piece}</text>`);
  }
  parts.push(`<text x="${left}" y="${H - 6}" font-size="10">the model's ${n} most probable tokens (red outline: the one drawn)</text>`);
  svg(el, parts);
}

function select(i) {
  selected = i;
  document.querySelectorAll('.text span.tok').forEach((e) => e.classList.toggle('sel', +e.dataset.i === i));
  plotK();
  plotDist(0);
  plotDist(1);
}

for (const id of ['textA', 'textB', 'kplot']) {
  $(id).addEventListener('click', (e) => { if (e.target.dataset.i !== undefined) select(+e.target.dataset.i); });
}

async function generateOne(engine, j, spec, prompt, n, seed) {
  const X = RUNS[j];
  const out = $(`text${X}`);
  out.innerHTML = '';
  const p = document.createElement('span');
  p.className = 'prompt';
  p.textContent = prompt;
  out.append(p);
  $(`label${X}`).textContent = `${X}: ${spec.label}`;
  const pT = spec.options.temperature === 0 ? 1 : (spec.options.temperature ?? 1);
  const steps = [];
  const utf8 = new TextDecoder();
  let i = 0;
  for await (const st of engine.generate(tok.encode(prompt), { ...spec.options, seed }, pT, n)) {
    if (st.token === tok.eos) break;
    const piece = utf8.decode(tok.decodeBytes(st.token), { stream: true });
    steps.push({ ...st, piece });
    const span = document.createElement('span');
    span.className = 'tok';
    span.dataset.i = String(steps.length - 1);
    span.textContent = piece;
    out.append(span);
    if (i++ % 8 === 7) await new Promise((r) => setTimeout(r));  // let the page paint
  }
  const kmax = Math.max(1, ...steps.map((s) => s.k));
  const [r, g, b] = COLORS[j].match(/\w\w/g).map((h) => parseInt(h, 16));
  out.querySelectorAll('span.tok').forEach((e) => {
    const k = steps[+e.dataset.i].k;
    e.style.background = `rgba(${r}, ${g}, ${b}, ${(0.08 + 0.6 * Math.log1p(k) / Math.log1p(Math.max(kmax, 2))).toFixed(2)})`;
  });
  return { label: spec.label, steps };
}

async function generate() {
  $('go').disabled = true;
  delete document.body.dataset.done;
  const prompt = $('prompt').value;
  const T = Number($('temperature').value), seed = Number($('seed').value), n = Number($('tokens').value);
  try {
    const specs = RUNS.map((X) => parseSpec(specFromFields({ family: $(`fam${X}`).value, divergence: $(`div${X}`).value,
      alpha: $(`alpha${X}`).value, lambda: $(`lambda${X}`).value, value: $(`value${X}`).value }), T));
    // Validate both before generating (a bad option is reported, nothing runs).
    for (const spec of specs) bd.createSampler(spec.options).dispose();
    const t0 = performance.now();
    runs = [];
    const engine = await engineOf($('engine').value);
    for (let j = 0; j < 2; j++) runs.push(await generateOne(engine, j, specs[j], prompt, n, seed));
    const mean = (r) => (r.steps.reduce((a, s) => a + s.k, 0) / Math.max(1, r.steps.length)).toFixed(1);
    const read = runs.flatMap((r) => r.steps.map((x) => x.bytesRead)).filter((b) => b !== null);
    const bytes = read.length ? `; read back ${Math.round(read.reduce((a, b) => a + b, 0) / read.length)} B per token (the row: ${4 * model.config.vocabSize} B)` : '';
    status(`${engine.name}: ${runs[0].steps.length} + ${runs[1].steps.length} tokens in ${(performance.now() - t0).toFixed(0)} ms (model + decoding), seed ${seed}; mean k: A ${mean(runs[0])}, B ${mean(runs[1])}${bytes}`);
    select(0);
    document.body.dataset.done = String(runs[0].steps.length);
  } catch (e) {
    status(`${e.name}: ${e.message}`);
  } finally {
    $('go').disabled = false;
  }
}
$('go').addEventListener('click', generate);
