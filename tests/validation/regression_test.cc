// The regression gate: the mean |error| of every group (bf16_dense, fp8,
// moe) and every source (S1 ... S14) under both profiles must not be worse
// than tests/validation/baseline.json records, nor cover fewer rows, and the
// rankings of the sources' mappings (Kendall's tau) no worse on average. It is no target to tune to:
// after a deliberate improvement, `bazel run
// //tools:update_validation_baseline` records the new values.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/testing/files.h"
#include "core/validation/corpus.h"
#include "core/validation/validation.h"

namespace blueprint {
namespace {

class RegressionGate : public ::testing::TestWithParam<ModelProfile> {};

TEST_P(RegressionGate, NoGroupIsWorseThanRecorded) {
  const std::string baseline =
      test_files::ReadFile("tests/validation/baseline.json");
  ASSERT_FALSE(baseline.empty()) << "tests/validation/baseline.json";
  absl::StatusOr<std::vector<ValidationRow>> rows =
      ParseCorpus(ValidationCorpusText());
  ASSERT_TRUE(rows.ok()) << rows.status();
  const ValidationReport report = Validate(*rows, GetParam());
  absl::StatusOr<std::vector<std::string>> regressions =
      BaselineRegressions(baseline, report);
  ASSERT_TRUE(regressions.ok()) << regressions.status();
  for (const std::string& r : *regressions) ADD_FAILURE() << r;
  // Every group and source the corpus holds is recorded (a new one needs
  // its value).
  for (const auto* summaries : {&report.by_group, &report.by_source}) {
    for (const auto& [key, summary] : *summaries) {
      EXPECT_NE(baseline.find("\"" + key + "\""), std::string::npos)
          << key << " is not in baseline.json: run "
                    "`bazel run //tools:update_validation_baseline`";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Profiles, RegressionGate,
                         ::testing::Values(ModelProfile::kCalculon,
                                           ModelProfile::kRefined));

// The gate itself fails on a worse mean, on fewer rows, on a lost group,
// and on fewer ranked sets or a lower mean tau.
TEST(RegressionGateLogic, FailsOnEveryKindOfRegression) {
  ValidationReport report;
  report.profile = ModelProfile::kRefined;
  report.by_group["fp8"] = {10, 0.2, 0.5, "r1"};
  report.by_group["moe"] = {5, 0.3, 0.4, "r2"};
  report.by_source["S1"] = {15, 0.25, 0.5, "r1"};
  const std::string base = R"({"format": "blueprinting.validation_baseline/3",
    "calculon": {"groups": {}, "sources": {}}, "refined": {"groups": {
      "fp8": {"rows": 10, "mean_abs_error": 0.1},
      "moe": {"rows": 6, "mean_abs_error": 0.3},
      "bf16_dense": {"rows": 3, "mean_abs_error": 0.05}}, "sources": {
      "S1": {"rows": 15, "mean_abs_error": 0.2},
      "S14": {"rows": 8, "mean_abs_error": 0.04}},
      "rankings": {"rankings": 4, "mean_tau": 0.5}}})";
  absl::StatusOr<std::vector<std::string>> r =
      BaselineRegressions(base, report);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, (std::vector<std::string>{
                    "refined group bf16_dense: no row predicted, 3 recorded",
                    "refined group fp8: mean |error| 0.2 is worse than the "
                    "recorded 0.1",
                    "refined group moe: 5 rows predicted, 6 recorded",
                    "refined source S1: mean |error| 0.25 is worse than the "
                    "recorded 0.2",
                    "refined source S14: no row predicted, 8 recorded",
                    "refined rankings: 0 ranked sets, 4 recorded",
                    "refined rankings: mean tau 0 is below the recorded 0.5"}));
  report.by_group["moe"].rows = 6;
  report.by_group["fp8"].mean_abs_error = 0.1;
  report.by_group["bf16_dense"] = {3, 0.01, 0.02, "r3"};
  report.by_source["S1"].mean_abs_error = 0.2;
  report.by_source["S14"] = {8, 0.03, 0.05, "k1"};
  report.rankings_printed = {4, 0.5, 0.1, "S1/m/s", 1};
  r = BaselineRegressions(base, report);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
  EXPECT_FALSE(BaselineRegressions("{}", report).ok());
  // A profile without its sources is malformed, not silently ungated.
  EXPECT_FALSE(BaselineRegressions(
                   R"({"format": "blueprinting.validation_baseline/3",
                       "refined": {"groups": {}}})",
                   report)
                   .ok());
}

}  // namespace
}  // namespace blueprint
