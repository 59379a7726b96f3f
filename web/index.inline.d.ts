// bregman-decoders/inline: the browser entry with its .wasm embedded (nothing
// fetched); the same API as the package's main entry.
export * from './index.js';
export { default } from './index.js';
