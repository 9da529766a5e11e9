#include "core/validation/validation.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/base/field_errors.h"
#include "core/validation/corpus.h"

namespace blueprint {
namespace {

// A row of the GPT-3 1.7B weak-scaling run (Narayanan et al. Table 1 shape)
// on the A100 preset, measured in `metric`.
std::string Row(const std::string& id, const std::string& metric,
                double value, const std::string& extra = "") {
  return R"({"id": ")" + id + R"(", "source_key": "T", "group": "bf16_dense",
    "model": "m", "system": "a100_sxm_80g", "gpus": 32,
    "measured_metric": ")" + metric + R"(", "measured_value": )" +
         std::to_string(value) + R"(, "flop_definition": "narayanan_eq3",)" +
         extra + R"(
    "megatron_args": ["--num-layers", "24", "--hidden-size", "2304",
      "--num-attention-heads", "24", "--seq-length", "2048",
      "--max-position-embeddings", "2048", "--vocab-size", "51200",
      "--micro-batch-size", "1", "--global-batch-size", "512",
      "--world-size", "32", "--recompute-granularity", "full",
      "--recompute-method", "uniform", "--fp16"]})";
}

std::string Corpus(const std::vector<std::string>& rows) {
  std::string out =
      R"({"format": "blueprinting.validation_corpus/1", "rows": [)";
  for (size_t i = 0; i < rows.size(); ++i) {
    out += (i == 0 ? "" : ",") + rows[i];
  }
  return out + "]}";
}

TEST(Validation, TheShippedCorpusParses) {
  absl::StatusOr<std::vector<ValidationRow>> rows =
      ParseCorpus(ValidationCorpusText());
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->size(), 349u);  // 331 shared runs + 18 added (README.md)
  int usable = 0;
  for (const ValidationRow& row : *rows) {
    if (row.skip.empty()) {
      ++usable;
      EXPECT_FALSE(row.megatron_args.empty()) << row.id;
      EXPECT_FALSE(row.system.empty()) << row.id;
    }
  }
  EXPECT_GT(usable, 80);
}

TEST(Validation, ARowCountsInItsSummarySource) {
  absl::StatusOr<std::vector<ValidationRow>> rows = ParseCorpus(Corpus(
      {Row("a", "iteration_s", 10),
       Row("b", "iteration_s", 10, R"( "summary_source": "T/new",)")}));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ((*rows)[0].summary_source, "T");
  EXPECT_EQ((*rows)[1].summary_source, "T/new");
  const ValidationReport report =
      Validate(*rows, ModelProfile::kCalculon, {});
  EXPECT_EQ(report.by_source.at("T").rows, 1);
  EXPECT_EQ(report.by_source.at("T/new").rows, 1);
  EXPECT_EQ(report.by_group.at("bf16_dense").rows, 2);

  const absl::StatusOr<std::vector<ValidationRow>> empty = ParseCorpus(
      Corpus({Row("c", "iteration_s", 10, R"( "summary_source": "",)")}));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(std::string(empty.status().message())
                .find("rows[0].summary_source: expected a non-empty key"),
            std::string::npos)
      << empty.status();
}

TEST(Validation, MetricsAreConsistentConversionsOfOneStepTime) {
  absl::StatusOr<std::vector<ValidationRow>> rows = ParseCorpus(Corpus(
      {Row("a", "iteration_s", 10), Row("b", "tokens_per_sec_per_gpu", 1000),
       Row("c", "tflops_per_gpu", 100)}));
  ASSERT_TRUE(rows.ok()) << rows.status();
  const ValidationReport report = Validate(*rows, ModelProfile::kCalculon);
  ASSERT_EQ(report.rows.size(), 3u);
  for (const RowResult& r : report.rows) ASSERT_TRUE(r.predicted_ok) << r.reason;
  const double t = report.rows[0].predicted;
  EXPECT_EQ(t, report.rows[0].predicted_time);
  EXPECT_DOUBLE_EQ(report.rows[1].predicted, 512.0 * 2048 / (t * 32));
  // Eq. 3 with full recompute: 96 B s l h^2 (1 + s/6h + V/16lh).
  const double eq3 = 96.0 * 512 * 2048 * 24 * 2304.0 * 2304 *
                     (1 + 2048 / (6 * 2304.0) + 51200 / (16 * 24 * 2304.0));
  EXPECT_DOUBLE_EQ(report.rows[2].predicted, eq3 / (t * 32) / 1e12);
  EXPECT_DOUBLE_EQ(report.rows[0].error, (t - 10) / 10);
  EXPECT_EQ(report.overall.rows, 3);
  EXPECT_EQ(report.by_source.at("T").rows, 3);
  double sum = 0, max = 0;
  for (const RowResult& r : report.rows) {
    sum += std::fabs(r.error);
    max = std::max(max, std::fabs(r.error));
  }
  EXPECT_DOUBLE_EQ(report.overall.mean_abs_error, sum / 3);
  EXPECT_EQ(report.overall.max_abs_error, max);
}

// Rows of one run measured apart give the floor no model can beat: with
// 10 s and 20 s, predicting 10 s is 0% and 50% off, the least sum (0.5);
// the rows of another run and the skipped rows do not count.
TEST(Validation, RepeatedRunsBoundTheErrorFromBelow) {
  std::string other = Row("o", "iteration_s", 30);
  other.replace(other.find("\"512\""), 5, "\"256\"");  // another batch
  absl::StatusOr<std::vector<ValidationRow>> rows = ParseCorpus(Corpus(
      {Row("a", "iteration_s", 10), other, Row("b", "iteration_s", 20),
       Row("s", "iteration_s", 40, R"("skip": "no source",)")}));
  ASSERT_TRUE(rows.ok()) << rows.status();
  const ValidationReport report = Validate(*rows, ModelProfile::kCalculon);
  ASSERT_EQ(report.overall.rows, 3);
  ASSERT_EQ(report.repeated_runs.size(), 1u);
  const RepeatedRun& run = report.repeated_runs[0];
  EXPECT_EQ(run.ids, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(run.group, "bf16_dense");
  EXPECT_EQ(run.measured_min, 10);
  EXPECT_EQ(run.measured_max, 20);
  EXPECT_EQ(run.floor_abs_error_sum, 0.5);
  EXPECT_EQ(report.floor_overall.rows, 3);
  EXPECT_DOUBLE_EQ(report.floor_overall.floor_mean_abs_error, 0.5 / 3);
  EXPECT_DOUBLE_EQ(report.floor_by_group.at("bf16_dense").floor_mean_abs_error,
                   0.5 / 3);
  // The model's own error can be no lower.
  EXPECT_GE(report.overall.mean_abs_error,
            report.floor_overall.floor_mean_abs_error);
  const std::string text = ValidationText(report);
  EXPECT_NE(text.find("repeated a,b bf16_dense measured=10..20 "
                      "floor_abs_error_sum=0.5\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("floor overall rows=3 floor_mean_abs_error="),
            std::string::npos)
      << text;
  const nlohmann::json json = ValidationJson(report);
  EXPECT_EQ(json["repeated_runs"][0]["ids"][1], "b");
  EXPECT_EQ(json["floor_overall"]["rows"], 3);
}

TEST(Validation, KendallTauBCountsOrderedPairsAndTies) {
  EXPECT_EQ(KendallTauB({1, 2, 3, 4}, {10, 20, 30, 40}), 1);
  EXPECT_EQ(KendallTauB({1, 2, 3, 4}, {4, 3, 2, 1}), -1);
  // One discordant pair of three: (2 - 1) / 3.
  EXPECT_DOUBLE_EQ(KendallTauB({1, 2, 3}, {1, 3, 2}), 1.0 / 3);
  // A tie in x: 2 concordant pairs over sqrt((3 - 1) (3 - 0)).
  EXPECT_DOUBLE_EQ(KendallTauB({1, 1, 2}, {1, 2, 3}), 2 / std::sqrt(6.0));
  // No ordered pair on one side: 0, not a division by zero.
  EXPECT_EQ(KendallTauB({1, 2, 3}, {5, 5, 5}), 0);
  EXPECT_EQ(KendallTauB({1}, {1}), 0);
}

// Three mappings of one model on one system (micro batch 1, 2, 4; the
// first measured twice) form one ranking of 3 mappings; a source with two
// mappings forms none; a source whose mapping is assumed is summarised
// beside the others.
TEST(Validation, RankingsOrderEachSourcesMappingsByThroughput) {
  auto with_micro_batch = [](std::string row, const char* mbs) {
    const std::string flag = R"("--micro-batch-size", "1")";
    row.replace(row.find(flag), flag.size(),
                std::string(R"("--micro-batch-size", ")") + mbs + "\"");
    return row;
  };
  auto of_source = [](std::string row, const std::string& source) {
    row.replace(row.find(R"("source_key": "T")"), 17,
                "\"source_key\": \"" + source + "\"");
    return row;
  };
  absl::StatusOr<std::vector<ValidationRow>> rows = ParseCorpus(Corpus({
      Row("a1", "iteration_s", 10), Row("a2", "iteration_s", 12),
      with_micro_batch(Row("b", "iteration_s", 9), "2"),
      with_micro_batch(Row("c", "tokens_per_sec_per_gpu", 3000), "4"),
      of_source(Row("u", "iteration_s", 10), "U"),
      of_source(with_micro_batch(Row("v", "iteration_s", 9), "2"), "U"),
      of_source(Row("x", "iteration_s", 10, R"( "mapping_assumed": true,)"),
                "X"),
      of_source(with_micro_batch(Row("y", "iteration_s", 9), "2"), "X"),
      of_source(with_micro_batch(Row("z", "iteration_s", 8), "4"), "X")}));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_TRUE((*rows)[6].mapping_assumed);
  EXPECT_FALSE((*rows)[7].mapping_assumed);
  const ValidationReport report = Validate(*rows, ModelProfile::kCalculon);
  ASSERT_EQ(report.overall.rows, 9);
  const double tokens = 512.0 * 2048;
  EXPECT_DOUBLE_EQ(report.rows[0].measured_throughput, tokens / (10 * 32));
  EXPECT_DOUBLE_EQ(report.rows[0].predicted_throughput,
                   tokens / (report.rows[0].predicted_time * 32));
  EXPECT_DOUBLE_EQ(report.rows[3].measured_throughput, 3000);

  ASSERT_EQ(report.rankings.size(), 2u);
  const Ranking& t = report.rankings[0];
  EXPECT_EQ(t.source_key, "T");
  EXPECT_EQ(t.ids, (std::vector<std::string>{"a1", "a2", "b", "c"}));
  EXPECT_EQ(t.mappings, 3);
  EXPECT_FALSE(t.mapping_assumed);
  const std::vector<double> measured = {
      (tokens / (10 * 32) + tokens / (12 * 32)) / 2, tokens / (9 * 32), 3000};
  const std::vector<double> predicted = {report.rows[0].predicted_throughput,
                                         report.rows[2].predicted_throughput,
                                         report.rows[3].predicted_throughput};
  EXPECT_EQ(t.tau, KendallTauB(measured, predicted));
  EXPECT_EQ(report.rankings[1].source_key, "X");
  EXPECT_TRUE(report.rankings[1].mapping_assumed);
  EXPECT_EQ(report.rankings_printed.rankings, 1);
  EXPECT_EQ(report.rankings_printed.mean_tau, t.tau);
  EXPECT_EQ(report.rankings_printed.min_ranking, "T/m/a100_sxm_80g");
  EXPECT_EQ(report.rankings_assumed.rankings, 1);

  const std::string text = ValidationText(report);
  EXPECT_NE(text.find("ranking X m a100_sxm_80g mappings=3 tau="),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" mapping_assumed ids=x,y,z\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("rankings printed rankings=1 mean_tau="),
            std::string::npos)
      << text;
  const nlohmann::json json = ValidationJson(report);
  EXPECT_EQ(json["rankings"][0]["mappings"], 3);
  EXPECT_EQ(json["rankings_assumed"]["rankings"], 1);
}

TEST(Validation, SkippedAndRejectedRowsAreReportedWithTheirReason) {
  std::string bad = Row("bad", "iteration_s", 1);
  bad.replace(bad.find("\"24\""), 4, "\"25\"");  // 25 layers, fine
  bad.replace(bad.find("\"2304\""), 6, "\"2305\"");  // heads do not divide
  absl::StatusOr<std::vector<ValidationRow>> rows = ParseCorpus(Corpus(
      {R"({"id": "s", "source_key": "T", "group": "moe", "model": "m",
           "system": "", "gpus": 8, "measured_metric": "mfu",
           "measured_value": 0.5, "flop_definition": "megatron_model",
           "skip": "no system preset for GB200"})",
       bad}));
  ASSERT_TRUE(rows.ok()) << rows.status();
  const ValidationReport report = Validate(*rows, ModelProfile::kCalculon);
  EXPECT_EQ(report.skipped, 2);
  EXPECT_EQ(report.overall.rows, 0);
  EXPECT_EQ(report.rows[0].reason, "no system preset for GB200");
  EXPECT_NE(report.rows[1].reason.find("import: "), std::string::npos)
      << report.rows[1].reason;
  const std::string text = ValidationText(report);
  EXPECT_NE(text.find("skipped s T moe: no system preset for GB200\n"),
            std::string::npos)
      << text;
}

TEST(Validation, MalformedCorpusNamesEveryProblem) {
  absl::StatusOr<std::vector<ValidationRow>> rows = ParseCorpus(
      R"({"format": "blueprinting.validation_corpus/1", "rows": [
        {"id": "x", "source_key": "T", "group": "g", "model": "m",
         "system": "a100_sxm_80g", "gpus": 0, "measured_metric": "speed",
         "measured_value": -1, "flop_definition": "megatron_model",
         "megatron_args": "--fp16"}]})");
  ASSERT_FALSE(rows.ok());
  const std::vector<FieldError> errors = FieldErrorsOf(rows.status());
  std::vector<std::string> fields;
  for (const FieldError& e : errors) fields.push_back(e.field);
  EXPECT_EQ(fields, (std::vector<std::string>{
                        "rows[0].gpus", "rows[0].measured_metric",
                        "rows[0].measured_value", "rows[0].megatron_args"}));
  EXPECT_FALSE(ParseCorpus("[]").ok());
  EXPECT_FALSE(ParseCorpus(R"({"format": "other", "rows": []})").ok());
}

}  // namespace
}  // namespace blueprint
