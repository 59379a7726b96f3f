// GPU samplers (gd.createSampler): a stateful sampler over GPU rows. Without
// mirostat or adaptive-p its state (history, draw counter, seed) is kept here
// and each step is the stateless call with that history, seed and step (what
// the wasm sampler does); with either a wasm sampler carries mu or the EMA.
import { randomSeed64 } from '../src/rng.js';
import { configuredStages } from './planning.mjs';
import { withOptions } from './restate.mjs';

// Brands a GpuSampler with its decoder (a batch refuses another decoder's).
export const GPU_SAMPLER = Symbol('bregman-decoders GPU sampler');

// A wasm sampler of `options` with `seed`: it validates the options
// (TypeError / RangeError at creation, not at the first draw) and carries
// mirostat's mu and adaptive-p's EMA.
const cpuSampler = (bd, options, seed) => bd.createSampler(withOptions(options, { seed }));

// The GPU samplers' methods; ctx, their decoder's (defineGpuSampler), is this._ctx.
class GpuSamplerBase {
  constructor(ctx, options, state) {
    this[GPU_SAMPLER] = ctx.owner();
    this._ctx = ctx;
    this._options = options;
    this._disposed = false;
    if (state) {
      Object.assign(this, state);
      this._history = state._history.slice();
      this._cpu = state._cpu ? state._cpu.clone() : null;
      return;
    }
    if (options.history !== undefined) throw new RangeError('history is for the stateless calls; feed a sampler with accept()');
    if (options.step !== undefined) throw new RangeError('step is for the stateless calls; a sampler counts its own draws');
    this._seed = options.seed ?? randomSeed64();
    this._history = [];
    this._step = 0;
    // Only a mirostat or adaptive-p sampler keeps its wasm sampler (for mu,
    // for the EMA).
    const cpu = cpuSampler(ctx.bd, options, this._seed);
    const stages = configuredStages(ctx.bd, options);
    if (stages.has('mirostat') || stages.has('adaptive_p')) this._cpu = cpu;
    else { cpu.dispose(); this._cpu = null; }
  }
  // As the wasm sampler: a disposed sampler (or one of a disposed GPU
  // decoder) answers nothing, with a TypeError (README, "Errors").
  _alive() {
    if (this._ctx.isDisposed()) throw new TypeError('this GPU decoder was disposed');
    if (this._disposed) throw new TypeError('this sampler was disposed');
  }
  _stateless() {
    return withOptions(this._options, { seed: this._seed, step: this._step, history: this._seen() });
  }
  // The tokens the stages see: the latest maxHistory.
  _seen() {
    const { maxHistory } = this._ctx.bd;
    return this._history.length > maxHistory ? this._history.slice(-maxHistory) : this._history;
  }
  sample(buffer, rowIndex = 0) { return this._ctx.serial(() => this._sampleNow(buffer, rowIndex)); }
  decode(buffer, rowIndex = 0) { return this._ctx.serial(() => this._decodeNow(buffer, rowIndex)); }
  // The calls' bodies (inside a serial task).
  async _sampleNow(buffer, rowIndex) {
    const ctx = this._checkCall(buffer, rowIndex);
    const r = this._cpu
      ? await ctx.runRow(buffer, rowIndex, this._options, this._seen(), (x) => this._cpu.sample(x), false, true)
      : await ctx.runRow(buffer, rowIndex, this._stateless(), this._seen(), (x, o) => ctx.bd.sample(x, o), true, true);
    this._push(r.token);
    if (!this._cpu) this._step += 1;
    return r;
  }
  async _decodeNow(buffer, rowIndex) {
    const ctx = this._checkCall(buffer, rowIndex);
    return this._cpu
      ? ctx.runRow(buffer, rowIndex, this._options, this._seen(), (x) => this._cpu.decode(x), false, false)
      : ctx.runRow(buffer, rowIndex, this._stateless(), this._seen(), (x, o) => ctx.bd.decode(x, o), true, false);
  }
  // A call's checks (the sampler alive, the row's buffer); returns the ctx.
  _checkCall(buffer, rowIndex) {
    this._alive();
    this._ctx.checkBuffer(buffer, rowIndex);
    return this._ctx;
  }
  _push(token) {
    // As the wasm sampler (src/sampler_state.h): the stages see the latest
    // maxHistory tokens; the buffer drops the oldest maxHistory at twice that.
    const { maxHistory } = this._ctx.bd;
    if (this._history.length === 2 * maxHistory) this._history.splice(0, maxHistory);
    this._history.push(token);
  }
  accept(token) {
    this._alive();
    if (typeof token !== 'number') throw new TypeError(`token must be a number, got ${typeof token}`);
    if (!Number.isInteger(token) || token < 0) throw new RangeError(`token must be an integer >= 0, got ${token}`);
    // As a wasm sampler that has seen a row (this one's rows are all of
    // `vocab`): refused, and not accepted.
    const { vocab } = this._ctx;
    if (token >= vocab) throw new RangeError(`token ${token} is outside the vocabulary [0, ${vocab})`);
    this._cpu?.accept(token);
    this._push(token);
  }
  // An unseeded sampler draws a fresh seed (a new sequence is not the last
  // one again), as the wasm sampler does.
  reset() {
    this._alive();
    if (this._options.seed === undefined) {
      this._seed = randomSeed64();
      if (this._cpu) {
        const cpu = cpuSampler(this._ctx.bd, this._options, this._seed);
        this._cpu.dispose();
        this._cpu = cpu;
      }
    } else {
      this._cpu?.reset();
    }
    this._history = [];
    this._step = 0;
  }
  clone() {
    this._alive();
    return new this.constructor(this._options, this);
  }
  get historyLength() {
    this._alive();
    return Math.min(this._history.length, this._ctx.bd.maxHistory);
  }
  get step() {
    this._alive();
    return this._cpu ? this._cpu.step : this._step;
  }
  // Idempotent, as the wasm sampler's.
  dispose() {
    if (this._disposed) return;
    this._disposed = true;
    this._cpu?.dispose();
    this._cpu = null;
  }
}

/**
 * The GpuSampler class of one GPU decoder (a batch takes its own decoder's
 * samplers only). ctx: { bd, vocab, owner: () => the decoder, isDisposed(),
 * serial(task), checkBuffer(buffer, row),
 * runRow(buffer, row, options, history, cpu, allowRewrite, isSample) }.
 * A sampler's stages see the latest bd.maxHistory accepted tokens
 * (src/sampler_state.h).
 */
export function defineGpuSampler(ctx) {
  return class GpuSampler extends GpuSamplerBase {
    constructor(options, state) {
      super(ctx, options, state);
    }
  };
}
