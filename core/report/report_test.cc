#include "core/report/report.h"

#include <string>

#include "core/pipeline/pipeline.h"
#include "core/testing/doubles.h"
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
       {"spec ", "task_ir ", "plan_ir ", "iteration ", "memory ", "report "}) {
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

}  // namespace
}  // namespace blueprint
