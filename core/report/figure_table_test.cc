// The figure table (core/figures/figure_table.h) against what the report
// prints: one row per report figure, and the groups and units the metadata
// has always given.
#include "core/figures/figure_table.h"

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
TEST(FigureTable, CoversExactlyTheReportsFigures) {
  test_programs::TestMapping training;
  training.t = 2;
  training.p = 2;
  training.d = 2;
  test_programs::TestMapping inference = training;
  inference.training = false;
  std::set<std::string> listed;
  for (const FigureRow& f : FigureTable()) {
    EXPECT_TRUE(listed.insert(f.name).second) << "listed twice: " << f.name;
    EXPECT_NE(f.meaning[0], '\0') << f.name;
    // Every figure but the plan's block sums has a formula.
    EXPECT_EQ(f.formula[0] == '\0', f.group == FigureGroup::kBlock) << f.name;
    EXPECT_EQ(FindFigureRow(f.name), &f);
  }
  EXPECT_EQ(listed, ReportFigureNames(training));
  EXPECT_EQ(listed, ReportFigureNames(inference));
  EXPECT_EQ(FindFigureRow("no_such_figure"), nullptr);
}

// The report's per-rank figures are the rows of BP_REPORT_FIGURES, in
// their order (the simulated schedule's come after them).
TEST(FigureTable, RankFiguresFollowTheReportList) {
  test_programs::TestMapping m;
  m.t = 2;
  m.p = 2;
  m.d = 2;
  absl::StatusOr<TypedProgram> program = test_programs::TestProgram(m);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<PipelineResult> result = RunPipeline(*program);
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<std::string> rows;
  for (const FigureRow& f : FigureTable()) {
    if (f.group == FigureGroup::kReport) rows.push_back(f.name);
  }
  std::vector<std::string> rank;
  for (const NamedFigure& f : result->iteration.rank_figures) {
    rank.push_back(f.name);
  }
  rank.push_back("simulated_bubble_time");
  rank.push_back("simulated_total_time");
  EXPECT_EQ(rows, rank);
}

TEST(FigureTable, UnitsGroupsAndLabels) {
  const FigureRow* total = FindFigureRow("total_time");
  ASSERT_NE(total, nullptr);
  EXPECT_STREQ(FigureUnitName(total->unit), "s");
  EXPECT_STREQ(FigureGroupName(total->group), "iteration");
  EXPECT_STREQ(total->label, "Iteration time");
  const std::pair<const char*, const char*> groups[] = {
      {"block_fw_flops", "block"},   {"chunk_time", "schedule"},
      {"weight_space", "memory"},    {"max_stage_mem_tier1_req", "memory"},
      {"bubble_fraction", "report"}, {"simulated_total_time", "report"},
      {"useful_flops", "iteration"},
  };
  for (const auto& [name, group] : groups) {
    const FigureRow* row = FindFigureRow(name);
    ASSERT_NE(row, nullptr) << name;
    EXPECT_STREQ(FigureGroupName(row->group), group) << name;
  }
  EXPECT_STREQ(FigureUnitName(FindFigureRow("sample_rate")->unit), "samples/s");
  EXPECT_STREQ(FindFigureRow("block_fw_flops")->label, "");
}

}  // namespace
}  // namespace blueprint
