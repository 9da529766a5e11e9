#include "core/search/block_table.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <variant>

#include "core/base/status_macros.h"
#include "core/plan/block_pricing.h"
#include "core/plan/hardware.h"
#include "core/plan/program_rules.h"
#include "core/taskir/lower.h"
#include "core/taskir/optimizer.h"

namespace blueprint {
namespace {

// A mapping whose block is `config` (d = 1, unsharded, Calculon's
// schedule); with `layout` (p, its p * v block counts), laid out so in
// place of config.pipeline's even stages.
TrainingMapping BlockMapping(const BlockConfig& config, int64_t num_blocks,
                             DataType datatype, PrecisionAccounting precision,
                             ModelProfile profile,
                             const ExecutionVariant& variant,
                             const std::pair<int64_t, std::vector<int64_t>>*
                                 layout) {
  TrainingMapping m;
  TransformerTrainingParallelism& parallelism = m.parallelism;
  parallelism.tensor.degree = config.tensor;
  parallelism.tensor.communication = config.comm;
  parallelism.tensor.overlap = config.tp_overlap;
  if (layout != nullptr) {
    // (p, its p * v block counts): v chunks per stage, laid out so.
    const auto& [p, stage_blocks] = *layout;
    const int64_t v = static_cast<int64_t>(stage_blocks.size()) / p;
    parallelism.pipeline = CalculonPipeline(p, v, num_blocks, 0);
    parallelism.pipeline.stage_layout = StageLayout::kEven;
    parallelism.pipeline.stage_blocks = stage_blocks;
  } else {
    parallelism.pipeline =
        CalculonPipeline(config.pipeline, /*v=*/1, num_blocks, 0);
  }
  parallelism.context.degree = config.context;
  parallelism.context.exchange = config.context_exchange;
  parallelism.expert.degree = config.expert;
  parallelism.expert.tensor_degree = config.expert_tensor;
  parallelism.recompute = config.recompute;
  m.batch.global_batch_size = config.microbatch_size;
  m.batch.microbatch_size = config.microbatch_size;
  m.options.datatype = datatype;
  m.options.fused_activation = config.fused_activation;
  m.options.precision = precision;
  m.options.profile = profile;
  ApplyExecutionVariant(variant, m);
  return m;
}

bool SameNets(const BlockNets& a, const BlockNets& b) {
  return a.tensor == b.tensor && a.context == b.context &&
         a.expert == b.expert;
}

// The stage's slot in Lowered::sharded.
int StageSlot(ShardingStage stage) { return static_cast<int>(stage) - 1; }

}  // namespace

BlockConfig BlockConfigOf(const TrainingMapping& mapping) {
  const TransformerTrainingParallelism& parallelism = mapping.parallelism;
  BlockConfig config;
  config.tensor = parallelism.tensor.degree;
  config.microbatch_size = mapping.batch.microbatch_size;
  config.recompute = parallelism.recompute;
  config.comm = parallelism.tensor.communication;
  config.tp_overlap = parallelism.tensor.overlap;
  config.fused_activation = mapping.options.fused_activation;
  config.context = parallelism.context.degree;
  config.context_exchange = parallelism.context.exchange;
  config.expert = parallelism.expert.degree;
  config.expert_tensor = parallelism.expert.tensor_degree;
  config.pipeline = parallelism.pipeline.degree;
  if (!parallelism.pipeline.stage_blocks.empty()) {
    config.stage_blocks = &parallelism.pipeline.stage_blocks;
  }
  return config;
}

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
                       DataType datatype, PrecisionAccounting precision,
                       ModelProfile profile, const ExecutionVariant& variant)
    : model_(model),
      system_(system),
      datatype_(datatype),
      precision_(precision),
      profile_(profile),
      variant_(variant),
      program_rates_(variant.recipe != QuantizationRecipe::kNone),
      expert_rules_(variant.dispatcher != ExpertDispatcher::kAllToAll ||
                    variant.expert_overlap),
      achievable_matmul_(
          CorrectionsFor(profile).On(Correction::kAchievableMatmulRate)),
      vector_rate_(EngineRate(system.vector, datatype)),
      shares_vary_by_stage_(model.moe.has_value() &&
                            !model.moe->layer_pattern.empty()) {}

void BlockTable::Clear() {
  for (size_t i = 0; i < lowered_used_; ++i) Release(&lowered_[i]);
  lowered_index_.clear();
  lowered_used_ = 0;
  footprint_prefix_root_ = nullptr;
}

BlockTable::Lowered& BlockTable::NextEntry() {
  if (lowered_used_ == lowered_.size()) lowered_.emplace_back();
  Lowered& lowered = lowered_[lowered_used_++];
  lowered.shard_inputs.clear();
  lowered.shard_base = nullptr;
  lowered.shard_override_ids.clear();
  lowered.shard_terms_group = 0;  // the cache is of the entry's last use
  lowered.footprint = StagedBlock();
  lowered.unpriced.reset();
  // What it made on use was released with it.
  return lowered;
}

BlockTable::Planned& BlockTable::TakePlanned() {
  if (free_planned_.empty()) return planned_pool_.emplace_back();
  Planned& planned = *free_planned_.back();
  free_planned_.pop_back();
  return planned;
}

BlockTable::Sharded& BlockTable::TakeSharded() {
  if (free_sharded_.empty()) return sharded_pool_.emplace_back();
  Sharded& sharded = *free_sharded_.back();
  free_sharded_.pop_back();
  return sharded;  // ShardedOf makes its terms
}

void BlockTable::ReleaseComposed(Sharded& sharded) {
  for (const PlannedRef& composed : sharded.composed) {
    if (composed.planned != nullptr) free_planned_.push_back(composed.planned);
  }
  sharded.composed.clear();
  for (Planned** made : {&sharded.footprint, &sharded.compute}) {
    if (*made != nullptr) free_planned_.push_back(*made);
    *made = nullptr;
  }
}

void BlockTable::Release(Entry* entry) {
  for (const PlannedRef& planned : entry->planned) {
    free_planned_.push_back(planned.planned);
  }
  entry->planned.clear();
  if (entry->compute != nullptr) {
    free_planned_.push_back(entry->compute);
    entry->compute = nullptr;
  }
  for (ShardedSlot& slot : entry->sharded) {
    if (slot.variant != nullptr) {
      ReleaseComposed(*slot.variant);
      free_sharded_.push_back(slot.variant);
    }
    slot = ShardedSlot();
  }
}

BlockConfig BlockTable::Family(const BlockConfig& config) {
  BlockConfig family;
  family.tensor = config.tensor;
  family.context = config.context;
  family.expert = config.expert;
  family.expert_tensor = config.expert_tensor;
  family.pipeline = config.pipeline;
  family.stage_blocks = config.stage_blocks;
  return Canonical(family);
}

BlockConfig BlockTable::Canonical(const BlockConfig& config) {
  BlockConfig out = config;
  if (config.context <= 1) out.context_exchange = ContextExchange::kRing;
  if (!model_.moe.has_value()) {
    out.expert_tensor = 0;
  } else if (out.expert_tensor == 0) {
    out.expert_tensor = config.tensor;
  }
  out.stage_blocks = nullptr;
  if (!shares_vary_by_stage_) {
    out.pipeline = 1;
    return out;
  }
  if (config.stage_blocks != nullptr) {
    // An explicit layout: its busiest rank's shares (derive.h, as the
    // checker derives them), represented by the first p or layout seen
    // with them.
    const int64_t per_stage =
        MostRankBlocks(*config.stage_blocks, config.pipeline);
    const int64_t moe =
        LayoutStageMoeBlocks(model_, *config.stage_blocks, config.pipeline);
    const int64_t common = std::gcd(moe, per_stage);
    const auto [known, inserted] = pipeline_of_share_.try_emplace(
        {moe / common, per_stage / common},
        -1 - static_cast<int64_t>(layouts_.size()));
    if (inserted) layouts_.emplace_back(config.pipeline, *config.stage_blocks);
    out.pipeline = known->second;
    return out;
  }
  // The lowering reads p only as the shares moe / per_stage and
  // (per_stage - moe) / per_stage (lower.cc MakeBlockContext), which are the same doubles for
  // the same reduced fraction.
  auto [known, inserted] = share_pipeline_.try_emplace(config.pipeline, 0);
  if (inserted) {
    const int64_t per_stage =
        BlocksPerStage(model_.num_blocks, config.pipeline);
    const int64_t moe = StageMoeBlocks(model_, config.pipeline);
    const int64_t common = std::gcd(moe, per_stage);
    known->second =
        pipeline_of_share_
            .try_emplace({moe / common, per_stage / common}, config.pipeline)
            .first->second;
  }
  out.pipeline = known->second;
  return out;
}

absl::StatusOr<BlockTable::Entry*> BlockTable::Find(
    const BlockConfig& config,
    const std::vector<std::pair<int64_t, int64_t>>& expert_variants,
    const std::vector<ContextExchange>& exchanges) {
  const BlockConfig key = Canonical(config);
  auto it = lowered_index_.find(key);
  if (it != lowered_index_.end()) return it->second;
  BP_ASSIGN_OR_RETURN(Lowered* const lowered, Lower(key, nullptr));
  if (!lowered->prices.has_value()) return lowered;  // not in scratch_
  const std::vector<ContextExchange> own_exchange = {key.context_exchange};
  const std::vector<std::pair<int64_t, int64_t>> own_degrees = {
      {key.expert, key.expert_tensor}};
  const auto& variant_exchanges =
      key.context > 1 && !exchanges.empty() ? exchanges : own_exchange;
  const auto& variant_degrees =
      model_.moe.has_value() && !expert_variants.empty() ? expert_variants
                                                         : own_degrees;
  // Those of the structure of `key` (ep > 1 alike) first, each relowered
  // from the one before; then the others, of which the first is lowered in
  // full.
  const Lowered* previous = lowered;
  for (const bool same_structure : {true, false}) {
    for (const ContextExchange exchange : variant_exchanges) {
      for (const auto& [ep, etp] : variant_degrees) {
        BlockConfig variant = config;
        variant.context_exchange = exchange;
        variant.expert = ep;
        variant.expert_tensor = etp;
        variant = Canonical(variant);
        if (((variant.expert > 1) == (key.expert > 1)) != same_structure ||
            lowered_index_.contains(variant)) {
          continue;
        }
        BP_ASSIGN_OR_RETURN(previous, Lower(variant, previous));
      }
    }
  }
  return lowered;
}

void BlockTable::SetProgram(const BlockConfig& key) {
  // The model and the system are copied once.
  // A key below 0: the explicit layout that represents its shares.
  const std::pair<int64_t, std::vector<int64_t>>* layout =
      key.pipeline < 0 ? &layouts_[static_cast<size_t>(-1 - key.pipeline)]
                       : nullptr;
  const TrainingMapping mapping = BlockMapping(
      key, model_.num_blocks, datatype_, precision_, profile_, variant_,
      layout);
  if (!program_.has_value()) {
    program_ = MappingProgram(model_, system_, mapping);
    return;
  }
  auto& spec = std::get<TransformerTrainingMappingSpec>(program_->spec);
  spec.parallelism = mapping.parallelism;
  spec.batch = mapping.batch;
  spec.options = mapping.options;
  program_->derived = DeriveValues(program_->spec);
}

absl::StatusOr<BlockTable::Lowered*> BlockTable::Lower(
    const BlockConfig& key, const Lowered* previous) {
  SetProgram(key);
  // BlockPrices::Plan prices every block but a TP-overlapped one, lowered
  // without lineage into the table's one scratch IR; that one is lowered in
  // full, priced with the program and planned per tiers by PlanTasks.
  const bool priced = key.tp_overlap == TensorOverlap::kNone;
  DistributedTaskIR& tasks = scratch_;
  const bool relower = previous != nullptr && priced &&
                       (previous->key.expert > 1) == (key.expert > 1);
  if (relower) {
    BP_RETURN_IF_ERROR(LowerTensorParallelBlock().Relower(*program_, sections_,
                                                          tasks, rebuilt_));
  } else if (priced) {
    BP_RETURN_IF_ERROR(LowerTensorParallelBlock().RunWithoutLineage(
        *program_, tasks, &sections_));
  }
  if (!priced || !BlockPrices::Supports(tasks)) {  // the latter not expected
    BP_ASSIGN_OR_RETURN(tasks, LowerTensorParallelBlock().Run(*program_));
  }
  ++blocks_lowered_;
  Lowered& lowered = NextEntry();
  lowered.key = key;
  FillEntry(tasks, relower ? previous : nullptr, rebuilt_, lowered);
  if (!lowered.prices.has_value()) {
    lowered.unpriced = std::make_unique<Unpriced>(
        Unpriced{*program_, BlockPrices(tasks, *program_)});
    tasks = DistributedTaskIR();
  }
  lowered_index_.emplace(key, &lowered);
  return &lowered;
}

void BlockTable::FillEntry(const DistributedTaskIR& tasks,
                           const Lowered* previous,
                           const std::vector<int32_t>& rebuilt,
                           Lowered& lowered) {
  const auto shard_inputs = [this](const Task& task) {
    TaskShardInputs in;
    if (program_rates_) {
      in.weight_cast_time = MemoryTime(
          system_.mem1, TaskQuantizationBytes(task, *program_).weights);
    }
    in.placement = task.placement;
    in.share = task.share;
    // Unsharded, the lowering stores UnshardedWeightGradBytes (elements *
    // 4), WeightGradBytes, OptimizerStateBytes and the weights with shard
    // 1: all exact.
    in.weight_grad_elements =
        task.footprint.weight_grad_unsharded / kFloat32Bytes;
    in.optimizer_bytes = task.footprint.optimizer;
    in.weight_bytes = task.footprint.weight;
    in.forward_flops = task.work[kFw].flops;
    in.activation_grad_flops = task.work[kAgrad].flops;
    in.weight_grad_flops = task.work[kWgrad].flops;
    in.no_processing = std::holds_alternative<TensorCommTask>(task.kind) ||
                       std::holds_alternative<ExchangeTask>(task.kind);
    in.expert_state = task.expert_state;
    in.has_state = in.weight_grad_elements != 0 || in.optimizer_bytes != 0 ||
                   in.weight_bytes != 0;
    return in;
  };
  if (previous != nullptr &&
      (previous->shard_base == nullptr ||
       previous->shard_override_ids == rebuilt)) {
    // The tasks but the rebuilt ones are those of `previous`, whose are
    // those of the entry lowered in full: read from it.
    lowered.shard_base =
        previous->shard_base != nullptr ? previous->shard_base : previous;
    const size_t first_rebuilt = rebuilt.empty()
                                     ? tasks.tasks.size()
                                     : static_cast<size_t>(rebuilt.front());
    if (footprint_prefix_root_ != lowered.shard_base ||
        footprint_prefix_end_ != first_rebuilt) {
      footprint_prefix_ = StagedBlock();
      AddFootprints(tasks, 0, first_rebuilt, footprint_prefix_);
      footprint_prefix_root_ = lowered.shard_base;
      footprint_prefix_end_ = first_rebuilt;
    }
    lowered.footprint = FootprintFigures(tasks, *program_, footprint_prefix_,
                                         footprint_prefix_end_);
    lowered.shard_override_ids = rebuilt;
    ClearForExactly(lowered.shard_inputs, rebuilt.size());
    // A variant reads its root's terms.
    ClearForExactly(lowered.shard_terms, 0);
    for (int32_t id : rebuilt) {
      lowered.shard_inputs.push_back(
          shard_inputs(tasks.tasks[static_cast<size_t>(id)]));
    }
    if (!lowered.prices.has_value()) lowered.prices.emplace();
    if (program_rates_) {
      lowered.prices->RepriceFrom(*previous->prices, tasks, rebuilt,
                                  *program_);
    } else {
      lowered.prices->RepriceFrom(*previous->prices, tasks, rebuilt, system_,
                                  datatype_, achievable_matmul_);
    }
    return;
  }
  // A new shard base (perhaps in the storage of an earlier one).
  footprint_prefix_root_ = nullptr;
  lowered.footprint = FootprintFigures(tasks, *program_);
  lowered.shard_inputs.reserve(tasks.tasks.size());
  for (const Task& task : tasks.tasks) {
    lowered.shard_inputs.push_back(shard_inputs(task));
  }
  if (BlockPrices::Supports(tasks)) {
    if (!lowered.prices.has_value()) lowered.prices.emplace();
    if (program_rates_) {
      lowered.prices->Reprice(tasks, *program_);
    } else {
      lowered.prices->Reprice(tasks, system_, datatype_, achievable_matmul_);
    }
  } else {
    lowered.prices.reset();
  }
}

int64_t BlockTable::LocalExpertPeers(const BlockConfig& key,
                                     int64_t expert_net) const {
  if (!program_.has_value() ||
      !program_->corrections.On(Correction::kHierarchicalAllToAll)) {
    return 1;
  }
  return ExpertLocalPeers(system_, expert_net, key.expert, key.expert_tensor);
}

absl::StatusOr<const BlockTable::PlannedRef*> BlockTable::Unsharded(
    Lowered& lowered, const BlockNets& nets) {
  for (const PlannedRef& planned : lowered.planned) {
    if (SameNets(planned.nets, nets)) return &planned;
  }
  StagedBlock staged;
  const auto tier = [&](int64_t index) -> const NetworkTier& {
    return system_.networks[static_cast<size_t>(index)];
  };
  if (lowered.prices.has_value()) {
    const int64_t local = LocalExpertPeers(lowered.key, nets.expert);
    const NetworkTier& fast = tier(local > 1 ? nets.expert - 1 : nets.expert);
    // All figures but the collectives' are the same on all tiers.
    BlockTiers tiers{&tier(nets.tensor), &tier(nets.expert),
                     &tier(nets.context), &fast, local};
    // Every program of the table has the variant's expert parallelism and
    // the profile's corrections, all SetExpertRules reads of it.
    if (expert_rules_) SetExpertRules(*program_, tiers);
    staged = lowered.prices->Plan(UnshardedCompute(lowered), tiers);
  } else {
    // A TP-overlapped linear's tiling depends on the tensor tier: every
    // figure at once, as PlanPortable prices it.
    const Unpriced& unpriced = *lowered.unpriced;
    const int64_t local = ExpertLocalPeersOf(unpriced.program, nets.expert);
    BlockTiers tiers{&tier(nets.tensor), &tier(nets.expert),
                     &tier(nets.context),
                     &tier(local > 1 ? nets.expert - 1 : nets.expert), local};
    if (expert_rules_) SetExpertRules(unpriced.program, tiers);
    staged = unpriced.prices.PlanTasks(lowered.footprint, tiers);
  }
  ++blocks_planned_;
  Planned& planned = TakePlanned();
  planned.staged = staged;
  lowered.planned.push_back({nets, BoundFiguresOf(staged.block), &planned});
  return &lowered.planned.back();
}

const StagedBlock& BlockTable::UnshardedCompute(Lowered& lowered) {
  if (lowered.compute == nullptr) {
    Planned& compute = TakePlanned();
    compute.staged = lowered.prices->PlanCompute(lowered.footprint);
    lowered.compute = &compute;
    lowered.compute_bound = BoundFiguresOf(compute.staged.block);
  }
  return lowered.compute->staged;
}

BlockTable::TaskShardTerms BlockTable::TermsOf(const TaskShardInputs& in,
                                               double s) const {
  TaskShardTerms t;
  t.optim_flops = OptimizerStepFlops(in.weight_grad_elements, s);
  t.optim_bytes = in.optimizer_bytes / s;
  t.optim_flops_time = FlopTime(vector_rate_, t.optim_flops);
  t.optim_mem_time = MemoryTime(system_.mem1, t.optim_bytes);
  t.optim_time = in.no_processing
                     ? 0
                     : ProcessingTime(system_.processing_mode,
                                      t.optim_flops_time, t.optim_mem_time);
  // As the pricing adds it (block_pricing.cc AddPrices).
  if (program_rates_ && !in.no_processing) t.optim_time += in.weight_cast_time;
  t.weight_space = in.weight_bytes / s;
  const int bytes_per_element = BytesPerElement(datatype_);
  t.grads_whole = WeightGradBytesFor(precision_, in.weight_grad_elements,
                                     bytes_per_element, s, false);
  t.grads_sharded = WeightGradBytesFor(precision_, in.weight_grad_elements,
                                       bytes_per_element, s, true);
  return t;
}

// Mirrors LowerTensorParallelBlock (the optimizer.h terms and
// FillDefaultFootprint, sharded; a routed expert's state by the expert
// shard) and the pricing kernel's sums (core/plan/block_pricing.cc
// AddCompute: in task order, each task weighed by its share, the optimizer
// on the vector engine, TPComm and exchanges never charged as compute) for
// the figures the shard changes;
// block_table_test pins the equality.
void BlockTable::Reshard(const Lowered& lowered, const BlockShard& shard,
                         StageShardTerms& terms) const {
  const double group = static_cast<double>(shard.group);
  // The terms every stage shares, and the two the stages differ in: the
  // weight gradients unsharded (optimizer) or sharded (gradients,
  // parameters), and the weights (parameters only). Each is summed in task
  // order, as one stage's pass would.
  std::array<ShardTerms, kNumPlacements> common{};
  std::array<double, kNumPlacements> grads_whole{}, grads_sharded{},
      weights_sharded{};
  const bool variant = lowered.shard_base != nullptr;
  const Lowered& root = variant ? *lowered.shard_base : lowered;
  // The root's cached terms of the tasks it keeps, when made for this group
  // (a root makes them anew).
  const bool cached = variant && root.shard_terms_group == shard.group;
  if (!variant) {
    root.shard_terms_group = shard.group;
    root.shard_terms.resize(root.shard_inputs.size());
  }
  const std::vector<int32_t>& overrides = lowered.shard_override_ids;
  size_t next_override = 0;
  for (size_t i = 0; i < root.shard_inputs.size(); ++i) {
    const bool own = variant && next_override < overrides.size() &&
                     overrides[next_override] == static_cast<int32_t>(i);
    const TaskShardInputs& in =
        own ? lowered.shard_inputs[next_override++] : root.shard_inputs[i];
    const size_t placement = static_cast<size_t>(in.placement);
    ShardTerms& b = common[placement];
    const double w = in.share;
    if (!in.has_state) {
      // No weights, gradients or optimizer state: every other term below
      // adds +0 (w >= 0; the checked system's rates are positive), so only
      // the useful FLOPs remain, added in the same order.
      b.useful_flops += w * in.forward_flops;
      b.useful_flops +=
          w * (in.activation_grad_flops + in.weight_grad_flops + 0.0);
      continue;
    }
    TaskShardTerms made;
    const TaskShardTerms* t = &made;
    if (in.expert_state) {
      made = TermsOf(in, shard.expert);
    } else if (cached && !own) {
      t = &root.shard_terms[i];
    } else {
      made = TermsOf(in, group);
      if (!variant) root.shard_terms[i] = made;
    }
    b.optim_flops += w * t->optim_flops;
    b.optim_flops_time += w * t->optim_flops_time;
    b.optim_mem_accessed += w * t->optim_bytes;
    b.optim_mem_time += w * t->optim_mem_time;
    b.optim_time += w * t->optim_time;
    weights_sharded[placement] += w * t->weight_space;
    grads_whole[placement] += w * t->grads_whole;
    grads_sharded[placement] += w * t->grads_sharded;
    b.optimizer_space += w * t->optim_bytes;
    b.useful_flops += w * in.forward_flops;
    b.useful_flops +=
        w * (in.activation_grad_flops + in.weight_grad_flops + t->optim_flops);
  }
  for (ShardingStage stage :
       {ShardingStage::kOptimizer, ShardingStage::kGradients,
        ShardingStage::kParameters}) {
    std::array<ShardTerms, kNumPlacements>& out =
        terms[static_cast<size_t>(StageSlot(stage))];
    for (size_t placement = 0; placement < common.size(); ++placement) {
      out[placement] = common[placement];
      out[placement].weight_space = stage == ShardingStage::kParameters
                                        ? weights_sharded[placement]
                                        : 0;
      out[placement].weight_grad_space = stage >= ShardingStage::kGradients
                                             ? grads_sharded[placement]
                                             : grads_whole[placement];
    }
  }
}

void BlockTable::ShardFigures(
    const StagedBlock& unsharded,
    const std::array<ShardTerms, kNumPlacements>& terms, ShardingStage stage,
    StagedBlock& out) {
  out = unsharded;
  for (int placement = 0; placement < kNumPlacements; ++placement) {
    const ShardTerms& t = terms[static_cast<size_t>(placement)];
    BlockFigures& b = FiguresOf(static_cast<Placement>(placement), out);
    b.block_optim_flops = t.optim_flops;
    b.block_optim_flops_time = t.optim_flops_time;
    b.block_optim_mem_accessed = t.optim_mem_accessed;
    b.block_optim_mem_time = t.optim_mem_time;
    b.block_optim_time = t.optim_time;
    if (stage == ShardingStage::kParameters) {
      b.block_weight_space = t.weight_space;
    }
    b.block_weight_grad_space = t.weight_grad_space;
    b.block_optimizer_space = t.optimizer_space;
    b.useful_flops = t.useful_flops;
  }
}

BlockTable::ShardedSlot& BlockTable::ShardedOf(Lowered& lowered,
                                               const BlockShard& shard) {
  ShardedSlot& slot =
      lowered.sharded[static_cast<size_t>(StageSlot(shard.stage))];
  if (slot.group != shard.group || slot.expert != shard.expert) {
    // One pass gives every stage's terms (the search asks for the stages
    // one after another with the same shard): each stage's variant made
    // for another shard takes them too.
    Reshard(lowered, shard, reshard_scratch_);
    ++blocks_resharded_;
    for (size_t k = 0; k < lowered.sharded.size(); ++k) {
      ShardedSlot& other = lowered.sharded[k];
      if (other.group == shard.group && other.expert == shard.expert) {
        continue;
      }
      if (other.variant == nullptr) other.variant = &TakeSharded();
      other.group = shard.group;
      other.expert = shard.expert;
      ReleaseComposed(*other.variant);
      other.variant->terms = reshard_scratch_[k];
    }
  }
  return slot;
}

const StagedBlock* BlockTable::ShardOnce(const StagedBlock& unsharded,
                                         const Sharded& variant,
                                         ShardingStage stage, Planned*& made) {
  if (made == nullptr) {
    made = &TakePlanned();
    ShardFigures(unsharded, variant.terms, stage, made->staged);
  }
  return &made->staged;
}

const StagedBlock* BlockTable::Footprint(Entry* entry,
                                         const BlockShard& shard) {
  if (shard.stage == ShardingStage::kNone) return &entry->footprint;
  Sharded& variant = *ShardedOf(*entry, shard).variant;
  return ShardOnce(entry->footprint, variant, shard.stage, variant.footprint);
}

const StagedBlock* BlockTable::Compute(Entry* entry, const BlockShard& shard) {
  if (!entry->prices.has_value()) return nullptr;
  const StagedBlock& unsharded = UnshardedCompute(*entry);
  if (shard.stage == ShardingStage::kNone) return &unsharded;
  Sharded& variant = *ShardedOf(*entry, shard).variant;
  return ShardOnce(unsharded, variant, shard.stage, variant.compute);
}

BoundFigures BlockTable::ShardedBound(const BoundFigures& unsharded,
                                      const Sharded& variant) {
  // ShardFigures changes one figure of those the bound reads: the block's
  // optimizer step time (block_table_test checks the kept bounds of every
  // variant against the full passes').
  BoundFigures bound = unsharded;
  bound.block_optim_time =
      variant.terms[static_cast<size_t>(Placement::kEveryBlock)].optim_time;
  return bound;
}

std::optional<BoundFigures> BlockTable::ComputeBound(Entry* entry,
                                                     const BlockShard& shard) {
  if (!entry->prices.has_value()) return std::nullopt;
  UnshardedCompute(*entry);
  if (shard.stage == ShardingStage::kNone) return entry->compute_bound;
  return ShardedBound(entry->compute_bound, *ShardedOf(*entry, shard).variant);
}

absl::StatusOr<BlockTable::PlannedBlock> BlockTable::GetPlanned(
    Entry* entry, const BlockNets& nets, const BlockShard& shard,
    bool compose) {
  // Only the tiers the block's collectives use.
  const BlockConfig& key = entry->key;
  BlockNets used = nets;
  if (key.tensor <= 1) used.tensor = 0;
  if (key.context <= 1) used.context = 0;
  if (key.expert <= 1) used.expert = 0;
  if (shard.stage == ShardingStage::kNone) {
    BP_ASSIGN_OR_RETURN(const PlannedRef* planned, Unsharded(*entry, used));
    return PlannedBlock{&planned->planned->staged, &planned->bound};
  }
  Sharded& sharded = *ShardedOf(*entry, shard).variant;
  PlannedRef* ref = nullptr;
  for (PlannedRef& composed : sharded.composed) {
    if (SameNets(composed.nets, used)) {
      ref = &composed;
      break;
    }
  }
  const PlannedRef* unsharded = nullptr;
  if (ref == nullptr) {
    BP_ASSIGN_OR_RETURN(unsharded, Unsharded(*entry, used));
    sharded.composed.push_back(
        {used, ShardedBound(unsharded->bound, sharded), nullptr});
    ref = &sharded.composed.back();
  }
  if (ref->planned == nullptr && compose) {
    if (unsharded == nullptr) {
      BP_ASSIGN_OR_RETURN(unsharded, Unsharded(*entry, used));
    }
    ref->planned = &TakePlanned();
    ShardFigures(unsharded->planned->staged, sharded.terms, shard.stage,
                 ref->planned->staged);
  }
  return PlannedBlock{ref->planned != nullptr ? &ref->planned->staged : nullptr,
                      &ref->bound};
}

absl::StatusOr<const StagedBlock*> BlockTable::Get(Entry* entry,
                                                   const BlockNets& nets,
                                                   const BlockShard& shard) {
  BP_ASSIGN_OR_RETURN(const PlannedBlock planned,
                      GetPlanned(entry, nets, shard));
  return planned.staged;
}

absl::StatusOr<const StagedBlock*> BlockTable::Get(const BlockConfig& config,
                                                   const BlockNets& nets,
                                                   const BlockShard& shard) {
  BP_ASSIGN_OR_RETURN(Entry * entry, Find(config));
  return Get(entry, nets, shard);
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
