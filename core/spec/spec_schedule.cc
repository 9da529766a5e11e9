#include "core/spec/spec_schedule.h"

#include "core/spec/enums.h"

namespace blueprint {

ScheduleKind ConcreteScheduleKind(const PipelineSchedule& schedule,
                                  bool training) {
  const ScheduleKind kind = ScheduleKindOf(schedule);
  // Its IR would hold backward commands.
  if (!training && ScheduleRowOf(kind).trains) {
    return ScheduleKind::kForwardOnly;
  }
  return kind;
}

std::optional<ScheduleKind> SimulatedScheduleKind(
    const PipelineSchedule& schedule) {
  const ScheduleKind kind = ScheduleKindOf(schedule);
  if (!ScheduleRowOf(kind).simulated) return std::nullopt;
  return kind;
}

std::optional<PipelineSchedule> SimulatedSpecSchedule(ScheduleKind kind) {
  if (!ScheduleRowOf(kind).simulated) return std::nullopt;
  return enums_internal::DefaultAlternative<PipelineSchedule>(
      static_cast<size_t>(kind));
}

std::string SpecFieldOfShapeField(const PipelineSchedule& schedule,
                                  const std::string& shape_field) {
  if (shape_field == "p") return "parallelism.pipeline.degree";
  if (shape_field == "m") return "batch.global_batch_size";
  if (shape_field == "v") {
    const bool has_field =
        ScheduleRowOf(ScheduleKindOf(schedule)).virtual_stages.fixed == 0;
    return has_field ? "parallelism.pipeline.schedule.virtual_stages"
                     : "parallelism.pipeline.schedule";
  }
  return shape_field;
}

}  // namespace blueprint
