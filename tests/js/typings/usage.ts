// Type-checked by tsc in typings.test.mjs: the hand-written typings accept
// the contract's calls and reject wrong ones.
import load, { load as namedLoad, type BregmanDecoders, type Distribution, type Sample } from 'bregman-decoders';

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
