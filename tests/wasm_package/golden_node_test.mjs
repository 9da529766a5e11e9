// usage: node golden_node_test.mjs TESTING_MODULE GOLDEN_DIR
// The golden corpus through the wasm module under node (its testing build,
// //wasm:blueprinting_testing, the only one with evaluateCase): for every
// case of golden/MANIFEST, the wasm module's canonical text of every stage must equal
// the stored text byte for byte, and node's own SHA-256 of that text must
// equal the manifest digest (an independent check of the core's hashing).
import assert from 'node:assert/strict';
import {createHash} from 'node:crypto';
import {existsSync, readFileSync} from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [modulePath, goldenDir] = process.argv.slice(2);
const {default: createBlueprinting} =
    await import(pathToFileURL(path.resolve(modulePath)).href);
const bp = await createBlueprinting();

const manifest = new Map();  // case -> Map(stage -> digest)
for (const line of readFileSync(path.join(goldenDir, 'MANIFEST'), 'utf8').split('\n')) {
  if (!line) continue;
  const [name, stage, digest] = line.split(' ');
  if (!manifest.has(name)) manifest.set(name, new Map());
  manifest.get(name).set(stage, digest);
}
assert.ok(manifest.size >= 80, `only ${manifest.size} golden cases`);

const inputs = ['spec.json', 'app.json', 'exe.json', 'sys.json', 'megatron.txt', 'serving.json'];
let stages = 0;
for (const [name, digests] of manifest) {
  const dir = path.join(goldenDir, 'cases', name);
  const files = {};
  for (const input of inputs) {
    const file = path.join(dir, input);
    if (existsSync(file)) files[input] = readFileSync(file, 'utf8');
  }
  const computed = bp.evaluateCase(files);
  assert.deepEqual(computed.map((s) => s.stage).sort(), [...digests.keys()].sort(),
                   `${name}: stages differ from the manifest`);
  for (const {stage, text} of computed) {
    const stored = readFileSync(path.join(dir, 'out', `${stage}.txt`), 'utf8');
    assert.ok(text === stored, `${name} ${stage}: wasm text differs from golden/`);
    const digest = createHash('sha256').update(text, 'utf8').digest('hex');
    assert.equal(digest, digests.get(stage), `${name} ${stage}: node SHA-256 differs`);
    ++stages;
  }
}
console.log(`PASS: ${manifest.size} cases, ${stages} stages identical through wasm and node's SHA-256`);
