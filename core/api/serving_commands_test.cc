// The serving commands end to end on strings: outputs, exit codes, errors.
#include "core/api/serving_commands.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/api/commands.h"
#include "core/base/field_errors.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

std::string Spec(int64_t tensor, int64_t concurrency) {
  return absl::StrCat(
      "{\"format\": \"blueprinting.serving_spec/1\", \"model\": "
      "\"llama3.1-8b\", \"system\": \"h100_sxm_80g\", \"weight_datatype\": "
      "\"bfloat16\", \"memory_utilization\": 0.9, \"kv_cache\": "
      "{\"datatype\": \"bfloat16\", \"block_tokens\": 16}, \"pools\": "
      "{\"type\": \"aggregated\", \"pool\": {\"tensor\": ",
      tensor,
      ", \"pipeline\": 1, \"expert\": 1, \"attention_data\": 1, "
      "\"replicas\": 8}}, \"workload\": {\"input_tokens\": 512, "
      "\"output_tokens\": 128, \"concurrency\": ",
      concurrency, "}, \"speculative\": {\"type\": \"none\"}}");
}

TEST(ServingCommands, CheckPrintsTheCanonicalSpecThatChecksAgain) {
  const CommandResult checked = ServeCheck(Spec(1, 32));
  ASSERT_EQ(checked.exit_code, kExitOk)
      << (checked.errors.empty() ? "" : checked.errors[0].message);
  EXPECT_TRUE(absl::StrContains(checked.output, "\"name\": \"llama3.1-8b\""));
  const CommandResult again = ServeCheck(checked.output);
  EXPECT_EQ(again.exit_code, kExitOk);
  EXPECT_EQ(again.output, checked.output);
  // The analysis of the canonical spec is the analysis of the preset one.
  EXPECT_EQ(Serve(checked.output).output, Serve(Spec(1, 32)).output);
}

TEST(ServingCommands, ServePrintsEveryFigure) {
  const CommandResult served = Serve(Spec(1, 32));
  ASSERT_EQ(served.exit_code, kExitOk);
  for (const char* figure :
       {"\nttft ", "\ntpot ", "\noutput_tokens_per_second_per_gpu ",
        "\nrequests_per_second ", "\nkv_cache_bytes_per_token 131072\n",
        "\nkv_cache_bytes_per_rank ", "\nmax_concurrency ",
        "\nprefill_time ", "\ndecode_step_time "}) {
    EXPECT_TRUE(absl::StrContains(served.output, figure)) << figure;
  }
}

TEST(ServingCommands, ViolationsExitTwoWithTheirFields) {
  // Tensor 3 divides neither Llama-3.1-8B's 32 heads nor its 8 KV heads.
  const CommandResult served = Serve(Spec(3, 0));
  EXPECT_EQ(served.exit_code, kExitInvalidInput);
  EXPECT_TRUE(served.output.empty());
  ASSERT_GE(served.errors.size(), 3u);
  EXPECT_EQ(served.errors[0].field, "workload.concurrency");
  EXPECT_EQ(served.errors[1].field, "pools.pool.tensor");
  EXPECT_EQ(served.errors[1].code, ErrorCode::kNotDivisible);
  EXPECT_EQ(ServeCheck("{").exit_code, kExitInvalidInput);
  EXPECT_EQ(ServeCheck("{}").exit_code, kExitInvalidInput);
}

TEST(ServingCommands, ExplainNamesTheFormulaAndRejectsUnknownFigures) {
  const CommandResult explained = ServeExplain(Spec(1, 32), "tpot");
  ASSERT_EQ(explained.exit_code, kExitOk);
  EXPECT_TRUE(absl::StartsWith(explained.output, "tpot = "));
  EXPECT_TRUE(absl::StrContains(explained.output, "formula: "));
  EXPECT_TRUE(absl::StrContains(explained.output, "decode_step_time = "));
  const CommandResult unknown = ServeExplain(Spec(1, 32), "mfu");
  EXPECT_EQ(unknown.exit_code, kExitInvalidInput);
  ASSERT_EQ(unknown.errors.size(), 1u);
  EXPECT_EQ(unknown.errors[0].code, ErrorCode::kUnknownChoice);
}

}  // namespace
}  // namespace blueprint
