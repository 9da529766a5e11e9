#include "core/serving/sglang_import.h"

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

// The benchmark's part of each line: fixed-length random requests.
constexpr char kBench[] =
    " --backend sglang --dataset-name random --random-range-ratio 1 "
    "--num-prompts 640 ";

// Llama-3.1-70B on one 8-GPU H100 node as SGLang's docs launch it, and
// `python -m sglang.bench_serving` at 64 requests in flight.
TEST(SglangImport, ALlamaLaunchLine) {
  const System system = SystemPreset("h100_sxm_80g");
  std::vector<std::string> notes;
  absl::StatusOr<ServingSpec> spec = FromSglangArgs(
      Words(std::string("--model-path meta-llama/Llama-3.1-70B-Instruct "
                        "--tp 8 --mem-fraction-static 0.85 --kv-cache-dtype "
                        "fp8_e4m3 --host 0.0.0.0 --port 30000") +
            kBench +
            "--random-input-len 1024 --random-output-len 256 "
            "--max-concurrency 64"),
      ModelPreset("llama3.1-70b", system), system, &notes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const ServingPool& pool = DecodePool(*spec);
  EXPECT_EQ(pool.tensor, 8);
  EXPECT_EQ(pool.attention_data, 1);
  EXPECT_EQ(pool.expert, 1);
  EXPECT_EQ(pool.replicas, 1);
  EXPECT_EQ(spec->workload.input_tokens, 1024);
  EXPECT_EQ(spec->workload.output_tokens, 256);
  EXPECT_EQ(spec->workload.concurrency, 64);
  EXPECT_EQ(spec->kv_cache.datatype, DataType::kFloat8);
  EXPECT_EQ(spec->kv_cache.block_tokens, 1);  // SGLang's page size
  EXPECT_EQ(spec->memory_utilization, 0.85);
  EXPECT_TRUE(FindServingViolations(*spec).empty())
      << ::testing::PrintToString(FindServingViolations(*spec));
  ASSERT_EQ(notes.size(), 1u) << ::testing::PrintToString(notes);
  EXPECT_TRUE(absl::StrContains(notes[0], "--model-path"));
  EXPECT_TRUE(absl::StrContains(notes[0], "--num-prompts"));
}

// DeepSeek-V3 on 8 H200 with data-parallel attention and DeepEP, SGLang's
// recipe: the 8 attention groups of one replica share --tp 8's GPUs, the
// experts spread over all 8, and --max-running-requests is the replica's.
TEST(SglangImport, DeepSeekWithDataParallelAttention) {
  const System system = SystemPreset("h200_sxm_141g");
  std::vector<std::string> notes;
  absl::StatusOr<ServingSpec> spec = FromSglangArgs(
      Words(std::string("--model-path deepseek-ai/DeepSeek-V3 --tp 8 --dp 8 "
                        "--enable-dp-attention --ep-size 8 --moe-a2a-backend "
                        "deepep --quantization fp8 --trust-remote-code "
                        "--mem-fraction-static 0.8 --max-running-requests 260 "
                        "--chunked-prefill-size 4096") +
            kBench + "--random-input-len 2048 --random-output-len 512"),
      ModelPreset("deepseek-v3", system), system, &notes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const ServingPool& pool = DecodePool(*spec);
  EXPECT_EQ(pool.tensor, 1);
  EXPECT_EQ(pool.attention_data, 8);
  EXPECT_EQ(pool.expert, 8);
  EXPECT_EQ(pool.pipeline, 1);
  EXPECT_EQ(pool.replicas, 1);
  // 260 // 8 = 32 requests per attention group.
  EXPECT_EQ(spec->workload.concurrency, 256);
  EXPECT_EQ(spec->weight_datatype, DataType::kFloat8);
  EXPECT_EQ(spec->memory_utilization, 0.8);
  EXPECT_TRUE(FindServingViolations(*spec).empty())
      << ::testing::PrintToString(FindServingViolations(*spec));
}

TEST(SglangImport, DataParallelReplicasAndTheExpertDegree) {
  const System system = SystemPreset("h100_sxm_80g");
  std::vector<std::string> notes;
  // Plain --dp: replicas, the benchmark's load spread over them.
  absl::StatusOr<ServingSpec> spec = FromSglangArgs(
      Words(std::string("--tp 2 --dp 4 --mem-fraction-static 0.9") + kBench +
            "--max-concurrency 256"),
      ModelPreset("llama3.1-8b", system), system, &notes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(DecodePool(*spec).tensor, 2);
  EXPECT_EQ(DecodePool(*spec).replicas, 4);
  EXPECT_EQ(spec->workload.concurrency, 64);
  // bench_serving's default lengths.
  EXPECT_EQ(spec->workload.input_tokens, 1024);
  EXPECT_EQ(spec->workload.output_tokens, 1024);
  // --enable-ep-moe: the experts over the --tp ranks, --ep-size replaced.
  notes.clear();
  spec = FromSglangArgs(
      Words(std::string("--tp 4 --enable-ep-moe --ep-size 2 "
                        "--mem-fraction-static 0.9 --max-running-requests "
                        "16") +
            kBench),
      ModelPreset("qwen3-30b-a3b", system), system, &notes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(DecodePool(*spec).expert, 4);
  EXPECT_EQ(spec->workload.concurrency, 16);
  ASSERT_EQ(notes.size(), 2u) << ::testing::PrintToString(notes);
  EXPECT_TRUE(absl::StrContains(notes[1], "--ep-size 2 is replaced"));
}

TEST(SglangImport, EveryProblemAtOnceWithItsFlag) {
  const System system = SystemPreset("h100_sxm_80g");
  std::vector<std::string> notes;
  absl::StatusOr<ServingSpec> spec = FromSglangArgs(
      Words("--tp 8 --dp 3 --enable-dp-attention --speculative-algorithm "
            "EAGLE --frobnicate 2 --kv-cache-dtype fp8 --context-length 100 "
            "--random-input-len 512 --random-output-len 8 "
            "--dataset-name sharegpt"),
      ModelPreset("llama3.1-8b", system), system, &notes);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(Fields(FieldErrorsOf(spec.status())),
            (std::vector<std::string>{
                "--frobnicate", "--speculative-algorithm", "--dp-size",
                "--dataset-name", "--random-range-ratio", "--context-length",
                "--kv-cache-dtype", "--mem-fraction-static"}))
      << spec.status();
}

TEST(SglangImport, FixedLengthsAndAConcurrencyAreRequired) {
  const System system = SystemPreset("h100_sxm_80g");
  const TransformerModel model = ModelPreset("llama3.1-8b", system);
  std::vector<std::string> notes;
  // bench_serving's --random-range-ratio defaults to 0: lengths drawn from
  // [1, I], which the fixed-length model does not read.
  absl::StatusOr<ServingSpec> spec =
      FromSglangArgs(Words("--mem-fraction-static 0.9 --dataset-name random "
                           "--random-range-ratio 0.5 --max-concurrency 8"),
                     model, system, &notes);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(FieldErrorsOf(spec.status())[0].field, "--random-range-ratio");
  EXPECT_TRUE(absl::StrContains(FieldErrorsOf(spec.status())[0].message,
                                "--random-range-ratio 1"));
  // Neither --max-concurrency nor --max-running-requests.
  spec =
      FromSglangArgs(Words(std::string("--mem-fraction-static 0.9") + kBench),
                     model, system, &notes);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(FieldErrorsOf(spec.status())[0].code, ErrorCode::kMissingField);
  EXPECT_TRUE(absl::StrContains(FieldErrorsOf(spec.status())[0].message,
                                "--max-running-requests"));
}

TEST(SglangImport, EveryFlagHasOneRowAndTheReadmeShowsTheTable) {
  serving_test::ExpectFlagTableShown(SglangFlags(), SglangFlagsMarkdown(),
                                     "sglang flags");
}

}  // namespace
}  // namespace blueprint
