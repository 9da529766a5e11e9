// ZB-H2 (Qi et al. 2024, "Zero Bubble Pipeline Parallelism", section 3):
// the zero-bubble order of one chunk per stage with ZB-H2's activation
// memory, 2p - 1 microbatches, as the paper's reference implementation
// builds it for given durations (sail-sg/zero-bubble-pipeline-parallelism,
// megatron/core/pipeline_parallel/zerobubble/scheduler/zb.py: the
// automatic scheduler's heuristic, Graph.manual_order, best of
// initial_solution's eight variants; its ILP refinement is not ported).
#ifndef BLUEPRINTING_CORE_SCHEDULE_ZERO_BUBBLE_H_
#define BLUEPRINTING_CORE_SCHEDULE_ZERO_BUBBLE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/schedule/schedule_ir.h"

namespace blueprint {

// ZeroBubbleH2Stages: every stage's compute order (F, split B, W; no P2P,
// no lineage) for m microbatches over p stages, built for `durations`
// (forward, backward_input, backward_weight; p2p_link_time is the
// reference's cost_comm, 0 when P2P is folded into the chunks).
//
// The heuristic: the first microbatch's F on every stage, then as many
// warm-up forwards as fit (in memory, and before the first B returns, or
// just past it in the variant that allows a bubble before the first B),
// non-increasing down the stages; then per microbatch one F per stage
// (unless B is due first, in the variant that prioritises B) and one B
// per stage from the last up, each after the deferred W that fill its wait
// for its input (or, in the no-bubble-greedy variant, that one more W may
// exceed the bubble budget); the remaining W last. Of the eight variants
// the one with the shortest longest stage span (first F start to last W
// end: the reference's objective, the iteration period once the optimizer
// step is post-validated) wins, the first on ties.
//
// Memory is the reference's fixed-schedule convention (runtime.py): an F
// adds one microbatch, its B frees nothing, its W frees it (the
// simulator's live definition), limited to 2p - 1 per stage (ZB-H2's
// memory in the paper's Table 3).
//
// Errors: Internal if the reference's own checks would fail ("Cannot fit
// memory", or an order whose times break a dependency); no shape is known
// to (simulate_test sweeps p and m at unit and random durations).
absl::StatusOr<TimedOrder> ZeroBubbleH2Stages(int64_t p, int64_t m,
                                              const ChunkDurations& durations);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SCHEDULE_ZERO_BUBBLE_H_
