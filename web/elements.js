// Custom elements for docs pages (web/docs/embedding.html shows each in use):
//   <blueprint-figure figure="total_time">  one report figure, with its unit
//   <blueprint-schedule>                    the simulated pipeline timeline
//   <blueprint-memory>                      per-stage memory against capacity
//   <blueprint-mapping>                     a small editable card of the mapping
// Each takes its spec from spec="URL", a <script type="application/json">
// child, or a Megatron-LM launch line with preset names (megatron="--tensor-
// model-parallel-size 8 ..." hf-config="llama3.1-70b" system="h100_sxm_80g").
// Elements with the same spec share it: an edit in a <blueprint-mapping>
// re-renders every element of that spec.
//
// One instance of the slim module (blueprinting_slim.mjs, CSP-safe) serves the
// whole page; it is imported when the first element nears the viewport. A
// launch line also loads blueprinting_import.mjs (Megatron-LM's adapter), once.
// Importing this file under node (server-side rendering) touches no browser
// global: the elements are only defined where customElements exists.

import {call, getPath, h, s, setPath} from './dom.js';
import {human, literals} from './report.js';

const MODULE_URL = new URL('./blueprinting_slim.mjs', import.meta.url);
// Megatron-LM's import (the adapter and its flag catalogue), only for launch lines.
const IMPORT_URL = new URL('./blueprinting_import.mjs', import.meta.url);
// The core's presets as JSON files (models/NAME.json, systems/NAME.json);
// presets="URL" on an element names another folder.
const PRESETS_URL = new URL('./core-presets/', import.meta.url);
// Start loading a little before an element scrolls into view.
const NEAR_VIEWPORT = '300px';
const PRESET_NAME = /^[a-z0-9._-]+$/;

//----- The shared module ---------------------------------------------------------

// `blueprint metadata` (figure units, enum choices) as a file: fetched while
// the module loads, so that no metadata() call delays the first figure.
const METADATA_URL = new URL('./metadata.json', import.meta.url);

const instances = new Map();
let metadataFile = null;
let metadataCache = null;

// The one instance of the module at `url` for the whole page, loaded once.
function instance(url) {
  let promise = instances.get(url.href);
  if (!promise) {
    promise = import(url.href).then((m) => m.default()).catch((e) => {
      instances.delete(url.href);  // a later element may try again
      throw new Error(`could not load the WebAssembly module: ${e?.message ?? e}`);
    });
    instances.set(url.href, promise);
  }
  return promise;
}

const loadModule = () => instance(MODULE_URL);

// metadata.json, or null when it cannot be had (then metadataOf asks the module).
function loadMetadata() {
  metadataFile ??= fetch(METADATA_URL)
      .then((response) => response.ok ? response.json() : null)
      .catch(() => null);
  return metadataFile;
}

function metadataOf(bp, file) {
  metadataCache ??= file;
  if (!metadataCache) {
    const result = call(bp, 'metadata');
    metadataCache = result.ok ? JSON.parse(result.output) : {figures: {}, enums: {}};
  }
  return metadataCache;
}

// Results of the module per (command, spec text): every element of one spec
// asks for the same analysis; it is computed once.
const results = new Map();
const RESULT_CACHE_SIZE = 32;

function cached(bp, name, text, ...args) {
  const key = JSON.stringify([name, text, ...args]);
  let result = results.get(key);
  if (!result) {
    result = call(bp, name, text, ...args);
    if (results.size >= RESULT_CACHE_SIZE) results.delete(results.keys().next().value);
    results.set(key, result);
  }
  return result;
}

//----- Specs -----------------------------------------------------------------------

// An error of the element itself, shown like the core's: {field, message}.
const problem = (field, message) => ({field, message, code: ''});

async function fetchText(url, field) {
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw [problem(field, `could not fetch ${url}: ${e?.message ?? e}`)];
  }
  if (!response.ok) throw [problem(field, `could not fetch ${url}: HTTP ${response.status}`)];
  return response.text();
}

// The words of a launch line: whitespace-separated, '...' and "..." quote.
export function launchWords(line) {
  const words = [];
  for (const match of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) {
    words.push(match[1] ?? match[2] ?? match[3]);
  }
  return words;
}

async function presetText(base, kind, name, field) {
  if (!PRESET_NAME.test(name)) {
    throw [problem(field, `${field}: "${name}" is not a preset name ([a-z0-9._-]+)`)];
  }
  return fetchText(new URL(`${kind}/${name}.json`, base), field);
}

// Where an element's spec comes from: {key, load: async () => spec text}.
// Elements with equal keys share one spec (and its edits).
function specSource(element) {
  const url = element.getAttribute('spec');
  if (url !== null) {
    const resolved = new URL(url, document.baseURI).href;
    return {key: `url ${resolved}`, load: () => fetchText(resolved, 'spec')};
  }
  const megatron = element.getAttribute('megatron');
  if (megatron !== null) {
    const system = element.getAttribute('system') ?? '';
    const config = element.getAttribute('hf-config');
    const base = new URL(element.getAttribute('presets') ?? PRESETS_URL.href, document.baseURI);
    return {
      key: `megatron ${JSON.stringify([base.href, system, config, megatron])}`,
      load: async () => {
        if (!system) throw [problem('system', 'system: name a system preset, e.g. h100_sxm_80g')];
        const [systemText, configText, bp] = await Promise.all([
          presetText(base, 'systems', system, 'system'),
          config === null ? undefined : presetText(base, 'models', config, 'hf-config'),
          instance(IMPORT_URL)]);
        const result = call(bp, 'importMegatron', systemText, launchWords(megatron), configText);
        if (!result.ok) throw result.errors.map((e) => ({...e, field: e.field || 'megatron'}));
        return result.output;
      },
    };
  }
  const script = element.querySelector(':scope > script[type="application/json"]');
  if (script) {
    const text = script.textContent;
    return {key: `inline ${text}`, load: async () => text};
  }
  return {key: '', load: async () => {
    throw [problem('spec', 'no spec: set spec="URL", megatron="..." with system="...", ' +
                           'or put a <script type="application/json"> inside')];
  }};
}

// Every spec of the page by key: its loaded text, an edit made in a
// <blueprint-mapping> (replaces it), and the elements to re-render.
const specs = new Map();

function specEntry(key) {
  let entry = specs.get(key);
  if (!entry) {
    entry = {loaded: null, edited: null, elements: new Set()};
    specs.set(key, entry);
  }
  return entry;
}

// The spec text of `source` (the edit if any), or throws [{field, message}].
async function specText(source) {
  const entry = specEntry(source.key);
  if (entry.edited !== null) return entry.edited;
  entry.loaded ??= source.load().catch((errors) => {
    entry.loaded = null;  // try again at the next render
    throw Array.isArray(errors) ? errors : [problem('', String(errors?.message ?? errors))];
  });
  return entry.loaded;
}

// A <blueprint-mapping> changed the spec `key`: every element of it re-renders.
function editSpec(key, text) {
  const entry = specEntry(key);
  entry.edited = text;
  for (const element of entry.elements) element.requestRender();
}

//----- Styles ------------------------------------------------------------------------

// Themed through custom properties (--blueprint-*), light and dark; every
// inner element a page may restyle has a part name.
const CSS = `
:host { --_fg: var(--blueprint-fg, #1b1f24); --_muted: var(--blueprint-muted, #5b6470);
  --_accent: var(--blueprint-accent, #1f6feb); --_warn: var(--blueprint-warning, #9a6700);
  --_err: var(--blueprint-error, #cf222e); --_bg: var(--blueprint-bg, #ffffff);
  --_line: var(--blueprint-line, #d0d7de); --_f: var(--blueprint-forward, #1f6feb);
  --_b: var(--blueprint-backward, #8250df); --_w: var(--blueprint-weight, #bf8700);
  --_other: var(--blueprint-other, #6e7781);
  font: inherit; color: var(--_fg); }
@media (prefers-color-scheme: dark) {
  :host { --_fg: var(--blueprint-fg, #e6edf3); --_muted: var(--blueprint-muted, #9198a1);
    --_accent: var(--blueprint-accent, #4493f8); --_warn: var(--blueprint-warning, #d29922);
    --_err: var(--blueprint-error, #f85149); --_bg: var(--blueprint-bg, #0d1117);
    --_line: var(--blueprint-line, #3d444d); --_f: var(--blueprint-forward, #4493f8);
    --_b: var(--blueprint-backward, #ab7df8); --_w: var(--blueprint-weight, #d29922); }
}
:host([hidden]) { display: none; }
:host(:not(blueprint-figure)) { display: block; margin: 1em 0; }
[part~=value] { font-variant-numeric: tabular-nums; }
[part~=unit], [part~=caption] { color: var(--_muted); }
[part~=errors] { color: var(--_err); margin: 0; padding: 0; list-style: none;
  font-weight: normal; }
[part~=errors]:empty { display: none; }
/* A figure sits in a sentence: its errors too. */
:host(blueprint-figure) [part~=errors], :host(blueprint-figure) [part~=error] {
  display: inline; }
:host(blueprint-figure) [part~=error]::before { content: " "; }
caption { text-align: left; }
:host([data-state=warning]) [part~=errors] { color: var(--_warn); }
[part~=field] { font-family: ui-monospace, Menlo, Consolas, monospace; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; }
svg { display: block; width: 100%; height: auto; }
.F { fill: var(--_f); } .B { fill: var(--_b); } .W { fill: var(--_w); }
.other { fill: var(--_other); }
.bar { fill: var(--_accent); } .bar.over { fill: var(--_err); }
.track { fill: none; stroke: var(--_line); }
.cap { stroke: var(--_fg); stroke-dasharray: 3 2; }
text { fill: var(--_fg); font-size: 11px; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { text-align: left; padding: 0.1em 0.6em 0.1em 0; }
[part~=card] { display: grid; grid-template-columns: repeat(auto-fill, minmax(9em, 1fr));
  gap: 0.5em 1em; padding: 0.75em; border: 1px solid var(--_line); border-radius: 6px;
  background: var(--_bg); }
label { display: grid; gap: 0.2em; color: var(--_muted); font-size: 0.9em; }
input, select { font: inherit; color: var(--_fg); background: var(--_bg);
  border: 1px solid var(--_line); border-radius: 4px; padding: 0.2em 0.3em; }
[aria-invalid=true] { border-color: var(--_err); }
`;

let sheet = null;
function styleSheet() {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
  }
  return sheet;
}

//----- The base element ---------------------------------------------------------

// Under node (server-side rendering) there is no HTMLElement: the classes
// still load, and are never defined as elements.
const Base = globalThis.HTMLElement ?? class {};

// Whether `element` is rendered within NEAR_VIEWPORT of the viewport now.
function nearViewportNow(element) {
  if (!element.getClientRects().length) return false;  // not rendered
  const margin = parseInt(NEAR_VIEWPORT, 10);
  const rect = element.getBoundingClientRect();
  return rect.bottom >= -margin && rect.top <= innerHeight + margin &&
      rect.right >= -margin && rect.left <= innerWidth + margin;
}

// Elements wait until they near the viewport; the first one loads the module.
// One already in view when it is connected (above the fold at load) starts at
// once: an IntersectionObserver reports it only after the next frame, which
// on a loaded machine is tens of milliseconds later (web/BENCHMARKS.md).
let viewportObserver = null;
function whenNearViewport(element) {
  if (!('IntersectionObserver' in globalThis) || nearViewportNow(element)) {
    element.nearViewport();
    return;
  }
  viewportObserver ??= new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      viewportObserver.unobserve(entry.target);
      entry.target.nearViewport();
    }
  }, {rootMargin: NEAR_VIEWPORT});
  viewportObserver.observe(element);
}

const SPEC_ATTRIBUTES = ['spec', 'megatron', 'hf-config', 'system', 'presets'];

// What the four elements share (exported for `instanceof` and the types).
export class BlueprintElement extends Base {
  static get observedAttributes() {
    return SPEC_ATTRIBUTES;
  }

  #near = false;
  #pending = false;
  #renders = 0;
  #key = null;
  #childObserver = null;

  constructor() {
    super();
    this.attachShadow({mode: 'open'}).adoptedStyleSheets = [styleSheet()];
    this.body = h('div', {part: 'body'});
    this.status = h('ul', {part: 'errors', role: 'alert'});
    this.shadowRoot.append(this.body, this.status);
  }

  connectedCallback() {
    if (!this.dataset.state) this.dataset.state = 'loading';
    // An inline spec may be edited in place.
    this.#childObserver ??= new MutationObserver(() => this.requestRender());
    this.#childObserver.observe(this, {childList: true, characterData: true, subtree: true});
    if (this.#near) this.requestRender();
    else whenNearViewport(this);
  }

  disconnectedCallback() {
    this.#childObserver?.disconnect();
    viewportObserver?.unobserve(this);
    if (this.#key !== null) specEntry(this.#key).elements.delete(this);
  }

  attributeChangedCallback(name, before, after) {
    if (before !== after) this.requestRender();
  }

  nearViewport() {
    this.#near = true;
    this.requestRender();
  }

  // Renders once per task however many attributes change at once.
  requestRender() {
    if (!this.#near || !this.isConnected || this.#pending) return;
    this.#pending = true;
    queueMicrotask(() => {
      this.#pending = false;
      this.#render();
    });
  }

  // The spec key of this element (for <blueprint-mapping>).
  get specKey() {
    return this.#key;
  }

  async #render() {
    const render = ++this.#renders;
    const stale = () => render !== this.#renders;
    const source = specSource(this);
    if (this.#key !== source.key) {
      if (this.#key !== null) specEntry(this.#key).elements.delete(this);
      this.#key = source.key;
      specEntry(source.key).elements.add(this);
    }
    this.dataset.state = 'loading';
    this.setAttribute('aria-busy', 'true');
    try {
      const [text, bp, metadata] =
          await Promise.all([specText(source), loadModule(), loadMetadata()]);
      if (stale()) return;
      const errors = this.show(bp, text, metadataOf(bp, metadata));
      if (stale()) return;
      this.showErrors(errors.list, errors.warning ? 'warning' : 'ready');
    } catch (e) {
      if (stale()) return;
      this.body.replaceChildren();
      this.showErrors(Array.isArray(e) ? e : [problem('', String(e?.message ?? e))], 'error');
    } finally {
      if (!stale()) this.removeAttribute('aria-busy');
    }
  }

  // Lists `errors` ({field, message}) inside the element and sets data-state.
  showErrors(errors, state) {
    this.status.replaceChildren(...errors.map((e) => h('li', {part: 'error'}, ...withField(e))));
    this.dataset.state = errors.length && state === 'ready' ? 'warning' : state;
  }

  // Subclasses: draws the spec `text` with module `bp`; returns {list, warning}
  // (errors to show: a warning when the figures are still shown) or throws
  // [{field, message}].
  show(bp, text, metadata) {
    throw new Error('not implemented');
  }
}

// An error as text, its field marked: the core's messages start with their
// field ("batch.global_batch_size (100) must be ..."), which is marked in
// place; other messages get it in front.
function withField({field, message}) {
  if (!field) return [message];
  const rest = message.startsWith(field) ? message.slice(field.length) : `: ${message}`;
  return [h('span', {part: 'field'}, field), rest];
}

// The analysis of `text`: {figures, memory, report} or throws its errors.
// Over the memory capacity the core still prints the report (exit 2): its
// figures are shown, its errors as a warning.
function analysis(bp, text) {
  const result = cached(bp, 'analyze', text);
  if (!result.output) throw result.errors;
  return {figures: literals(result.output, 'figures'), memory: literals(result.output, 'memory'),
          errors: {list: result.errors, warning: !result.ok}};
}

//----- <blueprint-figure> -----------------------------------------------------------

// Runs `task` in an idle period after the next frame (requestIdleCallback),
// or after the current task where there is none (Safari).
function whenIdle(task) {
  if ('requestIdleCallback' in globalThis) requestIdleCallback(() => task());
  else setTimeout(task);
}

// A number with its unit, as text: the rounded reading when the unit has one
// ("18.03 s"), else the report's literal and the unit.
function formatted(literal, unit) {
  if (literal === 'null') return 'none';
  return human(unit, literal) || (unit ? `${literal} ${unit}` : literal);
}

export class BlueprintFigure extends BlueprintElement {
  static get observedAttributes() {
    return [...SPEC_ATTRIBUTES, 'figure'];
  }

  #literal = null;

  constructor() {
    super();
    // Text, not a live region: a page of figures must not chatter.
    this.output = h('span', {part: 'value'}, '…');
    this.body.replaceWith(this.output);
    this.body = this.output;
  }

  // The figure exactly as the report prints it: `literal` its text,
  // `value` the number it denotes (null when the report has null or none).
  get literal() {
    return this.#literal;
  }

  get value() {
    return this.#literal === null || this.#literal === 'null' ? null : Number(this.#literal);
  }

  show(bp, text, metadata) {
    const figure = this.getAttribute('figure') ?? '';
    const {figures, errors} = analysis(bp, text);
    if (!figures.has(figure)) {
      this.#literal = null;
      throw [problem('figure', `figure: the report has no figure "${figure}"`)];
    }
    this.#literal = figures.get(figure);
    const unit = metadata.figures?.[figure]?.unit ?? '';
    this.output.textContent = formatted(this.#literal, unit);
    this.output.dataset.literal = this.#literal;
    this.output.title = '';
    // The formula (explain at depth 0) once the number is painted and the
    // page is idle: explain costs as much as a cold analyze, which would
    // otherwise delay the first paint of the figure (web/BENCHMARKS.md).
    whenIdle(() => {
      const explained = cached(bp, 'explain', text, figure, 0);
      if (explained.ok && this.#literal === figures.get(figure)) {
        this.output.title = explained.output.split('\n')[0];
      }
    });
    return errors;
  }
}

//----- <blueprint-schedule> -----------------------------------------------------------

const ROW = 18;
const LABEL = 56;
const WIDTH = 720;
const COMPUTE = new Set(['F', 'B', 'W']);

export class BlueprintSchedule extends BlueprintElement {
  show(bp, text) {
    const result = cached(bp, 'schedule', text, true);
    if (!result.output) throw result.errors;
    const timeline = JSON.parse(result.output);
    const stages = Array.isArray(timeline.stages) ? timeline.stages : [];
    const makespan = Number(timeline.makespan) || 1;
    const scale = (WIDTH - LABEL) / makespan;
    const rows = stages.map((stage, i) => s('g', {},
        s('text', {x: 0, y: i * ROW + 13}, `stage ${i}`),
        ...(stage.commands ?? []).filter((c) => COMPUTE.has(c.kind) || c.kind === 'FB')
            .map((c) => s('rect', {x: LABEL + c.start * scale, y: i * ROW + 2,
                                   width: Math.max((c.end - c.start) * scale, 0.5), height: ROW - 4,
                                   class: COMPUTE.has(c.kind) ? c.kind : 'other'}))));
    const summary = `${timeline.schedule} schedule, ${stages.length} stages, ` +
        `${timeline.m} microbatches, ${formatted(String(makespan), 's')}`;
    const svg = s('svg', {part: 'timeline', viewBox: `0 0 ${WIDTH} ${stages.length * ROW}`,
                          'aria-hidden': 'true'}, ...rows);
    // The same timeline as a table, for screen readers.
    const table = h('table', {part: 'table', class: 'sr-only'},
        h('caption', {}, `Pipeline timeline: ${summary}`),
        h('tr', {}, h('th', {scope: 'col'}, 'Stage'), h('th', {scope: 'col'}, 'Busy'),
          h('th', {scope: 'col'}, 'Idle'), h('th', {scope: 'col'}, 'Compute commands')),
        ...stages.map((stage, i) => h('tr', {}, h('th', {scope: 'row'}, `stage ${i}`),
            h('td', {}, formatted(String(stage.busy), 's')),
            h('td', {}, formatted(String(stage.idle ?? makespan - stage.busy), 's')),
            h('td', {}, (stage.commands ?? []).filter((c) => c.kind !== 'SendActivation' &&
                !c.kind.startsWith('Send') && !c.kind.startsWith('Recv')).length))));
    this.body.replaceChildren(h('p', {part: 'caption'}, summary), svg, table);
    return {list: result.errors, warning: !result.ok};
  }
}

//----- <blueprint-memory> -------------------------------------------------------------

const MEMORY_ROWS = [
  ['first_stage_mem_tier1_req', 'First stage'],
  ['last_stage_mem_tier1_req', 'Last stage'],
  ['max_stage_mem_tier1_req', 'Most loaded stage'],
];

export class BlueprintMemory extends BlueprintElement {
  show(bp, text) {
    const {figures, memory, errors} = analysis(bp, text);
    const capacity = Number(memory.get('tier1_capacity'));
    const rows = MEMORY_ROWS.filter(([key]) => figures.has(key));
    const most = Math.max(capacity, ...rows.map(([key]) => Number(figures.get(key))));
    const bars = rows.map(([key, label], i) => {
      const bytes = Number(figures.get(key));
      const over = bytes > capacity;
      return s('g', {},
          s('text', {x: 0, y: i * 24 + 15}, label),
          s('rect', {class: 'track', x: 130, y: i * 24 + 3, width: (WIDTH - 140), height: 16}),
          s('rect', {class: over ? 'bar over' : 'bar', part: 'bar', x: 130, y: i * 24 + 3,
                     width: (WIDTH - 140) * bytes / most, height: 16}));
    });
    const capX = 130 + (WIDTH - 140) * capacity / most;
    const svg = s('svg', {part: 'chart', viewBox: `0 0 ${WIDTH} ${rows.length * 24 + 4}`,
                          'aria-hidden': 'true'},
        ...bars, s('line', {class: 'cap', x1: capX, x2: capX, y1: 0, y2: rows.length * 24 + 4}));
    const table = h('table', {part: 'table'},
        h('caption', {part: 'caption'},
          `Memory per stage (tier 1) against the capacity of ${formatted(String(capacity), 'bytes')}`),
        ...rows.map(([key, label]) => {
          const bytes = Number(figures.get(key));
          return h('tr', {'data-figure': key}, h('th', {scope: 'row'}, label),
              h('td', {part: 'value'}, formatted(figures.get(key), 'bytes')),
              h('td', {}, `${(bytes / capacity * 100).toPrecision(3)} %`));
        }));
    this.body.replaceChildren(svg, table);
    return errors;
  }
}

//----- <blueprint-mapping> -------------------------------------------------------------

// The card's controls: [spec path, label, kind] (kind: a degree, or the
// metadata enum whose choices a select offers).
const MAPPING_FIELDS = [
  ['parallelism.tensor.degree', 'Tensor (t)', 'degree'],
  ['parallelism.pipeline.degree', 'Pipeline (p)', 'degree'],
  ['parallelism.data.degree', 'Data (d)', 'degree'],
  ['parallelism.pipeline.schedule.type', 'Schedule', 'pipeline_schedule'],
  ['parallelism.recompute', 'Recompute', 'recompute'],
];

export class BlueprintMapping extends BlueprintElement {
  show(bp, text, metadata) {
    const canonical = cached(bp, 'canonical', text);
    if (!canonical.ok) throw canonical.errors;
    const spec = JSON.parse(canonical.output);
    const errors = cached(bp, 'check', text).errors;
    const invalid = new Set(errors.map((e) => e.field));
    const controls = MAPPING_FIELDS.filter(([path]) => getPath(spec, path) !== undefined)
        .map(([path, label, kind]) => {
          const value = getPath(spec, path);
          const id = path.replaceAll('.', '-');
          const attrs = {id, name: path, 'aria-invalid': invalid.has(path) ? 'true' : 'false',
                         part: 'input', onchange: (event) => this.#edit(bp, spec, path, event)};
          const control = kind === 'degree'
              ? h('input', {...attrs, type: 'number', min: 1, step: 1, value})
              : h('select', attrs, ...(metadata.enums?.[kind]?.choices ?? []).map((c) =>
                  h('option', {value: c.name, selected: c.name === value}, c.name)));
          return h('label', {part: 'label'}, label, control);
        });
    this.body.replaceChildren(h('form', {part: 'card', 'aria-label': 'Mapping'}, ...controls));
    return {list: errors, warning: errors.length > 0};
  }

  // A control changed: the spec with the new value, in canonical form (a
  // schedule's other fields take their defaults), for every element of it.
  #edit(bp, spec, path, event) {
    const edited = structuredClone(spec);
    const raw = event.target.value;
    if (path.endsWith('.type')) setPath(edited, path.slice(0, -'.type'.length), {type: raw});
    else setPath(edited, path, event.target.type === 'number' ? Number(raw) : raw);
    const text = JSON.stringify(edited);
    const canonical = cached(bp, 'canonical', text);
    editSpec(this.specKey, canonical.ok ? canonical.output : text);
  }
}

//----- Definitions -------------------------------------------------------------------------

export const ELEMENTS = {
  'blueprint-figure': BlueprintFigure,
  'blueprint-schedule': BlueprintSchedule,
  'blueprint-memory': BlueprintMemory,
  'blueprint-mapping': BlueprintMapping,
};

if (globalThis.customElements) {
  for (const [name, element] of Object.entries(ELEMENTS)) {
    if (!customElements.get(name)) customElements.define(name, element);
  }
}
