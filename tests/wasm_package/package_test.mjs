// usage: node package_test.mjs PACKAGE_DIR BLUEPRINT SPEC
// Imports the npm package's ES module as a node user would (no options),
// checks its surface against package.json, and checks that analyze() of a
// real spec returns exactly what the native CLI (`blueprint analyze SPEC`)
// prints.
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import {readFileSync} from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [packageDir, blueprint, specPath] = process.argv.slice(2);
const pkg = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
const entry = path.resolve(packageDir, pkg.exports['.'].default);
const {default: createBlueprinting} = await import(pathToFileURL(entry).href);

const bp = await createBlueprinting();
assert.equal(bp.version(), `blueprinting ${pkg.version}`);
// The production module carries no test helpers.
assert.equal(bp.evaluateCase, undefined, 'evaluateCase is test-only');
assert.equal(bp.digestDemo, undefined);

// analyze() equals the native CLI byte for byte.
const native = spawnSync(blueprint, ['analyze', specPath], {encoding: 'utf8'});
assert.equal(native.status, 0, `blueprint analyze failed: ${native.stderr}`);
assert.ok(native.stdout.startsWith('{'), 'the CLI printed no report');
const wasm = bp.analyze(readFileSync(specPath, 'utf8'));
assert.deepEqual(wasm.errors, []);
assert.equal(wasm.ok, true);
assert.ok(wasm.output === native.stdout, 'wasm analyze() differs from the native CLI');
assert.equal(JSON.parse(wasm.output).format, 'blueprinting.report/1');

// Each factory call is an independent instance.
const other = await createBlueprinting();
assert.notEqual(other, bp);
assert.equal(other.version(), bp.version());
assert.ok(other.analyze(readFileSync(specPath, 'utf8')).output === native.stdout);
for (const file of pkg.files) {
  assert.ok(readFileSync(path.join(packageDir, file)).length > 0, `${file} is empty`);
}
console.log(`PASS: ${bp.version()}, analyze(${path.basename(specPath)}) ` +
            `identical to the native CLI (${native.stdout.length} bytes)`);
