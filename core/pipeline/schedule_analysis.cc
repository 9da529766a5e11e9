#include "core/pipeline/schedule_analysis.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/format.h"
#include "core/base/field_errors.h"
#include "core/base/sha256.h"
#include "core/figures/figure_table.h"

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

namespace {

// SimulateIteration, with the commands' lineage strings or without them
// (the analysis pass, which keeps only the figures: the strings are most of
// a large schedule's build time and memory).
absl::StatusOr<SimulatedIteration> Simulated(const PipelineSchedule& schedule,
                                             const BlockFigures& block,
                                             const IterationAnalysis& iteration,
                                             bool with_lineage) {
  const StepShape& step = iteration.step;
  const IterationFigures& figures = iteration.figures;
  const ScheduleKind kind = ConcreteScheduleKind(schedule, step.training);
  const ChunkDurations durations = ChunkDurationsOf(block, step, figures);
  absl::StatusOr<PipelineScheduleIR> ir =
      with_lineage ? BuildSchedule(kind, step.p, step.v, step.m, durations)
                   : BuildScheduleWithoutLineage(kind, step.p, step.v, step.m,
                                                 durations);
  if (!ir.ok()) return OnSpecFields(schedule, ir.status());
  SimulatedIteration out;
  out.ir = std::move(*ir);
  out.inputs.durations = durations;
  out.inputs.analysis_bubble_time = figures.bubble_time;
  out.inputs.bubble_reduction_time = figures.bubble_reduction_time;
  out.inputs.unscheduled_bubble_time = UnscheduledBubbleTime(iteration);
  out.inputs.total_time = figures.total_time;
  out.inputs.plan_source = "plan_ir:block";
  if (durations.overlapped_forward_backward >= 0) {
    out.inputs.overlapped_source = "iteration:chunk_fb_time";
  }
  std::vector<ChunkDurations> chunk_durations = {durations};
  if (!HasExplicitLayout(step)) {
    out.inputs.forward_source = "iteration:chunk_fw_time";
    out.inputs.backward_input_source = "iteration:chunk_bw_input_time";
    out.inputs.backward_weight_source = "iteration:chunk_bw_weight_time";
    out.inputs.backward_source = "iteration:chunk_bw_time";
  } else {
    // Each chunk at its own blocks: the simulation sees the layout, so no
    // reduction is left for it to miss.
    out.inputs.position_durations =
        LayoutPositionDurations(block, step, figures);
    out.inputs.bubble_reduction_time = 0;
    out.inputs.analysis_busy_time =
        static_cast<double>(step.m * step.v) * figures.chunk_time;
    out.inputs.forward_source = "timeline:position.forward";
    out.inputs.backward_input_source = "timeline:position.backward_input";
    out.inputs.backward_weight_source = "timeline:position.backward_weight";
    out.inputs.backward_source =
        "timeline:position.backward_input+backward_weight";
    absl::StatusOr<std::vector<ChunkDurations>> by_chunk =
        DurationsByStageChunk(out.ir, out.inputs.position_durations);
    if (!by_chunk.ok()) {
      // The checker admits layouts only with one-route schedules.
      return absl::InternalError(absl::StrCat("schedule: ",
                                              by_chunk.status().message()));
    }
    chunk_durations = std::move(*by_chunk);
  }
  absl::StatusOr<SimulationResult> result =
      Simulate(out.ir, chunk_durations);
  if (!result.ok()) {
    // The constructors' orders all progress (schedule tests): a failure
    // here is a bug, not bad input.
    return absl::InternalError(absl::StrCat("schedule: simulation failed: ",
                                            result.status().message()));
  }
  out.result = std::move(*result);
  return out;
}

}  // namespace

absl::StatusOr<SimulatedIteration> SimulateIteration(
    const PipelineSchedule& schedule, const BlockFigures& block,
    const IterationAnalysis& iteration) {
  return Simulated(schedule, block, iteration, /*with_lineage=*/true);
}

absl::StatusOr<ScheduleAnalysis> SimulatePipelineSchedule::Run(
    const TypedProgram& program, const BlockFigures& block,
    const IterationAnalysis& iteration) const {
  ScheduleAnalysis out;
  absl::StatusOr<SimulatedIteration> simulated =
      Simulated(program.pipeline().schedule, block, iteration,
                /*with_lineage=*/false);
  if (!simulated.ok()) {
    if (simulated.status().code() == absl::StatusCode::kInternal) {
      return simulated.status();
    }
    out.not_simulated = std::string(simulated.status().message());
    return out;
  }
  const SimulationResult& result = simulated->result;
  out.simulated = true;
  out.simulated_total_time = SimulatedTotalTime(result, simulated->inputs);
  // Calculon's bubble reduction (uneven stages) can take the whole bubble:
  // with one block per chunk and p - 1 blocks missing, (p - 1) chunks of
  // bubble less (p - 1) chunks. The simulation sums its chunk times in
  // another order than the analysis, so the difference, 0 in exact
  // arithmetic, may round below it.
  out.simulated_bubble_time =
      std::max(0.0, result.bubble - simulated->inputs.bubble_reduction_time);
  out.makespan = result.makespan;
  for (const StageFigures& stage : result.stages) {
    out.stage_idle_times.push_back(stage.idle);
    out.stage_busy_times.push_back(stage.compute_busy);
    out.stage_peak_live_microbatches.push_back(stage.peak_live_microbatches);
  }
  std::vector<std::string> stages;
  for (size_t s = 0; s < result.stages.size(); ++s) {
    stages.push_back(absl::StrCat("timeline:stage[", s, "]"));
  }
  out.lineage.push_back(
      {"simulated_bubble_time",
       FindFigureRow("simulated_bubble_time")->formula,
       {kName, [&] {
          std::vector<std::string> sources = stages;
          sources.push_back("iteration:bubble_reduction_time");
          return sources;
        }()}});
  // Under a layout each position is priced at its own blocks, and the
  // analysis' busiest compute is replaced by the simulation's.
  const bool layout = !simulated->inputs.position_durations.empty();
  std::vector<std::string> total_sources = {"iteration:total_time",
                                            "schedule:simulated_bubble_time",
                                            "iteration:bubble_time"};
  std::vector<std::string> stage_sources = {
      "spec:parallelism.pipeline.schedule", "spec:parallelism.pipeline.degree",
      "derived:virtual_stages", "derived:microbatches"};
  if (layout) {
    total_sources.push_back("iteration:chunk_time");
    stage_sources.insert(
        stage_sources.end(),
        {"spec:parallelism.pipeline.stage_blocks", "iteration:baseblock_fw_time",
         "iteration:edgeblock_fw_time", "iteration:baseblock_bw_time",
         "iteration:edgeblock_bw_time", "iteration:chunk_fw_pp_time",
         "iteration:chunk_bw_pp_time"});
  } else {
    stage_sources.insert(stage_sources.end(),
                         {"iteration:chunk_fw_time",
                          "iteration:chunk_bw_input_time",
                          "iteration:chunk_bw_weight_time"});
  }
  out.lineage.push_back({"simulated_total_time",
                         FindFigureRow("simulated_total_time")->formula,
                         {kName, total_sources}});
  for (const std::string& stage : stages) {
    out.lineage.push_back(
        {stage.substr(stage.find(':') + 1), "", {kName, stage_sources}});
  }
  // Verified after: every figure a finite number >= 0, one stage entry per
  // physical stage (a violation is a bug, never bad input).
  std::vector<double> values = {out.simulated_bubble_time,
                                out.simulated_total_time, out.makespan};
  for (const auto* list : {&out.stage_idle_times, &out.stage_busy_times,
                           &out.stage_peak_live_microbatches}) {
    if (static_cast<int64_t>(list->size()) != iteration.step.p) {
      return absl::InternalError(absl::StrCat(
          kName, ": ", list->size(), " stage figures for p = ",
          iteration.step.p));
    }
    values.insert(values.end(), list->begin(), list->end());
  }
  for (double value : values) {
    if (!std::isfinite(value) || value < 0) {
      return absl::InternalError(absl::StrCat(
          kName, ": a figure is ", FormatDouble(value),
          ", not a finite number >= 0"));
    }
  }
  return out;
}

std::string ToText(const ScheduleAnalysis& analysis) {
  std::string out = absl::StrCat(ScheduleAnalysis::kFormat, "\n");
  if (!analysis.simulated) {
    absl::StrAppend(&out, "not_simulated ", analysis.not_simulated, "\n");
    return out;
  }
  absl::StrAppend(
      &out, "simulated_bubble_time ",
      FormatDouble(analysis.simulated_bubble_time), "\nsimulated_total_time ",
      FormatDouble(analysis.simulated_total_time), "\nmakespan ",
      FormatDouble(analysis.makespan), "\n");
  for (size_t s = 0; s < analysis.stage_idle_times.size(); ++s) {
    absl::StrAppend(
        &out, "stage ", s, " busy ", FormatDouble(analysis.stage_busy_times[s]),
        " idle ", FormatDouble(analysis.stage_idle_times[s]),
        " peak_live_microbatches ",
        FormatDouble(analysis.stage_peak_live_microbatches[s]), "\n");
  }
  for (const FigureLineage& f : analysis.lineage) {
    absl::StrAppend(&out, "lineage ", f.figure, " pass=", f.lineage.pass,
                    " from [", absl::StrJoin(f.lineage.sources, ","), "]\n");
  }
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
