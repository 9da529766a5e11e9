// The schedule table's row of a spec's pipeline.schedule: which
// constructor builds it (core/schedule/schedule_table.h), whether its time
// comes from the simulation (the schedules with no closed form in Calculon)
// or from the analytic contract that the simulation re-proves, and which
// spec field a shape rule's error is about. The compile-time checks here tie
// each PipelineSchedule alternative to the row at its variant index.
#ifndef BLUEPRINTING_CORE_SPEC_SPEC_SCHEDULE_H_
#define BLUEPRINTING_CORE_SPEC_SPEC_SCHEDULE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "core/schedule/schedule_table.h"
#include "core/spec/spec.h"

namespace blueprint {

namespace spec_schedule_internal {
template <size_t... I>
constexpr bool AlternativesNameTheirRows(std::index_sequence<I...>) {
  return ((std::variant_alternative_t<I, PipelineSchedule>::kKind ==
           static_cast<ScheduleKind>(I)) &&
          ...);
}
}  // namespace spec_schedule_internal

static_assert(std::variant_size_v<PipelineSchedule> == kScheduleCount,
              "every PipelineSchedule alternative needs one schedule table "
              "row and every row one alternative");
static_assert(spec_schedule_internal::AlternativesNameTheirRows(
                  std::make_index_sequence<kScheduleCount>()),
              "PipelineSchedule's alternatives must be in ScheduleKind "
              "order, each naming its own kind");

// The table kind of the alternative `schedule` holds.
inline ScheduleKind ScheduleKindOf(const PipelineSchedule& schedule) {
  return static_cast<ScheduleKind>(schedule.index());
}

// The constructor of a spec schedule: a training constructor run for
// inference (single_stage) is forward_only with the same p.
ScheduleKind ConcreteScheduleKind(const PipelineSchedule& schedule,
                                  bool training);

// The constructor of a schedule whose bubble and in-flight microbatches the
// analyses take from the simulation (the table's simulated rows: gpipe,
// dualpipe, dualpipe_v, zb_h1, zb_h2, zb_v); nullopt for the analytic ones
// (single_stage, 1f1b, interleaved_1f1b, forward_only).
std::optional<ScheduleKind> SimulatedScheduleKind(
    const PipelineSchedule& schedule);

// The spec schedule of a simulated constructor (SimulatedScheduleKind's
// inverse, its fields at their defaults); nullopt for an analytic one.
std::optional<PipelineSchedule> SimulatedSpecSchedule(ScheduleKind kind);

// The spec field behind a shape field ("p", "v", "m") of BuildSchedule's
// and ScheduleShapeErrors' errors: the pipeline degree; the schedule's
// virtual_stages where it has that field, else the schedule (dualpipe_v's
// two chunks); the global batch size, which sets m.
std::string SpecFieldOfShapeField(const PipelineSchedule& schedule,
                                  const std::string& shape_field);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_SPEC_SCHEDULE_H_
