// usage: node package_test.mjs PACKAGE_DIR EXPECTED_DIGEST
// Imports the npm package's ES module as a node user would (no options) and
// checks its surface against package.json and the native build.
import assert from 'node:assert/strict';
import {readFileSync} from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [packageDir, expectedDigest] = process.argv.slice(2);
const pkg = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
const entry = path.resolve(packageDir, pkg.exports['.'].default);
const {default: createBlueprinting} = await import(pathToFileURL(entry).href);

const bp = await createBlueprinting();
assert.equal(bp.version(), `blueprinting ${pkg.version}`);
assert.equal(bp.digestDemo(), expectedDigest, 'wasm digest differs from native');
// Each factory call is an independent instance.
const other = await createBlueprinting();
assert.notEqual(other, bp);
assert.equal(other.version(), bp.version());
for (const file of pkg.files) {
  assert.ok(readFileSync(path.join(packageDir, file)).length > 0, `${file} is empty`);
}
console.log(`PASS: ${bp.version()}, ${bp.digestDemo()}`);
