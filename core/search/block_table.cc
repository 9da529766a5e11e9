#include "core/search/block_table.h"

#include <utility>
#include <variant>

#include "core/base/status_macros.h"
#include "core/plan/hardware.h"
#include "core/plan/plan.h"
#include "core/search/search.h"
#include "core/taskir/lower.h"
#include "core/taskir/optimizer.h"

namespace blueprint {
namespace {

constexpr int kForward = static_cast<int>(Stage::kForward);
constexpr int kActivationGrad = static_cast<int>(Stage::kActivationGrad);
constexpr int kWeightGrad = static_cast<int>(Stage::kWeightGrad);

// A mapping whose block is `config` (p = d = 1, unsharded optimizer).
CalculonExecution BlockExecution(const BlockConfig& config, DataType datatype,
                                 int64_t tensor_net) {
  CalculonExecution e;
  e.num_procs = config.tensor;
  e.tensor = config.tensor;
  e.tensor_net = tensor_net;
  e.batch_size = config.microbatch_size;
  e.microbatch_size = config.microbatch_size;
  e.datatype = datatype;
  e.fused_activation = config.fused_activation;
  e.recompute = config.recompute;
  e.comm = config.comm;
  e.tp_overlap = config.tp_overlap;
  return e;
}

}  // namespace

BlockTable::BlockTable(const TransformerModel& model, const System& system,
                       DataType datatype, PrecisionAccounting precision)
    : model_(model),
      system_(system),
      datatype_(datatype),
      precision_(precision) {}

void BlockTable::Clear() {
  lowered_index_.clear();
  lowered_.clear();
  sharded_index_.clear();
  sharded_.clear();
  sharded_for_ = 0;
}

absl::StatusOr<BlockTable::Lowered*> BlockTable::FindOrLower(
    const BlockConfig& config) {
  auto it = lowered_index_.find(config);
  if (it != lowered_index_.end()) return it->second;
  Lowered& lowered = lowered_.emplace_back();
  lowered.program = ExecutionProgram(model_, system_,
                                     BlockExecution(config, datatype_, 0));
  std::get<TransformerTrainingMappingSpec>(lowered.program.spec)
      .options.precision = precision_;
  BP_ASSIGN_OR_RETURN(lowered.tasks,
                      LowerTensorParallelBlock().Run(lowered.program));
  lowered.optimizer_inputs.reserve(lowered.tasks.tasks.size());
  for (const Task& task : lowered.tasks.tasks) {
    TaskOptimizerInputs in;
    in.placement = task.placement;
    // Unsharded, the lowering stores UnshardedWeightGradBytes (elements *
    // 4), WeightGradBytes and OptimizerStateBytes with shard 1: all exact.
    in.weight_grad_elements =
        task.footprint.weight_grad_unsharded / kFloat32Bytes;
    in.optimizer_bytes = task.footprint.optimizer;
    in.forward_flops = task.work[kForward].flops;
    in.activation_grad_flops = task.work[kActivationGrad].flops;
    in.weight_grad_flops = task.work[kWeightGrad].flops;
    in.tensor_comm = std::holds_alternative<TensorCommTask>(task.kind);
    lowered.optimizer_inputs.push_back(in);
  }
  lowered.by_tensor_net.resize(system_.networks.size());
  lowered_index_.emplace(config, &lowered);
  return &lowered;
}

absl::StatusOr<const StagedBlock*> BlockTable::Unsharded(Lowered& lowered,
                                                         int64_t tensor_net) {
  std::optional<StagedBlock>& slot =
      lowered.by_tensor_net[static_cast<size_t>(tensor_net)];
  if (!slot.has_value()) {
    TypedProgram& program = lowered.program;
    std::get<TransformerTrainingMappingSpec>(program.spec)
        .parallelism.tensor.network_tier = tensor_net;
    program.derived.tensor_network = tensor_net;
    BP_ASSIGN_OR_RETURN(PortablePlanIR plan,
                        PlanPortable().Run(lowered.tasks, program));
    slot = StagedBlock{plan.block, {plan.first_stage, plan.last_stage}};
    ++blocks_planned_;
  }
  return &*slot;
}

// Mirrors LowerTensorParallelBlock (the optimizer.h terms, sharded) and
// PlanPortable's Aggregate (sums in task order, the
// optimizer on the vector engine, TPComm never charged as compute) for the
// figures the shard changes; block_table_test pins the equality.
void BlockTable::Reshard(const Lowered& lowered, int64_t shard,
                         StagedBlock& staged) const {
  const double s = static_cast<double>(shard);
  for (BlockFigures* b :
       {&staged.block, &staged.extras.first, &staged.extras.last}) {
    b->block_optim_flops = 0;
    b->block_optim_flops_time = 0;
    b->block_optim_mem_accessed = 0;
    b->block_optim_mem_time = 0;
    b->block_optim_time = 0;
    b->block_weight_grad_space = 0;
    b->block_optimizer_space = 0;
    b->useful_flops = 0;
  }
  for (const TaskOptimizerInputs& in : lowered.optimizer_inputs) {
    BlockFigures& b = in.placement == Placement::kFirstStage
                          ? staged.extras.first
                      : in.placement == Placement::kLastStage
                          ? staged.extras.last
                          : staged.block;
    const double flops = OptimizerStepFlops(in.weight_grad_elements, s);
    const double bytes = in.optimizer_bytes / s;
    const double flop_time = FlopTime(system_.vector, datatype_, flops);
    const double mem_time = MemoryTime(system_.mem1, bytes);
    b.block_optim_flops += flops;
    b.block_optim_flops_time += flop_time;
    b.block_optim_mem_accessed += bytes;
    b.block_optim_mem_time += mem_time;
    b.block_optim_time +=
        in.tensor_comm
            ? 0
            : ProcessingTime(system_.processing_mode, flop_time, mem_time);
    // The search shards the optimizer state only (ZeRO-1).
    b.block_weight_grad_space +=
        WeightGradBytesFor(precision_, in.weight_grad_elements,
                           BytesPerElement(datatype_), s, false);
    b.block_optimizer_space += bytes;
    b.useful_flops += in.forward_flops;
    b.useful_flops +=
        in.activation_grad_flops + in.weight_grad_flops + flops;
  }
}

absl::StatusOr<const StagedBlock*> BlockTable::Get(const BlockConfig& config,
                                                   int64_t tensor_net,
                                                   int64_t shard) {
  BP_ASSIGN_OR_RETURN(Lowered * lowered, FindOrLower(config));
  if (shard == 1) return Unsharded(*lowered, tensor_net);
  if (shard != sharded_for_) {
    sharded_index_.clear();
    sharded_.clear();
    sharded_for_ = shard;
  }
  Sharded* sharded;
  auto it = sharded_index_.find(config);
  if (it != sharded_index_.end()) {
    sharded = it->second;
  } else {
    sharded = &sharded_.emplace_back();
    sharded->by_tensor_net.resize(system_.networks.size());
    sharded_index_.emplace(config, sharded);
  }
  std::optional<StagedBlock>& slot =
      sharded->by_tensor_net[static_cast<size_t>(tensor_net)];
  if (!slot.has_value()) {
    BP_ASSIGN_OR_RETURN(const StagedBlock* unsharded,
                        Unsharded(*lowered, tensor_net));
    slot = *unsharded;
    Reshard(*lowered, shard, *slot);
    ++blocks_resharded_;
  }
  return &*slot;
}

}  // namespace blueprint
