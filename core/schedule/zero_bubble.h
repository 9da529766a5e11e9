// The zero-bubble constructors' shared core (Qi et al. 2024, "Zero Bubble
// Pipeline Parallelism"): list scheduling at unit durations (F = B = W = 1,
// the paper's handcrafted-schedule assumption) that splits every backward
// into B (input gradient) and W (weight gradient) and uses W to fill waits.
#ifndef BLUEPRINTING_CORE_SCHEDULE_ZERO_BUBBLE_H_
#define BLUEPRINTING_CORE_SCHEDULE_ZERO_BUBBLE_H_

#include <cstdint>
#include <vector>

#include "core/schedule/schedule_ir.h"

namespace blueprint {

// GreedyZeroBubbleStages: every stage's compute order (F, B split, W; no
// lineage, no P2P) for m microbatches on `route` (p * chunks positions).
// At each unit tick a free stage starts, in this priority:
//   1. a ready B (its F done, the next position's B done), earliest
//      microbatch first, then the deeper position;
//   2. a ready F while fewer than live_limit[s] of its forwards await their
//      B and at most max_pending_weights[s] W wait, earliest microbatch
//      first, then the deeper position;
//   3. the oldest deferred W;
// else it idles for the tick. Per chunk, F and B run in microbatch order.
// If the bound of ticks is hit (never, for the live limits >= 1 used by
// the constructors) some stage lists fewer than 3*m*chunks commands.
// Deterministic; O(ticks * p * chunks) time, O(m * p * chunks) memory.
std::vector<std::vector<Command>> GreedyZeroBubbleStages(
    int64_t p, int64_t m, int64_t chunks, const Route& route,
    const std::vector<int64_t>& live_limit,
    const std::vector<int64_t>& max_pending_weights);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SCHEDULE_ZERO_BUBBLE_H_
