// usage: node tests/browser/embed_bench.mjs [RUNS] [SITE_DIR...]
//
// Where the time to the first figure of web/embed.html goes (#47's goal:
// visible <= 300 ms after navigation). Serves each SITE_DIR (default
// bazel-bin/web/site, after `bazel build //web:site`) below a sub-path with
// the docs sites' CSP, as //tests/browser:embed_test does, and loads its
// embed.html RUNS times (default 7), each in a fresh page of one Chromium;
// with several folders (e.g. a copy of the site before a change) the loads
// alternate, so that both see the same load from other work on the machine.
// A benchmark, not a test: prints each step's min and median per folder.
// What it reads, without touching web/elements.js:
//   * resource timing of every file (request start, response end);
//   * hooks installed before the page's scripts (an init script):
//     customElements.define (the elements module evaluated),
//     IntersectionObserver callbacks (an element near the viewport),
//     WebAssembly.instantiateStreaming / instantiate (wasm compile and
//     instantiation), and the figure's data-state turning "ready" (a
//     MutationObserver), then the next animation frame (the frame that
//     paints it) and the task after it (painted).
// Then, in the same page, a second instance of the module and its analyze
// cold and warm (the analysis alone, without the page's loading).
// CHROMIUM_FLAGS (space-separated) adds Chromium flags for experiments, e.g.
// --js-flags=--liftoff-only.
// REPEAT=1 measures a reader's first and second visit instead: embed.html with
// manifest.json's content-hashed names (as embed_test's hashed bundle), the
// server letting browsers cache assets/ (serve.py --cache-assets), each run in
// a fresh Chromium profile: the first visit, then (after Chromium has had
// time to store the compiled WebAssembly) the same page again.
// TRACE=1 also records a Chromium trace of each load until the figure is
// ready and adds the renderer's CPU time (not wall time: a measure that other
// work on the machine hardly moves) by trace event: on its main thread, and
// the wasm compilation on its worker threads.
import {chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import path from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';

import {launchChromium, serve} from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const runs = Number(process.argv[2] ?? 7);
const siteDirs = process.argv.length > 3 ? process.argv.slice(3).map((d) => path.resolve(d))
                                         : [path.join(root, 'bazel-bin/web/site')];
const {chromium} = await import(pathToFileURL(
    path.join(here, 'node_modules/playwright-core/index.mjs')).href);

const CSP = "script-src 'self' 'wasm-unsafe-eval'";
const BASE = '/docs/tools/blueprinting/';

// Runs in the page before its scripts: marks each step on performance's timeline.
function hooks() {
  const mark = (name) => performance.mark(`bench:${name}`);
  const define = customElements.define.bind(customElements);
  customElements.define = (name, ...rest) => {
    if (name === 'blueprint-figure') mark('elements defined');
    return define(name, ...rest);
  };
  const Observer = window.IntersectionObserver;
  window.IntersectionObserver = class extends Observer {
    constructor(callback, options) {
      super((entries, observer) => {
        if (entries.some((e) => e.isIntersecting)) mark('near viewport');
        return callback(entries, observer);
      }, options);
    }
  };
  for (const name of ['instantiateStreaming', 'instantiate', 'compileStreaming', 'compile']) {
    const original = WebAssembly[name].bind(WebAssembly);
    WebAssembly[name] = (...args) => {
      mark(`wasm ${name} start`);
      return original(...args).then((result) => {
        mark(`wasm ${name} end`);
        return result;
      });
    };
  }
  new MutationObserver(() => {
    const figure = document.querySelector('blueprint-figure');
    if (figure?.dataset.state === 'ready' && !performance.getEntriesByName('bench:ready').length) {
      mark('ready');
      requestAnimationFrame(() => {
        mark('frame');
        setTimeout(() => mark('painted'));
      });
    }
  }).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-state']});
}

const repeat = process.env.REPEAT === '1';
// Chromium stores a module's compiled code once enough of it is optimized, or
// a few seconds after compiling (V8's --wasm-caching-timeout-ms, 2 s).
const CODE_CACHE_WAIT_MS = 5000;
const servers = [];
const tmp = mkdtempSync(path.join(tmpdir(), 'embed-bench-'));
for (const dir of siteDirs) {
  const options = ['--base', BASE, '--csp', CSP, ...(repeat ? ['--cache-assets'] : [])];
  const served = repeat ? hashedCopy(dir) : dir;
  servers.push({dir, ...await serve(path.join(root, 'tools/serve.py'), served, ...options)});
}

// A copy of the site `dir` whose embed.html loads manifest.json's hashed
// names (not rewritten in flight: Playwright's request interception turns
// off the browser's HTTP cache).
function hashedCopy(dir) {
  const copy = mkdtempSync(path.join(tmp, 'site-'));
  cpSync(dir, copy, {recursive: true});
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  let html = readFileSync(path.join(dir, 'embed.html'), 'utf8');
  for (const [name, hashed] of Object.entries(manifest)) {
    html = html.replaceAll(`"${name}"`, `"${hashed}"`);
  }
  chmodSync(copy, 0o755);
  rmSync(path.join(copy, 'embed.html'), {force: true});
  writeFileSync(path.join(copy, 'embed.html'), html);
  return copy;
}
const flags = (process.env.CHROMIUM_FLAGS ?? '').split(' ').filter(Boolean);
const tables = repeat ? siteDirs.flatMap((d) => [`${d}, first visit`, `${d}, repeat visit`])
                      : siteDirs;
const rows = tables.map(() => []);
let browser = repeat ? null : await launchChromium(chromium, tmp, flags);
try {
  for (let run = 0; run < runs; run++) {
    for (const [i, {dir, url}] of servers.entries()) {
      if (!repeat) {
        rows[i].push(await load(url));
        continue;
      }
      browser = await launchChromium(chromium, tmp, flags);
      rows[2 * i].push(await load(url, CODE_CACHE_WAIT_MS));
      rows[2 * i + 1].push(await load(url));
      await browser.close();
      browser = null;
    }
  }
} finally {
  await browser?.close();
  for (const {server} of servers) server.kill();
}

// One load of embed.html: {step: ms after navigation, (duration): ms}; the
// page stays open `linger` ms more (Chromium stores compiled WebAssembly only
// while the module lives).
async function load(url, linger = 0) {
  const page = await browser.newPage();
  await page.addInitScript(hooks);
  const trace = process.env.TRACE === '1' ? await startTrace(page) : null;
  await page.goto(url + 'embed.html');
  await page.waitForFunction(() => performance.getEntriesByName('bench:painted').length,
                             null, {timeout: 30000});
  const cpu = trace ? await trace.cpuUntilReady() : {};
  const row = await page.evaluate(async () => {
    const at = {};
    for (const e of performance.getEntriesByType('mark')) {
      if (e.name.startsWith('bench:')) at[e.name.slice(6)] = e.startTime;
    }
    for (const e of performance.getEntriesByType('resource')) {
      const name = e.name.split('/').pop().replace(/\.[0-9a-f]{12}\./, '.');  // unhashed
      at[`${name} requested`] = e.startTime;
      at[`${name} received`] = e.responseEnd;
      if (name.endsWith('.wasm')) at[`(${name}: bytes over the network)`] = e.transferSize;
    }
    const navigation = performance.getEntriesByType('navigation')[0];
    at['embed.html received'] = navigation.responseEnd;
    at['DOMContentLoaded'] = navigation.domContentLoadedEventEnd;
    // The module alone: a second instance, then analyze twice.
    const spec = await (await fetch('175b_t8p8_v3.json')).text();
    const {default: create} = await import(
        new URL(document.querySelector('link[href*="blueprinting_slim"][href$=".mjs"]')
            ?.getAttribute('href') ?? 'blueprinting_slim.mjs', document.baseURI).href);
    let t = performance.now();
    const bp = await create();
    at['(2nd instance: create)'] = performance.now() - t;
    t = performance.now();
    bp.analyze(spec);
    at['(analyze, cold)'] = performance.now() - t;
    t = performance.now();
    bp.analyze(spec);
    at['(analyze, warm)'] = performance.now() - t;
    t = performance.now();
    bp.explain(spec, 'total_time', 0);
    at['(explain depth 0)'] = performance.now() - t;
    return at;
  });
  await page.waitForTimeout(linger);
  await page.close();
  return {...row, ...cpu};
}

// Traces `page`; cpuUntilReady() ends the trace and returns {'[cpu: thread
// event]': ms} for the renderer's events between navigation and the figure's
// "ready" (nested events count in their parents too).
async function startTrace(page) {
  const client = await page.context().newCDPSession(page);
  const events = [];
  client.on('Tracing.dataCollected', (e) => events.push(...e.value));
  await client.send('Tracing.start', {
    traceConfig: {includedCategories: ['toplevel', 'devtools.timeline', 'blink.user_timing',
                                       'disabled-by-default-devtools.timeline', 'v8', 'v8.wasm']},
    transferMode: 'ReportEvents',
  });
  return {
    async cpuUntilReady() {
      const complete = new Promise((resolve) => client.once('Tracing.tracingComplete', resolve));
      await client.send('Tracing.end');
      await complete;
      const thread = (e) => `${e.pid}:${e.tid}`;
      const names = new Map(events.filter((e) => e.ph === 'M' && e.name === 'thread_name')
          .map((e) => [thread(e), e.args.name]));
      const ready = events.find((e) => e.name === 'bench:ready');
      const main = ready && thread(ready);
      const start = events.find((e) => thread(e) === main && e.name === 'navigationStart')?.ts;
      const cpu = {};
      if (!main || start === undefined) return cpu;
      for (const e of events) {
        if (e.ph !== 'X' || e.tdur === undefined || String(e.pid) !== main.split(':')[0] ||
            e.ts < start || e.ts > ready.ts) continue;
        const onMain = thread(e) === main;
        if (!onMain && !e.name.startsWith('wasm.')) continue;
        const key = `[cpu: ${onMain ? 'main' : names.get(thread(e)) ?? 'worker'}: ${e.name}]`;
        cpu[key] = (cpu[key] ?? 0) + e.tdur / 1000;
      }
      return cpu;
    },
  };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
};
const loadAverage = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
for (const [i, dir] of tables.entries()) {
  const names = [...new Set(rows[i].flatMap((r) => Object.keys(r)))];
  // Steps in time order, then durations, then CPU times (largest first).
  const order = (name) => name.startsWith('[') ? 2e9 - median(rows[i].map((r) => r[name] ?? 0))
      : name.startsWith('(') ? 1e9 : Math.min(...rows[i].map((r) => r[name] ?? Infinity));
  names.sort((a, b) => order(a) - order(b));
  console.log(`\n${dir}: ${runs} loads of embed.html (ms after navigation; (...): durations), ` +
              `load average ${loadAverage}`);
  console.log(`${'step'.padEnd(34)} ${'min'.padStart(6)} ${'median'.padStart(6)}   runs`);
  for (const name of names) {
    const values = rows[i].map((r) => r[name]).filter((v) => v !== undefined);
    if (name.startsWith('[') && median(values) < 1) continue;  // CPU time below 1 ms
    console.log(`${name.padEnd(34)} ${Math.min(...values).toFixed(0).padStart(6)} ` +
                `${median(values).toFixed(0).padStart(6)}   ` +
                values.map((v) => v.toFixed(0)).join(' '));
  }
}
