// ZB-V (Qi et al. 2024, "Zero Bubble Pipeline Parallelism", section 6): the
// V-shaped zero-bubble order as the paper's reference implementation builds
// it (sail-sg/zero-bubble-pipeline-parallelism, megatron/core/
// pipeline_parallel/zerobubble/scheduler/zbv.py, PipelineGraph): a list
// schedule that knows the F, B and W durations, fills every wait it can see
// with a deferred W, and keeps each stage's live activations within 1F1B's
// (2p chunks of half a stage). Unlike a fixed order, it adapts to the
// durations, so its bubble does not grow with m when B and W differ from F.
#ifndef BLUEPRINTING_CORE_SCHEDULE_V_SCHEDULE_H_
#define BLUEPRINTING_CORE_SCHEDULE_V_SCHEDULE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/schedule/schedule_ir.h"

namespace blueprint {

// VShapeZeroBubbleStages: every stage's compute order (F, split B, W; no
// P2P, no lineage) for m microbatches on the V route (chunk 0 of stage s at
// position s, chunk 1 at 2p-1-s), built for `durations` (forward,
// backward_input, backward_weight per chunk; p2p_link_time is the
// reference's c_cost, 0 when P2P is folded into the chunks).
//
// Faithful to zbv.py's try_v_schedule and create_schedule: the warm-up
// (every stage's first F, then chunk-0 forwards while they fit before the
// chunk-1 forward returns, then forwards that even out the stages), 2m
// rounds that each place one B per stage (after filling the wait for its
// input with deferred W) and then at most one F, the remaining W, and the
// best (smallest largest stage bubble, first on ties) of fill_b x fill_f in
// {true, false}, each refined by re-running with the previous stage bubbles
// as "approved" while the largest bubble shrinks (at most 64 refinements;
// the reference recurses without a bound).
//
// One deviation: memory. The reference counts activations in bytes from a
// GPT formula (an F adds 34h + 5as, its B frees 2h + 5as, its W the 32h
// left); here an F adds one chunk and its W frees it, B freeing nothing:
// the simulator's live definition (an F's activations live until its W
// ends), so the reference's bound of 2p chunks is exactly a peak of p
// microbatches, 1F1B's, in the memory analysis' units.
//
// Errors: Internal if one of the reference's assertions would fail (no
// shape is known to; the callers' tests sweep p and m).
absl::StatusOr<TimedOrder> VShapeZeroBubbleStages(
    int64_t p, int64_t m, const ChunkDurations& durations);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SCHEDULE_V_SCHEDULE_H_
