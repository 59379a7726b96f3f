// The decoders the eval compares, as package options. Every decoder runs with
// `temperature` first (samplers: ['temperature', stage]): the truncation sees
// softmax(logits / T), as in Hugging Face's warper order and the paper's
// experiments. (llama.cpp's default order truncates before temperature; then
// top-p, min-p and the cutoffs would not see T at all.)

const bregman = (divergence, alpha) => (lambda) => ({
  samplers: ['temperature', 'bregman'], bregman: { divergence, alpha, lambda },
});
const stage = (name) => (v) => ({ samplers: ['temperature', name], [name]: v });

// Sweeps chosen so each family's mean k runs from about 1 to a few hundred
// on this model at temperature 1, with about 10 points each (the sweep's cost
// is rows x points; Bregman alpha 0.5 and the alpha 1.5 dual, solved by
// Newton iterations, are the slowest decoders, about 1-2 ms a row here).
const logspace = (a, b, n) => Array.from({ length: n }, (_, i) => Number((10 ** (a + ((b - a) * i) / (n - 1))).toPrecision(3)));

export const FAMILIES = [
  { family: 'top-k', param: 'top_k', values: [1, 2, 3, 5, 10, 20, 40, 80, 150, 300, 500], options: stage('top_k') },
  { family: 'top-p', param: 'top_p', values: [0.05, 0.2, 0.4, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98], options: stage('top_p') },
  { family: 'min-p', param: 'min_p', values: [0.7, 0.4, 0.2, 0.1, 0.05, 0.03, 0.02, 0.01, 0.005, 0.002], options: stage('min_p') },
  { family: 'typical', param: 'typical_p', values: [0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95], options: stage('typical_p') },
  { family: 'epsilon', param: 'epsilon_cutoff', values: [0.3, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 3e-4, 1e-4], options: stage('epsilon_cutoff') },
  { family: 'top-n-sigma', param: 'top_n_sigma', values: [0.1, 0.25, 0.5, 1, 1.5, 2, 2.5, 3, 4], options: stage('top_n_sigma') },
  // The hyperparameter-free p-less and p-less-norm: one point each per T.
  { family: 'p-less', param: 'p_less', values: [true], options: stage('p_less') },
  { family: 'p-less-norm', param: 'p_less', values: ['norm'], options: stage('p_less') },
  { family: 'top-h', param: 'top_h', values: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], options: stage('top_h') },
  { family: 'bregman primal a=0.5', param: 'lambda', values: logspace(0.5, -1.7, 10), options: bregman('primal', 0.5), bregman: true },
  { family: 'bregman primal a=1', param: 'lambda', values: logspace(0, -4.5, 10), options: bregman('primal', 1), bregman: true },
  { family: 'bregman primal a=1.5', param: 'lambda', values: logspace(-0.5, -6, 10), options: bregman('primal', 1.5), bregman: true },
  { family: 'bregman primal a=2', param: 'lambda', values: logspace(-0.5, -7, 10), options: bregman('primal', 2), bregman: true },
  { family: 'bregman dual a=1.5', param: 'lambda', values: logspace(-0.5, -6, 10), options: bregman('dual', 1.5), bregman: true },
  { family: 'bregman dual a=2', param: 'lambda', values: logspace(-0.5, -7, 10), options: bregman('dual', 2), bregman: true },
];

/** Untruncated sampling from softmax(logits / T): the reference point. */
export const PURE = { family: 'pure sampling', param: null, value: null, options: { samplers: ['temperature'] } };

/** The families that are also run in open-ended generation (dual a=2 is primal a=2: asserted, not re-run). */
export const GEN_FAMILIES = ['top-k', 'top-p', 'min-p', 'typical', 'epsilon', 'top-n-sigma',
  'p-less', 'p-less-norm', 'top-h',
  'bregman primal a=1.5', 'bregman primal a=2', 'bregman dual a=1.5'];

/**
 * Settings run in generation at each temperature beside the matched-k ones:
 * a method's published default (Top-H's alpha = 0.4), and llama.cpp's
 * adaptive-p at its documented general-purpose target 0.5 (decay 0.9) after
 * min-p 0.05, the pairing its author recommends. Adaptive-p is a final
 * selector with a state (the EMA of the drawn tokens' probabilities), not a
 * truncation: it has no teacher-forcing sweep, and generation runs it through
 * a sampler (worker.mjs), one per prompt.
 */
export const PAPER_DEFAULTS = [
  { family: 'top-h', param: 'top_h', value: 0.4, options: stage('top_h')(0.4) },
  { family: 'adaptive-p', param: 'adaptive_target', value: 0.5,
    options: { samplers: ['temperature', 'min_p', 'adaptive_p'], min_p: 0.05, adaptive_target: 0.5, adaptive_decay: 0.9 } },
];

export function withTemperature(options, T) {
  return { ...options, temperature: T };
}
