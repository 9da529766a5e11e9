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
