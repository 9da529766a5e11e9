#include "core/serving/serving_search.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/field_errors.h"
#include "core/base/json.h"
#include "core/serving/serving_check.h"
#include "core/serving/serving_model.h"
#include "core/serving/serving_search_flags.h"
#include "core/serving/serving_test_util.h"
#include "core/testing/files.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using serving_test::Fields;
using serving_test::Parse;
using serving_test::SpecText;

// The model and system of the goal: Llama-3.1-70B on H100s.
ServingSpec Llama70bOnH100() { return Parse(SpecText{}); }

ServingSearchOptions Options(int64_t procs) {
  ServingSearchOptions options;
  options.procs = procs;
  options.input_tokens = 1024;
  options.output_tokens = 256;
  return options;
}

int64_t Gpus(const ServingPool& pool) {
  return pool.tensor * pool.pipeline * pool.attention_data * pool.replicas;
}

int64_t Gpus(const ServingSpec& spec) {
  return IsDisaggregated(spec) ? Gpus(PrefillPool(spec)) + Gpus(DecodePool(spec))
                               : Gpus(DecodePool(spec));
}

// Every figure of `a` equals `b`'s (the search's figures are the
// analysis').
void ExpectSameFigures(const ServingFigures& a, const ServingFigures& b) {
  for (const ServingFigureRow& row : ServingFigureTable()) {
    EXPECT_EQ(a.*row.field, b.*row.field) << row.name;
  }
}

TEST(ServingSearch, EveryMappingIsCheckedAnalysedAndRankedBestFirst) {
  const ServingSpec base = Llama70bOnH100();
  ServingSearchOptions options = Options(8);
  options.top = 1 << 20;  // keep every mapping
  absl::StatusOr<ServingSearchResult> result =
      SearchServing(base.model, base.system, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_FALSE(result->best.empty());
  EXPECT_EQ(result->meeting_targets, result->evaluated);  // no targets
  EXPECT_EQ(static_cast<int64_t>(result->best.size()), result->evaluated);
  bool aggregated = false, disaggregated = false;
  std::set<std::tuple<std::string, int64_t>> seen;
  for (size_t i = 0; i < result->best.size(); ++i) {
    const ServingSearchEntry& e = result->best[i];
    SCOPED_TRACE(ServingSpecToJson(e.spec));
    EXPECT_TRUE(FindServingViolations(e.spec).empty());
    absl::StatusOr<ServingAnalysis> analysis = AnalyzeServing(e.spec);
    ASSERT_TRUE(analysis.ok()) << analysis.status();
    ExpectSameFigures(e.figures, analysis->figures);
    EXPECT_EQ(Gpus(e.spec), 8);
    if (i > 0) {
      EXPECT_GE(result->best[i - 1].figures.output_tokens_per_second_per_gpu,
                e.figures.output_tokens_per_second_per_gpu);
    }
    (IsDisaggregated(e.spec) ? disaggregated : aggregated) = true;
    // Mappings are distinct.
    EXPECT_TRUE(seen.insert({ServingSpecToJson(e.spec), 0}).second);
  }
  EXPECT_TRUE(aggregated);
  EXPECT_TRUE(disaggregated);
}

TEST(ServingSearch, ConcurrencyStopsWhereTheCheckerRejects) {
  const ServingSpec base = Llama70bOnH100();
  ServingSearchOptions options = Options(8);
  options.top = 1 << 20;
  absl::StatusOr<ServingSearchResult> result =
      SearchServing(base.model, base.system, options);
  ASSERT_TRUE(result.ok()) << result.status();
  std::set<std::string> kept;
  for (const ServingSearchEntry& e : result->best) {
    kept.insert(ServingSpecToJson(e.spec));
  }
  // Every mapping's doubled concurrency is either searched too or rejected
  // by the checker (the KV cache does not hold it).
  for (const ServingSearchEntry& e : result->best) {
    ServingSpec doubled = e.spec;
    doubled.workload.concurrency *= 2;
    if (kept.count(ServingSpecToJson(doubled)) != 0) continue;
    const std::vector<FieldError> violations = FindServingViolations(doubled);
    ASSERT_FALSE(violations.empty()) << ServingSpecToJson(doubled);
    EXPECT_EQ(violations[0].code, ErrorCode::kOverCapacity);
  }
}

TEST(ServingSearch, TargetsBoundTtftAndTpot) {
  const ServingSpec base = Llama70bOnH100();
  ServingSearchOptions all = Options(8);
  ServingSearchOptions targeted = Options(8);
  targeted.max_ttft = 0.5;
  targeted.max_tpot = 0.03;
  targeted.top = 1 << 20;
  absl::StatusOr<ServingSearchResult> unbounded =
      SearchServing(base.model, base.system, all);
  absl::StatusOr<ServingSearchResult> bounded =
      SearchServing(base.model, base.system, targeted);
  ASSERT_TRUE(unbounded.ok() && bounded.ok());
  EXPECT_EQ(unbounded->evaluated, bounded->evaluated);
  EXPECT_LT(bounded->meeting_targets, bounded->evaluated);
  ASSERT_FALSE(bounded->best.empty());
  for (const ServingSearchEntry& e : bounded->best) {
    EXPECT_LE(e.figures.ttft, 0.5);
    EXPECT_LE(e.figures.tpot, 0.03);
  }
  // The unbounded best misses a target, or it is the bounded best too.
  const ServingFigures& best = unbounded->best[0].figures;
  if (best.ttft <= 0.5 && best.tpot <= 0.03) {
    EXPECT_EQ(best.output_tokens_per_second_per_gpu,
              bounded->best[0].figures.output_tokens_per_second_per_gpu);
  } else {
    EXPECT_GT(best.output_tokens_per_second_per_gpu,
              bounded->best[0].figures.output_tokens_per_second_per_gpu);
  }
  EXPECT_EQ(unbounded->best.size(), 10u);  // the default top

  ServingSearchOptions impossible = Options(8);
  impossible.max_tpot = 1e-9;
  absl::StatusOr<ServingSearchResult> none =
      SearchServing(base.model, base.system, impossible);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->best.empty());
  EXPECT_EQ(none->meeting_targets, 0);
  EXPECT_GT(none->evaluated, 0);
}

TEST(ServingSearch, ErrorsNameTheFlags) {
  const ServingSpec base = Llama70bOnH100();
  ServingSearchOptions options = Options(1 << 30);  // beyond the system
  options.input_tokens = base.model.seq_size;       // with output: too long
  options.top = 0;
  absl::StatusOr<ServingSearchResult> result =
      SearchServing(base.model, base.system, options);
  ASSERT_FALSE(result.ok());
  const std::vector<FieldError> errors = FieldErrorsOf(result.status());
  EXPECT_EQ(Fields(errors),
            (std::vector<std::string>{"--input-len", "--procs", "--top"}));
  for (const FieldError& e : errors) {
    EXPECT_EQ(e.message.rfind(e.field, 0), 0u) << e.message;
  }
}

TEST(ServingSearchFlags, EveryProblemAtOnceEachNamingItsFlag) {
  absl::StatusOr<ServingSearchOptions> options = ParseServingSearchFlags(
      {"--procs", "0", "--input-len", "1024", "--output-len", "256",
       "--max-ttft", "-1", "--max-tpot", "x", "--kv-cache-dtype", "int4"});
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(Fields(FieldErrorsOf(options.status())),
            (std::vector<std::string>{"--procs", "--max-ttft", "--max-tpot",
                                      "--kv-cache-dtype"}));
  absl::StatusOr<ServingSearchOptions> missing = ParseServingSearchFlags({});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(Fields(FieldErrorsOf(missing.status())),
            (std::vector<std::string>{"--procs", "--input-len",
                                      "--output-len"}));
}

TEST(ServingSearchFlags, ParsesEveryFlag) {
  absl::StatusOr<ServingSearchOptions> options = ParseServingSearchFlags(
      {"--system", "h100_sxm_80g", "--hf-config=llama3.1-70b", "--procs", "8",
       "--input-len", "1024", "--output-len=256", "--max-ttft", "2",
       "--max-tpot", "0.05", "--top", "3", "--kv-cache-dtype", "float8",
       "--weight-datatype", "float8", "--json"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->procs, 8);
  EXPECT_EQ(options->input_tokens, 1024);
  EXPECT_EQ(options->output_tokens, 256);
  EXPECT_EQ(options->max_ttft, std::optional<double>(2));
  EXPECT_EQ(options->max_tpot, std::optional<double>(0.05));
  EXPECT_EQ(options->top, 3);
  EXPECT_EQ(options->kv_datatype, DataType::kFloat8);
  EXPECT_EQ(options->weight_datatype, DataType::kFloat8);
  EXPECT_TRUE(options->json);
}

// The README's flag table is ServingSearchFlagsMarkdown().
TEST(ServingSearchFlags, ReadmeShowsTheTable) {
  const std::optional<std::string> shown = test_files::MarkedSection(
      "core/serving/README.md", "ServingSearchFlagsMarkdown()");
  ASSERT_TRUE(shown.has_value())
      << "core/serving/README.md has no ServingSearchFlagsMarkdown() markers";
  EXPECT_TRUE(*shown == ServingSearchFlagsMarkdown())
      << "put this between the README's markers:\n"
      << ServingSearchFlagsMarkdown();
}

TEST(ServingSearch, FormatsATableAndJsonWithSpecs) {
  const ServingSpec base = Llama70bOnH100();
  ServingSearchOptions options = Options(8);
  options.top = 2;
  absl::StatusOr<ServingSearchResult> result =
      SearchServing(base.model, base.system, options);
  ASSERT_TRUE(result.ok());
  const std::string text = FormatServingSearch(*result, options);
  EXPECT_NE(text.find("tokens/s/GPU"), std::string::npos) << text;
  options.json = true;
  absl::StatusOr<nlohmann::json> json =
      ParseJson(FormatServingSearch(*result, options));
  ASSERT_TRUE(json.ok());
  ASSERT_EQ((*json)["mappings"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const nlohmann::json& mapping = (*json)["mappings"][i];
    EXPECT_EQ(mapping["spec"].dump(),
              nlohmann::json::parse(ServingSpecToJson(result->best[i].spec))
                  .dump());
    EXPECT_EQ(mapping["figures"]["tpot"].get<double>(),
              result->best[i].figures.tpot);
    // The spec parses back to the mapping.
    absl::StatusOr<ServingSpec> reparsed =
        ParseServingSpecJson(mapping["spec"].dump());
    ASSERT_TRUE(reparsed.ok()) << reparsed.status();
    EXPECT_EQ(ServingSpecToJson(*reparsed),
              ServingSpecToJson(result->best[i].spec));
  }
}

}  // namespace
}  // namespace blueprint
