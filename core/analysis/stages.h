// File: stages.h
//
// Each pipeline stage's figures (StageFiguresOf), from the iteration and
// memory analyses' figures: the report's "stages" list, which the page's
// stage chart draws. Computed here only.
#ifndef BLUEPRINTING_CORE_ANALYSIS_STAGES_H_
#define BLUEPRINTING_CORE_ANALYSIS_STAGES_H_

#include <cstdint>
#include <vector>

#include "core/analysis/figures.h"

namespace blueprint {

// One (virtual) stage of the pipeline as the analyses price it, in model
// order (position k of the route: p * v of them): `rank`, the pipeline
// rank that runs it (k % p; zb_v and dualpipe_v's V: 2p - 1 - k for
// k >= p), `chunk` its chunk on that rank (k / p); `blocks` its
// transformer blocks (an explicit layout's stage_blocks[k], else
// blocks_per_chunk, rounded up for an uneven layout as the analyses price
// every stage); `microbatch_time` one microbatch's forward and backward
// through it (LayoutPositionDurations' F + B + W under a layout, else
// chunk_fw_time + chunk_bw_time), with the embedding's work on position 0
// and the output layer's and loss on the last (first/last_stage_microbatch
// time); `rank_mem_tier1_req` the tier-1 bytes its rank needs
// (first/last_stage_mem_tier1_req on the end ranks; a middle rank's own
// blocks under a layout, else proc_mem_tier1_cap_req, the busiest rank's).
struct StageFigure {
  int64_t rank = 0;
  int64_t chunk = 0;
  int64_t blocks = 0;
  double microbatch_time = 0;
  double rank_mem_tier1_req = 0;
};
// StageFiguresOf: every stage's StageFigure from the computed iteration
// and memory figures of the same block, extras and step.
std::vector<StageFigure> StageFiguresOf(const BlockFigures& block,
                                        const StageExtras& extras,
                                        const StepShape& step,
                                        const IterationFigures& iteration,
                                        const MemoryFigures& memory);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ANALYSIS_STAGES_H_
