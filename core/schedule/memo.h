// The figures the analyses take from a simulated schedule (the bubble and
// the busiest stage's peak live microbatches of one schedule shape at given
// chunk durations), and a memo of them for the strategy search, which asks
// for the same shape and durations many times (once per data tier, per
// bound, per ZeRO stage) and would otherwise build and replay the command
// order each time.
//
// Example:
//   ScheduleMemo memo;
//   const ShapeOutcome o = memo.Get(ScheduleKind::kZbH1, 8, 1, 64, durations);
//   if (std::isnan(o.bubble)) ...  // the shape cannot be simulated
#ifndef BLUEPRINTING_CORE_SCHEDULE_MEMO_H_
#define BLUEPRINTING_CORE_SCHEDULE_MEMO_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/schedule/schedule_ir.h"
#include "core/schedule/simulate.h"

namespace blueprint {

struct ShapeOutcome {
  double bubble = 0;  // SimulationResult::bubble
  // The largest StageFigures::peak_live_microbatches over the stages.
  double peak_live_microbatches = 0;
  // The fewest overlapped F&B commands (DualPipe's) on one stage
  // (OrderFewestOverlappedPairs): with equal chunk durations every stage
  // computes the same F and B, so the busiest stage is the one that
  // overlaps the fewest pairs. 0 for the schedules without F&B.
  int64_t overlapped_pairs = 0;
};

// SimulateShape: BuildSchedule(kind, p, v, m, durations) (without lineage;
// zb_h2 and zb_v ordered for the durations) simulated with `durations` for
// every chunk. For zb_h2 and zb_v with P2P folded (p2p_link_time 0) the
// constructor's own timing (BuildTimedOrder), equal to the simulation to
// rounding (simulate_test: 1e-9 relative; the peak exactly). Its errors (a shape the constructor
// refuses, a deadlock, bad durations).
absl::StatusOr<ShapeOutcome> SimulateShape(ScheduleKind kind, int64_t p,
                                           int64_t v, int64_t m,
                                           const ChunkDurations& durations);

// SimulateShapeByPosition: the same with each model position's own
// durations (an explicit stage layout; DurationsByStageChunk's rules: one
// route), ordered for `order_durations` where the order depends on them
// (zb_h2 ordered for its busiest chunk). Never memoized: the strategy
// search builds no layouts.
absl::StatusOr<ShapeOutcome> SimulateShapeByPosition(
    ScheduleKind kind, int64_t p, int64_t v, int64_t m,
    const ChunkDurations& order_durations,
    const std::vector<ChunkDurations>& by_position);

// OrderPeakLiveMicrobatches: the busiest stage's peak live microbatches
// where the command order fixes it whatever the durations (simulate_test
// checks each against the simulation, exactly, on every shape it sweeps):
//   single_stage 1, 1f1b min(m, p) (the first stage's warm-up plus one);
//   interleaved InterleavedFirstStagePeakChunks(p, v, m) / v (Megatron-LM's
//   warm-up 2(p-1) + (v-1)N plus one, in chunks of 1/v microbatch);
//   gpipe m (every forward of a stage precedes its first backward);
//   zb_h1 min(m, p) (stage s holds at most p - s forwards awaiting their B
//   and s deferred W, and the first stage reaches 1F1B's min(m, p));
//   dualpipe_v p + 1/2 for every m >= 2p (2p + 1 chunks of half a stage);
//   dualpipe (p + 1)/2 for even p, even m >= 2p (p + 1 chunks, each one
//     of the rank's two stages: the DeepSeek-V3 report's PP + 1);
// and for the orders made for their durations, the order made for unit
// durations (the memory analysis' convention): zb_h2 min(m, 2p - 1) and
// zb_v min(m, p), their constructors' memory limits (so an upper bound at
// any durations), reached at unit durations (simulate_test: every p <= 12,
// m <= 3p + 3; every p <= 24, m <= 6p when this was written);
// nullopt for the others, which the analyses simulate. It spares the
// strategy search a simulation per shape it checks memory for.
std::optional<double> OrderPeakLiveMicrobatches(ScheduleKind kind, int64_t p,
                                                int64_t v, int64_t m);

// OrderFewestOverlappedPairs: ShapeOutcome::overlapped_pairs, which the
// command order fixes (simulate_test checks it against the built orders):
//   dualpipe_v 2m - 3p + 1 for p > 1 (stage 0: step 4's 2(m - 2p + 1) F&B
//     and step 5's p - 1), 2m - 3 for p = 1 (its first pair is lone F and
//     B), for m >= 2p;
//   dualpipe m - 3p/2 + 1 for p > 2, m - 3 for p = 2 (its first pair is the
//     middle ranks' lone F and B), for even p and m >= 2p;
//   0 for the schedules without F&B and the shapes they refuse.
// The search's step-time bound reads it.
int64_t OrderFewestOverlappedPairs(ScheduleKind kind, int64_t p, int64_t m);

class ScheduleMemo {
 public:
  // SimulateShape, each distinct (kind, p, v, m, durations) simulated once
  // (each shape built once, except zb_v, whose order each durations
  // remake); both figures NaN when it fails. Exactly SimulateShape's
  // numbers.
  ShapeOutcome Get(ScheduleKind kind, int64_t p, int64_t v, int64_t m,
                   const ChunkDurations& durations);

  int64_t simulations() const { return simulations_; }

  // Forgets the outcomes (not the shapes' command orders): the search calls
  // it per run of blocks, whose chunk durations no other run's blocks give,
  // so that the memo holds one run's outcomes rather than up to
  // kMaxOutcomes.
  void ForgetOutcomes() { outcomes_.clear(); }

 private:
  struct Shape {
    ScheduleKind kind;
    int64_t p, v, m;
    friend bool operator==(const Shape& a, const Shape& b) {
      return a.kind == b.kind && a.p == b.p && a.v == b.v && a.m == b.m;
    }
    template <typename H>
    friend H AbslHashValue(H h, const Shape& s) {
      return H::combine(std::move(h), s.kind, s.p, s.v, s.m);
    }
  };
  struct Key {
    ScheduleKind kind;
    int64_t p, v, m;
    double forward, backward_input, backward_weight, p2p_link_time,
        overlapped_forward_backward;

    friend bool operator==(const Key& a, const Key& b) {
      return a.kind == b.kind && a.p == b.p && a.v == b.v && a.m == b.m &&
             a.forward == b.forward && a.backward_input == b.backward_input &&
             a.backward_weight == b.backward_weight &&
             a.p2p_link_time == b.p2p_link_time &&
             a.overlapped_forward_backward == b.overlapped_forward_backward;
    }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.kind, k.p, k.v, k.m, k.forward,
                        k.backward_input, k.backward_weight, k.p2p_link_time,
                        k.overlapped_forward_backward);
    }
  };
  void Remember(const Key& key, const ShapeOutcome& outcome);

  // Forgotten when they reach this many outcomes or commands (memory stays
  // bounded on the largest searches; what is forgotten is made again).
  static constexpr size_t kMaxOutcomes = 1 << 16;
  static constexpr int64_t kMaxCommands = 1 << 20;

  absl::flat_hash_map<Key, ShapeOutcome> outcomes_;
  // Each shape's commands and their dependency graph, built once (the
  // status when they cannot be).
  struct Built {
    PipelineScheduleIR ir;
    ScheduleGraph graph;
  };
  static absl::StatusOr<Built> BuildShape(ScheduleKind kind, int64_t p,
                                          int64_t v, int64_t m);
  absl::flat_hash_map<Shape, absl::StatusOr<Built>> schedules_;
  int64_t schedule_commands_ = 0;
  int64_t simulations_ = 0;
};

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SCHEDULE_MEMO_H_
