#include "core/search/block_pricing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <variant>

#include "core/base/status_macros.h"
#include "core/plan/hardware.h"
#include "core/plan/plan.h"
#include "core/plan/quirks.h"

namespace blueprint {
namespace {

// Per phase and variant, as TaskPlan's net_time and exposed_time.
using PhaseTimes = std::array<std::array<double, kNumVariants>, kNumCommPhases>;

}  // namespace

void AddFootprints(const DistributedTaskIR& tasks, size_t begin, size_t end,
                   StagedBlock& out) {
  end = std::min(end, tasks.tasks.size());
  for (size_t i = begin; i < end; ++i) {
    const Task& task = tasks.tasks[i];
    AddTaskFootprint(task, tasks.training, FiguresOf(task.placement, out));
  }
}

StagedBlock FootprintFigures(const DistributedTaskIR& tasks,
                             const TypedProgram& program) {
  return FootprintFigures(tasks, program, StagedBlock(), 0);
}

StagedBlock FootprintFigures(const DistributedTaskIR& tasks,
                             const TypedProgram& program,
                             const StagedBlock& prefix, size_t prefix_end) {
  StagedBlock out = prefix;
  AddFootprints(tasks, prefix_end, tasks.tasks.size(), out);
  FinishBlockFootprint(program, tasks.training, out.block);
  return out;
}

bool BlockPrices::Supports(const DistributedTaskIR& tasks) {
  for (const Task& task : tasks.tasks) {
    if (std::holds_alternative<OverlappedLinearTask>(task.kind)) return false;
  }
  return true;
}

BlockPrices::BlockPrices(const DistributedTaskIR& tasks, const System& system,
                         DataType datatype) {
  Reprice(tasks, system, datatype);
}

BlockPrices::Rates BlockPrices::RatesOf(const System& system,
                                        DataType datatype) {
  Rates r;
  r.matrix = EngineRate(system.matrix, datatype);
  r.vector = EngineRate(system.vector, datatype);
  r.memory = &system.mem1;
  r.mode = system.processing_mode;
  // Most tasks have stages without work (no weight gradient, no optimizer
  // step, a collective's compute): their times, the same for every such
  // stage, are computed once.
  r.no_matrix_time = FlopTime(r.matrix, 0.0);
  r.no_vector_time = FlopTime(r.vector, 0.0);
  r.no_memory_time = MemoryTime(system.mem1, 0.0);
  return r;
}

void BlockPrices::AddPrices(const Task& task, const Rates& rates) {
  const auto positive_zero = [](double x) {
    return x == 0 && !std::signbit(x);
  };
  PricedTask p;
  p.kind = std::visit(
      Overloaded{
          [](const TensorCommTask&) { return Kind::kTensorComm; },
          [&](const ExchangeTask& x) {
            p.overlapped_by = x.overlapped_by;
            return Kind::kExchange;
          },
          [](const OverlappedLinearTask&) { return Kind::kCompute; },
          [](const LinearTask&) { return Kind::kCompute; },
          [](const BatchMatMulTask&) { return Kind::kCompute; },
          [](const LayerNormTask&) { return Kind::kCompute; },
          [](const DropOutTask&) { return Kind::kCompute; },
          [](const GeLUTask&) { return Kind::kCompute; },
          [](const SoftMaxTask&) { return Kind::kCompute; },
          [](const ElementWiseTask&) { return Kind::kCompute; },
          [](const ForkTask&) { return Kind::kCompute; },
          [](const GatedActivationTask&) { return Kind::kCompute; },
          [](const EmbeddingTask&) { return Kind::kCompute; },
      },
      task.kind);
  p.placement = task.placement;
  p.recompute = task.flags.recompute;
  p.recommunicate = task.flags.recommunicate;
  p.share = task.share;
  for (int s = 0; s < kNumStages; ++s) {
    const StageWork& w = task.work[s];
    p.flops[s] = w.flops;
    p.bytes[s] = w.bytes;
    p.flop_time[s] =
        positive_zero(w.flops)
            ? (w.matrix_engine ? rates.no_matrix_time : rates.no_vector_time)
            : FlopTime(w.matrix_engine ? rates.matrix : rates.vector, w.flops);
    p.mem_time[s] = positive_zero(w.bytes)
                        ? rates.no_memory_time
                        : MemoryTime(*rates.memory, w.bytes);
    p.time[s] = ProcessingTime(rates.mode, p.flop_time[s], p.mem_time[s]);
    // (Its processing time is 0 when both times are.)
    if (p.flops[s] != 0 || p.bytes[s] != 0 || p.flop_time[s] != 0 ||
        p.mem_time[s] != 0) {
      p.working_stages |= static_cast<uint8_t>(1u << s);
    }
  }
  if (HasCollectives(task)) {
    if (base_ == nullptr) {
      collective_tasks_.push_back(static_cast<int32_t>(tasks_.size()));
    }
    p.first_collective = static_cast<int32_t>(collectives_.size());
    for (const auto& phase : task.collectives) {
      for (const Collective& c : phase) collectives_.push_back(c);
    }
  }
  tasks_.push_back(p);
}

bool BlockPrices::HasCollectives(const Task& task) {
  // Only TPComm and exchanges have network times; any other task's
  // collectives add their sizes alone (none has any).
  if (std::holds_alternative<TensorCommTask>(task.kind) ||
      std::holds_alternative<ExchangeTask>(task.kind)) {
    return true;
  }
  for (const auto& phase : task.collectives) {
    for (const Collective& c : phase) {
      if (c.bytes != 0) return true;
    }
  }
  return false;
}

size_t BlockPrices::CollectivesOf(const Task& task) {
  return HasCollectives(task) ? kNumCommPhases * kNumVariants : 0;
}

void BlockPrices::Reprice(const DistributedTaskIR& tasks,
                          const System& system, DataType datatype) {
  training_ = tasks.training;
  base_ = nullptr;
  compute_prefix_end_ = SIZE_MAX;
  override_ids_.clear();
  tasks_.clear();
  collectives_.clear();
  collective_tasks_.clear();
  tasks_.reserve(tasks.tasks.size());
  size_t collectives = 0;
  for (const Task& task : tasks.tasks) collectives += CollectivesOf(task);
  collectives_.reserve(collectives);
  const Rates rates = RatesOf(system, datatype);
  for (const Task& task : tasks.tasks) AddPrices(task, rates);
}

void BlockPrices::RepriceFrom(const BlockPrices& base,
                              const DistributedTaskIR& tasks,
                              const std::vector<int32_t>& ids,
                              const System& system, DataType datatype) {
  if (base.base_ != nullptr && base.override_ids_ != ids) {
    // Other tasks vary: not a variant of base's base.
    Reprice(tasks, system, datatype);
    return;
  }
  const BlockPrices& root = base.base_ != nullptr ? *base.base_ : base;
  training_ = tasks.training;
  base_ = &root;
  compute_prefix_end_ = SIZE_MAX;
  compute_prefix_.reset();  // only a root's is read
  override_ids_ = ids;
  collective_tasks_.clear();
  // Reserved at once: grown by doubling, the spare room of some thousand
  // variants per run was a tenth of a search's memory.
  ClearForExactly(tasks_, ids.size());
  size_t collectives = 0;
  for (int32_t id : ids) {
    collectives += CollectivesOf(tasks.tasks[static_cast<size_t>(id)]);
  }
  ClearForExactly(collectives_, collectives);
  const Rates rates = RatesOf(system, datatype);
  for (int32_t id : ids) {
    AddPrices(tasks.tasks[static_cast<size_t>(id)], rates);
  }
}

const BlockPrices::PricedTask& BlockPrices::TaskAt(size_t i) const {
  if (base_ == nullptr) return tasks_[i];
  const auto it = std::lower_bound(override_ids_.begin(), override_ids_.end(),
                                   static_cast<int32_t>(i));
  if (it != override_ids_.end() && *it == static_cast<int32_t>(i)) {
    return tasks_[static_cast<size_t>(it - override_ids_.begin())];
  }
  return base_->tasks_[i];
}

template <typename F>
void BlockPrices::ForEachTask(size_t begin, size_t end, F&& f) const {
  // The block's tasks: base_'s but for the overrides (tasks_), or tasks_.
  const BlockPrices& root = base_ != nullptr ? *base_ : *this;
  const size_t n = std::min(end, root.tasks_.size());
  size_t next_override = 0;
  if (base_ != nullptr && begin > 0) {
    next_override = static_cast<size_t>(
        std::lower_bound(override_ids_.begin(), override_ids_.end(),
                         static_cast<int32_t>(begin)) -
        override_ids_.begin());
  }
  for (size_t i = begin; i < n; ++i) {
    const bool own = base_ != nullptr &&
                     next_override < override_ids_.size() &&
                     override_ids_[next_override] == static_cast<int32_t>(i);
    if (own) {
      f(tasks_[next_override], collectives_.data());
      ++next_override;
    } else {
      f(root.tasks_[i], root.collectives_.data());
    }
  }
}

template <typename F>
void BlockPrices::ForEachCollectiveTask(F&& f) const {
  if (base_ == nullptr) {
    for (int32_t i : collective_tasks_) {
      f(tasks_[static_cast<size_t>(i)], collectives_.data());
    }
    return;
  }
  // base_'s tasks with collectives and the overrides, merged in task order
  // (an override replaces base_'s task of its index).
  const std::vector<int32_t>& kept = base_->collective_tasks_;
  constexpr int32_t kPast = std::numeric_limits<int32_t>::max();
  size_t k = 0, o = 0;
  while (k < kept.size() || o < override_ids_.size()) {
    const int32_t next_kept = k < kept.size() ? kept[k] : kPast;
    const int32_t next_own =
        o < override_ids_.size() ? override_ids_[o] : kPast;
    if (next_own <= next_kept) {
      if (tasks_[o].first_collective >= 0) f(tasks_[o], collectives_.data());
      if (next_own == next_kept) ++k;
      ++o;
    } else {
      f(base_->tasks_[static_cast<size_t>(next_kept)],
        base_->collectives_.data());
      ++k;
    }
  }
}

StagedBlock BlockPrices::Plan(const StagedBlock& compute,
                              const NetworkTier& tensor_net,
                              const NetworkTier& expert_net,
                              const NetworkTier& context_net,
                              const NetworkTier& expert_fast_net,
                              int64_t expert_local) const {
  // PlanCompute leaves every figure AddCommunication adds to at 0.
  StagedBlock out = compute;
  AddCommunication(tensor_net, expert_net, context_net, expert_fast_net,
                   expert_local, out);
  return out;
}

StagedBlock BlockPrices::PlanCompute(const StagedBlock& footprint) const {
  StagedBlock out;
  size_t begin = 0;
  if (base_ != nullptr && !override_ids_.empty()) {
    // The tasks before the first override are base_'s: their running sums
    // are base_'s, made once for its variants.
    const auto first = static_cast<size_t>(override_ids_.front());
    if (base_->compute_prefix_ == nullptr) {
      base_->compute_prefix_ = std::make_unique<StagedBlock>();
      base_->compute_prefix_end_ = SIZE_MAX;
    }
    if (base_->compute_prefix_end_ != first) {
      *base_->compute_prefix_ = StagedBlock{};
      base_->AddCompute(0, first, *base_->compute_prefix_);
      base_->compute_prefix_end_ = first;
    }
    out = *base_->compute_prefix_;
    begin = first;
  }
  AddCompute(begin, SIZE_MAX, out);
  // The footprint figures (AddTaskFootprint, FinishBlockFootprint), computed
  // once.
  for (int placement = 0; placement < kNumPlacements; ++placement) {
    const BlockFigures& f =
        FiguresOf(static_cast<Placement>(placement), footprint);
    BlockFigures& b = FiguresOf(static_cast<Placement>(placement), out);
    b.block_weight_space = f.block_weight_space;
    b.block_act_working_space = f.block_act_working_space;
    b.block_act_storage_space = f.block_act_storage_space;
    b.block_act_checkpoint_size = f.block_act_checkpoint_size;
    b.block_weight_grad_space = f.block_weight_grad_space;
    b.block_weight_grad_space_no_sharding =
        f.block_weight_grad_space_no_sharding;
    b.block_act_grad_space = f.block_act_grad_space;
    b.block_optimizer_space = f.block_optimizer_space;
  }
  return out;
}

void BlockPrices::AddCompute(size_t begin, size_t end, StagedBlock& out) const {
  ForEachTask(begin, end, [&](const PricedTask& t, const Collective*) {
    // Aggregate, in task order.
    BlockFigures& b = FiguresOf(t.placement, out);
    const double w = t.share;
    const auto add_stage = [&](int stage, double& flops, double& flops_time,
                               double& mem_accessed, double& mem_time,
                               double& time) {
      // No work: each term is +0 or -0, which leaves the sums (+0 or
      // positive: w >= 0, every figure >= 0) as they are.
      if ((t.working_stages & (1u << stage)) == 0) return;
      flops += w * t.flops[stage];
      flops_time += w * t.flop_time[stage];
      mem_accessed += w * t.bytes[stage];
      mem_time += w * t.mem_time[stage];
      time += w * Processing(t, stage);
    };
    add_stage(kFw, b.block_fw_flops, b.block_fw_flops_time,
              b.block_fw_mem_accessed, b.block_fw_mem_time, b.block_fw_time);
    b.useful_flops += w * t.flops[kFw];
    if (!training_) return;
    if (t.recompute) {
      // Quirk (MODEL.md §6.1): the running block totals.
      if constexpr (quirks::kRecomputeAddsRunningTotals) {
        b.block_re_flops += b.block_fw_flops;
        b.block_re_flops_time += b.block_fw_flops_time;
        b.block_re_mem_accessed += b.block_fw_mem_accessed;
        b.block_re_mem_time += b.block_fw_mem_time;
      } else {
        b.block_re_flops += t.flops[kFw];
        b.block_re_flops_time += t.flop_time[kFw];
        b.block_re_mem_accessed += t.bytes[kFw];
        b.block_re_mem_time += t.mem_time[kFw];
      }
      b.block_re_time += w * Processing(t, kFw);
    }
    add_stage(kAgrad, b.block_agrad_flops, b.block_agrad_flops_time,
              b.block_agrad_mem_accessed, b.block_agrad_mem_time,
              b.block_agrad_time);
    add_stage(kWgrad, b.block_wgrad_flops, b.block_wgrad_flops_time,
              b.block_wgrad_mem_accessed, b.block_wgrad_mem_time,
              b.block_wgrad_time);
    add_stage(kOptim, b.block_optim_flops, b.block_optim_flops_time,
              b.block_optim_mem_accessed, b.block_optim_mem_time,
              b.block_optim_time);
    b.useful_flops += w * (t.flops[kAgrad] + t.flops[kWgrad] + t.flops[kOptim]);
  });
}

void BlockPrices::AddCommunication(const NetworkTier& tensor_net,
                                   const NetworkTier& expert_net,
                                   const NetworkTier& context_net,
                                   const NetworkTier& expert_fast_net,
                                   int64_t expert_local,
                                   StagedBlock& out) const {
  // A task without collectives would add +0 to every sum (w >= 0): only
  // those with some are visited, a fifth of a MoE block's.
  ForEachCollectiveTask([&](const PricedTask& t,
                            const Collective* collectives) {
    const auto collective = [&](int phase, int variant) -> const Collective& {
      return collectives[static_cast<size_t>(t.first_collective) +
                         static_cast<size_t>(phase * kNumVariants + variant)];
    };
    // TaskPricer::Price: the collectives' times (NetTime), exposed in full
    // for TPComm and exchanges, less for a ring exchange what the compute
    // of the task that consumes it hides (HideExchanges).
    PhaseTimes net{};
    PhaseTimes exposed{};
    for (int phase = 0; phase < kNumCommPhases; ++phase) {
      const Collective* priced = nullptr;  // the variant priced last
      double comm = 0;
      // Only TPComm and exchanges have network times, and those of the
      // re-communication only when the task is re-communicated.
      const bool timed =
          t.kind == Kind::kTensorComm
              ? phase != kRecommPhase || t.recommunicate
              : t.kind == Kind::kExchange && phase != kRecommPhase;
      if (!timed) continue;
      for (int v = 0; v < kNumVariants; ++v) {
        const Collective& c = collective(phase, v);
        if (c.peers <= 1) continue;
        // The edge variant's collective is mostly the base one's: the same
        // arguments give the same time.
        if (priced == nullptr || c.op != priced->op ||
            c.bytes != priced->bytes || c.peers != priced->peers ||
            c.axis != priced->axis) {
          const NetworkTier& tier = c.axis == MeshAxis::kExpert ? expert_net
                                    : c.axis == MeshAxis::kContext
                                        ? context_net
                                        : tensor_net;
          comm = c.op == CollectiveOp::kNone ? 0
                 : c.axis == MeshAxis::kExpert &&
                         c.op == CollectiveOp::kAllToAll
                     ? HierarchicalAllToAllTime(expert_net, expert_fast_net,
                                                c.bytes, c.peers, expert_local)
                     : CollectiveTime(tier, c.op, c.bytes, c.peers);
          priced = &c;
        }
        double time = 0;
        switch (t.kind) {
          case Kind::kTensorComm:
            time = comm + t.time[phase == kFwPhase   ? kFw
                                 : phase == kBwPhase ? kAgrad
                                                     : kWgrad];
            break;
          case Kind::kExchange:
            time = comm;
            break;
          case Kind::kCompute:
            break;
        }
        net[phase][v] = time;
      }
    }
    if (t.kind != Kind::kCompute) exposed = net;
    if (t.kind == Kind::kExchange && t.overlapped_by >= 0) {
      const PricedTask& cover = TaskAt(static_cast<size_t>(t.overlapped_by));
      for (int v = 0; v < kNumVariants; ++v) {
        exposed[kFwPhase][v] =
            std::max(0.0, net[kFwPhase][v] - Processing(cover, kFw));
        exposed[kBwPhase][v] =
            std::max(0.0, net[kBwPhase][v] - Processing(cover, kAgrad));
      }
    }
    // Aggregate, in task order.
    BlockFigures& b = FiguresOf(t.placement, out);
    const double w = t.share;
    const auto add_comm = [&](int phase, double& base_size, double& edge_size,
                              double& base_time, double& edge_time,
                              double& base_exposed, double& edge_exposed) {
      base_size += w * collective(phase, 0).bytes;
      edge_size += w * collective(phase, 1).bytes;
      base_time += w * net[phase][0];
      edge_time += w * net[phase][1];
      base_exposed += w * exposed[phase][0];
      edge_exposed += w * exposed[phase][1];
    };
    add_comm(kFwPhase, b.baseblock_fw_tp_size, b.edgeblock_fw_tp_size,
             b.baseblock_fw_tp_time, b.edgeblock_fw_tp_time,
             b.baseblock_fw_tp_time_exposed, b.edgeblock_fw_tp_time_exposed);
    if (!training_) return;
    if (t.recommunicate) {
      add_comm(kRecommPhase, b.baseblock_recomm_size, b.edgeblock_recomm_size,
               b.baseblock_recomm_time, b.edgeblock_recomm_time,
               b.baseblock_recomm_time_exposed,
               b.edgeblock_recomm_time_exposed);
    }
    add_comm(kBwPhase, b.baseblock_bw_tp_size, b.edgeblock_bw_tp_size,
             b.baseblock_agrad_tp_time, b.edgeblock_agrad_tp_time,
             b.baseblock_agrad_tp_time_exposed,
             b.edgeblock_agrad_tp_time_exposed);
  });
}

}  // namespace blueprint
