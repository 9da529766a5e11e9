// parallelism.recompute_modules in the figures: each module's stored
// activations leave the block's storage (Korthikanti et al. 2022's per-block
// accounting, one term per freed tensor) and its forward work joins the
// recompute time; the rank's activation memory drops and the step takes
// longer.
#include <string>
#include <variant>

#include "core/analysis/analyze.h"
#include "core/analysis/analyze_test_util.h"
#include "core/spec/check.h"
#include "core/testing/doubles.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using analyze_test::AnalyseProgram;
using analyze_test::Analysed;
using test_programs::TestMapping;
using test_programs::TestSpec;

// The test model (h 64, ff 256, 8 heads of 8, s 32, b 1) on t = 2 without
// sequence parallelism, gated, optionally MoE (8 experts of 64, top 2, a
// shared 64) or with latent attention.
TransformerTrainingMappingSpec Spec(bool moe = false, bool mla = false) {
  TestMapping m;
  m.t = 2;
  auto s = std::get<TransformerTrainingMappingSpec>(TestSpec(m));
  s.model.mlp = MlpType::kGated;
  if (moe) s.model.moe = MixtureOfExperts{8, 2, 64, 64, "", 1};
  if (mla) s.model.latent_attention = LatentAttention{16, 16, 6, 2, 8};
  return s;
}

absl::StatusOr<Analysed> With(TransformerTrainingMappingSpec s,
                              RecomputeModules modules) {
  s.parallelism.recompute_modules = modules;
  return AnalyseProgram(CheckSpec(s));
}

RecomputeModules Only(RecomputeModule m) {
  RecomputeModules out;
  out.Add(m);
  return out;
}

struct Drop {
  double storage = 0;  // bytes of one block's stored activations
};

Drop DropOf(const TransformerTrainingMappingSpec& s, RecomputeModule m) {
  Analysed before = *With(s, RecomputeModules{});
  Analysed after = *With(s, Only(m));
  // More forward work in the backward pass, never less.
  EXPECT_GT(after.plan.block.block_re_time, before.plan.block.block_re_time)
      << RecomputeModuleName(m);
  EXPECT_GT(after.iteration.figures.recompute_time,
            before.iteration.figures.recompute_time);
  EXPECT_LT(after.memory.figures.act_space, before.memory.figures.act_space);
  return {before.plan.block.block_act_storage_space -
          after.plan.block.block_act_storage_space};
}

constexpr double kBytes = 2;       // float16
constexpr double kTokens = 32;     // b s
constexpr double kHidden = 64;

// "layernorm": the two norms' outputs, b s h each (no sequence
// parallelism).
TEST(AnalyzeRecomputeModules, LayerNormFreesBothNormOutputs) {
  EXPECT_DOUBLE_EQ(DropOf(Spec(), RecomputeModule::kLayerNorm).storage,
                   2 * kTokens * kHidden * kBytes);
}

// "mlp": the gated activation's two halves and the second linear's input,
// b s ff / t each; the first linear's input stays (the checkpoint's).
TEST(AnalyzeRecomputeModules, MlpKeepsOnlyItsInput) {
  const double ff_local = kTokens * 256 / 2;
  EXPECT_DOUBLE_EQ(DropOf(Spec(), RecomputeModule::kMlp).storage,
                   (2 * ff_local + ff_local) * kBytes);
}

// "mla_up_proj": the query (a (qk + rope) / t per token) and the key/value
// up projection's output (a (qk + v) / t per token).
TEST(AnalyzeRecomputeModules, MlaUpProjFreesQueryKeyValue) {
  const double query = 8 * (6 + 2) / 2, kv = 8 * (6 + 8) / 2;
  EXPECT_DOUBLE_EQ(
      DropOf(Spec(false, true), RecomputeModule::kMlaUpProj).storage,
      kTokens * (query + kv) * kBytes);
}

// "moe_act": the experts' activation output, the second linear's input:
// the rank's routed rows (b s k / t) by ffn.
TEST(AnalyzeRecomputeModules, MoeActFreesTheSecondLinearsInput) {
  EXPECT_DOUBLE_EQ(DropOf(Spec(true), RecomputeModule::kMoeAct).storage,
                   kTokens * 2 / 2 * 64 * kBytes);
}

// "shared_experts" frees less than "moe", which frees the shared experts'
// activations and the routed experts' too.
TEST(AnalyzeRecomputeModules, MoeFreesMoreThanSharedExperts) {
  const double shared =
      DropOf(Spec(true), RecomputeModule::kSharedExperts).storage;
  const double layer = DropOf(Spec(true), RecomputeModule::kMoe).storage;
  EXPECT_GT(shared, 0);
  EXPECT_GT(layer, shared);
}

}  // namespace
}  // namespace blueprint
