#include "core/report/report.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/pipeline/pipeline.h"
#include "core/testing/doubles.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/analysis/lineage.h"
#include "core/base/format.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using ::testing::Not;

absl::StatusOr<PipelineResult> Analyse(const test_programs::TestMapping& m) {
  absl::StatusOr<TypedProgram> program = test_programs::TestProgram(m);
  if (!program.ok()) return program.status();
  return RunPipeline(*program);
}

TEST(Report, FiguresIncludeCalculonStatsAndTheProjectsOwn) {
  test_programs::TestMapping m;
  m.t = 8;
  m.p = 2;
  m.d = 2;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, Analyse(m));
  const nlohmann::json report = ReportJson(r);
  EXPECT_EQ(report["format"], "blueprinting.report/1");
  const nlohmann::json& f = report["figures"];
  for (const char* name :
       {"total_time", "sample_rate", "bubble_time", "bubble_fraction",
        "tp_all_reduce_bytes", "pp_p2p_bytes", "dp_all_reduce_bytes",
        "gemm_flops_per_rank", "proc_mem_tier1_cap_req", "chunk_time",
        "critical_path_base_forward", "block_fw_time"}) {
    EXPECT_TRUE(f.contains(name)) << name;
  }
  BP_EXPECT_DOUBLE_EQ(
      f["bubble_fraction"].get<double>(),
      f["bubble_time"].get<double>() / f["total_time"].get<double>());
  EXPECT_EQ(report["mapping"]["microbatches"], 4);
  EXPECT_TRUE(report["memory"]["fits"].get<bool>());
  // The all-reduce volume: 2 per block forward + 2 backward, each b*s*h*2
  // bytes, blocks_per_stage * microbatches blocks.
  BP_EXPECT_DOUBLE_EQ(f["tp_all_reduce_bytes"].get<double>(),
                      4 * 32.0 * 64 * 2 * 4 * 4);
}

TEST(Report, DigestsAreStableAndCoverEveryStage) {
  test_programs::TestMapping m;
  m.t = 8;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, Analyse(m));
  const std::string digests = DigestText(r);
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult again, Analyse(m));
  EXPECT_EQ(digests, DigestText(again));
  for (const char* stage :
       {"spec ", "task_ir ", "plan_ir ", "iteration ", "memory ",
        "schedule_analysis ", "report "}) {
    EXPECT_NE(digests.find(stage), std::string::npos) << stage;
  }
  for (const StageText& stage : StageTexts(r)) {
    EXPECT_EQ(stage.text.rfind("{", 0) == 0 ||
                  stage.text.rfind("blueprinting.", 0) == 0,
              true)
        << stage.stage;
  }
  m.microbatch = 2;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult other, Analyse(m));
  EXPECT_NE(DigestText(other), digests);
}

TEST(Report, ExplainReachesSpecFieldsAndSystemParameters) {
  test_programs::TestMapping m;
  m.t = 8;
  m.p = 2;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, Analyse(m));
  absl::StatusOr<std::string> chain = ExplainFigure(r, "total_time");
  ASSERT_THAT(chain, IsOk());
  for (const char* node :
       {"iteration:total_time", "iteration:bubble_time", "block:block_fw_time",
        "task:4", "spec:model.hidden", "spec:parallelism.tensor.degree",
        "spec:batch.global_batch_size", "system:networks[1]",
        "system:matrix.float16.gflops_efficiency["}) {
    EXPECT_NE(chain->find(node), std::string::npos) << node;
  }
  EXPECT_THAT(ExplainFigure(r, "no_such_figure"), Not(IsOk()));
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(
      absl::string_view(text).substr(0, text.empty() ? 0 : text.size() - 1),
      '\n');
}

TEST(Report, ExplainStartsWithTheFormulaAndItsValues) {
  test_programs::TestMapping m;
  m.p = 4;
  m.v = 2;
  m.global_batch = 8;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, Analyse(m));
  absl::StatusOr<std::string> chain = ExplainFigure(r, "bubble_time");
  ASSERT_TRUE(chain.ok()) << chain.status();
  const IterationFigures& it = r.iteration.figures;
  const std::vector<std::string> lines = Lines(*chain);
  ASSERT_GE(lines.size(), 2u);
  // An analytic schedule: the simulated branch is not taken (0 ? ...).
  EXPECT_TRUE(absl::StartsWith(
      lines[0],
      "bubble_time = simulated_schedule ? simulated_bubble(p, v, m, "
      "chunk_fw_time, chunk_bw_time, blocks_per_chunk * block_wgrad_time, "
      "chunk_fb_time) : "
      "bubble_chunks * chunk_time - bubble_reduction_time = 0 ? "
      "simulated_bubble(4, 2, 8, "))
      << lines[0];
  EXPECT_TRUE(absl::EndsWith(
      lines[0], absl::StrCat(" : ", FormatDouble(it.bubble_chunks), " * ",
                             FormatDouble(it.chunk_time), " - ",
                             FormatDouble(it.bubble_reduction_time), " = ",
                             FormatDouble(it.bubble_time))))
      << lines[0];
  EXPECT_EQ(lines[1],
            absl::StrCat("iteration:bubble_time = ",
                         FormatDouble(it.bubble_time), " [AnalyzeIteration]"));
  absl::StatusOr<std::string> memory = ExplainFigure(r, "weight_space");
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_EQ(
      Lines(*memory)[0],
      absl::StrCat("weight_space = block_weight_space * "
                   "rank_blocks = ",
                   FormatDouble(r.plan.block.block_weight_space),
                   " * 2 = ", FormatDouble(r.memory.figures.weight_space)));
  // A block figure has no formula line.
  absl::StatusOr<std::string> block = ExplainFigure(r, "block_fw_time");
  ASSERT_TRUE(block.ok()) << block.status();
  EXPECT_EQ(block->rfind("block:block_fw_time = ", 0), 0u);
  // A per-rank figure shows its formula (prose over the task IR) and value.
  absl::StatusOr<std::string> rank = ExplainFigure(r, "pp_p2p_bytes");
  ASSERT_TRUE(rank.ok()) << rank.status();
  EXPECT_EQ(Lines(*rank)[0].rfind("pp_p2p_bytes = p > 1 ? microbatches * ", 0),
            0u)
      << *rank;
}

TEST(Report, ExplainDepthStopsTheTree) {
  test_programs::TestMapping m;
  m.t = 8;
  m.p = 2;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, Analyse(m));
  absl::StatusOr<std::string> all = ExplainFigure(r, "total_time");
  ASSERT_TRUE(all.ok()) << all.status();
  absl::StatusOr<std::string> unlimited =
      ExplainFigure(r, "total_time", std::nullopt);
  EXPECT_EQ(*unlimited, *all);
  absl::StatusOr<std::string> zero = ExplainFigure(r, "total_time", 0);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(Lines(*zero).size(), 2u) << *zero;
  EXPECT_NE(Lines(*zero)[1].find("(16 sources not shown)"), std::string::npos)
      << *zero;
  absl::StatusOr<std::string> one = ExplainFigure(r, "total_time", 1);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(Lines(*one).size(), 2u + 16u) << *one;
  EXPECT_NE(one->find("  <- iteration:bubble_time = "), std::string::npos);
  EXPECT_EQ(one->find("    <- "), std::string::npos) << *one;
  absl::StatusOr<std::string> two = ExplainFigure(r, "total_time", 2);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_NE(two->find("    <- iteration:chunk_time = "), std::string::npos);
  EXPECT_EQ(two->find("      <- "), std::string::npos) << *two;
  EXPECT_LT(two->size(), all->size());
  // Every line of a cut tree is a line of the whole tree, up to its mark.
  for (const std::string& line : Lines(*two)) {
    const std::string bare = line.substr(0, line.find(" ("));
    EXPECT_NE(all->find(bare), std::string::npos) << line;
  }
  EXPECT_EQ(ExplainFigure(r, "total_time", int64_t{1} << 62).value(), *all);
  EXPECT_EQ(ExplainFigure(r, "total_time", -1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Every source of every iteration and memory figure resolves to a node the
// explanation can describe (a value, never "?" or a bare id).
// The scheduler's figures: in "figures" with the per-stage timeline in
// "schedule", and `explain` follows them into the timeline's stages.
TEST(Report, ExplainFollowsTheScheduleIntoTheTimeline) {
  test_programs::TestMapping m;
  m.p = 4;
  m.global_batch = 8;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, Analyse(m));
  const nlohmann::json report = ReportJson(r);
  const nlohmann::json& f = report["figures"];
  ASSERT_TRUE(f.contains("simulated_bubble_time"));
  BP_EXPECT_NEAR(f["simulated_bubble_time"].get<double>(),
                 f["bubble_time"].get<double>(),
                 1e-9 * f["bubble_time"].get<double>());
  const nlohmann::json& schedule = report["schedule"];
  EXPECT_TRUE(schedule["simulated"].get<bool>());
  EXPECT_EQ(schedule["stage_idle_times"].size(), 4u);
  EXPECT_EQ(schedule["stage_peak_live_microbatches"][0], 4);

  absl::StatusOr<std::string> chain =
      ExplainFigure(r, "simulated_total_time", 2);
  ASSERT_THAT(chain, IsOk());
  EXPECT_EQ(chain->rfind("simulated_total_time = total_time + "
                         "simulated_bubble_time - bubble_time + "
                         "(stage_blocks ? max(stage busy) - m * v * "
                         "chunk_time : 0) = ",
                         0),
            0u)
      << *chain;
  for (const char* node :
       {"schedule:simulated_bubble_time = ", "iteration:total_time = ",
        "timeline:stage[0] busy ", "timeline:stage[3] busy "}) {
    EXPECT_NE(chain->find(node), std::string::npos) << node << "\n" << *chain;
  }
  chain = ExplainFigure(r, "stage[2]");
  ASSERT_THAT(chain, IsOk());
  for (const char* node :
       {"timeline:stage[2] busy ", "[SimulatePipelineSchedule]",
        "<- iteration:chunk_bw_weight_time = ",
        "<- spec:parallelism.pipeline.schedule = "}) {
    EXPECT_NE(chain->find(node), std::string::npos) << node << "\n" << *chain;
  }
  EXPECT_THAT(ExplainFigure(r, "stage[4]"), Not(IsOk()));

  // Beyond the scheduler's limits: no simulated figure, and the reason.
  m.p = 2;
  m.global_batch = 100000;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult big, Analyse(m));
  const nlohmann::json big_report = ReportJson(big);
  EXPECT_FALSE(big_report["figures"].contains("simulated_bubble_time"));
  EXPECT_FALSE(big_report["schedule"]["simulated"].get<bool>());
  EXPECT_NE(big_report["schedule"]["not_simulated"].get<std::string>().find(
                "100000"),
            std::string::npos);
  EXPECT_THAT(ExplainFigure(big, "simulated_bubble_time"), Not(IsOk()));
}

TEST(Report, EveryIterationAndMemoryFigureExplainsItsSources) {
  for (bool training : {true, false}) {
    test_programs::TestMapping m;
    m.t = 2;
    m.p = 2;
    m.d = 2;
    m.global_batch = 16;
    m.training = training;
    m.data_overlap = training;
    BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, Analyse(m));
    std::vector<std::pair<FormulaScope, std::string>> figures;
    ForEachIterationFigure(r.iteration.figures, [&](const char* name, double) {
      figures.push_back({FormulaScope::kIteration, name});
    });
    ForEachScheduleTerm(r.iteration.figures, [&](const char* name, double) {
      figures.push_back({FormulaScope::kIteration, name});
    });
    ForEachMemoryFigure(r.memory.figures, [&](const char* name, double) {
      figures.push_back({FormulaScope::kMemory, name});
    });
    for (const auto& [scope, name] : figures) {
      absl::StatusOr<std::string> chain = ExplainFigure(r, name, 1);
      ASSERT_TRUE(chain.ok()) << name << ": " << chain.status();
      const std::vector<std::string> lines = Lines(*chain);
      const FigureFormula* row = FindFormula(scope, name);
      ASSERT_NE(row, nullptr) << name;
      EXPECT_EQ(
          lines[0].rfind(absl::StrCat(name, " = ", row->formula, " = "), 0), 0u)
          << lines[0];
      EXPECT_LE(lines.size(), 2 + SourcesOf(*row).size()) << *chain;
      EXPECT_GT(lines.size(), 2u) << *chain;
      for (size_t i = 2; i < lines.size(); ++i) {
        EXPECT_NE(lines[i].find(" = "), std::string::npos)
            << name << ": " << lines[i];
        EXPECT_EQ(lines[i].find(" = ?"), std::string::npos)
            << name << ": " << lines[i];
      }
    }
  }
}

}  // namespace
}  // namespace blueprint
