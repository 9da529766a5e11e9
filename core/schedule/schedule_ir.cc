#include "core/schedule/schedule_ir.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/base/field_errors.h"
#include "core/base/format.h"
#include "core/schedule/schedule_table.h"
#include "core/schedule/simulate.h"     // the interleaved leftover check

namespace blueprint {

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
  const ScheduleRow& row = ScheduleRowOf(kind);
  if (row.single_stage && p != 1) {
    add("p", ErrorCode::kInconsistent,
        absl::StrCat("p (", p, ") must be 1 for schedule ", name));
  }
  const VirtualStagesRule& rule = row.virtual_stages;
  if (rule.fixed != 0 && v != rule.fixed) {
    add("v", ErrorCode::kInconsistent,
        absl::StrCat("v (", v, ") must be ", rule.fixed, " for schedule ",
                     name));
  }
  // At least 1 is the range check's; forward_only takes any v.
  if (rule.fixed == 0 && rule.at_least > 1 && v < rule.at_least) {
    add("v", ErrorCode::kInconsistent,
        absl::StrCat("v (", v, ") must be at least ", rule.at_least,
                     " for schedule ", name));
  }
  if (row.even_stages && p % 2 != 0) {
    add("p", ErrorCode::kNotDivisible,
        absl::StrCat("p (", p, ") must be even for schedule ", name));
  }
  if (row.even_microbatches && m % 2 != 0) {
    add("m", ErrorCode::kNotDivisible,
        absl::StrCat("m (", m, ") must be even for schedule ", name));
  }
  const int64_t least_m = row.min_microbatches_per_stage;
  if (least_m > 0 && m < least_m * p) {
    add("m", ErrorCode::kOutOfRange,
        absl::StrCat("m (", m, ") must be at least ", least_m, "p (",
                     least_m * p, ") for schedule ", name));
  }
  if (errors.empty()) {
    const int64_t chunks = ChunksPerStage(kind, v);
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
  const ScheduleRow& row = ScheduleRowOf(kind);
  ir.chunks_per_stage = ChunksPerStage(kind, v);
  ir.training = row.trains;
  ir.route_of_microbatch.assign(static_cast<size_t>(m), 0);
  ir.stages.resize(static_cast<size_t>(p));
  if (absl::Status built = row.build_order(ir, durations); !built.ok()) {
    return built;
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
  return ScheduleRowOf(kind).timed_order(p, m, durations);
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
