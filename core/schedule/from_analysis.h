// The concrete schedule of an analysed mapping: the spec's pipeline schedule
// built for its p, v and m, each chunk priced as the iteration analysis
// prices it (ChunkDurationsOf, core/analysis/figures.h; the pipeline P2P
// time is inside the chunk's edge block, as in the analytic bubble, so the
// link time is 0), then simulated. `blueprint schedule`, the golden corpus and
// the re-proof test all call this one function.
#ifndef BLUEPRINTING_CORE_SCHEDULE_FROM_ANALYSIS_H_
#define BLUEPRINTING_CORE_SCHEDULE_FROM_ANALYSIS_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/analysis/analyze.h"
#include "core/schedule/schedule_ir.h"
#include "core/schedule/simulate.h"
#include "core/schedule/spec_schedule.h"
#include "core/schedule/timeline.h"
#include "core/spec/spec.h"

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

// The golden corpus' "schedule" stage: the timeline's header and per-stage
// figures, with the full command listing (PrintTimeline) pinned by its
// SHA-256 rather than stored (it runs to hundreds of thousands of lines).
std::string TimelineSummaryText(const SimulatedIteration& simulated);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SCHEDULE_FROM_ANALYSIS_H_
