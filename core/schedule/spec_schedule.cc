#include "core/schedule/spec_schedule.h"

#include <variant>

#include "core/base/status_macros.h"

namespace blueprint {

ScheduleKind ConcreteScheduleKind(const PipelineSchedule& schedule,
                                  bool training) {
  return std::visit(
      Overloaded{
          [&](const SingleStage&) {
            return training ? ScheduleKind::kSingleStage
                            : ScheduleKind::kForwardOnly;
          },
          [](const OneForwardOneBackward&) {
            return ScheduleKind::kOneForwardOneBackward;
          },
          [](const InterleavedOneForwardOneBackward&) {
            return ScheduleKind::kInterleaved;
          },
          [](const ForwardOnly&) { return ScheduleKind::kForwardOnly; },
          [](const GPipe&) { return ScheduleKind::kGPipe; },
          [](const DualPipeV&) { return ScheduleKind::kDualPipeV; },
      },
      schedule);
}

std::optional<ScheduleKind> SimulatedScheduleKind(
    const PipelineSchedule& schedule) {
  const bool simulated = std::holds_alternative<GPipe>(schedule) ||
                         std::holds_alternative<DualPipeV>(schedule);
  if (!simulated) return std::nullopt;
  return ConcreteScheduleKind(schedule, /*training=*/true);
}

}  // namespace blueprint
