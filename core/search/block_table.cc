#include "core/search/block_table.h"

#include <algorithm>
#include <string>
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

// A mapping whose block is `config` (d = 1, unsharded).
CalculonExecution BlockExecution(const BlockConfig& config, DataType datatype) {
  CalculonExecution e;
  e.num_procs = config.tensor * config.context * config.pipeline;
  e.tensor = config.tensor;
  e.pipeline = config.pipeline;
  e.batch_size = config.microbatch_size;
  e.microbatch_size = config.microbatch_size;
  e.datatype = datatype;
  e.fused_activation = config.fused_activation;
  e.recompute = config.recompute;
  e.comm = config.comm;
  e.tp_overlap = config.tp_overlap;
  return e;
}

ExecutionExtras BlockExtras(const BlockConfig& config,
                            PrecisionAccounting precision) {
  ExecutionExtras x;
  x.context = config.context;
  x.context_exchange = config.context_exchange;
  x.expert = config.expert;
  x.expert_tensor = config.expert_tensor;
  x.precision = precision;
  return x;
}

// The tasks LowerTensorParallelBlock gives the routed experts' state, which
// shards over the expert data-parallel ranks (its AddExpertLinear).
bool HoldsExpertState(const Task& task) {
  return task.name.find("_Experts_") != std::string::npos;
}

}  // namespace

double ExpertShard(const DerivedValues& d) {
  if (d.sharding == ShardingStage::kNone) return 1;
  const double group_fraction =
      static_cast<double>(d.sharding_group) / static_cast<double>(d.data);
  return std::max(1.0, static_cast<double>(d.expert_data) * group_fraction);
}

BlockShard BlockShardOf(const DerivedValues& d) {
  BlockShard shard;
  shard.stage = d.sharding;
  shard.group = d.sharding != ShardingStage::kNone ? d.sharding_group : 1;
  shard.expert = ExpertShard(d);
  return shard;
}

BlockTable::BlockTable(const TransformerModel& model, const System& system,
                       DataType datatype, PrecisionAccounting precision)
    : model_(model),
      system_(system),
      datatype_(datatype),
      precision_(precision),
      shares_vary_by_stage_(model.moe.has_value() &&
                            !model.moe->layer_pattern.empty()) {}

void BlockTable::Clear() {
  lowered_index_.clear();
  lowered_.clear();
  sharded_index_.clear();
  sharded_.clear();
  sharded_group_ = 0;
  sharded_expert_ = 0;
}

BlockConfig BlockTable::Canonical(const BlockConfig& config) const {
  BlockConfig out = config;
  if (config.context <= 1) out.context_exchange = ContextExchange::kRing;
  if (!model_.moe.has_value()) {
    out.expert_tensor = 0;
  } else if (out.expert_tensor == 0) {
    out.expert_tensor = config.tensor;
  }
  if (!shares_vary_by_stage_) out.pipeline = 1;
  return out;
}

absl::StatusOr<BlockTable::Lowered*> BlockTable::FindOrLower(
    const BlockConfig& config) {
  auto it = lowered_index_.find(config);
  if (it != lowered_index_.end()) return it->second;
  Lowered& lowered = lowered_.emplace_back();
  lowered.program =
      ExecutionProgram(model_, system_, BlockExecution(config, datatype_),
                       BlockExtras(config, precision_));
  BP_ASSIGN_OR_RETURN(lowered.tasks,
                      LowerTensorParallelBlock().Run(lowered.program));
  lowered.shard_inputs.reserve(lowered.tasks.tasks.size());
  for (const Task& task : lowered.tasks.tasks) {
    TaskShardInputs in;
    in.placement = task.placement;
    in.share = task.share;
    // Unsharded, the lowering stores UnshardedWeightGradBytes (elements *
    // 4), WeightGradBytes, OptimizerStateBytes and the weights with shard
    // 1: all exact.
    in.weight_grad_elements =
        task.footprint.weight_grad_unsharded / kFloat32Bytes;
    in.optimizer_bytes = task.footprint.optimizer;
    in.weight_bytes = task.footprint.weight;
    in.forward_flops = task.work[kForward].flops;
    in.activation_grad_flops = task.work[kActivationGrad].flops;
    in.weight_grad_flops = task.work[kWeightGrad].flops;
    in.tensor_comm = std::holds_alternative<TensorCommTask>(task.kind);
    in.expert_state = HoldsExpertState(task);
    lowered.shard_inputs.push_back(in);
  }
  lowered_index_.emplace(config, &lowered);
  return &lowered;
}

namespace {

bool SameNets(const BlockNets& a, const BlockNets& b) {
  return a.tensor == b.tensor && a.context == b.context &&
         a.expert == b.expert;
}

}  // namespace

absl::StatusOr<const StagedBlock*> BlockTable::Unsharded(
    Lowered& lowered, const BlockNets& nets) {
  for (const Planned& p : lowered.planned) {
    if (SameNets(p.nets, nets)) return &p.staged;
  }
  TypedProgram& program = lowered.program;
  TransformerTrainingParallelism& parallelism =
      std::get<TransformerTrainingMappingSpec>(program.spec).parallelism;
  parallelism.tensor.network_tier = nets.tensor;
  parallelism.context.network_tier = nets.context;
  parallelism.expert.network_tier = nets.expert;
  program.derived.tensor_network = nets.tensor;
  program.derived.context_network = nets.context;
  program.derived.expert_network = nets.expert;
  BP_ASSIGN_OR_RETURN(PortablePlanIR plan,
                      PlanPortable().Run(lowered.tasks, program));
  ++blocks_planned_;
  Planned& planned = lowered.planned.emplace_back();
  planned.nets = nets;
  planned.staged = StagedBlock{plan.block, {plan.first_stage, plan.last_stage}};
  return &planned.staged;
}

// Mirrors LowerTensorParallelBlock (the optimizer.h terms and
// FillDefaultFootprint, sharded; a routed expert's state by the expert
// shard) and PlanPortable's Aggregate (sums in task order, each task
// weighed by its share, the optimizer on the vector engine, TPComm never
// charged as compute) for the figures the shard changes; block_table_test
// pins the equality.
void BlockTable::Reshard(const Lowered& lowered, const BlockShard& shard,
                         StagedBlock& staged) const {
  const double group = static_cast<double>(shard.group);
  const bool shard_weights = shard.stage == ShardingStage::kParameters;
  const bool shard_gradients = shard.stage >= ShardingStage::kGradients;
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
    if (shard_weights) b->block_weight_space = 0;
  }
  for (const TaskShardInputs& in : lowered.shard_inputs) {
    BlockFigures& b = in.placement == Placement::kFirstStage
                          ? staged.extras.first
                      : in.placement == Placement::kLastStage
                          ? staged.extras.last
                          : staged.block;
    const double s = in.expert_state ? shard.expert : group;
    const double w = in.share;
    const double flops = OptimizerStepFlops(in.weight_grad_elements, s);
    const double bytes = in.optimizer_bytes / s;
    const double flop_time = FlopTime(system_.vector, datatype_, flops);
    const double mem_time = MemoryTime(system_.mem1, bytes);
    b.block_optim_flops += w * flops;
    b.block_optim_flops_time += w * flop_time;
    b.block_optim_mem_accessed += w * bytes;
    b.block_optim_mem_time += w * mem_time;
    b.block_optim_time +=
        w * (in.tensor_comm ? 0
                            : ProcessingTime(system_.processing_mode,
                                             flop_time, mem_time));
    if (shard_weights) b.block_weight_space += w * (in.weight_bytes / s);
    b.block_weight_grad_space +=
        w * WeightGradBytesFor(precision_, in.weight_grad_elements,
                               BytesPerElement(datatype_), s,
                               shard_gradients);
    b.block_optimizer_space += w * bytes;
    b.useful_flops += w * in.forward_flops;
    b.useful_flops +=
        w * (in.activation_grad_flops + in.weight_grad_flops + flops);
  }
}

absl::StatusOr<const StagedBlock*> BlockTable::Get(const BlockConfig& config,
                                                   const BlockNets& nets,
                                                   const BlockShard& shard) {
  const BlockConfig key = Canonical(config);
  BP_ASSIGN_OR_RETURN(Lowered * lowered, FindOrLower(key));
  // Only the tiers the block's collectives use.
  BlockNets used = nets;
  if (key.tensor <= 1) used.tensor = 0;
  if (key.context <= 1) used.context = 0;
  if (key.expert <= 1) used.expert = 0;
  if (shard.stage == ShardingStage::kNone) return Unsharded(*lowered, used);
  if (shard.group != sharded_group_ || shard.expert != sharded_expert_) {
    sharded_index_.clear();
    sharded_.clear();
    sharded_group_ = shard.group;
    sharded_expert_ = shard.expert;
  }
  Sharded* sharded;
  const ShardedKey sharded_key{key, shard.stage};
  auto it = sharded_index_.find(sharded_key);
  if (it != sharded_index_.end()) {
    sharded = it->second;
  } else {
    sharded = &sharded_.emplace_back();
    sharded_index_.emplace(sharded_key, sharded);
  }
  for (const Planned& p : sharded->planned) {
    if (SameNets(p.nets, used)) return &p.staged;
  }
  BP_ASSIGN_OR_RETURN(const StagedBlock* unsharded,
                      Unsharded(*lowered, used));
  Planned& planned = sharded->planned.emplace_back();
  planned.nets = used;
  planned.staged = *unsharded;
  Reshard(*lowered, shard, planned.staged);
  ++blocks_resharded_;
  return &planned.staged;
}

absl::StatusOr<const StagedBlock*> BlockTable::Get(const BlockConfig& config,
                                                   int64_t tensor_net,
                                                   int64_t shard) {
  BlockNets nets;
  nets.tensor = tensor_net;
  BlockShard sharding;
  if (shard > 1) {
    sharding.stage = ShardingStage::kOptimizer;
    sharding.group = shard;
    sharding.expert = static_cast<double>(shard);
  }
  return Get(config, nets, sharding);
}

}  // namespace blueprint
