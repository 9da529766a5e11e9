// The search panel: runs `bp.search` (Calculon's search space, and context,
// expert parallelism and every ZeRO stage when asked) in Web Workers with a
// progress bar and a cancel button, and lists the best mappings, each
// loadable into the calculator from the canonical spec the search gives it
// (`--specs`). With more than one core the space is searched in parts, one
// per worker, each with its own module instance (`--partition I/N`: a
// WebAssembly instance has one thread), and `bp.mergeSearch` merges their
// outputs into exactly the output of the whole search. The workers are kept
// from one search to the next (WorkerPool).

import {h, byId, fill} from './dom.js';

const yesNo = (b) => (b ? 'yes' : 'no');

const COLUMNS = [
  ['Sample rate', (e, st) => st.sample_rate?.toPrecision(6) ?? '—'],
  ['Iteration', (e, st) => st.total_time === undefined ? '—' : `${st.total_time.toPrecision(4)} s`],
  ['t', (e) => e.tensor_par], ['p', (e) => e.pipeline_par], ['d', (e) => e.data_par],
  ['v', (e) => e.pipeline_interleaving],
  // Keys the search adds only for the dimensions it tried.
  ['Schedule', (e) => e.pipeline_schedule ?? '—'],
  // An explicit layout (--stage-layouts megatron): its blocks per stage.
  ['Layout', (e) => e.pipeline_stage_blocks?.join(',') ?? e.pipeline_stage_layout ?? '—'],
  ['cp', (e) => (e.context_par ?? 1) +
      ((e.context_par ?? 1) > 1 ? ` ${e.context_par_exchange}` : '')],
  ['ep × etp', (e) => e.expert_par === undefined ? '—'
      : `${e.expert_par} × ${e.expert_tensor_par}`],
  ['Batch', (e) => e.batch_size], ['mbs', (e) => e.microbatch_size],
  ['Recompute', (e) => e.activation_recompute],
  ['TP comm', (e) => e.tensor_par_comm_type + (e.seq_par_ag_redo ? ' + redo' : '')],
  ['TP ovl.', (e) => e.tensor_par_overlap],
  ['DP ovl.', (e) => yesNo(e.data_par_overlap)],
  ['ZeRO', (e) => e.data_par_sharding ?? (e.optimizer_sharding ? 'optimizer' : 'none')],
  ['Offload w/a/o', (e) => [e.weight_offload, e.activations_offload, e.optimizer_offload]
      .map((b) => (b ? 'y' : 'n')).join('/')],
  ['Fused', (e) => yesNo(e.fused_activation)],
  ['Nets t/p/d', (e) => `${e.tensor_par_net}/${e.pipeline_par_net}/${e.data_par_net}`],
  ['HBM', (e, st) => st.proc_mem_tier1_cap_req === undefined ? '—'
      : `${(st.proc_mem_tier1_cap_req / 2 ** 30).toFixed(1)} GiB`],
];

// At most this many workers: each holds its own module and block table
// (some 100-200 MB for the largest searches, kept between searches).
const MAX_WORKERS = 4;

export function searchWorkerCount() {
  const cores = Number(globalThis.navigator?.hardwareConcurrency) || 1;
  return Math.max(1, Math.min(cores, MAX_WORKERS));
}

// The search's workers, made when the page is idle and kept from one search
// to the next. A fresh WebAssembly instance runs its first large search much
// slower than its later ones (Chromium, Qwen3-235B-A22B on 2,048 GPUs with
// every dimension, two workers: about 3.1 s against 1.4-2.1 s; the engine
// optimizes the hot functions in the background, on the cores the search
// keeps busy), so each new worker first runs a tiny search of the
// calculator's model (`warmUp`), whose result is dropped. Messages carry the
// id of their search; the warm-up's is 0. A search is cancelled by
// terminating its workers (the call is synchronous): they are replaced.
class WorkerPool {
  // warmUp() -> {app, system, args} or null: the new workers' first search.
  constructor(count, warmUp) {
    this.count = count;
    this.warmUp = warmUp;
    this.workers = [];
  }

  // The workers, made (each with its warm-up queued) where missing.
  get() {
    while (this.workers.length < this.count) this.workers.push(this.spawn());
    return this.workers;
  }

  spawn() {
    const worker = new Worker(new URL('./worker.js', import.meta.url), {type: 'module'});
    const job = this.warmUp();
    if (job) worker.postMessage({id: 0, ...job});
    return worker;
  }

  // Worker i terminated and a new one in its place.
  replace(i) {
    this.workers[i].terminate();
    this.workers[i] = this.spawn();
  }
}

// When the page has nothing else to do (or after 2 s).
const whenIdle = (task) => (globalThis.requestIdleCallback
  ? requestIdleCallback(task, {timeout: 2000}) : setTimeout(task, 200));

// The progress bar and its percentage are redrawn at most this often. Each
// worker reports every 1 % or 100 ms; redrawing at every report took the
// page's thread, and on a two-core machine the workers' cores, about a
// quarter of the search's time (Chromium, Qwen3-235B-A22B on 2,048 GPUs
// with every dimension, two workers: 2.2-2.7 s against 1.8-1.9 s).
const PROGRESS_REDRAW_MS = 250;

export class SearchPanel {
  // getInputs() -> {app, system, ...}: the current Calculon app (or spec/3
  // model) and system JSON; load(spec, inputs, rank) loads one result's
  // canonical spec into the calculator, with the inputs the search ran on;
  // merge(outputs) -> {ok, output, errors}: bp.mergeSearch.
  constructor(getInputs, load, merge) {
    this.getInputs = getInputs;
    this.load = load;
    this.merge = merge;
    this.pool = new WorkerPool(searchWorkerCount(), () => this.warmUpJob());
    // The search in progress: its id and the indices of the workers still
    // running a part of it.
    this.searchId = 0;
    this.busy = new Set();
    this.redrawTimer = 0;  // a progress redraw is pending
    this.form = byId('search-form');
    this.progress = byId('search-progress');
    this.status = byId('search-status');
    this.results = byId('search-results');
    this.cancelButton = byId('search-cancel');
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.start();
    });
    this.cancelButton.addEventListener('click', () => this.cancel('Search cancelled.'));
    // Fields the user set keep their value; the others follow the mapping.
    for (const id of ['search-procs', 'search-max-batch', 'search-datatype',
                      'search-precision', 'search-profile']) {
      const input = byId(id);
      input.addEventListener(input.tagName === 'SELECT' ? 'change' : 'input', () => {
        input.dataset.touched = '1';
      });
    }
  }

  // The datatypes, precision accountings and model profiles to offer: the
  // core's choices ({name, meaning}) of options.datatype, options.precision
  // and options.profile (metadata).
  setChoices(datatypes, precisions, profiles) {
    const options = (choices) => choices.map(({name, meaning}) =>
      h('option', {value: name, title: meaning}, name));
    fill(byId('search-datatype'), options(datatypes));
    fill(byId('search-precision'), options(precisions));
    fill(byId('search-profile'), options(profiles));
  }

  // Defaults from the calculator's mapping: its world size (t·cp·p·d),
  // batch, datatype, precision and profile.
  suggest(spec) {
    const par = spec.parallelism;
    const d = par.data?.degree ?? par.replica?.degree ?? 1;
    const cp = par.context?.degree ?? 1;
    const set = (id, value) => {
      const input = byId(id);
      if (!input.dataset.touched && value !== undefined) input.value = value;
    };
    set('search-procs', par.tensor.degree * cp * par.pipeline.degree * d);
    set('search-max-batch', spec.batch.global_batch_size);
    set('search-datatype', spec.options.datatype);
    set('search-precision', spec.options.precision);
    set('search-profile', spec.options.profile);
  }

  args() {
    const value = (id) => byId(id).value.trim();
    const args = ['--procs', value('search-procs'), '--max-batch', value('search-max-batch'),
                  '--datatype', value('search-datatype'), '--top', value('search-top'),
                  '--fused-activation', value('search-fused'),
                  '--precision', value('search-precision'),
                  '--profile', value('search-profile'),
                  '--max-context', value('search-max-context'),
                  '--context-exchange', value('search-context-exchange'),
                  '--sharding', value('search-sharding'),
                  '--schedules', value('search-schedules'),
                  '--stage-layouts', value('search-stage-layouts'),
                  '--recipes', value('search-recipes'),
                  '--expert-dispatchers', value('search-expert-dispatchers'),
                  '--expert-overlap', value('search-expert-overlap'), '--json', '--specs'];
    if (byId('search-mbs-break').checked) args.push('--mbs-break');
    if (!byId('search-tp-overlap').checked) args.push('--no-tp-overlap');
    if (!byId('search-dp-overlap').checked) args.push('--no-dp-overlap');
    return args;
  }

  setRunning(running) {
    this.form.querySelector('button[type=submit]').disabled = running;
    this.cancelButton.disabled = !running;
    this.progress.hidden = !running;
    this.form.setAttribute('aria-busy', running ? 'true' : 'false');
  }

  // Makes the workers once the page is idle, so that the first search finds
  // them loaded and warmed up.
  prepare() {
    whenIdle(() => this.pool.get());
  }

  // A new worker's first search: the panel's search of the calculator's
  // model and system, on 8 processors with every dimension, so that it runs
  // the code a search of this model will.
  warmUpJob() {
    let inputs;
    try {
      inputs = this.getInputs();
    } catch {
      return null;  // no model loaded yet: the worker starts cold
    }
    const args = this.args();
    for (const [flag, value] of [['--procs', '8'], ['--max-batch', '8'], ['--top', '1'],
                                 ['--max-context', '8'], ['--context-exchange', 'all'],
                                 ['--sharding', 'all'], ['--schedules', 'all'],
                                 ['--stage-layouts', 'all']]) {
      args[args.indexOf(flag) + 1] = value;
    }
    return {app: inputs.app, system: inputs.system, args};
  }

  start() {
    this.cancel();
    const inputs = this.getInputs();
    const args = this.args();
    const workers = this.pool.get();
    const count = workers.length;
    const id = ++this.searchId;
    this.setRunning(true);
    this.progress.value = 0;
    this.status.textContent = 'Searching…';
    const started = performance.now();
    const fractions = new Array(count).fill(0);
    const outputs = new Array(count).fill(null);
    let finished = 0;
    const redraw = () => {
      this.redrawTimer = 0;
      // The parts weigh about the same (the core deals them so).
      const fraction = fractions.reduce((a, b) => a + b, 0) / count;
      this.progress.value = fraction;
      this.status.textContent = `Searching… ${(fraction * 100).toFixed(0)} %`;
    };
    workers.forEach((worker, i) => {
      this.busy.add(i);
      worker.onmessage = ({data}) => {
        if (data.id !== id || !this.busy.has(i)) return;  // a warm-up or an earlier search
        if (data.type === 'progress') {
          fractions[i] = data.fraction;
          if (!this.redrawTimer) this.redrawTimer = setTimeout(redraw, PROGRESS_REDRAW_MS);
          return;
        }
        this.busy.delete(i);
        // A module that trapped or aborted cannot be called again.
        if (data.broken) this.pool.replace(i);
        if (!data.ok) {  // the first failure is the answer (every part parses the same inputs)
          this.cancel();
          this.show(data, 0, inputs);
          return;
        }
        outputs[i] = data.output;
        if (++finished < count) return;
        const seconds = (performance.now() - started) / 1000;
        this.cancel();
        this.show(count === 1 ? data : this.merge(outputs), seconds, inputs, count);
      };
      worker.onerror = (event) => {
        if (this.searchId !== id || !this.busy.has(i)) return;
        this.cancel(`The search worker failed: ${event.message ?? 'unknown error'}`);
      };
      worker.postMessage({id, app: inputs.app, system: inputs.system,
                          args: count === 1 ? args : [...args, '--partition', `${i}/${count}`]});
    });
  }

  // Stops the search in progress, if any: its workers still running are
  // replaced (a worker that has finished its part is kept).
  cancel(message) {
    for (const i of this.busy) this.pool.replace(i);
    this.busy.clear();
    clearTimeout(this.redrawTimer);
    this.redrawTimer = 0;
    this.setRunning(false);
    if (message) this.status.textContent = message;
  }

  show(result, seconds, inputs, workers = 1) {
    fill(this.results);
    if (!result.ok) {
      this.status.textContent = 'The search did not run:';
      this.results.append(h('ul', {class: 'errors'}, result.errors.map((e) => h('li', {}, e.message))));
      return;
    }
    let parsed;
    try {
      parsed = JSON.parse(result.output);
    } catch (e) {
      this.status.textContent = `Unreadable search output: ${e.message}`;
      return;
    }
    const top = Array.isArray(parsed.top) ? parsed.top : [];
    this.status.textContent =
        `${parsed.total_executions} mappings evaluated in ${seconds.toFixed(2)} s` +
        `${workers > 1 ? ` on ${workers} workers` : ''}: ` +
        `${parsed.good_executions} valid, ${parsed.bad_executions} rejected. ` +
        (top.length ? `Best ${top.length}:` : 'No valid mapping.');
    if (!top.length) return;
    const table = h('table', {class: 'search-table'},
        h('caption', {class: 'visually-hidden'}, 'Best mappings by sample rate'),
        h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, '#'),
                         COLUMNS.map(([name]) => h('th', {scope: 'col'}, name)),
                         h('th', {scope: 'col'}, h('span', {class: 'visually-hidden'}, 'Load')))),
        h('tbody', {}, top.map(({execution, stats, spec}, i) => h('tr', {},
            h('td', {}, i + 1),
            COLUMNS.map(([, cell]) => h('td', {}, String(cell(execution ?? {}, stats ?? {})))),
            h('td', {}, h('button', {type: 'button', class: 'load',
                                     'aria-label': `Load mapping ${i + 1}`,
                                     onclick: () => this.load(spec, inputs, i + 1)},
                          'Load'))))));
    this.results.append(h('div', {class: 'table-scroll'}, table));
  }
}
