// Reading the report JSON (`blueprint analyze`) and showing its figures.
//
// The contract (DESIGN.md "Interfaces"): an element with data-figure="KEY"
// holds exactly the text of that figure's number in the CLI's output. So the
// text is cut out of the report's JSON text, never re-formatted by JS.

import {h} from './dom.js';

// {key: literal text} of one top-level object of canonical JSON text (2-space
// indent, one key per line): `"figures": {` ... `  }`.
export function literals(text, section) {
  const out = new Map();
  const lines = text.split('\n');
  let inside = false;
  for (const line of lines) {
    if (!inside) {
      inside = line === `  "${section}": {`;
      continue;
    }
    if (line.startsWith('  }')) break;
    const match = /^ {4}"([^"]+)": (.*?),?$/.exec(line);
    if (match) out.set(match[1], match[2]);
  }
  return out;
}

const KiB = 1024;

function scaled(x, base, steps) {
  let i = 0;
  while (Math.abs(x) >= base && i < steps.length - 1) { x /= base; i++; }
  return `${i ? x.toPrecision(4) : x} ${steps[i]}`;
}

// A rounded reading of a number in one of the core's units (metadata's
// figure units, core/figures/figure_table.h); none for a unit it does not
// know how to scale.
const READINGS = {
  's': (x) => Math.abs(x) < 1e-3 ? `${(x * 1e6).toPrecision(3)} µs`
      : Math.abs(x) < 1 ? `${(x * 1e3).toPrecision(3)} ms` : `${x.toPrecision(4)} s`,
  'bytes': (x) => scaled(x, KiB, ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']),
  'FLOP': (x) => scaled(x, 1000, ['FLOP', 'kFLOP', 'MFLOP', 'GFLOP', 'TFLOP', 'PFLOP', 'EFLOP']),
  'bytes/s': (x) => `${(x / 1e9).toPrecision(4)} GB/s`,
  'fraction': (x) => `${(x * 100).toPrecision(4)} %`,
  'samples/s': (x) => `${x.toPrecision(4)} samples/s`,
};

// Human text for a number in `unit` (shown beside the exact literal, never
// instead).
export function human(unit, literal) {
  const x = Number(literal);
  if (!Number.isFinite(x) || x === 0 || !Object.hasOwn(READINGS, unit)) return '';
  return READINGS[unit](x);
}

// The figures the summary shows, in its order (the page's layout). Their
// labels, groups, units and meanings come from the core's metadata (the
// figure table, core/figures/figure_table.h); every figure is also in the
// full table.
export const HEADLINE = [
  'total_time', 'sample_rate', 'mfu', 'model_flops_per_iteration', 'parameters_total',
  'stage_imbalance_time', 'first_stage_time', 'last_stage_time', 'total_efficiency',
  'compute_efficiency', 'system_efficiency', 'fw_time', 'bw_time', 'recompute_time',
  'optim_step_time', 'bubble_time', 'simulated_bubble_time', 'simulated_total_time',
  'tp_comm_exposed_time', 'pp_comm_exposed_time', 'dp_comm_exposed_time', 'bubble_chunks',
  'extra_interleaving_bubbles', 'chunk_fw_time', 'chunk_bw_time', 'bubble_reduction_time',
  'bubble_fraction', 'critical_path_base_forward', 'critical_path_base_backward',
  'critical_path_edge_forward', 'critical_path_edge_backward', 'gemm_flops_per_rank',
  'recompute_gemm_flops_per_rank', 'flops_per_rank', 'tp_all_reduce_bytes',
  'tp_reduce_scatter_bytes', 'tp_all_gather_bytes', 'pp_p2p_bytes', 'dp_all_reduce_bytes',
  'dp_reduce_scatter_bytes', 'dp_all_gather_bytes', 'dp_param_all_gather_bytes',
  'ep_all_to_all_bytes', 'cp_kv_bytes', 'expert_parameters_per_rank', 'proc_mem_tier1_cap_req',
  'proc_mem_tier2_cap_req', 'max_stage_mem_tier1_req', 'weight_and_optimizer_bytes',
  'weight_space', 'act_space', 'act_checkpoint_size', 'weight_grad_space', 'optimizer_space',
  'act_grad_space',
];

// The communication table: per parallel dimension, the bytes a rank moves
// per step and the time of it the step sees (the core's figures).
export const COMM_ROWS = [
  ['Tensor (t)', 'tp_comm_bytes', 'tp_collectives_exposed_time'],
  ['Pipeline (p)', 'pp_p2p_bytes', 'pp_comm_exposed_time'],
  ['Data (d)', 'dp_comm_bytes', 'dp_comm_exposed_time'],
  ['Expert (ep)', 'ep_all_to_all_bytes', 'ep_all_to_all_exposed_time'],
  ['Context (cp)', 'cp_kv_bytes', 'cp_kv_exposed_time'],
];

// A heading for one of the metadata's figure groups.
export const groupTitle = (group) =>
  `${group.charAt(0).toUpperCase()}${group.slice(1)} figures`;

// [[group, [item, ...]], ...]: `items` by the metadata group of key(item),
// groups in order of first appearance ("other" for a figure the metadata
// lacks).
export function byGroup(items, key, meta) {
  const groups = new Map();
  for (const item of items) {
    const group = meta.figure(key(item))?.group ?? 'other';
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push(item);
  }
  return [...groups];
}

// One figure cell: the exact literal in a button (click: "why this number"),
// then the unit and a rounded reading in separate elements. info: the
// figure's metadata ({unit, group, label, meaning}).
export function figureCell(key, info) {
  const value = h('button', {type: 'button', class: 'figure',
                             title: `Why this number? (lineage of ${key})`});
  const unit = h('span', {class: 'unit', 'data-unit-of': key});
  const reading = h('span', {class: 'reading'});
  return {key, info: info ?? {}, element: h('span', {class: 'figure-cell'}, value, unit, reading),
          value, unit, reading};
}

// Shows `literal` (or a dash when the report has no such figure) in a cell.
export function setFigure(cell, literal) {
  if (literal === undefined) {
    cell.value.removeAttribute('data-figure');
    cell.value.textContent = '—';
    cell.value.disabled = true;
    cell.unit.textContent = '';
    cell.reading.textContent = '';
    return;
  }
  if (cell.value.dataset.figure !== cell.key) cell.value.dataset.figure = cell.key;
  cell.value.disabled = false;
  if (cell.value.textContent !== literal) cell.value.textContent = literal;
  const unit = literal === 'null' ? '' : cell.info.unit ?? '';
  if (cell.unit.textContent !== unit) cell.unit.textContent = unit;
  const reading = human(cell.info.unit, literal);
  const text = reading ? `≈ ${reading}` : '';
  if (cell.reading.textContent !== text) cell.reading.textContent = text;
}
