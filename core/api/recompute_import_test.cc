// `import megatron` of selective recomputation by module (#45): the
// recompute flags of Megatron-Bridge's recipes import over the model
// presets, check and analyse, and cost what they should against the same
// mapping without them.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/api/analysis_commands.h"
#include "core/api/commands.h"
#include "core/presets/presets.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

using Json = nlohmann::json;

// The spec of `import megatron --system h100_sxm_80g --hf-config MODEL --
// FLAGS` (a failure and {} when it does not import).
Json Import(const char* model, const std::string& flags) {
  const std::string config = FindPreset(PresetKind::kModel, model);
  const std::vector<std::string> words =
      absl::StrSplit(flags, ' ', absl::SkipEmpty());
  const CommandResult imported = ImportMegatron(
      FindPreset(PresetKind::kSystem, "h100_sxm_80g"), words, &config);
  EXPECT_EQ(imported.exit_code, kExitOk)
      << model << ": "
      << (imported.errors.empty() ? "" : imported.errors[0].message);
  if (imported.exit_code != kExitOk) return {};
  return Json::parse(imported.output);
}

// The report's figures of a spec (a failure and {} when it does not
// analyse).
Json Figures(const Json& spec) {
  const CommandResult analyzed = Analyze(spec.dump());
  EXPECT_EQ(analyzed.exit_code, kExitOk)
      << (analyzed.errors.empty() ? "" : analyzed.errors[0].message);
  if (analyzed.exit_code != kExitOk) return Json::object();
  return Json::parse(analyzed.output)["figures"];
}

// Megatron-Bridge perf_recipes/deepseek/h100/deepseek_v3.py (1,024 H100s:
// TP 2, EP 64, SP, recompute_modules ["mla_up_proj", "mlp"] under
// _deepseek_v3_common's selective granularity), on a 4-block proxy of the
// model with its pipeline left out (the layout is another flag's).
constexpr char kDeepSeekV3[] =
    "--num-layers 4 --mtp-num-layers 0 --seq-length 4096 "
    "--tensor-model-parallel-size 2 --sequence-parallel "
    "--expert-model-parallel-size 8 --world-size 16 --micro-batch-size 1 "
    "--global-batch-size 64 --use-distributed-optimizer --bf16 "
    "--moe-router-force-load-balancing ";

TEST(RecomputeImport, DeepSeekV3RecipeModules) {
  const Json spec =
      Import("deepseek-v3", absl::StrCat(kDeepSeekV3,
                                         "--recompute-granularity selective "
                                         "--recompute-modules mla_up_proj mlp"));
  ASSERT_FALSE(spec.is_null());
  const Json& parallelism = spec["parallelism"];
  // No core_attn: the policy is none, the modules the rest.
  EXPECT_EQ(parallelism["recompute"], "none");
  EXPECT_EQ(parallelism["recompute_modules"],
            Json::array({"mla_up_proj", "mlp"}));
  // Selective granularity redoes the sequence-parallel all-gathers.
  EXPECT_EQ(parallelism["tensor"]["communication"]["all_gather_redo"], true);
  const Json plain = Import("deepseek-v3", kDeepSeekV3);
  const Json with = Figures(spec);
  const Json without = Figures(plain);
  ASSERT_TRUE(with.contains("recompute_time"));
  ASSERT_TRUE(without.contains("recompute_time"));
  EXPECT_GT(with["recompute_time"].get<double>(),
            without["recompute_time"].get<double>());
  EXPECT_LT(with["act_space"].get<double>(),
            without["act_space"].get<double>());
}

// Megatron-Bridge perf_recipes/qwen/h100/qwen3_moe.py's Qwen3-235B-A22B
// HybridEP recipe: selective ["moe_act", "layernorm"] with EP overlap; on
// two pipeline-free stages' worth of blocks.
TEST(RecomputeImport, Qwen3RecipeModules) {
  const Json spec = Import(
      "qwen3-235b-a22b",
      "--num-layers 4 --seq-length 4096 --tensor-model-parallel-size 2 "
      "--sequence-parallel --expert-model-parallel-size 32 "
      "--expert-tensor-parallel-size 1 --world-size 64 --micro-batch-size 1 "
      "--global-batch-size 256 --use-distributed-optimizer --bf16 "
      "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend "
      "hybridep --moe-router-force-load-balancing "
      "--recompute-granularity selective --recompute-modules moe_act "
      "layernorm");
  ASSERT_FALSE(spec.is_null());
  EXPECT_EQ(spec["parallelism"]["recompute"], "none");
  EXPECT_EQ(spec["parallelism"]["recompute_modules"],
            Json::array({"moe_act", "layernorm"}));
  EXPECT_TRUE(Figures(spec).contains("total_time"));
}

// Megatron-LM's default modules are ["core_attn"]: selective alone, or with
// core_attn named, is attn_only and prints no modules; with full
// granularity the modules are ignored (a note), as Megatron-LM does.
TEST(RecomputeImport, CoreAttnIsAttnOnly) {
  const std::string base = absl::StrCat(kDeepSeekV3, "--recompute-granularity ");
  const Json selective = Import("deepseek-v3", base + "selective");
  const Json named =
      Import("deepseek-v3", base + "selective --recompute-modules core_attn");
  ASSERT_FALSE(selective.is_null());
  EXPECT_EQ(selective["parallelism"]["recompute"], "attn_only");
  EXPECT_FALSE(selective["parallelism"].contains("recompute_modules"));
  EXPECT_EQ(named, selective);
  const Json both = Import(
      "deepseek-v3", base + "selective --recompute-modules mlp core_attn");
  EXPECT_EQ(both["parallelism"]["recompute"], "attn_only");
  EXPECT_EQ(both["parallelism"]["recompute_modules"], Json::array({"mlp"}));
  const Json full = Import(
      "deepseek-v3",
      base + "full --recompute-method uniform --recompute-modules mlp");
  EXPECT_EQ(full["parallelism"]["recompute"], "full");
  EXPECT_FALSE(full["parallelism"].contains("recompute_modules"));
}

// A module word outside Megatron-LM's list, or one listed twice, names the
// flag.
TEST(RecomputeImport, BadWordsNameTheFlag) {
  const std::string config = FindPreset(PresetKind::kModel, "deepseek-v3");
  for (const char* words : {"mlp attention", "mlp mlp"}) {
    const std::vector<std::string> args = absl::StrSplit(
        absl::StrCat(kDeepSeekV3,
                     "--recompute-granularity selective --recompute-modules ",
                     words),
        ' ', absl::SkipEmpty());
    const CommandResult imported = ImportMegatron(
        FindPreset(PresetKind::kSystem, "h100_sxm_80g"), args, &config);
    EXPECT_EQ(imported.exit_code, kExitInvalidInput) << words;
    ASSERT_FALSE(imported.errors.empty()) << words;
    EXPECT_EQ(imported.errors[0].field, "--recompute-modules") << words;
  }
}

}  // namespace
}  // namespace blueprint
