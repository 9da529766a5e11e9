// The precision recipes end to end (#46): one Llama-3.1-70B mapping on the
// gb200_nvl72 preset imported from Megatron-LM's flags in BF16, MXFP8 and
// NVFP4 is faster in that order, each recipe's quantization kernels are a
// figure that explain traces to the recipe, and NVFP4 on a system without
// a float4 rate is rejected naming the field.
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/match.h"
#include "core/api/analysis_commands.h"
#include "core/api/commands.h"
#include "core/presets/presets.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

using Json = nlohmann::json;

// Megatron-Bridge's GB200 Llama-3 70B pre-training mapping (TP 2, PP 4,
// VP 5 of 80 layers: 4 per chunk), with full recomputation so that the
// BF16 run fits 186 GB.
constexpr const char* kMapping =
    "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 "
    "--num-layers-per-virtual-pipeline-stage 4 --micro-batch-size 1 "
    "--global-batch-size 256 --seq-length 8192 --bf16 "
    "--use-distributed-optimizer --overlap-grad-reduce --sequence-parallel "
    "--recompute-granularity full --recompute-method uniform "
    "--recompute-num-layers 1 --world-size 64";

CommandResult ImportOn(const char* system, const std::string& recipe_flags) {
  const std::string config =
      FindPreset(PresetKind::kModel, "llama3.1-70b");
  std::vector<std::string> words =
      absl::StrSplit(absl::StrCat(kMapping, " ", recipe_flags), ' ',
                     absl::SkipEmpty());
  return ImportMegatron(FindPreset(PresetKind::kSystem, system), words,
                        &config);
}

// The report's figures of the mapping in a recipe (flags "" for BF16).
Json Figures(const std::string& recipe_flags) {
  const CommandResult imported = ImportOn("gb200_nvl72", recipe_flags);
  EXPECT_EQ(imported.exit_code, kExitOk) << recipe_flags;
  const CommandResult analyzed = Analyze(imported.output);
  EXPECT_EQ(analyzed.exit_code, kExitOk)
      << recipe_flags << ": "
      << (analyzed.errors.empty() ? "" : analyzed.errors[0].message);
  if (analyzed.exit_code != kExitOk) return Json::object();
  return Json::parse(analyzed.output)["figures"];
}

TEST(RecipesTest, Gb200Llama70bBf16SlowerThanMxfp8SlowerThanNvfp4) {
  const Json bf16 = Figures("");
  const Json mxfp8 = Figures("--fp8-format e4m3 --fp8-recipe mxfp8");
  const Json nvfp4 = Figures("--fp4-format e2m1 --fp4-recipe nvfp4");
  ASSERT_TRUE(bf16.contains("total_time"));
  ASSERT_TRUE(mxfp8.contains("total_time"));
  ASSERT_TRUE(nvfp4.contains("total_time"));
  EXPECT_GT(bf16["total_time"].get<double>(), mxfp8["total_time"].get<double>());
  EXPECT_GT(mxfp8["total_time"].get<double>(),
            nvfp4["total_time"].get<double>());
  // BF16 has no casts; each recipe's are a visible part of its step, and
  // NVFP4's (an amax pass for its tensor scale) cost more than MXFP8's.
  EXPECT_EQ(bf16["quantization_time_per_rank"].get<double>(), 0);
  const double mx = mxfp8["quantization_time_per_rank"].get<double>();
  const double fp4 = nvfp4["quantization_time_per_rank"].get<double>();
  EXPECT_GT(mx, 0);
  EXPECT_GT(fp4, mx);
  EXPECT_LT(fp4, nvfp4["total_time"].get<double>());
}

TEST(RecipesTest, ExplainTracesTheCastsToTheRecipe) {
  const CommandResult imported =
      ImportOn("gb200_nvl72", "--fp8-format e4m3 --fp8-recipe mxfp8");
  ASSERT_EQ(imported.exit_code, kExitOk);
  const CommandResult explained =
      Explain(imported.output, "quantization_time_per_rank");
  ASSERT_EQ(explained.exit_code, kExitOk);
  EXPECT_TRUE(absl::StrContains(explained.output, "scale_bytes"))
      << explained.output;
  EXPECT_TRUE(
      absl::StrContains(explained.output, "spec:options.recipe = \"mxfp8\""))
      << explained.output;
}

TEST(RecipesTest, Nvfp4NeedsAFloat4Rate) {
  const CommandResult imported =
      ImportOn("h100_sxm_80g", "--fp4-format e2m1 --fp4-recipe nvfp4");
  ASSERT_EQ(imported.exit_code, kExitOk);
  const CommandResult checked = Check(imported.output);
  ASSERT_EQ(checked.exit_code, kExitInvalidInput);
  bool named = false;
  for (const auto& error : checked.errors) {
    named = named || (error.field == "options.gemm_datatype" &&
                      absl::StrContains(error.message, "float4"));
  }
  EXPECT_TRUE(named);
}

TEST(RecipesTest, ARecipeRunsItsOwnGemmDatatype) {
  const CommandResult imported =
      ImportOn("gb200_nvl72", "--fp8-format e4m3 --fp8-recipe mxfp8");
  ASSERT_EQ(imported.exit_code, kExitOk);
  Json spec = Json::parse(imported.output);
  spec["options"]["recipe"] = "nvfp4";
  const CommandResult checked = Check(spec.dump());
  ASSERT_EQ(checked.exit_code, kExitInvalidInput);
  EXPECT_EQ(checked.errors[0].field, "options.gemm_datatype");
  EXPECT_TRUE(absl::StrContains(checked.errors[0].message,
                                "runs its GEMMs in float4"))
      << checked.errors[0].message;
}

// Megatron-LM's BF16 layers: on this VP 5 mapping the first block sits on
// stage 0 and the last two on stage 3, so two of a stage's 20 blocks run
// their GEMMs at the BF16 rate and cast nothing: NVFP4 with them is slower
// than NVFP4 and faster than BF16, and casts 18/20 of NVFP4's bytes.
TEST(RecipesTest, Nvfp4BlocksInBf16AreSlowerAndCastLess) {
  const Json bf16 = Figures("");
  const Json nvfp4 = Figures("--fp4-format e2m1 --fp4-recipe nvfp4");
  const Json layers = Figures(
      "--fp4-format e2m1 --fp4-recipe nvfp4 --first-last-layers-bf16 "
      "--num-layers-at-end-in-bf16 2");
  ASSERT_TRUE(layers.contains("total_time"));
  EXPECT_GT(layers["total_time"].get<double>(),
            nvfp4["total_time"].get<double>());
  EXPECT_LT(layers["total_time"].get<double>(),
            bf16["total_time"].get<double>());
  EXPECT_DOUBLE_EQ(layers["quantization_time_per_rank"].get<double>(),
                   0.9 * nvfp4["quantization_time_per_rank"].get<double>());
}

TEST(RecipesTest, Bf16LayersImportAndExplain) {
  const CommandResult imported = ImportOn(
      "gb200_nvl72",
      "--fp8-format e4m3 --fp8-recipe mxfp8 --first-last-layers-bf16");
  ASSERT_EQ(imported.exit_code, kExitOk);
  const Json spec = Json::parse(imported.output);
  EXPECT_EQ(spec["options"]["unquantized_first_blocks"], 1);
  EXPECT_EQ(spec["options"]["unquantized_last_blocks"], 1);
  const CommandResult explained = Explain(imported.output, "fw_time");
  ASSERT_EQ(explained.exit_code, kExitOk);
  EXPECT_TRUE(absl::StrContains(explained.output,
                                "spec:options.unquantized_first_blocks = 1"))
      << explained.output;
}

// Megatron-LM's rules (transformer_config.py): at most a stage's blocks,
// none with delayed scaling; and a recipe to leave. Every violation at
// once, each naming its field.
TEST(RecipesTest, Bf16LayersRules) {
  const CommandResult imported =
      ImportOn("gb200_nvl72", "--fp8-format e4m3 --fp8-recipe delayed");
  ASSERT_EQ(imported.exit_code, kExitOk);
  Json spec = Json::parse(imported.output);
  spec["options"]["unquantized_first_blocks"] = 21;  // 80 / p 4 = 20
  spec["options"]["unquantized_last_blocks"] = 1;    // with fp8_delayed
  const CommandResult checked = Check(spec.dump());
  ASSERT_EQ(checked.exit_code, kExitInvalidInput);
  ASSERT_EQ(checked.errors.size(), 2u);
  EXPECT_EQ(checked.errors[0].field, "options.unquantized_first_blocks");
  EXPECT_TRUE(absl::StrContains(checked.errors[0].message, "(20)"))
      << checked.errors[0].message;
  EXPECT_EQ(checked.errors[1].field, "options.unquantized_last_blocks");
  EXPECT_TRUE(absl::StrContains(checked.errors[1].message, "fp8_delayed"))
      << checked.errors[1].message;
  spec["options"]["recipe"] = "none";
  spec["options"]["unquantized_first_blocks"] = 1;
  const CommandResult none = Check(spec.dump());
  ASSERT_EQ(none.exit_code, kExitInvalidInput);
  EXPECT_TRUE(absl::StrContains(none.errors[0].message, "recipe is none"))
      << none.errors[0].message;
  EXPECT_EQ(ImportOn("gb200_nvl72",
                     "--fp8-format e4m3 --fp8-recipe delayed "
                     "--first-last-layers-bf16")
                .exit_code,
            kExitOk);  // imports; the checker names the rule
}

}  // namespace
}  // namespace blueprint
