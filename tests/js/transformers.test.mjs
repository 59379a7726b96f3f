// bregman-decoders/transformers inside a real transformers.js generate() call:
// @huggingface/transformers (onnxruntime-node, CPU) runs models/austen-kjv-2m
// exported to ONNX (tools/export_onnx.py), offline from the local folder.
// Checks: the logits transformers.js hands a processor equal web/model/llama2.mjs's
// forward pass; the generated tokens equal a plain sampler's draws on the same
// rows with the same seed; top_p/min_p/Bregman really act (k per step equals
// decode() on the row, and top_p/min_p's k equals a float64 reference); the
// README's lines run verbatim; tokenizer.json encodes like llama2.mjs; the subpath ships in the tarball, the ONNX does not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AutoModelForCausalLM, AutoTokenizer, Tensor, env } from '@huggingface/transformers';
import { load } from 'bregman-decoders';                                   // the package's own exports
import { createLogitsProcessor, NEUTRAL_GENERATION_OPTIONS } from 'bregman-decoders/transformers';
import { Llama2, Tokenizer } from '../../web/model/llama2.mjs';
import { chain } from './reference.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MODELS = fileURLToPath(new URL('../../models/', import.meta.url));
env.allowRemoteModels = false;
env.localModelPath = MODELS;
const model = await AutoModelForCausalLM.from_pretrained('austen-kjv-2m', { dtype: 'fp32' });
const bd = await load();
const weights = readFileSync(new URL('austen-kjv-2m/model.bin', `file://${MODELS}`));
const V = 4096;

// Two prompts of equal length (no padding): "\n<s>\n" then a few tokens.
const PROMPTS = [[1, 722, 352, 261, 1539], [1, 300, 500, 700, 900]];
const asInputs = (rows) => new Tensor('int64', BigInt64Array.from(rows.flat().map(BigInt)), [rows.length, rows[0].length]);

/** A processor placed before ours: records what transformers.js hands the processors. */
function spy() {
  const calls = [];
  const fn = (input_ids, logits) => {
    calls.push({ ids: input_ids.map((r) => r.map(Number)), dims: Array.from(logits.dims), data: logits.data.slice() });
    return logits;
  };
  fn.calls = calls;
  return fn;
}

async function run(options, { prompts = PROMPTS, steps = 12, adapter } = {}) {
  const recorder = spy();
  const processor = createLogitsProcessor(bd, options, adapter);
  const output = await model.generate({
    inputs: asInputs(prompts), max_new_tokens: steps, do_sample: false,
    logits_processor: [recorder, processor],
  });
  return { recorder, processor, sequences: output.tolist().map((r) => r.map(Number)) };
}

const rowOf = (call, r) => call.data.subarray(r * V, (r + 1) * V);

test('the logits transformers.js passes to the processor equal llama2.mjs\'s forward pass', async () => {
  const { recorder, sequences } = await run({ min_p: 0.02, seed: 3 });
  assert.equal(recorder.calls.length, 12);
  let worst = 0;
  for (let r = 0; r < PROMPTS.length; r++) {
    const m = new Llama2(weights);
    const seq = sequences[r];
    for (let pos = 0; pos + 1 < seq.length; pos++) {
      const want = m.forward(seq[pos], pos);
      const step = pos - (PROMPTS[r].length - 1);
      if (step < 0) continue;
      const call = recorder.calls[step];
      assert.deepEqual(call.dims, [PROMPTS.length, V]);
      assert.deepEqual(call.ids[r], seq.slice(0, pos + 1), 'input_ids are the sequence so far');
      const got = rowOf(call, r);
      for (let i = 0; i < V; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
    }
  }
  // Measured ~2e-5 (float32 ONNX vs the float64-accumulating JS runner); logits span ~[-15, 10].
  assert.ok(worst < 1e-3, `max |ONNX - llama2.mjs| = ${worst}`);
});

test('generate() + the processor draws the same tokens as sampler.sample() on the same rows and seeds', async () => {
  const perRow = [
    { top_p: 0.9, min_p: 0.05, repetition_penalty: 1.3, penalty_last_n: -1, dry_multiplier: 0.8, seed: 7 },
    { bregman: { divergence: 'primal', alpha: 1.5, lambda: 1e-3 }, temperature: 0.9, mirostat: 0, seed: 8 },
  ];
  const { recorder, processor, sequences } = await run(perRow, { steps: 16 });
  for (let r = 0; r < PROMPTS.length; r++) {
    const ref = bd.createSampler(perRow[r]);
    for (const id of PROMPTS[r]) ref.accept(id);
    const generated = sequences[r].slice(PROMPTS[r].length);
    assert.equal(processor.steps[r].length, generated.length);
    recorder.calls.forEach((call, t) => {
      const s = ref.sample(rowOf(call, r));
      assert.equal(generated[t], s.token, `row ${r} step ${t}`);
      assert.deepEqual(processor.steps[r][t], { token: s.token, logprob: s.logprob, k: s.k });
    });
    ref.dispose();
  }
  // Different seeds and chains: the rows are not copies of each other.
  assert.notDeepEqual(processor.steps[0].map((s) => s.k), processor.steps[1].map((s) => s.k));
});

test('mirostat keeps its state across steps; a second generate() with the same processor repeats the first', async () => {
  const o = { mirostat: 2, mirostat_tau: 4, mirostat_eta: 0.2, seed: 11 };
  const recorder = spy();
  const processor = createLogitsProcessor(bd, o);
  const gen = () => model.generate({ inputs: asInputs(PROMPTS), max_new_tokens: 10, do_sample: false, logits_processor: [recorder, processor] });
  const first = (await gen()).tolist().map((r) => r.map(Number));
  const firstSteps = processor.steps.map((r) => r.slice());
  const second = (await gen()).tolist().map((r) => r.map(Number));
  assert.deepEqual(second, first);
  assert.deepEqual(processor.steps, firstSteps);
  // The reference: one sampler per row over the recorded rows of the first call.
  for (let r = 0; r < PROMPTS.length; r++) {
    const ref = bd.createSampler(o);
    for (const id of PROMPTS[r]) ref.accept(id);
    for (let t = 0; t < 10; t++) assert.equal(ref.sample(rowOf(recorder.calls[t], r)).token, first[r][PROMPTS[r].length + t]);
    ref.dispose();
  }
});

test('top_p, min_p and Bregman act: k per step equals decode() on the row and a float64 reference', async () => {
  for (const o of [{ top_p: 0.8 }, { min_p: 0.1 }, { top_p: 0.95, min_p: 0.02 }, { bregman: { alpha: 1.5, lambda: 1e-3 } }]) {
    const { recorder, processor } = await run({ ...o, seed: 5 }, { steps: 10, adapter: { acceptPrompt: false } });
    const ks = [];
    recorder.calls.forEach((call, t) => {
      for (let r = 0; r < PROMPTS.length; r++) {
        const row = rowOf(call, r);
        const { k } = processor.steps[r][t];
        assert.equal(k, bd.decode(row, o).k, `${JSON.stringify(o)} row ${r} step ${t}`);
        if (!o.bregman) assert.equal(k, chain(row, o).ids.length, `float64 reference, ${JSON.stringify(o)}`);
        ks.push(k);
      }
    });
    assert.ok(Math.max(...ks) < V, `${JSON.stringify(o)} truncates`);
    assert.ok(new Set(ks).size > 1, `${JSON.stringify(o)}: k adapts to the row (${ks})`);
  }
});

test('with do_sample: true its top-k draw still takes the forced token; its temperature would act before the chain', async () => {
  const o = { top_p: 0.9, bregman: { alpha: 2, lambda: 1e-3 }, seed: 21 };
  const greedy = await run(o, { steps: 10 });
  const processor = createLogitsProcessor(bd, o);
  const output = await model.generate({
    inputs: asInputs(PROMPTS), max_new_tokens: 10, do_sample: true, top_k: 50, logits_processor: [processor],
  });
  assert.deepEqual(output.tolist().map((r) => r.map(Number)), greedy.sequences);
  assert.deepEqual(processor.steps, greedy.processor.steps);
  // Why the README says to leave transformers.js's temperature unset: its warper runs before the
  // processors, so the chain would see logits / T (and apply its own temperature on top).
  const recorder = spy();
  await model.generate({
    inputs: asInputs(PROMPTS), max_new_tokens: 1, do_sample: true, temperature: 0.5,
    logits_processor: [recorder, createLogitsProcessor(bd, o)],
  });
  const want = greedy.recorder.calls[0].data, got = recorder.calls[0].data;
  for (let i = 0; i < want.length; i += 97) assert.ok(Math.abs(got[i] - want[i] / 0.5) < 1e-4, `logit ${i}`);
});

test('the processor leaves transformers.js one choice: 0 at the drawn token, -Infinity elsewhere', () => {
  const processor = createLogitsProcessor(bd, { top_k: 3, seed: 1 });
  const data = new Float32Array(2 * 6).map((_, i) => Math.sin(i));
  const logits = { data, dims: [2, 6] };
  assert.equal(processor([[1n, 2n], [3n, 4n]], logits), logits);
  for (let r = 0; r < 2; r++) {
    const row = data.subarray(r * 6, r * 6 + 6);
    const token = processor.steps[r][0].token;
    row.forEach((x, i) => assert.equal(x, i === token ? 0 : -Infinity));
  }
  assert.throws(() => createLogitsProcessor({}), TypeError);
  assert.throws(() => createLogitsProcessor(bd, { top_p: 2 }), RangeError);
  assert.throws(() => processor([[1n]], { data: new Float32Array(12), dims: [2, 6] }), /input_ids/);
  assert.throws(() => processor([[1n], [2n]], { data: new Float64Array(12), dims: [2, 6] }), TypeError);
  assert.deepEqual(NEUTRAL_GENERATION_OPTIONS.do_sample, false);
  processor.dispose();
});

test('processor contract: a disposed processor throws TypeError; a refused per-row option frees the probes; dims are integers', () => {
  // Using the processor after dispose() is a TypeError (it makes no new samplers and draws nothing).
  const processor = createLogitsProcessor(bd, { seed: 1 });
  const row = () => ({ data: new Float32Array([1, 2, 3, 4]), dims: [1, 4] });
  processor([[1n]], row());
  processor.dispose();
  processor.dispose();   // idempotent
  assert.throws(() => processor([[1n]], row()), TypeError);
  assert.throws(() => processor.reset(), TypeError);
  assert.equal(processor.samplers.length, 0);
  // A per-row options array refused at its second entry: the first entry's probe sampler is freed.
  const refuse = () => assert.throws(() => createLogitsProcessor(bd, [{ seed: 1 }, { top_p: 2 }]), RangeError);
  for (let i = 0; i < 4; i++) refuse();
  const before = bd.memoryBytes();
  for (let i = 0; i < 500; i++) refuse();
  assert.equal(bd.memoryBytes(), before, 'refused processors must not grow memory');
  // dims whose product is the length but that are not integers would slice rows of different lengths.
  const p2 = createLogitsProcessor(bd, { seed: 1 });
  const data = new Float32Array([1, 2, 3]);
  assert.throws(() => p2([[0n], [0n]], { data, dims: [2, 1.5] }), /dims/);
  assert.deepEqual(Array.from(data), [1, 2, 3]);
  p2.dispose();
});

test('the README\'s transformers.js lines run verbatim: same tokens as a sampler over llama2.mjs', async () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const m = /<!-- transformers\.js example[^>]*-->\s*```js\n([\s\S]*?)```/.exec(readme);
  assert.ok(m, 'README has the transformers.js example');
  const lines = m[1].split('\n');
  const imports = lines.filter((l) => l.startsWith('import '));
  assert.deepEqual(imports, [
    "import { AutoModelForCausalLM, AutoTokenizer } from '@huggingface/transformers';",
    "import { load } from 'bregman-decoders';",
    "import { createLogitsProcessor, NEUTRAL_GENERATION_OPTIONS } from 'bregman-decoders/transformers';",
  ]);
  const body = lines.filter((l) => !l.startsWith('import ')).join('\n') +
    '\nreturn { output, processor, text, token, logprob, k };';
  const AsyncFunction = (async () => {}).constructor;
  const r = await new AsyncFunction('AutoModelForCausalLM', 'AutoTokenizer', 'load', 'createLogitsProcessor',
    'NEUTRAL_GENERATION_OPTIONS', body)(
    AutoModelForCausalLM, AutoTokenizer, load, createLogitsProcessor, NEUTRAL_GENERATION_OPTIONS);
  const seq = r.output.tolist()[0].map(Number);
  const tok = new Tokenizer(readFileSync(new URL('austen-kjv-2m/tokenizer.bin', `file://${MODELS}`)), V);
  const promptText = /tokenizer\('([^']*)'\)/.exec(m[1])[1];
  const prompt = tok.encode(promptText);
  assert.deepEqual(seq.slice(0, prompt.length), prompt, 'the tokenizer encodes the prompt like llama2.mjs');
  assert.equal(seq.length, prompt.length + 12);
  assert.equal(r.token, seq.at(-1));
  assert.ok(r.k >= 1 && r.k < V && r.logprob <= 0);
  let text = '';
  for (let i = prompt.length; i < seq.length; i++) text += tok.decode(seq[i - 1], seq[i]);
  assert.ok(r.text.startsWith(promptText) && r.text.endsWith(text), `decoded ${JSON.stringify(r.text)}`);
  // The same draws as a plain sampler over llama2.mjs's rows (its logits are within ~2e-5 of the ONNX ones).
  const o = /createLogitsProcessor\(await load\(\), (\{.*\})\);/.exec(m[1])[1];
  const ref = bd.createSampler(Function(`return ${o}`)());
  const net = new Llama2(weights);
  prompt.forEach((id) => ref.accept(id));
  for (let pos = 0; pos + 1 < seq.length; pos++) {
    const logits = net.forward(seq[pos], pos);
    if (pos >= prompt.length - 1) assert.equal(ref.sample(logits).token, seq[pos + 1], `position ${pos + 1}`);
  }
});

test('tokenizer.json encodes the held-out text like llama2.mjs\'s Tokenizer', async () => {
  const tokenizer = await AutoTokenizer.from_pretrained('austen-kjv-2m');
  const tok = new Tokenizer(readFileSync(new URL('austen-kjv-2m/tokenizer.bin', `file://${MODELS}`)), V);
  const docs = readFileSync(new URL('austen-kjv-2m/heldout.txt', `file://${MODELS}`), 'utf8').split('\0').filter(Boolean);
  assert.ok(docs.length > 50);
  let tokens = 0;
  for (const d of docs) {
    const text = d.slice(0, 400);                  // llama2.mjs's encoder is O(n^2): prefixes keep this quick
    const want = tok.encode(text);
    assert.deepEqual(tokenizer.encode(text), want, JSON.stringify(text.slice(0, 60)));
    tokens += want.length;
  }
  assert.ok(tokens > 5000);
  for (const s of ['', ' two  spaces', 'naïve café — “quoted”', 'Verse 3:16\n\nAnd', '\u{1F600} emoji']) {
    assert.deepEqual(tokenizer.encode(s), tok.encode(s), JSON.stringify(s));
  }
});

test('the subpath exports ship in the tarball, the ONNX model does not; model files stay <= 25 MB', () => {
  const [info] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--silent'], { cwd: root, encoding: 'utf8' }));
  const files = info.files.map((f) => f.path);
  for (const f of ['dist/transformers.mjs', 'dist/transformers.d.ts', 'dist/webllm.mjs', 'dist/webllm.d.ts']) {
    assert.ok(files.includes(f), `${f} in the tarball`);
  }
  assert.ok(!files.some((f) => f.endsWith('.onnx') || f.startsWith('models/')), 'no model files in the tarball');
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  assert.equal(pkg.exports['./transformers'].default, './dist/transformers.mjs');
  assert.equal(pkg.exports['./webllm'].default, './dist/webllm.mjs');
  const dir = new URL('../../models/austen-kjv-2m/', import.meta.url);
  const size = (u) => readdirSync(u, { withFileTypes: true })
    .reduce((a, e) => a + (e.isDirectory() ? size(new URL(`${e.name}/`, u)) : statSync(new URL(e.name, u)).size), 0);
  assert.ok(size(dir) <= 25 * 1024 * 1024, `models/austen-kjv-2m is ${size(dir)} bytes`);
});

// "Continues" compares all the ids, not only their count and last token: an
// unrelated prompt one token longer that ends in the drawn token does not
// carry the old row's history and draw counter on.
test('a new prompt one token longer that ends in the drawn token starts a new sequence', () => {
  const processor = createLogitsProcessor(bd, { seed: 3, repetition_penalty: 1.3 });
  const V2 = 16;
  const row = () => ({ data: Float32Array.from({ length: V2 }, (_, i) => Math.sin(i + 1)), dims: [1, V2] });
  const a = [1n, 2n, 3n];
  processor([a], row());
  const drawn = BigInt(processor.steps[0][0].token);
  processor([[...a, drawn]], row());  // continues: two steps
  assert.equal(processor.steps[0].length, 2);
  const drawn2 = BigInt(processor.steps[0][1].token);
  const unrelated = [9n, 8n, 7n, 6n, drawn2];  // the old row's length + 1, the drawn token last
  processor([unrelated], row());
  assert.equal(processor.steps[0].length, 1, 'a new sequence');
  assert.equal(processor.samplers[0].step, 1, 'its draw counter restarted');
  assert.equal(processor.samplers[0].historyLength, unrelated.length + 1, 'the new prompt and its draw');
  // The same as a fresh processor on that prompt.
  const fresh = createLogitsProcessor(bd, { seed: 3, repetition_penalty: 1.3 });
  fresh([unrelated], row());
  assert.equal(processor.steps[0][0].token, fresh.steps[0][0].token);
  processor.dispose();
  fresh.dispose();
});
