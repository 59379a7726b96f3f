// Type-checked by tsc in typings.test.mjs: the hand-written typings accept
// the contract's calls and reject wrong ones.
import load, { load as namedLoad, type BregmanDecoders, type Distribution, type Sample, type Sampler } from 'bregman-decoders';

async function main(): Promise<void> {
  const bd: BregmanDecoders = await load();
  const again = await namedLoad();
  const logits = new Float32Array(10);
  const d: Distribution = bd.decode(logits, { temperature: 0.7, top_k: 40, top_p: 0.9, min_p: 0.05, min_keep: 1 });
  const ids: Int32Array = d.ids;
  const probs: Float32Array = d.probs;
  const s: Sample = bd.sample(logits, { seed: 42, bregman: { divergence: 'primal', alpha: 1.5, lambda: 1e-3 } });
  const token: number = s.token + s.k + s.logprob;
  bd.decode(logits, { bregman: { divergence: 'dual', alpha: 2, k: 5 } });
  bd.sample(logits, { seed: 1n, step: 3 });
  // @ts-expect-error divergence is a closed set
  bd.decode(logits, { bregman: { divergence: 'sideways', lambda: 1 } });
  // @ts-expect-error lambda and k are exclusive
  bd.decode(logits, { bregman: { alpha: 2, k: 5, lambda: 1 } });
  // @ts-expect-error logits must be a Float32Array
  bd.decode([1, 2, 3]);
  // @ts-expect-error top_k is a number
  bd.decode(logits, { top_k: '5' });
  void ids; void probs; void token; void again;
  bd.dispose();
}
void main;

// The extensions: samplers, batches, stage order, logprobs.
async function extensions(): Promise<void> {
  const bd = await load();
  const logits = new Float32Array(8);
  const s: Sampler = bd.createSampler({ repetition_penalty: 1.1, penalty_last_n: 64, mirostat: 2, seed: 3 });
  s.accept(1);
  const r: Sample = s.sample(logits);
  const lp: number | undefined = r.raw_logprob;
  const top = bd.sample(logits, { top_logprobs: 3, logprobs: true }).top_logprobs;
  const c: Sampler = s.clone();
  c.reset();
  const d: Distribution = s.decode(logits);
  const rows: Sample[] = bd.sampleBatch(new Float32Array(16), 8, [s, { top_k: 2 }]);
  const dists: Distribution[] = bd.decodeBatch(new Float32Array(16), 8, { min_p: 0.1 });
  bd.decode(logits, { samplers: ['top_k', 'temperature', 'bregman'], top_k: 5, bregman: { alpha: 2, lambda: 1e-3 } });
  bd.decode(logits, { logit_bias: { 3: -Infinity }, banned_tokens: [1], allowed_tokens: new Int32Array([2, 3]) });
  bd.decode(logits, { history: [1, 2], dry_multiplier: 0.8, dry_sequence_breakers: [0], no_repeat_ngram_size: 3 });
  bd.sample(logits, { allowed_mask: new Int32Array(1), top_p: 0.9 });
  bd.createSampler({ allowed_mask: new Uint32Array([0xffffffff]) });
  // @ts-expect-error allowed_mask is a typed array of 32-bit words, not an id list
  bd.decode(logits, { allowed_mask: [1, 2] });
  // @ts-expect-error unknown stage name
  bd.decode(logits, { samplers: ['top_q'] });
  bd.createSampler({ mirostat: 1, mirostat_tau: 3 });
  // @ts-expect-error mirostat is 0, 1 or 2
  bd.createSampler({ mirostat: 3 });
  // @ts-expect-error a sampler takes no history (use accept)
  bd.createSampler({ history: [1] });
  void lp; void top; void d; void rows; void dists; void c;
}
void extensions;

// Zero copy: write the row into the module's own input view.
async function zeroCopy(): Promise<void> {
  const bd = await load();
  const view: Float32Array = bd.inputBuffer(32000);
  view.fill(0);
  const s: Sample = bd.sample(view, { seed: 1 });
  void s;
  bd.decode(view, { top_p: 0.9, sorted: false });
  // @ts-expect-error vocab is a number
  bd.inputBuffer('32000');
}
void zeroCopy;
