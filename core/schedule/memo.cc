#include "core/schedule/memo.h"

#include <algorithm>
#include <cmath>

namespace blueprint {

namespace {

absl::StatusOr<ShapeOutcome> Outcome(const PipelineScheduleIR& ir,
                                     const ChunkDurations& durations) {
  absl::StatusOr<SimulationResult> r = Simulate(ir, {durations});
  if (!r.ok()) return r.status();
  ShapeOutcome out;
  out.bubble = r->bubble;
  for (const StageFigures& stage : r->stages) {
    out.peak_live_microbatches =
        std::max(out.peak_live_microbatches, stage.peak_live_microbatches);
  }
  return out;
}

}  // namespace

absl::StatusOr<ShapeOutcome> SimulateShape(ScheduleKind kind, int64_t p,
                                           int64_t v, int64_t m,
                                           const ChunkDurations& durations) {
  absl::StatusOr<PipelineScheduleIR> ir =
      BuildScheduleWithoutLineage(kind, p, v, m);
  if (!ir.ok()) return ir.status();
  return Outcome(*ir, durations);
}

std::optional<double> OrderPeakLiveMicrobatches(ScheduleKind kind, int64_t p,
                                                int64_t v, int64_t m) {
  switch (kind) {
    case ScheduleKind::kSingleStage:
      return 1.0;
    case ScheduleKind::kOneForwardOneBackward:
    case ScheduleKind::kZbH1:
      return static_cast<double>(std::min(m, p));
    case ScheduleKind::kInterleaved:
      return static_cast<double>(InterleavedFirstStagePeakChunks(p, v, m)) /
             static_cast<double>(v);
    case ScheduleKind::kGPipe:
      return static_cast<double>(m);
    case ScheduleKind::kForwardOnly:
    case ScheduleKind::kZbH2:
    case ScheduleKind::kZbV:
    case ScheduleKind::kDualPipe:
    case ScheduleKind::kDualPipeV:
      return std::nullopt;
  }
  return std::nullopt;
}

ShapeOutcome ScheduleMemo::Get(ScheduleKind kind, int64_t p, int64_t v,
                               int64_t m, const ChunkDurations& durations) {
  const Key key{kind,
                p,
                v,
                m,
                durations.forward,
                durations.backward_input,
                durations.backward_weight,
                durations.p2p_link_time,
                durations.overlapped_forward_backward};
  auto it = outcomes_.find(key);
  if (it != outcomes_.end()) return it->second;
  const Shape shape{kind, p, v, m};
  auto built = schedules_.find(shape);
  if (built == schedules_.end()) {
    if (schedule_commands_ > kMaxCommands) {
      schedules_.clear();
      schedule_commands_ = 0;
    }
    built = schedules_
                .emplace(shape, BuildScheduleWithoutLineage(kind, p, v, m))
                .first;
    if (built->second.ok()) schedule_commands_ += CommandCount(*built->second);
  }
  ++simulations_;
  ShapeOutcome out;
  out.bubble = out.peak_live_microbatches = std::nan("");
  if (built->second.ok()) {
    const absl::StatusOr<ShapeOutcome> r = Outcome(*built->second, durations);
    if (r.ok()) out = *r;
  }
  if (outcomes_.size() >= kMaxOutcomes) outcomes_.clear();
  outcomes_.emplace(key, out);
  return out;
}

}  // namespace blueprint
