// usage: node hostile_input_test.mjs BLUEPRINT PACKAGE_DIR TESTING_MODULE
// Hostile input through the npm package: every method returns {ok: false,
// errors} (never throws, never traps) for lone surrogates, oversized
// strings, objects that throw, and running out of memory; an error that
// quotes input is byte-identical to the native CLI's; and every error is
// {field, message, code}.
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [blueprint, packageDir, testingModule] = process.argv.slice(2);
const {default: createBlueprinting} =
    await import(pathToFileURL(path.resolve(packageDir, 'blueprinting.mjs')).href);
const bp = await createBlueprinting();

const read = (p) => readFileSync(p, 'utf8');
const v01 = 'golden/cases/oracle_v01_126M_single_gpu';
const app = read(`${v01}/app.json`);
const exe = read(`${v01}/exe.json`);
const sys = read(`${v01}/sys.json`);
const spec = read('golden/cases/spec_1f1b/spec.json');
const megatron = read('golden/cases/megatron_175b_full/megatron.txt').trim().split(/\s+/);
const searchFlags = ['--procs', '1', '--max-batch', '1', '--datatype', 'float16', '--top', '1'];
const MiB = 1 << 20;
const tooLarge = (name) =>
    `${name}: input is larger than the limit of ${16 * MiB} bytes (16 MiB)`;

// Every method with valid arguments, and where each string argument goes.
const calls = {
  check: {args: [spec], names: ['spec']},
  canonical: {args: [spec], names: ['spec']},
  analyze: {args: [spec], names: ['spec']},
  digest: {args: [spec], names: ['spec']},
  explain: {args: [spec, 'total_time'], names: ['spec', 'figure']},
  calculon: {args: [app, exe, sys], names: ['app', 'exe', 'system']},
  importCalculon: {args: [app, exe, sys], names: ['app', 'exe', 'system']},
  importMegatron: {args: [sys, megatron], names: ['system', 'args']},
  search: {args: [app, sys, searchFlags], names: ['app', 'system', 'args']},
  mergeSearch: {args: [[0, 1].map((i) => bp.search(app, sys,
                    [...searchFlags, '--json', '--partition', `${i}/2`]).output)],
                names: ['parts']},
};
for (const [method, {args}] of Object.entries(calls)) {
  assert.equal(bp[method](...args).ok, true, `${method} accepts the valid input`);
}

// Calls bp[method] with argument `index` replaced (inside the array for args).
function callWith(method, index, value) {
  const args = calls[method].args.slice();
  if (Array.isArray(args[index])) {
    args[index] = args[index].slice();
    args[index][1] = value;
  } else {
    args[index] = value;
  }
  let result;
  assert.doesNotThrow(() => { result = bp[method](...args); }, method);
  return result;
}

// The messages of a result's errors ({field, message} objects).
const messages = (result) => result.errors.map((e) => e.message);

// The parts of a search merge into the whole search's output; parts that
// are not such outputs are named.
assert.equal(bp.mergeSearch(...calls.mergeSearch.args).output,
             bp.search(app, sys, [...searchFlags, '--json']).output);
assert.deepEqual(messages(bp.mergeSearch(['{}', calls.mergeSearch.args[0][0]])),
                 ['parts[0]: not the JSON output of a search with --partition I/N (no "partition" ' +
                  'object or "top" array)']);
assert.deepEqual(messages(bp.mergeSearch('x')), ['mergeSearch: parts must be an array of strings']);

// 1. A lone surrogate in every string argument is refused, naming it.
let refused = 0;
for (const [method, {names}] of Object.entries(calls)) {
  names.forEach((name, index) => {
    for (const [text, unit, at] of [['ab\uD800cd', 'D800', 2], ['\uDC00', 'DC00', 0],
                                     ['x\uD83D', 'D83D', 1]]) {
      const result = callWith(method, index, text);
      const argName = Array.isArray(calls[method].args[index]) ? `${name}[1]` : name;
      assert.equal(result.ok, false, `${method} ${name}`);
      assert.deepEqual(result.errors, [{field: argName,
        message: `${argName}: not well-formed UTF-16: lone surrogate U+${unit} at index ${at}`,
        code: 'syntax'}]);
      ++refused;
    }
  });
}
// A surrogate pair is fine: the core sees the 4-byte UTF-8 character.
const emojiSpec = bp.check(spec.replace('{', '{"\uD83D\uDE00": 1,'));
assert.equal(emojiSpec.ok, false);
assert.ok(emojiSpec.errors.some((e) => e.message.includes('["\uD83D\uDE00"]')), messages(emojiSpec).join('\n'));

// 2. Oversized strings: 17 MiB (refused before conversion, the core's
// message), 320 MB (must not trap the module), and 9 Mi '€' (27 MiB of UTF-8,
// refused by the core itself with the same message).
const big17 = 'x'.repeat(17 * MiB);
for (const [method, {names}] of Object.entries(calls)) {
  names.forEach((name, index) => {
    const result = callWith(method, index, big17);
    assert.equal(result.ok, false, `${method} ${name} 17 MiB`);
    assert.deepEqual(messages(result), [tooLarge(name)], `${method} ${name}`);
  });
}
const big320 = 'y'.repeat(320e6);
for (const method of ['check', 'analyze', 'explain', 'calculon', 'importCalculon', 'search']) {
  const result = callWith(method, 0, big320);
  assert.equal(result.ok, false, method);
  assert.deepEqual(messages(result), [tooLarge(calls[method].names[0])], method);
}
assert.deepEqual(messages(bp.importMegatron(sys, ['--num-layers', big320])), [tooLarge('args')]);
const euros = '€'.repeat(9 * MiB);
assert.deepEqual(messages(bp.check(euros)), [tooLarge('spec')]);
assert.deepEqual(messages(bp.calculon(app, euros, sys)), [tooLarge('exe')]);
// An array too long to hold within the limit is refused without reading it.
assert.deepEqual(messages(bp.importMegatron(sys, new Array(2 ** 32 - 1))), [tooLarge('args')]);

// 3. Not strings, missing arguments, objects whose getters throw.
assert.deepEqual(messages(bp.check(42)), ['spec: expected a string, got number']);
assert.deepEqual(messages(bp.check()), ['spec: expected a string, got undefined']);
assert.deepEqual(messages(bp.explain(spec)), ['figure: expected a string, got undefined']);
// explain's optional depth: undefined is every level, else an integer >= 0.
assert.equal(bp.explain(spec, 'total_time', undefined).output, bp.explain(spec, 'total_time').output);
assert.equal(bp.explain(spec, 'total_time', 0).ok, true);
// The largest exact integer is every level, as the CLI's largest --depth is.
assert.equal(bp.explain(spec, 'total_time', Number.MAX_SAFE_INTEGER).output,
             bp.explain(spec, 'total_time').output);
for (const [depth, got] of [[-1, '-1'], [1.5, '1.5'], [NaN, 'nan'], [Infinity, 'inf'],
                            [-Infinity, '-inf'], [2 ** 53, '9007199254740992'],
                            ['1', 'string'], [null, 'object']]) {
  const result = bp.explain(spec, 'total_time', depth);
  assert.deepEqual(result.errors, [{field: 'depth',
                                    message: 'depth: expected an integer from 0 to ' +
                                             `9007199254740991 or undefined, got ${got}`,
                                    code: typeof depth == 'number' ? 'out_of_range' : 'wrong_type'}]);
}
assert.deepEqual(messages(bp.importMegatron(sys, 'x')),
                 ['importMegatron: args must be an array of strings']);
const throwing = ['--num-layers'];
Object.defineProperty(throwing, 1, {get() { throw new Error('boom'); }, enumerable: true});
assert.deepEqual(messages(bp.importMegatron(sys, throwing)),
                 ['importMegatron: an argument could not be read: Error: boom']);
// importMegatron's optional Hugging Face config: undefined is none, else a
// well-formed string within the limit.
assert.equal(bp.importMegatron(sys, megatron, undefined).output, bp.importMegatron(sys, megatron).output);
assert.deepEqual(bp.importMegatron(sys, megatron, 7).errors,
                 [{field: 'hf_config', message: 'hf_config: expected a string, got number',
                   code: 'wrong_type'}]);
assert.deepEqual(messages(bp.importMegatron(sys, megatron, null)),
                 ['hf_config: expected a string, got object']);
assert.deepEqual(messages(bp.importMegatron(sys, megatron, 'a\uD800')),
                 ['hf_config: not well-formed UTF-16: lone surrogate U+D800 at index 1']);
assert.deepEqual(messages(bp.importMegatron(sys, megatron, big17)), [tooLarge('hf_config')]);
assert.deepEqual(messages(bp.importMegatron(sys, megatron, euros)), [tooLarge('hf_config')]);
const proxy = new Proxy([], {get() { throw new TypeError('nope'); }});
assert.equal(bp.search(app, sys, proxy).ok, false);
// A progress callback that throws: the search completes, then its exception
// is rethrown; the module is intact.
assert.throws(() => bp.search(app, sys, searchFlags, () => { throw new Error('stop'); }),
              /stop/);
assert.equal(bp.check(spec).ok, true, 'the module still works');

// 4. Out of memory: a module given a 64 MiB memory, asked to parse 12 MB of
// JSON numbers (~100 MB as a DOM), returns an internal error, refuses later
// calls, and a new instance is unaffected.
const small = await createBlueprinting(
    {wasmMemory: new WebAssembly.Memory({initial: 256, maximum: 1024})});
assert.equal(small.check(spec).ok, true);
const numbers = '[' + '0,'.repeat(6e6) + '0]';
let oom;
assert.doesNotThrow(() => { oom = small.check(numbers); });
assert.equal(oom.ok, false);
assert.match(oom.errors[0].message, /^internal error: check: out of memory; this instance/);
const after = small.digest(spec);
assert.equal(after.ok, false);
assert.match(after.errors[0].message, /^internal error: digest: an earlier call failed \(out of memory\)/);
// The testing build's evaluateCase (not in the package) is guarded alike.
const {default: createTesting} =
    await import(pathToFileURL(path.resolve(testingModule)).href);
const smallTesting = await createTesting(
    {wasmMemory: new WebAssembly.Memory({initial: 256, maximum: 1024})});
assert.equal(smallTesting.evaluateCase({'spec.json': 42})[0].stage, 'errors');
assert.doesNotThrow(() => { oom = smallTesting.check(numbers); });
assert.equal(oom.ok, false);
assert.match(oom.errors[0].message, /^internal error: check: out of memory; this instance/);
const broken = smallTesting.evaluateCase({'spec.json': spec});
assert.equal(broken.length, 1);
assert.equal(broken[0].stage, 'errors');
assert.match(broken[0].text, /^blueprinting\.errors\/1\ninternal error: evaluateCase: an earlier call failed/);
assert.equal(bp.check(spec).ok, true);

// 5. Errors quoting input are byte-identical to the native CLI's stderr.
const tmp = mkdtempSync(path.join(process.env.TEST_TMPDIR || os.tmpdir(), 'hostile-'));
const file = (name, text) => {
  const p = path.join(tmp, name);
  writeFileSync(p, text, 'utf8');
  return p;
};
function cli(...args) {
  const r = spawnSync(blueprint, args, {encoding: 'buffer'});
  return {code: r.status, stderr: r.stderr};
}
function sameAsCli(label, result, native) {
  assert.equal(result.ok, false, label);
  assert.equal(native.code, 2, `${label}: CLI exit ${native.code}: ${native.stderr}`);
  const wasm = Buffer.from(result.notes.map((n) => `note: ${n}\n`).join('') +
                           result.errors.map((e) => `error: ${e.message}\n`).join(''), 'utf8');
  assert.ok(wasm.equals(native.stderr),
            `${label}:\nwasm ${JSON.stringify(wasm.toString('latin1'))}\n` +
            `cli  ${JSON.stringify(native.stderr.toString('latin1'))}`);
  // Printable ASCII or valid UTF-8 only: decoding loses nothing.
  assert.ok(!native.stderr.toString('utf8').includes('\uFFFD'), label);
}
// A byte-order mark in the middle of a document (before a key, a value).
const bomSpecs = [spec.replace('{', '{\uFEFF'), spec.replace(': ', ': \uFEFF'),
                  '{"a": 1,\uFEFF "b": 2}', '[1,\n\uFEFF]'];
bomSpecs.forEach((text, i) => {
  sameAsCli(`bom ${i}`, bp.check(text), cli('check', file(`bom${i}.json`, text)));
});
assert.match(bp.check(bomSpecs[2]).errors[0].message, /last read: "1,\\xEF"; expected string literal$/);
// A long string token cut on a character boundary, with a control character.
const cutSpec = '{"' + 'a'.repeat(1000) + '\uD83D\uDE00'.repeat(9) + '\t"}';
sameAsCli('long token', bp.check(cutSpec), cli('check', file('cut.json', cutSpec)));
sameAsCli('calculon app', bp.calculon('\uFEFF\uFEFF{}', exe, sys),
          cli('calculon', file('app.json', '\uFEFF\uFEFF{}'), file('exe.json', exe),
              file('sys.json', sys)));
// Megatron-LM flag values: BOM, sign, leading zero, a 4-byte character cut.
const megatronArgs = ['--num-layers', '\uFEFF96', '--hidden-size=+12288',
                      '--num-attention-heads', '096', '--seq-length',
                      '1'.repeat(30) + '\uD83D\uDE00', '--micro-batch-size', ' 1',
                      '--recompute-granularity', 'full\u202E', '--x' + 'y'.repeat(40)];
sameAsCli('megatron', bp.importMegatron(sys, megatronArgs),
          cli('import', 'megatron', '--system', file('msys.json', sys), '--', ...megatronArgs));
// A Hugging Face config.json with a BOM, a cut 4-byte character, bad values.
const badConfig = '{"model_type": "\uFEFFllama", "hidden_size": "' + 'h'.repeat(38) +
    '\uD83D\uDE00", "vocab_size": -1, "tie_word_embeddings": "no\u202E"}';
sameAsCli('hf config', bp.importMegatron(sys, ['--micro-batch-size', '1'], badConfig),
          cli('import', 'megatron', '--system', file('hsys.json', sys), '--hf-config',
              file('hf.json', badConfig), '--', '--micro-batch-size', '1'));
// Notes: a valid import that ignores flags says so, as the CLI does on stderr.
const noted = [...megatron, '--lr', '1e-4', '--data-path', '\uFEFFx'];
const notedResult = bp.importMegatron(sys, noted);
const notedCli = cli('import', 'megatron', '--system', file('nsys.json', sys), '--', ...noted);
assert.equal(notedResult.ok, true);
assert.equal(notedCli.code, 0, notedCli.stderr.toString());
assert.equal(notedResult.notes.length, 2, notedResult.notes.join('\n'));
assert.match(notedResult.notes[0], /^ignored 2 Megatron-LM flags/);
assert.ok(Buffer.from(notedResult.notes.map((n) => `note: ${n}\n`).join(''), 'utf8')
              .equals(notedCli.stderr), notedCli.stderr.toString());
// Search flag values.
const badSearch = ['--procs', '+8', '--max-batch', '064', '--datatype', 'fp\uFEFF16',
                   '--top', ' 1', '--fused-activation', 'y'.repeat(30) + '\uD83D\uDE00'];
const appFile = file('sapp.json', app);
const sysFile = file('ssys.json', sys);
sameAsCli('search', bp.search(app, sys, badSearch),
          cli('search', '--app', appFile, '--system', sysFile, ...badSearch));

// 6. Errors carry the field they concern: the checker's, the reader's and the
// memory analysis's, as the page places them.
const badSpec = JSON.parse(spec);
badSpec.batch.microbatch_size = 0;
badSpec.system.networks[0].bandwidth = 5e-324;
const structured = bp.check(JSON.stringify(badSpec));
assert.deepEqual(structured.errors.map((e) => e.field).sort(),
                 ['batch.microbatch_size', 'system.networks[0].bandwidth']);
for (const e of structured.errors) assert.ok(e.message.startsWith(e.field), e.message);
const wrongType = JSON.parse(spec);
wrongType.model.hidden = '8';
assert.deepEqual(bp.check(JSON.stringify(wrongType)).errors.map((e) => e.field), ['model.hidden']);
const oomSpec = JSON.parse(spec);
oomSpec.system.mem1.GiB = 1;
const overCapacity = bp.analyze(JSON.stringify(oomSpec));
assert.equal(overCapacity.ok, false);
assert.ok(overCapacity.output.length > 0, 'a report is printed');
assert.deepEqual(overCapacity.errors.map((e) => e.field), ['system.mem1.GiB']);

// 7. Every error carries a code of metadata()'s error_codes: the reader's,
// the checker's, the adapters', the analysis's and the module's own.
const codes = new Set(JSON.parse(bp.metadata().output).error_codes.map((c) => c.name));
const codeOf = (result) => result.errors.map((e) => e.code);
for (const result of [structured, overCapacity, bp.check('{'), bp.check(42)]) {
  for (const e of result.errors) {
    assert.deepEqual(Object.keys(e).sort(), ['code', 'field', 'message']);
    assert.ok(codes.has(e.code), `${e.code} of ${e.message}`);
  }
}
assert.deepEqual(codeOf(structured).sort(), ['out_of_range', 'out_of_range']);
assert.deepEqual(codeOf(bp.check(JSON.stringify(wrongType))), ['wrong_type']);
assert.deepEqual(codeOf(overCapacity), ['over_capacity']);
assert.deepEqual(bp.check('{').errors.map((e) => [e.field, e.code]), [['', 'syntax']]);
assert.deepEqual(codeOf(bp.check(42)), ['wrong_type']);
assert.deepEqual(codeOf(bp.check(big17)), ['too_large']);
const notDivisible = JSON.parse(spec);
notDivisible.model.hidden += 1;  // not divisible by the tensor degree 8
assert.ok(codeOf(bp.check(JSON.stringify(notDivisible))).includes('not_divisible'));
assert.deepEqual(bp.explain(spec, 'no_such_figure').errors.map((e) => [e.field, e.code]),
                 [['figure', 'unknown_choice']]);
assert.deepEqual(codeOf(bp.importMegatron(sys, ['--bogus-flag'])).slice(0, 2),
                 ['unknown_field', 'missing_field']);
assert.deepEqual(bp.calculon(app, '{', sys).errors.map((e) => [e.field, e.code]),
                 [['exe', 'syntax']]);
assert.deepEqual(bp.search(app, sys, ['--procs', 'x']).errors.map((e) => [e.field, e.code]),
                 [['--procs', 'wrong_type'], ['--max-batch', 'missing_field'],
                  ['--datatype', 'missing_field']]);
assert.deepEqual(codeOf(bp.importMegatron(sys, 'x')), ['wrong_type']);
assert.deepEqual(codeOf(bp.importMegatron(sys, throwing)), ['invalid_value']);
assert.deepEqual(codeOf(oom), ['internal']);
assert.deepEqual(codeOf(after), ['internal']);

console.log(`PASS: ${refused} lone surrogates refused, oversized inputs, out of memory, ` +
            `${bomSpecs.length + 4} CLI comparisons`);
