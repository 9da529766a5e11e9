// LowerTensorParallelBlock (lower.h): the block's context, read from the
// program once; the build of a block and its relowering; the pass's entry
// points. The builder's parts are in the files lower_builder.h lists.
#include "core/taskir/lower.h"

#include <algorithm>
#include <new>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/format.h"
#include "core/base/status_macros.h"
#include "core/spec/derive.h"
#include "core/taskir/lower_builder.h"

namespace blueprint {
namespace lower_internal {

BlockContext MakeBlockContext(const TypedProgram& program, bool lineage,
                              bool relowering) {
  const DerivedValues& d = program.derived;
  const TransformerModel& model = program.model();
  BlockContext ctx{model, program.batch(), program.options(), program.tensor(),
                   d};
  ctx.weight_bpe = BytesPerElement(WeightDatatype(program.options()));
  ctx.edge_split = std::holds_alternative<EdgeReduceScatterAllGather>(
      program.tensor().communication);
  ctx.flash_attention = program.corrections.On(Correction::kFlashAttention);
  ctx.causal_factor = ctx.flash_attention && program.corrections.On(
                                                 Correction::kCausalAttention)
                          ? 0.5
                          : 1.0;
  ctx.recompute_core_attention =
      program.corrections.On(Correction::kSelectiveRecomputeCoreAttention);
  if (const auto* training =
          std::get_if<TransformerTrainingMappingSpec>(&program.spec)) {
    ctx.recompute_modules = training->parallelism.recompute_modules;
    ctx.cp_ring =
        training->parallelism.context.exchange == ContextExchange::kRing;
    ctx.shared_covers_exchange =
        training->parallelism.expert.shared_expert_overlap &&
        program.corrections.On(Correction::kSharedExpertOverlap);
    ctx.router_kernels =
        program.corrections.On(Correction::kMoeRouterKernels);
    if (program.corrections.On(Correction::kMoePermutation)) {
      switch (training->parallelism.expert.dispatcher) {
        case ExpertDispatcher::kAllToAll:
          ctx.permutation = MoePermutation::kAllToAll;
          break;
        case ExpertDispatcher::kDeepEp:
          ctx.permutation = MoePermutation::kFlex;
          break;
        case ExpertDispatcher::kHybridEp:
          // token_dispatcher.py _HybridEPManager: HybridEP's dispatch and
          // combine kernels permute as they send ("permute + dispatch a2a +
          // permute", fused_a2a.py HybridEPDispatch); no kernel of its own.
          break;
        case ExpertDispatcher::kAllGather:
          ctx.permutation = MoePermutation::kAllGather;
          break;
      }
    }
    ctx.all_gather_dispatch = training->parallelism.expert.dispatcher ==
                              ExpertDispatcher::kAllGather;
  }
  ctx.s_local = ctx.s() / ctx.cp();
  ctx.batch_seq = ctx.b() * ctx.s_local;
  ctx.activation = ctx.batch_seq * ctx.h();
  ctx.seq_par_activation = (ctx.batch_seq / ctx.t()) * ctx.h();
  if (model.moe.has_value()) {
    const double per_stage = static_cast<double>(d.blocks_per_stage);
    ctx.moe_share = static_cast<double>(d.stage_moe_blocks) / per_stage;
    ctx.dense_share =
        static_cast<double>(d.blocks_per_stage - d.stage_moe_blocks) /
        per_stage;
    ctx.last_block_moe = IsMoeBlock(model, model.num_blocks - 1);
  }
  if (d.sharding != ShardingStage::kNone) {
    const double group_fraction =
        static_cast<double>(d.sharding_group) / static_cast<double>(d.data);
    ctx.expert_shard =
        std::max(1.0, static_cast<double>(d.expert_data) * group_fraction);
  }
  ctx.placement = Placement::kEveryBlock;
  ctx.share = 1;
  ctx.shard =
      d.optimizer_sharding ? static_cast<double>(d.sharding_group) : 1.0;
  ctx.bias = model.linear_bias;
  ctx.lineage = lineage;
  ctx.relowering = relowering;
  return ctx;
}

absl::Status BlockBuilder::Build() {
  used_ = 0;
  ir_.mesh.tp = ctx_.t();
  ir_.mesh.ep = ctx_.ep();
  ir_.mesh.cp = ctx_.cp();
  ir_.training = ctx_.derived.training;
  ir_.bytes_per_element = ctx_.derived.bytes_per_element;
  ir_.optimizer_shard = static_cast<int64_t>(ctx_.shard);
  ir_.overlap = ctx_.tensor.overlap;
  if (ctx_.relowering) return RebuildSections();
  if (record_ != nullptr) record_->sections.clear();
  // Room for the largest block (MoE with latent attention, dense and MoE
  // MLPs, the first and last stage's tasks and MTP blocks): the strategy
  // search lowers thousands of blocks, and moving tasks as the vector grows
  // cost it a tenth of its time.
  ir_.tasks.reserve(96);
  ctx_.placement = Placement::kEveryBlock;
  BuildMlps(BuildAttention(-1));
  if (ctx_.derived.padded_vocabulary > 0) {
    BuildFirstStage();
    BuildLastStage();
  }
  ir_.tasks.erase(ir_.tasks.begin() + static_cast<std::ptrdiff_t>(used_),
                  ir_.tasks.end());
  return absl::OkStatus();
}

absl::Status BlockBuilder::RebuildSections() {
  for (const RelowerSections::Section& section : rebuild_->sections) {
    if (section.first < 0 || section.end < section.first ||
        static_cast<size_t>(section.end) > ir_.tasks.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("relowering: tasks ", section.first, " to ", section.end,
                       " are not in the block being relowered (",
                       ir_.tasks.size(), " tasks)"));
    }
    used_ = static_cast<size_t>(section.first);
    ctx_.placement = section.placement;
    ctx_.share = section.share;
    switch (section.kind) {
      case RelowerSections::Kind::kRoutedExperts:
        // The blocks' MoE share is the program's (the layer pattern, p).
        if (section.placement == Placement::kEveryBlock &&
            section.share != MoeShare(1)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "relowering: the MoE blocks weigh ", FormatDouble(MoeShare(1)),
              " of the stage, in the block being relowered ",
              FormatDouble(section.share)));
        }
        BuildRoutedExperts(section.inputs[0], section.inputs[1]);
        break;
      case RelowerSections::Kind::kContextExchange:
        renaming_ = true;
        BuildContextExchange(section.inputs[0], section.inputs[1]);
        renaming_ = false;
        break;
    }
    BP_RETURN_IF_ERROR(mismatch_);
    if (used_ != static_cast<size_t>(section.end)) {
      return absl::InvalidArgumentError(
          absl::StrCat("relowering: the rebuilt section has ",
                       used_ - static_cast<size_t>(section.first),
                       " tasks, that of the block being relowered ",
                       section.end - section.first));
    }
  }
  return absl::OkStatus();
}

Task& BlockBuilder::NextTask(absl::string_view name) {
  if (ctx_.relowering) {
    const size_t index = used_++;
    if (index >= ir_.tasks.size() ||
        (!renaming_ && ir_.tasks[index].name != name)) {
      if (mismatch_.ok()) {
        mismatch_ = absl::InvalidArgumentError(
            absl::StrCat("relowering: task ", index, " (", name,
                         ") is not in the block being relowered"));
      }
      return discard_;
    }
    rebuilt_->push_back(static_cast<int32_t>(index));
    Task& task = ir_.tasks[index];
    // Rebuilt as below, its dependencies kept (Reads adds none).
    std::string kept_name = std::move(task.name);
    std::vector<int32_t> deps = std::move(task.deps);
    task.~Task();
    new (&task) Task();
    task.name = std::move(kept_name);
    task.deps = std::move(deps);
    return task;
  }
  if (used_ == ir_.tasks.size()) {
    ++used_;
    return ir_.tasks.emplace_back();
  }
  Task& task = ir_.tasks[used_++];
  // Every field back to its default, the storage of the name, the
  // dependencies and the lineage kept.
  std::string kept_name = std::move(task.name);
  std::vector<int32_t> deps = std::move(task.deps);
  std::string pass = std::move(task.lineage.pass);
  std::vector<std::string> sources = std::move(task.lineage.sources);
  kept_name.clear();
  deps.clear();
  pass.clear();
  sources.clear();
  // Rebuilt in place: assigning a new Task would build it and then move
  // each of its some 700 bytes over.
  task.~Task();
  new (&task) Task();
  task.name = std::move(kept_name);
  task.deps = std::move(deps);
  task.lineage.pass = std::move(pass);
  task.lineage.sources = std::move(sources);
  return task;
}

Task& BlockBuilder::TaskAt(int32_t id) {
  if (ctx_.relowering &&
      std::find(rebuilt_->begin(), rebuilt_->end(), id) == rebuilt_->end()) {
    return discard_;
  }
  return ir_.tasks[static_cast<size_t>(id)];
}

namespace {

// The block of `program` into `ir`, with or without each task's lineage,
// where its routed experts are recorded in `record` when given; `rebuild`
// given: only the routed experts it records, their ids put in `rebuilt`
// (see Relower).
absl::Status Lower(const TypedProgram& program, bool lineage,
                   DistributedTaskIR& ir, RelowerSections* record,
                   const RelowerSections* rebuild = nullptr,
                   std::vector<int32_t>* rebuilt = nullptr) {
  return BlockBuilder(MakeBlockContext(program, lineage,
                                       /*relowering=*/rebuild != nullptr),
                      ir, record, rebuild, rebuilt)
      .Build();
}

}  // namespace
}  // namespace lower_internal

using lower_internal::Lower;

absl::StatusOr<DistributedTaskIR> LowerTensorParallelBlock::Run(
    const TypedProgram& program) const {
  DistributedTaskIR ir;
  BP_RETURN_IF_ERROR(Lower(program, /*lineage=*/true, ir, nullptr));
  BP_RETURN_IF_ERROR(VerifyTaskIR(ir));
  return ir;
}

absl::StatusOr<DistributedTaskIR> LowerTensorParallelBlock::RunWithoutLineage(
    const TypedProgram& program) const {
  DistributedTaskIR ir;
  BP_RETURN_IF_ERROR(RunWithoutLineage(program, ir, nullptr));
  return ir;
}

absl::Status LowerTensorParallelBlock::RunWithoutLineage(
    const TypedProgram& program, DistributedTaskIR& ir,
    RelowerSections* sections) const {
  BP_RETURN_IF_ERROR(Lower(program, /*lineage=*/false, ir, sections));
  if (sections != nullptr) {
    sections->others = GemmWork{};
    for (size_t i = 0; i < ir.tasks.size(); ++i) {
      const auto task = static_cast<int32_t>(i);
      const bool rebuilt =
          std::any_of(sections->sections.begin(), sections->sections.end(),
                      [task](const RelowerSections::Section& section) {
                        return section.first <= task && task < section.end;
                      });
      if (!rebuilt) AddGemmWork(ir.tasks[i], sections->others);
    }
  }
  return VerifyTaskIR(ir, TaskIRChecks::kWithoutLineage);
}

absl::Status LowerTensorParallelBlock::Relower(
    const TypedProgram& program, const RelowerSections& sections,
    DistributedTaskIR& ir, std::vector<int32_t>& rebuilt) const {
  rebuilt.clear();
  const DerivedValues& d = program.derived;
  if (ir.tasks.empty() || (ir.mesh.ep > 1) != (d.expert > 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("relowering: the block being relowered has ep ",
                     ir.mesh.ep, ", the program ", d.expert,
                     " (the dispatch and combine exist only for ep > 1)"));
  }
  if (ir.mesh.tp != d.tensor || ir.mesh.cp != d.context ||
      ir.training != d.training ||
      ir.bytes_per_element != static_cast<int>(d.bytes_per_element)) {
    return absl::InvalidArgumentError(
        absl::StrCat("relowering: the block being relowered (tp ", ir.mesh.tp,
                     ", cp ", ir.mesh.cp, ", ", ir.bytes_per_element,
                     " bytes per element) is not the program's (tp ", d.tensor,
                     ", cp ", d.context, ", ", d.bytes_per_element, ")"));
  }
  BP_RETURN_IF_ERROR(Lower(program, /*lineage=*/false, ir,
                           /*record=*/nullptr, &sections, &rebuilt));
  // The other tasks are those of `ir`, verified when it was lowered, their
  // GEMM work summed then.
  return VerifyTaskIR(ir, TaskIRChecks::kWithoutLineage, &rebuilt,
                      &sections.others);
}

}  // namespace blueprint
