// The Calculon alignment gate: every vendored oracle case (tests/calculon/
// oracle, imported by tools/import_oracle) is accepted or rejected as
// Calculon did, and for accepted cases every numeric field of Calculon's
// stats JSON is reproduced within 1e-9 relative (1e-12 absolute near zero).
// On a mismatch it names the case, the field and both values.
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/adapters/calculon.h"
#include "core/base/json.h"
#include "core/report/calculon_stats.h"
#include "core/pipeline/pipeline.h"
#include "core/spec/check.h"
#include "core/testing/doubles.h"
#include "core/testing/status_matchers.h"
#include "core/testing/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

constexpr char kOracle[] = "tests/calculon/oracle/";

using test_files::ReadFile;

std::vector<std::string> Cases() {
  std::vector<std::string> cases;
  for (absl::string_view line :
       absl::StrSplit(ReadFile(std::string(kOracle) + "cases.txt"), '\n')) {
    if (!line.empty()) cases.emplace_back(line);
  }
  return cases;
}

// Our decision for one case: the errors (empty when accepted) and, when
// accepted, the stats JSON.
struct Outcome {
  std::vector<std::string> errors;
  nlohmann::json stats;
};

Outcome Evaluate(const std::string& dir) {
  Outcome out;
  absl::StatusOr<MappingSpec> spec =
      FromCalculon(ReadFile(dir + "app.json"), ReadFile(dir + "exe.json"),
                   ReadFile(dir + "sys.json"));
  if (!spec.ok()) {
    out.errors = absl::StrSplit(spec.status().message(), '\n');
    return out;
  }
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  if (!program.ok()) {
    out.errors = absl::StrSplit(program.status().message(), '\n');
    return out;
  }
  absl::StatusOr<PipelineResult> result = RunPipeline(*program);
  if (!result.ok()) {
    out.errors = {std::string(result.status().ToString())};
    return out;
  }
  for (const FieldError& v : result->memory.violations) {
    out.errors.push_back(v.message);
  }
  out.stats = CalculonStatsJson(result->plan.block, result->iteration.figures,
                                result->memory.figures);
  return out;
}

TEST(CalculonAlignment, EveryOracleCase) {
  const std::vector<std::string> cases = Cases();
  ASSERT_EQ(cases.size(), 55u) << "run tools/import_oracle";
  int accepted = 0, rejected = 0;
  for (const std::string& name : cases) {
    SCOPED_TRACE(name);
    const std::string dir = std::string(kOracle) + name + "/";
    const bool calculon_accepts =
        absl::StripAsciiWhitespace(ReadFile(dir + "rc.txt")) == "0";
    const Outcome ours = Evaluate(dir);
    const bool we_accept = ours.errors.empty();
    ASSERT_EQ(we_accept, calculon_accepts)
        << name << ": Calculon " << (calculon_accepts ? "accepts" : "rejects")
        << " (" << absl::StripTrailingAsciiWhitespace(
                       ReadFile(dir + "calculon_error.txt"))
        << "), we " << (we_accept ? "accept" : "reject: " + ours.errors[0]);
    if (!calculon_accepts) {
      ++rejected;
      for (const std::string& error : ours.errors) {
        // A real message: names a field path and its value in parentheses.
        EXPECT_NE(error.find('('), std::string::npos) << error;
        EXPECT_GT(error.size(), 20u) << error;
      }
      continue;
    }
    ++accepted;
    absl::StatusOr<nlohmann::json> expected =
        ParseJson(ReadFile(dir + "stats.json"));
    ASSERT_THAT(expected, IsOk());
    for (const auto& [field, want] : expected->items()) {
      ASSERT_TRUE(ours.stats.contains(field)) << name << ": missing " << field;
      const nlohmann::json& got = ours.stats[field];
      if (want.is_null()) {
        EXPECT_TRUE(got.is_null()) << name << ": " << field << " is " << got;
        continue;
      }
      ASSERT_TRUE(got.is_number()) << name << ": " << field;
      const double w = want.get<double>();
      const double g = got.get<double>();
      const double tolerance = std::max(1e-9 * std::fabs(w), 1e-12);
      EXPECT_LE(std::fabs(g - w), tolerance)
          << name << ": " << field << " ours=" << CanonicalJson(got)
          << " calculon=" << CanonicalJson(want);
    }
    EXPECT_EQ(ours.stats.size(), expected->size()) << name;
  }
  EXPECT_EQ(accepted, 40);
  EXPECT_EQ(rejected, 15);
}

// The Korthikanti et al. 2022 configurations reproduce Calculon's iteration
// times exactly (to the last bit of the shortest round-trip form is not
// promised across Python and C++, so: to 1e-12 relative).
TEST(CalculonAlignment, KorthikantiIterationTimes) {
  for (const char* name :
       {"v09_175B_t8p8_v3_full_ar_paperval", "v14_175B_t8p8_seqsel_redo",
        "v23_22B_t8_full_paperval", "v24_530B_t8p35_v3_seqsel",
        "v26_1T_t8p64_full_paperval"}) {
    SCOPED_TRACE(name);
    const std::string dir = std::string(kOracle) + name + "/";
    const Outcome ours = Evaluate(dir);
    ASSERT_TRUE(ours.errors.empty()) << ours.errors[0];
    absl::StatusOr<nlohmann::json> expected =
        ParseJson(ReadFile(dir + "stats.json"));
    ASSERT_THAT(expected, IsOk());
    const double want = (*expected)["total_time"].get<double>();
    const double got = ours.stats["total_time"].get<double>();
    EXPECT_LE(std::fabs(got - want), 1e-12 * want)
        << Shortest(got) << " vs " << Shortest(want);
  }
}

}  // namespace
}  // namespace blueprint
