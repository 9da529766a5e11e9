// Included (--pre-js) in every ES module built by bp_embind_module, inside its
// factory. Under node (where node_esm_shim.js set __filename), read the .wasm
// next to the .mjs synchronously: emscripten 3.1.6 would otherwise fetch() it by
// file path, which node's fetch rejects. Callers may still pass wasmBinary.
if (typeof __filename == 'string' && !Module['wasmBinary']) {
  Module['wasmBinary'] =
      require('node:fs').readFileSync(__filename.replace(/\.mjs$/, '.wasm'));
}
