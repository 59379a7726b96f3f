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
//
// Order: a call (sample, decode, a batch row) runs when its turn comes in
// the decoder's queue; accept(), reset(), clone() and dispose() act in the
// order they are made relative to the calls: with none of this sampler's
// calls pending they act at once, else at the end of the last call made
// before them (before its promise settles), so `p = s.sample(buf);
// s.accept(t); await p` is the CPU sampler's `s.sample(row); s.accept(t)`.
// `step` and `historyLength` read the state after the calls that have ended.
class GpuSamplerBase {
  constructor(ctx, options, source) {
    this[GPU_SAMPLER] = ctx.owner();
    this._ctx = ctx;
    this._options = options;
    this._disposed = false;  // dispose() was called: no new call or method
    this._closed = false;    // its turn came: calls queued after it refuse
    // The last call made ({ ops, done }): methods made after it wait in ops.
    this._last = null;
    if (source) {
      this._cpu = null;
      this._copyFrom(source);
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
  _copyFrom(source) {
    this._seed = source._seed;
    this._history = source._history.slice();
    this._step = source._step;
    const old = this._cpu;
    this._cpu = source._cpu ? source._cpu.clone() : null;
    old?.dispose();
  }
  // As the wasm sampler: a disposed sampler (or one of a disposed GPU
  // decoder) answers nothing, with a TypeError (README, "Errors").
  _alive() {
    if (this._ctx.isDisposed()) throw new TypeError('this GPU decoder was disposed');
    if (this._disposed) throw new TypeError('this sampler was disposed');
  }
  // A call begins (made, not yet run) and ends (settled): the methods made
  // in between run at its end, in the order they were made.
  _begin() {
    this._last = { ops: [], done: false };
    return this._last;
  }
  _end(call) {
    call.done = true;
    for (const op of call.ops) op();
  }
  // op() now when no call of this sampler is pending, else at the end of the
  // last one made.
  _inOrder(op) {
    const call = this._last;
    if (call !== null && !call.done) call.ops.push(op);
    else op();
  }
  _queued(fn) {
    const call = this._begin();
    return this._ctx.serial(async () => {
      try { return await fn(); } finally { this._end(call); }
    });
  }
  _stateless() {
    return withOptions(this._options, { seed: this._seed, step: this._step, history: this._seen() });
  }
  // The tokens the stages see: the latest maxHistory.
  _seen() {
    const { maxHistory } = this._ctx.bd;
    return this._history.length > maxHistory ? this._history.slice(-maxHistory) : this._history;
  }
  sample(buffer, rowIndex = 0) { return this._queued(() => this._sampleNow(buffer, rowIndex)); }
  decode(buffer, rowIndex = 0) { return this._queued(() => this._decodeNow(buffer, rowIndex)); }
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
  // A call's checks when its turn comes (counted as a call first): the
  // sampler not disposed before it, the row's buffer; returns the ctx.
  _checkCall(buffer, rowIndex) {
    this._ctx.countCall();
    if (this._ctx.isDisposed()) throw new TypeError('this GPU decoder was disposed');
    if (this._closed) throw new TypeError('this sampler was disposed');
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
    this._inOrder(() => {
      this._cpu?.accept(token);
      this._push(token);
    });
  }
  // An unseeded sampler draws a fresh seed (a new sequence is not the last
  // one again), as the wasm sampler does.
  reset() {
    this._alive();
    this._inOrder(() => this._resetNow());
  }
  _resetNow() {
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
  // The state after the calls already made: copied now, and again when
  // their turn has passed if some are pending.
  clone() {
    this._alive();
    const copy = new this.constructor(this._options, this);
    const call = this._last;
    if (call !== null && !call.done) {
      call.ops.push(() => copy._copyFrom(this));
      copy._last = call;  // the copy's own methods wait for the copy
    }
    return copy;
  }
  get historyLength() {
    this._alive();
    return Math.min(this._history.length, this._ctx.bd.maxHistory);
  }
  get step() {
    this._alive();
    return this._cpu ? this._cpu.step : this._step;
  }
  // Idempotent, as the wasm sampler's; the calls made before it still run.
  dispose() {
    if (this._disposed) return;
    this._disposed = true;
    this._inOrder(() => {
      this._closed = true;
      this._cpu?.dispose();
      this._cpu = null;
    });
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
