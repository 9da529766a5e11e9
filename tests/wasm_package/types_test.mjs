// usage: node types_test.mjs PACKAGE_DIR
// Checks blueprinting.d.ts against the module's actual exports: every method
// of the d.ts interface Blueprinting exists on the module with as many
// parameters as its binding takes, and every function the bindings export
// (embind marks each with `argCount`; guard.js keeps the mark) is declared.
// Then checks that metadata() returns {ok, output, errors, notes} whose output is
// JSON listing e.g. total_time with unit "s", and that CommandError declares
// the keys of every error and documents every code of metadata()'s
// error_codes.
import assert from 'node:assert/strict';
import {readFileSync} from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [packageDir] = process.argv.slice(2);
const pkg = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
const {default: createBlueprinting} =
    await import(pathToFileURL(path.resolve(packageDir, pkg.exports['.'].default)).href);
const dts = readFileSync(path.join(packageDir, 'blueprinting.d.ts'), 'utf8');

// The methods of `interface NAME { ... }`: name -> number of parameters. A
// simple scanner: comments removed, then every identifier followed by "(" at
// the interface's top level is a method; its parameters are the commas at
// the top level of its parentheses, plus one.
function interfaceMethods(text, name) {
  const source = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  const start = source.indexOf(`interface ${name} {`);
  assert.ok(start >= 0, `interface ${name} not found in the d.ts`);
  const methods = new Map();
  let depth = 0;
  let i = source.indexOf('{', start) + 1;
  for (; i < source.length; i++) {
    const c = source[i];
    if (c === '}' && depth === 0) break;
    if ('{(<['.includes(c)) depth++;
    if ('})>]'.includes(c) && source[i - 1] !== '=') depth--;  // not "=>"
    if (depth !== 0) continue;
    const match = /^(\w+)\s*\(/.exec(source.slice(i));
    if (!match || /\w/.test(source[i - 1])) continue;
    let inner = 0, commas = 0, empty = true;
    let j = i + match[0].length;
    for (; j < source.length; j++) {
      const d = source[j];
      if (d === ')' && inner === 0) break;
      if ('{(<['.includes(d)) inner++;
      if ('})>]'.includes(d) && source[j - 1] !== '=') inner--;
      if (d === ',' && inner === 0) commas++;
      if (!/\s/.test(d)) empty = false;
    }
    methods.set(match[1], empty ? 0 : commas + 1);
    i = j;
  }
  return methods;
}

const declared = interfaceMethods(dts, 'Blueprinting');
assert.ok(declared.size >= 10, `only ${declared.size} methods parsed from the d.ts`);
const bp = await createBlueprinting();
const exported = new Map(Object.keys(bp)
    .filter((k) => typeof bp[k] === 'function' && typeof bp[k].argCount === 'number')
    .map((k) => [k, bp[k].argCount]));

for (const [name, params] of declared) {
  assert.equal(typeof bp[name], 'function', `d.ts declares ${name}() but the module has none`);
  assert.equal(exported.get(name), params,
               `${name}: the d.ts declares ${params} parameter(s), the binding takes ` +
               `${exported.get(name)}`);
}
for (const name of exported.keys()) {
  assert.ok(declared.has(name), `the module exports ${name}() but the d.ts does not declare it`);
}

const result = bp.metadata();
assert.deepEqual(Object.keys(result).sort(), ['errors', 'notes', 'ok', 'output']);
assert.equal(result.ok, true);
assert.deepEqual(result.errors, []);
assert.deepEqual(result.notes, []);
const metadata = JSON.parse(result.output);
assert.equal(metadata.format, 'blueprinting.metadata/1');
assert.equal(metadata.figures.total_time.unit, 's');
assert.equal(metadata.figures.weight_space.unit, 'bytes');
assert.deepEqual(metadata.enums.datatype.choices.map((c) => c.name),
                 ['float8', 'float16', 'bfloat16', 'float32', 'float4']);
assert.equal(metadata.spec_fields['model.hidden'].type, 'integer');

// CommandError: the d.ts declares exactly the keys every error has, and its
// documentation of `code` names exactly metadata()'s error codes.
function interfaceBody(text, name) {
  const start = text.indexOf(`interface ${name} {`);
  assert.ok(start >= 0, `interface ${name} not found in the d.ts`);
  return text.slice(start, text.indexOf('\n}', start));
}
const errorBody = interfaceBody(dts, 'CommandError');
const errorKeys = [...errorBody.replace(/\/\*[\s\S]*?\*\//g, '').matchAll(/^\s*(\w+)\s*:/gm)]
    .map((m) => m[1]);
assert.deepEqual(errorKeys.sort(), ['code', 'field', 'message']);
const failed = bp.check('{');
assert.equal(failed.ok, false);
for (const e of failed.errors) {
  assert.deepEqual(Object.keys(e).sort(), errorKeys);
  for (const key of errorKeys) assert.equal(typeof e[key], 'string', key);
}
const documented = [...errorBody.matchAll(/"([a-z_]+)"/g)].map((m) => m[1]);
const codes = metadata.error_codes.map((c) => c.name);
assert.deepEqual([...documented].sort(), [...codes].sort(),
                 'the d.ts documents the codes of metadata().error_codes');
for (const c of metadata.error_codes) assert.ok(c.meaning.length > 0, c.name);

console.log(`PASS: ${declared.size} methods declared and exported; metadata lists ` +
            `${Object.keys(metadata.figures).length} figures and ${codes.length} error codes`);
