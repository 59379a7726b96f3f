'use strict';
// Entry for Node's require() (and, through node.mjs, Node's import): the
// single-file Node build, which embeds its .wasm.
const createBregmanModule = require('./bregman_decoders_node.cjs');
const { createApi } = require('./api.cjs');
const { randomInt } = require('node:crypto');

function entropy32() { return randomInt(0, 2 ** 32 - 1); }

/** Instantiates the wasm module. Call once and reuse the result. */
async function load() {
  const M = await createBregmanModule();
  return createApi(M, entropy32);
}

module.exports = { load, default: load };
