#include "core/plan/program_rules.h"

#include <algorithm>
#include <cstdint>
#include <variant>

#include "absl/strings/match.h"
#include "core/base/status_macros.h"
#include "core/plan/hardware.h"
#include "core/plan/quirks.h"
#include "core/schedule/schedule_table.h"
#include "core/spec/spec_schedule.h"

namespace blueprint {

void AddTaskFootprint(const Task& task, bool training, BlockFigures& b) {
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

void FinishBlockFootprint(const TypedProgram& program, bool training,
                          BlockFigures& b) {
  const DerivedValues& d = program.derived;
  const bool full = d.recompute == RecomputePolicy::kFull;
  if (full) b.block_act_storage_space = 0;
  // Quirk (MODEL.md §6.6): the checkpoint is b*s*h elements, not divided by t
  // even under sequence parallelism.
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

const ExpertParallel* ExpertParallelismOf(const TypedProgram& program) {
  const auto* training =
      std::get_if<TransformerTrainingMappingSpec>(&program.spec);
  return training == nullptr ? nullptr : &training->parallelism.expert;
}

bool NodeDeduplicatedDispatch(const TypedProgram& program) {
  const ExpertParallel* expert = ExpertParallelismOf(program);
  if (expert == nullptr ||
      !program.corrections.On(Correction::kNodeDeduplicatedDispatch)) {
    return false;
  }
  switch (expert->dispatcher) {
    case ExpertDispatcher::kAllToAll:
    case ExpertDispatcher::kAllGather:
      return false;
    case ExpertDispatcher::kDeepEp:
    case ExpertDispatcher::kHybridEp:
      return true;
  }
  return false;
}

int64_t ExpertLocalPeersOf(const TypedProgram& program,
                           int64_t expert_network) {
  if (!program.corrections.On(Correction::kHierarchicalAllToAll) &&
      !NodeDeduplicatedDispatch(program)) {
    return 1;
  }
  return ExpertLocalPeers(program.system(), expert_network,
                          program.derived.expert,
                          program.derived.expert_tensor);
}

namespace {

// The GEMMs Megatron-LM builds outside Transformer Engine, which therefore
// run in the 16-bit datatype under the refined profile's correction
// kHeadAndRouterInDatatype (core/spec/corrections.h), by the end of their
// task name (an MTP block's output layer is "Mtp1_Head_Logits").
constexpr const char* kDatatypeGemmNames[] = {
    "Head_Logits",      // gpt_model.py: output_layer, ColumnParallelLinear
    "MoeBlock_Router",  // moe/router.py: Router.gating, torch linear
};

bool RunsOutsideTransformerEngine(const Task& task) {
  for (const char* suffix : kDatatypeGemmNames) {
    if (absl::EndsWith(task.name, suffix)) return true;
  }
  return false;
}

// The linears Megatron-LM's Transformer Engine layer spec fuses with the
// norm before them (TELayerNormColumnParallelLinear: linear_qkv,
// linear_fc1), by the end of their task name: the norm kernel writes the
// quantized input itself (transformer_engine/pytorch/module/
// layernorm_linear.py, _LayerNormLinear.forward, with_quantized_norm), so
// their forward cast reads nothing of its own.
constexpr const char* kNormFusedGemmNames[] = {
    "AttnBlock_Query", "AttnBlock_Key",   "AttnBlock_Value",
    "AttnBlock_Query_Down", "AttnBlock_KV_Down", "MlpBlock_Mlp1",
};

bool FusedWithItsNorm(const Task& task) {
  for (const char* suffix : kNormFusedGemmNames) {
    if (absl::EndsWith(task.name, suffix)) return true;
  }
  return false;
}

}  // namespace

bool InDatatypeOutsideTransformerEngine(const Task& task,
                                        const TypedProgram& program) {
  return program.corrections.On(Correction::kHeadAndRouterInDatatype) &&
         RunsOutsideTransformerEngine(task);
}

DataType GemmDatatype(const TypedProgram& program) {
  const ExecutionOptions& options = program.options();
  return options.gemm_datatype.value_or(options.datatype);
}
DataType AttentionDatatype(const TypedProgram& program) {
  return program.corrections.On(Correction::kAttentionInDatatype)
             ? program.options().datatype
             : GemmDatatype(program);
}

DataType MatrixDatatype(const Task& task, const TypedProgram& program) {
  if (std::holds_alternative<BatchMatMulTask>(task.kind)) {
    return AttentionDatatype(program);
  }
  if (InDatatypeOutsideTransformerEngine(task, program)) {
    return program.options().datatype;
  }
  return GemmDatatype(program);
}

double UnquantizedBlockShare(const TypedProgram& program) {
  const ExecutionOptions& options = program.options();
  const DerivedValues& d = program.derived;
  const int64_t first = options.unquantized_first_blocks;
  const int64_t last = options.unquantized_last_blocks;
  if (options.recipe == QuantizationRecipe::kNone ||
      (first == 0 && last == 0)) {
    return 0;
  }
  const ScheduleRow& row =
      ScheduleRowOf(ScheduleKindOf(program.pipeline().schedule));
  const bool ends_together = d.pipeline == 1 || row.holds_both_ends;
  const int64_t held = d.blocks_per_stage * d.stages_per_rank;
  const int64_t count =
      std::min(held, ends_together ? first + last : std::max(first, last));
  return static_cast<double>(count) / static_cast<double>(held);
}

bool RunsInRecipe(const Task& task, const TypedProgram& program) {
  const ExecutionOptions& options = program.options();
  return options.recipe != QuantizationRecipe::kNone &&
         MatrixDatatype(task, program) ==
             RecipeOf(options.recipe).gemm_datatype;
}

QuantizationBytes TaskQuantizationBytes(const Task& task,
                                        const TypedProgram& program) {
  const ExecutionOptions& options = program.options();
  if (options.recipe == QuantizationRecipe::kNone ||
      !program.corrections.On(Correction::kQuantizationPasses)) {
    return {};
  }
  const RecipeInfo& recipe = RecipeOf(options.recipe);
  if (MatrixDatatype(task, program) != recipe.gemm_datatype) return {};
  const double source = BytesPerElement(options.datatype);
  const bool norm_fused = FusedWithItsNorm(task);
  // The unquantized blocks cast nothing (their GEMMs take the 16-bit
  // tensors as they are).
  const double quantized = 1 - UnquantizedBlockShare(program);
  const auto gemm = [&](int64_t m, int64_t n, int64_t k) {
    QuantizationBytes q = GemmQuantizationBytes(recipe, m, n, k, source);
    if (norm_fused) q.forward -= ForwardCastReadBytes(recipe, m, n, source);
    if (quantized != 1) {
      q.forward *= quantized;
      q.backward *= quantized;
      q.weights *= quantized;
    }
    return q;
  };
  return std::visit(
      Overloaded{
          [&](const LinearTask& k) { return gemm(k.m, k.n, k.k); },
          [&](const OverlappedLinearTask& k) { return gemm(k.m, k.n, k.k); },
          [](const BatchMatMulTask&) { return QuantizationBytes{}; },
          [](const LayerNormTask&) { return QuantizationBytes{}; },
          [](const DropOutTask&) { return QuantizationBytes{}; },
          [](const GeLUTask&) { return QuantizationBytes{}; },
          [](const SoftMaxTask&) { return QuantizationBytes{}; },
          [](const ElementWiseTask&) { return QuantizationBytes{}; },
          [](const ForkTask&) { return QuantizationBytes{}; },
          [](const TensorCommTask&) { return QuantizationBytes{}; },
          [](const GatedActivationTask&) { return QuantizationBytes{}; },
          [](const EmbeddingTask&) { return QuantizationBytes{}; },
          [](const ExchangeTask&) { return QuantizationBytes{}; },
          [](const PermutationTask&) { return QuantizationBytes{}; },
          [](const RouterKernelsTask&) { return QuantizationBytes{}; },
      },
      task.kind);
}

}  // namespace blueprint
