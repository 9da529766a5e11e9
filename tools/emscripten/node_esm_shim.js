// Prepended (--extern-pre-js) to every ES module built by bp_embind_module.
// Emscripten 3.1.6's EXPORT_ES6 output still calls CommonJS `require` and reads
// `__dirname` when it runs under node, and ES modules have neither: define them,
// under node only, so that browsers never load 'node:module'.
var require, __filename, __dirname;
if (typeof process == 'object' && typeof process.versions == 'object' &&
    typeof process.versions.node == 'string') {
  const {createRequire} =
      await import(/* webpackIgnore: true */ /* @vite-ignore */ 'node:module');
  require = createRequire(import.meta.url);
  __filename = require('node:url').fileURLToPath(import.meta.url);
  __dirname = require('node:path').dirname(__filename);
}
