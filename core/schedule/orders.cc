// The command-order builders of the schedule table's rows
// (schedule_table.h): per physical stage, the compute commands of one
// iteration in program order, and the routes microbatches follow.
// BuildSchedule (schedule_ir.cc) checks the shape first and adds the P2P
// commands and the lineage after.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/schedule/schedule_ir.h"
#include "core/schedule/schedule_table.h"
#include "core/schedule/v_schedule.h"
#include "core/schedule/zero_bubble.h"

namespace blueprint {

namespace {

// Routes: position -> (stage, chunk).
Route InterleavedRoute(int64_t p, int64_t v) {
  Route r;
  for (int64_t c = 0; c < v; ++c) {
    for (int64_t s = 0; s < p; ++s) {
      r.stage_of_position.push_back(s);
      r.chunk_of_position.push_back(c);
    }
  }
  return r;
}

// Down the ranks on chunk 0, back up on chunk 1 (ZB-V, DualPipeV).
Route VShapeRoute(int64_t p) {
  Route r;
  for (int64_t s = 0; s < p; ++s) {
    r.stage_of_position.push_back(s);
    r.chunk_of_position.push_back(0);
  }
  for (int64_t s = p - 1; s >= 0; --s) {
    r.stage_of_position.push_back(s);
    r.chunk_of_position.push_back(1);
  }
  return r;
}

// DualPipe's reverse direction: enters at the last rank, on chunk 1.
Route ReverseRoute(int64_t p) {
  Route r;
  for (int64_t s = p - 1; s >= 0; --s) {
    r.stage_of_position.push_back(s);
    r.chunk_of_position.push_back(1);
  }
  return r;
}

std::vector<Command> GPipeStage(int64_t m) {
  std::vector<Command> out;
  for (int64_t mb = 0; mb < m; ++mb) {
    out.push_back(ComputeCommand(CommandKind::kForward, mb, 0));
  }
  for (int64_t mb = 0; mb < m; ++mb) {
    out.push_back(ComputeCommand(CommandKind::kBackward, mb, 0));
  }
  return out;
}

// Forward-only (inference) with v chunks per stage: groups of p microbatches
// run through chunk 0, then chunk 1, ..., as the interleaved schedule's
// forwards (Megatron-LM's table order without backwards); v = 1 is every
// microbatch in order.
std::vector<Command> ForwardOnlyStage(int64_t p, int64_t v, int64_t m) {
  std::vector<Command> out;
  for (int64_t group = 0; group < m; group += p) {
    const int64_t group_end = std::min(group + p, m);
    for (int64_t chunk = 0; chunk < v; ++chunk) {
      for (int64_t mb = group; mb < group_end; ++mb) {
        out.push_back(ComputeCommand(CommandKind::kForward, mb, chunk));
      }
    }
  }
  return out;
}

std::vector<Command> OneForwardOneBackwardStage(int64_t p, int64_t m,
                                                int64_t s) {
  std::vector<Command> out;
  const int64_t warmup = std::min(p - s - 1, m);
  for (int64_t mb = 0; mb < warmup; ++mb) {
    out.push_back(ComputeCommand(CommandKind::kForward, mb, 0));
  }
  for (int64_t i = 0; i + warmup < m; ++i) {
    out.push_back(ComputeCommand(CommandKind::kForward, warmup + i, 0));
    out.push_back(ComputeCommand(CommandKind::kBackward, i, 0));
  }
  for (int64_t i = std::max<int64_t>(m - warmup, 0); i < m; ++i) {
    out.push_back(ComputeCommand(CommandKind::kBackward, i, 0));
  }
  return out;
}

// ZB-H1 (Qi et al. 2024, section 3), the handcrafted order of the paper's
// reference implementation: stage s runs 1F1B's p - s - 1 warm-up
// forwards, then s steps of F and B that defer their weight gradients, then
// steps of F, B and W, then steps of B and W, then the s deferred W. The
// deeper stages' B run earlier and the deferred W fill the cool-down: with
// m >= p the bubble is (p - 1) max(T_F + T_B - T_W, T_F, T_B), the paper's
// (p - 1)(T_F + T_B - T_W) when T_W <= T_F, T_B (simulate_test). At most p - s
// forwards await their B (1F1B's bound) and at most s weight gradients
// wait, so a stage holds at most p microbatches.
std::vector<Command> ZeroBubbleH1Stage(int64_t p, int64_t m, int64_t s) {
  std::vector<Command> out;
  int64_t forward = 0, backward = 0, weight = 0;
  const auto run_forward = [&] {
    out.push_back(ComputeCommand(CommandKind::kForward, forward++, 0));
  };
  const auto run_backward = [&] {
    out.push_back(ComputeCommand(CommandKind::kBackward, backward++, 0,
                                 /*defers=*/true));
  };
  const auto run_weight = [&] {
    out.push_back(ComputeCommand(CommandKind::kWeightGradient, weight++, 0));
  };
  const int64_t warmup = std::min(p - s - 1, m);
  while (forward < warmup) run_forward();
  for (int64_t i = 0; i < s && forward < m; ++i) {
    run_forward();
    run_backward();
  }
  while (forward < m) {
    run_forward();
    run_backward();
    run_weight();
  }
  while (backward < m) {
    run_backward();
    run_weight();
  }
  while (weight < m) run_weight();
  return out;
}

}  // namespace

int64_t InterleavedGroupSize(int64_t p, int64_t m) {
  if (m <= p || m % p == 0) return p;
  for (int64_t n = p + 1; n < m; ++n) {
    if (m % n == 0 || m % n >= p) return n;
  }
  return m;
}

int64_t InterleavedFirstStagePeakChunks(int64_t p, int64_t v, int64_t m) {
  return std::min(2 * (p - 1) + (v - 1) * InterleavedGroupSize(p, m) + 1,
                  m * v);
}

namespace {

// Megatron-LM's interleaved 1F1B (forward_backward_pipelining_with_
// interleaving): the k-th forward runs table[k]; the k-th backward runs
// table[k]'s microbatch on the mirrored chunk v-1-c. The table walks groups
// of N = InterleavedGroupSize(p, m) microbatches through every chunk (a
// last group may be shorter); the warm-up is 2(p-1-s) + (v-1)N forwards.
std::vector<Command> InterleavedStage(int64_t p, int64_t v, int64_t m,
                                      int64_t s) {
  std::vector<std::pair<int64_t, int64_t>> table;  // (mb, chunk)
  table.reserve(static_cast<size_t>(m * v));
  const int64_t n = InterleavedGroupSize(p, m);
  for (int64_t group = 0; group < m; group += n) {
    const int64_t group_end = std::min(group + n, m);
    for (int64_t c = 0; c < v; ++c) {
      for (int64_t mb = group; mb < group_end; ++mb) table.push_back({mb, c});
    }
  }
  const int64_t total = m * v;
  const int64_t warmup = std::min((p - s - 1) * 2 + (v - 1) * n, total);
  std::vector<Command> out;
  auto forward = [&](int64_t k) {
    out.push_back(
        ComputeCommand(CommandKind::kForward, table[k].first, table[k].second));
  };
  auto backward = [&](int64_t k) {
    out.push_back(ComputeCommand(CommandKind::kBackward, table[k].first,
                                 v - 1 - table[k].second));
  };
  for (int64_t k = 0; k < warmup; ++k) forward(k);
  for (int64_t i = 0; i + warmup < total; ++i) {
    forward(warmup + i);
    backward(i);
  }
  for (int64_t i = total - warmup; i < total; ++i) backward(i);
  return out;
}

// deepseek-ai/DualPipe dualpipe.py DualPipe.step, its eight steps replayed
// on rank r. Phase 0/1 are the rank's two modules; for the second half of
// the ranks phase 0 is the reverse direction. Direction d's microbatches are
// d*m/2 .. (d+1)*m/2-1 and run on local chunk d.
//
// DualPipeV (the repository's "cut-in-half" V-shape) runs the same steps
// with ranks = p, rank = r, chunks = m, both phases on the same microbatches
// (phase 0 = chunk 0 down the ranks, phase 1 = chunk 1 back up), and only
// the last rank as the "middle" one.
struct DualPipeShape {
  int64_t half_ranks;           // num_half_ranks (DualPipeV: pp_size)
  int64_t half_rank;            // half_rank (DualPipeV: pp_rank)
  int64_t half_chunks;          // half_num_chunks (DualPipeV: num_chunks)
  bool second_half;             // phases swap directions (DualPipeV: never)
  bool middle;                  // the first F0B1 pair is not overlapped
  int64_t first_microbatch[2];  // direction d's microbatch 0
};

std::vector<Command> DualPipeStage(const DualPipeShape& shape) {
  const int64_t half_ranks = shape.half_ranks;
  const int64_t half_rank = shape.half_rank;
  const int64_t half_chunks = shape.half_chunks;
  const bool second_half = shape.second_half;
  const bool middle = shape.middle;
  // The repository's step-4 count: half_num_chunks - num_ranks + half_rank
  // + 1 (DualPipeV: num_chunks - 2 * pp_size + pp_rank + 1).
  const int64_t ranks = 2 * half_ranks;
  int64_t next_forward[2] = {0, 0};
  int64_t next_backward[2] = {0, 0};
  std::deque<std::pair<int64_t, int64_t>> pending_weights;  // (mb, chunk)
  std::vector<Command> out;
  auto direction = [&](int phase) {
    return static_cast<int64_t>(phase ^ (second_half ? 1 : 0));
  };
  auto forward = [&](int phase) {
    const int64_t d = direction(phase);
    out.push_back(ComputeCommand(CommandKind::kForward,
                                 shape.first_microbatch[d] + next_forward[d]++,
                                 d));
  };
  auto backward = [&](int phase, bool zero_bubble) {
    const int64_t d = direction(phase);
    const int64_t mb = shape.first_microbatch[d] + next_backward[d]++;
    out.push_back(ComputeCommand(CommandKind::kBackward, mb, d, zero_bubble));
    if (zero_bubble) pending_weights.push_back({mb, d});
  };
  auto weight = [&]() {
    // The repository's WeightGradStore is FIFO.
    if (pending_weights.empty()) return;
    out.push_back(ComputeCommand(CommandKind::kWeightGradient,
                                 pending_weights.front().first,
                                 pending_weights.front().second));
    pending_weights.pop_front();
  };
  auto forward_backward = [&](int phase0, int phase1) {
    const int64_t d0 = direction(phase0);
    const int64_t d1 = direction(phase1);
    Command c =
        ComputeCommand(CommandKind::kOverlappedForwardBackward,
                       shape.first_microbatch[d0] + next_forward[d0]++, d0);
    c.backward_microbatch = shape.first_microbatch[d1] + next_backward[d1]++;
    c.backward_chunk = d1;
    out.push_back(c);
  };
  for (int64_t i = 0; i < (half_ranks - half_rank - 1) * 2; ++i) forward(0);
  for (int64_t i = 0; i < half_rank + 1; ++i) {
    forward(0);
    forward(1);
  }
  for (int64_t i = 0; i < half_ranks - half_rank - 1; ++i) {
    backward(1, true);
    weight();
    forward(1);
  }
  for (int64_t i = 0; i < half_chunks - ranks + half_rank + 1; ++i) {
    if (i == 0 && middle) {
      // The repository does not overlap these two on the middle ranks.
      forward(0);
      backward(1, false);
    } else {
      forward_backward(0, 1);
    }
    forward_backward(1, 0);
  }
  for (int64_t i = 0; i < half_ranks - half_rank - 1; ++i) {
    backward(1, false);
    forward_backward(1, 0);
  }
  const int64_t step_6 = half_rank + 1;
  bool zero_bubble = false;
  for (int64_t i = 0; i < step_6; ++i) {
    if (i == step_6 / 2 && half_rank % 2 == 1) zero_bubble = true;
    backward(1, zero_bubble);
    if (i == step_6 / 2 && half_rank % 2 == 0) zero_bubble = true;
    backward(0, zero_bubble);
  }
  for (int64_t i = 0; i < half_ranks - half_rank - 1; ++i) {
    weight();
    backward(0, true);
  }
  for (int64_t i = 0; i < half_rank + 1; ++i) weight();
  return out;
}
}  // namespace

// The rows' builders: the route(s), then each stage's order.
namespace schedule_orders {
namespace {

// A duration-aware order (zb_h2, zb_v): the timed order's stages.
absl::Status FromTimedOrder(PipelineScheduleIR& ir,
                            absl::StatusOr<TimedOrder> order) {
  if (!order.ok()) return order.status();
  ir.stages = std::move(order->stages);
  return absl::OkStatus();
}

}  // namespace

absl::Status SingleStage(PipelineScheduleIR& ir, const ChunkDurations&) {
  ir.routes.push_back(InterleavedRoute(1, 1));
  ir.stages[0] = OneForwardOneBackwardStage(1, ir.m, 0);
  return absl::OkStatus();
}

absl::Status OneForwardOneBackward(PipelineScheduleIR& ir,
                                   const ChunkDurations&) {
  ir.routes.push_back(InterleavedRoute(ir.p, 1));
  for (int64_t s = 0; s < ir.p; ++s) {
    ir.stages[s] = OneForwardOneBackwardStage(ir.p, ir.m, s);
  }
  return absl::OkStatus();
}

absl::Status Interleaved(PipelineScheduleIR& ir, const ChunkDurations&) {
  ir.routes.push_back(InterleavedRoute(ir.p, ir.v));
  for (int64_t s = 0; s < ir.p; ++s) {
    ir.stages[s] = InterleavedStage(ir.p, ir.v, ir.m, s);
  }
  return absl::OkStatus();
}

absl::Status ForwardOnly(PipelineScheduleIR& ir, const ChunkDurations&) {
  ir.routes.push_back(InterleavedRoute(ir.p, ir.v));
  for (int64_t s = 0; s < ir.p; ++s) {
    ir.stages[s] = ForwardOnlyStage(ir.p, ir.v, ir.m);
  }
  return absl::OkStatus();
}

absl::Status GPipe(PipelineScheduleIR& ir, const ChunkDurations&) {
  ir.routes.push_back(InterleavedRoute(ir.p, 1));
  for (int64_t s = 0; s < ir.p; ++s) ir.stages[s] = GPipeStage(ir.m);
  return absl::OkStatus();
}

absl::Status DualPipeV(PipelineScheduleIR& ir, const ChunkDurations&) {
  const int64_t p = ir.p;
  ir.routes.push_back(VShapeRoute(p));
  for (int64_t s = 0; s < p; ++s) {
    DualPipeShape shape;
    shape.half_ranks = p;
    shape.half_rank = s;
    shape.half_chunks = ir.m;
    shape.second_half = false;
    shape.middle = s == p - 1;
    shape.first_microbatch[0] = 0;
    shape.first_microbatch[1] = 0;
    ir.stages[s] = DualPipeStage(shape);
  }
  return absl::OkStatus();
}

absl::Status ZbH1(PipelineScheduleIR& ir, const ChunkDurations&) {
  ir.routes.push_back(InterleavedRoute(ir.p, 1));
  for (int64_t s = 0; s < ir.p; ++s) {
    ir.stages[s] = ZeroBubbleH1Stage(ir.p, ir.m, s);
  }
  return absl::OkStatus();
}

absl::Status ZbV(PipelineScheduleIR& ir, const ChunkDurations& d) {
  ir.routes.push_back(VShapeRoute(ir.p));
  return FromTimedOrder(ir, TimedZbV(ir.p, ir.m, d));
}

absl::Status ZbH2(PipelineScheduleIR& ir, const ChunkDurations& d) {
  ir.routes.push_back(InterleavedRoute(ir.p, 1));
  return FromTimedOrder(ir, TimedZbH2(ir.p, ir.m, d));
}

absl::Status DualPipe(PipelineScheduleIR& ir, const ChunkDurations&) {
  const int64_t p = ir.p;
  const int64_t m = ir.m;
  ir.routes.push_back(InterleavedRoute(p, 1));
  ir.routes.push_back(ReverseRoute(p));
  for (int64_t mb = m / 2; mb < m; ++mb) ir.route_of_microbatch[mb] = 1;
  for (int64_t s = 0; s < p; ++s) {
    DualPipeShape shape;
    shape.half_ranks = p / 2;
    shape.half_rank = std::min(s, p - 1 - s);
    shape.half_chunks = m / 2;
    shape.second_half = s >= p / 2;
    shape.middle = s == p / 2 - 1 || s == p / 2;
    shape.first_microbatch[0] = 0;
    shape.first_microbatch[1] = m / 2;
    ir.stages[s] = DualPipeStage(shape);
  }
  return absl::OkStatus();
}

absl::StatusOr<TimedOrder> TimedZbV(int64_t p, int64_t m,
                                    const ChunkDurations& d) {
  return VShapeZeroBubbleStages(p, m, d);
}

absl::StatusOr<TimedOrder> TimedZbH2(int64_t p, int64_t m,
                                     const ChunkDurations& d) {
  return ZeroBubbleH2Stages(p, m, d);
}

}  // namespace schedule_orders

}  // namespace blueprint
