// The serving panel (issue #48): a serving mapping ("blueprinting.serving_spec/1",
// core/serving/README.md) built from a small form, analysed by the module's
// serve() (`blueprint serve`), its figures shown exactly as the CLI prints
// them, and the throughput-latency curve: the same spec served at every
// concurrency base x 2^k (base: the decode pool's attention_data x pipeline,
// the checker's multiple) for as long as the KV cache holds it.
//
// The spec names its model and system by preset (the module's presets()):
// the core expands them as `blueprint serve` does, so the spec shown under
// the form is the very file to give the CLI. Serving calls take milliseconds:
// they run on the page's thread, on the next animation frame after an edit.
// The panel's element gets data-rendered="N" after its Nth render (tests).

import {h, byId, fill, call} from './dom.js';
import {human} from './report.js';
import {servingCurveChart} from './charts.js';

const FORMAT = 'blueprinting.serving_spec/1';
// The choices the serving checker accepts (core/serving/README.md; the
// core's metadata() does not list the serving spec's fields yet).
const WEIGHT_DATATYPES = ['bfloat16', 'float16', 'float8'];
const KV_DATATYPES = ['bfloat16', 'float8'];
// vLLM's --block-size default, which the form does not offer.
const BLOCK_TOKENS = 16;
const POOL_KEYS = [['tensor', 'Tensor'], ['pipeline', 'Pipeline'], ['expert', 'Expert'],
                   ['attention_data', 'Attention data'], ['replicas', 'Pool replicas']];
// The figures shown first; every figure is in the table below them.
const HEADLINE = ['ttft', 'tpot', 'output_tokens_per_second_per_gpu', 'requests_per_second',
                  'max_concurrency', 'gpus', 'kv_cache_bytes_per_token', 'weight_bytes_per_rank',
                  'kv_cache_bytes_per_rank', 'free_bytes_per_rank'];
// Doublings of the concurrency at most (2^31 is the checker's bound).
const MAX_DOUBLINGS = 31;
// Concurrencies tried below the last point's max_concurrency (curve()).
const MAX_TOP_TRIES = 4;

// {name: literal} of a serving analysis' text: its "name value" lines (the
// literal cut out of the text, never re-formatted), before the lineage.
export function servingFigures(text) {
  const figures = new Map();
  for (const line of text.split('\n')) {
    if (line.startsWith('lineage ')) break;
    const match = /^([a-z0-9_]+) (-?[0-9][0-9.e+-]*)$/.exec(line);
    if (match) figures.set(match[1], match[2]);
  }
  return figures;
}

// A whole number typed in: {value} or {problem}.
function readInt(text) {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return {problem: 'enter a whole number'};
  const value = Number(trimmed);
  return Number.isSafeInteger(value) ? {value} : {problem: 'too large a number'};
}

function readNumber(text) {
  const trimmed = text.trim();
  const value = Number(trimmed);
  return trimmed !== '' && Number.isFinite(value) ? {value} : {problem: 'enter a number'};
}

export class ServingPanel {
  // bp: the module; presets: {models: [name], systems: [name]} (the
  // module's presets, which the serving spec may name).
  constructor(bp, presets) {
    this.bp = bp;
    this.section = byId('serving');
    this.fields = new Map();   // id -> {control, error, wrapper, read, path(layout)}
    this.units = new Map();    // figure -> {unit, formula}, from serveExplain
    this.explained = '';       // the figure whose lineage is shown
    this.specJson = '';
    this.renders = 0;
    this.frame = 0;
    this.build(presets);
    byId('serving-form').addEventListener('submit', (event) => event.preventDefault());
    byId('serving-form').addEventListener('input', () => this.schedule());
    byId('serving-form').addEventListener('change', () => this.schedule());
    byId('serving-figures').addEventListener('click', (event) => {
      const button = event.target.closest?.('button[data-serving-figure]');
      if (button) this.explain(button.dataset.servingFigure);
    });
  }

  //----- The form --------------------------------------------------------------

  // One labelled control with its error line (aria-describedby) in `into`.
  // path(layout): the spec field it sets, which the core's errors name.
  field(into, id, label, control, read, path) {
    const error = h('p', {class: 'field-error', id: `${id}-error`, 'aria-live': 'polite'});
    control.id = id;
    control.setAttribute('aria-describedby', error.id);
    const wrapper = h('div', {class: 'field'}, h('label', {for: id}, label), control, error);
    into.append(wrapper);
    this.fields.set(id, {control, error, wrapper, read, path});
  }

  select(into, id, label, choices, value, path) {
    const control = h('select', {}, choices.map((c) => h('option', {value: c}, c)));
    control.value = value;
    this.field(into, id, label, control, () => ({value: control.value}), path);
  }

  integer(into, id, label, value, path) {
    const control = h('input', {type: 'text', inputmode: 'numeric', autocomplete: 'off',
                                spellcheck: 'false', maxlength: 16, value});
    this.field(into, id, label, control, () => readInt(control.value), path);
  }

  build({models, systems}) {
    const general = byId('serving-general');
    const pick = (names, wanted) => (names.includes(wanted) ? wanted : names[0] ?? '');
    this.select(general, 'serving-model', 'Serving model preset', models,
                pick(models, 'llama3.1-70b'), () => 'model');
    this.select(general, 'serving-system', 'Serving system preset', systems,
                pick(systems, 'h100_sxm_80g'), () => 'system');
    this.select(general, 'serving-layout', 'Pools', ['aggregated', 'disaggregated'],
                'aggregated', () => 'pools.type');
    this.select(general, 'serving-weight-datatype', 'Serving weight datatype', WEIGHT_DATATYPES,
                'bfloat16', () => 'weight_datatype');
    this.select(general, 'serving-kv-datatype', 'KV cache datatype', KV_DATATYPES,
                'bfloat16', () => 'kv_cache.datatype');
    const memory = h('input', {type: 'text', inputmode: 'decimal', autocomplete: 'off',
                               spellcheck: 'false', maxlength: 16, value: '0.9'});
    this.field(general, 'serving-memory', 'Memory utilization', memory,
               () => readNumber(memory.value), () => 'memory_utilization');
    // Pool 1 is the shared pool, or the prefill pool; pool 2 the decode pool.
    const pool1 = (layout) => (layout === 'aggregated' ? 'pools.pool' : 'pools.prefill');
    for (const [key, label] of POOL_KEYS) {
      this.integer(byId('serving-pool1-fields'), `serving-pool1-${key}`, label,
                   key === 'tensor' ? '8' : '1', (layout) => `${pool1(layout)}.${key}`);
      this.integer(byId('serving-pool2-fields'), `serving-pool2-${key}`, label,
                   key === 'tensor' ? '8' : '1', () => `pools.decode.${key}`);
    }
    const workload = byId('serving-workload');
    this.integer(workload, 'serving-input', 'Input tokens', '1024',
                 () => 'workload.input_tokens');
    this.integer(workload, 'serving-output', 'Output tokens', '256',
                 () => 'workload.output_tokens');
    this.integer(workload, 'serving-concurrency', 'Concurrency per replica', '64',
                 () => 'workload.concurrency');
  }

  layout() {
    return byId('serving-layout').value;
  }

  // The spec of the form, or null with each field's problem shown.
  read() {
    const values = new Map();
    let problems = 0;
    for (const [id, entry] of this.fields) {
      // The decode pool's fields are hidden (and unread) with one pool.
      if (entry.wrapper.closest('[hidden]')) {
        entry.local = null;
        continue;
      }
      const {value, problem} = entry.read();
      entry.local = problem ?? null;
      if (problem) problems++;
      else values.set(id, value);
    }
    if (problems) return null;
    const get = (id) => values.get(id);
    const pool = (n) => Object.fromEntries(
        POOL_KEYS.map(([key]) => [key, get(`serving-pool${n}-${key}`)]));
    const type = get('serving-layout');
    return {
      format: FORMAT,
      model: get('serving-model'),
      system: get('serving-system'),
      weight_datatype: get('serving-weight-datatype'),
      memory_utilization: get('serving-memory'),
      kv_cache: {datatype: get('serving-kv-datatype'), block_tokens: BLOCK_TOKENS},
      pools: type === 'aggregated' ? {type, pool: pool(1)}
                                   : {type, prefill: pool(1), decode: pool(2)},
      workload: {input_tokens: get('serving-input'), output_tokens: get('serving-output'),
                 concurrency: get('serving-concurrency')},
      speculative: {type: 'none'},
    };
  }

  // Each error next to the field it names (the longest path that is the
  // error's field or a prefix of it); the rest in the panel's list. The
  // form's own problems (text that is no number) come first.
  showErrors(errors) {
    const layout = this.layout();
    const visible = [...this.fields.values()].filter((e) => !e.wrapper.closest('[hidden]'));
    const lines = new Map(visible.map((e) => [e, e.local ? [e.local] : []]));
    const rest = [];
    for (const error of errors) {
      let best = null;
      let bestPath = '';
      for (const entry of visible) {
        const path = entry.path(layout);
        const claims = error.field === path || error.field.startsWith(`${path}.`) ||
                       error.field.startsWith(`${path}[`);
        if (claims && path.length > bestPath.length) [best, bestPath] = [entry, path];
      }
      if (best) lines.get(best).push(error.message);
      else rest.push(error);
    }
    for (const entry of this.fields.values()) {
      const shown = lines.get(entry) ?? [];
      entry.error.textContent = shown.join('\n');
      entry.wrapper.classList.toggle('invalid', shown.length > 0);
      entry.control.setAttribute('aria-invalid', shown.length ? 'true' : 'false');
    }
    fill(byId('serving-errors'), rest.map((e) => h('li', {'data-code': e.code || undefined},
                                                     e.message)));
  }

  //----- Results ---------------------------------------------------------------

  schedule() {
    if (!this.frame) this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  // The module's serve() of `spec` at `concurrency`: its figures, or null.
  serveAt(spec, concurrency) {
    const at = {...spec, workload: {...spec.workload, concurrency}};
    const result = call(this.bp, 'serve', JSON.stringify(at));
    return result.ok ? servingFigures(result.output) : null;
  }

  // The curve: concurrency base x 2^k while the checker accepts it, then
  // the last multiple of base the cache holds: the last point's
  // max_concurrency, which a larger batch's activations may lower by a few
  // requests, so stepped down by base until the checker accepts it.
  // (A step or two: each request's activations are far smaller than its
  // KV cache.)
  curve(spec) {
    const pools = spec.pools;
    const decode = pools.type === 'aggregated' ? pools.pool : pools.decode;
    const base = decode.attention_data * decode.pipeline;
    const points = [];
    for (let k = 0, c = base; k <= MAX_DOUBLINGS && Number.isSafeInteger(c); k++, c *= 2) {
      const figures = this.serveAt(spec, c);
      if (!figures) break;
      points.push({concurrency: c, figures});
    }
    const last = points.at(-1);
    if (!last) return points;
    let top = Math.floor(Number(last.figures.get('max_concurrency')) / base) * base;
    for (let tries = 0; tries < MAX_TOP_TRIES && top > last.concurrency; tries++, top -= base) {
      const figures = this.serveAt(spec, top);
      if (figures) {
        points.push({concurrency: top, figures});
        break;
      }
    }
    return points;
  }

  // {unit, formula} of a figure: the first two lines of its serveExplain
  // ("name = value unit", "  formula: ..."), the core's figure table.
  unitOf(name) {
    if (!this.units.has(name)) {
      const result = call(this.bp, 'serveExplain', this.specJson, name);
      const [first = '', second = ''] = result.ok ? result.output.split('\n') : [];
      const unit = /^\S+ = \S+ (.+)$/.exec(first)?.[1] ?? '';
      const formula = /^ {2}formula: (.*)$/.exec(second)?.[1] ?? '';
      if (!result.ok) return {unit: '', formula: ''};
      this.units.set(name, {unit, formula});
    }
    return this.units.get(name);
  }

  // One figure: the CLI's literal in a button (its lineage on click), the
  // unit and a rounded reading.
  figureCell(name, literal) {
    const {unit, formula} = this.unitOf(name);
    const reading = human(unit, literal);
    return h('span', {class: 'figure-cell'},
             h('button', {type: 'button', class: 'figure', 'data-serving-figure': name,
                          title: formula || undefined,
                          'aria-label': `${name} ${literal} ${unit}: show where it comes from`},
               literal),
             h('span', {class: 'unit'}, unit),
             reading ? h('span', {class: 'reading'}, reading) : null);
  }

  showFigures(figures) {
    const headline = HEADLINE.filter((name) => figures.has(name));
    fill(byId('serving-figures'),
         h('dl', {class: 'group serving-headline'},
           headline.map((name) => h('div', {class: 'row'}, h('dt', {}, name),
                                    h('dd', {}, this.figureCell(name, figures.get(name)))))),
         h('details', {class: 'serving-all'}, h('summary', {}, 'All serving figures'),
           h('table', {class: 'all-figures'},
             h('tbody', {}, [...figures].map(([name, literal]) => h('tr', {},
               h('th', {scope: 'row'}, name), h('td', {}, this.figureCell(name, literal))))))));
  }

  showCurve(spec, current) {
    const points = this.curve(spec);
    const container = byId('serving-curve');
    if (!points.length) {
      fill(container, h('p', {class: 'hint'},
                        'No curve: the mapping is invalid, or its weights leave no room ' +
                        'for a KV cache.'));
      return;
    }
    const number = (p, name) => Number(p.figures.get(name));
    const plotted = points.map((p) => ({
      concurrency: p.concurrency, tpot: number(p, 'tpot'),
      throughput: number(p, 'output_tokens_per_second_per_gpu')}));
    const here = current && {concurrency: spec.workload.concurrency,
                             tpot: Number(current.get('tpot')),
                             throughput: Number(current.get('output_tokens_per_second_per_gpu'))};
    const width = Math.max(280, Math.min(760, Math.floor(container.clientWidth || 640)));
    const columns = [['concurrency', 'Concurrency'], ['tpot', 'TPOT (s)'], ['ttft', 'TTFT (s)'],
                     ['output_tokens_per_second_per_gpu', 'Output tokens/s per GPU'],
                     ['requests_per_second', 'Requests/s']];
    const table = h('table', {class: 'all-figures serving-curve-table'},
      h('caption', {class: 'visually-hidden'},
        'The curve\'s points, from serve at each concurrency'),
      h('thead', {}, h('tr', {}, columns.map(([, title]) => h('th', {scope: 'col'}, title)))),
      h('tbody', {}, points.map((p) => h('tr', {'data-concurrency': p.concurrency},
        columns.map(([key]) => h('td', {'data-curve': key},
                                 key === 'concurrency' ? String(p.concurrency)
                                                       : p.figures.get(key)))))));
    fill(container, servingCurveChart(plotted, here, width),
         h('details', {}, h('summary', {}, `The ${points.length} points as a table`),
           h('div', {class: 'table-scroll'}, table)));
  }

  explain(name) {
    this.explained = name;
    const result = call(this.bp, 'serveExplain', this.specJson, name);
    byId('serving-explain').textContent = result.ok
        ? result.output : result.errors.map((e) => e.message).join('\n');
    byId('serving-explain').hidden = false;
  }

  render() {
    byId('serving-pool2').hidden = this.layout() === 'aggregated';
    byId('serving-pool1-title').textContent =
        this.layout() === 'aggregated' ? 'Shared pool' : 'Prefill pool';
    const spec = this.read();
    const status = byId('serving-status');
    status.className = 'status';
    let figures = null;
    if (!spec) {
      this.showErrors([]);
      status.textContent = 'A field holds text that is not a whole number (see the form).';
      status.classList.add('warn');
    } else {
      this.specJson = JSON.stringify(spec, null, 2);
      byId('serving-spec').textContent = this.specJson;
      const result = call(this.bp, 'serve', this.specJson);
      this.showErrors(result.errors);
      figures = result.ok ? servingFigures(result.output) : null;
      if (figures) {
        status.textContent = `Valid serving mapping on ${figures.get('gpus')} GPUs.`;
        status.classList.add('ok');
      } else {
        const n = result.errors.length;
        status.textContent = `Invalid serving mapping: ${n} problem${n === 1 ? '' : 's'}, ` +
                             'shown next to the fields they concern.';
        status.classList.add('bad');
      }
    }
    if (figures) this.showFigures(figures);
    else fill(byId('serving-figures'));
    if (spec) this.showCurve(spec, figures);
    else fill(byId('serving-curve'));
    if (figures && this.explained) this.explain(this.explained);
    else byId('serving-explain').hidden = true;
    this.section.dataset.rendered = String(++this.renders);
  }
}
