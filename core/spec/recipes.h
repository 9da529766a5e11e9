// The low-precision training recipes (options.recipe), one row each: the
// GEMM datatype a recipe runs, the bits of its elements, its scaling blocks
// and scale bytes, and whether it reads a tensor once more for its amax;
// and the one formula of the bytes its quantization passes move, which the
// plan prices (core/plan/plan.cc) and the report sums
// (quantization_time_per_rank).
//
// A GEMM Y[m,k] = X[m,n] W[n,k] in a recipe quantizes, as Transformer
// Engine's te.Linear does (transformer_engine/pytorch/module/linear.py,
// _Linear.forward and backward):
//   forward:  X, read once in the 16-bit datatype, written twice: row-wise
//             for the forward GEMM and column-wise for the weight gradient
//             (the transposed copy every recipe keeps: Hopper's FP8 GEMMs
//             take only the TN layout, and block scales are directional);
//   backward: dY likewise, row-wise for dgrad and column-wise for wgrad;
//   per step: W, cast once (weights are cached across microbatches,
//             is_first_microbatch), row-wise for fprop and column-wise for
//             dgrad.
// A recipe with a tensor scale from the current amax (tensorwise, NVFP4's
// global scale) reads each tensor once more before its cast.
//
// Example:
//   const RecipeInfo& r = RecipeOf(QuantizationRecipe::kMxfp8);
//   QuantizationBytes q = GemmQuantizationBytes(r, m, n, k, 2);
#ifndef BLUEPRINTING_CORE_SPEC_RECIPES_H_
#define BLUEPRINTING_CORE_SPEC_RECIPES_H_

#include <cstdint>

#include "core/spec/spec.h"

namespace blueprint {

struct RecipeInfo {
  QuantizationRecipe recipe;
  DataType gemm_datatype;  // the matrix engine's rate it runs at
  double element_bits;     // 8 (FP8), 4 (E2M1)
  // Elements per scale of activations and gradients, and of weights (0: one
  // scale per tensor, which is negligible).
  double activation_block;
  double weight_block;
  double scale_bytes;  // bytes per block scale
  bool amax_pass;      // reads the tensor once more for its amax
  // The matrix rate a system must have to run the recipe (SystemRunsRecipe):
  // its GEMM datatype's, but float4's for MXFP8. The microscaled recipes
  // need tensor cores that apply E8M0 / E4M3 block scales in the MMA,
  // which came with the first E2M1 tensor cores (Blackwell); Hopper and Ada
  // run FP8 with tensor scales only, and Transformer Engine refuses MXFP8
  // and NVFP4 there (compute capability 10.0 and up). A system file has no
  // other mark of that generation than its float4 rate, and Megatron-Bridge
  // runs MXFP8 and NVFP4 only on B200, B300, GB200 and GB300
  // (tests/validation/bridge_recipes.json).
  DataType hardware_datatype;
  // Whether Megatron-Bridge's recipe of it gathers FP8 parameters
  // (fp8_param_gather, Megatron-LM's --fp8-param-gather: the weights kept
  // and all-gathered in FP8, options.weight_datatype float8):
  // training/mixed_precision.py bf16_with_fp8_delayed_scaling_mixed,
  // bf16_with_fp8_current_scaling_mixed and bf16_with_mxfp8_mixed do,
  // bf16_with_fp8_subchannel_scaling_mixed (blockwise) and
  // bf16_with_nvfp4_mixed do not (tests/validation/make_corpus.py
  // BRIDGE_PRECISION_FLAGS).
  bool fp8_param_gather;
  const char* source;
};

// NVIDIA Transformer Engine, transformer_engine/common/recipe/__init__.py
// (DelayedScaling, Float8CurrentScaling, Float8BlockScaling,
// MXFP8BlockScaling, NVFP4BlockScaling); the OCP Microscaling Formats
// spec v1.0 (MXFP8: 32 elements, E8M0 scales); NVIDIA, "Pretraining Large
// Language Models with NVFP4", arXiv:2509.25149, Sec. 4 (1x16 blocks of
// activations and gradients, 16x16 of weights, E4M3 scales, an fp32 tensor
// scale from the tensor's amax).
inline constexpr RecipeInfo kRecipeInfos[] = {
    {QuantizationRecipe::kNone, DataType::kFloat8, 8, 0, 0, 0, false,
     DataType::kFloat8, false, "no recipe"},
    {QuantizationRecipe::kFp8Delayed, DataType::kFloat8, 8, 0, 0, 0, false,
     DataType::kFloat8, true,
     "TE DelayedScaling: scale from the amax history, amax taken in the cast"},
    {QuantizationRecipe::kFp8Tensorwise, DataType::kFloat8, 8, 0, 0, 0, true,
     DataType::kFloat8, true,
     "TE Float8CurrentScaling: the tensor's amax, then the cast"},
    {QuantizationRecipe::kFp8Blockwise, DataType::kFloat8, 8, 128,
     128.0 * 128.0, 4, false, DataType::kFloat8, false,
     "TE Float8BlockScaling: fp32 scales per 1x128 and 128x128 block"},
    {QuantizationRecipe::kMxfp8, DataType::kFloat8, 8, 32, 32, 1, false,
     DataType::kFloat4, true,
     "TE MXFP8BlockScaling; OCP MX v1.0: E8M0 scale per 32 elements"},
    {QuantizationRecipe::kNvfp4, DataType::kFloat4, 4, 16, 256, 1, true,
     DataType::kFloat4, false,
     "TE NVFP4BlockScaling; arXiv:2509.25149 Sec. 4: E4M3 per 1x16 / "
     "16x16, fp32 tensor scale"},
};

// The row of `recipe` (every recipe has one: enums_test checks the table
// against the enum's).
const RecipeInfo& RecipeOf(QuantizationRecipe recipe);

// Whether `system` runs `recipe`: its matrix engine has a rate for the
// recipe's hardware_datatype (kNone: every system). The checker refuses a
// recipe where it does not hold (check_options.cc CheckRecipe); the search
// offers a recipe only where it holds (core/search, --recipes all).
bool SystemRunsRecipe(const System& system, QuantizationRecipe recipe);

// The bytes the quantization passes of one GEMM move, per stage of its
// work: forward (X, per microbatch), backward (dY, per microbatch) and the
// weights (W, per step).
struct QuantizationBytes {
  double forward = 0;
  double backward = 0;
  double weights = 0;
};

// One GEMM Y[m,k] = X[m,n] W[n,k] whose inputs are read at `source_bytes`
// bytes per element (the 16-bit datatype); all zero for kNone.
QuantizationBytes GemmQuantizationBytes(const RecipeInfo& recipe, double m,
                                        double n, double k,
                                        double source_bytes);

// The reads of the forward cast of X[m,n] alone (what a norm that writes
// the quantized input itself saves; core/plan/plan.cc).
double ForwardCastReadBytes(const RecipeInfo& recipe, double m, double n,
                            double source_bytes);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_RECIPES_H_
