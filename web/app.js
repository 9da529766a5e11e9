// The calculator page: the spec lives in the form and the URL; every change
// re-runs the wasm core's analyze on the next animation frame and redraws
// figures, charts and field errors; the URL, digests and lineage follow when
// input pauses. document.body.dataset.ready is "1" once the first result is
// shown ("error" if the module cannot load).
import createBlueprinting from './blueprinting.mjs';
import {h, byId, fill, call} from './dom.js';
import {setField, appJson, searchAppJson, systemJson, isObject, formFields}
    from './spec.js';
import {SpecForm} from './form.js';
import {literals, HEADLINE, COMM_ROWS, byGroup, groupTitle, figureCell,
        setFigure} from './report.js';
import {loadMetadata} from './metadata.js';
import {drawnMicrobatches, memoryChart, scheduleChart, stageChart} from './charts.js';
import {SearchPanel} from './search.js';
import {ServingPanel} from './serving.js';
import {runValidation} from './validation.js';

// The default mapping (core/spec/testdata/175b_t8p8_v3.json, copied into the
// site by web/BUILD.bazel).
const DEFAULT_SPEC = '175b_t8p8_v3.json';
const MAX_LINK_CHARS = 1 << 20;
const SLOW_DELAY_MS = 120;

const state = {
  bp: null,
  meta: null,          // the core's metadata (web/metadata.js), loaded once at start
  spec: null,          // the spec shown (a plain object in canonical shape)
  defaultSpec: null,
  models: new Map(),   // preset name -> Calculon app object, or a model imported
                       // from a shipped Hugging Face config
  systems: new Map(),  // preset name -> Calculon system object
  hfConfigs: new Map(),  // preset name -> Hugging Face config.json object
  memory: {},          // choices to restore when switching a sum type back (setField)
  frame: 0,
  slowTimer: 0,
  cells: [],           // figure cells of the summary groups
  tableCells: [],      // figure cells of the full table
  tableKeys: '',
  lineage: null,       // {key, button} while the lineage panel is open
  scheduleKey: '',     // the inputs of the schedule chart shown
  specJson: '',
};

// The form, built once the metadata is loaded.
let form = null;

function buildForm() {
  form = new SpecForm(
      formFields(state.meta),
      {model: byId('sec-model'), shape: byId('sec-shape'), comm: byId('sec-comm'),
       exec: byId('sec-exec')},
      (path, value) => {
        if (path !== null) setField(state.spec, path, value, state.memory);
        schedule();
      });
}

function schedule() {
  if (!state.frame) state.frame = requestAnimationFrame(() => {
    state.frame = 0;
    render();
  });
}

function notice(text) {
  const element = byId('notice');
  element.textContent = text ?? '';
  element.hidden = !text;
}

// JSON with sorted keys, to compare a spec's model or system with a preset.
function stable(value) {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${stable(value[k])}`)
        .join(',')}}`;
  }
  return JSON.stringify(value);
}

const withoutName = ({name, ...rest}) => rest;

function presetOf(presets, object) {
  const key = stable(withoutName(object ?? {}));
  for (const [name, preset] of presets) if (stable(preset) === key) return name;
  return '';
}

//----- Loading a spec ------------------------------------------------------------

// A spec from the URL's "#spec=..." or {problem}; null when there is none.
// The core reads it (`canonical`: the checker's own parser), filling every
// optional field as check does; a broken rule is shown next to its field like
// any edit's, so only a document the core cannot read is refused.
function specFromHash(hash) {
  if (!hash.startsWith('#spec=')) return null;
  const encoded = hash.slice('#spec='.length);
  if (encoded.length > MAX_LINK_CHARS) return {problem: 'the link is too long'};
  let text;
  try {
    text = decodeURIComponent(encoded);
  } catch {
    return {problem: 'the link is not properly percent-encoded'};
  }
  const result = call(state.bp, 'canonical', text);
  if (!result.ok) {
    const problems = result.errors.map((e) => e.message);
    const more = problems.length > 3 ? ` and ${problems.length - 3} more` : '';
    return {problem: `${problems.slice(0, 3).join('; ')}${more}`};
  }
  return {spec: JSON.parse(result.output)};
}

function loadFromHash() {
  const fromHash = specFromHash(location.hash);
  if (fromHash?.spec) {
    notice(null);
    setSpec(fromHash.spec);
    return;
  }
  if (fromHash?.problem) {
    notice(`The mapping in this link could not be used: ${fromHash.problem}. ` +
           'Showing the default mapping instead.');
  }
  setSpec(state.defaultSpec);
}

function setSpec(spec) {
  state.spec = structuredClone(spec);
  state.memory = {};
  form.show(state.spec, {force: true});
  schedule();
}

// Loads the canonical spec text an import returned; keeps the names (Calculon
// files have none).
function loadImported(result, names, where, what, done = `${what}: loaded.`) {
  if (!result.ok) {
    fill(where, h('p', {}, `${what} failed:`),
         h('ul', {class: 'errors'}, result.errors.map((e) => h('li', {}, e.message))));
    return false;
  }
  let spec;
  try {
    spec = JSON.parse(result.output);
  } catch (e) {
    fill(where, h('p', {}, `${what} returned unreadable JSON: ${e.message}`));
    return false;
  }
  if (names.model !== undefined && spec.model) spec.model.name = names.model;
  else if (spec.model?.name === '') spec.model.name = presetOf(state.models, spec.model);
  if (names.system !== undefined && spec.system) spec.system.name = names.system;
  setSpec(spec);
  const notes = result.notes ?? [];
  fill(where, h('p', {class: 'ok'}, done),
       ...(notes.length ? [h('ul', {class: 'notes'}, notes.map((n) => h('li', {}, n)))] : []));
  return true;
}

//----- Rendering -----------------------------------------------------------------

// The summary: the headline figures in cards by their metadata group, each
// under its metadata label, which carries the figure's meaning.
function buildGroups() {
  const container = byId('figures');
  for (const [group, figures] of byGroup(HEADLINE, (key) => key, state.meta)) {
    const list = h('dl', {});
    for (const key of figures) {
      const info = state.meta.figure(key);
      const cell = figureCell(key, info);
      state.cells.push(cell);
      list.append(h('div', {class: 'row'}, h('dt', {title: info?.meaning}, info?.label ?? key),
                    h('dd', {}, cell.element)));
    }
    container.append(h('section', {class: 'group', 'data-group': group},
                       h('h2', {}, groupTitle(group)), list));
  }
}

// The communication table (COMM_ROWS): built once, its cells filled by
// every report like the summary's.
function buildCommTable() {
  const rows = COMM_ROWS.map(([label, bytesKey, timeKey]) => {
    const bytes = figureCell(bytesKey, state.meta.figure(bytesKey));
    const time = figureCell(timeKey, state.meta.figure(timeKey));
    state.cells.push(bytes, time);
    return h('tr', {'data-dimension': bytesKey},
             h('th', {scope: 'row'}, label), h('td', {}, bytes.element),
             h('td', {}, time.element));
  });
  fill(byId('comm'), h('table', {class: 'comm-table'},
       h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Dimension'),
                        h('th', {scope: 'col'}, 'Bytes per rank per step'),
                        h('th', {scope: 'col'}, 'Exposed time per step'))),
       h('tbody', {}, rows)));
}

// Every figure of the report, by metadata group, with its meaning.
function showAllFigures(figures) {
  const keys = [...figures.keys()].sort();
  if (keys.join() !== state.tableKeys) {
    state.tableKeys = keys.join();
    state.tableCells = [];
    const bodies = byGroup(keys, (key) => key, state.meta).map(([group, groupKeys]) => {
      const cells = groupKeys.map((key) => figureCell(key, state.meta.figure(key)));
      state.tableCells.push(...cells);
      return h('tbody', {'data-group': group},
               h('tr', {}, h('th', {scope: 'colgroup', colspan: 3, class: 'group-title'},
                             groupTitle(group))),
               cells.map((cell) => h('tr', {},
                   h('th', {scope: 'row'}, h('code', {}, cell.key)),
                   h('td', {}, cell.element),
                   h('td', {class: 'meaning'}, cell.info.meaning ?? ''))));
    });
    fill(byId('all-figures'),
         h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Figure'),
                          h('th', {scope: 'col'}, 'Value'), h('th', {scope: 'col'}, 'Meaning'))),
         bodies);
  }
  for (const cell of state.tableCells) setFigure(cell, figures.get(cell.key));
}

const MAPPING_LABELS = [
  ['world_size', 'Ranks'], ['tensor', 't'], ['pipeline', 'p'], ['data', 'd'],
  ['replicas', 'Replicas'], ['virtual_stages', 'v'], ['schedule', 'Schedule'],
  ['microbatches', 'Microbatches'], ['blocks_per_stage', 'Blocks per stage'],
  ['blocks_per_chunk', 'Blocks per chunk'], ['recompute', 'Recompute'],
  ['tensor_communication', 'TP comm'],
];

function showMapping(mapping) {
  fill(byId('mapping'), MAPPING_LABELS.filter(([key]) => mapping.has(key)).map(([key, label]) =>
    h('div', {}, h('dt', {}, label),
      h('dd', {'data-mapping': key}, mapping.get(key).replace(/^"(.*)"$/, '$1')))));
}

// Charts are drawn at the width they get, in steps of 40 px. Measured only
// on resize: reading layout while rendering would force a synchronous layout.
const chartWidths = new Map();
const measure = (id) => Math.max(280, Math.floor((byId(id).clientWidth || 640) / 40) * 40);
const chartWidth = (id) => chartWidths.get(id) ?? chartWidths.set(id, measure(id)).get(id);

function clearReport(reason) {
  for (const cell of [...state.cells, ...state.tableCells]) setFigure(cell, undefined);
  fill(byId('mapping'));
  fill(byId('memory'), h('p', {class: 'hint'}, reason));
  fill(byId('stages'), h('p', {class: 'hint'}, reason));
  fill(byId('schedule'), h('p', {class: 'hint'}, reason));
  state.scheduleKey = '';
}

function showReport(text) {
  const report = JSON.parse(text);
  const figures = literals(text, 'figures');
  for (const cell of state.cells) setFigure(cell, figures.get(cell.key));
  showAllFigures(figures);
  showMapping(literals(text, 'mapping'));
  const memory = report.memory ?? {};
  fill(byId('memory'), memoryChart(report, chartWidth('memory')),
       (memory.violations ?? []).length
           ? h('ul', {class: 'errors'}, memory.violations.map((v) => h('li', {}, String(v))))
           : null);
  fill(byId('stages'), stageChart(report, chartWidth('stages')));
  const mapping = report.mapping ?? {};
  const m = mapping.microbatches ?? 1;
  // The core's simulated timeline of the spec with the microbatches drawn
  // (the chunk times do not depend on m): global batch scaled to them.
  const drawn = drawnMicrobatches(mapping.pipeline ?? 1, mapping.virtual_stages ?? 1, m);
  const drawnSpec = structuredClone(state.spec);
  drawnSpec.batch.global_batch_size = state.spec.batch.global_batch_size / m * drawn;
  const drawnJson = JSON.stringify(drawnSpec);
  const width = chartWidth('schedule');
  // Thousands of elements: redrawn only when the schedule changes.
  const key = `${width} ${m} ${drawnJson}`;
  if (key !== state.scheduleKey) {
    state.scheduleKey = key;
    let result = call(state.bp, 'schedule', drawnJson, true);
    // A schedule with a rule on m (dualpipe_v: m >= 2p) may refuse the
    // drawn microbatches: draw them all then.
    if (!result.output && drawn < m) result = call(state.bp, 'schedule', state.specJson, true);
    const timeline = result.output ? JSON.parse(result.output) : null;
    fill(byId('schedule'), scheduleChart({timeline, errors: result.errors, m, width}));
  }
}

// The errors no form field claims, as list items carrying their code.
function errorItem(e) {
  return h('li', {'data-code': e.code || undefined,
                  title: e.code ? `${e.code}: ${state.meta.errorMeaning(e.code)}` : undefined},
           e.message);
}

function showErrors(errors) {
  const rest = form.showErrors(errors);
  const isSystem = (e) => /^system\b/.test(e.field);
  fill(byId('system-errors'), rest.filter(isSystem).map(errorItem));
  fill(byId('errors'), rest.filter((e) => !isSystem(e)).map(errorItem));
}

function showStatus(analysis, spec, local) {
  const status = byId('status');
  status.className = 'status';
  const par = spec.parallelism;
  const ranks = par.tensor.degree * par.pipeline.degree *
      (par.data?.degree ?? par.replica?.degree ?? 1);
  if (local) {
    status.textContent = 'A field holds text that is not a number (see the form); the ' +
        'results are for the last valid value.';
    status.classList.add('warn');
  } else if (analysis.ok) {
    status.textContent = `Valid mapping on ${ranks} ranks.`;
    status.classList.add('ok');
  } else if (analysis.output) {
    status.textContent = 'Valid mapping, but it does not fit in memory.';
    status.classList.add('warn');
  } else {
    const n = analysis.errors.length;
    status.textContent = `Invalid mapping: ${n} problem${n === 1 ? '' : 's'}, shown next to ` +
        'the fields they concern.';
    status.classList.add('bad');
  }
}

function syncPresets(spec) {
  byId('model-preset').value = presetOf(state.models, spec.model);
  byId('system-preset').value = presetOf(state.systems, spec.system);
  const sys = spec.system;
  const networks = Array.isArray(sys.networks) ? sys.networks : [];
  const rate = sys.matrix?.[spec.options.datatype]?.tflops;
  byId('system-summary').textContent =
      `${sys.name || 'unnamed system'}: ${rate ?? '?'} TFLOP/s ${spec.options.datatype}, ` +
      `HBM ${sys.mem1?.GiB ?? '?'} GiB, tier 2 ${sys.mem2?.GiB ?? '?'} GiB, ` +
      `${networks.length} network tier${networks.length === 1 ? '' : 's'} (` +
      networks.slice(0, 8).map((n) => `${n?.size ?? '?'} × ${n?.bandwidth ?? '?'} GB/s`)
          .join(', ') + (networks.length > 8 ? ', …)' : ')');
}

function render() {
  const spec = state.spec;
  form.show(spec);
  syncPresets(spec);
  search.suggest(spec);
  const specJson = JSON.stringify(spec);
  state.specJson = specJson;
  const analysis = call(state.bp, 'analyze', specJson);
  showErrors(analysis.errors);
  let shown = false;
  if (analysis.output) {
    try {
      showReport(analysis.output);
      shown = true;
    } catch (e) {
      analysis.errors.push({field: '', message: `unreadable report: ${e.message}`});
    }
  }
  if (!shown) clearReport('No results: the mapping is invalid.');
  showStatus(analysis, spec, form.hasLocalProblems());
  document.body.dataset.ready = '1';
  // The URL (replaceState costs ~10 ms), digests and lineage take longer
  // than analyze: they follow once the input pauses.
  clearTimeout(state.slowTimer);
  state.slowTimer = setTimeout(() => {
    try {
      history.replaceState(null, '', `#spec=${encodeURIComponent(specJson)}`);
    } catch {
      // Browsers may throttle history updates; the next change retries.
    }
    const digest = call(state.bp, 'digest', specJson);
    byId('digests').textContent =
        digest.ok ? digest.output : '(no digests: the mapping is invalid)';
    if (state.lineage) explain(state.lineage.key);
  }, SLOW_DELAY_MS);
}

//----- Lineage ---------------------------------------------------------------------

// The depth the panel's selector asks for: undefined for every level, else
// the number `blueprint explain --depth N` is given.
function lineageDepth() {
  const value = byId('lineage-depth').value;
  return value === '' ? undefined : Number(value);
}

function explain(key) {
  const result = call(state.bp, 'explain', state.specJson, key, lineageDepth());
  const button = document.querySelector(`button.figure[data-figure="${CSS.escape(key)}"]`);
  byId('lineage-title').textContent =
      button ? `Why ${key} = ${button.textContent}` : `Why ${key}`;
  byId('lineage-text').textContent = result.ok ? result.output : result.errors.map((e) => e.message).join('\n');
}

function openLineage(button) {
  const key = button.dataset.figure;
  state.lineage = {key, button};
  explain(key);
  const panel = byId('lineage');
  panel.hidden = false;
  panel.focus();
}

function closeLineage() {
  const button = state.lineage?.button;
  state.lineage = null;
  byId('lineage').hidden = true;
  if (button?.isConnected) button.focus();
}

//----- Inputs other than the form fields ---------------------------------------------

function useSystem(object, fallbackName) {
  const name = typeof object.name === 'string' ? object.name : fallbackName;
  state.spec.system = {...object, name};
  form.show(state.spec, {force: true});
  schedule();
}

function useSystemText(text, fallbackName) {
  let object;
  try {
    object = JSON.parse(text);
  } catch (e) {
    fill(byId('system-errors'), h('li', {}, `Not valid JSON: ${e.message}`));
    return;
  }
  if (!isObject(object)) {
    fill(byId('system-errors'), h('li', {}, 'A Calculon system file is a JSON object.'));
    return;
  }
  useSystem(object, fallbackName);
}

// Shell-like words: whitespace-separated, '…' and "…" quoting, \ line ends.
function splitWords(text) {
  const words = [];
  const pattern = /'([^']*)'|"((?:[^"\\]|\\.)*)"|((?:[^\s'"\\]|\\.)+)|\\\n/g;
  let word = null;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match[0] === '\\\n') continue;
    const gap = match.index > last;
    last = match.index + match[0].length;
    const part = match[1] ?? (match[2] ?? match[3]).replace(/\\(.)/g, '$1');
    if (word !== null && !gap) word += part;
    else {
      if (word !== null) words.push(word);
      word = part;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

// The presets shipped inside the module (`blueprint presets`): its systems,
// its Hugging Face configs, and the model each config imports to (a model
// preset). A config the module cannot import yet is offered in the import
// section only. Returns the names of the module's models (configs) and
// systems, which a serving spec may name.
function addModulePresets(bp) {
  const result = call(bp, 'presets');
  let presets;
  try {
    presets = result.ok ? JSON.parse(result.output) : {};
  } catch {
    presets = {};
  }
  const systems = Object.entries(presets.systems ?? {});
  for (const [name, system] of systems) state.systems.set(name, system);
  const system = JSON.stringify(systems[0]?.[1] ?? {});
  for (const [name, config] of Object.entries(presets.models ?? {})) {
    state.hfConfigs.set(name, config);
    const imported = call(bp, 'importMegatron', system, ['--micro-batch-size', '1'],
                          JSON.stringify(config));
    if (!imported.ok) continue;
    try {
      const {name: unused, ...model} = JSON.parse(imported.output).model;
      state.models.set(name, model);
    } catch {
      // Not a model preset then.
    }
  }
  return {models: Object.keys(presets.models ?? {}), systems: systems.map(([name]) => name)};
}

// Flags typed or pasted: a leading launcher and script (torchrun
// pretrain_gpt.py ...) skipped.
function flagWords(text) {
  const words = splitWords(text);
  const first = words.findIndex((w) => w.startsWith('--'));
  return first < 0 ? words : words.slice(first);
}

function wireInputs() {
  byId('spec-form').addEventListener('submit', (event) => event.preventDefault());
  const modelPreset = byId('model-preset');
  for (const name of state.models.keys()) modelPreset.append(h('option', {value: name}, name));
  modelPreset.addEventListener('change', () => {
    const preset = state.models.get(modelPreset.value);
    if (!preset) return;
    state.spec.model = {name: modelPreset.value, ...preset};
    form.show(state.spec, {force: true});
    schedule();
  });
  const systemPreset = byId('system-preset');
  for (const name of state.systems.keys()) systemPreset.append(h('option', {value: name}, name));
  systemPreset.addEventListener('change', () => {
    const preset = state.systems.get(systemPreset.value);
    if (preset) useSystem({...preset, name: systemPreset.value}, systemPreset.value);
  });
  byId('system-file').addEventListener('change', async (event) => {
    const file = event.target.files?.[0];
    if (file) useSystemText(await file.text(), file.name.replace(/\.json$/i, ''));
  });
  byId('system-use').addEventListener('click',
      () => useSystemText(byId('system-text').value, 'pasted system'));

  const names = () => ({model: state.spec.model.name, system: state.spec.system.name});
  byId('import-exe-button').addEventListener('click', () => {
    const result = call(state.bp, 'importCalculon', appJson(state.spec),
                        byId('import-exe').value, systemJson(state.spec));
    loadImported(result, names(), byId('import-status'), 'Import of the Calculon execution');
  });
  byId('import-megatron-button').addEventListener('click', () => {
    const args = flagWords(byId('import-megatron').value);
    const result = call(state.bp, 'importMegatron', systemJson(state.spec), args);
    loadImported(result, {system: state.spec.system.name}, byId('import-status'),
                 'Import of the Megatron-LM flags');
  });
  const hfPreset = byId('import-hf-preset');
  for (const name of state.hfConfigs.keys()) hfPreset.append(h('option', {value: name}, name));
  hfPreset.addEventListener('change', () => {
    const config = state.hfConfigs.get(hfPreset.value);
    if (config) byId('import-hf').value = JSON.stringify(config, null, 2);
  });
  byId('import-hf-button').addEventListener('click', () => {
    const args = flagWords(byId('import-hf-flags').value);
    const result = call(state.bp, 'importMegatron', systemJson(state.spec), args,
                        byId('import-hf').value);
    loadImported(result, {system: state.spec.system.name}, byId('import-status'),
                 'Import of the Hugging Face config');
  });

  document.addEventListener('click', (event) => {
    const button = event.target.closest?.('button.figure[data-figure]');
    if (button) openLineage(button);
  });
  byId('lineage-close').addEventListener('click', closeLineage);
  byId('lineage-depth').addEventListener('change', () => {
    if (state.lineage) explain(state.lineage.key);
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && state.lineage) closeLineage();
  });
  byId('validation-run').addEventListener('click', () => runValidation(state.bp));
  byId('copy-link').addEventListener('click', async () => {
    const button = byId('copy-link');
    try {
      const link = new URL(location.href);
      link.hash = `spec=${encodeURIComponent(state.specJson)}`;
      await navigator.clipboard.writeText(link.href);
      button.textContent = 'Link copied';
    } catch {
      button.textContent = 'Copy the address bar instead';
    }
    setTimeout(() => { button.textContent = 'Copy link to this mapping'; }, 2500);
  });
  window.addEventListener('resize', () => {
    const before = [...chartWidths.values()].join();
    for (const id of chartWidths.keys()) chartWidths.set(id, measure(id));
    if ([...chartWidths.values()].join() !== before) schedule();
  });
  window.addEventListener('hashchange', () => {
    if (location.hash !== `#spec=${encodeURIComponent(state.specJson)}`) loadFromHash();
  });
}

const search = new SearchPanel(
    () => ({app: searchAppJson(state.spec), system: systemJson(state.spec),
            names: {model: state.spec.model.name, system: state.spec.system.name}}),
    (spec, inputs, rank) => {
      // The search's own canonical spec of the mapping: every dimension it
      // tried (cp, ep, the ZeRO stage) survives, which Calculon's execution
      // keys would not carry through importCalculon.
      const result = {ok: true, output: JSON.stringify(spec), notes: []};
      if (loadImported(result, inputs.names, byId('search-status'), 'Loading the mapping',
                       `Mapping ${rank} is loaded into the calculator above.`)) {
        byId('results').scrollIntoView({block: 'start'});
      }
    },
    (outputs) => call(state.bp, 'mergeSearch', outputs));

//----- Start ---------------------------------------------------------------------------

async function fetchJson(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

// Presets are a convenience: the page works without them.
async function loadPresets() {
  try {
    const index = await fetchJson('presets/index.json');
    const load = async (list, into) => {
      const entries = await Promise.all(list.map(async ({name, file}) =>
        [name, await fetchJson(`presets/${file}`)]));
      for (const [name, value] of entries) into.set(name, value);
    };
    await Promise.all([load(index.models ?? [], state.models),
                       load(index.systems ?? [], state.systems)]);
  } catch (e) {
    console.warn(`presets not loaded: ${e}`);
  }
}

try {
  const [bp, defaultSpec] = await Promise.all(
      [createBlueprinting(), fetchJson(DEFAULT_SPEC), loadPresets()]);
  state.bp = bp;
  state.defaultSpec = defaultSpec;
  state.meta = loadMetadata(bp);
  const modulePresets = addModulePresets(bp);
  byId('version').textContent = call(bp, 'version').output || 'unknown version';
  buildForm();
  search.setChoices(state.meta.fieldChoices('options.datatype'),
                    state.meta.fieldChoices('options.precision'),
                    state.meta.fieldChoices('options.profile'));
  buildGroups();
  buildCommTable();
  wireInputs();
  loadFromHash();
  // The serving section's first render (a dozen serve calls, some 0.1-0.3 s)
  // waits until the calculator's first result is shown.
  const serving = new ServingPanel(bp, modulePresets);
  if (globalThis.requestIdleCallback) requestIdleCallback(() => serving.render(), {timeout: 1000});
  else setTimeout(() => serving.render(), 200);
  search.prepare();
} catch (e) {
  const status = byId('status');
  status.textContent = `Could not start: ${e?.message ?? e}`;
  status.className = 'status bad';
  document.body.dataset.ready = 'error';
}
