// usage: node site_test.mjs PLAYWRIGHT_CORE_INDEX SERVE_PY SITE_DIR BLUEPRINT DEFAULT_SPEC
//                           GOLDEN_CASES
//
// Serves //web:site with tools/serve.py, drives it in Debian's headless
// Chromium and checks it against the native CLI (BLUEPRINT): every
// [data-figure] element's text is the CLI report's literal for the same spec,
// from the URL and after form edits; field errors, the schedule chart, the
// lineage panel, digests, a search and its "Load", the serving panel against
// `blueprint serve` (figures, curve, errors), hostile links; share links
// of every spec/3 golden spec; the form's choices and the figures' units are
// `blueprint metadata`'s. Screenshots go to $TEST_UNDECLARED_OUTPUTS_DIR.
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import {mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

import {launchChromium, serve} from './harness.mjs';

const [playwrightIndex, servePy, siteDir, blueprint, defaultSpecPath, goldenCases] =
    process.argv.slice(2);
const {chromium} = await import(pathToFileURL(path.resolve(playwrightIndex)).href);
const tmp = mkdtempSync(path.join(process.env.TEST_TMPDIR ?? tmpdir(), 'site-'));
const outputs = process.env.TEST_UNDECLARED_OUTPUTS_DIR ?? tmp;

//----- The native CLI ----------------------------------------------------------------

let specFiles = 0;
function cli(...args) {
  const run = spawnSync(path.resolve(blueprint), args, {encoding: 'utf8'});
  assert.equal(run.error, undefined, `blueprint ${args.join(' ')}: ${run.error}`);
  return {code: run.status, stdout: run.stdout, stderr: run.stderr};
}
function specFile(spec) {
  const file = path.join(tmp, `spec${specFiles++}.json`);
  writeFileSync(file, JSON.stringify(spec, null, 2));
  return file;
}

// {figure: literal text} of `blueprint analyze`'s report.
function nativeFigures(spec) {
  const {code, stdout, stderr} = cli('analyze', specFile(spec));
  assert.ok(code === 0 || (code === 2 && stdout), `blueprint analyze failed: ${stderr}`);
  const figures = new Map();
  let inside = false;
  for (const line of stdout.split('\n')) {
    if (line === '  "figures": {') inside = true;
    else if (inside && line.startsWith('  }')) break;
    else if (inside) {
      const [, key, literal] = /^ {4}"(\w+)": (.+?),?$/.exec(line);
      figures.set(key, literal);
    }
  }
  assert.ok(figures.size > 100, `only ${figures.size} figures in the CLI report`);
  return figures;
}

//----- The page ------------------------------------------------------------------------

const nextFrames = (page) => page.evaluate(() => new Promise(
    (resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));

async function pageFigures(page) {
  return page.$$eval('[data-figure]', (elements) =>
    elements.map((e) => [e.dataset.figure, e.textContent]));
}

// Every figure shown equals the CLI's literal, and every CLI figure is shown.
// Every command of `blueprint schedule --json` for `spec` with the
// microbatches the page's schedule chart says it draws.
async function drawnTimeline(page, spec) {
  const label = await page.locator('svg.schedule-chart').getAttribute('aria-label');
  const drawn = Number(/(\d+) microbatches drawn/.exec(label)[1]);
  const drawnSpec = structuredClone(spec);
  drawnSpec.batch.global_batch_size =
      drawn * spec.parallelism.data.degree * spec.batch.microbatch_size;
  const run = cli('schedule', '--json', specFile(drawnSpec));
  // Over the memory capacity (exit 2) the timeline is still printed.
  assert.ok(run.code === 0 || (run.code === 2 && run.stdout), run.stderr);
  return JSON.parse(run.stdout).stages.flatMap((st) => st.commands);
}

async function expectFigures(page, spec, what) {
  const expected = nativeFigures(spec);
  const shown = await pageFigures(page);
  for (const [key, text] of shown) {
    assert.ok(expected.has(key), `${what}: the page shows ${key}, which the CLI report lacks`);
    assert.equal(text, expected.get(key), `${what}: figure ${key}`);
  }
  const keys = new Set(shown.map(([key]) => key));
  for (const key of expected.keys()) assert.ok(keys.has(key), `${what}: ${key} is not shown`);
  console.log(`ok: ${what}: ${shown.length} figures equal the CLI's`);
}

// The stage chart has one bar per entry of the CLI report's `stages`, with
// its blocks and rank; the slowest rank's (the most time per microbatch
// over its stages) are marked.
async function expectStages(page, spec, what) {
  const {code, stdout, stderr} = cli('analyze', specFile(spec));
  assert.ok(code === 0 || (code === 2 && stdout), `blueprint analyze failed: ${stderr}`);
  const stages = JSON.parse(stdout).stages;
  const bars = await page.$$eval('#stages [data-stage]', (gs) => gs.map((g) =>
    [Number(g.dataset.blocks), Number(g.dataset.rank), g.dataset.slowest !== undefined]));
  const pace = new Map();
  for (const st of stages) pace.set(st.rank, (pace.get(st.rank) ?? 0) + st.microbatch_time);
  const slowest = Math.max(...pace.values());
  assert.deepEqual(bars, stages.map((st) => [st.blocks, st.rank, pace.get(st.rank) === slowest]),
                   `${what}: the stage chart's bars`);
  assert.equal(await page.locator('#stages table tbody tr').count(), stages.length,
               `${what}: the stage table`);
}

// The page puts the spec in its URL once input pauses: wait for `spec`.
async function expectHash(page, spec, what) {
  let shown;
  for (let tries = 0; tries < 100; tries++) {
    const hash = await page.evaluate(() => location.hash);
    shown = hash.startsWith('#spec=') ? JSON.parse(decodeURIComponent(hash.slice(6))) : hash;
    try {
      assert.deepEqual(shown, spec);
      return;
    } catch {
      await page.waitForTimeout(50);
    }
  }
  assert.deepEqual(shown, spec, `${what}: the spec in the URL`);
}

// The error text shown next to the control labelled `label`.
async function fieldError(page, label) {
  const control = page.getByLabel(label, {exact: true});
  const id = (await control.getAttribute('aria-describedby')).split(' ')[0];
  return page.locator(`[id="${id}"]`).textContent();
}

const {server, url} = await serve(servePy, siteDir);
let browser;
try {
  browser = await launchChromium(chromium, tmp);
  const problems = [];
  const foreign = [];
  browser.on('request', (request) => {
    if (!request.url().startsWith(url) && !request.url().startsWith('data:')) {
      foreign.push(request.url());
    }
  });
  // A fresh page per load: a hash-only goto would not reload the page.
  let page = null;
  async function open(hash = '', file = '', viewport = {width: 1280, height: 900}) {
    await page?.close();
    page = await browser.newPage();
    // Three cores, whatever the machine: the search runs in three parts,
    // one per worker, merged by mergeSearch (step 7 checks the merge
    // against the CLI's whole search).
    await page.addInitScript(() => Object.defineProperty(
        Navigator.prototype, 'hardwareConcurrency', {get: () => 3}));
    await page.setViewportSize(viewport);
    page.on('pageerror', (e) => problems.push(`page error: ${e}`));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    await page.goto(url + file + hash);
    await page.waitForFunction(() => document.body.dataset.ready, null, {timeout: 30000});
    assert.equal(await page.evaluate(() => document.body.dataset.ready), '1',
                 await page.textContent('#status').catch(() => 'no status'));
    return page;
  }

  const defaultSpec = JSON.parse(readFileSync(defaultSpecPath, 'utf8'));

  // 1. No link: the default mapping, 175B t8 p8 v3.
  await open();
  await expectFigures(page, defaultSpec, 'default mapping');
  await expectHash(page, defaultSpec, 'default mapping');

  // 1b. The page keeps no copy of the core's schema: every select of the form
  // offers exactly metadata()'s enum choices, in table order; every unit
  // shown is metadata's unit of its figure; integer fields carry the
  // checker's range. Read with the CLI's `blueprint metadata`.
  const metaRun = cli('metadata');
  assert.equal(metaRun.code, 0, metaRun.stderr);
  const metadata = JSON.parse(metaRun.stdout);
  const choicesOf = (path) =>
    metadata.enums[metadata.spec_fields[path].choices].choices.map((c) => c.name);
  const optionsOf = (selector) =>
    page.$$eval(`${selector} option`, (options) => options.map((o) => o.value));
  let selects = 0;
  let inputs = 0;
  for (const [path, field] of Object.entries(metadata.spec_fields)) {
    const selector = `[id="f-${path.replaceAll('.', '-')}"]`;
    if (await page.locator(selector).count() === 0) continue;
    if (field.choices) {
      // A nullable choice offers '' (null) first.
      // The stage layout offers an explicit layout (stage_blocks) too.
      assert.deepEqual(await optionsOf(selector),
                       [...(field.nullable ? [''] : []), ...choicesOf(path),
                        ...(path === 'parallelism.pipeline.stage_layout' ? ['explicit'] : [])],
                       `the choices of ${path}`);
      selects++;
    }
    // Integers typed in (network tiers are chosen from the system's list).
    const input = page.locator(`input${selector}`);
    if (field.type !== 'integer' || await input.count() === 0) continue;
    for (const bound of ['min', 'max']) {
      assert.equal(await input.getAttribute(bound),
                   field[bound] === undefined ? null : String(field[bound]),
                   `the ${bound} of ${path}`);
    }
    inputs++;
  }
  assert.ok(selects >= 8, `only ${selects} selects of the form have metadata choices`);
  assert.ok(inputs >= 10, `only ${inputs} integer inputs of the form checked`);
  assert.deepEqual(await optionsOf('#search-datatype'), choicesOf('options.datatype'),
                   'the search datatypes');
  assert.equal(await page.locator('[data-unit-of="total_time"]').first().textContent(),
               metadata.figures.total_time.unit, 'the unit of total_time');
  const units = await page.$$eval('[data-unit-of]', (elements) =>
    elements.map((e) => [e.dataset.unitOf, e.textContent]));
  for (const [key, unit] of units) {
    if (unit !== '') assert.equal(unit, metadata.figures[key]?.unit, `the unit of ${key}`);
  }
  console.log(`ok: ${selects} selects offer metadata's choices, ${inputs} integer inputs ` +
              `its ranges; ${units.length} units are metadata's`);

  // 2. A mapping from the link.
  const spec = structuredClone(defaultSpec);
  spec.parallelism.pipeline.schedule = {type: 'interleaved_1f1b', virtual_stages: 2};
  spec.parallelism.recompute = 'attn_only';
  spec.parallelism.tensor.communication = {type: 'rs_ag', all_gather_redo: true};
  Object.assign(spec.parallelism.data,
                {degree: 2, sharding: {type: 'optimizer', group: 0}, overlap: true});
  spec.batch.global_batch_size = 128;
  await open(`#spec=${encodeURIComponent(JSON.stringify(spec))}`);
  await expectFigures(page, spec, 'mapping from the URL');
  assert.equal(await page.getByLabel('Virtual stages (v)', {exact: true}).inputValue(), '2');
  assert.equal(await page.locator('[data-stage-row]').count(), 8, 'one schedule row per stage');

  // 2b. A model of today: GQA, gated MLP, RMSNorm and an untied vocabulary;
  // the stage chart shows the first and the last stage and the imbalance.
  const llama = structuredClone(spec);
  Object.assign(llama.model, {kv_heads: 8, mlp: 'gated', norm: 'rmsnorm'});
  Object.assign(llama.model.vocabulary, {size: 128256, tied: false,
                                         position_embedding: 'rope'});
  llama.options.precision = 'megatron_mixed';
  await open(`#spec=${encodeURIComponent(JSON.stringify(llama))}`);
  await expectFigures(page, llama, 'a vocabulary model from the URL');
  await expectStages(page, llama, 'a vocabulary model');
  const stagesLabel = await page.locator('#stages svg').getAttribute('aria-label');
  assert.match(stagesLabel, /^16 virtual stages .* paces the pipeline/,
               `the stage chart has a bar per virtual stage: ${stagesLabel}`);
  console.log(`ok: stage chart: ${stagesLabel}`);

  // 2c. A mixture of experts with expert and context parallelism and ZeRO-3:
  // its form fields show, the communication table has a row per dimension
  // (every cell one of the CLI's figures), and switching MoE off in the
  // form puts null in the spec.
  const moe = structuredClone(spec);
  moe.model.moe = {experts: 8, topk: 2, ffn: 49152, shared_ffn: 0, layer_pattern: '',
                   capacity_factor: 1};
  moe.parallelism.expert = {degree: 2, tensor_degree: 0, network_tier: 1, dispatcher: 'all_to_all',
                            overlap: false, delay_wgrad: false, shared_expert_overlap: false};
  moe.parallelism.context = {degree: 2, exchange: 'ring', network_tier: 1};
  moe.parallelism.data.sharding = {type: 'parameters', group: 0};
  await open(`#spec=${encodeURIComponent(JSON.stringify(moe))}`);
  await expectFigures(page, moe, 'a mixture of experts with ep, cp and ZeRO-3');
  assert.equal(await page.getByLabel('Routed experts', {exact: true}).inputValue(), '8');
  assert.equal(await page.getByLabel('Context parallel (cp)', {exact: true}).inputValue(), '2');
  assert.equal(await page.locator('#comm tbody tr').count(), 5, 'one row per dimension');
  for (const key of ['ep_all_to_all_bytes', 'cp_kv_bytes', 'dp_comm_bytes']) {
    const shown = await page.locator(`#comm button[data-figure="${key}"]`).textContent();
    assert.notEqual(shown, '0', `${key} is not zero with its dimension on`);
  }
  await page.getByLabel('Mixture of experts', {exact: true}).uncheck();
  moe.model.moe = null;
  await nextFrames(page);
  await expectHash(page, moe, 'after switching the mixture of experts off');
  assert.equal(await page.getByLabel('Routed experts', {exact: true}).isVisible(), false,
               'the expert fields hide with model.moe null');
  console.log('ok: MoE, ep, cp and ZeRO-3 in the form and the communication table');
  await open(`#spec=${encodeURIComponent(JSON.stringify(spec))}`);

  // 2d. The precision recipes: the NVFP4 golden mapping with its BF16
  // layers (imported by the CLI) shows the CLI's figures; the recipe
  // selector (metadata's choices, 1b) switched to mxfp8 names the GEMM
  // datatype as the checker does, and with float8 GEMMs and every block in
  // the recipe the figures are the CLI's again.
  const recipeCase = path.join(goldenCases, 'megatron_llama31_70b_gb200_nvfp4_bf16_layers');
  const imported = cli('import', 'megatron', '--system', path.join(recipeCase, 'sys.json'),
                       '--', ...readFileSync(path.join(recipeCase, 'megatron.txt'), 'utf8')
                           .trim().split(/\s+/));
  assert.equal(imported.code, 0, imported.stderr);
  const recipe = JSON.parse(imported.stdout);
  await open(`#spec=${encodeURIComponent(JSON.stringify(recipe))}`);
  await expectFigures(page, recipe, 'NVFP4 with BF16 layers');
  assert.equal(await page.getByLabel('Low-precision recipe', {exact: true}).inputValue(), 'nvfp4');
  assert.equal(await page.getByLabel('Last blocks outside the recipe', {exact: true}).inputValue(),
               '2');
  await page.getByLabel('Low-precision recipe', {exact: true}).selectOption('mxfp8');
  recipe.options.recipe = 'mxfp8';
  await nextFrames(page);
  const recipeCheck = cli('check', specFile(recipe));
  assert.equal(recipeCheck.code, 2);
  const gemmError = recipeCheck.stderr.split('\n').find(
      (l) => l.startsWith('error: options.gemm_datatype'));
  assert.ok(gemmError, `no gemm_datatype error from the CLI: ${recipeCheck.stderr}`);
  assert.ok((await fieldError(page, 'GEMM datatype (FP8/FP4 training)')).includes(gemmError.slice(7)),
            'the recipe\'s datatype error is shown next to the GEMM datatype');
  await page.getByLabel('GEMM datatype (FP8/FP4 training)', {exact: true}).selectOption('float8');
  await page.getByLabel('First blocks outside the recipe', {exact: true}).fill('0');
  await page.getByLabel('Last blocks outside the recipe', {exact: true}).fill('0');
  Object.assign(recipe.options, {gemm_datatype: 'float8', unquantized_first_blocks: 0,
                                 unquantized_last_blocks: 0});
  await nextFrames(page);
  await expectFigures(page, recipe, 'MXFP8 chosen in the form');
  await expectHash(page, recipe, 'MXFP8 chosen in the form');
  console.log(`ok: the recipe selector: nvfp4 with BF16 layers, then mxfp8 (${gemmError.slice(7)})`);
  await open(`#spec=${encodeURIComponent(JSON.stringify(spec))}`);

  // 2e. Pipeline layouts as recipes write them: specs the CLI imports from
  // Megatron-LM's --decoder-first/last-pipeline-num-layers and
  // --pipeline-model-parallel-layout load into the form's explicit layout
  // and read back as the same spec; the stage chart has a bar per (virtual)
  // stage with its blocks, the slowest marked; a wrong layout's error is
  // shown next to the blocks field; an edit re-renders.
  const layoutCase = path.join(goldenCases, 'megatron_qwen3_30b_a3b_layout_string');
  const layoutFlags = readFileSync(path.join(layoutCase, 'megatron.txt'), 'utf8').trim()
      .split(/\s+/);
  const importLayout = (flags) => {
    const run = cli('import', 'megatron', '--system', path.join(layoutCase, 'sys.json'), '--',
                    ...flags);
    assert.equal(run.code, 0, run.stderr);
    return JSON.parse(run.stdout);
  };
  const layoutLabel = 'Stage layout';
  const blocksLabel = 'Blocks per stage (p × v, comma-separated)';
  const chartBlocks = () => page.$$eval('#stages [data-stage]',
                                        (bars) => bars.map((b) => Number(b.dataset.blocks)));
  // The layout string: p = 4, 8 virtual stages (v = 2), E and L counted.
  const layoutString = importLayout(layoutFlags);
  assert.deepEqual(layoutString.parallelism.pipeline.stage_blocks, [5, 6, 6, 6, 6, 6, 6, 7]);
  await open(`#spec=${encodeURIComponent(JSON.stringify(layoutString))}`);
  await expectFigures(page, layoutString, 'a --pipeline-model-parallel-layout import');
  await expectHash(page, layoutString, 'a --pipeline-model-parallel-layout import, read back');
  assert.equal(await page.getByLabel(layoutLabel, {exact: true}).inputValue(), 'explicit');
  assert.equal(await page.getByLabel(blocksLabel, {exact: true}).inputValue(),
               '5, 6, 6, 6, 6, 6, 6, 7');
  assert.deepEqual(await chartBlocks(), [5, 6, 6, 6, 6, 6, 6, 7], 'a bar per virtual stage');
  await expectStages(page, layoutString, 'a layout string');
  // First and last stage counts: 10 + 12 + 12 + 14 blocks on p = 4.
  const firstLast = importLayout([
    ...layoutFlags.filter((w, i) => !w.startsWith('--pipeline-model-parallel-layout') &&
                          !layoutFlags[i - 1]?.startsWith('--pipeline-model-parallel-layout')),
    '--decoder-first-pipeline-num-layers', '10', '--decoder-last-pipeline-num-layers', '14']);
  assert.deepEqual(firstLast.parallelism.pipeline.stage_blocks, [10, 12, 12, 14]);
  await open(`#spec=${encodeURIComponent(JSON.stringify(firstLast))}`);
  await expectFigures(page, firstLast, 'first and last stage counts');
  await expectHash(page, firstLast, 'first and last stage counts, read back');
  assert.equal(await page.getByLabel(blocksLabel, {exact: true}).inputValue(), '10, 12, 12, 14');
  assert.deepEqual(await chartBlocks(), [10, 12, 12, 14], 'a bar per stage');
  await expectStages(page, firstLast, 'first and last stage counts');
  // A wrong sum, then a wrong count: the checker's line at the blocks field.
  const blocksInput = page.getByLabel(blocksLabel, {exact: true});
  for (const [text, blocks, rule] of [['10, 12, 12, 15', [10, 12, 12, 15], 'sums to'],
                                      ['10, 12, 26', [10, 12, 26], 'entries but needs']]) {
    await blocksInput.fill(text);
    await nextFrames(page);
    const wrong = structuredClone(firstLast);
    wrong.parallelism.pipeline.stage_blocks = blocks;
    const wrongCheck = cli('check', specFile(wrong));
    assert.equal(wrongCheck.code, 2);
    const line = wrongCheck.stderr.split('\n').find(
        (l) => l.startsWith('error: parallelism.pipeline.stage_blocks') && l.includes(rule));
    assert.ok(line, `no stage_blocks error from the CLI: ${wrongCheck.stderr}`);
    assert.ok((await fieldError(page, blocksLabel)).includes(line.slice(7)),
              `the layout error is shown next to the blocks field: ${line}`);
    assert.equal(await page.locator('[data-figure]').count(), 0, 'no figures for it');
  }
  // An edit re-renders the figures and the chart.
  await blocksInput.fill('11, 12, 12, 13');
  firstLast.parallelism.pipeline.stage_blocks = [11, 12, 12, 13];
  await nextFrames(page);
  await expectFigures(page, firstLast, 'after editing the layout');
  await expectHash(page, firstLast, 'after editing the layout');
  assert.deepEqual(await chartBlocks(), [11, 12, 12, 13], 'the chart after the edit');
  await expectStages(page, firstLast, 'after editing the layout');
  // even drops stage_blocks; explicit brings the last layout back.
  await page.getByLabel(layoutLabel, {exact: true}).selectOption('even');
  await nextFrames(page);
  const even = structuredClone(firstLast);
  delete even.parallelism.pipeline.stage_blocks;
  await expectHash(page, even, 'after choosing the even layout');
  assert.equal(await blocksInput.isVisible(), false, 'no blocks field for an even layout');
  assert.deepEqual(await chartBlocks(), [12, 12, 12, 12], 'the even split in the chart');
  await page.getByLabel(layoutLabel, {exact: true}).selectOption('explicit');
  await nextFrames(page);
  await expectHash(page, firstLast, 'back to the explicit layout');
  console.log('ok: explicit stage layouts: imports round-trip, the chart, errors at the field');
  await open(`#spec=${encodeURIComponent(JSON.stringify(spec))}`);

  // 3. Form edits update every figure within a frame, and the URL.
  await page.getByLabel('Global batch size', {exact: true}).fill('256');
  spec.batch.global_batch_size = 256;
  await nextFrames(page);
  await expectFigures(page, spec, 'after editing the global batch');
  await expectHash(page, spec, 'after editing the global batch');
  await page.getByLabel('TP communication', {exact: true}).selectOption('ar');
  spec.parallelism.tensor.communication = {type: 'ar'};
  await nextFrames(page);
  await expectFigures(page, spec, 'after choosing all-reduce');
  await expectHash(page, spec, 'after choosing all-reduce');
  // The job switch keeps the gradient reduction's datatype, training-only
  // (the checker wants it null in inference), aside and brings it back.
  const gradReduce = page.getByLabel('Gradient reduction datatype', {exact: true});
  await gradReduce.selectOption('float32');
  await nextFrames(page);
  await page.getByLabel('Job', {exact: true}).selectOption('inference');
  await nextFrames(page);
  assert.equal(await gradReduce.inputValue(), '', 'no gradient reduction in inference');
  assert.ok(await page.locator('[data-figure]').count() > 0, 'the inference job analyses');
  await page.getByLabel('Job', {exact: true}).selectOption('training');
  await nextFrames(page);
  assert.equal(await gradReduce.inputValue(), 'float32', 'back with training');
  await gradReduce.selectOption('');
  await nextFrames(page);
  await expectHash(page, spec, 'after a round trip through inference');

  // 4. An invalid mapping: the checker's line next to the field, no figures.
  await page.getByLabel('Virtual stages (v)', {exact: true}).fill('5');
  spec.parallelism.pipeline.schedule.virtual_stages = 5;
  await nextFrames(page);
  const check = cli('check', specFile(spec));
  assert.equal(check.code, 2);
  const vError = check.stderr.split('\n').find(
      (l) => l.startsWith('error: parallelism.pipeline.schedule.virtual_stages'));
  assert.ok(vError, `no virtual_stages error from the CLI: ${check.stderr}`);
  assert.ok((await fieldError(page, 'Virtual stages (v)')).includes(vError.slice(7)),
            'the virtual stages error is shown next to its field');
  assert.equal(await page.locator('[data-figure]').count(), 0, 'no figures for an invalid mapping');
  console.log(`ok: "${vError.slice(7)}" is shown next to the field`);

  // 5. Back to valid with p = 4: four schedule rows.
  await page.getByLabel('Virtual stages (v)', {exact: true}).fill('3');
  await page.getByLabel('Pipeline parallel (p)', {exact: true}).fill('4');
  spec.parallelism.pipeline.schedule.virtual_stages = 3;
  spec.parallelism.pipeline.degree = 4;
  await nextFrames(page);
  await expectFigures(page, spec, 'p = 4, v = 3');
  assert.equal(await page.locator('[data-stage-row]').count(), 4, 'one schedule row per stage');
  // The chart is the core's simulated timeline: `blueprint schedule --json`
  // of the spec with the drawn microbatches has the same compute commands.
  const computeKinds = new Set(['F', 'B', 'W', 'FB']);
  const commands = (await drawnTimeline(page, spec)).filter((c) => computeKinds.has(c.kind));
  assert.equal(await page.locator('svg.schedule-chart rect[data-kind]').count(), commands.length,
               'one chart block per simulated compute command');
  assert.match(await page.locator('[data-stage-row="0"] rect[data-kind] title').first().textContent(),
               /schedule:interleaved stage 0 mb 0 chunk 0 F/);
  console.log(`ok: the schedule chart draws the core's ${commands.length} simulated commands`);

  // 5b. A schedule ordered for the mapping's times (zb_v): the figures are
  // the CLI's, and the chart draws its split backward, B and W blocks, as
  // the core's timeline lists them.
  await page.getByLabel('Pipeline schedule', {exact: true}).selectOption('zb_v');
  spec.parallelism.pipeline.schedule = {type: 'zb_v'};
  await nextFrames(page);
  await expectFigures(page, spec, 'zb_v');
  const zbWeights = (await drawnTimeline(page, spec)).filter((c) => c.kind === 'W').length;
  assert.ok(zbWeights > 0, 'zb_v defers weight gradients');
  assert.equal(await page.locator('svg.schedule-chart rect[data-kind="W"]').count(), zbWeights,
               'one chart block per W command');
  await page.getByLabel('Pipeline schedule', {exact: true}).selectOption('interleaved_1f1b');
  spec.parallelism.pipeline.schedule = {type: 'interleaved_1f1b', virtual_stages: 3};
  await nextFrames(page);
  await expectFigures(page, spec, 'back to interleaved, v = 3');
  console.log(`ok: zb_v's figures are the CLI's, its chart draws its ${zbWeights} W commands`);

  // 5c. dualpipe: with DP overlap the checker's refusal is shown next to the
  // overlap field; without it the figures are the CLI's (each rank holding
  // two stages, summed with its twin's) and the chart draws the core's F&B
  // commands.
  await page.getByLabel('Pipeline schedule', {exact: true}).selectOption('dualpipe');
  spec.parallelism.pipeline.schedule = {type: 'dualpipe'};
  await nextFrames(page);
  const twinCheck = cli('check', specFile(spec));
  assert.equal(twinCheck.code, 2);
  const overlapError = twinCheck.stderr.split('\n').find(
      (l) => l.startsWith('error: parallelism.data.overlap cannot be combined'));
  assert.ok(overlapError, `no DP overlap error from the CLI: ${twinCheck.stderr}`);
  assert.ok((await fieldError(page, 'Overlap DP communication')).includes(overlapError.slice(7)),
            'the dualpipe DP overlap error is shown next to its field');
  await page.getByLabel('Overlap DP communication', {exact: true}).uncheck();
  spec.parallelism.data.overlap = false;
  await nextFrames(page);
  await expectFigures(page, spec, 'dualpipe');
  assert.notEqual(nativeFigures(spec).get('twin_stage_sync_time'), '0',
                  'dualpipe sums each rank\'s gradients with its twin\'s');
  const pairs = (await drawnTimeline(page, spec)).filter((c) => c.kind === 'FB').length;
  assert.ok(pairs > 0, 'dualpipe overlaps forward and backward pairs');
  assert.equal(await page.locator('svg.schedule-chart rect[data-kind="FB"]').count(), pairs,
               'one chart block per F&B command');
  await page.getByLabel('Overlap DP communication', {exact: true}).check();
  spec.parallelism.data.overlap = true;
  await page.getByLabel('Pipeline schedule', {exact: true}).selectOption('interleaved_1f1b');
  spec.parallelism.pipeline.schedule = {type: 'interleaved_1f1b', virtual_stages: 3};
  await nextFrames(page);
  await expectFigures(page, spec, 'back to interleaved after dualpipe');
  console.log(`ok: dualpipe refuses DP overlap on the page, its figures are the CLI's, ` +
              `its chart draws its ${pairs} F&B commands`);

  // 6. "Why this number": the lineage of a figure, as `blueprint explain` prints it.
  const specPath = specFile(spec);
  await page.locator('button[data-figure="total_time"]').first().click();
  await page.locator('#lineage').waitFor({state: 'visible'});
  const explain = cli('explain', specPath, 'total_time');
  assert.equal(explain.code, 0, explain.stderr);
  assert.equal(await page.textContent('#lineage-text'), explain.stdout);
  assert.ok(explain.stdout.startsWith('total_time = fw_time + bw_time + '),
            'the lineage starts with the formula');
  // A depth in the panel is `blueprint explain --depth N`.
  await page.getByLabel('Depth', {exact: true}).selectOption('1');
  const explain1 = cli('explain', specPath, 'total_time', '--depth', '1');
  assert.equal(explain1.code, 0, explain1.stderr);
  assert.equal(await page.textContent('#lineage-text'), explain1.stdout);
  assert.ok(explain1.stdout.length < explain.stdout.length, '--depth 1 is shorter');
  await page.getByLabel('Depth', {exact: true}).selectOption('');
  const digests = cli('digest', specPath).stdout;
  await page.waitForFunction((text) => document.getElementById('digests').textContent === text,
                             digests, {timeout: 5000});
  await page.keyboard.press('Escape');
  assert.ok(await page.locator('#lineage').isHidden(), 'Escape closes the lineage panel');
  console.log('ok: lineage and digests equal the CLI\'s');

  // 7. A tiny search with context parallelism and every ZeRO stage under
  // the refined profile, and loading its best mapping (the search's
  // canonical spec, options.profile refined) into the calculator.
  await page.getByLabel('Model preset', {exact: true}).selectOption('megatron-126M');
  await page.getByLabel('Processors', {exact: true}).fill('8');
  await page.getByLabel('Max global batch', {exact: true}).fill('16');
  await page.getByLabel('Top K', {exact: true}).fill('3');
  assert.deepEqual(await optionsOf('#search-precision'), choicesOf('options.precision'),
                   'the search precisions');
  await page.getByLabel('Search precision', {exact: true}).selectOption('calculon');
  assert.deepEqual(await optionsOf('#search-profile'), choicesOf('options.profile'),
                   'the search profiles');
  await page.getByLabel('Search profile', {exact: true}).selectOption('refined');
  await page.getByLabel('Max context degree', {exact: true}).fill('2');
  await page.getByLabel('Context exchanges', {exact: true}).selectOption('all');
  await page.getByLabel('Data-parallel sharding', {exact: true}).selectOption('all');
  await page.getByLabel('Pipeline schedules', {exact: true}).selectOption('all');
  await page.getByLabel('Pipeline degrees', {exact: true}).selectOption('all');
  await page.getByRole('button', {name: 'Search', exact: true}).click();
  await page.locator('#search-results button.load').first().waitFor({timeout: 60000});
  const app = JSON.parse(readFileSync(path.join(siteDir, 'presets/models/megatron-126M.json')));
  const appPath = path.join(tmp, 'app.json');
  const sysPath = path.join(tmp, 'sys.json');
  writeFileSync(appPath, JSON.stringify(app));
  const {name: systemName, ...system} = spec.system;
  writeFileSync(sysPath, JSON.stringify(system));
  const searchArgs = ['search', '--app', appPath, '--system', sysPath, '--procs', '8',
                      '--max-batch', '16', '--datatype', 'float16', '--top', '3',
                      '--fused-activation', 'true', '--precision', 'calculon',
                      '--profile', 'refined', '--max-context', '2',
                      '--context-exchange', 'all', '--sharding', 'all',
                      '--schedules', 'all', '--json'];
  const native = cli(...searchArgs, '--stage-layouts', 'all', '--specs');
  assert.equal(native.code, 0, native.stderr);
  const nativeSearch = JSON.parse(native.stdout);
  assert.match(await page.textContent('#search-status'),
               new RegExp(`^${nativeSearch.total_executions} mappings evaluated ` +
                          `in [0-9.]+ s on 3 workers: ${nativeSearch.good_executions} valid, ` +
                          `${nativeSearch.bad_executions} rejected`));
  assert.equal(await page.locator('#search-results tbody tr').count(), nativeSearch.top.length);
  const rates = await page.locator('#search-results tbody tr td:nth-child(2)').allTextContents();
  assert.deepEqual(rates, nativeSearch.top.map((t) => t.stats.sample_rate.toPrecision(6)),
                   'the merged parts rank as the whole search');
  const best = nativeSearch.top[0].execution;
  const firstRow = await page.locator('#search-results tbody tr').first()
      .locator('td').allTextContents();
  const headers = await page.locator('#search-results thead th').allTextContents();
  const cell = (name) => firstRow[headers.indexOf(name)];
  assert.equal(cell('cp'), String(best.context_par) +
               (best.context_par > 1 ? ` ${best.context_par_exchange}` : ''), 'the cp column');
  assert.equal(cell('ZeRO'), best.data_par_sharding, 'the ZeRO column');
  assert.equal(cell('Schedule'), best.pipeline_schedule, 'the schedule column');
  assert.equal(cell('Layout'), best.pipeline_stage_blocks?.join(',') ?? best.pipeline_stage_layout,
               'the stage layout column');
  // The same search again runs on the same (kept) workers: the same answer.
  await page.evaluate(() => { document.getElementById('search-status').textContent = ''; });
  await page.getByRole('button', {name: 'Search', exact: true}).click();
  await page.waitForFunction(() => /evaluated in/.test(
      document.getElementById('search-status').textContent), null, {timeout: 60000});
  assert.deepEqual(await page.locator('#search-results tbody tr td:nth-child(2)').allTextContents(),
                   rates, 'a second search on the kept workers');
  // The progress is redrawn at most every 250 ms: a redraw still pending
  // when the search ended must not overwrite its result.
  await page.waitForTimeout(400);
  assert.match(await page.textContent('#search-status'), /evaluated in/,
               'the status after a pending progress redraw');
  assert.ok(await page.locator('#search-progress').isHidden(), 'the progress bar after a search');
  // 12 blocks on 8 processors: p = 8 is tried only with uneven stages.
  assert.ok(nativeSearch.total_executions > JSON.parse(cli(...searchArgs).stdout).total_executions,
            'uneven stages add mappings');
  await page.locator('#search-results button.load').first().click();
  await nextFrames(page);
  const loaded = structuredClone(nativeSearch.top[0].spec);
  loaded.model.name = 'megatron-126M';
  loaded.system.name = systemName;
  await expectHash(page, loaded, 'the best mapping of the search');
  await expectFigures(page, loaded, 'the best mapping of the search');
  await page.screenshot({path: path.join(outputs, 'site.png'), fullPage: true});

  // 7b. The module's presets: its systems in the system list, its Hugging
  // Face configs in the import section; an import of a config shows what
  // `blueprint import megatron --hf-config` gives.
  await open();
  const shipped = JSON.parse(cli('presets').stdout);
  const systemOptions = await optionsOf('#system-preset');
  for (const name of Object.keys(shipped.systems)) {
    assert.ok(systemOptions.includes(name), `system preset ${name} is offered`);
  }
  await page.getByText('From a Hugging Face config.json', {exact: true}).click();
  await page.getByLabel('Start from a published config', {exact: true})
      .selectOption('qwen3-8b');
  assert.deepEqual(JSON.parse(await page.getByLabel('config.json', {exact: true}).inputValue()),
                   shipped.models['qwen3-8b']);
  const hfFlags = ['--micro-batch-size', '1', '--bf16', '--seq-length', '4096'];
  const {name: defaultSystemName, ...defaultSystem} = defaultSpec.system;
  const hfImport = cli('import', 'megatron', '--system',
                       specFile(defaultSystem), '--hf-config', 'qwen3-8b', '--', ...hfFlags);
  await page.getByLabel('Megatron-LM flags for the config', {exact: true})
      .fill(hfFlags.join(' '));
  await page.getByRole('button', {name: 'Import config', exact: true}).click();
  if (hfImport.code === 0) {
    assert.equal(await page.textContent('#import-status'),
                 'Import of the Hugging Face config: loaded.');
    const imported = JSON.parse(hfImport.stdout);
    imported.model.name = '';  // not the qwen3-8b model preset: another seq-length
    imported.system.name = defaultSystemName;
    await expectHash(page, imported, 'the qwen3-8b import');
    // A search of the imported spec model (GQA, gated MLP, vocabulary): the
    // page sends it with its name, as a spec model, and gets the CLI's counts.
    const appFile = path.join(tmp, 'qwen3-8b-app.json');
    writeFileSync(appFile, JSON.stringify(imported.model));
    const sysFile = specFile(defaultSystem);
    await page.getByLabel('Processors', {exact: true}).fill('8');
    await page.getByLabel('Max global batch', {exact: true}).fill('8');
    await page.getByLabel('Top K', {exact: true}).fill('3');
    // The default system (Calculon's A100) has no bfloat16 rates.
    await page.getByLabel('Search datatype', {exact: true}).selectOption('float16');
    await page.evaluate(() => { document.getElementById('search-status').textContent = ''; });
    await page.getByRole('button', {name: 'Search', exact: true}).click();
    await page.waitForFunction(() => /evaluated in|did not run/.test(
        document.getElementById('search-status').textContent), null, {timeout: 60000});
    const flagsOf = async (id) => page.locator(id).inputValue();
    const specSearch = cli('search', '--app', appFile, '--system', sysFile, '--procs', '8',
                           '--max-batch', '8', '--top', '3', '--json',
                           '--datatype', await flagsOf('#search-datatype'),
                           '--precision', await flagsOf('#search-precision'),
                           '--profile', await flagsOf('#search-profile'),
                           '--fused-activation', await flagsOf('#search-fused'),
                           '--max-context', await flagsOf('#search-max-context'),
                           '--context-exchange', await flagsOf('#search-context-exchange'),
                           '--sharding', await flagsOf('#search-sharding'),
                           '--schedules', await flagsOf('#search-schedules'),
                           '--stage-layouts', await flagsOf('#search-stage-layouts'),
                           '--recipes', await flagsOf('#search-recipes'),
                           '--expert-dispatchers', await flagsOf('#search-expert-dispatchers'),
                           '--expert-overlap', await flagsOf('#search-expert-overlap'));
    assert.equal(specSearch.code, 0, specSearch.stderr);
    const specCounts = JSON.parse(specSearch.stdout);
    assert.match(await page.textContent('#search-status'),
                 new RegExp(`^${specCounts.total_executions} mappings evaluated in [0-9.]+ s ` +
                            `on 3 workers: ${specCounts.good_executions} valid`),
                 'a search of a spec model');
  } else {
    assert.deepEqual(await page.$$eval('#import-status li', (items) => items.map((i) => i.textContent)),
                     hfImport.stderr.split('\n').filter(Boolean).map((l) => l.replace(/^error: /, '')));
  }
  // A bad config: the CLI's errors, naming the keys.
  await page.getByLabel('config.json', {exact: true}).fill('{"model_type": "gpt2"}');
  await page.getByRole('button', {name: 'Import config', exact: true}).click();
  const badItems = await page.$$eval('#import-status li', (items) => items.map((i) => i.textContent));
  assert.equal(badItems[0], 'hf_config.model_type: expected one of "deepseek_v2", ' +
                            '"deepseek_v3", "gemma", "llama", "mistral", "mixtral", ' +
                            '"qwen2", "qwen2_moe", "qwen3", "qwen3_moe", got string "gpt2"');
  assert.ok(badItems.includes('hf_config.hidden_size: required key is missing'), badItems.join('\n'));
  console.log('ok: presets and the Hugging Face import');

  // 7c. The validation view: the module's `validate` is the CLI's, row for
  // row; one scatter per source with one point per predicted run.
  for (const profile of ['refined', 'calculon']) {
    const native = cli('validate', '--profile', profile, '--json');
    assert.equal(native.code, 0, native.stderr);
    const expected = JSON.parse(native.stdout);
    await page.getByLabel('Profile', {exact: true}).selectOption(profile);
    await page.getByRole('button', {name: 'Validate', exact: true}).click();
    await page.locator('[data-summary="overall"]').waitFor();
    assert.equal(await page.locator('[data-validation-row]').count(), expected.rows.length);
    assert.equal(await page.textContent('[data-mean="overall"]'),
                 `${(expected.overall.mean_abs_error * 100).toFixed(2)}%`);
    // The floor of the runs measured more than once, per group.
    for (const [group, floor] of Object.entries(expected.floor_by_group)) {
      assert.equal(await page.textContent(`[data-floor="${group}"]`),
                   `${(floor.floor_mean_abs_error * 100).toFixed(2)}%`, `${profile} ${group} floor`);
    }
    assert.ok(expected.repeated_runs.length > 0);
    for (const r of expected.rows.slice(0, 5)) {
      const sign = r.error >= 0 ? '+' : '';
      assert.equal(await page.textContent(`[data-error="${r.id}"]`),
                   `${sign}${(r.error * 100).toFixed(2)}%`, `${profile} ${r.id}`);
    }
    const sources = Object.keys(expected.by_source);
    assert.equal(await page.locator('#validation-plots svg[data-source]').count(), sources.length);
    for (const source of sources) {
      assert.equal(await page.locator(`svg[data-source="${source}"] circle`).count(),
                   expected.by_source[source].rows, `${profile} ${source} points`);
    }
    // Kendall's tau per ranked set of a source's mappings, as the CLI has it.
    assert.ok(expected.rankings.length > 0);
    assert.equal(await page.locator('[data-ranking]').count(), expected.rankings.length);
    for (const r of expected.rankings) {
      const key = `${r.source_key}/${r.model}/${r.system}`;
      assert.equal(await page.textContent(`[data-tau="${key}"]`), r.tau.toFixed(3),
                   `${profile} ${key} tau`);
    }
    assert.match(await page.textContent('[data-ranking-summary="printed mappings"]'),
                 new RegExp(`mean tau ${expected.rankings_printed.mean_tau.toFixed(3)}`));
    assert.match(await page.textContent('#validation-status'), new RegExp(`^${profile}: `));
  }
  await page.screenshot({path: path.join(outputs, 'site_validation.png'), fullPage: true});
  console.log('ok: the validation view shows blueprint validate, per source, with its rankings');

  // 7d. The serving panel: the spec its form builds (a serving spec naming
  // its presets) is the one written here, and the page's figures are
  // `blueprint serve`'s for it; every point of the throughput-latency curve
  // is `blueprint serve` at its concurrency, doubling until the CLI refuses
  // the next one; a degree the checker rejects is named next to its field.
  await open();
  // Its first render follows the calculator's, when the page is idle.
  await page.waitForFunction(() => document.getElementById('serving').dataset.rendered);
  const serving = page.locator('#serving');
  const servingRender = async (edit) => {
    const before = await serving.getAttribute('data-rendered');
    await edit();
    await page.waitForFunction((n) => document.getElementById('serving').dataset.rendered !== n,
                               before);
    await nextFrames(page);
  };
  // {figure: literal} of `blueprint serve`'s "name value" lines.
  const serveFigures = (spec) => {
    const run = cli('serve', specFile(spec));
    return {run, figures: new Map(run.stdout.split('\n')
        .filter((l) => /^[a-z0-9_]+ -?[0-9]/.test(l)).map((l) => l.split(' ')))};
  };
  const servingSpec = {
    format: 'blueprinting.serving_spec/1', model: 'llama3.1-70b', system: 'h100_sxm_80g',
    weight_datatype: 'bfloat16', memory_utilization: 0.9,
    kv_cache: {datatype: 'bfloat16', block_tokens: 16},
    pools: {type: 'aggregated',
            pool: {tensor: 8, pipeline: 1, expert: 1, attention_data: 1, replicas: 1}},
    workload: {input_tokens: 1024, output_tokens: 256, concurrency: 64},
    speculative: {type: 'none'}};
  await servingRender(async () => {
    await page.selectOption('#serving-model', 'llama3.1-70b');
    await page.selectOption('#serving-system', 'h100_sxm_80g');
    await page.selectOption('#serving-layout', 'aggregated');
    for (const [id, value] of [['pool1-tensor', '8'], ['pool1-pipeline', '1'],
                               ['pool1-expert', '1'], ['pool1-attention_data', '1'],
                               ['pool1-replicas', '1'], ['input', '1024'], ['output', '256'],
                               ['concurrency', '64']]) {
      await page.fill(`#serving-${id}`, value);
    }
  });
  const pageServingSpec = JSON.parse(await page.textContent('#serving-spec'));
  assert.deepEqual(pageServingSpec, servingSpec, 'the serving spec the page built');
  const served = serveFigures(pageServingSpec);
  assert.equal(served.run.code, 0, served.run.stderr);
  assert.match(await page.textContent('#serving-status'), /^Valid serving mapping on 8 GPUs/);
  const servingShown = await page.$$eval('[data-serving-figure]', (elements) =>
    elements.map((e) => [e.dataset.servingFigure, e.textContent]));
  for (const [key, text] of servingShown) {
    assert.equal(text, served.figures.get(key), `serving figure ${key}`);
  }
  const servingKeys = new Set(servingShown.map(([key]) => key));
  for (const key of served.figures.keys()) assert.ok(servingKeys.has(key), `${key} is not shown`);
  for (const key of ['output_tokens_per_second_per_gpu', 'ttft', 'tpot']) {
    assert.equal(await page.textContent(`.serving-headline [data-serving-figure="${key}"]`),
                 served.figures.get(key), `the headline's ${key}`);
  }
  assert.equal(await page.textContent(
      '.serving-headline [data-serving-figure="tpot"] ~ .unit'), 's', 'the unit of tpot');
  // The curve: one row and one circle per concurrency, each the CLI's.
  const rows = await page.$$eval('#serving-curve tr[data-concurrency]', (trs) => trs.map((tr) =>
    [Number(tr.dataset.concurrency), Object.fromEntries([...tr.querySelectorAll('td')]
        .map((td) => [td.dataset.curve, td.textContent]))]));
  assert.ok(rows.length >= 5, `only ${rows.length} points on the serving curve`);
  assert.equal(await page.locator('#serving-curve svg circle.curve-point').count(), rows.length);
  for (const [concurrency, cells] of rows) {
    const at = structuredClone(servingSpec);
    at.workload.concurrency = concurrency;
    const {run, figures} = serveFigures(at);
    assert.equal(run.code, 0, `concurrency ${concurrency}: ${run.stderr}`);
    for (const key of ['tpot', 'ttft', 'output_tokens_per_second_per_gpu',
                       'requests_per_second']) {
      assert.equal(cells[key], figures.get(key), `the curve at ${concurrency}: ${key}`);
    }
  }
  const powers = rows.map(([c]) => c).filter((c) => (c & (c - 1)) === 0);
  assert.deepEqual(powers, powers.map((c, i) => 2 ** i), 'the curve doubles from 1');
  const beyond = structuredClone(servingSpec);
  beyond.workload.concurrency = 2 * powers.at(-1);
  const refused = cli('serve', specFile(beyond));
  assert.equal(refused.code, 2, `the CLI accepts concurrency ${2 * powers.at(-1)}`);
  assert.match(refused.stderr, /max_concurrency/);
  // Then the last concurrency the KV cache holds: one more is refused.
  const past = structuredClone(servingSpec);
  past.workload.concurrency = rows.at(-1)[0] + 1;
  assert.equal(cli('serve', specFile(past)).code, 2,
               `the curve stops before concurrency ${past.workload.concurrency}`);
  // "Why this number": serve explain's text.
  await page.click('.serving-headline [data-serving-figure="tpot"]');
  assert.equal(await page.textContent('#serving-explain'),
               cli('serve', 'explain', specFile(servingSpec), 'tpot').stdout);
  await page.screenshot({path: path.join(outputs, 'site_serving.png'), fullPage: true});
  // A tensor degree that divides neither the heads nor the MLP: the CLI's
  // errors on pools.pool.tensor next to the Tensor field, no figures.
  await servingRender(() => page.fill('#serving-pool1-tensor', '3'));
  const badServing = structuredClone(servingSpec);
  badServing.pools.pool.tensor = 3;
  const badRun = cli('serve', specFile(badServing));
  assert.equal(badRun.code, 2);
  // The lines on the tensor degree alone (the MLP's rule names tensor x
  // attention_data, the pool's field).
  const tensorErrors = badRun.stderr.split('\n')
      .filter((l) => l.startsWith('error: pools.pool.tensor ('))
      .map((l) => l.slice('error: '.length));
  assert.ok(tensorErrors.length > 0, badRun.stderr);
  const tensorShown = await page.textContent(
      `[id="${await page.getAttribute('#serving-pool1-tensor', 'aria-describedby')}"]`);
  for (const line of tensorErrors) {
    assert.ok(tensorShown.includes(line), `not next to the tensor field: ${line}\n${tensorShown}`);
  }
  assert.equal(await page.getAttribute('#serving-pool1-tensor', 'aria-invalid'), 'true');
  assert.match(await page.textContent('#serving-status'), /^Invalid serving mapping/);
  assert.equal(await page.locator('[data-serving-figure]').count(), 0, 'no serving figures');
  console.log(`ok: serving: the figures are blueprint serve's, ${rows.length} curve points ` +
              `(concurrency 1 to ${rows.at(-1)[0]}), tensor 3 named next to its field`);

  // 8. Hostile links: a clear message and the defaults, never markup.
  await open('#spec=%7Bnot%20json');
  assert.match(await page.textContent('#notice'), /could not be used/);
  await expectFigures(page, defaultSpec, 'defaults after a malformed link');
  await open(`#spec=${encodeURIComponent(JSON.stringify(
      {...defaultSpec, batch: {global_batch_size: 1e300, microbatch_size: 1}}))}`);
  assert.match(await page.textContent('#notice'), /batch.global_batch_size/);
  const hostile = structuredClone(defaultSpec);
  hostile.model.name = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>';
  await open(`#spec=${encodeURIComponent(JSON.stringify(hostile))}`);
  assert.equal(await page.getByLabel('Model name', {exact: true}).inputValue(), hostile.model.name);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.equal(await page.locator('img, script:not([src])').count(), 0);
  // Extreme system numbers: rejected by the checker with the field, never a
  // "valid mapping" with impossible figures.
  const extreme = structuredClone(defaultSpec);
  extreme.system.mem1.MB_efficiency[3][1] = 1e-300;
  extreme.system.networks[1].bandwidth = 5e-324;
  extreme.system.networks[0].ops.all_reduce = [2, -1e300];
  await open(`#spec=${encodeURIComponent(JSON.stringify(extreme))}`);
  await nextFrames(page);
  assert.match(await page.textContent('#status'), /^Invalid mapping/);
  assert.equal(await page.locator('[data-figure]').count(), 0, 'no figures for extreme numbers');
  const systemErrors = await page.textContent('#system-errors');
  for (const field of ['system.mem1.MB_efficiency[3][1] (1e-300)',
                      'system.networks[1].bandwidth (5e-324)',
                      'system.networks[0].ops.all_reduce[1] (-1e+300)']) {
    assert.ok(systemErrors.includes(field), `${field} is named: ${systemErrors}`);
  }
  console.log('ok: hostile links are shown as text or rejected with a message');

  // 8b. A share link of every spec/3 golden spec loads as it is (optional
  // fields left out are filled by the core, as check fills them): its
  // figures are the CLI's, or its rule violations are shown as the CLI's.
  // A wrong part of one is refused naming its field.
  const linkOf = (value) => `#spec=${encodeURIComponent(JSON.stringify(value))}`;
  let goldenLinks = 0;
  for (const name of readdirSync(goldenCases).sort()) {
    let text;
    try {
      text = readFileSync(path.join(goldenCases, name, 'spec.json'), 'utf8');
    } catch {
      continue;  // a Calculon case: three files, no spec
    }
    let golden;
    try {
      golden = JSON.parse(text);
    } catch {
      continue;  // a case of malformed input (reject_malformed_json): no link
    }
    if (golden.format !== 'blueprinting.spec/3') continue;
    await open(linkOf(golden));
    await nextFrames(page);
    assert.equal(await page.textContent('#notice').catch(() => ''), '',
                 `${name}: the link is refused`);
    if (cli('check', specFile(golden)).code === 0) {
      await expectFigures(page, golden, `the share link of ${name}`);
    } else {
      assert.match(await page.textContent('#status'), /^Invalid mapping/, name);
    }
    goldenLinks++;
  }
  assert.ok(goldenLinks >= 9, `only ${goldenLinks} spec/3 golden specs were found`);
  const lite = JSON.parse(readFileSync(
      path.join(goldenCases, 'spec_mla_moe_mtp_deepseek_v2_lite', 'spec.json'), 'utf8'));
  for (const [field, value] of [['model.latent_attention', 'mla'],
                                ['parallelism.data.sharding.type', 'everything']]) {
    const broken = structuredClone(lite);
    const keys = field.split('.');
    keys.slice(0, -1).reduce((o, k) => o[k], broken)[keys.at(-1)] = value;
    await open(linkOf(broken));
    const notice = await page.textContent('#notice');
    assert.ok(notice.includes(field), `${field} is named: ${notice}`);
  }
  console.log(`ok: share links of ${goldenLinks} spec/3 golden specs load; a wrong part is named`);

  // 9. Phone width. (The embedding pages: embed_test.mjs.)
  await open('', '', {width: 390, height: 844});
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390),
            'no horizontal scrolling at 390 px');
  await page.screenshot({path: path.join(outputs, 'site_390px.png'), fullPage: true});

  assert.deepEqual(problems, []);
  assert.deepEqual(foreign, [], 'the page fetched from elsewhere than its own server');
  // Under bazel test they end up zipped in
  // bazel-testlogs/tests/browser/site_test/test.outputs/outputs.zip.
  console.log(`screenshots: ${path.join(outputs, 'site.png')} ` +
              `${path.join(outputs, 'site_390px.png')}`);
  console.log('PASS');
} finally {
  await browser?.close();
  server.kill();
}
