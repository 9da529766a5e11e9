// Simulate: an exact replay of a PipelineScheduleIR with given chunk
// durations, to re-prove the analytic bubble (core/analysis/figures.cc
// BubbleTerms) from commands, dependencies and stream order.
//
// Semantics (README.md "Simulator"): each stage has three in-order streams,
// compute (F, B, W, FB, DataParallelReduce, OptimizerStep), send and recv.
// A command starts when the previous command of its stream has ended and
// its data dependencies are met, and runs for its duration:
//   F(mb, position j)   needs F(mb, j-1): on the same stage its end, else the
//                       end of this stage's RecvActivation of (mb, j);
//   B(mb, j)            needs F(mb, j) and B(mb, j+1) (same stage) or the
//                       RecvGradient of (mb, j);
//   W(mb, j)            needs B(mb, j);
//   FB                  needs both halves' dependencies;
//   Send*               needs its producer (F or B) and runs p2p_link_time;
//   Recv*               starts at max(previous recv's end, its send's start)
//                       and ends at max(that, its send's end): the receive
//                       is posted in order and completes when the data lands.
// Since every stream's order is fixed, the times are the longest paths of
// that DAG: the result is unique and independent of processing order. A
// cycle (an order that cannot progress) is reported as a deadlock error.
#ifndef BLUEPRINTING_CORE_SCHEDULE_SIMULATE_H_
#define BLUEPRINTING_CORE_SCHEDULE_SIMULATE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/schedule/schedule_ir.h"

namespace blueprint {

struct CommandTiming {
  double start = 0;
  double end = 0;
};

struct StageFigures {
  double compute_busy = 0;  // sum of compute-stream durations
  double idle = 0;          // makespan - compute_busy
  double start = 0;         // the stage's first command's start
  double end = 0;           // the stage's last command's end
  // Most microbatch-chunks live at once: from an F's start to its W's end,
  // or its backward's end when the backward is whole (an FB's backward half
  // is whole); forward-only: to the F's end. At equal times releases come
  // first.
  int64_t peak_live_chunks = 0;
  // peak_live_chunks / chunks_per_stage: in units of one microbatch's
  // activations of the whole stage.
  double peak_live_microbatches = 0;
};

struct SimulationResult {
  // timings[s][i]: command i of stage s.
  std::vector<std::vector<CommandTiming>> timings;
  std::vector<StageFigures> stages;
  double makespan = 0;  // the iteration time: the latest end
  double max_compute_busy = 0;
  // makespan - max_compute_busy: the time the busiest stage idles. With
  // equal stages this is the pipeline bubble of BubbleTerms.
  double bubble = 0;
};

// SpanBubble: the longest stage span (its first command's start to its
// last's end) less max_compute_busy: the bubble once the next iteration may
// start while this one drains (the zero-bubble paper's optimizer
// post-validation), which its closed forms count (ZB-H2's
// (p-1)(T_F + T_B - 2T_W)). Not printed; at most `bubble`.
double SpanBubble(const SimulationResult& result);

// Simulate: `durations` holds one entry for every chunk, or p *
// chunks_per_stage entries indexed stage * chunks_per_stage + chunk.
// Errors: InvalidArgument for an inconsistent IR (a command out of range, a
// duplicate, a missing dependency, a send without its receive; up to 20
// problems listed) or bad durations; FailedPrecondition "deadlock" naming
// the blocked head command of every stream that cannot progress.
absl::StatusOr<SimulationResult> Simulate(
    const PipelineScheduleIR& ir, const std::vector<ChunkDurations>& durations);

// DurationsByStageChunk: the durations of a schedule whose chunks differ
// by model position (an explicit stage layout: position k holds its own
// blocks), `by_position` one entry per position of the route, in
// Simulate's order (stage * chunks_per_stage + chunk). InvalidArgument
// unless the IR has one route (DualPipe's two directions visit a rank's
// chunks at different positions) and `by_position` one entry per position.
absl::StatusOr<std::vector<ChunkDurations>> DurationsByStageChunk(
    const PipelineScheduleIR& ir,
    const std::vector<ChunkDurations>& by_position);

// A schedule's commands as a dependency graph in an order that respects
// every dependency: what Simulate needs besides the durations. Building it
// checks the IR and finds a deadlock; ScheduleMemo builds it once per shape
// and replays it at each durations.
class ScheduleGraph {
 public:
  // Simulate's errors for `ir` other than the durations'.
  static absl::StatusOr<ScheduleGraph> Build(const PipelineScheduleIR& ir);

 private:
  friend absl::StatusOr<SimulationResult> Simulate(
      const PipelineScheduleIR& ir, const ScheduleGraph& graph,
      const std::vector<ChunkDurations>& durations);
  std::vector<int64_t> first_id_;         // per stage: its first command id
  std::vector<int32_t> stage_of_;         // per command id
  std::vector<int32_t> stream_previous_;  // per id, -1 for a stream's first
  std::vector<int64_t> deps_begin_;       // per id, into deps_ (CSR)
  std::vector<int32_t> deps_;             // data dependencies; a receive's
                                          // is its send
  std::vector<int32_t> order_;            // topological
};

// Simulate with `graph` = ScheduleGraph::Build(ir) (the same IR): the same
// result as Simulate(ir, durations), without rebuilding the graph.
absl::StatusOr<SimulationResult> Simulate(
    const PipelineScheduleIR& ir, const ScheduleGraph& graph,
    const std::vector<ChunkDurations>& durations);

// MinimumBubble: a lower bound on Simulate's bubble for the schedule of
// `kind` with p stages and m microbatches when every chunk takes at least
// `lower` (forward, backward_input, backward_weight; P2P folded, F&B not
// shorter than its parts). Each case is nondecreasing in the durations and
// at most what the simulation gives (simulate_test checks the bound on
// random shapes):
//   gpipe: (p-1)(F + B + W), its whole bubble (makespan (m+p-1)(F+B+W));
//   zb_h1 with m >= p: (p-1) max(F, B), below its (p-1) max(F+B-W, F, B);
//   1f1b, interleaved, zb_h2, zb_v, dualpipe_v and zb_h1 with m < p:
//   (p-1) F: every route enters stage p - 1 after p - 1 forwards upstream,
//   so its first command waits that long, and every stage has the same
//   compute;
//   dualpipe: (p/2 - 1) F, the middle stages' wait on either route;
//   single_stage and forward_only: 0.
// The strategy search bounds a mapping's step with it so that only
// mappings that can rank are simulated.
double MinimumBubble(ScheduleKind kind, int64_t p, int64_t m,
                     const ChunkDurations& lower);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SCHEDULE_SIMULATE_H_
