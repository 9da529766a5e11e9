// parallelism.recompute_modules: its canonical JSON (printed only when
// given, in one order), its reader's errors, and the checker's rules from
// Megatron-LM's transformer_config.py, every violation at once.
#include <string>
#include <variant>
#include <vector>

#include "core/base/field_errors.h"
#include "core/spec/check.h"
#include "core/spec/spec.h"
#include "core/spec/spec_json.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

using test_programs::TestMapping;
using test_programs::TestSpec;

TransformerTrainingMappingSpec Training() {
  TestMapping m;
  m.t = 2;
  return std::get<TransformerTrainingMappingSpec>(TestSpec(m));
}

// The test model with MoE blocks (`pattern` "" all of them) with shared
// experts.
TransformerTrainingMappingSpec WithMoe(const std::string& pattern = "") {
  TransformerTrainingMappingSpec s = Training();
  s.model.moe = MixtureOfExperts{8, 2, 64, 64, pattern, 1};
  return s;
}

RecomputeModules Modules(std::vector<RecomputeModule> list) {
  RecomputeModules out;
  for (RecomputeModule m : list) out.Add(m);
  return out;
}

std::vector<FieldError> SpecJsonErrors(const std::string& text) {
  return FieldErrorsOf(ParseSpecJson(text).status());
}

std::vector<std::string> Messages(const MappingSpec& spec) {
  std::vector<std::string> out;
  for (const FieldError& e : FindViolations(spec)) {
    if (e.field == "parallelism.recompute_modules") out.push_back(e.message);
  }
  return out;
}

TEST(RecomputeModules, CanonicalJsonOnlyWhenGivenInOneOrder) {
  TransformerTrainingMappingSpec s = WithMoe();
  const std::string without = SpecToJson(s);
  EXPECT_EQ(without.find("recompute_modules"), std::string::npos);
  s.parallelism.recompute_modules =
      Modules({RecomputeModule::kSharedExperts, RecomputeModule::kLayerNorm,
               RecomputeModule::kMoeAct});
  const std::string text = SpecToJson(s);
  EXPECT_NE(text.find("\"recompute_modules\": [\"moe_act\", \"layernorm\", "
                      "\"shared_experts\"]"),
            std::string::npos)
      << text;
  BP_ASSERT_OK_AND_ASSIGN(const MappingSpec back, ParseSpecJson(text));
  EXPECT_EQ(std::get<TransformerTrainingMappingSpec>(back)
                .parallelism.recompute_modules,
            s.parallelism.recompute_modules);
  EXPECT_EQ(SpecToJson(back), text);
}

TEST(RecomputeModules, ReaderNamesTheBadElement) {
  nlohmann::json doc = nlohmann::json::parse(SpecToJson(WithMoe()));
  doc["parallelism"]["recompute_modules"] = {"moe_act", "core_attn", "moe_act",
                                             "attention"};
  const std::vector<FieldError> errors = SpecJsonErrors(doc.dump());
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].field, "parallelism.recompute_modules[1]");
  EXPECT_NE(errors[0].message.find("attn_only"), std::string::npos);
  EXPECT_EQ(errors[1].field, "parallelism.recompute_modules[2]");
  EXPECT_NE(errors[1].message.find("listed twice"), std::string::npos);
  EXPECT_EQ(errors[2].field, "parallelism.recompute_modules[3]");
  EXPECT_EQ(errors[2].code, ErrorCode::kUnknownChoice);
  doc["parallelism"]["recompute_modules"] = "moe_act";
  const std::vector<FieldError> scalar = SpecJsonErrors(doc.dump());
  ASSERT_EQ(scalar.size(), 1u);
  EXPECT_EQ(scalar[0].code, ErrorCode::kWrongType);
}

TEST(RecomputeModules, AcceptedWhereTheModelHasTheModule) {
  TransformerTrainingMappingSpec moe = WithMoe("01010101");
  moe.parallelism.recompute = RecomputePolicy::kAttentionOnly;
  moe.parallelism.recompute_modules =
      Modules({RecomputeModule::kMoeAct, RecomputeModule::kLayerNorm,
               RecomputeModule::kMlp, RecomputeModule::kMoe,
               RecomputeModule::kSharedExperts});
  EXPECT_TRUE(FindViolations(moe).empty());
  TransformerTrainingMappingSpec mla = Training();
  mla.model.latent_attention = LatentAttention{16, 16, 6, 2, 8};
  mla.parallelism.recompute_modules =
      Modules({RecomputeModule::kMlaUpProj, RecomputeModule::kMlp});
  EXPECT_TRUE(FindViolations(mla).empty());
}

// Every violation at once, each naming the field and the rule.
TEST(RecomputeModules, EveryViolationAtOnce) {
  TransformerTrainingMappingSpec dense = Training();
  dense.parallelism.recompute = RecomputePolicy::kFull;
  dense.parallelism.recompute_modules =
      Modules({RecomputeModule::kMlaUpProj, RecomputeModule::kMoeAct,
               RecomputeModule::kMoe, RecomputeModule::kSharedExperts});
  const std::vector<std::string> messages = Messages(dense);
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_NE(messages[0].find("full"), std::string::npos) << messages[0];
  EXPECT_NE(messages[1].find("\"mla_up_proj\") needs model.latent_attention"),
            std::string::npos)
      << messages[1];
  EXPECT_NE(messages[2].find("\"moe_act\") needs MoE blocks"),
            std::string::npos);
  EXPECT_NE(messages[3].find("\"moe\") needs MoE blocks"), std::string::npos);
  EXPECT_NE(messages[4].find("\"shared_experts\") needs MoE blocks"),
            std::string::npos);

  TransformerTrainingMappingSpec moe = WithMoe();
  moe.model.moe->shared_ffn = 0;
  moe.parallelism.expert.degree = 2;
  moe.parallelism.data.degree = 2;
  moe.parallelism.expert.overlap = true;
  moe.parallelism.recompute_modules =
      Modules({RecomputeModule::kMlp, RecomputeModule::kMoe,
               RecomputeModule::kSharedExperts});
  const std::vector<std::string> all_moe = Messages(moe);
  ASSERT_EQ(all_moe.size(), 3u);
  EXPECT_NE(all_moe[0].find("model.moe.shared_ffn is 0"), std::string::npos);
  EXPECT_NE(all_moe[1].find("every block is MoE"), std::string::npos);
  EXPECT_NE(all_moe[2].find("parallelism.expert.overlap"), std::string::npos);

  TransformerTrainingMappingSpec shared = WithMoe();
  shared.parallelism.expert.shared_expert_overlap = true;
  shared.parallelism.recompute_modules =
      Modules({RecomputeModule::kSharedExperts});
  const std::vector<std::string> overlap = Messages(shared);
  ASSERT_EQ(overlap.size(), 1u);
  EXPECT_NE(overlap[0].find("shared_expert_overlap"), std::string::npos);
}

}  // namespace
}  // namespace blueprint
