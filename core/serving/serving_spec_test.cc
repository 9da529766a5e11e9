#include "core/serving/serving_spec.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/base/field_errors.h"
#include "core/serving/serving_test_util.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using serving_test::Aggregated;
using serving_test::Disaggregated;
using serving_test::Pool;
using serving_test::SpecText;

std::vector<std::string> Fields(const absl::Status& status) {
  return serving_test::Fields(FieldErrorsOf(status));
}

TEST(ServingSpec, ReadsPresetsAndPrintsCanonicalJsonThatRoundTrips) {
  SpecText text;
  text.pools = Disaggregated(Pool(4), Pool(2, 2, 1, 1, 3));
  absl::StatusOr<ServingSpec> spec = ParseServingSpecJson(text.Json());
  ASSERT_TRUE(spec.ok()) << spec.status();
  // Llama-3.1-70B's config.json: 80 layers, hidden 8192, 64 query heads of
  // 128, 8 key/value heads.
  EXPECT_EQ(spec->model.name, "llama3.1-70b");
  EXPECT_EQ(spec->model.num_blocks, 80);
  EXPECT_EQ(spec->model.hidden, 8192);
  EXPECT_EQ(spec->model.kv_heads, 8);
  EXPECT_EQ(spec->model.attn_size, 128);
  EXPECT_EQ(spec->system.name, "h100_sxm_80g");
  ASSERT_TRUE(IsDisaggregated(*spec));
  EXPECT_EQ(DecodePool(*spec).replicas, 3);
  EXPECT_EQ(DecodePool(*spec).pipeline, 2);
  EXPECT_EQ(PrefillPool(*spec).tensor, 4);
  EXPECT_STREQ(DecodePoolPath(*spec), "pools.decode");

  const std::string canonical = ServingSpecToJson(*spec);
  absl::StatusOr<ServingSpec> again = ParseServingSpecJson(canonical);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(ServingSpecToJson(*again), canonical);
  EXPECT_TRUE(absl::StrContains(canonical, "\"name\": \"llama3.1-70b\""))
      << canonical.substr(0, 400);
}

TEST(ServingSpec, ReadsDeepSeekV3WithLatentAttention) {
  SpecText text;
  text.model = "\"deepseek-v3\"";
  text.system = "\"h200_sxm_141g\"";
  absl::StatusOr<ServingSpec> spec = ParseServingSpecJson(text.Json());
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->model.latent_attention.has_value());
  EXPECT_EQ(spec->model.latent_attention->kv_lora_rank, 512);
  EXPECT_EQ(spec->model.latent_attention->qk_rope_head_dim, 64);
  EXPECT_EQ(spec->model.num_blocks, 61);
  ASSERT_TRUE(spec->model.moe.has_value());
  EXPECT_EQ(spec->model.moe->experts, 256);
}

TEST(ServingSpec, ReportsEveryDocumentProblemAtOnce) {
  SpecText text;
  text.model = "\"llama9\"";
  text.pools = "{\"type\": \"sharded\"}";
  std::string json = text.Json();
  json.insert(1, "\"extra\": 1, ");
  absl::StatusOr<ServingSpec> spec = ParseServingSpecJson(json);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  const std::vector<std::string> fields = Fields(spec.status());
  EXPECT_EQ(fields, (std::vector<std::string>{"model", "pools.type", "extra"}))
      << spec.status();
  const std::vector<FieldError> errors = FieldErrorsOf(spec.status());
  EXPECT_EQ(errors[0].code, ErrorCode::kUnknownChoice);
  EXPECT_TRUE(absl::StrContains(errors[0].message, "llama3.1-70b"))
      << errors[0].message;
}

TEST(ServingSpec, WrongTypesAndMissingKeysNameTheirPaths) {
  const std::string json =
      "{\"format\": \"blueprinting.serving_spec/1\", \"model\": "
      "\"llama3.1-8b\", \"system\": \"h100_sxm_80g\", \"weight_datatype\": "
      "\"bfloat16\", \"memory_utilization\": \"most\", \"kv_cache\": "
      "{\"datatype\": \"int3\", \"block_tokens\": 16}, \"pools\": "
      "{\"type\": \"aggregated\", \"pool\": {\"tensor\": 1.5, \"pipeline\": "
      "1, \"expert\": 1, \"attention_data\": 1, \"replicas\": 1}}, "
      "\"workload\": {\"input_tokens\": 1, \"output_tokens\": 1}, "
      "\"speculative\": {\"type\": \"none\"}}";
  absl::StatusOr<ServingSpec> spec = ParseServingSpecJson(json);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(Fields(spec.status()),
            (std::vector<std::string>{
                "memory_utilization", "kv_cache.datatype",
                "pools.pool.tensor", "workload.concurrency"}))
      << spec.status();
}

TEST(ServingSpec, RejectsOtherFormats) {
  SpecText text;
  std::string json = text.Json();
  json.replace(json.find("serving_spec/1"), 14, "serving_spec/9");
  absl::StatusOr<ServingSpec> spec = ParseServingSpecJson(json);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(Fields(spec.status()), std::vector<std::string>{"format"});
}

}  // namespace
}  // namespace blueprint
