// The SVG charts: memory per tier against capacity, each pipeline stage's
// blocks, time and memory, an idealized pipeline schedule, and the serving
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

// The stage chart: one row per pipeline stage, or per virtual stage when
// v > 1 (the report's `stages`, core/analysis StageFiguresOf: model order,
// each with its rank, chunk and blocks), its forward + backward time per
// microbatch and the tier-1 memory its rank needs against the capacity.
// The rank whose stages take longest per microbatch paces the pipeline:
// its bars are marked (data-slowest). Below it, the same as a table.
// report: the parsed report JSON; width: the CSS pixels available.
const MAX_STAGE_ROWS = 128;
const MAX_STAGE_TABLE_ROWS = 1024;

export function stageChart(report, width) {
  const stages = Array.isArray(report.stages) ? report.stages : [];
  if (stages.length === 0) return h('p', {class: 'hint'}, 'No stages in the report.');
  const capacity = report.memory?.tier1_capacity ?? 0;
  const time = (x) => human('s', x) || '0 s';
  // The pace: each rank's stages summed (one per chunk).
  const rankTimes = new Map();
  for (const st of stages) rankTimes.set(st.rank, (rankTimes.get(st.rank) ?? 0) + st.microbatch_time);
  let slowest = stages[0].rank;
  for (const [rank, t] of rankTimes) if (t > rankTimes.get(slowest)) slowest = rank;
  const interleaved = stages.some((st) => st.chunk > 0);
  const name = (k) => `${interleaved ? 'virtual stage' : 'stage'} ${k}`;

  const shown = stages.slice(0, MAX_STAGE_ROWS);
  const rowH = shown.length > 32 ? 9 : 20;
  const left = width < 480 ? 92 : 150;
  const gap = 16;
  const top = 18;
  const plotW = (width - left - gap - 8) / 2;
  const memX = left + plotW + gap;
  const most = (key) => Math.max(...stages.map((st) => st[key]), 1e-30);
  const timeScale = plotW / most('microbatch_time');
  const memScale = plotW / Math.max(most('rank_mem_tier1_req'), capacity);
  const height = top + rowH * shown.length + 6;
  const svg = s('svg', {viewBox: `0 0 ${width} ${height}`, class: 'chart stage-chart', role: 'img',
                        'aria-label': `${stages.length} ${interleaved ? 'virtual stages' : 'stages'}` +
                            ` (blocks ${stages.map((st) => st.blocks).join(', ')}); rank ${slowest}` +
                            ` paces the pipeline at ${time(rankTimes.get(slowest))} per microbatch`});
  svg.append(s('text', {x: left, y: 12, class: 'note'}, 'forward + backward per microbatch'),
             s('text', {x: memX, y: 12, class: 'note'}, 'tier 1 of its rank (line: capacity)'));
  shown.forEach((st, k) => {
    const y = top + k * rowH;
    const pace = st.rank === slowest;
    const over = capacity > 0 && st.rank_mem_tier1_req > capacity;
    const g = s('g', {'data-stage': k, 'data-blocks': st.blocks, 'data-rank': st.rank,
                      'data-slowest': pace || undefined, class: pace ? 'stage slowest' : 'stage'},
                s('title', {}, `${name(k)} (rank ${st.rank}, chunk ${st.chunk}): ${st.blocks} ` +
                               `block${st.blocks === 1 ? '' : 's'}, ${time(st.microbatch_time)} ` +
                               `per microbatch; its rank needs ${gib(st.rank_mem_tier1_req)}` +
                               (pace ? '; paces the pipeline' : '')));
    if (rowH >= 12 || k % 8 === 0) {
      g.append(s('text', {x: 0, y: y + rowH * 0.7, class: 'label'},
                 `${width < 480 ? k : name(k)} · ${st.blocks} bl`));
    }
    g.append(s('rect', {x: left, y: y + 1, width: st.microbatch_time * timeScale,
                        height: rowH - 3, class: pace ? 'seg seg-pace' : 'seg seg-time'}));
    g.append(s('rect', {x: memX, y: y + 1, width: st.rank_mem_tier1_req * memScale,
                        height: rowH - 3, class: over ? 'seg seg-over' : 'seg seg-need'}));
    if (rowH >= 12) {
      g.append(s('text', {x: left + 4, y: y + rowH * 0.7, class: 'bar-text'},
                 time(st.microbatch_time)));
      g.append(s('text', {x: memX + 4, y: y + rowH * 0.7, class: 'bar-text'},
                 gib(st.rank_mem_tier1_req)));
    }
    svg.append(g);
  });
  if (capacity > 0) {
    const capX = memX + capacity * memScale;
    svg.append(s('line', {x1: capX, x2: capX, y1: top - 2, y2: height - 4,
                          class: 'capacity-line'}));
  }
  const legend = h('ul', {class: 'legend'},
                   h('li', {}, h('span', {class: 'swatch seg-time', 'aria-hidden': 'true'}),
                     'time per microbatch'),
                   h('li', {}, h('span', {class: 'swatch seg-pace', 'aria-hidden': 'true'}),
                     `rank ${slowest}, the slowest: it paces the pipeline`),
                   h('li', {}, h('span', {class: 'swatch seg-need', 'aria-hidden': 'true'}),
                     'tier-1 need'),
                   h('li', {}, h('span', {class: 'swatch seg-over', 'aria-hidden': 'true'}),
                     'over capacity'));
  const notes = [`Rank ${slowest} takes ${time(rankTimes.get(slowest))} per microbatch over its ` +
                 `stages, the most: it paces the pipeline. The embedding runs on the first ` +
                 `stage, the output layer and loss on the last.`];
  if (shown.length < stages.length) notes.push(`Only the first ${shown.length} are drawn.`);
  const rows = stages.slice(0, MAX_STAGE_TABLE_ROWS).map((st, k) =>
    h('tr', {class: st.rank === slowest ? 'slowest' : undefined},
      h('th', {scope: 'row'}, String(k)), h('td', {}, String(st.rank)),
      h('td', {}, String(st.chunk)), h('td', {}, String(st.blocks)),
      h('td', {}, time(st.microbatch_time)), h('td', {}, gib(st.rank_mem_tier1_req))));
  const table = h('details', {class: 'stage-table'},
                  h('summary', {}, 'The stages as a table'),
                  h('div', {class: 'table-scroll'}, h('table', {class: 'comm-table'},
                    h('thead', {}, h('tr', {},
                      ['Stage', 'Rank', 'Chunk', 'Blocks', 'Forward + backward per microbatch',
                       'Tier 1 of its rank'].map((c) => h('th', {scope: 'col'}, c)))),
                    h('tbody', {}, rows))));
  return h('div', {}, svg, legend, h('p', {class: 'note'}, notes.join(' ')), table);
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
