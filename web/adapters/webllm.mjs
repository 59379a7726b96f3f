// bregman-decoders/webllm: a WebLLM LogitProcessor that runs this library's
// whole chain on the logits and forces the drawn token.
//
// WebLLM (0.2.x) calls, per generated token: processLogits(logits) on the CPU
// copy of the row (synchronously; nothing may be awaited), then adds
// logit_bias, applies its own penalties, softmax(logits / temperature) and its
// top-p draw on the GPU, then processSampledToken(token); resetChat() calls
// resetState(). processLogits draws the token here and returns the row with
// 0 at that token and -Infinity elsewhere, so whatever WebLLM applies after it
// (finite biases, penalties, any temperature, any top_p) still leaves exactly
// one token with non-zero probability.
//
// No import of WebLLM (or of this package): pass a decoder instance that was
// loaded before generation (`await load()`), since processLogits is synchronous.

const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
const getKind = Object.getOwnPropertyDescriptor(TypedArrayPrototype, Symbol.toStringTag).get;
const typedFill = TypedArrayPrototype.fill;

export class BregmanLogitProcessor {
  #sampler;
  #pending = -1;
  #steps = [];

  /**
   * @param {object} bd a loaded decoder (`await load()`)
   * @param {object} [options] decode/sample options, fixed for the processor's life
   */
  constructor(bd, options = {}) {
    if (bd === null || typeof bd !== 'object' || typeof bd.createSampler !== 'function') {
      throw new TypeError('bd must be a loaded bregman-decoders instance (await load())');
    }
    this.#sampler = bd.createSampler(options);
  }

  /** Draws the next token (and accepts it) and returns the row forcing it. In place. */
  processLogits(logits) {
    // The intrinsic getter and fill: a subclass's own length or fill is not
    // what the library reads (it measures the row the same way).
    if (Reflect.apply(getKind, logits, []) !== 'Float32Array') {
      throw new TypeError(`logits must be a Float32Array, got ${Object.prototype.toString.call(logits)}`);
    }
    const s = this.#sampler.sample(logits);
    this.#pending = s.token;
    this.#steps.push({ token: s.token, logprob: s.logprob, k: s.k });
    Reflect.apply(typedFill, logits, [-Infinity]);
    logits[s.token] = 0;
    return logits;
  }

  /**
   * WebLLM reports the token it sampled. After processLogits it is the forced
   * token, already accepted by the draw; a token that arrives without a draw
   * (none pending) is accepted as history.
   */
  processSampledToken(token) {
    if (typeof token !== 'number') throw new TypeError(`token must be a number, got ${typeof token}`);
    if (!Number.isInteger(token) || token < 0) throw new RangeError(`token must be a non-negative integer, got ${token}`);
    if (this.#pending < 0) {
      this.#sampler.accept(token);
      return;
    }
    const forced = this.#pending;
    this.#pending = -1;
    if (token !== forced) {
      throw new RangeError(`processSampledToken: token: WebLLM sampled ${token} but the processor forced ${forced}; ` +
        'something after the processor changed the row or the reported token');
    }
  }

  /** Called by WebLLM's resetChat(): forgets history and mirostat state, restarts the draw counter. */
  resetState() {
    this.#sampler.reset();
    this.#pending = -1;
    this.#steps = [];
  }

  /** One {token, logprob, k} per processLogits call since the last reset. */
  get steps() { return this.#steps; }

  /** The underlying stateful sampler. */
  get sampler() { return this.#sampler; }

  /** Frees the sampler. */
  dispose() {
    this.#sampler.dispose();
    // No draw is pending any more: a later processSampledToken reaches the
    // disposed sampler and throws its TypeError.
    this.#pending = -1;
  }
}

/**
 * WebLLM generation options at which it leaves the forced row alone (they are
 * also its defaults); on the forced row non-neutral values cannot change the token, only cost work.
 */
export const NEUTRAL_GENERATION_OPTIONS = Object.freeze({
  temperature: 1,
  top_p: 1,
  repetition_penalty: 1,
  frequency_penalty: 0,
  presence_penalty: 0,
});

export default BregmanLogitProcessor;
