#include "core/schedule/timeline.h"

#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/base/format.h"

namespace blueprint {

double SimulatedTotalTime(const SimulationResult& result,
                          const TimelineInputs& inputs) {
  const double bubble =
      inputs.total_time + (result.bubble - (inputs.analysis_bubble_time +
                                            inputs.bubble_reduction_time));
  if (inputs.analysis_busy_time <= 0) return bubble;
  return bubble + (result.max_compute_busy - inputs.analysis_busy_time);
}

std::string PrintTimeline(const PipelineScheduleIR& ir,
                          const SimulationResult& result,
                          const TimelineInputs& inputs) {
  const ChunkDurations& d = inputs.durations;
  std::string out = "pipeline_timeline/1\n";
  absl::StrAppend(&out, "schedule ", ScheduleKindName(ir.kind), " p ", ir.p,
                  " v ", ir.v, " m ", ir.m, " chunks_per_stage ",
                  ir.chunks_per_stage, " training ", ir.training ? 1 : 0, "\n");
  absl::StrAppend(&out, "durations forward ", FormatDouble(d.forward),
                  " backward_input ", FormatDouble(d.backward_input),
                  " backward_weight ", FormatDouble(d.backward_weight),
                  " p2p_link_time ", FormatDouble(d.p2p_link_time));
  if (d.overlapped_forward_backward >= 0) {
    absl::StrAppend(&out, " overlapped_forward_backward ",
                    FormatDouble(d.overlapped_forward_backward));
  }
  out += "\n";
  if (!inputs.forward_source.empty()) {
    absl::StrAppend(&out, "priced_by forward ", inputs.forward_source,
                    " backward_input ", inputs.backward_input_source,
                    " backward_weight ", inputs.backward_weight_source,
                    " backward ", inputs.backward_source);
    if (!inputs.overlapped_source.empty()) {
      absl::StrAppend(&out, " overlapped_forward_backward ",
                      inputs.overlapped_source);
    }
    absl::StrAppend(&out, " plan ", inputs.plan_source, "\n");
  }
  for (size_t k = 0; k < inputs.position_durations.size(); ++k) {
    const ChunkDurations& position = inputs.position_durations[k];
    absl::StrAppend(&out, "position ", k, " forward ",
                    FormatDouble(position.forward), " backward_input ",
                    FormatDouble(position.backward_input), " backward_weight ",
                    FormatDouble(position.backward_weight), "\n");
  }
  absl::StrAppend(
      &out, "makespan ", FormatDouble(result.makespan), "\nbubble ",
      FormatDouble(result.bubble), "\nanalysis_bubble_time ",
      FormatDouble(inputs.analysis_bubble_time), "\nbubble_reduction_time ",
      FormatDouble(inputs.bubble_reduction_time),
      inputs.analysis_busy_time > 0
          ? absl::StrCat("\nanalysis_busy_time ",
                         FormatDouble(inputs.analysis_busy_time))
          : "",
      "\nunscheduled_bubble_time ",
      FormatDouble(inputs.unscheduled_bubble_time), "\ntotal_time ",
      FormatDouble(inputs.total_time), "\nsimulated_total_time ",
      FormatDouble(SimulatedTotalTime(result, inputs)), "\n");
  for (size_t s = 0; s < ir.stages.size(); ++s) {
    const StageFigures& f = result.stages[s];
    absl::StrAppend(&out, "stage ", s, " busy ", FormatDouble(f.compute_busy),
                    " idle ", FormatDouble(f.idle), " peak_live_chunks ",
                    f.peak_live_chunks, " peak_live_microbatches ",
                    FormatDouble(f.peak_live_microbatches), "\n");
    for (size_t i = 0; i < ir.stages[s].size(); ++i) {
      const Command& c = ir.stages[s][i];
      const CommandTiming& t = result.timings[s][i];
      absl::StrAppend(&out, "  ", i, " ", CommandKindName(c.kind));
      if (c.microbatch >= 0) {
        absl::StrAppend(&out, " mb ", c.microbatch, " chunk ", c.chunk);
      }
      absl::StrAppend(&out, " start ", FormatDouble(t.start), " end ",
                      FormatDouble(t.end), "\n");
    }
  }
  return out;
}

namespace {

// A command's lineage, and for a compute command the source of its
// duration and the block plan behind it (when the inputs name them).
std::string CommandLineage(const Command& c, const TimelineInputs& inputs) {
  if (inputs.forward_source.empty()) return c.lineage;
  const std::string* source = nullptr;
  switch (c.kind) {
    case CommandKind::kForward:
      source = &inputs.forward_source;
      break;
    case CommandKind::kBackward:
      source = c.defers_weight_gradient ? &inputs.backward_input_source
                                        : &inputs.backward_source;
      break;
    case CommandKind::kWeightGradient:
      source = &inputs.backward_weight_source;
      break;
    case CommandKind::kOverlappedForwardBackward:
      if (!inputs.overlapped_source.empty()) {
        source = &inputs.overlapped_source;
        break;
      }
      return absl::StrCat(c.lineage, " priced_by ", inputs.forward_source,
                          ",", inputs.backward_source, " <- ",
                          inputs.plan_source);
    case CommandKind::kSendActivation:
    case CommandKind::kRecvActivation:
    case CommandKind::kSendGradient:
    case CommandKind::kRecvGradient:
    case CommandKind::kDataParallelReduce:
    case CommandKind::kOptimizerStep:
      return c.lineage;
  }
  return absl::StrCat(c.lineage, " priced_by ", *source, " <- ",
                      inputs.plan_source);
}

}  // namespace

nlohmann::json TimelineJson(const PipelineScheduleIR& ir,
                            const SimulationResult& result,
                            const TimelineInputs& inputs) {
  const ChunkDurations& d = inputs.durations;
  nlohmann::json out = {
      {"format", "blueprinting.pipeline_timeline/1"},
      {"schedule", std::string(ScheduleKindName(ir.kind))},
      {"p", ir.p},
      {"v", ir.v},
      {"m", ir.m},
      {"training", ir.training},
      {"makespan", result.makespan},
      {"bubble", result.bubble},
      {"analysis_bubble_time", inputs.analysis_bubble_time},
      {"bubble_reduction_time", inputs.bubble_reduction_time},
      {"unscheduled_bubble_time", inputs.unscheduled_bubble_time},
      {"total_time", inputs.total_time},
      {"simulated_total_time", SimulatedTotalTime(result, inputs)},
      {"durations",
       {{"forward", d.forward},
        {"backward_input", d.backward_input},
        {"backward_weight", d.backward_weight},
        {"p2p_link_time", d.p2p_link_time}}},
  };
  if (d.overlapped_forward_backward >= 0) {
    out["durations"]["overlapped_forward_backward"] =
        d.overlapped_forward_backward;
  }
  if (inputs.analysis_busy_time > 0) {
    out["analysis_busy_time"] = inputs.analysis_busy_time;
  }
  if (!inputs.position_durations.empty()) {
    nlohmann::json positions = nlohmann::json::array();
    for (const ChunkDurations& position : inputs.position_durations) {
      positions.push_back({{"forward", position.forward},
                           {"backward_input", position.backward_input},
                           {"backward_weight", position.backward_weight}});
    }
    out["position_durations"] = std::move(positions);
  }
  nlohmann::json stages = nlohmann::json::array();
  for (size_t s = 0; s < ir.stages.size(); ++s) {
    const StageFigures& f = result.stages[s];
    nlohmann::json commands = nlohmann::json::array();
    for (size_t i = 0; i < ir.stages[s].size(); ++i) {
      const Command& c = ir.stages[s][i];
      const CommandTiming& t = result.timings[s][i];
      nlohmann::json command = {{"kind", std::string(CommandKindName(c.kind))},
                                {"start", t.start},
                                {"end", t.end},
                                {"lineage", CommandLineage(c, inputs)}};
      if (c.microbatch >= 0) {
        command["microbatch"] = c.microbatch;
        command["chunk"] = c.chunk;
      }
      commands.push_back(std::move(command));
    }
    stages.push_back({{"busy", f.compute_busy},
                      {"idle", f.idle},
                      {"peak_live_chunks", f.peak_live_chunks},
                      {"peak_live_microbatches", f.peak_live_microbatches},
                      {"commands", std::move(commands)}});
  }
  out["stages"] = std::move(stages);
  return out;
}

}  // namespace blueprint
