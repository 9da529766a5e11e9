#include "core/serving/serving_check.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/base/field_errors.h"
#include "core/serving/serving_model.h"
#include "core/serving/serving_spec.h"
#include "core/serving/serving_test_util.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using serving_test::Aggregated;
using serving_test::Disaggregated;
using serving_test::Fields;
using serving_test::Parse;
using serving_test::Pool;
using serving_test::SpecText;

TEST(ServingCheck, AcceptsLlamaOnEightH100) {
  EXPECT_TRUE(FindServingViolations(Parse(SpecText{})).empty());
}

TEST(ServingCheck, ReportsEveryViolationAtOnceNamingFieldsAndValues) {
  SpecText text;
  // Tensor 3 divides neither the 64 query heads nor the 8 key/value heads
  // (nor is a multiple of 8), pipeline 7 not the 80 blocks, Llama has no
  // experts; a float32 cache, a zero concurrency and a share above 1.
  text.pools = Aggregated(Pool(3, 7, 2));
  text.kv_datatype = "float32";
  text.concurrency = 0;
  text.memory_utilization = 1.5;
  const std::vector<FieldError> v = FindServingViolations(Parse(text));
  EXPECT_EQ(Fields(v), (std::vector<std::string>{
                           "kv_cache.datatype", "memory_utilization",
                           "workload.concurrency", "pools.pool.tensor",
                           "pools.pool.tensor", "pools.pool.pipeline",
                           "pools.pool.attention_data", "pools.pool.expert"}))
      << ::testing::PrintToString(v);
  ASSERT_EQ(v.size(), 8u);
  EXPECT_EQ(v[3].message,
            "pools.pool.tensor (3) must divide model.attn_heads (64): each "
            "tensor rank computes whole query heads");
  EXPECT_EQ(v[3].code, ErrorCode::kNotDivisible);
  EXPECT_TRUE(absl::StrContains(v[4].message, "model.kv_heads (8)"));
  EXPECT_EQ(v[5].message,
            "pools.pool.pipeline (7) must divide model.num_blocks (80): each "
            "stage holds whole blocks, evenly");
  EXPECT_TRUE(absl::StrContains(v[6].message, "model.feedforward (28672)"))
      << v[6].message;
  EXPECT_EQ(v[7].code, ErrorCode::kInconsistent);
  EXPECT_EQ(v[1].code, ErrorCode::kOutOfRange);
}

TEST(ServingCheck, ModelAndSystemRulesAreTheTrainingCheckers) {
  ServingSpec spec = Parse(SpecText{});
  spec.model.hidden = 0;
  spec.system.mem1.gbps = -1;
  const std::vector<std::string> fields = Fields(FindServingViolations(spec));
  ASSERT_GE(fields.size(), 2u);
  EXPECT_EQ(fields[0], "model.hidden");
  EXPECT_NE(std::find(fields.begin(), fields.end(), "system.mem1.GBps"),
            fields.end())
      << ::testing::PrintToString(fields);
}

TEST(ServingCheck, WorkloadBeyondTheModelsLongestSequence) {
  SpecText text;
  text.input_tokens = 131072;  // Llama-3.1's max_position_embeddings
  text.output_tokens = 1;
  const std::vector<FieldError> v = FindServingViolations(Parse(text));
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0].field, "workload.input_tokens");
  EXPECT_TRUE(absl::StrContains(v[0].message, "model.seq_size (131072)"));
}

TEST(ServingCheck, WeightsThatDoNotFitAreOverCapacity) {
  SpecText text;  // 141 GB of bfloat16 weights on one 80 GiB GPU
  text.pools = Aggregated(Pool(1));
  const std::vector<FieldError> v = FindServingViolations(Parse(text));
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0].field, "pools.pool");
  EXPECT_EQ(v[0].code, ErrorCode::kOverCapacity);
}

TEST(ServingCheck, ConcurrencyAboveMaxConcurrencyIsOverCapacity) {
  ServingSpec spec = Parse(SpecText{});
  const PoolMemory memory =
      PoolMemoryOf(spec, DecodePool(spec), PoolRole::kShared);
  ASSERT_GT(memory.max_concurrency, 128);
  // The step's activations grow with the concurrency, so the most the
  // cache holds at a higher concurrency is at most this one's.
  spec.workload.concurrency =
      static_cast<int64_t>(memory.max_concurrency) / 2;
  EXPECT_TRUE(FindServingViolations(spec).empty());
  EXPECT_LE(PoolMemoryOf(spec, DecodePool(spec), PoolRole::kShared)
                .max_concurrency,
            memory.max_concurrency);
  spec.workload.concurrency =
      static_cast<int64_t>(memory.max_concurrency) + 1;
  const std::vector<FieldError> v = FindServingViolations(spec);
  ASSERT_EQ(v.size(), 1u) << ::testing::PrintToString(v);
  EXPECT_EQ(v[0].field, "workload.concurrency");
  EXPECT_EQ(v[0].code, ErrorCode::kOverCapacity);
}

TEST(ServingCheck, PoolsBeyondTheSystemAndUnevenConcurrency) {
  SpecText text;
  text.pools = Disaggregated(Pool(8, 1, 1, 1, 40000), Pool(4, 2, 1, 1, 1));
  text.concurrency = 63;  // not a multiple of the decode pool's 2 stages
  const std::vector<FieldError> v = FindServingViolations(Parse(text));
  EXPECT_EQ(Fields(v),
            (std::vector<std::string>{"workload.concurrency", "pools"}))
      << ::testing::PrintToString(v);
}

TEST(ServingCheck, ExpertRulesForDeepSeekV3) {
  SpecText text;
  text.model = "\"deepseek-v3\"";
  text.system = "\"h200_sxm_141g\"";
  text.weight_datatype = "float8";
  // 3 expert ranks divide neither 256 experts nor the stage's 8 ranks.
  text.pools = Aggregated(Pool(1, 1, 3, 8));
  const std::vector<FieldError> v = FindServingViolations(Parse(text));
  EXPECT_EQ(Fields(v), (std::vector<std::string>{"pools.pool.expert",
                                                 "pools.pool.expert"}))
      << ::testing::PrintToString(v);
  text.pools = Aggregated(Pool(1, 1, 8, 8));
  EXPECT_TRUE(FindServingViolations(Parse(text)).empty());
}

}  // namespace
}  // namespace blueprint
