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
const UNITS = {
  s: (x) => x === 0 ? '0 s'
      : Math.abs(x) < 1e-3 ? `${(x * 1e6).toPrecision(3)} µs`
      : Math.abs(x) < 1 ? `${(x * 1e3).toPrecision(3)} ms` : `${x.toPrecision(4)} s`,
  B: (x) => {
    const steps = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let i = 0;
    while (Math.abs(x) >= KiB && i < steps.length - 1) { x /= KiB; i++; }
    return `${i ? x.toPrecision(4) : x} ${steps[i]}`;
  },
  FLOP: (x) => {
    const steps = ['FLOP', 'kFLOP', 'MFLOP', 'GFLOP', 'TFLOP', 'PFLOP', 'EFLOP'];
    let i = 0;
    while (Math.abs(x) >= 1000 && i < steps.length - 1) { x /= 1000; i++; }
    return `${i ? x.toPrecision(4) : x} ${steps[i]}`;
  },
  'B/s': (x) => `${(x / 1e9).toPrecision(4)} GB/s`,
  '%': (x) => `${(x * 100).toPrecision(4)} %`,
  '/s': (x) => `${x.toPrecision(4)} samples/s`,
  '': (x) => '',
};

// The unit of a figure, from its name (Calculon's naming is regular).
export function unitOf(key) {
  if (/efficiency|fraction/.test(key)) return '%';
  if (key === 'sample_rate') return '/s';
  if (/_bw_req|_overlap_req/.test(key)) return 'B/s';
  if (/flops(_per_rank)?$/.test(key)) return 'FLOP';
  if (/_time(_exposed)?$|^critical_path_/.test(key)) return 's';
  if (/bytes$|space|size|mem_accessed|cap_req$/.test(key)) return 'B';
  return '';
}

const UNIT_TEXT = {'s': 's', 'B': 'bytes', 'FLOP': 'FLOP', 'B/s': 'bytes/s', '%': '',
                   '/s': 'samples/s', '': ''};

// Human text for a number (shown beside the exact literal, never instead).
export function human(key, literal) {
  const x = Number(literal);
  if (!Number.isFinite(x) || x === 0) return '';
  return UNITS[unitOf(key)](x);
}

// The figures the summary shows, in groups; every other figure is in the
// full table.
export const GROUPS = [
  ['Iteration', [
    ['total_time', 'Iteration time'], ['sample_rate', 'Sample rate'],
    ['total_efficiency', 'Total efficiency'], ['compute_efficiency', 'Compute efficiency'],
    ['system_efficiency', 'System efficiency'], ['fw_time', 'Forward time'],
    ['bw_time', 'Backward time'], ['recompute_time', 'Recompute time'],
    ['optim_step_time', 'Optimizer step']]],
  ['Pipeline bubble', [
    ['bubble_time', 'Bubble time'], ['bubble_fraction', 'Bubble fraction'],
    ['bubble_chunks', 'Bubble chunks'], ['extra_interleaving_bubbles', 'Extra interleaving bubbles'],
    ['chunk_fw_time', 'Chunk forward'], ['chunk_bw_time', 'Chunk backward'],
    ['bubble_reduction_time', 'Bubble reduction (uneven)']]],
  ['Critical path of one block', [
    ['critical_path_base_forward', 'Base block forward'],
    ['critical_path_base_backward', 'Base block backward'],
    ['critical_path_edge_forward', 'Edge block forward'],
    ['critical_path_edge_backward', 'Edge block backward']]],
  ['GEMM work per rank', [
    ['gemm_flops_per_rank', 'GEMM FLOP'], ['recompute_gemm_flops_per_rank', 'Recompute GEMM FLOP'],
    ['flops_per_rank', 'All FLOP']]],
  ['Communication per rank', [
    ['tp_all_reduce_bytes', 'TP all-reduce'], ['tp_reduce_scatter_bytes', 'TP reduce-scatter'],
    ['tp_all_gather_bytes', 'TP all-gather'], ['pp_p2p_bytes', 'PP send/receive'],
    ['dp_all_reduce_bytes', 'DP all-reduce'], ['dp_reduce_scatter_bytes', 'DP reduce-scatter'],
    ['dp_all_gather_bytes', 'DP all-gather'], ['tp_comm_exposed_time', 'TP exposed'],
    ['pp_comm_exposed_time', 'PP exposed'], ['dp_comm_exposed_time', 'DP exposed']]],
  ['Memory per rank', [
    ['proc_mem_tier1_cap_req', 'Tier 1 (HBM) needed'], ['proc_mem_tier2_cap_req', 'Tier 2 needed'],
    ['weight_space', 'Weights'], ['act_space', 'Activations'],
    ['act_checkpoint_size', 'Checkpoints'], ['weight_grad_space', 'Weight gradients'],
    ['optimizer_space', 'Optimizer'], ['act_grad_space', 'Activation gradients']]],
];

// One figure cell: the exact literal in a button (click: "why this number"),
// then the unit and a rounded reading in separate elements.
export function figureCell(key) {
  const value = h('button', {type: 'button', class: 'figure',
                             title: `Why this number? (lineage of ${key})`});
  const unit = h('span', {class: 'unit'});
  const reading = h('span', {class: 'reading'});
  return {key, element: h('span', {class: 'figure-cell'}, value, unit, reading), value, unit,
          reading};
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
  const unit = UNIT_TEXT[unitOf(cell.key)];
  if (cell.unit.textContent !== unit) cell.unit.textContent = unit;
  const reading = human(cell.key, literal);
  const text = reading ? `≈ ${reading}` : '';
  if (cell.reading.textContent !== text) cell.reading.textContent = text;
}
