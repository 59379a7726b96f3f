// Samplers (bd.createSampler): a wasm sampler with its own state (history,
// mirostat's mu, draw counter), over the instance's wasm decoder.
import { checkInteger } from './checks.js';
import { SAMPLER_BRAND } from './brand.js';
import { checkLogits } from './inputs.js';
import { checkStatus, outOfMemory, readDistribution, readSample } from './results.js';
import { registryOf, stagesOfMask } from './stage_table.js';

// Samplers live in their instance's wasm heap: one forgotten without dispose()
// is freed when the garbage collector reclaims it (the held value is the
// Embind handle, never the Sampler itself).
const samplerRegistry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((handle) => { if (!handle.isDeleted()) handle.delete(); })
  : null;

// A row's checks for a sampler that has seen rows of `vocab` (null: none yet).
// Returns the row's length.
function checkVocab(M, inputs, vocab, logits) {
  const n = checkLogits(M, logits, inputs);
  if (vocab !== null && n !== vocab) {
    throw new RangeError(`sampler: logits length ${n} differs from the vocabulary ` +
      `size ${vocab} this sampler was used with (reset() forgets it)`);
  }
  return n;
}

// The chain of a sampler, in order, as stage names: the stages its options
// ask for (the core's StageSpec::configured, bit i for stage id i), and
// temperature always.
function chainName(M, options, configured) {
  const { stages, defaultOrder } = registryOf(M);
  const on = stagesOfMask(stages, configured);
  return (options?.samplers ?? defaultOrder).filter((s) => s === 'temperature' || on.has(s)).join(' -> ') +
    ' -> dist';
}

/**
 * The Sampler class of one instance. ctx: { M, raw, inputs, live, guarded,
 * owner: () => the instance's API object, freshRaw(options): a new wasm
 * sampler for the options with a new random seed }.
 */
export function defineSampler(ctx) {
  const { M, raw, inputs, live, guarded } = ctx;

  class Sampler {
    /** @param {object} options fixed for the sampler's life */
    constructor(options, rawSampler, flags, vocab, seeded) {
      this._raw = rawSampler;
      this._options = options;
      this._flags = flags;
      // Without a seed the sampler's stream came from the entropy source, and
      // reset() draws a new one (a new sequence is not the last one again).
      this._seeded = seeded;
      // The vocabulary size of the first row seen (reset() forgets it): a
      // sampler's history is token ids of one model's vocabulary.
      this._vocab = vocab;
      this[SAMPLER_BRAND] = ctx.owner();
      samplerRegistry?.register(this, rawSampler, this);
    }
    _alive() {
      live();
      if (this._raw === null) throw new TypeError('this sampler was disposed');
    }
    // Runs `call(rawSampler, n)` on the row; the call's unguarded body.
    _run(logits, call) {
      this._alive();
      const n = checkVocab(M, inputs, this._vocab, logits);
      inputs.writeLogits(logits, inputs.inputRow(logits));
      checkStatus(raw, call(this._raw, n));
      this._vocab = n;
    }
    _sample(logits) {
      this._run(logits, (s, n) => raw.sampleWith(s, n));
      return readSample(M, raw, this._flags);
    }
    _decode(logits) {
      this._run(logits, (s, n) => raw.decodeWith(s, n));
      return readDistribution(M, raw, this._flags.objective);
    }
    /** Draws the next token and accepts it (history, mirostat, step). */
    sample(logits) { return guardedSample(this, logits); }
    /** The processed distribution at the current state (nothing is accepted). */
    decode(logits) { return guardedDecode(this, logits); }
    /** Feeds a token that was not drawn here (a prompt token, a forced one). */
    accept(token) {
      this._alive();
      checkInteger('token', token, 0);
      const bound = this._vocab ?? 2147483648;
      if (token >= bound) {
        throw new RangeError(`token ${token} is outside the ${this._vocab === null ? 'int32 range'
          : `vocabulary [0, ${this._vocab})`}`);
      }
      this._raw.accept(token);
    }
    /**
     * Forgets the history, mirostat state and vocabulary; the draw counter
     * restarts. A seeded sampler then draws its sequence again; an unseeded
     * one draws from a fresh random seed.
     */
    reset() {
      this._alive();
      if (this._seeded) {
        this._raw.reset();
      } else {
        const fresh = ctx.freshRaw(this._options);
        samplerRegistry?.unregister(this);
        this._raw.delete();
        this._raw = fresh;
        samplerRegistry?.register(this, fresh, this);
      }
      this._vocab = null;
    }
    /** An independent copy with the same options and state. */
    clone() {
      this._alive();
      const copy = raw.cloneSampler(this._raw);
      if (copy === null) throw outOfMemory('a sampler\'s clone');
      return new Sampler(this._options, copy, this._flags, this._vocab, this._seeded);
    }
    /** Number of accepted tokens kept (bounded; see docs/samplers.md). */
    get historyLength() { this._alive(); return this._raw.historyLength(); }
    /** Index of the next draw in the sampler's random stream. */
    get step() { this._alive(); return this._raw.step(); }
    /** The chain, in order, as stage names. */
    get name() {
      this._alive();
      return chainName(M, this._options, this._raw.configuredStages());
    }
    /** Frees the sampler's wasm memory now (otherwise the garbage collector does). */
    dispose() {
      if (this._raw !== null) {
        samplerRegistry?.unregister(this);
        this._raw.delete();
        this._raw = null;
      }
    }
  }
  const guardedSample = guarded('sample', (s, logits) => s._sample(logits));
  const guardedDecode = guarded('decode', (s, logits) => s._decode(logits));
  return Sampler;
}

/** A new wasm sampler of the options in raw's block (null from the module: no memory left). */
export function createRawSampler(raw) {
  const s = raw.createSampler();
  if (s === null) throw outOfMemory('a new sampler');
  return s;
}

/**
 * bd.createSampler(given): a Sampler of its own copy of the options. ctx:
 * { M, raw, block (the option block), Sampler, randomSeed() }.
 */
export function newSampler(ctx, given) {
  const { M, raw, block } = ctx;
  // Read once, here: the sampler's options for its life (name, an unseeded reset()).
  const options = block.snapshot(given);
  if (options?.history !== undefined) {
    throw new RangeError('history is for the stateless calls; feed a sampler with accept()');
  }
  if (options?.step !== undefined) {
    throw new RangeError('step is for the stateless calls; a sampler counts its own draws');
  }
  const seeded = block.write(options);
  // A sampler's stages see its latest MAX_HISTORY tokens: a longer window
  // would silently read fewer than asked.
  for (const name of ['penalty_last_n', 'dry_penalty_last_n']) {
    const w = options?.[name];
    if (w > M.MAX_HISTORY) {
      throw new RangeError(`${name} ${w} exceeds the ${M.MAX_HISTORY} latest tokens a sampler's stages ` +
        'see (-1 reads all of them; the stateless calls take a history of any length)');
    }
  }
  const flags = block.resultFlags();
  if (!seeded) block.setSeed(ctx.randomSeed());
  checkStatus(raw, raw.validate());
  return new ctx.Sampler(options, createRawSampler(raw), flags, null, seeded);
}
