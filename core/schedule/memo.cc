#include "core/schedule/memo.h"

#include <algorithm>
#include <cmath>

namespace blueprint {

namespace {

absl::StatusOr<ShapeOutcome> Outcome(
    const PipelineScheduleIR& ir, const ScheduleGraph& graph,
    const std::vector<ChunkDurations>& durations) {
  absl::StatusOr<SimulationResult> r = Simulate(ir, graph, durations);
  if (!r.ok()) return r.status();
  ShapeOutcome out;
  out.bubble = r->bubble;
  for (const StageFigures& stage : r->stages) {
    out.peak_live_microbatches =
        std::max(out.peak_live_microbatches, stage.peak_live_microbatches);
  }
  out.overlapped_pairs = OrderFewestOverlappedPairs(ir.kind, ir.p, ir.m);
  return out;
}

}  // namespace

absl::StatusOr<ShapeOutcome> SimulateShape(ScheduleKind kind, int64_t p,
                                           int64_t v, int64_t m,
                                           const ChunkDurations& durations) {
  if (OrderDependsOnDurations(kind) && durations.p2p_link_time == 0) {
    // The constructor's own timing is the simulation's (P2P folded):
    // spare the IR and its replay.
    absl::StatusOr<TimedOrder> order = BuildTimedOrder(kind, p, v, m, durations);
    if (!order.ok()) return order.status();
    ShapeOutcome out;
    out.bubble = order->makespan - order->max_compute_busy;
    out.peak_live_microbatches = static_cast<double>(order->peak_live_chunks) /
                                 static_cast<double>(v);
    return out;
  }
  absl::StatusOr<PipelineScheduleIR> ir =
      BuildScheduleWithoutLineage(kind, p, v, m, durations);
  if (!ir.ok()) return ir.status();
  absl::StatusOr<ScheduleGraph> graph = ScheduleGraph::Build(*ir);
  if (!graph.ok()) return graph.status();
  return Outcome(*ir, *graph, {durations});
}

absl::StatusOr<ShapeOutcome> SimulateShapeByPosition(
    ScheduleKind kind, int64_t p, int64_t v, int64_t m,
    const ChunkDurations& order_durations,
    const std::vector<ChunkDurations>& by_position) {
  absl::StatusOr<PipelineScheduleIR> ir =
      BuildScheduleWithoutLineage(kind, p, v, m, order_durations);
  if (!ir.ok()) return ir.status();
  absl::StatusOr<std::vector<ChunkDurations>> durations =
      DurationsByStageChunk(*ir, by_position);
  if (!durations.ok()) return durations.status();
  absl::StatusOr<ScheduleGraph> graph = ScheduleGraph::Build(*ir);
  if (!graph.ok()) return graph.status();
  return Outcome(*ir, *graph, *durations);
}

std::optional<double> OrderPeakLiveMicrobatches(ScheduleKind kind, int64_t p,
                                                int64_t v, int64_t m) {
  return ScheduleRowOf(kind).peak_live_microbatches(p, v, m);
}

int64_t OrderFewestOverlappedPairs(ScheduleKind kind, int64_t p, int64_t m) {
  const OverlappedPairsRule pairs =
      ScheduleRowOf(kind).fewest_overlapped_pairs;
  if (pairs == nullptr || p < 1 || m < 2 * p) return 0;
  return pairs(p, m);
}

absl::StatusOr<ScheduleMemo::Built> ScheduleMemo::BuildShape(
    ScheduleKind kind, int64_t p, int64_t v, int64_t m) {
  absl::StatusOr<PipelineScheduleIR> ir =
      BuildScheduleWithoutLineage(kind, p, v, m, UnitSplitDurations());
  if (!ir.ok()) return ir.status();
  absl::StatusOr<ScheduleGraph> graph = ScheduleGraph::Build(*ir);
  if (!graph.ok()) return graph.status();
  return Built{*std::move(ir), *std::move(graph)};
}

ShapeOutcome ScheduleMemo::Get(ScheduleKind kind, int64_t p, int64_t v,
                               int64_t m, const ChunkDurations& durations) {
  const Key key{kind,
                p,
                v,
                m,
                durations.forward,
                durations.backward_input,
                durations.backward_weight,
                durations.p2p_link_time,
                durations.overlapped_forward_backward};
  auto it = outcomes_.find(key);
  if (it != outcomes_.end()) return it->second;
  ++simulations_;
  ShapeOutcome out;
  out.bubble = out.peak_live_microbatches = std::nan("");
  if (OrderDependsOnDurations(kind)) {
    // Its order is made for these durations: nothing to share.
    const absl::StatusOr<ShapeOutcome> r =
        SimulateShape(kind, p, v, m, durations);
    if (r.ok()) out = *r;
    Remember(key, out);
    return out;
  }
  const Shape shape{kind, p, v, m};
  auto built = schedules_.find(shape);
  if (built == schedules_.end()) {
    if (schedule_commands_ > kMaxCommands) {
      schedules_.clear();
      schedule_commands_ = 0;
    }
    built = schedules_.emplace(shape, BuildShape(kind, p, v, m)).first;
    if (built->second.ok()) {
      schedule_commands_ += CommandCount(built->second->ir);
    }
  }
  if (built->second.ok()) {
    const absl::StatusOr<ShapeOutcome> r =
        Outcome(built->second->ir, built->second->graph, {durations});
    if (r.ok()) out = *r;
  }
  Remember(key, out);
  return out;
}

void ScheduleMemo::Remember(const Key& key, const ShapeOutcome& outcome) {
  if (outcomes_.size() >= kMaxOutcomes) outcomes_.clear();
  outcomes_.emplace(key, outcome);
}

}  // namespace blueprint
