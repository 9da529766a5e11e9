#include "core/schedule/schedule_ir.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/base/field_errors.h"
#include "core/base/format.h"
#include "core/schedule/simulate.h"     // the interleaved leftover check
#include "core/schedule/v_schedule.h"
#include "core/schedule/zero_bubble.h"

namespace blueprint {

absl::string_view ScheduleKindName(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kSingleStage:
      return "single_stage";
    case ScheduleKind::kForwardOnly:
      return "forward_only";
    case ScheduleKind::kGPipe:
      return "gpipe";
    case ScheduleKind::kOneForwardOneBackward:
      return "1f1b";
    case ScheduleKind::kInterleaved:
      return "interleaved";
    case ScheduleKind::kZbH1:
      return "zb_h1";
    case ScheduleKind::kZbH2:
      return "zb_h2";
    case ScheduleKind::kZbV:
      return "zb_v";
    case ScheduleKind::kDualPipe:
      return "dualpipe";
    case ScheduleKind::kDualPipeV:
      return "dualpipe_v";
  }
  return "?";
}

absl::string_view CommandKindName(CommandKind kind) {
  switch (kind) {
    case CommandKind::kForward:
      return "F";
    case CommandKind::kBackward:
      return "B";
    case CommandKind::kWeightGradient:
      return "W";
    case CommandKind::kOverlappedForwardBackward:
      return "FB";
    case CommandKind::kSendActivation:
      return "SendActivation";
    case CommandKind::kRecvActivation:
      return "RecvActivation";
    case CommandKind::kSendGradient:
      return "SendGradient";
    case CommandKind::kRecvGradient:
      return "RecvGradient";
    case CommandKind::kDataParallelReduce:
      return "DataParallelReduce";
    case CommandKind::kOptimizerStep:
      return "OptimizerStep";
  }
  return "?";
}

StreamKind StreamOf(CommandKind kind) {
  switch (kind) {
    case CommandKind::kForward:
    case CommandKind::kBackward:
    case CommandKind::kWeightGradient:
    case CommandKind::kOverlappedForwardBackward:
    case CommandKind::kDataParallelReduce:
    case CommandKind::kOptimizerStep:
      return StreamKind::kCompute;
    case CommandKind::kSendActivation:
    case CommandKind::kSendGradient:
      return StreamKind::kSend;
    case CommandKind::kRecvActivation:
    case CommandKind::kRecvGradient:
      return StreamKind::kRecv;
  }
  return StreamKind::kCompute;
}

int64_t PositionOf(const PipelineScheduleIR& ir, int64_t microbatch,
                   int64_t stage, int64_t chunk) {
  if (microbatch < 0 ||
      microbatch >= static_cast<int64_t>(ir.route_of_microbatch.size())) {
    return -1;
  }
  const int64_t route_index = ir.route_of_microbatch[microbatch];
  if (route_index < 0 ||
      route_index >= static_cast<int64_t>(ir.routes.size())) {
    return -1;
  }
  const Route& route = ir.routes[route_index];
  // Routes are short (p * chunks); a scan keeps the IR free of inverse maps
  // that could disagree with the forward ones.
  for (size_t j = 0; j < route.stage_of_position.size(); ++j) {
    if (route.stage_of_position[j] == stage &&
        route.chunk_of_position[j] == chunk) {
      return static_cast<int64_t>(j);
    }
  }
  return -1;
}

int64_t RouteLength(const PipelineScheduleIR& ir) {
  return ir.routes.empty()
             ? 0
             : static_cast<int64_t>(ir.routes[0].stage_of_position.size());
}

int64_t CommandCount(const PipelineScheduleIR& ir) {
  int64_t n = 0;
  for (const auto& stage : ir.stages) n += static_cast<int64_t>(stage.size());
  return n;
}

Command ComputeCommand(CommandKind kind, int64_t mb, int64_t chunk,
                       bool defers) {
  Command c;
  c.kind = kind;
  c.microbatch = mb;
  c.chunk = chunk;
  c.defers_weight_gradient = defers;
  return c;
}

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

std::string ComputeLineage(absl::string_view schedule, int64_t stage,
                           const Command& c) {
  std::string text = absl::StrCat("schedule:", schedule, " stage ", stage,
                                  " mb ", c.microbatch, " chunk ", c.chunk, " ",
                                  CommandKindName(c.kind));
  if (c.kind == CommandKind::kOverlappedForwardBackward) {
    absl::StrAppend(&text, " with B mb ", c.backward_microbatch, " chunk ",
                    c.backward_chunk);
  }
  if (c.kind == CommandKind::kBackward && c.defers_weight_gradient) {
    absl::StrAppend(&text, " (input gradient)");
  }
  return text;
}

Command PointToPoint(CommandKind kind, absl::string_view schedule,
                     int64_t stage, int64_t mb, int64_t chunk, int64_t peer,
                     bool lineage) {
  Command c;
  c.kind = kind;
  c.microbatch = mb;
  c.chunk = chunk;
  c.peer_stage = peer;
  if (!lineage) return c;
  const bool send = kind == CommandKind::kSendActivation ||
                    kind == CommandKind::kSendGradient;
  c.lineage = absl::StrCat("schedule:", schedule, " stage ", stage, " mb ", mb,
                           " chunk ", chunk, " ", CommandKindName(kind),
                           send ? " to " : " from ", peer);
  return c;
}

// Adds the lineage (unless `lineage` is false) and the P2P commands around
// each compute command: a receive just before the command that consumes it
// (so the receive stream runs in consumption order) and a send just after
// the command that produces it. Neighbouring positions on the same stage
// need no P2P.
void AddPointToPointAndLineage(PipelineScheduleIR& ir, bool lineage) {
  const std::string schedule(ScheduleKindName(ir.kind));
  for (int64_t s = 0; s < ir.p; ++s) {
    std::vector<Command> compute = std::move(ir.stages[s]);
    std::vector<Command>& out = ir.stages[s];
    out.clear();
    out.reserve(compute.size() * 3);
    for (Command& c : compute) {
      if (lineage) c.lineage = ComputeLineage(schedule, s, c);
      // (microbatch, chunk) of the forward and of the backward half.
      int64_t fmb = -1, fchunk = -1, bmb = -1, bchunk = -1;
      if (c.kind == CommandKind::kForward ||
          c.kind == CommandKind::kOverlappedForwardBackward) {
        fmb = c.microbatch;
        fchunk = c.chunk;
      }
      if (c.kind == CommandKind::kBackward) {
        bmb = c.microbatch;
        bchunk = c.chunk;
      }
      if (c.kind == CommandKind::kOverlappedForwardBackward) {
        bmb = c.backward_microbatch;
        bchunk = c.backward_chunk;
      }
      const int64_t last = RouteLength(ir) - 1;
      std::vector<Command> sends;
      if (fmb >= 0) {
        const Route& route = ir.routes[ir.route_of_microbatch[fmb]];
        const int64_t j = PositionOf(ir, fmb, s, fchunk);
        if (j > 0 && route.stage_of_position[j - 1] != s) {
          out.push_back(PointToPoint(CommandKind::kRecvActivation, schedule, s,
                                     fmb, fchunk,
                                     route.stage_of_position[j - 1], lineage));
        }
        if (j >= 0 && j < last && route.stage_of_position[j + 1] != s) {
          sends.push_back(PointToPoint(CommandKind::kSendActivation, schedule,
                                       s, fmb, fchunk,
                                       route.stage_of_position[j + 1], lineage));
        }
      }
      if (bmb >= 0) {
        const Route& route = ir.routes[ir.route_of_microbatch[bmb]];
        const int64_t j = PositionOf(ir, bmb, s, bchunk);
        if (j >= 0 && j < last && route.stage_of_position[j + 1] != s) {
          out.push_back(PointToPoint(CommandKind::kRecvGradient, schedule, s,
                                     bmb, bchunk,
                                     route.stage_of_position[j + 1], lineage));
        }
        if (j > 0 && route.stage_of_position[j - 1] != s) {
          sends.push_back(PointToPoint(CommandKind::kSendGradient, schedule, s,
                                       bmb, bchunk,
                                       route.stage_of_position[j - 1], lineage));
        }
      }
      out.push_back(std::move(c));
      for (Command& send : sends) out.push_back(std::move(send));
    }
  }
}

}  // namespace

std::vector<FieldError> ScheduleShapeErrors(ScheduleKind kind, int64_t p,
                                            int64_t v, int64_t m) {
  std::vector<FieldError> errors;
  const std::string name(ScheduleKindName(kind));
  auto add = [&](const char* field, ErrorCode code, std::string message) {
    errors.push_back({field, std::move(message), code});
  };
  if (p < 1 || p > kMaxStages) {
    add("p", ErrorCode::kOutOfRange,
        absl::StrCat("p (", p, ") must be between 1 and ", kMaxStages));
  }
  if (v < 1 || v > kMaxVirtualStages) {
    add("v", ErrorCode::kOutOfRange,
        absl::StrCat("v (", v, ") must be between 1 and ", kMaxVirtualStages));
  }
  if (m < 1 || m > kMaxMicrobatches) {
    add("m", ErrorCode::kOutOfRange,
        absl::StrCat("m (", m, ") must be between 1 and ", kMaxMicrobatches));
  }
  auto need_v = [&](int64_t want) {
    if (v != want) {
      add("v", ErrorCode::kInconsistent,
          absl::StrCat("v (", v, ") must be ", want, " for schedule ", name));
    }
  };
  switch (kind) {
    case ScheduleKind::kSingleStage:
      if (p != 1) {
        add("p", ErrorCode::kInconsistent,
            absl::StrCat("p (", p, ") must be 1 for schedule ", name));
      }
      need_v(1);
      break;
    case ScheduleKind::kForwardOnly:
      break;  // any v: forwards through every chunk, in groups of p
    case ScheduleKind::kGPipe:
    case ScheduleKind::kOneForwardOneBackward:
    case ScheduleKind::kZbH1:
    case ScheduleKind::kZbH2:
      need_v(1);
      break;
    case ScheduleKind::kInterleaved:
      if (v < 2) {
        add("v", ErrorCode::kInconsistent,
            absl::StrCat("v (", v, ") must be at least 2 for schedule ", name));
      }
      break;
    case ScheduleKind::kZbV:
      need_v(2);
      break;
    case ScheduleKind::kDualPipe:
      need_v(1);
      if (p % 2 != 0) {
        add("p", ErrorCode::kNotDivisible,
            absl::StrCat("p (", p, ") must be even for schedule ", name));
      }
      if (m % 2 != 0) {
        add("m", ErrorCode::kNotDivisible,
            absl::StrCat("m (", m, ") must be even for schedule ", name));
      }
      if (m < 2 * p) {
        add("m", ErrorCode::kOutOfRange,
            absl::StrCat("m (", m, ") must be at least 2p (", 2 * p,
                         ") for schedule ", name));
      }
      break;
    case ScheduleKind::kDualPipeV:
      need_v(2);
      if (m < 2 * p) {
        add("m", ErrorCode::kOutOfRange,
            absl::StrCat("m (", m, ") must be at least 2p (", 2 * p,
                         ") for schedule ", name));
      }
      break;
  }
  if (errors.empty()) {
    const int64_t chunks = kind == ScheduleKind::kDualPipe ? 2 : v;
    // p, chunks <= 4096 * 64 and m <= 2^20: the product fits in 64 bits.
    if (p * chunks * m > kMaxMicrobatchChunkSlots) {
      add("m", ErrorCode::kTooLarge,
          absl::StrCat("p * chunks * m (", p, " * ", chunks, " * ", m, " = ",
                       p * chunks * m, ") must be at most ",
                       kMaxMicrobatchChunkSlots));
    }
  }
  return errors;
}

namespace {

// ScheduleShapeErrors and, for an order made for its durations, theirs.
std::vector<FieldError> ShapeAndDurationErrors(ScheduleKind kind, int64_t p,
                                               int64_t v, int64_t m,
                                               const ChunkDurations& durations) {
  std::vector<FieldError> errors = ScheduleShapeErrors(kind, p, v, m);
  if (OrderDependsOnDurations(kind)) {
    const std::pair<const char*, double> ordered[] = {
        {"forward", durations.forward},
        {"backward_input", durations.backward_input},
        {"backward_weight", durations.backward_weight},
        {"p2p_link_time", durations.p2p_link_time}};
    for (const auto& [name, value] : ordered) {
      if (!std::isfinite(value) || value < 0) {
        errors.push_back(
            {name,
             absl::StrCat(name, " (", FormatDouble(value),
                          ") must be finite and non-negative to order ",
                          ScheduleKindName(kind)),
             ErrorCode::kOutOfRange});
      }
    }
  }
  return errors;
}

// The constructor of an order made for its durations (zb_h2 or zb_v;
// OrderDependsOnDurations), after ShapeAndDurationErrors.
absl::StatusOr<TimedOrder> TimedOrderOf(ScheduleKind kind, int64_t p,
                                        int64_t m,
                                        const ChunkDurations& durations) {
  return kind == ScheduleKind::kZbV ? VShapeZeroBubbleStages(p, m, durations)
                                    : ZeroBubbleH2Stages(p, m, durations);
}

absl::StatusOr<PipelineScheduleIR> Build(ScheduleKind kind, int64_t p,
                                         int64_t v, int64_t m,
                                         const ChunkDurations& durations,
                                         bool lineage) {
  const std::vector<FieldError> errors =
      ShapeAndDurationErrors(kind, p, v, m, durations);
  if (!errors.empty()) return InvalidInputError(errors);

  PipelineScheduleIR ir;
  ir.kind = kind;
  ir.p = p;
  ir.v = v;
  ir.m = m;
  ir.chunks_per_stage = v;
  ir.route_of_microbatch.assign(static_cast<size_t>(m), 0);
  ir.stages.resize(static_cast<size_t>(p));
  switch (kind) {
    case ScheduleKind::kSingleStage:
      ir.routes.push_back(InterleavedRoute(1, 1));
      ir.stages[0] = OneForwardOneBackwardStage(1, m, 0);
      break;
    case ScheduleKind::kForwardOnly:
      ir.training = false;
      ir.routes.push_back(InterleavedRoute(p, v));
      for (int64_t s = 0; s < p; ++s) ir.stages[s] = ForwardOnlyStage(p, v, m);
      break;
    case ScheduleKind::kGPipe:
      ir.routes.push_back(InterleavedRoute(p, 1));
      for (int64_t s = 0; s < p; ++s) ir.stages[s] = GPipeStage(m);
      break;
    case ScheduleKind::kOneForwardOneBackward:
      ir.routes.push_back(InterleavedRoute(p, 1));
      for (int64_t s = 0; s < p; ++s) {
        ir.stages[s] = OneForwardOneBackwardStage(p, m, s);
      }
      break;
    case ScheduleKind::kInterleaved:
      ir.routes.push_back(InterleavedRoute(p, v));
      for (int64_t s = 0; s < p; ++s) {
        ir.stages[s] = InterleavedStage(p, v, m, s);
      }
      break;
    case ScheduleKind::kZbH1:
      ir.routes.push_back(InterleavedRoute(p, 1));
      for (int64_t s = 0; s < p; ++s) {
        ir.stages[s] = ZeroBubbleH1Stage(p, m, s);
      }
      break;
    case ScheduleKind::kZbH2: {
      ir.routes.push_back(InterleavedRoute(p, 1));
      absl::StatusOr<TimedOrder> order = TimedOrderOf(kind, p, m, durations);
      if (!order.ok()) return order.status();
      ir.stages = std::move(order->stages);
      break;
    }
    case ScheduleKind::kZbV: {
      ir.chunks_per_stage = 2;
      ir.routes.push_back(VShapeRoute(p));
      absl::StatusOr<TimedOrder> order = TimedOrderOf(kind, p, m, durations);
      if (!order.ok()) return order.status();
      ir.stages = std::move(order->stages);
      break;
    }
    case ScheduleKind::kDualPipe:
      ir.chunks_per_stage = 2;
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
      break;
    case ScheduleKind::kDualPipeV:
      ir.chunks_per_stage = 2;
      ir.routes.push_back(VShapeRoute(p));
      for (int64_t s = 0; s < p; ++s) {
        DualPipeShape shape;
        shape.half_ranks = p;
        shape.half_rank = s;
        shape.half_chunks = m;
        shape.second_half = false;
        shape.middle = s == p - 1;
        shape.first_microbatch[0] = 0;
        shape.first_microbatch[1] = 0;
        ir.stages[s] = DualPipeStage(shape);
      }
      break;
  }
  if (ir.training) {
    // Every (stage, chunk, microbatch) has its F and its backward.
    for (int64_t s = 0; s < p; ++s) {
      int64_t forwards = 0;
      for (const Command& c : ir.stages[s]) {
        forwards += c.kind == CommandKind::kForward ||
                    c.kind == CommandKind::kOverlappedForwardBackward;
      }
      const int64_t expected = m * RouteLength(ir) / p;
      if (forwards != expected) {
        return absl::InternalError(absl::StrCat(
            "schedule ", ScheduleKindName(kind), " p ", p, " v ", v, " m ", m,
            ": stage ", s, " has ", forwards, " forwards, not ", expected));
      }
    }
  }
  AddPointToPointAndLineage(ir, lineage);
  if (kind == ScheduleKind::kInterleaved && m > p && m % p != 0) {
    // Megatron-LM's warm-up count assumes full groups; with groups of p and
    // a short last one its order cannot progress for some shapes (e.g.
    // p 15, v 5, m 18). InterleavedGroupSize picks a group size Megatron-LM
    // accepts instead; the replay at unit durations stays as the guard.
    ChunkDurations unit;
    unit.forward = 1;
    unit.backward_input = 1;
    absl::StatusOr<SimulationResult> replay = Simulate(ir, {unit});
    if (!replay.ok()) {
      return InvalidInputError(
          {{"m",
            absl::StrCat("m (", m, ") is not a multiple of p (", p,
                         ") and the interleaved order deadlocks for p ", p,
                         ", v ", v, ", m ", m,
                         "; use a multiple of p or fewer than p"),
            ErrorCode::kInconsistent}});
    }
  }
  return ir;
}

}  // namespace

ChunkDurations UnitSplitDurations() {
  ChunkDurations unit;
  unit.forward = 1;
  unit.backward_input = 1;
  unit.backward_weight = 1;
  return unit;
}

bool OverlapsForwardBackward(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kDualPipe:
    case ScheduleKind::kDualPipeV:
      return true;
    case ScheduleKind::kSingleStage:
    case ScheduleKind::kForwardOnly:
    case ScheduleKind::kGPipe:
    case ScheduleKind::kOneForwardOneBackward:
    case ScheduleKind::kInterleaved:
    case ScheduleKind::kZbH1:
    case ScheduleKind::kZbH2:
    case ScheduleKind::kZbV:
      return false;
  }
  return false;
}

bool HoldsTwinStages(ScheduleKind kind) {
  return kind == ScheduleKind::kDualPipe;
}

bool OrderDependsOnDurations(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kZbH2:
    case ScheduleKind::kZbV:
      return true;
    case ScheduleKind::kSingleStage:
    case ScheduleKind::kForwardOnly:
    case ScheduleKind::kGPipe:
    case ScheduleKind::kOneForwardOneBackward:
    case ScheduleKind::kInterleaved:
    case ScheduleKind::kZbH1:
    case ScheduleKind::kDualPipe:
    case ScheduleKind::kDualPipeV:
      return false;
  }
  return false;
}

absl::StatusOr<TimedOrder> BuildTimedOrder(ScheduleKind kind, int64_t p,
                                           int64_t v, int64_t m,
                                           const ChunkDurations& durations) {
  if (!OrderDependsOnDurations(kind)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "schedule ", ScheduleKindName(kind),
        " has a fixed order: it does not time its own placements"));
  }
  const std::vector<FieldError> errors =
      ShapeAndDurationErrors(kind, p, v, m, durations);
  if (!errors.empty()) return InvalidInputError(errors);
  return TimedOrderOf(kind, p, m, durations);
}

absl::StatusOr<PipelineScheduleIR> BuildSchedule(ScheduleKind kind, int64_t p,
                                                 int64_t v, int64_t m) {
  return Build(kind, p, v, m, UnitSplitDurations(), /*lineage=*/true);
}

absl::StatusOr<PipelineScheduleIR> BuildSchedule(
    ScheduleKind kind, int64_t p, int64_t v, int64_t m,
    const ChunkDurations& order_durations) {
  return Build(kind, p, v, m, order_durations, /*lineage=*/true);
}

absl::StatusOr<PipelineScheduleIR> BuildScheduleWithoutLineage(
    ScheduleKind kind, int64_t p, int64_t v, int64_t m,
    const ChunkDurations& order_durations) {
  return Build(kind, p, v, m, order_durations, /*lineage=*/false);
}

absl::Status AppendStepTail(PipelineScheduleIR& ir, double reduce_duration,
                            double optimizer_duration) {
  std::vector<FieldError> errors;
  if (!std::isfinite(reduce_duration) || reduce_duration < 0) {
    errors.push_back(
        {"reduce_duration",
         absl::StrCat("reduce_duration (", FormatDouble(reduce_duration),
                      ") must be finite and non-negative"),
         ErrorCode::kOutOfRange});
  }
  if (!std::isfinite(optimizer_duration) || optimizer_duration < 0) {
    errors.push_back(
        {"optimizer_duration",
         absl::StrCat("optimizer_duration (", FormatDouble(optimizer_duration),
                      ") must be finite and non-negative"),
         ErrorCode::kOutOfRange});
  }
  if (!errors.empty()) return InvalidInputError(errors);
  const std::string schedule(ScheduleKindName(ir.kind));
  for (size_t s = 0; s < ir.stages.size(); ++s) {
    Command reduce;
    reduce.kind = CommandKind::kDataParallelReduce;
    reduce.duration = reduce_duration;
    reduce.lineage = absl::StrCat("schedule:", schedule, " stage ", s,
                                  " DataParallelReduce");
    Command step;
    step.kind = CommandKind::kOptimizerStep;
    step.duration = optimizer_duration;
    step.lineage =
        absl::StrCat("schedule:", schedule, " stage ", s, " OptimizerStep");
    ir.stages[s].push_back(std::move(reduce));
    ir.stages[s].push_back(std::move(step));
  }
  return absl::OkStatus();
}

std::string PrintSchedule(const PipelineScheduleIR& ir) {
  std::string out = "pipeline_schedule/1\n";
  absl::StrAppend(&out, "schedule ", ScheduleKindName(ir.kind), " p ", ir.p,
                  " v ", ir.v, " m ", ir.m, " chunks_per_stage ",
                  ir.chunks_per_stage, " training ", ir.training ? 1 : 0, "\n");
  for (size_t r = 0; r < ir.routes.size(); ++r) {
    absl::StrAppend(&out, "route ", r, ":");
    for (size_t j = 0; j < ir.routes[r].stage_of_position.size(); ++j) {
      absl::StrAppend(&out, " ", ir.routes[r].stage_of_position[j], ".",
                      ir.routes[r].chunk_of_position[j]);
    }
    absl::StrAppend(&out, "\n");
  }
  // Runs of microbatches sharing a route, so the text stays O(routes).
  for (size_t mb = 0; mb < ir.route_of_microbatch.size();) {
    size_t end = mb;
    while (end < ir.route_of_microbatch.size() &&
           ir.route_of_microbatch[end] == ir.route_of_microbatch[mb]) {
      ++end;
    }
    absl::StrAppend(&out, "microbatches ", mb, "..", end - 1, " route ",
                    ir.route_of_microbatch[mb], "\n");
    mb = end;
  }
  for (size_t s = 0; s < ir.stages.size(); ++s) {
    absl::StrAppend(&out, "stage ", s, " commands ", ir.stages[s].size(), "\n");
    for (size_t i = 0; i < ir.stages[s].size(); ++i) {
      const Command& c = ir.stages[s][i];
      absl::StrAppend(&out, s, " ", i, " ", CommandKindName(c.kind));
      if (c.microbatch >= 0) {
        absl::StrAppend(&out, " mb ", c.microbatch, " chunk ", c.chunk);
      }
      if (c.kind == CommandKind::kOverlappedForwardBackward) {
        absl::StrAppend(&out, " bmb ", c.backward_microbatch, " bchunk ",
                        c.backward_chunk);
      }
      if (c.kind == CommandKind::kBackward) {
        absl::StrAppend(&out, c.defers_weight_gradient ? " split" : " whole");
      }
      if (c.peer_stage >= 0) absl::StrAppend(&out, " peer ", c.peer_stage);
      if (c.kind == CommandKind::kDataParallelReduce ||
          c.kind == CommandKind::kOptimizerStep) {
        absl::StrAppend(&out, " duration ", FormatDouble(c.duration));
      }
      absl::StrAppend(&out, " | ", c.lineage, "\n");
    }
  }
  return out;
}

}  // namespace blueprint
