// usage: node tools/search_bench.mjs [--workers N [--parts-per-worker K]] [--only PREFIX]
//                                     [PACKAGE_DIR] [TESTDATA_DIR] [RUNS]
//   --workers N   run each search in parts on N worker threads, each with
//                 its own module instance, and merge them with mergeSearch,
//                 as the page does with N Web Workers (default 1: one call)
//   --parts-per-worker K  K * N parts, each taken by the next free thread
//                 (default 1, as the page: more parts balance the threads
//                 better, but each part prunes by its own ranking only, and
//                 2, 4 and 8 measured slower)
//   --only PREFIX only the searches whose name starts with PREFIX
//   PACKAGE_DIR   the wasm npm package (default bazel-bin/wasm/package)
//   TESTDATA_DIR  the model and system files (default tests/search/testdata)
//   RUNS          timed runs after the first, cold one (default 20 and 3)
// Times the package's search(appJson, sysJson, args) method on the reference
// searches of tools/search_bench.cc and prints executions per second and wall
// time, like the native benchmark (the time includes parsing the inputs and
// printing the JSON result, which the native numbers do not).
import {readFileSync} from 'node:fs';
import path from 'node:path';
import {performance} from 'node:perf_hooks';
import {pathToFileURL} from 'node:url';
import {Worker} from 'node:worker_threads';

// Calculon's rate on this kind of machine (calculon/SEARCH.md).
const CALCULON_EXECUTIONS_PER_SECOND = 66.57;

const argv = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = argv.indexOf(name);
  if (i < 0) return fallback;
  const [value] = argv.splice(i, 2).slice(1);
  return value;
};
const workerCount = Number(flag('--workers', '1'));
const partsPerWorker = Number(flag('--parts-per-worker', '1'));
const only = flag('--only', '');
const [packageDir = 'bazel-bin/wasm/package', dataDir = 'tests/search/testdata', runsArg] = argv;
const cases = [
  {
    name: 'turing-530B 5128 GPUs b2520 top5 mbs-break',
    model: 'turing-530B.json',
    system: 'a100_80g.json',
    args: ['--procs', '5128', '--max-batch', '2520', '--datatype', 'float16', '--top', '5',
           '--mbs-break'],
    runs: 20,
  },
  {
    name: 'gpt3-175B 512 GPUs b512 top10',
    model: 'gpt3-175B.json',
    system: 'a100_80g.json',
    args: ['--procs', '512', '--max-batch', '512', '--datatype', 'float16', '--top', '10'],
    runs: 3,
  },
  {
    name: 'qwen3-235B-A22B 2048 GPUs b2048 top10 cp<=8 zero',
    model: 'qwen3-235B-A22B.model.json',
    system: 'h100_80g_nvl8.json',
    args: ['--procs', '2048', '--max-batch', '2048', '--datatype', 'float16', '--top', '10',
           '--max-context', '8', '--sharding', 'all'],
    runs: 3,
    prunedOnly: true,
  },
  {
    name: 'deepseek-v3 2048 GPUs b2048 top10 cp<=8 zero',
    model: 'deepseek-v3.model.json',
    system: 'h100_80g_nvl8.json',
    args: ['--procs', '2048', '--max-batch', '2048', '--datatype', 'float16', '--top', '10',
           '--max-context', '8', '--sharding', 'all'],
    runs: 2,
    prunedOnly: true,
  },
  {
    name: 'gpt3-175B 512 GPUs b512 top10 every schedule',
    model: 'gpt3-175B.json',
    system: 'a100_80g.json',
    args: ['--procs', '512', '--max-batch', '512', '--datatype', 'float16', '--top', '10',
           '--schedules', 'all'],
    runs: 2,
    prunedOnly: true,
  },
  // Every cp, both K/V exchanges, every ZeRO stage and schedule, for both MoE models.
  ...['deepseek-v3', 'qwen3-235B-A22B'].map((model) => ({
    name: `${model} 2048 GPUs b2048 top10 every cp, both exchanges, zero, every schedule`,
    model: `${model}.model.json`,
    system: 'h100_80g_nvl8.json',
    args: ['--procs', '2048', '--max-batch', '2048', '--datatype', 'float16', '--top', '10',
           '--max-context', '2048', '--context-exchange', 'all', '--sharding', 'all',
           '--schedules', 'all'],
    runs: 1,
    prunedOnly: true,
  })),
  {
    name: 'qwen3-235B-A22B 2048 GPUs b2048 top10 cp<=8 zero every schedule, uneven stages',
    model: 'qwen3-235B-A22B.model.json',
    system: 'h100_80g_nvl8.json',
    args: ['--procs', '2048', '--max-batch', '2048', '--datatype', 'float16', '--top', '10',
           '--max-context', '8', '--sharding', 'all', '--schedules', 'all',
           '--stage-layouts', 'all'],
    runs: 1,
    prunedOnly: true,
  },
  // What the page searches for a Hugging Face or Megatron-LM import.
  {
    name: 'qwen3-235B-A22B 2048 GPUs b2048 top10 every cp, both exchanges, zero, every ' +
          'schedule, megatron_mixed refined',
    model: 'qwen3-235B-A22B.model.json',
    system: 'h100_80g_nvl8.json',
    args: ['--procs', '2048', '--max-batch', '2048', '--datatype', 'float16', '--top', '10',
           '--max-context', '2048', '--context-exchange', 'all', '--sharding', 'all',
           '--schedules', 'all', '--precision', 'megatron_mixed', '--profile', 'refined'],
    runs: 3,
    prunedOnly: true,
  },
];

const entry = path.resolve(packageDir, 'blueprinting.mjs');
const {default: createBlueprinting} = await import(pathToFileURL(entry).href);
const bp = await createBlueprinting();
if (typeof bp.search !== 'function') {
  console.error(`error: ${entry} has no search() method`);
  process.exit(2);
}
const threads = workerCount > 1
  ? Array.from({length: workerCount},
               () => new Worker(new URL('./search_bench_worker.mjs', import.meta.url),
                          {workerData: {entry: pathToFileURL(entry).href}}))
  : [];
// One search: a call, or partsPerWorker * workerCount parts, each taken by
// the next free thread (as web/search.js deals them), merged.
async function search(app, sys, args) {
  if (!threads.length) return bp.search(app, sys, args);
  const count = workerCount * partsPerWorker;
  const parts = new Array(count);
  let next = 0;
  await Promise.all(threads.map(async (thread) => {
    while (next < count) {
      const i = next++;
      parts[i] = await new Promise((resolve) => {
        thread.once('message', resolve);
        thread.postMessage({app, sys, args: [...args, '--partition', `${i}/${count}`]});
      });
    }
  }));
  const failed = parts.find((part) => !part.ok);
  return failed ?? bp.mergeSearch(parts.map((part) => part.output));
}

const errorsOf = (result) =>
  Array.isArray(result.errors) ? result.errors.map((e) => e.message).join('\n')
                               : String(result.errors);

console.log(['search'.padEnd(44), 'mode'.padEnd(10), 'executions'.padStart(10),
             'first_ms'.padStart(10), 'best_ms'.padStart(10), 'executions/s'.padStart(14),
             'vs_calculon'.padStart(11)].join(' '));
for (const c of cases) {
  if (!c.name.startsWith(only)) continue;
  const app = readFileSync(path.join(dataDir, c.model), 'utf8');
  const sys = readFileSync(path.join(dataDir, c.system), 'utf8');
  for (const exhaustive of [false, true]) {
    if (exhaustive && c.prunedOnly) continue;
    const args = [...c.args, '--json', ...(exhaustive ? ['--exhaustive'] : [])];
    const runs = runsArg ? Number(runsArg) : c.runs;
    let first = 0;
    let best = Infinity;
    let result;
    for (let i = 0; i <= runs; ++i) {
      const start = performance.now();
      result = await search(app, sys, args);
      const ms = performance.now() - start;
      if (i === 0) first = ms;
      else best = Math.min(best, ms);
      if (!result.ok) {
        console.error(`error: ${errorsOf(result)}`);
        process.exit(2);
      }
    }
    const output = JSON.parse(result.output);
    const total = output.total_executions;
    const rate = total / (best / 1000);
    console.log([c.name.padEnd(44), (exhaustive ? 'exhaustive' : 'pruned').padEnd(10),
                 String(total).padStart(10), first.toFixed(3).padStart(10),
                 best.toFixed(3).padStart(10), rate.toPrecision(4).padStart(14),
                 `${(rate / CALCULON_EXECUTIONS_PER_SECOND).toFixed(0)}x`.padStart(11)].join(' '));
    const top = output.top.length ? output.top[0].stats.sample_rate : 0;
    console.log(`    good ${output.good_executions}, bad ${output.bad_executions}; ` +
                `best ${top} samples/s`);
  }
}
for (const thread of threads) await thread.terminate();
