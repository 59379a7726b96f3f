// The decoder families the demos compare (bin/bregman-generate.mjs and the
// page in web/demo/), as short specs turned into bregman-decoders options.
//   bregman[:primal|dual],alpha=1.5,lambda=1e-3   adaptive k (or k=8: fixed k)
//   top-k:40  top-p:0.9  min-p:0.05  typical:0.9
//   chain     llama.cpp's default chain: top_k 40, typical 1, top_p 0.95, min_p 0.05, temperature 0.8
//   greedy    temperature 0
// ',key=value' adds or overrides any decoder option (e.g. top-p:0.9,temperature=0.7).
// The options are validated by the package itself (RangeError naming the option).

export const FAMILIES = ['bregman', 'top-k', 'top-p', 'min-p', 'typical', 'chain', 'greedy'];

const SINGLE = { 'top-k': 'top_k', 'top-p': 'top_p', 'min-p': 'min_p', typical: 'typical_p' };
const DEFAULTS = { 'top-k': 40, 'top-p': 0.9, 'min-p': 0.05, typical: 0.9 };

/**
 * A spec string -> { family, label, options }. `temperature` is the default
 * temperature (the chain sets its own 0.8 unless `temperature=` is given).
 */
export function parseSpec(spec, temperature = 1) {
  if (typeof spec !== 'string' || !spec.trim()) throw new TypeError('decoder spec: expected a string such as "top-k:40"');
  const [head, ...rest] = spec.trim().split(',');
  const [family, value] = head.split(':').map((s) => s.trim());
  const extra = {};
  for (const kv of rest) {
    const [k, v] = kv.split('=').map((s) => s.trim());
    if (!k || v === undefined) throw new RangeError(`decoder spec "${spec}": expected key=value, got "${kv}"`);
    extra[k] = v === 'primal' || v === 'dual' ? v : Number(v);
  }
  let options;
  if (family === 'bregman') {
    const divergence = value || extra.divergence || 'primal';
    const b = { divergence, alpha: extra.alpha ?? 1.5 };
    if (extra.k !== undefined) b.k = extra.k; else b.lambda = extra.lambda ?? 1e-3;
    for (const key of ['k_min', 'k_max']) if (extra[key] !== undefined) b[key] = extra[key];
    for (const key of ['divergence', 'alpha', 'lambda', 'k', 'k_min', 'k_max']) delete extra[key];
    options = { temperature, bregman: b };
  } else if (SINGLE[family]) {
    options = { temperature, [SINGLE[family]]: value === undefined || value === '' ? DEFAULTS[family] : Number(value) };
  } else if (family === 'chain') {
    options = { top_k: 40, typical_p: 1, top_p: 0.95, min_p: 0.05, temperature: 0.8 };
  } else if (family === 'greedy') {
    options = { temperature: 0 };
  } else {
    throw new RangeError(`decoder spec "${spec}": unknown family "${family}" (one of ${FAMILIES.join(', ')})`);
  }
  Object.assign(options, extra);
  return { family, options, label: describe(family, options) };
}

/** A one-line description of a family's options, for headings and legends. */
export function describe(family, o) {
  const t = o.temperature === undefined ? '' : `, temperature ${o.temperature}`;
  if (family === 'bregman') {
    const b = o.bregman;
    return `Bregman ${b.divergence}, alpha ${b.alpha}, ${b.k !== undefined ? `fixed k ${b.k}` : `lambda ${b.lambda}`}${t}`;
  }
  if (family === 'chain') return `default chain (top_k ${o.top_k}, top_p ${o.top_p}, min_p ${o.min_p}${t})`;
  if (family === 'greedy') return 'greedy (temperature 0)';
  const key = SINGLE[family];
  return `${family} ${o[key]}${t}`;
}

/** The options of a family from the page's form fields (web/demo/). */
export function specFromFields({ family, divergence, alpha, lambda, value }) {
  if (family === 'bregman') return `bregman:${divergence},alpha=${alpha},lambda=${lambda}`;
  if (family === 'chain' || family === 'greedy') return family;
  return `${family}:${value}`;
}
