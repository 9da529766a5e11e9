// The schedule table: one row per pipeline schedule constructor, holding
// every fact about a schedule that more than one place reads: its names,
// the shapes it accepts, how many chunks a stage and how many stages a rank
// holds, its traits, and the functions that build its command order, bound
// its bubble and count its live microbatches. The spec (its schedule
// variant's names, the checker's rules, the derived values), the schedule
// IR, the memo, the simulator, the analyses, the strategy search and the
// metadata all read it; adding a schedule is a row here plus its order
// builder and tests (ADDING.md).
//
// Rows are in ScheduleKind order, which is the spec's PipelineSchedule
// variant order (core/spec/spec_schedule.h checks it at compile time), so a
// lookup is an array index, as cheap as the switches it replaces.
//
// Example:
//   const ScheduleRow& row = ScheduleRowOf(ScheduleKind::kZbV);
//   row.name                   // "zb_v"
//   row.chunks_per_stage       // 2
//   row.minimum_bubble(p, m, lower_durations)
#ifndef BLUEPRINTING_CORE_SCHEDULE_SCHEDULE_TABLE_H_
#define BLUEPRINTING_CORE_SCHEDULE_SCHEDULE_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace blueprint {

// In the spec's PipelineSchedule variant order (core/spec/spec.h).
enum class ScheduleKind {
  kSingleStage,
  kOneForwardOneBackward,
  kInterleaved,
  kForwardOnly,
  kGPipe,
  kDualPipeV,
  kZbH1,
  kZbV,
  kZbH2,
  kDualPipe,
};

// schedule_ir.h.
struct PipelineScheduleIR;
struct ChunkDurations;
struct TimedOrder;

// The virtual stages (chunks of a microbatch's route per physical stage, the
// spec's v) a schedule takes: `fixed` when it has no field for them, else
// (fixed 0) the spec's virtual_stages, at least `at_least`.
struct VirtualStagesRule {
  int64_t fixed;
  int64_t at_least;
};

// Fills ir.routes, ir.route_of_microbatch and every stage's compute
// commands (F, B, W, F&B; no P2P, no lineage) for ir.p, ir.v and ir.m,
// whose shape rules hold; duration-aware orders are made for
// `order_durations`.
using OrderBuilder = absl::Status (*)(PipelineScheduleIR& ir,
                                      const ChunkDurations& order_durations);
// The compute orders and their own timing of a constructor that orders for
// the chunk durations (zero_bubble.h, v_schedule.h).
using TimedOrderBuilder = absl::StatusOr<TimedOrder> (*)(
    int64_t p, int64_t m, const ChunkDurations& durations);
// memo.h OrderPeakLiveMicrobatches' rule for one kind.
using InFlightRule = std::optional<double> (*)(int64_t p, int64_t v,
                                               int64_t m);
// simulate.h MinimumBubble's rule for one kind.
using BubbleBound = double (*)(int64_t p, int64_t m,
                               const ChunkDurations& lower);
// memo.h OrderFewestOverlappedPairs' rule for one kind (m >= 2p).
using OverlappedPairsRule = int64_t (*)(int64_t p, int64_t m);

struct ScheduleRow {
  ScheduleKind kind;
  // The IR's, the timeline's and the lineage's name ("interleaved").
  const char* name;
  // The spec JSON's type name ("interleaved_1f1b") and a one-line meaning
  // (core/spec/enums.h, the metadata and the page).
  const char* spec_name;
  const char* meaning;
  // The spec kinds that may use it; the IR has backward commands when it
  // trains (forward_only's do not). Inference on a training constructor
  // (single_stage) runs forward_only (core/spec/spec_schedule.h).
  bool trains;
  bool infers;

  //--- Shape rules (ScheduleShapeErrors; the checker maps them onto the spec)
  VirtualStagesRule virtual_stages;
  bool single_stage;          // p = 1
  // p > 1: the checker's rule for the spec kinds that may use it (not the
  // IR's: single_stage's inference runs forward_only at p = 1).
  bool needs_pipeline;
  bool even_stages;           // p even
  bool even_microbatches;     // m even
  int64_t min_microbatches_per_stage;  // m >= this * p

  //--- What a stage and a rank hold
  // Local chunks per physical stage: 0 for v, else this many (zb_v and
  // dualpipe_v fold their V, dualpipe holds both directions' stages).
  int64_t chunks_per_stage;
  // Pipeline stages per rank (dualpipe 2: stage s of one model copy and
  // p - 1 - s of the other, whose gradients it sums with the twin rank's).
  int64_t stages_per_rank;
  // Rank 0 holds the model's first and last blocks (zb_v and dualpipe_v
  // fold their V back onto it; dualpipe's rank 0 holds stage 0 of one copy
  // and stage p - 1 of the other).
  bool holds_both_ends;

  //--- Traits
  // Its bubble and in-flight microbatches come from simulating its order
  // (no closed form in Calculon); the strategy search tries it with
  // `--schedules all`. Else the analytic contract (figures.cc BubbleTerms).
  bool simulated;
  // Overlaps one microbatch's forward with another's backward (F&B).
  bool overlaps_forward_backward;
  // The analyses can model DP overlap (its windows are one stage's
  // backward per rank): not for twin stages.
  bool allows_data_overlap;

  //--- Functions (schedule_table.cc, orders.cc)
  OrderBuilder build_order;
  // Non-null when the order depends on the chunk durations.
  TimedOrderBuilder timed_order;
  InFlightRule peak_live_microbatches;
  BubbleBound minimum_bubble;
  // Non-null exactly when overlaps_forward_backward.
  OverlappedPairsRule fewest_overlapped_pairs;
};

// The rows' functions. Order builders (orders.cc):
namespace schedule_orders {
absl::Status SingleStage(PipelineScheduleIR& ir, const ChunkDurations& d);
absl::Status OneForwardOneBackward(PipelineScheduleIR& ir,
                                   const ChunkDurations& d);
absl::Status Interleaved(PipelineScheduleIR& ir, const ChunkDurations& d);
absl::Status ForwardOnly(PipelineScheduleIR& ir, const ChunkDurations& d);
absl::Status GPipe(PipelineScheduleIR& ir, const ChunkDurations& d);
absl::Status DualPipeV(PipelineScheduleIR& ir, const ChunkDurations& d);
absl::Status ZbH1(PipelineScheduleIR& ir, const ChunkDurations& d);
absl::Status ZbV(PipelineScheduleIR& ir, const ChunkDurations& d);
absl::Status ZbH2(PipelineScheduleIR& ir, const ChunkDurations& d);
absl::Status DualPipe(PipelineScheduleIR& ir, const ChunkDurations& d);
absl::StatusOr<TimedOrder> TimedZbV(int64_t p, int64_t m,
                                    const ChunkDurations& d);
absl::StatusOr<TimedOrder> TimedZbH2(int64_t p, int64_t m,
                                     const ChunkDurations& d);
}  // namespace schedule_orders

// In-flight rules, bubble bounds and F&B counts (schedule_table.cc; memo.h
// and simulate.h say what each is and why).
namespace schedule_rules {
std::optional<double> OneLive(int64_t p, int64_t v, int64_t m);
std::optional<double> OneForwardOneBackwardLive(int64_t p, int64_t v,
                                                int64_t m);
std::optional<double> InterleavedLive(int64_t p, int64_t v, int64_t m);
std::optional<double> NotFixedLive(int64_t p, int64_t v, int64_t m);
std::optional<double> GPipeLive(int64_t p, int64_t v, int64_t m);
std::optional<double> DualPipeVLive(int64_t p, int64_t v, int64_t m);
std::optional<double> ZbH2Live(int64_t p, int64_t v, int64_t m);
std::optional<double> DualPipeLive(int64_t p, int64_t v, int64_t m);

double NoBubble(int64_t p, int64_t m, const ChunkDurations& lower);
double UpstreamForwardsBubble(int64_t p, int64_t m,
                              const ChunkDurations& lower);
double GPipeBubble(int64_t p, int64_t m, const ChunkDurations& lower);
double ZbH1Bubble(int64_t p, int64_t m, const ChunkDurations& lower);
double DualPipeBubble(int64_t p, int64_t m, const ChunkDurations& lower);

int64_t DualPipeVPairs(int64_t p, int64_t m);
int64_t DualPipePairs(int64_t p, int64_t m);
}  // namespace schedule_rules

// Columns: kind, name, spec name, meaning, trains, infers; virtual stages
// {fixed, at least}, single stage, needs pipeline, even p, even m, m >= k p;
// chunks per stage, stages per rank, holds both ends; simulated, F&B
// overlap, DP overlap;
// order builder, timed order, in-flight rule, bubble bound, F&B count.
inline constexpr ScheduleRow kScheduleTable[] = {
    {ScheduleKind::kSingleStage, "single_stage", "single_stage",
     "no pipeline (p = 1)", true, true,
     {1, 1}, true, false, false, false, 0,
     0, 1, false,
     false, false, true,
     &schedule_orders::SingleStage, nullptr, &schedule_rules::OneLive,
     &schedule_rules::NoBubble, nullptr},
    {ScheduleKind::kOneForwardOneBackward, "1f1b", "1f1b",
     "one forward, one backward (p > 1, training)", true, false,
     {1, 1}, false, true, false, false, 0,
     0, 1, false,
     false, false, true,
     &schedule_orders::OneForwardOneBackward, nullptr,
     &schedule_rules::OneForwardOneBackwardLive,
     &schedule_rules::UpstreamForwardsBubble, nullptr},
    {ScheduleKind::kInterleaved, "interleaved", "interleaved_1f1b",
     "interleaved 1F1B with virtual_stages chunks per stage (training)", true,
     false,
     {0, 2}, false, true, false, false, 0,
     0, 1, false,
     false, false, true,
     &schedule_orders::Interleaved, nullptr, &schedule_rules::InterleavedLive,
     &schedule_rules::UpstreamForwardsBubble, nullptr},
    {ScheduleKind::kForwardOnly, "forward_only", "forward_only",
     "an inference pipeline of forward chunks (p > 1 or virtual_stages > 1)",
     false, true,
     {0, 1}, false, true, false, false, 0,
     0, 1, false,
     false, false, true,
     &schedule_orders::ForwardOnly, nullptr, &schedule_rules::NotFixedLive,
     &schedule_rules::NoBubble, nullptr},
    {ScheduleKind::kGPipe, "gpipe", "gpipe",
     "GPipe: all forwards, then all backwards; m microbatches in flight "
     "(p > 1, training; simulated)",
     true, false,
     {1, 1}, false, true, false, false, 0,
     0, 1, false,
     true, false, true,
     &schedule_orders::GPipe, nullptr, &schedule_rules::GPipeLive,
     &schedule_rules::GPipeBubble, nullptr},
    {ScheduleKind::kDualPipeV, "dualpipe_v", "dualpipe_v",
     "DeepSeek's DualPipeV: two chunks per stage in a V, forward and "
     "backward of two microbatches overlapped (p > 1, m >= 2p, training; "
     "simulated)",
     true, false,
     {2, 2}, false, true, false, false, 2,
     2, 1, true,
     true, true, true,
     &schedule_orders::DualPipeV, nullptr, &schedule_rules::DualPipeVLive,
     &schedule_rules::UpstreamForwardsBubble,
     &schedule_rules::DualPipeVPairs},
    {ScheduleKind::kZbH1, "zb_h1", "zb_h1",
     "zero bubble ZB-H1: 1F1B with the backward split into input and weight "
     "gradients, the weight gradients filling the cool-down; 1F1B's memory "
     "(p > 1, training; simulated)",
     true, false,
     {1, 1}, false, true, false, false, 0,
     0, 1, false,
     true, false, true,
     &schedule_orders::ZbH1, nullptr,
     &schedule_rules::OneForwardOneBackwardLive, &schedule_rules::ZbH1Bubble,
     nullptr},
    {ScheduleKind::kZbV, "zb_v", "zb_v",
     "zero bubble ZB-V: two chunks per stage in a V, the backward split, "
     "ordered for the mapping's forward, input- and weight-gradient times; "
     "1F1B's memory (p > 1, training; simulated)",
     true, false,
     {2, 2}, false, true, false, false, 0,
     2, 1, true,
     true, false, true,
     &schedule_orders::ZbV, &schedule_orders::TimedZbV,
     &schedule_rules::OneForwardOneBackwardLive,
     &schedule_rules::UpstreamForwardsBubble, nullptr},
    {ScheduleKind::kZbH2, "zb_h2", "zb_h2",
     "zero bubble ZB-H2: ZB-H1's split with more warm-up forwards, ordered "
     "for the mapping's forward, input- and weight-gradient times; up to "
     "2p - 1 microbatches in flight (p > 1, training; simulated)",
     true, false,
     {1, 1}, false, true, false, false, 0,
     0, 1, false,
     true, false, true,
     &schedule_orders::ZbH2, &schedule_orders::TimedZbH2,
     &schedule_rules::ZbH2Live, &schedule_rules::UpstreamForwardsBubble,
     nullptr},
    {ScheduleKind::kDualPipe, "dualpipe", "dualpipe",
     "DeepSeek's DualPipe: two copies of the model fed from both ends, each "
     "rank holding two stages (twice their weights and optimizer state), "
     "forward and backward of two microbatches overlapped (p even, m even, "
     "m >= 2p, training; simulated)",
     true, false,
     {1, 1}, false, true, true, true, 2,
     2, 2, true,
     true, true, false,
     &schedule_orders::DualPipe, nullptr, &schedule_rules::DualPipeLive,
     &schedule_rules::DualPipeBubble, &schedule_rules::DualPipePairs},
};

inline constexpr size_t kScheduleCount = std::size(kScheduleTable);

// The row of `kind`.
constexpr const ScheduleRow& ScheduleRowOf(ScheduleKind kind) {
  return kScheduleTable[static_cast<size_t>(kind)];
}

// The local chunks a physical stage of `kind` holds at the spec's v (the
// IR's chunks_per_stage, the command bound's factor).
constexpr int64_t ChunksPerStage(ScheduleKind kind, int64_t v) {
  const int64_t fixed = ScheduleRowOf(kind).chunks_per_stage;
  return fixed != 0 ? fixed : v;
}

// "single_stage", "1f1b", "interleaved", "forward_only", "gpipe",
// "dualpipe_v", "zb_h1", "zb_v", "zb_h2", "dualpipe".
constexpr const char* ScheduleKindName(ScheduleKind kind) {
  return ScheduleRowOf(kind).name;
}
// Whether the schedule's steady state overlaps one microbatch's forward
// with another's backward (DualPipe's F&B commands: dualpipe, dualpipe_v),
// so that each one's communication hides under the other's compute.
constexpr bool OverlapsForwardBackward(ScheduleKind kind) {
  return ScheduleRowOf(kind).overlaps_forward_backward;
}
// Whether a rank holds two pipeline stages (dualpipe: stage s of one model
// copy and stage p - 1 - s of the other), whose gradients it sums with the
// twin rank's. The analyses do not model DP overlap for it (its windows are
// one stage's backward per rank): the checker and the search refuse it.
constexpr bool HoldsTwinStages(ScheduleKind kind) {
  return ScheduleRowOf(kind).stages_per_rank == 2;
}
// Whether an explicit stage layout (stage_blocks, Megatron-LM's order:
// model position k on rank k % p) fits the schedule's route: one route
// visiting the ranks in that order. Not for zb_v and dualpipe_v (their V
// puts position k >= p on rank 2p - 1 - k) nor dualpipe (two routes, each
// rank holding two stages).
constexpr bool TakesStageLayout(ScheduleKind kind) {
  return !ScheduleRowOf(kind).holds_both_ends &&
         ScheduleRowOf(kind).stages_per_rank == 1;
}
// Whether the order depends on the chunk durations (zb_h2, zb_v: the
// reference implementations' list schedules): BuildSchedule's overloads
// with `order_durations` order them for those durations.
constexpr bool OrderDependsOnDurations(ScheduleKind kind) {
  return ScheduleRowOf(kind).timed_order != nullptr;
}

namespace schedule_table_internal {

// Names every kind once, without a default: a new ScheduleKind makes
// -Werror=switch point here, and the row count check below then asks for
// its row.
constexpr bool IsListedKind(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kSingleStage:
    case ScheduleKind::kOneForwardOneBackward:
    case ScheduleKind::kInterleaved:
    case ScheduleKind::kForwardOnly:
    case ScheduleKind::kGPipe:
    case ScheduleKind::kDualPipeV:
    case ScheduleKind::kZbH1:
    case ScheduleKind::kZbV:
    case ScheduleKind::kZbH2:
    case ScheduleKind::kDualPipe:
      return true;
  }
  return false;
}

constexpr size_t ListedKinds() {
  size_t n = 0;
  while (IsListedKind(static_cast<ScheduleKind>(n))) ++n;
  return n;
}

// Each row sits at its kind's index and its traits agree with its
// functions.
constexpr bool RowsConsistent() {
  for (size_t i = 0; i < kScheduleCount; ++i) {
    const ScheduleRow& row = kScheduleTable[i];
    if (static_cast<size_t>(row.kind) != i) return false;
    if (row.build_order == nullptr || row.peak_live_microbatches == nullptr ||
        row.minimum_bubble == nullptr) {
      return false;
    }
    if (row.overlaps_forward_backward !=
        (row.fewest_overlapped_pairs != nullptr)) {
      return false;
    }
    if (!row.trains && !row.infers) return false;
    if (row.stages_per_rank < 1 || row.stages_per_rank > 2) return false;
  }
  return true;
}

}  // namespace schedule_table_internal

static_assert(kScheduleCount == schedule_table_internal::ListedKinds(),
              "every ScheduleKind needs one row in kScheduleTable");
static_assert(schedule_table_internal::RowsConsistent(),
              "kScheduleTable: rows in ScheduleKind order, with their "
              "builder, in-flight rule and bubble bound, an F&B count "
              "exactly for the F&B schedules");

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SCHEDULE_SCHEDULE_TABLE_H_
