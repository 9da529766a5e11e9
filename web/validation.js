// The validation view: `blueprint validate --profile P --json` run by the
// module over its built-in corpus of published runs, shown as one
// predicted-vs-measured scatter per source (log-log, the diagonal is a
// perfect prediction), a table of every row, each error as the CLI
// prints it, and how well the model orders each source's mappings
// (Kendall's tau between measured and predicted throughput).
import {h, s, byId, fill, call} from './dom.js';

const PLOT = 220;  // px, square
const PAD = 30;

function percent(x) {
  return `${(x * 100).toFixed(2)}%`;
}

function signedPercent(x) {
  return `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)}%`;
}

// A point's colour by its group's kind (tests/validation/README.md, "A
// row"): MoE green, FP8 dense orange, BF16 dense blue, whatever the GPU
// generation (bf16_dense, blackwell_fp8, blackwell_moe_bf16, ...); other
// recipes grey.
const GROUP_COLOURS = [[/moe/, '#5b8a3a'], [/fp8$/, '#c0632c'], [/bf16/, '#2f6fb3']];
function groupColour(group) {
  const found = GROUP_COLOURS.find(([pattern]) => pattern.test(group));
  return found ? found[1] : '#8a9099';
}

// One source's scatter: measured on x, predicted on y, both log scaled over
// the source's range.
function scatter(source, rows) {
  const values = rows.flatMap((r) => [r.measured, r.predicted]).filter((v) => v > 0);
  const lo = Math.log10(Math.min(...values)) - 0.05;
  const hi = Math.log10(Math.max(...values)) + 0.05;
  const scale = (v) => (Math.log10(v) - lo) / (hi - lo || 1) * (PLOT - 2 * PAD);
  const x = (v) => PAD + scale(v);
  const y = (v) => PLOT - PAD - scale(v);
  const svg = s('svg', {viewBox: `0 0 ${PLOT} ${PLOT}`, width: PLOT, height: PLOT,
                        role: 'img', 'data-source': source,
                        'aria-label': `${source}: predicted against measured, ${rows.length} runs`},
    s('rect', {x: PAD, y: PAD, width: PLOT - 2 * PAD, height: PLOT - 2 * PAD,
               fill: 'none', stroke: '#c8ccd0'}),
    s('line', {x1: PAD, y1: PLOT - PAD, x2: PLOT - PAD, y2: PAD, stroke: '#8a9099',
               'stroke-dasharray': '4 3'}),
    s('text', {x: PLOT / 2, y: PLOT - 6, 'text-anchor': 'middle', 'font-size': 11},
      'measured'),
    s('text', {x: 10, y: PLOT / 2, 'font-size': 11,
               transform: `rotate(-90 10 ${PLOT / 2})`, 'text-anchor': 'middle'}, 'predicted'),
    s('text', {x: PAD, y: PAD - 8, 'font-size': 12, 'font-weight': 600}, source));
  for (const r of rows) {
    svg.append(s('circle', {cx: x(r.measured), cy: y(r.predicted), r: 3.5,
                            fill: groupColour(r.group),
                            'data-row': r.id},
      s('title', {}, `${r.id} ${r.model}: measured ${r.measured}, predicted ` +
                     `${r.predicted.toPrecision(4)} (${signedPercent(r.error)})`)));
  }
  return svg;
}

// The floor column: the least mean |error| any model can reach on a group's
// rows, given its runs measured more than once (sources have none).
function summaryTable(report) {
  const line = (name, x, floor) => h('tr', {'data-summary': name},
      h('th', {}, name), h('td', {}, String(x.rows)),
      h('td', {'data-mean': name}, percent(x.mean_abs_error)),
      h('td', {}, `${percent(x.max_abs_error)} (${x.max_row})`),
      h('td', {'data-floor': name}, floor ? percent(floor.floor_mean_abs_error) : ''));
  return h('table', {class: 'all-figures validation-summary'},
    h('thead', {}, h('tr', {}, h('th', {}, 'source / group'), h('th', {}, 'rows'),
                     h('th', {}, 'mean |error|'), h('th', {}, 'max |error|'),
                     h('th', {}, 'floor (repeated runs)'))),
    h('tbody', {},
      ...Object.entries(report.by_source).map(([k, v]) => line(k, v)),
      ...Object.entries(report.by_group).map(
          ([k, v]) => line(k, v, report.floor_by_group[k])),
      line('overall', report.overall, report.floor_overall)));
}

function rowTable(report) {
  return h('table', {class: 'all-figures validation-rows'},
    h('thead', {}, h('tr', {}, ...['run', 'source', 'group', 'model', 'GPUs', 'metric',
                                   'measured', 'predicted', 'error']
      .map((t) => h('th', {}, t)))),
    h('tbody', {}, ...report.rows.map((r) => h('tr', {'data-validation-row': r.id},
      h('td', {}, r.id), h('td', {}, r.source_key), h('td', {}, r.group),
      h('td', {}, r.model), h('td', {}, String(r.gpus)), h('td', {}, r.metric),
      h('td', {}, String(r.measured)), h('td', {}, r.predicted.toPrecision(5)),
      h('td', {'data-error': r.id}, signedPercent(r.error))))));
}

// One line per ranked set (a source's mappings of one model on one
// system); the sets whose mapping the source does not print are marked and
// summarised apart, beside the goal.
function rankingTable(report) {
  const summary = (name, x) => h('tr', {'data-ranking-summary': name},
      h('th', {colspan: 4}, `${name}: ${x.rankings} sets, mean tau ${x.mean_tau.toFixed(3)}, ` +
                            `${x.at_goal} at or above 0.8`),
      h('td', {}, x.rankings ? `min ${x.min_tau.toFixed(3)} (${x.min_ranking})` : ''));
  return h('table', {class: 'all-figures validation-rankings'},
    h('thead', {}, h('tr', {}, ...['source', 'model', 'system', 'mappings', "Kendall's tau"]
      .map((t) => h('th', {}, t)))),
    h('tbody', {}, ...report.rankings.map((r) => h('tr', {
        'data-ranking': `${r.source_key}/${r.model}/${r.system}`},
      h('td', {}, r.source_key + (r.mapping_assumed ? ' (mapping assumed)' : '')),
      h('td', {}, r.model), h('td', {}, r.system), h('td', {}, String(r.mappings)),
      h('td', {'data-tau': `${r.source_key}/${r.model}/${r.system}`}, r.tau.toFixed(3)))),
      summary('printed mappings', report.rankings_printed),
      summary('assumed mappings', report.rankings_assumed)));
}

// Runs the validation under the chosen profile and fills the view.
export function runValidation(bp) {
  const profile = byId('validation-profile').value;
  const status = byId('validation-status');
  const result = call(bp, 'validate', ['--profile', profile, '--json']);
  if (!result.ok) {
    status.textContent = result.errors.map((e) => e.message).join('; ');
    status.className = 'status bad';
    return;
  }
  const report = JSON.parse(result.output);
  // One plot per source summary (by_source's keys: a source's Blackwell
  // rows, "S1/blackwell", apart from its others).
  const sources = new Map();
  for (const r of report.rows) {
    if (!sources.has(r.summary_source)) sources.set(r.summary_source, []);
    sources.get(r.summary_source).push(r);
  }
  status.className = 'status';
  status.textContent = `${report.profile}: ${report.overall.rows} runs predicted, ` +
      `mean |error| ${percent(report.overall.mean_abs_error)}; ` +
      `${report.skipped_count} skipped (not modelled: see each row's reason).`;
  fill(byId('validation-plots'),
       ...[...sources.entries()].map(([source, rows]) => scatter(source, rows)));
  fill(byId('validation-table'), summaryTable(report), rankingTable(report),
       rowTable(report));
}
