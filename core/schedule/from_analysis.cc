#include "core/schedule/from_analysis.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/field_errors.h"
#include "core/base/sha256.h"

namespace blueprint {
namespace {

// BuildSchedule's errors, on the spec's fields and prefixed "schedule: ".
absl::Status OnSpecFields(const PipelineSchedule& schedule,
                          const absl::Status& status) {
  std::vector<FieldError> errors = FieldErrorsOf(status);
  for (FieldError& error : errors) {
    error.field = SpecFieldOfShapeField(schedule, error.field);
    error.message = absl::StrCat("schedule: ", error.message);
  }
  return InvalidInputError(errors);
}

}  // namespace

double UnscheduledBubbleTime(const IterationAnalysis& iteration) {
  if (iteration.step.training) return 0;
  return iteration.figures.bubble_chunks * iteration.figures.chunk_bw_time;
}

absl::StatusOr<SimulatedIteration> SimulateIteration(
    const PipelineSchedule& schedule, const BlockFigures& block,
    const IterationAnalysis& iteration) {
  const StepShape& step = iteration.step;
  const IterationFigures& figures = iteration.figures;
  absl::StatusOr<PipelineScheduleIR> ir = BuildSchedule(
      ConcreteScheduleKind(schedule, step.training), step.p, step.v, step.m);
  if (!ir.ok()) return OnSpecFields(schedule, ir.status());
  SimulatedIteration out;
  out.ir = std::move(*ir);
  out.inputs.durations = ChunkDurationsOf(block, step, figures);
  out.inputs.analysis_bubble_time = figures.bubble_time;
  out.inputs.bubble_reduction_time = figures.bubble_reduction_time;
  out.inputs.unscheduled_bubble_time = UnscheduledBubbleTime(iteration);
  out.inputs.total_time = figures.total_time;
  absl::StatusOr<SimulationResult> result =
      Simulate(out.ir, {out.inputs.durations});
  if (!result.ok()) {
    // The constructors' orders all progress (schedule tests): a failure
    // here is a bug, not bad input.
    return absl::InternalError(absl::StrCat("schedule: simulation failed: ",
                                            result.status().message()));
  }
  out.result = std::move(*result);
  return out;
}

std::string TimelineSummaryText(const SimulatedIteration& simulated) {
  const std::string timeline =
      PrintTimeline(simulated.ir, simulated.result, simulated.inputs);
  // The header and the per-stage lines; commands are indented.
  std::string out;
  size_t begin = 0;
  while (begin < timeline.size()) {
    size_t end = timeline.find('\n', begin);
    if (end == std::string::npos) end = timeline.size() - 1;
    if (timeline[begin] != ' ') {
      out.append(timeline, begin, end - begin + 1);
    }
    begin = end + 1;
  }
  absl::StrAppend(&out, "timeline_sha256 ", Sha256Hex(timeline), "\n");
  return out;
}

}  // namespace blueprint
