#include "core/search/block_pricing.h"

#include <algorithm>
#include <variant>

#include "core/base/status_macros.h"
#include "core/plan/hardware.h"
#include "core/plan/quirks.h"

namespace blueprint {
namespace {

constexpr int kFw = static_cast<int>(Stage::kForward);
constexpr int kAgrad = static_cast<int>(Stage::kActivationGrad);
constexpr int kWgrad = static_cast<int>(Stage::kWeightGrad);
constexpr int kOptim = static_cast<int>(Stage::kOptimizer);
constexpr int kFwPhase = static_cast<int>(CommPhase::kForward);
constexpr int kBwPhase = static_cast<int>(CommPhase::kBackward);
constexpr int kRecommPhase = static_cast<int>(CommPhase::kRecommunication);

// Per phase and variant, as TaskPlan's net_time and exposed_time.
using PhaseTimes = std::array<std::array<double, kNumVariants>, kNumCommPhases>;

// The figures a task of `placement` adds to.
BlockFigures& FiguresOf(Placement placement, StagedBlock& staged) {
  switch (placement) {
    case Placement::kEveryBlock:
      return staged.block;
    case Placement::kFirstStage:
      return staged.extras.first;
    case Placement::kLastStage:
      return staged.extras.last;
  }
  return staged.block;
}

// Aggregate's footprint sums for one task.
void AddFootprint(const Task& task, bool training, BlockFigures& b) {
  const Footprint& f = task.footprint;
  const double w = task.share;
  b.block_weight_space += w * f.weight;
  if (!task.flags.activation_reused) {
    b.block_act_working_space += w * f.activation;
  }
  b.block_act_storage_space += w * f.activation;
  if (training) {
    if (!task.flags.output_stored) b.block_act_storage_space -= w * f.output;
    if (!task.flags.activation_stored) {
      b.block_act_storage_space -= w * f.activation;
    }
    b.block_weight_grad_space += w * f.weight_grad_sharded;
    b.block_weight_grad_space_no_sharding += w * f.weight_grad_unsharded;
    b.block_act_grad_space += w * f.activation_grad;
    b.block_optimizer_space += w * f.optimizer;
  }
}

// Aggregate's rules after the sums: full recompute stores no activation
// but the checkpoint (quirk MODEL.md §6.6: b*s*h elements).
void FinishBlock(const TypedProgram& program, bool training,
                 BlockFigures& b) {
  const DerivedValues& d = program.derived;
  const bool full = d.recompute == RecomputePolicy::kFull;
  if (full) b.block_act_storage_space = 0;
  if (training && full) {
    b.block_act_checkpoint_size =
        static_cast<double>(program.batch().microbatch_size) *
        program.model().seq_size * program.model().hidden *
        d.bytes_per_element;
    if (!quirks::kCheckpointUnsplitBySequenceParallelism &&
        d.sequence_parallel) {
      b.block_act_checkpoint_size /= static_cast<double>(d.tensor);
    }
  }
}

// AddStage: one stage's work, weighed by the task's share.
void AddStage(const Task& task, double flop_time, double mem_time,
              double processing, int stage, double& flops, double& flops_time,
              double& mem_accessed, double& stage_mem_time, double& time) {
  const double w = task.share;
  flops += w * task.work[stage].flops;
  flops_time += w * flop_time;
  mem_accessed += w * task.work[stage].bytes;
  stage_mem_time += w * mem_time;
  time += w * processing;
}

// AddComm: one phase's collectives, weighed by the task's share.
void AddComm(const Task& task, const PhaseTimes& net,
             const PhaseTimes& exposed, int phase, double& base_size,
             double& edge_size, double& base_time, double& edge_time,
             double& base_exposed, double& edge_exposed) {
  const double w = task.share;
  base_size += w * task.collectives[phase][0].bytes;
  edge_size += w * task.collectives[phase][1].bytes;
  base_time += w * net[phase][0];
  edge_time += w * net[phase][1];
  base_exposed += w * exposed[phase][0];
  edge_exposed += w * exposed[phase][1];
}

}  // namespace

StagedBlock FootprintFigures(const DistributedTaskIR& tasks,
                             const TypedProgram& program) {
  StagedBlock out;
  for (const Task& task : tasks.tasks) {
    AddFootprint(task, tasks.training, FiguresOf(task.placement, out));
  }
  FinishBlock(program, tasks.training, out.block);
  return out;
}

bool BlockPrices::Supports(const DistributedTaskIR& tasks) {
  for (const Task& task : tasks.tasks) {
    if (std::holds_alternative<OverlappedLinearTask>(task.kind)) return false;
  }
  return true;
}

BlockPrices::BlockPrices(const DistributedTaskIR& tasks, const System& system,
                         DataType datatype)
    : system_(system), datatype_(datatype) {
  prices_.reserve(tasks.tasks.size());
  for (const Task& task : tasks.tasks) {
    TaskPrice p;
    for (int s = 0; s < kNumStages; ++s) {
      const StageWork& w = task.work[s];
      p.flop_time[s] = FlopTime(w.matrix_engine ? system.matrix : system.vector,
                                datatype, w.flops);
      p.mem_time[s] = MemoryTime(system.mem1, w.bytes);
      p.compute[s] =
          ProcessingTime(system.processing_mode, p.flop_time[s], p.mem_time[s]);
      // TPComm and exchanges are never charged as compute.
      const bool charged = !std::holds_alternative<TensorCommTask>(task.kind) &&
                           !std::holds_alternative<ExchangeTask>(task.kind);
      p.processing[s] = charged ? p.compute[s] : 0;
    }
    prices_.push_back(p);
  }
}

StagedBlock BlockPrices::Plan(const DistributedTaskIR& tasks,
                              const TypedProgram& program,
                              const NetworkTier& tensor_net,
                              const NetworkTier& expert_net,
                              const NetworkTier& context_net) const {
  const size_t n = tasks.tasks.size();
  std::vector<PhaseTimes> net(n), exposed(n);
  // TaskPricer::Price: each task's collectives (NetTime), exposed in full
  // for TPComm and exchanges.
  for (size_t i = 0; i < n; ++i) {
    const Task& task = tasks.tasks[i];
    const TaskPrice& price = prices_[i];
    for (int phase = 0; phase < kNumCommPhases; ++phase) {
      for (int v = 0; v < kNumVariants; ++v) {
        const Collective& c = task.collectives[phase][v];
        double time = 0;
        if (c.peers > 1) {
          const NetworkTier& tier = c.axis == MeshAxis::kExpert ? expert_net
                                    : c.axis == MeshAxis::kContext
                                        ? context_net
                                        : tensor_net;
          const double comm =
              c.op == CollectiveOp::kNone
                  ? 0
                  : CollectiveTime(tier, c.op, c.bytes, c.peers);
          time = std::visit(
              Overloaded{
                  [&](const TensorCommTask&) -> double {
                    if (phase == kRecommPhase) {
                      if (!task.flags.recommunicate) return 0;
                      return comm + price.compute[kWgrad];
                    }
                    return comm + price.compute[phase == kFwPhase ? kFw
                                                                  : kAgrad];
                  },
                  // Not priced here (Supports).
                  [](const OverlappedLinearTask&) { return 0.0; },
                  [](const LinearTask&) { return 0.0; },
                  [](const BatchMatMulTask&) { return 0.0; },
                  [](const LayerNormTask&) { return 0.0; },
                  [](const DropOutTask&) { return 0.0; },
                  [](const GeLUTask&) { return 0.0; },
                  [](const SoftMaxTask&) { return 0.0; },
                  [](const ElementWiseTask&) { return 0.0; },
                  [](const ForkTask&) { return 0.0; },
                  [](const GatedActivationTask&) { return 0.0; },
                  [](const EmbeddingTask&) { return 0.0; },
                  [&](const ExchangeTask&) -> double {
                    return phase == kRecommPhase ? 0 : comm;
                  },
              },
              task.kind);
        }
        net[i][phase][v] = time;
      }
    }
    const bool exposed_in_full =
        std::holds_alternative<TensorCommTask>(task.kind) ||
        std::holds_alternative<ExchangeTask>(task.kind);
    exposed[i] = exposed_in_full ? net[i] : PhaseTimes{};
  }
  // HideExchanges: a ring exchange is exposed only beyond the compute of
  // the task that consumes it.
  for (size_t i = 0; i < n; ++i) {
    const auto* exchange = std::get_if<ExchangeTask>(&tasks.tasks[i].kind);
    if (exchange == nullptr || exchange->overlapped_by < 0) continue;
    const TaskPrice& cover =
        prices_[static_cast<size_t>(exchange->overlapped_by)];
    for (int v = 0; v < kNumVariants; ++v) {
      exposed[i][kFwPhase][v] =
          std::max(0.0, net[i][kFwPhase][v] - cover.processing[kFw]);
      exposed[i][kBwPhase][v] =
          std::max(0.0, net[i][kBwPhase][v] - cover.processing[kAgrad]);
    }
  }
  // Aggregate, in task order.
  StagedBlock out;
  const bool training = tasks.training;
  for (size_t i = 0; i < n; ++i) {
    const Task& task = tasks.tasks[i];
    const TaskPrice& p = prices_[i];
    BlockFigures& b = FiguresOf(task.placement, out);
    const double w = task.share;
    AddStage(task, p.flop_time[kFw], p.mem_time[kFw], p.processing[kFw], kFw,
             b.block_fw_flops, b.block_fw_flops_time, b.block_fw_mem_accessed,
             b.block_fw_mem_time, b.block_fw_time);
    AddComm(task, net[i], exposed[i], kFwPhase, b.baseblock_fw_tp_size,
            b.edgeblock_fw_tp_size, b.baseblock_fw_tp_time,
            b.edgeblock_fw_tp_time, b.baseblock_fw_tp_time_exposed,
            b.edgeblock_fw_tp_time_exposed);
    b.useful_flops += w * task.work[kFw].flops;
    if (training) {
      if (task.flags.recompute) {
        // Quirk (MODEL.md §6.1): the running block totals.
        if constexpr (quirks::kRecomputeAddsRunningTotals) {
          b.block_re_flops += b.block_fw_flops;
          b.block_re_flops_time += b.block_fw_flops_time;
          b.block_re_mem_accessed += b.block_fw_mem_accessed;
          b.block_re_mem_time += b.block_fw_mem_time;
        } else {
          b.block_re_flops += task.work[kFw].flops;
          b.block_re_flops_time += p.flop_time[kFw];
          b.block_re_mem_accessed += task.work[kFw].bytes;
          b.block_re_mem_time += p.mem_time[kFw];
        }
        b.block_re_time += w * p.processing[kFw];
      }
      if (task.flags.recommunicate) {
        AddComm(task, net[i], exposed[i], kRecommPhase,
                b.baseblock_recomm_size, b.edgeblock_recomm_size,
                b.baseblock_recomm_time, b.edgeblock_recomm_time,
                b.baseblock_recomm_time_exposed,
                b.edgeblock_recomm_time_exposed);
      }
      AddStage(task, p.flop_time[kAgrad], p.mem_time[kAgrad],
               p.processing[kAgrad], kAgrad, b.block_agrad_flops,
               b.block_agrad_flops_time, b.block_agrad_mem_accessed,
               b.block_agrad_mem_time, b.block_agrad_time);
      AddComm(task, net[i], exposed[i], kBwPhase, b.baseblock_bw_tp_size,
              b.edgeblock_bw_tp_size, b.baseblock_agrad_tp_time,
              b.edgeblock_agrad_tp_time, b.baseblock_agrad_tp_time_exposed,
              b.edgeblock_agrad_tp_time_exposed);
      AddStage(task, p.flop_time[kWgrad], p.mem_time[kWgrad],
               p.processing[kWgrad], kWgrad, b.block_wgrad_flops,
               b.block_wgrad_flops_time, b.block_wgrad_mem_accessed,
               b.block_wgrad_mem_time, b.block_wgrad_time);
      AddStage(task, p.flop_time[kOptim], p.mem_time[kOptim],
               p.processing[kOptim], kOptim, b.block_optim_flops,
               b.block_optim_flops_time, b.block_optim_mem_accessed,
               b.block_optim_mem_time, b.block_optim_time);
      b.useful_flops += w * (task.work[kAgrad].flops +
                             task.work[kWgrad].flops + task.work[kOptim].flops);
    }
    AddFootprint(task, training, b);
  }
  FinishBlock(program, training, out.block);
  return out;
}

}  // namespace blueprint
