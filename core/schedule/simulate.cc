#include "core/schedule/simulate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/format.h"

namespace blueprint {
namespace {

constexpr int32_t kNone = -1;
constexpr size_t kMaxListedProblems = 20;

// Global command ids (int32: an IR holds at most a few million commands)
// and, per (microbatch, position), the command doing each role.
struct Index {
  int64_t positions = 0;                 // p * chunks_per_stage
  std::vector<int64_t> first_id;         // per stage
  std::vector<int32_t> stage_of;         // per id
  std::vector<int32_t> forward;          // per (mb, position): F or FB
  std::vector<int32_t> backward;         // B or FB
  std::vector<int32_t> weight;           // W
  std::vector<int32_t> send_activation;  // at the producer's position
  std::vector<int32_t> recv_activation;  // at the consumer's position
  std::vector<int32_t> send_gradient;    // at the producer's position
  std::vector<int32_t> recv_gradient;    // at the consumer's position
  size_t Key(int64_t mb, int64_t j) const {
    return static_cast<size_t>(mb * positions + j);
  }
};

const Command& CommandAt(const PipelineScheduleIR& ir, const Index& index,
                         int32_t id) {
  const int32_t s = index.stage_of[id];
  return ir.stages[s][static_cast<size_t>(id - index.first_id[s])];
}

class Problems {
 public:
  void Add(std::string text) {
    ++count_;
    if (lines_.size() < kMaxListedProblems) lines_.push_back(std::move(text));
  }
  bool empty() const { return count_ == 0; }
  absl::Status ToStatus() const {
    std::string text = absl::StrJoin(lines_, "\n");
    if (count_ > lines_.size()) {
      absl::StrAppend(&text, "\n(", count_ - lines_.size(), " more)");
    }
    return absl::InvalidArgumentError(text);
  }

 private:
  size_t count_ = 0;
  std::vector<std::string> lines_;
};

void CheckRoutes(const PipelineScheduleIR& ir, Problems& problems) {
  const int64_t chunks = ir.chunks_per_stage;
  if (ir.p < 1 || chunks < 1 || ir.m < 1 ||
      static_cast<int64_t>(ir.stages.size()) != ir.p ||
      static_cast<int64_t>(ir.route_of_microbatch.size()) != ir.m ||
      ir.p > kMaxStages || chunks > kMaxVirtualStages ||
      ir.m > kMaxMicrobatches ||
      ir.p * chunks * ir.m > kMaxMicrobatchChunkSlots) {
    problems.Add(absl::StrCat(
        "shape: p ", ir.p, ", chunks_per_stage ", chunks, ", m ", ir.m,
        ", stages ", ir.stages.size(), ", route_of_microbatch ",
        ir.route_of_microbatch.size(),
        ": need p, chunks, m >= 1 within the limits, one command list per "
        "stage and one route per microbatch"));
    return;
  }
  // Every route has the same length: p * chunks, or p for DualPipe (each
  // direction visits one chunk per stage).
  if (ir.routes.empty()) {
    problems.Add("the schedule has no route");
    return;
  }
  const int64_t positions =
      static_cast<int64_t>(ir.routes[0].stage_of_position.size());
  if (positions < 1 || positions > ir.p * chunks) {
    problems.Add(absl::StrCat("route 0 has ", positions,
                              " positions; need 1 to p * chunks"));
    return;
  }
  for (size_t r = 0; r < ir.routes.size(); ++r) {
    const Route& route = ir.routes[r];
    if (static_cast<int64_t>(route.stage_of_position.size()) != positions ||
        static_cast<int64_t>(route.chunk_of_position.size()) != positions) {
      problems.Add(
          absl::StrCat("route ", r, " must have ", positions, " positions"));
      continue;
    }
    std::vector<char> seen(static_cast<size_t>(ir.p * chunks), 0);
    for (int64_t j = 0; j < positions; ++j) {
      const int64_t s = route.stage_of_position[j];
      const int64_t c = route.chunk_of_position[j];
      if (s < 0 || s >= ir.p || c < 0 || c >= chunks || seen[s * chunks + c]) {
        problems.Add(absl::StrCat("route ", r, " position ", j, " (stage ", s,
                                  ", chunk ", c,
                                  ") is out of range or repeated"));
        continue;
      }
      seen[s * chunks + c] = 1;
    }
  }
  for (int64_t mb = 0; mb < ir.m; ++mb) {
    const int64_t r = ir.route_of_microbatch[mb];
    if (r < 0 || r >= static_cast<int64_t>(ir.routes.size())) {
      problems.Add(absl::StrCat("microbatch ", mb, " has route ", r,
                                ", not one of ", ir.routes.size()));
    }
  }
}

// position_of[route * positions + stage * chunks + chunk]
std::vector<int64_t> PositionTable(const PipelineScheduleIR& ir) {
  const int64_t slots = ir.p * ir.chunks_per_stage;
  const int64_t positions = RouteLength(ir);
  std::vector<int64_t> table(ir.routes.size() * slots, -1);
  for (size_t r = 0; r < ir.routes.size(); ++r) {
    for (int64_t j = 0; j < positions; ++j) {
      table[r * slots +
            ir.routes[r].stage_of_position[j] * ir.chunks_per_stage +
            ir.routes[r].chunk_of_position[j]] = j;
    }
  }
  return table;
}

std::string Describe(const PipelineScheduleIR& ir, int64_t s, size_t i) {
  const Command& c = ir.stages[s][i];
  return absl::StrCat("stage ", s, " command ", i, " ", CommandKindName(c.kind),
                      " mb ", c.microbatch, " chunk ", c.chunk, " (", c.lineage,
                      ")");
}

// Puts each command of `ir` in its role's slot of `index` (sized), with
// a problem for a command out of range, a repeated role or a transfer whose
// peer does not hold the neighbouring position.
void IndexCommands(const PipelineScheduleIR& ir,
                   const std::vector<int64_t>& position_table, Index& index,
                   Problems& problems) {
  const int64_t chunks = ir.chunks_per_stage;
  const int64_t slots_per_route = ir.p * chunks;
  auto claim = [&](std::vector<int32_t>& role, int64_t mb, int64_t j,
                   int32_t id, int64_t s, size_t i) {
    int32_t& slot = role[index.Key(mb, j)];
    if (slot != kNone) {
      problems.Add(absl::StrCat(Describe(ir, s, i),
                                " repeats a command of the same role"));
      return;
    }
    slot = id;
  };
  auto position = [&](int64_t s, int64_t mb, int64_t c) -> int64_t {
    if (mb < 0 || mb >= ir.m || c < 0 || c >= chunks) return -1;
    return position_table[ir.route_of_microbatch[mb] * slots_per_route +
                          s * chunks + c];
  };
  for (int64_t s = 0; s < ir.p; ++s) {
    for (size_t i = 0; i < ir.stages[s].size(); ++i) {
      const int32_t id = static_cast<int32_t>(index.first_id[s] + i);
      index.stage_of[id] = static_cast<int32_t>(s);
      const Command& c = ir.stages[s][i];
      if (c.kind == CommandKind::kDataParallelReduce ||
          c.kind == CommandKind::kOptimizerStep) {
        if (!std::isfinite(c.duration) || c.duration < 0) {
          problems.Add(absl::StrCat(Describe(ir, s, i), " has duration ",
                                    FormatDouble(c.duration),
                                    ", not finite and non-negative"));
        }
        continue;
      }
      const int64_t j = position(s, c.microbatch, c.chunk);
      if (j < 0) {
        problems.Add(absl::StrCat(Describe(ir, s, i),
                                  ": microbatch or chunk out of range"));
        continue;
      }
      const Route& route = ir.routes[ir.route_of_microbatch[c.microbatch]];
      switch (c.kind) {
        case CommandKind::kForward:
          claim(index.forward, c.microbatch, j, id, s, i);
          break;
        case CommandKind::kBackward:
          claim(index.backward, c.microbatch, j, id, s, i);
          break;
        case CommandKind::kWeightGradient:
          claim(index.weight, c.microbatch, j, id, s, i);
          break;
        case CommandKind::kOverlappedForwardBackward: {
          claim(index.forward, c.microbatch, j, id, s, i);
          const int64_t jb =
              position(s, c.backward_microbatch, c.backward_chunk);
          if (jb < 0) {
            problems.Add(absl::StrCat(Describe(ir, s, i),
                                      ": backward microbatch or chunk out of "
                                      "range"));
          } else {
            claim(index.backward, c.backward_microbatch, jb, id, s, i);
          }
          break;
        }
        case CommandKind::kSendActivation:
        case CommandKind::kRecvActivation:
        case CommandKind::kSendGradient:
        case CommandKind::kRecvGradient: {
          // The peer must hold the neighbouring position.
          const bool activation = c.kind == CommandKind::kSendActivation ||
                                  c.kind == CommandKind::kRecvActivation;
          const bool send = c.kind == CommandKind::kSendActivation ||
                            c.kind == CommandKind::kSendGradient;
          // Activations flow to j+1, gradients to j-1.
          const int64_t other = (activation == send) ? j + 1 : j - 1;
          if (other < 0 || other >= index.positions ||
              route.stage_of_position[other] != c.peer_stage ||
              c.peer_stage == s) {
            problems.Add(absl::StrCat(
                Describe(ir, s, i), ": peer stage ", c.peer_stage,
                " does not hold the neighbouring position on another stage"));
            break;
          }
          std::vector<int32_t>& role =
              activation
                  ? (send ? index.send_activation : index.recv_activation)
                  : (send ? index.send_gradient : index.recv_gradient);
          claim(role, c.microbatch, j, id, s, i);
          break;
        }
        case CommandKind::kDataParallelReduce:
        case CommandKind::kOptimizerStep:
          break;
      }
    }
  }
}

// A problem for each (microbatch, position) of the indexed commands that
// lacks a command its schedule kind needs (F; B, and W when its B defers
// it; the transfers where the route crosses stages) or has one it needs
// not.
void CheckComplete(const PipelineScheduleIR& ir, const Index& index,
                   Problems& problems) {
  for (int64_t mb = 0; mb < ir.m; ++mb) {
    const Route& route = ir.routes[ir.route_of_microbatch[mb]];
    for (int64_t j = 0; j < index.positions; ++j) {
      const size_t key = index.Key(mb, j);
      const std::string where =
          absl::StrCat("microbatch ", mb, " position ", j, " (stage ",
                       route.stage_of_position[j], " chunk ",
                       route.chunk_of_position[j], ")");
      if (index.forward[key] == kNone) {
        problems.Add(absl::StrCat(where, " has no F"));
      }
      const bool crosses_in =
          j > 0 && route.stage_of_position[j - 1] != route.stage_of_position[j];
      const bool crosses_out =
          j + 1 < index.positions &&
          route.stage_of_position[j + 1] != route.stage_of_position[j];
      if (crosses_in && index.recv_activation[key] == kNone) {
        problems.Add(absl::StrCat(where, " has no RecvActivation"));
      }
      if (crosses_out && index.send_activation[key] == kNone) {
        problems.Add(absl::StrCat(where, " has no SendActivation"));
      }
      if (!crosses_in && index.recv_activation[key] != kNone) {
        problems.Add(absl::StrCat(where, " has a RecvActivation it needs not"));
      }
      if (!crosses_out && index.send_activation[key] != kNone) {
        problems.Add(absl::StrCat(where, " has a SendActivation it needs not"));
      }
      if (!ir.training) {
        if (index.backward[key] != kNone || index.weight[key] != kNone ||
            index.send_gradient[key] != kNone ||
            index.recv_gradient[key] != kNone) {
          problems.Add(absl::StrCat(where,
                                    " has backward commands in a "
                                    "forward-only schedule"));
        }
        continue;
      }
      if (index.backward[key] == kNone) {
        problems.Add(absl::StrCat(where, " has no B"));
        continue;
      }
      const Command& b = CommandAt(ir, index, index.backward[key]);
      const bool split =
          b.kind == CommandKind::kBackward && b.defers_weight_gradient;
      if (split != (index.weight[key] != kNone)) {
        problems.Add(absl::StrCat(
            where, split ? " defers its weight gradient but has no W"
                         : " has a W but its backward is whole"));
      }
      if (crosses_out && index.recv_gradient[key] == kNone) {
        problems.Add(absl::StrCat(where, " has no RecvGradient"));
      }
      if (crosses_in && index.send_gradient[key] == kNone) {
        problems.Add(absl::StrCat(where, " has no SendGradient"));
      }
      if (!crosses_out && index.recv_gradient[key] != kNone) {
        problems.Add(absl::StrCat(where, " has a RecvGradient it needs not"));
      }
      if (!crosses_in && index.send_gradient[key] != kNone) {
        problems.Add(absl::StrCat(where, " has a SendGradient it needs not"));
      }
    }
  }
}

absl::Status BuildIndex(const PipelineScheduleIR& ir, Index& index) {
  Problems problems;
  CheckRoutes(ir, problems);
  if (!problems.empty()) return problems.ToStatus();
  index.positions = RouteLength(ir);
  int64_t total = 0;
  index.first_id.resize(static_cast<size_t>(ir.p));
  for (int64_t s = 0; s < ir.p; ++s) {
    index.first_id[s] = total;
    total += static_cast<int64_t>(ir.stages[s].size());
  }
  if (total > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the schedule has ", total, " commands, over 2^30"));
  }
  index.stage_of.resize(static_cast<size_t>(total));
  const size_t slots = static_cast<size_t>(ir.m * index.positions);
  for (auto* v :
       {&index.forward, &index.backward, &index.weight, &index.send_activation,
        &index.recv_activation, &index.send_gradient, &index.recv_gradient}) {
    v->assign(slots, kNone);
  }
  IndexCommands(ir, PositionTable(ir), index, problems);
  if (!problems.empty()) return problems.ToStatus();
  CheckComplete(ir, index, problems);
  if (!problems.empty()) return problems.ToStatus();
  return absl::OkStatus();
}

// The data dependencies of command `id` (stream order is added apart).
// Returns how many were written to `deps` (at most 4).
int DataDependencies(const PipelineScheduleIR& ir, const Index& index,
                     const std::vector<int64_t>& position_table, int32_t id,
                     int32_t deps[4]) {
  const Command& c = CommandAt(ir, index, id);
  const int64_t s = index.stage_of[id];
  const int64_t chunks = ir.chunks_per_stage;
  int n = 0;
  auto position = [&](int64_t mb, int64_t chunk) {
    return position_table[ir.route_of_microbatch[mb] * ir.p * chunks +
                          s * chunks + chunk];
  };
  auto forward_input = [&](int64_t mb, int64_t j) {
    if (j == 0) return;
    const Route& route = ir.routes[ir.route_of_microbatch[mb]];
    deps[n++] = route.stage_of_position[j - 1] == s
                    ? index.forward[index.Key(mb, j - 1)]
                    : index.recv_activation[index.Key(mb, j)];
  };
  auto backward_inputs = [&](int64_t mb, int64_t j) {
    deps[n++] = index.forward[index.Key(mb, j)];
    if (j + 1 == index.positions) return;
    const Route& route = ir.routes[ir.route_of_microbatch[mb]];
    deps[n++] = route.stage_of_position[j + 1] == s
                    ? index.backward[index.Key(mb, j + 1)]
                    : index.recv_gradient[index.Key(mb, j)];
  };
  switch (c.kind) {
    case CommandKind::kForward:
      forward_input(c.microbatch, position(c.microbatch, c.chunk));
      break;
    case CommandKind::kBackward:
      backward_inputs(c.microbatch, position(c.microbatch, c.chunk));
      break;
    case CommandKind::kWeightGradient:
      deps[n++] = index.backward[index.Key(c.microbatch,
                                           position(c.microbatch, c.chunk))];
      break;
    case CommandKind::kOverlappedForwardBackward:
      forward_input(c.microbatch, position(c.microbatch, c.chunk));
      backward_inputs(c.backward_microbatch,
                      position(c.backward_microbatch, c.backward_chunk));
      break;
    case CommandKind::kSendActivation:
      deps[n++] = index.forward[index.Key(c.microbatch,
                                          position(c.microbatch, c.chunk))];
      break;
    case CommandKind::kSendGradient:
      deps[n++] = index.backward[index.Key(c.microbatch,
                                           position(c.microbatch, c.chunk))];
      break;
    case CommandKind::kRecvActivation:
      deps[n++] = index.send_activation[index.Key(
          c.microbatch, position(c.microbatch, c.chunk) - 1)];
      break;
    case CommandKind::kRecvGradient:
      deps[n++] = index.send_gradient[index.Key(
          c.microbatch, position(c.microbatch, c.chunk) + 1)];
      break;
    case CommandKind::kDataParallelReduce:
    case CommandKind::kOptimizerStep:
      break;
  }
  return n;
}

bool ValidDuration(double d) { return std::isfinite(d) && d >= 0; }

}  // namespace

absl::StatusOr<ScheduleGraph> ScheduleGraph::Build(
    const PipelineScheduleIR& ir) {
  Index index;
  {
    const absl::Status status = BuildIndex(ir, index);
    if (!status.ok()) return status;
  }
  const std::vector<int64_t> position_table = PositionTable(ir);
  const int32_t total = static_cast<int32_t>(index.stage_of.size());
  ScheduleGraph graph;
  graph.first_id_ = index.first_id;
  graph.stage_of_ = index.stage_of;
  // Stream predecessors.
  graph.stream_previous_.assign(static_cast<size_t>(total), kNone);
  for (int64_t s = 0; s < ir.p; ++s) {
    int32_t last[3] = {kNone, kNone, kNone};
    for (size_t i = 0; i < ir.stages[s].size(); ++i) {
      const int32_t id = static_cast<int32_t>(index.first_id[s] + i);
      const int stream = static_cast<int>(StreamOf(ir.stages[s][i].kind));
      graph.stream_previous_[id] = last[stream];
      last[stream] = id;
    }
  }
  const std::vector<int32_t>& stream_previous = graph.stream_previous_;
  // Data dependencies and dependents in CSR form, and the count of unmet
  // dependencies.
  std::vector<int32_t> unmet(static_cast<size_t>(total), 0);
  std::vector<int64_t> dependents_begin(static_cast<size_t>(total) + 1, 0);
  graph.deps_begin_.assign(static_cast<size_t>(total) + 1, 0);
  graph.deps_.reserve(static_cast<size_t>(total) * 2);
  int32_t deps[4];
  for (int32_t id = 0; id < total; ++id) {
    const int n = DataDependencies(ir, index, position_table, id, deps);
    graph.deps_.insert(graph.deps_.end(), deps, deps + n);
    graph.deps_begin_[id + 1] = static_cast<int64_t>(graph.deps_.size());
    for (int k = 0; k < n; ++k) ++dependents_begin[deps[k] + 1];
    if (stream_previous[id] != kNone)
      ++dependents_begin[stream_previous[id] + 1];
    unmet[id] = n + (stream_previous[id] != kNone ? 1 : 0);
  }
  for (int32_t id = 0; id < total; ++id) {
    dependents_begin[id + 1] += dependents_begin[id];
  }
  std::vector<int32_t> dependents(static_cast<size_t>(dependents_begin[total]));
  {
    std::vector<int64_t> fill(dependents_begin.begin(),
                              dependents_begin.end() - 1);
    for (int32_t id = 0; id < total; ++id) {
      for (int64_t k = graph.deps_begin_[id]; k < graph.deps_begin_[id + 1];
           ++k) {
        dependents[fill[graph.deps_[k]]++] = id;
      }
      if (stream_previous[id] != kNone) {
        dependents[fill[stream_previous[id]]++] = id;
      }
    }
  }

  // A topological (Kahn, FIFO) order: every command after what it waits
  // for, whatever the durations.
  std::vector<int32_t>& queue = graph.order_;
  queue.reserve(static_cast<size_t>(total));
  for (int32_t id = 0; id < total; ++id) {
    if (unmet[id] == 0) queue.push_back(id);
  }
  for (size_t head = 0; head < queue.size(); ++head) {
    const int32_t id = queue[head];
    for (int64_t e = dependents_begin[id]; e < dependents_begin[id + 1]; ++e) {
      if (--unmet[dependents[e]] == 0) queue.push_back(dependents[e]);
    }
  }
  if (static_cast<int32_t>(queue.size()) != total) {
    // Every stream's first command that never ran.
    std::vector<std::string> blocked;
    for (int64_t s = 0; s < ir.p; ++s) {
      bool seen[3] = {false, false, false};
      for (size_t i = 0; i < ir.stages[s].size(); ++i) {
        const int32_t id = static_cast<int32_t>(index.first_id[s] + i);
        const int stream = static_cast<int>(StreamOf(ir.stages[s][i].kind));
        if (unmet[id] > 0 && !seen[stream]) {
          seen[stream] = true;
          if (blocked.size() < kMaxListedProblems) {
            blocked.push_back(Describe(ir, s, i));
          }
        }
      }
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "deadlock: ", total - static_cast<int32_t>(queue.size()), " of ", total,
        " commands can never start; blocked stream heads:\n",
        absl::StrJoin(blocked, "\n")));
  }
  return graph;
}

absl::StatusOr<std::vector<ChunkDurations>> DurationsByStageChunk(
    const PipelineScheduleIR& ir,
    const std::vector<ChunkDurations>& by_position) {
  if (ir.routes.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "durations by position need one route; ", ScheduleKindName(ir.kind),
        " has ", ir.routes.size()));
  }
  const Route& route = ir.routes[0];
  if (by_position.size() != route.stage_of_position.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("durations by position has ", by_position.size(),
                     " entries; the route has ",
                     route.stage_of_position.size(), " positions"));
  }
  std::vector<ChunkDurations> out(by_position.size());
  for (size_t k = 0; k < by_position.size(); ++k) {
    const int64_t slot = route.stage_of_position[k] * ir.chunks_per_stage +
                         route.chunk_of_position[k];
    out[static_cast<size_t>(slot)] = by_position[k];
  }
  return out;
}

absl::StatusOr<SimulationResult> Simulate(
    const PipelineScheduleIR& ir,
    const std::vector<ChunkDurations>& durations) {
  absl::StatusOr<ScheduleGraph> graph = ScheduleGraph::Build(ir);
  if (!graph.ok()) return graph.status();
  return Simulate(ir, *graph, durations);
}

absl::StatusOr<SimulationResult> Simulate(
    const PipelineScheduleIR& ir, const ScheduleGraph& graph,
    const std::vector<ChunkDurations>& durations) {
  const int64_t chunks = ir.chunks_per_stage;
  const size_t chunk_count = static_cast<size_t>(ir.p * chunks);
  if (durations.size() != 1 && durations.size() != chunk_count) {
    return absl::InvalidArgumentError(absl::StrCat("durations has ",
                                                   durations.size(),
                                                   " entries; need 1 or p * "
                                                   "chunks_per_stage = ",
                                                   chunk_count));
  }
  for (size_t k = 0; k < durations.size(); ++k) {
    const ChunkDurations& d = durations[k];
    if (!ValidDuration(d.forward) || !ValidDuration(d.backward_input) ||
        !ValidDuration(d.backward_weight) || !ValidDuration(d.p2p_link_time) ||
        !std::isfinite(d.overlapped_forward_backward)) {
      return absl::InvalidArgumentError(
          absl::StrCat("durations[", k,
                       "] must be finite and non-negative (a negative "
                       "overlapped_forward_backward means the default)"));
    }
  }
  auto durations_of = [&](int64_t s, int64_t chunk) -> const ChunkDurations& {
    return durations.size() == 1
               ? durations[0]
               : durations[static_cast<size_t>(s * chunks + chunk)];
  };
  auto duration_of = [&](int64_t s, const Command& c) -> double {
    switch (c.kind) {
      case CommandKind::kForward:
        return durations_of(s, c.chunk).forward;
      case CommandKind::kBackward: {
        const ChunkDurations& d = durations_of(s, c.chunk);
        return c.defers_weight_gradient ? d.backward_input
                                        : d.backward_input + d.backward_weight;
      }
      case CommandKind::kWeightGradient:
        return durations_of(s, c.chunk).backward_weight;
      case CommandKind::kOverlappedForwardBackward: {
        const ChunkDurations& f = durations_of(s, c.chunk);
        if (f.overlapped_forward_backward >= 0) {
          return f.overlapped_forward_backward;
        }
        const ChunkDurations& b = durations_of(s, c.backward_chunk);
        return f.forward + b.backward_input + b.backward_weight;
      }
      case CommandKind::kSendActivation:
      case CommandKind::kSendGradient:
        return durations_of(s, c.chunk).p2p_link_time;
      case CommandKind::kRecvActivation:
      case CommandKind::kRecvGradient:
        return 0;  // see the receive rule in Simulate's loop
      case CommandKind::kDataParallelReduce:
      case CommandKind::kOptimizerStep:
        return c.duration;
    }
    return 0;
  };

  const int32_t total = static_cast<int32_t>(graph.stage_of_.size());
  // Longest paths, in the graph's topological order (any such order gives
  // the same times).
  std::vector<CommandTiming> timing(static_cast<size_t>(total));
  for (const int32_t id : graph.order_) {
    const int64_t s = graph.stage_of_[id];
    const Command& c =
        ir.stages[s][static_cast<size_t>(id - graph.first_id_[s])];
    const int32_t previous = graph.stream_previous_[id];
    const double ready = previous != kNone ? timing[previous].end : 0.0;
    CommandTiming& t = timing[id];
    const int64_t first = graph.deps_begin_[id];
    const int64_t last = graph.deps_begin_[id + 1];
    if (c.kind == CommandKind::kRecvActivation ||
        c.kind == CommandKind::kRecvGradient) {
      const CommandTiming& send = timing[graph.deps_[first]];
      t.start = std::max(ready, send.start);
      t.end = std::max(t.start, send.end);
    } else {
      t.start = ready;
      for (int64_t k = first; k < last; ++k)
        t.start = std::max(t.start, timing[graph.deps_[k]].end);
      t.end = t.start + duration_of(s, c);
    }
  }

  SimulationResult result;
  result.timings.resize(static_cast<size_t>(ir.p));
  result.stages.resize(static_cast<size_t>(ir.p));
  std::vector<std::pair<double, int>> events;  // (time, +1 live / -1 freed)
  events.reserve(static_cast<size_t>(2 * ir.m * chunks));
  for (int64_t s = 0; s < ir.p; ++s) {
    StageFigures& figures = result.stages[s];
    auto& stage_timing = result.timings[s];
    stage_timing.assign(timing.begin() + graph.first_id_[s],
                        timing.begin() + graph.first_id_[s] +
                            static_cast<int64_t>(ir.stages[s].size()));
    events.clear();
    figures.start = stage_timing.empty() ? 0 : stage_timing.front().start;
    for (size_t i = 0; i < ir.stages[s].size(); ++i) {
      const Command& c = ir.stages[s][i];
      const CommandTiming& t = stage_timing[i];
      figures.start = std::min(figures.start, t.start);
      figures.end = std::max(figures.end, t.end);
      if (StreamOf(c.kind) == StreamKind::kCompute) {
        figures.compute_busy += t.end - t.start;
      }
      const bool starts_live =
          c.kind == CommandKind::kForward ||
          c.kind == CommandKind::kOverlappedForwardBackward;
      if (starts_live) {
        events.push_back({t.start, +1});
        if (!ir.training) events.push_back({t.end, -1});
      }
      const bool frees =
          c.kind == CommandKind::kWeightGradient ||
          c.kind == CommandKind::kOverlappedForwardBackward ||
          (c.kind == CommandKind::kBackward && !c.defers_weight_gradient);
      if (frees && ir.training) events.push_back({t.end, -1});
    }
    std::sort(events.begin(), events.end());  // frees (-1) first at ties
    int64_t live = 0;
    for (const auto& event : events) {
      live += event.second;
      figures.peak_live_chunks = std::max(figures.peak_live_chunks, live);
    }
    figures.peak_live_microbatches =
        static_cast<double>(figures.peak_live_chunks) /
        static_cast<double>(chunks);
    result.makespan = std::max(result.makespan, figures.end);
    result.max_compute_busy =
        std::max(result.max_compute_busy, figures.compute_busy);
  }
  for (StageFigures& figures : result.stages) {
    figures.idle = result.makespan - figures.compute_busy;
  }
  result.bubble = result.makespan - result.max_compute_busy;
  return result;
}

double SpanBubble(const SimulationResult& result) {
  double longest_span = 0;
  for (const StageFigures& stage : result.stages) {
    longest_span = std::max(longest_span, stage.end - stage.start);
  }
  return longest_span - result.max_compute_busy;
}

double MinimumBubble(ScheduleKind kind, int64_t p, int64_t m,
                     const ChunkDurations& lower) {
  return ScheduleRowOf(kind).minimum_bubble(p, m, lower);
}

}  // namespace blueprint
