#include "core/schedule/reproof.h"

#include <algorithm>

#include "core/schedule/schedule_ir.h"

namespace blueprint {

double AnalyticBubble(int64_t p, int64_t v, int64_t m, double chunk_time) {
  const int64_t leftover = m % p;
  const double extra =
      leftover != 0 ? static_cast<double>((v - 1) * (p - leftover)) : 0.0;
  return (static_cast<double>(p - 1) + extra) * chunk_time;
}

absl::StatusOr<double> InterleavedLeftoverDifference(
    int64_t p, int64_t v, int64_t m, const ChunkDurations& durations) {
  absl::StatusOr<PipelineScheduleIR> ir =
      BuildSchedule(ScheduleKind::kInterleaved, p, v, m);
  if (!ir.ok()) return ir.status();
  absl::StatusOr<SimulationResult> result = Simulate(*ir, {durations});
  if (!result.ok()) return result.status();
  const double chunk_time =
      durations.forward + durations.backward_input + durations.backward_weight;
  return result->bubble - AnalyticBubble(p, v, m, chunk_time);
}

}  // namespace blueprint
