// The concrete schedule of a spec's pipeline.schedule: which constructor
// builds it, and whether its time comes from the simulation (the schedules
// with no closed form in Calculon) or from the analytic contract that the
// simulation re-proves.
#ifndef BLUEPRINTING_CORE_SCHEDULE_SPEC_SCHEDULE_H_
#define BLUEPRINTING_CORE_SCHEDULE_SPEC_SCHEDULE_H_

#include <optional>
#include <string>

#include "core/schedule/schedule_ir.h"
#include "core/spec/spec.h"

namespace blueprint {

// The constructor of a spec schedule: single_stage trains as one stage and
// infers as forward_only with p = 1.
ScheduleKind ConcreteScheduleKind(const PipelineSchedule& schedule,
                                  bool training);

// The constructor of a schedule whose bubble and in-flight microbatches the
// analyses take from the simulation (gpipe, dualpipe, dualpipe_v, zb_h1,
// zb_h2, zb_v); nullopt for
// the analytic ones (single_stage, 1f1b, interleaved_1f1b, forward_only).
std::optional<ScheduleKind> SimulatedScheduleKind(
    const PipelineSchedule& schedule);

// The spec schedule of a simulated constructor (SimulatedScheduleKind's
// inverse); nullopt for a constructor the spec does not offer.
std::optional<PipelineSchedule> SimulatedSpecSchedule(ScheduleKind kind);

// The spec field behind a shape field ("p", "v", "m") of BuildSchedule's
// and ScheduleShapeErrors' errors: the pipeline degree; the schedule's
// virtual_stages where it has that field, else the schedule (dualpipe_v's
// two chunks); the global batch size, which sets m.
std::string SpecFieldOfShapeField(const PipelineSchedule& schedule,
                                  const std::string& shape_field);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SCHEDULE_SPEC_SCHEDULE_H_
