// usage: node write_metadata.mjs MODULE_FILES...  (the slim module's .mjs and .wasm)
// Prints the module's metadata(), which is `blueprint metadata`'s output
// (tests/wasm_package/package_test), for web/elements.js to fetch as
// metadata.json: figure units and enum choices without a call into the
// module on the way to the first figure.
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const entry = process.argv.slice(2).find((f) => f.endsWith('.mjs'));
const {default: createBlueprinting} = await import(pathToFileURL(path.resolve(entry)).href);
const result = (await createBlueprinting()).metadata();
if (!result.ok) {
  console.error(result.errors.map((e) => e.message).join('\n'));
  process.exit(1);
}
process.stdout.write(result.output);
