// usage: node embed_test.mjs PLAYWRIGHT_CORE_INDEX SERVE_PY SITE_DIR BLUEPRINT DEFAULT_SPEC
//
// //web:site served below a sub-path with the Content-Security-Policy docs
// sites commonly send (script-src 'self' 'wasm-unsafe-eval'), in Debian's
// headless Chromium, checked against the native CLI (BLUEPRINT):
//   * the calculator (the full module) starts and shows the CLI's figures;
//   * embed.html (one <blueprint-figure>) shows the CLI's value, and the
//     bytes it downloads, gzip-compressed, stay within 300 KB; so it does
//     with manifest.json's content-hashed elements.js, loading only hashed
//     names;
//   * docs/embedding.html holds elements of several specs (a URL, a JSON
//     child, Megatron-LM launch lines with presets): each shows the CLI's
//     value, an attribute change re-renders, a mapping edit re-renders the
//     elements of its spec, a bad spec names its field, a mapping over
//     capacity warns and still shows its figures, the module is fetched once;
//   * no CSP violation, no page error.
// The transferred bytes and the time to the first figure (from navigation to
// its data-state turning "ready", in the page's clock) are printed and
// written to embed_transfers.json in the test's outputs (a benchmark: only
// the size is a limit; tests/browser/embed_bench.mjs breaks the time down).
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import path from 'node:path';
import {pathToFileURL} from 'node:url';
import {gzipSync} from 'node:zlib';

import {launchChromium, serve} from './harness.mjs';

const [playwrightIndex, servePy, siteDir, blueprint, defaultSpecPath] = process.argv.slice(2);
const {chromium} = await import(pathToFileURL(path.resolve(playwrightIndex)).href);
const tmp = mkdtempSync(path.join(process.env.TEST_TMPDIR ?? tmpdir(), 'embed-'));

const CSP = "script-src 'self' 'wasm-unsafe-eval'";
const BASE = '/docs/tools/blueprinting/';
const BUDGET_GZIP_BYTES = 300 * 1024;

//----- The native CLI ------------------------------------------------------------------

let files = 0;
function cli(...args) {
  const run = spawnSync(path.resolve(blueprint), args, {encoding: 'utf8', maxBuffer: 1 << 28});
  assert.equal(run.error, undefined, `blueprint ${args.join(' ')}: ${run.error}`);
  return {code: run.status, stdout: run.stdout, stderr: run.stderr};
}
function file(text) {
  const name = path.join(tmp, `input${files++}.json`);
  writeFileSync(name, text);
  return name;
}

// The literal of `figure` in `blueprint analyze`'s report of the spec text.
function cliFigure(specText, figure) {
  const {code, stdout, stderr} = cli('analyze', file(specText));
  assert.ok(code === 0 || (code === 2 && stdout), `blueprint analyze: ${stderr}`);
  const match = new RegExp(`^ {4}"${figure}": (.*?),?$`, 'm').exec(stdout);
  assert.ok(match, `the CLI report has no ${figure}`);
  return match[1];
}

// The spec `blueprint import megatron` makes of a launch line.
function cliImport(system, config, line) {
  const {code, stdout, stderr} = cli('import', 'megatron', '--system', system,
                                     '--hf-config', config, '--', ...line.split(/\s+/));
  assert.equal(code, 0, stderr);
  return stdout;
}

//----- The browser -------------------------------------------------------------------------

const {server, url} = await serve(servePy, siteDir, '--base', BASE, '--csp', CSP);
let browser;
try {
  assert.ok(url.endsWith(BASE), `serve.py serves at ${url}, not below ${BASE}`);
  browser = await launchChromium(chromium, tmp);
  const problems = [];
  let page = null;
  let requests = [];
  // A fresh page per load, which records CSP violations, errors and requests.
  async function open(file) {
    await page?.close();
    page = await browser.newPage();
    requests = [];
    await page.addInitScript(() => {
      window.cspViolations = [];
      document.addEventListener('securitypolicyviolation', (e) =>
        window.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));
      // When the first figure turns ready, in the page's clock (the benchmark).
      new MutationObserver((changes, observer) => {
        if (document.querySelector('blueprint-figure')?.dataset.state !== 'ready') return;
        window.firstFigureReady = performance.now();
        observer.disconnect();
      }).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-state']});
    });
    page.on('pageerror', (e) => problems.push(`${file}: page error: ${e}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`${file}: console: ${m.text()}`);
    });
    page.on('requestfinished', (request) => requests.push(request));
    await page.goto(url + file);
    return page;
  }
  async function expectNoViolations(what) {
    assert.deepEqual(await page.evaluate(() => window.cspViolations), [],
                     `${what}: CSP violations`);
  }
  const state = (selector) => page.$eval(selector, (e) => e.dataset.state);
  // Elements load only near the viewport: scroll each into view first.
  async function settled(selector) {
    await page.locator(selector).scrollIntoViewIfNeeded();
    await page.waitForFunction((s) => ['ready', 'warning', 'error'].includes(
        document.querySelector(s)?.dataset.state), selector, {timeout: 30000});
    return state(selector);
  }
  // {value, literal, text, errors} of a <blueprint-figure>.
  const figureOf = (selector) => page.$eval(selector, (e) => ({
    value: e.value, literal: e.literal,
    text: e.shadowRoot.querySelector('[part~=value]').textContent,
    title: e.shadowRoot.querySelector('[part~=value]').title,
    errors: e.shadowRoot.querySelector('[part~=errors]').textContent,
  }));
  // state: 'warning' where the mapping is over the memory capacity.
  async function expectFigure(selector, specText, figure, what, expected = 'ready') {
    assert.equal(await settled(selector), expected,
                 `${what}: ${(await figureOf(selector)).errors}`);
    const shown = await figureOf(selector);
    const literal = cliFigure(specText, figure);
    assert.equal(shown.literal, literal, `${what}: the literal`);
    assert.equal(shown.value, Number(literal), `${what}: the value`);
    assert.ok(shown.text.length > 0, `${what}: no text`);
    console.log(`ok: ${what}: ${figure} = ${literal} (shown as "${shown.text}")`);
  }

  const defaultSpec = readFileSync(defaultSpecPath, 'utf8');

  // 1. The calculator under the CSP: the full module starts, its figures are the CLI's.
  await open('index.html');
  await page.waitForFunction(() => document.body.dataset.ready, null, {timeout: 30000});
  assert.equal(await page.evaluate(() => document.body.dataset.ready), '1');
  assert.equal(await page.textContent('[data-figure="total_time"]'),
               cliFigure(defaultSpec, 'total_time'));
  await expectNoViolations('index.html');
  console.log('ok: the calculator (full module) runs under ' + CSP);

  // 2. One figure: the CLI's value; what the page downloads, gzip-compressed.
  const started = Date.now();
  await open('embed.html');
  await expectFigure('blueprint-figure', defaultSpec, 'total_time', 'embed.html');
  const firstFigure = await page.evaluate(() => window.firstFigureReady);
  await page.waitForFunction(() => document.querySelector('blueprint-figure')
      .shadowRoot.querySelector('[part~=value]').title, null, {timeout: 10000});
  const explained = cli('explain', file(defaultSpec), 'total_time', '--depth', '0');
  assert.equal((await figureOf('blueprint-figure')).title, explained.stdout.split('\n')[0],
               'the title is the formula');
  let raw = 0;
  let gzip = 0;
  const transfers = [];
  for (const request of requests) {
    const body = await (await request.response())?.body() ?? Buffer.alloc(0);
    raw += body.length;
    const compressed = gzipSync(body, {level: 9}).length;
    gzip += compressed;
    transfers.push(`${request.url().slice(url.length)} ${body.length} B (${compressed} B gzip)`);
  }
  console.log(`embed.html transferred ${raw} bytes, ${gzip} bytes gzip-compressed ` +
              `(${(gzip / 1024).toFixed(1)} KiB):\n  ${transfers.join('\n  ')}`);
  console.log(`benchmark: first figure ${firstFigure.toFixed(0)} ms after navigation ` +
              `(${Date.now() - started} ms wall)`);
  // Kept with the test's outputs (bazel-testlogs/.../embed_test/test.outputs/).
  writeFileSync(path.join(process.env.TEST_UNDECLARED_OUTPUTS_DIR ?? tmp, 'embed_transfers.json'),
                JSON.stringify({raw, gzip, firstFigureMs: Math.round(firstFigure), transfers},
                               null, 2));
  assert.ok(gzip <= BUDGET_GZIP_BYTES, `a one-figure page downloads ${gzip} bytes gzip`);
  await expectNoViolations('embed.html');

  // 2b. The hosted bundle: embed.html with manifest.json's hashed names
  // (elements.js, the preloads) loads only hashed names (the hashed files
  // import each other).
  const manifest = JSON.parse(readFileSync(path.join(siteDir, 'manifest.json'), 'utf8'));
  await page.close();
  page = await browser.newPage();
  await page.route('**/embed.html', async (route) => {
    const response = await route.fetch();
    let html = await response.text();
    for (const [name, hashed] of Object.entries(manifest)) {
      html = html.replaceAll(`"${name}"`, `"${hashed}"`);
    }
    await route.fulfill({response, body: html});
  });
  requests = [];
  page.on('requestfinished', (request) => requests.push(request));
  page.on('pageerror', (e) => problems.push(`hashed embed.html: page error: ${e}`));
  await page.goto(url + 'embed.html');
  await expectFigure('blueprint-figure', defaultSpec, 'total_time', 'embed.html, hashed bundle');
  const loaded = requests.map((r) => r.url().slice(url.length))
      .filter((u) => /\.(m?js|wasm)$|^assets\//.test(u));
  assert.deepEqual(loaded.sort(), ['blueprinting_slim.mjs', 'blueprinting_slim.wasm', 'dom.js',
                                   'elements.js', 'metadata.json', 'report.js']
      .map((n) => manifest[n]).sort());
  console.log(`ok: the hashed bundle loads only hashed names: ${loaded.join(' ')}`);

  // 3. The docs page: elements of several specs.
  await open('docs/embedding.html');
  // Far below the fold, the memory element waits until it nears the viewport.
  await expectFigure('#time-url', defaultSpec, 'total_time', 'spec="URL"');
  assert.equal(await state('#memory'), 'loading', 'an element far below the fold loaded');
  await expectFigure('#time-url', defaultSpec, 'total_time', 'spec="URL"');
  await expectFigure('#mfu-url', defaultSpec, 'mfu', 'spec="URL", another figure');
  const inline = await page.$eval('#time-inline > script', (e) => e.textContent);
  await expectFigure('#time-inline', inline, 'total_time', 'a JSON child');
  const launch = await page.$eval('#time-launch', (e) => e.getAttribute('megatron'));
  const launchSpec = cliImport('h100_sxm_80g', 'llama3.1-70b', launch);
  await expectFigure('#time-launch', launchSpec, 'total_time', 'a launch line with presets');

  // Over the memory capacity: the figure, and a warning.
  assert.equal(await settled('#time-over'), 'warning');
  const over = await page.$eval('#time-over', (e) => e.getAttribute('megatron'));
  assert.equal((await figureOf('#time-over')).literal,
               cliFigure(cliImport('h100_sxm_80g', 'llama3.1-70b', over), 'total_time'));
  assert.match((await figureOf('#time-over')).errors, /system\.mem1\.GiB/);
  console.log('ok: over capacity: the figure and a warning naming system.mem1.GiB');

  // A bad spec: the error, with its field.
  assert.equal(await settled('#time-bad'), 'error');
  const bad = await figureOf('#time-bad');
  assert.equal(bad.value, null);
  assert.match(bad.errors, /^batch\.global_batch_size /);
  console.log(`ok: a bad spec names its field: ${bad.errors}`);

  // The schedule: one table row per stage of `blueprint schedule --json`.
  await settled('#schedule');
  const timeline = JSON.parse(cli('schedule', '--json', file(defaultSpec)).stdout);
  assert.equal(await page.$eval('#schedule', (e) =>
    e.shadowRoot.querySelectorAll('table tr th[scope=row]').length), timeline.stages.length);
  // The memory: each stage's figure.
  await settled('#memory');
  const memory = await page.$eval('#memory', (e) => Object.fromEntries(
      [...e.shadowRoot.querySelectorAll('tr[data-figure]')].map((r) => [r.dataset.figure, 1])));
  assert.deepEqual(Object.keys(memory).sort(),
                   ['first_stage_mem_tier1_req', 'last_stage_mem_tier1_req',
                    'max_stage_mem_tier1_req']);
  console.log(`ok: schedule (${timeline.stages.length} stages) and memory elements`);

  // Live attributes: another figure, another spec.
  await page.$eval('#time-launch', (e) => e.setAttribute('figure', 'mfu'));
  await page.waitForFunction(() => document.querySelector('#time-launch').literal !== null &&
      document.querySelector('#time-launch').dataset.state === 'ready' &&
      document.querySelector('#time-launch').shadowRoot.querySelector('[part~=value]')
          .dataset.literal !== undefined);
  await expectFigure('#time-launch', launchSpec, 'mfu', 'figure attribute changed');
  await page.$eval('#time-inline', (e) => e.setAttribute('spec', '../175b_t8p8_v3.json'));
  await page.waitForFunction((l) => document.querySelector('#time-inline').literal === l,
                             cliFigure(defaultSpec, 'total_time'));
  console.log('ok: attribute changes re-render');

  // A mapping edit: every element of its spec follows (t4: over the capacity).
  const edited = JSON.parse(defaultSpec);
  edited.parallelism.tensor.degree = 4;
  const editedText = JSON.stringify(edited);
  await page.locator('#mapping').locator('input[name="parallelism.tensor.degree"]').fill('4');
  await page.locator('#mapping').locator('input[name="parallelism.tensor.degree"]')
      .dispatchEvent('change');
  const editedTime = cliFigure(editedText, 'total_time');
  await page.waitForFunction((l) => document.querySelector('#time-url').literal === l, editedTime);
  await expectFigure('#time-url', editedText, 'total_time', 'after the mapping edit', 'warning');
  await expectFigure('#mfu-url', editedText, 'mfu', 'after the mapping edit', 'warning');
  await expectFigure('#time-inline', editedText, 'total_time',
                     'after the mapping edit (same spec URL)', 'warning');

  // One module for the page.
  const fetched = (name) => requests.filter((r) => r.url().endsWith(`/${name}`)).length;
  assert.equal(fetched('blueprinting_slim.wasm'), 1, 'the slim module fetched once');
  assert.equal(fetched('blueprinting_slim.mjs'), 1);
  assert.equal(fetched('blueprinting_import.wasm'), 1, 'the import module fetched once');
  assert.equal(fetched('blueprinting.wasm'), 0, 'the full module is not fetched');
  console.log('ok: each module fetched once');
  await expectNoViolations('docs/embedding.html');

  assert.deepEqual(problems, []);
  console.log('PASS');
} finally {
  await browser?.close();
  server.kill();
}
