// The Megatron-LM adapter's options flags (megatron_options.cc): the
// mixed-precision accounting, the gradient reduction's datatype and the
// FP8/FP4 recipes.
#include "core/adapters/megatron.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/adapters/megatron_test_util.h"
#include "core/spec/spec.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using megatron_test::Errors;
using megatron_test::Fields;
using megatron_test::Import;
using megatron_test::Notes;
using megatron_test::kModel;

TEST(MegatronPrecision, MixedPrecisionAccounting) {
  EXPECT_EQ(Import(std::string(kModel) + "--bf16").options.precision,
            PrecisionAccounting::kMegatronMixed);
  EXPECT_EQ(Import(std::string(kModel) + "--bf16").options.datatype,
            DataType::kBFloat16);
  // The refined profile counts the fp32 gradient reduction Megatron-LM
  // does with --bf16 (correction fp32_gradient_reduction): nothing to note.
  EXPECT_EQ(Notes(std::string(kModel) + "--bf16 --world-size 2"),
            std::vector<std::string>{});
  EXPECT_FALSE(Import(std::string(kModel) + "--bf16 --world-size 2")
                   .options.grad_reduce_datatype.has_value());
  // --grad-reduce-in-bf16 reduces in bfloat16, as Megatron-LM does; it has
  // no effect with --fp16. --accumulate-allreduce-grads-in-fp32 asks for
  // float32, and --grad-reduce-in-bf16 wins over it (arguments.py).
  EXPECT_EQ(Notes(std::string(kModel) +
                  "--bf16 --world-size 2 --grad-reduce-in-bf16"),
            std::vector<std::string>{});
  EXPECT_EQ(Import(std::string(kModel) +
                   "--bf16 --world-size 2 --grad-reduce-in-bf16")
                .options.grad_reduce_datatype,
            DataType::kBFloat16);
  EXPECT_EQ(Import(std::string(kModel) +
                   "--bf16 --world-size 2 --grad-reduce-in-bf16 "
                   "--accumulate-allreduce-grads-in-fp32")
                .options.grad_reduce_datatype,
            DataType::kBFloat16);
  EXPECT_FALSE(Import(std::string(kModel) +
                      "--fp16 --world-size 2 --grad-reduce-in-bf16")
                   .options.grad_reduce_datatype.has_value());
  EXPECT_EQ(Import(std::string(kModel) +
                   "--fp16 --world-size 2 --accumulate-allreduce-grads-in-fp32")
                .options.grad_reduce_datatype,
            DataType::kFloat32);
  EXPECT_FALSE(Import(std::string(kModel) +
                      "--world-size 2 --accumulate-allreduce-grads-in-fp32")
                   .options.grad_reduce_datatype.has_value());
}

// The recipe flags: --fp8-recipe (default delayed) with --fp8-format, and
// --fp4-format with --fp4-recipe (nvfp4, float4 GEMMs); each recipe flag
// without its format, and the two formats together, are errors.
TEST(MegatronRecipes, ImportEachRecipe) {
  const std::string model = std::string(kModel) + "--bf16 ";
  const struct {
    const char* flags;
    QuantizationRecipe recipe;
    std::optional<DataType> gemm;
  } cases[] = {
      {"", QuantizationRecipe::kNone, std::nullopt},
      {"--fp8-format hybrid", QuantizationRecipe::kFp8Delayed,
       DataType::kFloat8},
      {"--fp8-format e4m3 --fp8-recipe tensorwise",
       QuantizationRecipe::kFp8Tensorwise, DataType::kFloat8},
      {"--fp8-format e4m3 --fp8-recipe blockwise",
       QuantizationRecipe::kFp8Blockwise, DataType::kFloat8},
      {"--fp8-format e4m3 --fp8-recipe mxfp8", QuantizationRecipe::kMxfp8,
       DataType::kFloat8},
      {"--fp4-format e2m1", QuantizationRecipe::kNvfp4, DataType::kFloat4},
      {"--fp4-format e2m1 --fp4-recipe nvfp4", QuantizationRecipe::kNvfp4,
       DataType::kFloat4},
  };
  for (const auto& c : cases) {
    const TransformerTrainingMappingSpec spec = Import(model + c.flags);
    EXPECT_EQ(spec.options.recipe, c.recipe) << c.flags;
    EXPECT_EQ(spec.options.gemm_datatype, c.gemm) << c.flags;
  }
  EXPECT_EQ(Errors(model + "--fp8-recipe mxfp8"),
            std::vector<std::string>{
                "--fp8-recipe mxfp8 needs --fp8-format: the recipe scales FP8 "
                "GEMMs"});
  EXPECT_EQ(Errors(model + "--fp4-recipe nvfp4"),
            std::vector<std::string>{
                "--fp4-recipe needs --fp4-format: the recipe scales FP4 GEMMs"});
  EXPECT_EQ(Fields(model + "--fp8-format e4m3 --fp4-format e2m1"),
            std::vector<std::string>{"options.recipe"});
}

}  // namespace
}  // namespace blueprint
