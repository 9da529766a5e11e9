// The timeline of a simulated schedule, as the `blueprint schedule` command
// prints it: canonical text (digested like every stage's output) and JSON
// (the page's pipeline chart draws it). Both list every command of every
// stage in program order with its simulated start and end.
#ifndef BLUEPRINTING_CORE_SCHEDULE_TIMELINE_H_
#define BLUEPRINTING_CORE_SCHEDULE_TIMELINE_H_

#include <string>
#include <vector>

#include "core/schedule/schedule_ir.h"
#include "core/schedule/simulate.h"
#include "nlohmann/json.hpp"

namespace blueprint {

// What a timeline is priced with, printed in its header.
struct TimelineInputs {
  // Every chunk's durations; under an explicit stage layout the busiest
  // chunk's, and position_durations holds each model position's (one per
  // stage_blocks entry: the durations Simulate is given, by position).
  ChunkDurations durations;
  std::vector<ChunkDurations> position_durations;
  // The iteration analysis' bubble_time and the uneven-layout reduction it
  // subtracts, which the simulation's equal chunks do not see (0 when
  // position_durations give each chunk its own blocks). For
  // single_stage, 1f1b, interleaved_1f1b and forward_only it is the analytic
  // bubble the simulation re-proves; gpipe and dualpipe_v take it from this
  // same simulation.
  double analysis_bubble_time = 0;
  double bubble_reduction_time = 0;
  // What the analytic bubble holds that no command of the schedule does
  // (core/pipeline/schedule_analysis.h UnscheduledBubbleTime): the
  // simulation re-proves analysis_bubble_time + bubble_reduction_time -
  // unscheduled_bubble_time.
  double unscheduled_bubble_time = 0;
  // Under an explicit layout (position_durations given): the busiest
  // stage's chunk compute as the analysis prices it (m * v * chunk_time,
  // the busiest rank's chunks at their mean rounded up), which the
  // simulation's busiest stage may undercut; 0 otherwise (the simulated
  // chunks are the analysis' own).
  double analysis_busy_time = 0;
  // The analysis' whole step (total_time): the pipeline plus what lies
  // outside it (DP communication, the optimizer step, ...).
  double total_time = 0;
  // What priced each duration (core/pipeline/schedule_analysis.h
  // SimulateIteration: the iteration analysis' chunk figures, which the
  // plan's block figures price); empty when the durations were given
  // directly. A compute command's lineage in TimelineJson ends with its
  // duration's source.
  std::string forward_source;         // "iteration:chunk_fw_time"
  std::string backward_input_source;  // "iteration:chunk_bw_input_time"
  std::string backward_weight_source;
  std::string backward_source;  // a whole backward: "iteration:chunk_bw_time"
  // F&B, when durations.overlapped_forward_backward is set:
  // "iteration:chunk_fb_time".
  std::string overlapped_source;
  std::string plan_source;      // the block plan: "plan_ir:block"
};

// total_time with the analytic bubble (analysis_bubble_time +
// bubble_reduction_time: with equal simulated chunks the simulation has no
// uneven-layout reduction) replaced by the simulated one, and under a
// layout the analysis' busiest compute (analysis_busy_time) by the
// simulation's. Equal to total_time wherever the simulation re-proves the
// bubble.
double SimulatedTotalTime(const SimulationResult& result,
                          const TimelineInputs& inputs);

// PrintTimeline: "pipeline_timeline/1", the schedule's shape, its inputs
// (and, when given, a "priced_by" line naming each duration's source, and
// one "position" line per model position under a layout),
// the pipeline's makespan (forward and backward passes only), the simulated
// and analytic bubble, total_time and simulated_total_time, then per stage its
// figures and one line per command: index, kind, microbatch and chunk (where it
// has them), start, end. Doubles print shortest round-trip
// (core/base/format.h).
std::string PrintTimeline(const PipelineScheduleIR& ir,
                          const SimulationResult& result,
                          const TimelineInputs& inputs);

// TimelineJson: the same as
//   {"format": "blueprinting.pipeline_timeline/1", "schedule", "p", "v",
//    "m", "training", "makespan", "bubble", "analysis_bubble_time",
//    "bubble_reduction_time", "unscheduled_bubble_time", "total_time",
//    "simulated_total_time", "durations": {...}, "position_durations":
//    [{...}] (under a layout only), "stages": [{"busy", "idle",
//    "peak_live_chunks",
//                "peak_live_microbatches",
//                "commands": [{"kind": "F"|"B"|"W"|"FB"|..., "microbatch",
//                              "chunk", "start", "end", "lineage"}]}]}
// with "microbatch" and "chunk" omitted where a command has none.
nlohmann::json TimelineJson(const PipelineScheduleIR& ir,
                            const SimulationResult& result,
                            const TimelineInputs& inputs);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SCHEDULE_TIMELINE_H_
