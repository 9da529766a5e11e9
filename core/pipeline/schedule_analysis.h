// The concrete schedule of an analysed mapping: the spec's pipeline schedule
// built for its p, v and m, each chunk priced as the iteration analysis
// prices it (ChunkDurationsOf, core/analysis/figures.h; the pipeline P2P
// time is inside the chunk's edge block, as in the analytic bubble, so the
// link time is 0), then simulated. `blueprint schedule`, the golden corpus and
// the re-proof test all call this one function; the pass
// SimulatePipelineSchedule keeps the figures `blueprint analyze` reports.
#ifndef BLUEPRINTING_CORE_PIPELINE_SCHEDULE_ANALYSIS_H_
#define BLUEPRINTING_CORE_PIPELINE_SCHEDULE_ANALYSIS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/analysis/analyze.h"
#include "core/plan/plan_ir.h"
#include "core/schedule/schedule_ir.h"
#include "core/schedule/simulate.h"
#include "core/schedule/timeline.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "core/spec/spec_schedule.h"

namespace blueprint {

struct SimulatedIteration {
  PipelineScheduleIR ir;
  SimulationResult result;
  TimelineInputs inputs;
};

// UnscheduledBubbleTime: the part of the analytic bubble no command has.
// BubbleTerms counts every bubble chunk at chunk_time = chunk_fw_time +
// chunk_bw_time; in inference chunk_bw_time is the latency of a 0-byte
// backward P2P send (Calculon's quirk, MODEL.md section 6.4), which a
// forward-only schedule never issues: bubble_chunks * chunk_bw_time, 0 in
// training.
double UnscheduledBubbleTime(const IterationAnalysis& iteration);

// SimulateIteration: errors are the schedule constructor's (a shape over
// its size limits, or an interleaved order with a short last group that
// cannot progress), prefixed "schedule: ".
absl::StatusOr<SimulatedIteration> SimulateIteration(
    const PipelineSchedule& schedule, const BlockFigures& block,
    const IterationAnalysis& iteration);

// The scheduler's figures of an analysed mapping (PipelineResult::schedule;
// the report's simulated_bubble_time, simulated_total_time and "schedule"
// object), with the lineage of each.
struct ScheduleAnalysis {
  static constexpr const char* kFormat = "blueprinting.schedule_analysis/1";
  // False when the shape is beyond the scheduler's size limits
  // (schedule_ir.h kMaxMicrobatchChunkSlots, ...): `not_simulated` says
  // which, and the report has no simulated figures. Every spec schedule
  // within the limits is simulated.
  bool simulated = false;
  std::string not_simulated;
  // The simulated bubble less the uneven-layout reduction the analysis
  // subtracts (the simulated chunks are equal): equal to bubble_time for
  // single_stage, 1f1b and interleaved 1f1b with p | m (and the simulated
  // schedules, whose bubble_time is this simulation's); interleaved with p
  // not dividing m > p differs by reproof.h InterleavedLeftoverDifference.
  // In inference, minus the unscheduled bubble (UnscheduledBubbleTime).
  double simulated_bubble_time = 0;
  // total_time with bubble_time replaced by simulated_bubble_time
  // (timeline.h SimulatedTotalTime).
  double simulated_total_time = 0;
  // Per physical stage of the timeline: makespan - compute busy time, and
  // the most microbatches' activations live at once.
  std::vector<double> stage_idle_times;
  std::vector<double> stage_busy_times;
  std::vector<double> stage_peak_live_microbatches;
  double makespan = 0;
  // One per figure: simulated_bubble_time, simulated_total_time, then the
  // timeline's stages as "timeline:stage[s]".
  std::vector<FigureLineage> lineage;
};

// The pass: simulates the program's schedule with the iteration analysis'
// chunk durations. Errors only for a simulation that fails (a bug, not bad
// input); a shape the constructors refuse is `simulated = false`.
class SimulatePipelineSchedule {
 public:
  static constexpr const char* kName = "SimulatePipelineSchedule";
  const char* name() const { return kName; }
  absl::StatusOr<ScheduleAnalysis> Run(const TypedProgram& program,
                                       const BlockFigures& block,
                                       const IterationAnalysis& iteration) const;
};

// Canonical text of the analysis (the "schedule_analysis" digest stage).
std::string ToText(const ScheduleAnalysis& analysis);

// The golden corpus' "schedule" stage: the timeline's header and per-stage
// figures, with the full command listing (PrintTimeline) pinned by its
// SHA-256 rather than stored (it runs to hundreds of thousands of lines).
std::string TimelineSummaryText(const SimulatedIteration& simulated);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_PIPELINE_SCHEDULE_ANALYSIS_H_
