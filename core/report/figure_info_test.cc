#include "core/report/figure_info.h"

#include <set>
#include <string>

#include "core/pipeline/pipeline.h"
#include "core/report/report.h"
#include "core/testing/programs.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

std::set<std::string> ReportFigureNames(const test_programs::TestMapping& m) {
  absl::StatusOr<TypedProgram> program = test_programs::TestProgram(m);
  EXPECT_TRUE(program.ok()) << program.status();
  absl::StatusOr<PipelineResult> result = RunPipeline(*program);
  EXPECT_TRUE(result.ok()) << result.status();
  std::set<std::string> names;
  const nlohmann::json report = ReportJson(*result);
  for (const auto& item : report["figures"].items()) names.insert(item.key());
  return names;
}

// The table lists every figure of the report, once, and nothing else.
TEST(FigureInfo, CoversExactlyTheReportsFigures) {
  test_programs::TestMapping training;
  training.t = 2;
  training.p = 2;
  training.d = 2;
  test_programs::TestMapping inference = training;
  inference.training = false;
  std::set<std::string> listed;
  for (const FigureInfo& f : ReportFigureInfo()) {
    EXPECT_TRUE(listed.insert(f.name).second) << "listed twice: " << f.name;
    EXPECT_FALSE(f.meaning.empty()) << f.name;
  }
  EXPECT_EQ(listed, ReportFigureNames(training));
  EXPECT_EQ(listed, ReportFigureNames(inference));
}

TEST(FigureInfo, UnitsAndGroupsComeFromTheDefinitions) {
  const std::set<std::string> units = {
      kUnitSeconds, kUnitBytes,    kUnitFlop,
      kUnitBytesPerSecond, kUnitFraction, kUnitCount, kUnitSamplesPerSecond};
  std::set<std::string> groups;
  for (const FigureInfo& f : ReportFigureInfo()) {
    EXPECT_EQ(units.count(f.unit), 1u) << f.name << ": " << f.unit;
    groups.insert(f.group);
    if (f.name == "total_time") {
      EXPECT_EQ(f.unit, "s");
      EXPECT_EQ(f.group, "iteration");
    }
    if (f.name == "block_fw_flops") {
      EXPECT_EQ(f.group, "block");
    }
    if (f.name == "chunk_time") {
      EXPECT_EQ(f.group, "schedule");
    }
    if (f.name == "weight_space") {
      EXPECT_EQ(f.group, "memory");
    }
    if (f.name == "bubble_fraction") {
      EXPECT_EQ(f.group, "report");
    }
    if (f.name == "useful_flops") {
      EXPECT_EQ(f.group, "iteration");
    }
  }
  EXPECT_EQ(groups, (std::set<std::string>{"block", "iteration", "schedule",
                                           "memory", "report"}));
}

}  // namespace
}  // namespace blueprint
