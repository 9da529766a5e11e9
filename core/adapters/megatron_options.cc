// The options section's rules of the Megatron-LM adapter
// (megatron_internal.h): the datatype, the FP8/FP4 recipe and the BF16
// layers, the gradient reduction's datatype, and the options Megatron-LM has
// no flag for.
#include <map>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/adapters/megatron_internal.h"
#include "core/base/field_errors.h"

namespace blueprint {
namespace megatron_internal {
namespace {

// The recipe (megatron/training/arguments.py: --fp8-recipe defaults to
// delayed, --fp4-recipe to nvfp4; FP8 and FP4 training exclude each other,
// megatron/core/fp4_utils.py and fp8_utils.py pick one autocast).
void RecipeRules(Conversion* c, bool fp8) {
  const bool fp4 = c->flags.Choice("--fp4-format").has_value();
  const std::optional<std::string> fp8_recipe = c->flags.Choice("--fp8-recipe");
  if (fp8 && fp4) {
    c->Error("options.recipe", ErrorCode::kInconsistent,
             "--fp8-format and --fp4-format cannot both be given: Megatron-LM "
             "trains in one low-precision format");
  }
  if (fp8_recipe && !fp8) {
    c->Error("options.recipe", ErrorCode::kInconsistent,
             absl::StrCat("--fp8-recipe ", *fp8_recipe,
                          " needs --fp8-format: the recipe scales FP8 GEMMs"));
  }
  if (c->flags.Choice("--fp4-recipe") && !fp4) {
    c->Error("options.recipe", ErrorCode::kInconsistent,
             "--fp4-recipe needs --fp4-format: the recipe scales FP4 GEMMs");
  }
  // The BF16 layers (megatron/core/fp8_utils.py is_first_last_bf16_layer:
  // the counts count only with the switch, each 1 by default,
  // transformer_config.py).
  if (c->flags.Switch("--first-last-layers-bf16")) {
    c->spec.options.unquantized_first_blocks =
        c->flags.Integer("--num-layers-at-start-in-bf16").value_or(1);
    c->spec.options.unquantized_last_blocks =
        c->flags.Integer("--num-layers-at-end-in-bf16").value_or(1);
  }
  if (fp4 && !fp8) {
    c->spec.options.gemm_datatype = DataType::kFloat4;
    c->spec.options.recipe = QuantizationRecipe::kNvfp4;
    return;
  }
  if (!fp8) return;
  static const auto* const kRecipes =
      new std::map<std::string, QuantizationRecipe>{
          {"tensorwise", QuantizationRecipe::kFp8Tensorwise},
          {"delayed", QuantizationRecipe::kFp8Delayed},
          {"mxfp8", QuantizationRecipe::kMxfp8},
          {"blockwise", QuantizationRecipe::kFp8Blockwise},
      };
  const auto it = kRecipes->find(fp8_recipe.value_or("delayed"));
  if (it != kRecipes->end()) c->spec.options.recipe = it->second;
}

}  // namespace

// The datatype, and the options Megatron-LM has no flag for.
void OptionsRules(Conversion* c) {
  const bool fp16 = c->flags.Switch("--fp16");
  const bool bf16 = c->flags.Switch("--bf16");
  if (fp16 && bf16) {
    c->Error("options.datatype", ErrorCode::kInconsistent,
             "--fp16 and --bf16 cannot both be given");
  }
  c->spec.options.datatype = fp16   ? DataType::kFloat16
                             : bf16 ? DataType::kBFloat16
                                    : DataType::kFloat32;
  const bool fp8 = c->flags.Choice("--fp8-format").has_value();
  if (fp8) c->spec.options.gemm_datatype = DataType::kFloat8;
  RecipeRules(c, fp8);
  if (c->flags.Switch("--fp8-param-gather")) {
    if (!fp8) {
      c->Error("options.weight_datatype", ErrorCode::kInconsistent,
               "--fp8-param-gather needs --fp8-format: FP8 weights are "
               "Transformer Engine's FP8 training");
    } else {
      c->spec.options.weight_datatype = DataType::kFloat8;
    }
  }
  c->spec.options.precision = PrecisionAccounting::kMegatronMixed;
  // Megatron-Core runs fused (flash) attention: the refined profile's
  // corrections describe it (core/spec/corrections.h).
  c->spec.options.profile = ModelProfile::kRefined;
  c->spec.options.fused_activation = false;
  c->spec.options.attention = AttentionType::kMultiHead;
  c->spec.options.offload = Offload{};
  // megatron/training/arguments.py: with --bf16 the gradients are
  // accumulated and reduced in fp32 unless --grad-reduce-in-bf16 (null
  // leaves that to the refined profile's fp32_gradient_reduction);
  // --accumulate-allreduce-grads-in-fp32 asks for fp32 explicitly.
  if (bf16 && !fp16 && c->flags.Switch("--grad-reduce-in-bf16")) {
    c->spec.options.grad_reduce_datatype = DataType::kBFloat16;
  } else if ((bf16 || fp16) &&
             c->flags.Switch("--accumulate-allreduce-grads-in-fp32")) {
    c->spec.options.grad_reduce_datatype = DataType::kFloat32;
  }
}

}  // namespace megatron_internal
}  // namespace blueprint
