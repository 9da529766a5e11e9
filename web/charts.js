// The SVG charts: memory per tier against capacity, the first and last
// stage's time and memory, an idealized pipeline schedule, and the serving
// panel's throughput-latency curve. Each returns an element.

import {h, s} from './dom.js';
import {human} from './report.js';

const GiB = 2 ** 30;
const gib = (bytes) => `${(bytes / GiB).toFixed(2)} GiB`;

// The memory chart: per tier, what a rank needs against the tier's
// capacity, as the report gives them (figures proc_mem_tier{1,2}_cap_req,
// memory.tier{1,2}_capacity). The report does not say which item (weights,
// activations, ...) lands in which tier, so the bars are not split by item:
// re-deriving Calculon's offload split from the item figures here would be a
// second copy of the core's formula. The items are in the summary's memory
// figures.
// report: the parsed report JSON; width: the CSS pixels available (the
// viewBox matches them, so text keeps its size).
export function memoryChart(report, width) {
  const f = report.figures ?? {};
  const memory = report.memory ?? {};
  // Tier 1: the most loaded stage's need (Calculon's proc_mem_tier1_cap_req
  // when the model has no vocabulary).
  const tier1 = f.max_stage_mem_tier1_req ?? f.proc_mem_tier1_cap_req ?? 0;
  const tiers = [
    ['Tier 1 (HBM)', tier1, memory.tier1_capacity ?? 0],
    ['Tier 2 (offload)', f.proc_mem_tier2_cap_req ?? 0, memory.tier2_capacity ?? 0],
  ];
  const left = width < 480 ? 78 : 120;
  const right = 16;
  const barHeight = 26;
  const rowHeight = 58;
  const svg = s('svg', {viewBox: `0 0 ${width} ${rowHeight * tiers.length + 6}`,
                        class: 'chart memory-chart', role: 'img',
                        'aria-label': tiers.map(([name, need, cap]) =>
                            `${name}: needs ${gib(need)} of ${gib(cap)}`).join('; ')});
  tiers.forEach(([name, need, capacity], row) => {
    const y = row * rowHeight + 18;
    const scale = (width - left - right) / Math.max(need, capacity, 1);
    const over = need > capacity;
    const g = s('g', {class: 'tier'});
    g.append(s('text', {x: 0, y: y + barHeight / 2 + 4, class: 'label'},
               width < 480 ? name.replace(/ \(.*/, '') : name));
    g.append(s('rect', {x: left, y, width: capacity * scale, height: barHeight,
                        class: 'capacity'}));
    if (need > 0) {
      g.append(s('rect', {x: left, y, width: need * scale, height: barHeight,
                          class: over ? 'seg seg-over' : 'seg seg-need'},
                 s('title', {}, `${name}: needs ${gib(need)}`)));
    }
    const capX = left + capacity * scale;
    g.append(s('line', {x1: capX, x2: capX, y1: y - 6, y2: y + barHeight + 6,
                        class: 'capacity-line'}));
    g.append(s('text', {x: left, y: y - 5, class: over ? 'note over' : 'note'},
               `${gib(need)} of ${gib(capacity)}${over ? ' — over capacity' : ''}`));
    svg.append(g);
  });
  const legend = h('ul', {class: 'legend'},
                   h('li', {}, h('span', {class: 'swatch seg-need', 'aria-hidden': 'true'}),
                     'needed per rank'),
                   h('li', {}, h('span', {class: 'swatch seg-over', 'aria-hidden': 'true'}),
                     'needed, over capacity'),
                   h('li', {}, h('span', {class: 'swatch capacity-swatch',
                                          'aria-hidden': 'true'}), 'capacity'));
  return h('div', {}, svg, legend);
}

// The stage chart: the first and the last pipeline stage side by side, their
// busy time per step (first/last_stage_time) and tier-1 need
// (first/last_stage_mem_tier1_req), as the report gives them. With a
// vocabulary the two differ (embedding on the first, output layer and loss
// on the last) and the slower one sets the pace (stage_imbalance_time).
export function stageChart(report, width) {
  const f = report.figures ?? {};
  const memory = report.memory ?? {};
  const p = report.mapping?.pipeline ?? 1;
  const stages = p > 1 ? [['First stage', 'first'], ['Last stage', 'last']]
                       : [['The stage', 'first']];
  const rows = [
    ['Busy time', (k) => f[`${k}_stage_time`] ?? 0, (x) => human('s', x) || '0 s', 0],
    ['Tier 1 need', (k) => f[`${k}_stage_mem_tier1_req`] ?? 0, gib,
     memory.tier1_capacity ?? 0],
  ];
  const left = width < 480 ? 78 : 120;
  const right = 16;
  const barHeight = 16;
  const rowHeight = 22 * stages.length + 26;
  const svg = s('svg', {viewBox: `0 0 ${width} ${rowHeight * rows.length + 6}`,
                        class: 'chart stage-chart', role: 'img',
                        'aria-label': rows.map(([what, value, format]) =>
                            `${what}: ${stages.map(([name, k]) =>
                                `${name} ${format(value(k))}`).join(', ')}`).join('; ')});
  rows.forEach(([what, value, format, capacity], row) => {
    const top = row * rowHeight + 16;
    const most = Math.max(capacity, ...stages.map(([, k]) => value(k)), 1e-30);
    const scale = (width - left - right) / most;
    const g = s('g', {class: 'stage-row'});
    g.append(s('text', {x: 0, y: top - 4, class: 'note'}, what));
    stages.forEach(([name, k], i) => {
      const y = top + i * 22;
      const x = value(k);
      const over = capacity > 0 && x > capacity;
      g.append(s('text', {x: 0, y: y + barHeight - 3, class: 'label'}, name));
      g.append(s('rect', {x: left, y, width: x * scale, height: barHeight,
                          class: over ? 'seg seg-over' : 'seg seg-need'},
                 s('title', {}, `${name}: ${format(x)}`)));
      g.append(s('text', {x: left + 4, y: y + barHeight - 3, class: 'note'},
                 format(x)));
    });
    if (capacity > 0) {
      const capX = left + capacity * scale;
      g.append(s('line', {x1: capX, x2: capX, y1: top - 2,
                          y2: top + 22 * stages.length, class: 'capacity-line'}));
    }
    svg.append(g);
  });
  const imbalance = f.stage_imbalance_time ?? 0;
  const note = h('p', {class: 'hint'}, imbalance > 0
      ? `The vocabulary's work adds ${human('s', imbalance)} to the step ` +
        '(stage_imbalance_time): the slowest stage sets the pace.'
      : 'Every stage runs the same blocks: no vocabulary work to balance.');
  return h('div', {}, svg, note);
}

const MAX_STAGES = 128;
const MAX_OPS = 6000;

// The microbatches drawn: all of them when few, else a multiple of p enough
// for warm-up, steady state and cool-down (the steady middle only repeats).
export function drawnMicrobatches(p, v, m) {
  let drawn = Math.min(m, Math.max(2 * p, 8));
  while (drawn > p && drawn * v * Math.min(p, MAX_STAGES) * 2 > MAX_OPS) drawn -= p;
  return Math.max(1, Math.min(drawn, m));
}

const COMPUTE_KINDS = new Set(['F', 'B', 'W', 'FB']);
const KIND_CLASS = {F: 'fw', B: 'bw', W: 'wg', FB: 'fb'};

// The schedule chart of the core's simulated timeline (`blueprint schedule
// --json`, core/schedule/timeline.h): one <g data-stage-row> per stage with
// its compute commands coloured by kind and chunk, each titled with its
// lineage; the idle background between them (P2P waits included) is the
// bubble. `m` is the spec's microbatch count, `timeline.m` the drawn one.
export function scheduleChart({timeline, errors, m, width}) {
  if (!timeline) {
    return h('p', {class: 'note'}, 'No schedule: ' +
                                   ((errors ?? []).map((e) => e.message).join('; ') || 'none'));
  }
  const p = timeline.p;
  const shownStages = Math.min(p, MAX_STAGES);
  const makespan = Math.max(timeline.makespan, 1e-30);
  const left = 58;
  const rowH = shownStages > 32 ? 8 : 18;
  const top = 4;
  const plotW = width - left - 8;
  const height = top + rowH * shownStages + 24;
  const x = (t) => left + (t / makespan) * plotW;
  const svg = s('svg', {viewBox: `0 0 ${width} ${height}`, class: 'chart schedule-chart',
                        role: 'img',
                        'aria-label': `Pipeline schedule, ${timeline.schedule}: ${p} stages, ` +
                            `${timeline.m} microbatches drawn`});
  svg.append(s('defs', {}, s('pattern', {id: 'idle', width: 6, height: 6,
                                         patternUnits: 'userSpaceOnUse',
                                         patternTransform: 'rotate(45)'},
                             s('rect', {width: 6, height: 6, class: 'idle-bg'}),
                             s('line', {x1: 0, y1: 0, x2: 0, y2: 6, class: 'idle-line'}))));
  const kinds = new Set();
  for (let i = 0; i < shownStages; i++) {
    const stage = timeline.stages[i];
    const y = top + i * rowH;
    const g = s('g', {'data-stage-row': i},
                s('title', {}, `Stage ${i}: busy ${human('s', stage.busy)}, ` +
                                `idle ${human('s', stage.idle)}, ` +
                                `peak ${stage.peak_live_microbatches} microbatches live`));
    if (rowH >= 12 || i % 8 === 0) {
      g.append(s('text', {x: 0, y: y + rowH * 0.7, class: 'label'}, `stage ${i}`));
    }
    g.append(s('rect', {x: left, y: y + 1, width: plotW, height: rowH - 2, class: 'idle'}));
    for (const c of stage.commands) {
      if (!COMPUTE_KINDS.has(c.kind)) continue;
      kinds.add(c.kind);
      const w = Math.max(x(c.end) - x(c.start), 0.5);
      const rect = s('rect', {x: x(c.start), y: y + 1, width: w, height: rowH - 2,
                              class: `${KIND_CLASS[c.kind]} chunk-${c.chunk % 4}`,
                              'data-kind': c.kind},
                     s('title', {}, `${c.kind} microbatch ${c.microbatch + 1}, chunk ${c.chunk}: ` +
                                    `${human('s', c.start)} to ${human('s', c.end)}\n${c.lineage}`));
      g.append(rect);
      if (w > 11 && rowH >= 12) {
        g.append(s('text', {x: x(c.start) + w / 2, y: y + rowH * 0.68, class: 'mb'},
                   String(c.microbatch + 1)));
      }
    }
    svg.append(g);
  }
  const axisY = top + rowH * shownStages + 16;
  svg.append(s('text', {x: left, y: axisY, class: 'axis'}, '0'));
  svg.append(s('text', {x: width - 8, y: axisY, class: 'axis end'}, human('s', makespan)));
  const drawn = timeline.m;
  // What the simulation re-proves (core/schedule/timeline.h).
  const analytic = timeline.analysis_bubble_time + timeline.bubble_reduction_time -
                   timeline.unscheduled_bubble_time;
  const notes = [`Simulated ${timeline.schedule} schedule from the chunk times: ${p} ` +
                 `stage${p > 1 ? 's' : ''}, ${drawn} of ${m} microbatch${m > 1 ? 'es' : ''} drawn` +
                 (drawn < m ? ' (the steady middle repeats)' : '') +
                 `; bubble ${human('s', timeline.bubble)}, analytic ${human('s', analytic)}` +
                 (drawn < m ? ' for the drawn microbatches.' : '.')];
  if (shownStages < p) notes.push(`Only the first ${shownStages} stages are drawn.`);
  const names = {F: 'forward', B: 'backward', W: 'weight gradient', FB: 'forward & backward'};
  const legend = h('ul', {class: 'legend'},
                   [...kinds].map((k) => h('li', {}, h('span', {class: `swatch ${KIND_CLASS[k]}`,
                                                                'aria-hidden': 'true'}),
                                           names[k])),
                   h('li', {}, h('span', {class: 'swatch idle-swatch', 'aria-hidden': 'true'}),
                     'idle (bubble, P2P waits)'));
  return h('div', {}, svg, legend, h('p', {class: 'note'}, notes.join(' ')));
}

// The serving curve (web/serving.js): output tokens per second per GPU
// against the time per output token, one point per concurrency, joined in
// concurrency order; `current` (or null) the form's own concurrency, ringed.
// points, current: {concurrency, tpot, throughput} in seconds and
// tokens/s/GPU. Both axes start at 0, so slopes compare honestly.
export function servingCurveChart(points, current, width) {
  const height = 300;
  const left = 64;
  const right = 20;
  const top = 14;
  const bottom = 42;
  const all = current ? [...points, current] : points;
  const xMax = Math.max(...all.map((p) => p.tpot), 1e-30) * 1.08;
  const yMax = Math.max(...all.map((p) => p.throughput), 1e-30) * 1.08;
  const x = (v) => left + (v / xMax) * (width - left - right);
  const y = (v) => top + (1 - v / yMax) * (height - top - bottom);
  const ms = (v) => human('s', v) || '0 s';
  const rate = (v) => `${v.toPrecision(4)} tokens/s/GPU`;
  const first = points[0];
  const last = points.at(-1);
  const svg = s('svg', {viewBox: `0 0 ${width} ${height}`, class: 'chart serving-curve',
                        role: 'img',
                        'aria-label': `Throughput against latency at ${points.length} ` +
                            `concurrencies from ${first.concurrency} to ${last.concurrency}: ` +
                            `${rate(first.throughput)} at ${ms(first.tpot)} per token to ` +
                            `${rate(last.throughput)} at ${ms(last.tpot)}`});
  const axisY = height - bottom;
  svg.append(s('line', {x1: left, x2: width - right, y1: axisY, y2: axisY, class: 'axis-line'}),
             s('line', {x1: left, x2: left, y1: top, y2: axisY, class: 'axis-line'}));
  // Ticks at 0, half and the whole of each axis.
  for (const f of [0, 0.5, 1]) {
    const tx = x(f * xMax / 1.08);
    const ty = y(f * yMax / 1.08);
    svg.append(s('text', {x: tx, y: axisY + 14, class: 'axis tick-x'}, ms(f * xMax / 1.08)),
               s('text', {x: left - 4, y: ty + 4, class: 'axis tick-y'},
                 f === 0 ? '0' : (f * yMax / 1.08).toPrecision(3)));
  }
  svg.append(s('text', {x: (left + width - right) / 2, y: height - 6, class: 'axis tick-x'},
               'time per output token (tpot)'),
             s('text', {x: 12, y: (top + axisY) / 2, class: 'axis',
                        transform: `rotate(-90 12 ${(top + axisY) / 2})`,
                        'text-anchor': 'middle'}, 'output tokens/s per GPU'));
  const line = points.map((p) => `${x(p.tpot)},${y(p.throughput)}`).join(' ');
  svg.append(s('polyline', {class: 'curve-line', points: line}));
  // Labels closer than LABEL_GAP pixels to the last one drawn are left out
  // (the first doublings crowd together); every point keeps its title.
  const LABEL_GAP = 16;
  let labelled = null;
  for (const p of points) {
    const [px, py] = [x(p.tpot), y(p.throughput)];
    svg.append(s('circle', {cx: px, cy: py, r: 4, class: 'curve-point',
                            'data-concurrency': p.concurrency},
                 s('title', {}, `concurrency ${p.concurrency}: ${ms(p.tpot)} per token, ` +
                                rate(p.throughput))));
    if (!labelled || Math.hypot(px - labelled[0], py - labelled[1]) >= LABEL_GAP) {
      svg.append(s('text', {x: px + 6, y: py - 6, class: 'note'}, String(p.concurrency)));
      labelled = [px, py];
    }
  }
  if (current) {
    svg.append(s('circle', {cx: x(current.tpot), cy: y(current.throughput), r: 8,
                            class: 'curve-current'},
                 s('title', {}, `this mapping, concurrency ${current.concurrency}: ` +
                                `${ms(current.tpot)} per token, ${rate(current.throughput)}`)));
  }
  const legend = h('p', {class: 'note'},
                   'Each point is the mapping served at that concurrency per replica (its ' +
                   'label); the ring is the concurrency of the form.');
  return h('div', {}, svg, legend);
}
