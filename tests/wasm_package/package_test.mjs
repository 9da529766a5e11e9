// usage: node package_test.mjs PACKAGE_DIR BLUEPRINT SPEC
// Imports the npm package's ES module as a node user would (no options),
// checks its surface against package.json, and checks that analyze() of a
// real spec returns exactly what the native CLI (`blueprint analyze SPEC`)
// prints; so do the embedding modules (blueprinting_slim, blueprinting_import).
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import {readdirSync, readFileSync} from 'node:fs';
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
  const full = path.join(packageDir, file);
  if (file.endsWith('/')) {
    assert.ok(readdirSync(full, {recursive: true}).length > 0, `${file} is empty`);
  } else {
    assert.ok(readFileSync(full).length > 0, `${file} is empty`);
  }
}

// The embedding modules (built at -Oz, web/elements.js's): the CLI's bytes too.
const cliOut = (...args) => {
  const run = spawnSync(blueprint, args, {encoding: 'utf8', maxBuffer: 1 << 28});
  assert.ok(run.status === 0 || run.status === 2, run.stderr);
  return run.stdout;
};
const specText = readFileSync(specPath, 'utf8');
const {default: createSlim} =
    await import(pathToFileURL(path.join(packageDir, 'blueprinting_slim.mjs')).href);
const slim = await createSlim();
assert.equal(slim.search, undefined, 'the slim module has no search');
assert.equal(slim.validate, undefined, 'the slim module has no validation corpus');
assert.ok(slim.analyze(specText).output === native.stdout, 'slim analyze() differs');
assert.ok(slim.explain(specText, 'total_time', undefined).output ===
          cliOut('explain', specPath, 'total_time'), 'slim explain() differs');
assert.ok(slim.schedule(specText, true).output === cliOut('schedule', '--json', specPath),
          'slim schedule() differs');
assert.ok(slim.metadata().output === cliOut('metadata'), 'slim metadata() differs');
const {default: createImport} =
    await import(pathToFileURL(path.join(packageDir, 'blueprinting_import.mjs')).href);
const importer = await createImport();
const presets = path.join(packageDir, 'core-presets');
const system = readFileSync(path.join(presets, 'systems', 'h100_sxm_80g.json'), 'utf8');
const config = readFileSync(path.join(presets, 'models', 'llama3.1-70b.json'), 'utf8');
const flags = ['--tensor-model-parallel-size', '8', '--pipeline-model-parallel-size', '4',
               '--global-batch-size', '128', '--world-size', '256', '--bf16'];
assert.ok(importer.importMegatron(system, flags, config).output ===
          cliOut('import', 'megatron', '--system', 'h100_sxm_80g', '--hf-config', 'llama3.1-70b',
                 '--', ...flags), 'importMegatron() of the import module differs');
console.log(`PASS: ${bp.version()}, analyze(${path.basename(specPath)}) ` +
            `identical to the native CLI (${native.stdout.length} bytes)`);
