// usage: node analysis_cli_test.mjs BLUEPRINT PACKAGE_DIR
// End-to-end through the real CLI binary and, for the same inputs, the wasm
// package under node:
//  * `blueprint calculon` on every vendored oracle case: exit 0 with every
//    stats field within 1e-9 of Calculon's, or exit 2 with "error: " lines
//    where Calculon rejected the case;
//  * `analyze`, `digest`, `explain`, `check`, `calculon`, `schedule [--json]`,
//    `search --json`, `presets`, `import megatron --hf-config`: the wasm
//    method's output is byte-identical to the CLI's stdout;
//  * `schedule --json` is the text's timeline: the same commands, times and
//    bubble;
//  * `analyze --dump-ir` writes every stage, with lineage on every node.
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import {mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [blueprint, packageDir] = process.argv.slice(2);
const {default: createBlueprinting} =
    await import(pathToFileURL(path.resolve(packageDir, 'blueprinting.mjs')).href);
const bp = await createBlueprinting();

function cli(...args) {
  const r = spawnSync(blueprint, args, {encoding: 'utf8', maxBuffer: 1 << 28});
  return {code: r.status, stdout: r.stdout, stderr: r.stderr};
}
const read = (f) => readFileSync(f, 'utf8');

// 1. calculon over the oracle.
const oracle = 'tests/calculon/oracle';
let checked = 0;
for (const name of read(`${oracle}/cases.txt`).split('\n').filter(Boolean)) {
  const dir = `${oracle}/${name}`;
  const files = ['app.json', 'exe.json', 'sys.json'].map((f) => `${dir}/${f}`);
  const r = cli('calculon', ...files);
  const accepted = read(`${dir}/rc.txt`).trim() === '0';
  if (!accepted) {
    assert.equal(r.code, 2, `${name}: expected exit 2, got ${r.code}`);
    assert.equal(r.stdout, '', `${name}: no stdout on rejection`);
    assert.match(r.stderr, /^error: .+\(.+\)/m, `${name}: error lines name values`);
    continue;
  }
  assert.equal(r.code, 0, `${name}: ${r.stderr}`);
  const ours = JSON.parse(r.stdout);
  const want = JSON.parse(read(`${dir}/stats.json`));
  for (const [field, value] of Object.entries(want)) {
    if (value === null) {
      assert.equal(ours[field], null, `${name}: ${field}`);
      continue;
    }
    const tolerance = Math.max(1e-9 * Math.abs(value), 1e-12);
    assert.ok(Math.abs(ours[field] - value) <= tolerance,
              `${name}: ${field} ours=${ours[field]} calculon=${value}`);
  }
  // The wasm module prints the same bytes.
  const w = bp.calculon(...files.map(read));
  assert.ok(w.ok && w.output === r.stdout, `${name}: wasm calculon differs`);
  ++checked;
}
assert.equal(checked, 40);

// 2. The other commands, CLI vs wasm, byte for byte.
const specs = readdirSync('golden/cases')
    .filter((c) => c.startsWith('spec_'))
    .map((c) => `golden/cases/${c}/spec.json`);
assert.ok(specs.length >= 15);
for (const spec of specs) {
  const text = read(spec);
  for (const [command, method] of [['analyze', 'analyze'], ['digest', 'digest'],
                                   ['check', 'check']]) {
    const r = cli(command, spec);
    const w = bp[method](text);
    assert.equal(w.output, r.stdout, `${command} ${spec}: wasm output differs`);
    assert.equal(w.ok, r.code === 0, `${command} ${spec}: ok differs`);
    assert.deepEqual(w.errors.map((e) => `error: ${e.message}\n`).join(''), r.stderr,
                     `${command} ${spec}: errors differ`);
  }
  // schedule: text and JSON, CLI == wasm; the JSON is the text's timeline.
  const st = cli('schedule', spec);
  const sj = cli('schedule', '--json', spec);
  assert.equal(bp.schedule(text).output, st.stdout, `schedule ${spec}: wasm differs`);
  assert.equal(bp.schedule(text, true).output, sj.stdout, `schedule --json ${spec}: wasm differs`);
  assert.equal(st.code, sj.code, `schedule ${spec}: exit codes differ`);
  // Over memory capacity: the timeline with exit 2, as analyze prints its
  // report; a shape the constructors refuse: no output.
  if (sj.stdout !== '') {
    const timeline = JSON.parse(sj.stdout);
    assert.equal(timeline.format, 'blueprinting.pipeline_timeline/1');
    const lines = st.stdout.split('\n');
    assert.ok(lines.includes(`bubble ${timeline.bubble}`), `${spec}: bubble`);
    const commandLines = lines.filter((l) => l.startsWith('  '));
    const commands = timeline.stages.flatMap((s) => s.commands);
    assert.equal(commands.length, commandLines.length, `${spec}: command count`);
    assert.ok(commands.every((c) => c.end >= c.start && c.lineage.startsWith('schedule:')));
    const f = commands.find((c) => c.kind === 'F');
    assert.ok(f && Number.isInteger(f.microbatch) && Number.isInteger(f.chunk), `${spec}: F`);
  } else {
    assert.match(st.stderr, /^error: schedule: /m, `${spec}: ${st.stderr}`);
  }
  const e = cli('explain', spec, 'total_time');
  assert.equal(e.code, 0, e.stderr);
  assert.equal(bp.explain(text, 'total_time').output, e.stdout);
  assert.match(e.stdout, /spec:parallelism\.tensor\.degree/);
  assert.match(e.stdout, /system:networks\[/);
  assert.match(e.stdout, /^total_time = fw_time \+ bw_time \+ /);
  for (const depth of [0, 1, 2]) {
    const d = cli('explain', spec, 'total_time', '--depth', String(depth));
    assert.equal(d.code, 0, d.stderr);
    assert.equal(bp.explain(text, 'total_time', depth).output, d.stdout, `--depth ${depth}`);
    assert.ok(d.stdout.length < e.stdout.length, `--depth ${depth} is shorter`);
  }
}
// A bad --depth is a usage error naming the flag.
for (const value of ['-1', '01', 'x', '']) {
  const d = cli('explain', 'core/spec/testdata/175b_t8p8_v3.json', 'total_time', '--depth', value);
  assert.equal(d.code, 1, `--depth ${JSON.stringify(value)}`);
  assert.match(d.stderr, /^error: --depth: expected an integer >= 0 /, d.stderr);
}
// Invalid input: exit 2, one error line each, wasm errors equal.
const bad = 'golden/cases/reject_many_violations/spec.json';
const r = cli('analyze', bad);
assert.equal(r.code, 2);
assert.equal(r.stdout, '');
assert.deepEqual(bp.analyze(read(bad)).errors.map((e) => `error: ${e.message}\n`).join(''), r.stderr);
assert.ok(r.stderr.split('\n').filter(Boolean).length >= 4, r.stderr);
// Usage errors: exit 1.
assert.equal(cli('analyze').code, 1);
assert.equal(cli('schedule').code, 1);
assert.equal(cli('schedule', '--json', '--json', 'x.json').code, 1);
assert.equal(bp.schedule('{}', 'yes').errors[0].field, 'json');
// Interleaved with p not dividing m runs Megatron-LM's order with the group
// size it accepts (10 for p 8, m 60).
const leftoverSpec = 'golden/cases/spec_interleaved_m_not_multiple/spec.json';
const leftover = cli('schedule', leftoverSpec);
assert.equal(leftover.code, 0, leftover.stderr);
assert.match(leftover.stdout, /^schedule interleaved p 8 v 2 m 60 /m);
// A shape beyond the scheduler's bound: exit 2 naming the bound.
const bigDir = mkdtempSync(path.join(os.tmpdir(), 'schedule-'));
const bigSpec = JSON.parse(read(leftoverSpec));
bigSpec.batch.global_batch_size *= 200;  // m 12,000
const bigPath = path.join(bigDir, 'big.json');
writeFileSync(bigPath, JSON.stringify(bigSpec));
const big = cli('schedule', bigPath);
assert.equal(big.code, 2);
assert.match(big.stderr,
             /^error: schedule: p \* chunks \* m \(8 \* 2 \* 12000 = 192000\) must be at most 100000/m);
assert.equal(cli('frobnicate').code, 1);

// presets and import megatron --hf-config with a preset: the CLI's stdout and
// stderr are the wasm methods' (the config passed as its text).
const presets = cli('presets');
assert.equal(presets.code, 0, presets.stderr);
assert.equal(bp.presets().output, presets.stdout);
const presetsJson = JSON.parse(presets.stdout);
assert.deepEqual(Object.keys(presetsJson.systems),
                 ['a100_sxm_80g', 'b200_sxm_180g', 'b300_sxm_288g', 'gb200_nvl72', 'gb300_nvl72',
                  'h100_sxm_80g', 'h200_sxm_141g', 'h800_sxm_80g', 'jean_zay_a100_80g']);
for (const model of ['llama3.1-8b', 'qwen2.5-7b']) {
  const flags = ['--micro-batch-size', '1', '--bf16', '--seq-length', '4096'];
  const r = cli('import', 'megatron', '--system', 'h100_sxm_80g', '--hf-config', model, '--',
                ...flags);
  const w = bp.importMegatron(JSON.stringify(presetsJson.systems.h100_sxm_80g), flags,
                              JSON.stringify(presetsJson.models[model]));
  assert.equal(w.output, r.stdout, `import --hf-config ${model}: wasm output differs`);
  assert.equal(w.ok, r.code === 0, `import --hf-config ${model}: ok differs`);
  assert.equal(w.errors.map((e) => `error: ${e.message}\n`).join(''), r.stderr,
               `import --hf-config ${model}: errors differ`);
}

// 3. --dump-ir: one file per stage, lineage on every node.
const dumpDir = mkdtempSync(path.join(os.tmpdir(), 'ir-'));
const spec175 = 'golden/cases/spec_interleaved_v3/spec.json';
assert.equal(cli('analyze', spec175, '--dump-ir', dumpDir).code, 0);
const taskIr = read(`${dumpDir}/task_ir.txt`);
assert.match(taskIr, /^blueprinting\.distributed_task_ir\/1\n/);
const tasks = taskIr.split('\ntask ').length - 1;
const lineages = (taskIr.match(/\n  lineage pass=LowerTensorParallelBlock from \[spec:/g) || []).length;
assert.equal(lineages, tasks, 'every task has lineage');
for (const stage of ['spec', 'plan_ir', 'iteration', 'memory', 'report']) {
  assert.ok(read(`${dumpDir}/${stage}.txt`).length > 0, stage);
}

// 4. search: CLI --json equals the wasm method.
const app = 'tests/search/testdata/megatron-22B.json';
const sys = 'tests/search/testdata/a100_80g.json';
const flags = ['--procs', '16', '--max-batch', '32', '--datatype', 'float16', '--top', '5', '--json'];
const s = cli('search', '--app', app, '--system', sys, ...flags);
assert.equal(s.code, 0, s.stderr);
const ws = bp.search(read(app), read(sys), flags);
assert.equal(ws.output, s.stdout, 'wasm search differs from the CLI');
const result = JSON.parse(s.stdout);
assert.equal(result.total_executions, result.good_executions + result.bad_executions);
assert.equal(result.top.length, 5);
console.log(`PASS: ${checked} oracle cases through the CLI, ${specs.length} specs CLI == wasm`);
