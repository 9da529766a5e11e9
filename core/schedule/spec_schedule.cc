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
          [](const ZeroBubbleH1&) { return ScheduleKind::kZbH1; },
          [](const ZeroBubbleV&) { return ScheduleKind::kZbV; },
          [](const ZeroBubbleH2&) { return ScheduleKind::kZbH2; },
          [](const DualPipe&) { return ScheduleKind::kDualPipe; },
      },
      schedule);
}

std::optional<ScheduleKind> SimulatedScheduleKind(
    const PipelineSchedule& schedule) {
  // The simulated ones are those SimulatedSpecSchedule maps back.
  const ScheduleKind kind = ConcreteScheduleKind(schedule, /*training=*/true);
  if (!SimulatedSpecSchedule(kind).has_value()) return std::nullopt;
  return kind;
}

std::optional<PipelineSchedule> SimulatedSpecSchedule(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kGPipe:
      return GPipe{};
    case ScheduleKind::kDualPipeV:
      return DualPipeV{};
    case ScheduleKind::kZbH1:
      return ZeroBubbleH1{};
    case ScheduleKind::kZbV:
      return ZeroBubbleV{};
    case ScheduleKind::kZbH2:
      return ZeroBubbleH2{};
    case ScheduleKind::kDualPipe:
      return DualPipe{};
    case ScheduleKind::kSingleStage:
    case ScheduleKind::kForwardOnly:
    case ScheduleKind::kOneForwardOneBackward:
    case ScheduleKind::kInterleaved:
      return std::nullopt;
  }
  return std::nullopt;
}

std::string SpecFieldOfShapeField(const PipelineSchedule& schedule,
                                  const std::string& shape_field) {
  if (shape_field == "p") return "parallelism.pipeline.degree";
  if (shape_field == "m") return "batch.global_batch_size";
  if (shape_field == "v") {
    const bool has_field =
        std::holds_alternative<InterleavedOneForwardOneBackward>(schedule) ||
        std::holds_alternative<ForwardOnly>(schedule);
    return has_field ? "parallelism.pipeline.schedule.virtual_stages"
                     : "parallelism.pipeline.schedule";
  }
  return shape_field;
}

}  // namespace blueprint
