// usage: node serving_node_test.mjs PACKAGE_DIR BLUEPRINT
// The serving methods of the wasm package under node against the native CLI
// for the same inputs: serve, serveCheck and serveExplain of a serving spec,
// and searchServing (table and --json) on the presets' texts, each output
// byte-identical to the CLI's stdout; and searchServing's bad flags as
// errors naming each flag, all at once.
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [packageDir, blueprint] = process.argv.slice(2);
const pkg = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
const {default: createBlueprinting} = await import(
    pathToFileURL(path.resolve(packageDir, pkg.exports['.'].default)).href);
const bp = await createBlueprinting();

function cli(...args) {
  const r = spawnSync(blueprint, args, {encoding: 'utf8', maxBuffer: 1 << 28});
  return {code: r.status, stdout: r.stdout, stderr: r.stderr};
}
function same(what, wasm, native) {
  assert.equal(native.code, 0, `${what}: the CLI failed: ${native.stderr}`);
  assert.deepEqual(wasm.errors, [], `${what}: wasm errors`);
  assert.equal(wasm.ok, true);
  assert.ok(wasm.output === native.stdout, `${what}: wasm differs from the CLI`);
}

const work = mkdtempSync(path.join(os.tmpdir(), 'serving-node-'));
const spec = JSON.stringify({
  format: 'blueprinting.serving_spec/1', model: 'llama3.1-70b',
  system: 'h100_sxm_80g', weight_datatype: 'bfloat16', memory_utilization: 0.9,
  kv_cache: {datatype: 'bfloat16', block_tokens: 16},
  pools: {type: 'disaggregated',
          prefill: {tensor: 4, pipeline: 1, expert: 1, attention_data: 1, replicas: 1},
          decode: {tensor: 4, pipeline: 1, expert: 1, attention_data: 1, replicas: 1}},
  workload: {input_tokens: 1024, output_tokens: 256, concurrency: 64},
  speculative: {type: 'none'}});
const specPath = path.join(work, 'serving.json');
writeFileSync(specPath, spec);

same('serve', bp.serve(spec), cli('serve', specPath));
same('serveCheck', bp.serveCheck(spec), cli('serve', 'check', specPath));
same('serveExplain', bp.serveExplain(spec, 'tpot'),
     cli('serve', 'explain', specPath, 'tpot'));

// searchServing on the presets' texts, as the CLI reads the presets.
const presets = JSON.parse(bp.presets().output);
const sys = JSON.stringify(presets.systems['h100_sxm_80g']);
const config = JSON.stringify(presets.models['llama3.1-70b']);
const flags = ['--procs', '8', '--input-len', '1024', '--output-len', '256',
               '--max-ttft', '1', '--max-tpot', '0.05'];
const sysPath = path.join(work, 'sys.json');
const configPath = path.join(work, 'config.json');
writeFileSync(sysPath, sys);
writeFileSync(configPath, config);
for (const extra of [[], ['--json', '--top', '3']]) {
  same(`searchServing ${extra.join(' ')}`,
       bp.searchServing(sys, config, [...flags, ...extra]),
       cli('search', '--serving', '--system', sysPath, '--hf-config', configPath,
           ...flags, ...extra));
}
const best = JSON.parse(bp.searchServing(sys, config, [...flags, '--json']).output)
    .mappings[0];
assert.ok(best.figures.tpot <= 0.05 && best.figures.ttft <= 1);
// The best mapping's spec, served, gives the search's figure.
const served = bp.serve(JSON.stringify(best.spec));
assert.equal(served.ok, true);
assert.ok(served.output.includes(
    `\noutput_tokens_per_second_per_gpu ${best.figures.output_tokens_per_second_per_gpu}\n`),
    'serve of the best mapping differs from the search');

// Bad flags: every problem at once, each naming its flag.
const bad = bp.searchServing(sys, config, ['--procs', '0', '--input-len', '1024',
                                          '--output-len', '256', '--max-ttft', '-1']);
assert.equal(bad.ok, false);
assert.deepEqual(bad.errors.map((e) => e.field), ['--procs', '--max-ttft']);
const badSystem = bp.searchServing('{', config, flags);
assert.equal(badSystem.ok, false);
assert.ok(badSystem.errors[0].message.startsWith('--system: '), badSystem.errors[0].message);
console.log('PASS');
