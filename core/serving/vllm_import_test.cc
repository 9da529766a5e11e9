#include "core/serving/vllm_import.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/base/field_errors.h"
#include "core/serving/serving_check.h"
#include "core/serving/serving_test_util.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using serving_test::Fields;
using serving_test::ModelPreset;
using serving_test::SystemPreset;
using serving_test::Words;

// vLLM's recipe for Llama-3.1-70B on one 8-GPU node, benchmarked with
// `vllm bench serve --random-input-len 1024 --random-output-len 256
// --max-concurrency 64`.
TEST(VllmImport, ALlamaServeLine) {
  const System system = SystemPreset("h100_sxm_80g");
  std::vector<std::string> notes;
  absl::StatusOr<ServingSpec> spec = FromVllmArgs(
      Words("meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 8 "
            "--max-model-len 8192 --gpu-memory-utilization 0.92 "
            "--kv-cache-dtype fp8 --enable-prefix-caching --port 8000 "
            "--random-input-len 1024 --random-output-len 256 "
            "--max-concurrency 64"),
      ModelPreset("llama3.1-70b", system), system, &notes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const ServingPool& pool = DecodePool(*spec);
  EXPECT_EQ(pool.tensor, 8);
  EXPECT_EQ(pool.pipeline, 1);
  EXPECT_EQ(pool.replicas, 1);
  EXPECT_EQ(spec->workload.input_tokens, 1024);
  EXPECT_EQ(spec->workload.output_tokens, 256);
  EXPECT_EQ(spec->workload.concurrency, 64);
  EXPECT_EQ(spec->kv_cache.datatype, DataType::kFloat8);
  EXPECT_EQ(spec->memory_utilization, 0.92);
  EXPECT_TRUE(FindServingViolations(*spec).empty());
  ASSERT_EQ(notes.size(), 2u) << ::testing::PrintToString(notes);
  EXPECT_TRUE(absl::StrContains(notes[0], "meta-llama/Llama-3.1-70B"));
  EXPECT_TRUE(absl::StrContains(notes[1], "--enable-prefix-caching"));
  EXPECT_TRUE(absl::StrContains(notes[1], "--port"));
}

// DeepSeek-V3 with data-parallel attention and expert parallelism, as
// vLLM's and SGLang's recipes run it on 8 H200; the engines' max-num-seqs
// add up over the data-parallel ranks of the one replica.
TEST(VllmImport, DeepSeekWithExpertParallelism) {
  const System system = SystemPreset("h200_sxm_141g");
  std::vector<std::string> notes;
  absl::StatusOr<ServingSpec> spec = FromVllmArgs(
      Words("--data-parallel-size 8 --enable-expert-parallel --quantization "
            "fp8 --max-num-seqs 32 --input-len 2048 --output-len 512 "
            "--trust-remote-code"),
      ModelPreset("deepseek-v3", system), system, &notes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const ServingPool& pool = DecodePool(*spec);
  EXPECT_EQ(pool.tensor, 1);
  EXPECT_EQ(pool.attention_data, 8);
  EXPECT_EQ(pool.expert, 8);
  EXPECT_EQ(pool.replicas, 1);
  EXPECT_EQ(spec->workload.concurrency, 256);
  EXPECT_EQ(spec->weight_datatype, DataType::kFloat8);
  EXPECT_TRUE(FindServingViolations(*spec).empty())
      << ::testing::PrintToString(FindServingViolations(*spec));
}

TEST(VllmImport, EveryProblemAtOnceWithItsFlag) {
  const System system = SystemPreset("h100_sxm_80g");
  std::vector<std::string> notes;
  absl::StatusOr<ServingSpec> spec = FromVllmArgs(
      Words("--tensor-parallel-size eight --speculative-config {} "
            "--max-concurrency 6 -dp 4 --kv-cache-dtype int4 --frobnicate 3 "
            "--max-model-len 100 --input-len 1024 --input-len 1024 "
            "--output-len 8"),
      ModelPreset("llama3.1-8b", system), system, &notes);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(Fields(FieldErrorsOf(spec.status())),
            (std::vector<std::string>{
                "--frobnicate", "--input-len", "--speculative-config",
                "--tensor-parallel-size", "--max-model-len",
                "--kv-cache-dtype"}))
      << spec.status();
}

TEST(VllmImport, ConcurrencySplitsOverReplicasAndDefaultsToMaxNumSeqs) {
  const System system = SystemPreset("h100_sxm_80g");
  const TransformerModel model = ModelPreset("llama3.1-8b", system);
  std::vector<std::string> notes;
  absl::StatusOr<ServingSpec> spec = FromVllmArgs(
      Words("-dp 4 --max-concurrency 256 --input-len 128 --output-len 128"),
      model, system, &notes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(DecodePool(*spec).replicas, 4);
  EXPECT_EQ(spec->workload.concurrency, 64);
  notes.clear();
  spec = FromVllmArgs(Words("--input-len 128 --output-len 128"), model,
                      system, &notes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->workload.concurrency, 256);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(absl::StrContains(notes[0], "default of 256"));
  spec = FromVllmArgs(Words("--output-len 128"), model, system, &notes);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(FieldErrorsOf(spec.status())[0].code, ErrorCode::kMissingField);
}

TEST(VllmImport, EveryFlagHasOneRowAndTheReadmeShowsTheTable) {
  serving_test::ExpectFlagTableShown(VllmFlags(), VllmFlagsMarkdown(), "vllm flags");
}

}  // namespace
}  // namespace blueprint
