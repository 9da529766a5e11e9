// Test-only closed forms the schedule tests compare simulations with. The
// product's bubble is core/analysis/figures.cc (BubbleTerms), re-proved on
// every golden case by //tests/golden:golden_test; these restate its
// formula for the random shapes of simulate_test, which have no mapping.
#ifndef BLUEPRINTING_CORE_SCHEDULE_REPROOF_H_
#define BLUEPRINTING_CORE_SCHEDULE_REPROOF_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/schedule/simulate.h"

namespace blueprint {

// AnalyticBubble: BubbleTerms' bubble without its separate uneven-layout
// term: ((p - 1) + extra) * chunk_time, extra = (v - 1)(p - m mod p) when
// p does not divide m, else 0.
double AnalyticBubble(int64_t p, int64_t v, int64_t m, double chunk_time);

// InterleavedLeftoverDifference: the simulated bubble of the interleaved
// schedule (Megatron-LM order, P2P folded into the chunk durations) minus
// AnalyticBubble. Zero when p divides m or m < p (re-proved by
// simulate_test); otherwise Calculon's (v-1)(p - m mod p) whole idle chunks
// are not what the table order produces: the short last group is paired
// with the previous group's backwards, so the excess depends on the
// forward/backward ratio (README, "Re-proof").
absl::StatusOr<double> InterleavedLeftoverDifference(
    int64_t p, int64_t v, int64_t m, const ChunkDurations& durations);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SCHEDULE_REPROOF_H_
