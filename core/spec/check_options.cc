// The checker's rules on the options: datatypes and recipes (rule 3 of
// core/spec/README.md) and the options' combinations with the mapping
// (rule 12).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/checked_math.h"
#include "core/base/field_errors.h"
#include "core/spec/check_internal.h"
#include "core/spec/derive.h"
#include "core/spec/recipes.h"

namespace blueprint {
namespace check_internal {

// Calculon's System.set_datatype: both engines must support the datatype.
void CheckDatatype(const SpecView& view, Collector* out) {
  const DataType datatype = view.options->datatype;
  const struct {
    const Processor* engine;
    const char* path;
    const char* field;
    DataType datatype;
  } uses[] = {
      {&view.system->matrix, "system.matrix", "options.datatype", datatype},
      {&view.system->vector, "system.vector", "options.datatype", datatype},
      // The GEMMs run on the matrix engine in their own datatype.
      {&view.system->matrix, "system.matrix", "options.gemm_datatype",
       view.options->gemm_datatype.value_or(datatype)},
  };
  for (const auto& use : uses) {
    if (use.engine->rates.count(use.datatype) > 0) continue;
    if (use.field != std::string("options.datatype") &&
        use.datatype == datatype) {
      continue;  // reported as options.datatype
    }
    std::vector<std::string> supported;
    for (const auto& [name, rate] : use.engine->rates) {
      supported.push_back(DataTypeName(name));
    }
    out->Add(
        use.field, ErrorCode::kInconsistent,
        absl::StrCat(
            use.field, " (", DataTypeName(use.datatype),
            ") is not supported by ", use.path, " (it has: ",
            supported.empty() ? "none" : absl::StrJoin(supported, ", "), ")"));
  }
}

// The gradient reduction moves float32 or the datatype's elements
// (Megatron-LM reduces in fp32 or in the parameters' datatype); inference
// reduces no gradients.
void CheckGradReduceDatatype(const SpecView& view, Collector* out) {
  const std::optional<DataType>& reduce = view.options->grad_reduce_datatype;
  if (!reduce.has_value()) return;
  if (!view.training) {
    out->Add("options.grad_reduce_datatype", ErrorCode::kInconsistent,
             absl::StrCat("options.grad_reduce_datatype is ",
                          DataTypeName(*reduce),
                          ", but an inference spec reduces no gradients: "
                          "leave it null"));
    return;
  }
  const DataType datatype = view.options->datatype;
  if (*reduce != DataType::kFloat32 && *reduce != datatype) {
    out->Add("options.grad_reduce_datatype", ErrorCode::kInconsistent,
             absl::StrCat("options.grad_reduce_datatype is ",
                          DataTypeName(*reduce),
                          ", but the gradients are reduced in float32 or in "
                          "options.datatype (",
                          DataTypeName(datatype), ")"));
  }
}

// float4 is a GEMM datatype only (no tensor is stored or reduced in it but
// by its recipe), and the recipe and the GEMM datatype agree: a recipe runs
// its GEMMs at its own datatype's rate (core/spec/recipes.h), float4 GEMMs
// need NVFP4's block scales, and the system runs the recipe.
void CheckRecipe(const SpecView& view, Collector* out) {
  const ExecutionOptions& o = *view.options;
  const struct {
    const char* field;
    std::optional<DataType> datatype;
  } stored[] = {{"options.datatype", o.datatype},
                {"options.weight_datatype", o.weight_datatype},
                {"options.grad_reduce_datatype", o.grad_reduce_datatype}};
  for (const auto& use : stored) {
    if (use.datatype != DataType::kFloat4) continue;
    out->Add(use.field, ErrorCode::kInconsistent,
             absl::StrCat(use.field,
                          " is float4, but float4 is a GEMM datatype only "
                          "(options.gemm_datatype with recipe nvfp4)"));
  }
  const DataType gemm = o.gemm_datatype.value_or(o.datatype);
  if (o.recipe == QuantizationRecipe::kNone) {
    if (gemm == DataType::kFloat4) {
      out->Add("options.recipe", ErrorCode::kInconsistent,
               "options.gemm_datatype is float4, but options.recipe is none: "
               "FP4 GEMMs need the nvfp4 recipe's block scales");
    }
    return;
  }
  const DataType want = RecipeOf(o.recipe).gemm_datatype;
  if (gemm != want) {
    out->Add("options.gemm_datatype", ErrorCode::kInconsistent,
             absl::StrCat("options.gemm_datatype is ", DataTypeName(gemm),
                          ", but options.recipe ", RecipeName(o.recipe),
                          " runs its GEMMs in ", DataTypeName(want)));
  }
  // The search's rule too (SystemRunsRecipe): the microscaled recipes need
  // tensor cores that apply block scales, marked by a float4 rate. Where
  // that is the GEMM datatype, CheckDatatype already names the missing rate.
  const DataType hardware = RecipeOf(o.recipe).hardware_datatype;
  if (view.system != nullptr && hardware != want &&
      !SystemRunsRecipe(*view.system, o.recipe)) {
    out->Add("options.recipe", ErrorCode::kUnsupported,
             absl::StrCat("options.recipe ", RecipeName(o.recipe),
                          " needs a GPU with ", DataTypeName(hardware),
                          " tensor cores, but system.matrix has no ",
                          DataTypeName(hardware), " rate"));
  }
}

// The recipe's unquantized first and last blocks (Megatron-LM,
// megatron/core/transformer/transformer_config.py __post_init__): each
// between 0 and num_layers // p, and none with delayed scaling ("Delayed
// scaling does not support first / last layer in BF16"); and a recipe to
// leave, since without one every block runs in options.datatype already.
void CheckUnquantizedBlocks(const SpecView& view, Collector* out) {
  const ExecutionOptions& o = *view.options;
  const int64_t p = view.pipeline->degree;
  const int64_t most =
      p > 0 ? std::max<int64_t>(view.model->num_blocks / p, 0) : kMaxCount;
  const struct {
    const char* field;
    int64_t value;
  } counts[] = {{"options.unquantized_first_blocks", o.unquantized_first_blocks},
                {"options.unquantized_last_blocks", o.unquantized_last_blocks}};
  for (const auto& count : counts) {
    if (count.value < 0 || count.value > most) {
      out->Add(count.field, ErrorCode::kOutOfRange,
               absl::StrCat(Named(count.field, count.value),
                            " must be between 0 and model.num_blocks / "
                            "parallelism.pipeline.degree (", most,
                            "), as Megatron-LM requires"));
      continue;
    }
    if (count.value == 0) continue;
    if (o.recipe == QuantizationRecipe::kNone) {
      out->Add(count.field, ErrorCode::kInconsistent,
               absl::StrCat(Named(count.field, count.value),
                            " needs a recipe to leave, but options.recipe "
                            "is none"));
    } else if (o.recipe == QuantizationRecipe::kFp8Delayed) {
      out->Add(count.field, ErrorCode::kInconsistent,
               absl::StrCat(Named(count.field, count.value),
                            " with options.recipe fp8_delayed: delayed "
                            "scaling does not support blocks outside the "
                            "recipe (Megatron-LM)"));
    }
  }
}

void CheckOptions(const SpecView& view, const MappingValues& values,
                  Collector* out) {
  const TensorParallel& tensor = *view.tensor;
  if (tensor.overlap != TensorOverlap::kNone && tensor.degree == 1) {
    out->Add("parallelism.tensor.overlap", ErrorCode::kInconsistent,
             absl::StrCat("parallelism.tensor.overlap (",
                          TensorOverlapName(tensor.overlap),
                          ") requires parallelism.tensor.degree > 1 (got 1)"));
  }
  const auto* rs_ag =
      std::get_if<ReduceScatterAllGather>(&tensor.communication);
  if (rs_ag != nullptr && rs_ag->all_gather_redo &&
      view.recompute == RecomputePolicy::kFull) {
    out->Add("parallelism.tensor.communication.all_gather_redo",
             ErrorCode::kInconsistent,
             "parallelism.tensor.communication.all_gather_redo cannot be "
             "combined with parallelism.recompute (full): full recompute "
             "already redoes every all-gather");
  }
  if (view.sharding != nullptr &&
      ShardingStageOf(*view.sharding) != ShardingStage::kNone) {
    const char* name = DataShardingName(*view.sharding);
    const int64_t group = ShardingGroupOf(*view.sharding, 0);
    if (view.data_degree == 1) {
      out->Add("parallelism.data.sharding", ErrorCode::kInconsistent,
               absl::StrCat("parallelism.data.sharding (", name,
                            ") requires parallelism.data.degree > 1 (got "
                            "1)"));
    } else if (group < 0 || group == 1 ||
               (view.data_degree >= 1 && group > 0 &&
                view.data_degree % group != 0)) {
      out->Add("parallelism.data.sharding.group", ErrorCode::kNotDivisible,
               absl::StrCat(Named("parallelism.data.sharding.group", group),
                            " must be 0 (all of parallelism.data.degree) or "
                            "a divisor of ",
                            Named("parallelism.data.degree", view.data_degree),
                            " above 1"));
    }
  }
  const TransformerModel& m = *view.model;
  if (tensor.overlap != TensorOverlap::kNone &&
      (m.moe.has_value() || m.latent_attention.has_value())) {
    out->Add("parallelism.tensor.overlap", ErrorCode::kUnsupported,
             absl::StrCat("parallelism.tensor.overlap (",
                          TensorOverlapName(tensor.overlap),
                          ") is not modelled with ",
                          m.moe.has_value() ? "model.moe" :
                                              "model.latent_attention",
                          ": use none"));
  }
  out->AddMappingRules(values, MappingRuleGroup::kLatent);
  if (view.data_overlap && view.data_degree == 1) {
    out->Add("parallelism.data.overlap", ErrorCode::kInconsistent,
             "parallelism.data.overlap requires parallelism.data.degree > 1 "
             "(got 1)");
  }
  const TransformerModel& model = m;
  if (view.options->attention == AttentionType::kMultiQuery &&
      model.kv_heads != model.attn_heads) {
    out->Add("options.attention", ErrorCode::kInconsistent,
             absl::StrCat("options.attention multiquery (Calculon's one "
                          "key/value head, replicated on every TP rank) "
                          "cannot be combined with ",
                          Named("model.kv_heads", model.kv_heads), " < ",
                          Named("model.attn_heads", model.attn_heads),
                          ": grouped-query attention is set by "
                          "model.kv_heads alone; use multihead"));
  }
  if (!view.training && view.options->offload.optimizer) {
    out->Add("options.offload.optimizer", ErrorCode::kInconsistent,
             "options.offload.optimizer requires a training spec: inference "
             "keeps no optimizer state");
  }
}

// Megatron-LM megatron/core/transformer/transformer_config.py
// (__post_init__, the recompute_modules checks under selective
// granularity) and the layers that read them. Every violation is reported.
void CheckRecomputeModules(const SpecView& view, Collector* out) {
  const RecomputeModules modules = view.recompute_modules;
  if (modules.empty()) return;
  const char* kField = "parallelism.recompute_modules";
  const auto named = [](RecomputeModule m) {
    return absl::StrCat("parallelism.recompute_modules (\"",
                        RecomputeModuleName(m), "\")");
  };
  if (view.recompute == RecomputePolicy::kFull) {
    // Megatron-LM reads the modules only with selective granularity; a
    // spec says what runs, so it does not carry modules that do not.
    out->Add(kField, ErrorCode::kInconsistent,
             "parallelism.recompute_modules must be empty with "
             "parallelism.recompute full: full recompute already recomputes "
             "every module (Megatron-LM ignores the modules under full "
             "granularity)");
  }
  const TransformerModel& model = *view.model;
  const bool moe = model.moe.has_value();
  // A dense block exists without MoE or where the layer pattern has a 0.
  const bool dense = !moe || model.moe->layer_pattern.find('0') !=
                                 std::string::npos;
  const ExpertParallel* expert = view.expert;
  if (modules.Has(RecomputeModule::kMlaUpProj) &&
      !model.latent_attention.has_value()) {
    out->Add(kField, ErrorCode::kInconsistent,
             absl::StrCat(named(RecomputeModule::kMlaUpProj),
                          " needs model.latent_attention (null): "
                          "Megatron-LM supports it only with "
                          "multi_latent_attention"));
  }
  for (RecomputeModule m : {RecomputeModule::kMoeAct, RecomputeModule::kMoe,
                            RecomputeModule::kSharedExperts}) {
    if (modules.Has(m) && !moe) {
      out->Add(kField, ErrorCode::kInconsistent,
               absl::StrCat(named(m),
                            " needs MoE blocks: model.moe is null (the "
                            "module is in Megatron-LM's MoE layer)"));
    }
  }
  if (modules.Has(RecomputeModule::kSharedExperts) && moe &&
      model.moe->shared_ffn == 0) {
    out->Add(kField, ErrorCode::kInconsistent,
             absl::StrCat(named(RecomputeModule::kSharedExperts),
                          " needs shared experts: model.moe.shared_ffn is "
                          "0"));
  }
  if (modules.Has(RecomputeModule::kMlp) && !dense) {
    // transformer_layer.py: recompute_mlp only `if not self.is_moe_layer`.
    out->Add(kField, ErrorCode::kInconsistent,
             absl::StrCat(named(RecomputeModule::kMlp),
                          " needs a dense block, but every block is MoE "
                          "(model.moe.layer_pattern); Megatron-LM recomputes "
                          "\"mlp\" in dense layers only (use \"moe\")"));
  }
  if (expert == nullptr) return;
  if (modules.Has(RecomputeModule::kSharedExperts) &&
      expert->shared_expert_overlap) {
    out->Add(kField, ErrorCode::kInconsistent,
             absl::StrCat(named(RecomputeModule::kSharedExperts),
                          " cannot run with "
                          "parallelism.expert.shared_expert_overlap (true), "
                          "as Megatron-LM raises"));
  }
  if (modules.Has(RecomputeModule::kMoe) && expert->overlap) {
    out->Add(kField, ErrorCode::kInconsistent,
             absl::StrCat(named(RecomputeModule::kMoe),
                          " cannot run with parallelism.expert.overlap "
                          "(true), as Megatron-LM asserts"));
  }
}

}  // namespace check_internal
}  // namespace blueprint
