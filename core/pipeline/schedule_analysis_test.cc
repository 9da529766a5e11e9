// SimulatePipelineSchedule inside the pipeline: `analyze`'s simulated
// figures re-prove the analytic bubble and step of single_stage, 1f1b and
// interleaved 1f1b, differ by the named term where Calculon's leftover
// chunks are not what the table order produces, and are absent (with the
// reason) for a shape beyond the scheduler's limits.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/analysis/figures.h"
#include "core/pipeline/pipeline.h"
#include "core/schedule/reproof.h"
#include "core/spec/check.h"
#include "core/testing/doubles.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using test_programs::TestMapping;

absl::StatusOr<PipelineResult> Analyse(const TestMapping& m) {
  absl::StatusOr<TypedProgram> program = test_programs::TestProgram(m);
  if (!program.ok()) return program.status();
  return RunPipeline(*program);
}

void ExpectRelative(double got, double want, const char* what) {
  EXPECT_LE(std::fabs(got - want), 1e-9 * std::fabs(want) + 1e-18)
      << what << ": " << got << " vs " << want;
}

TEST(ScheduleAnalysis, ReprovesTheAnalyticBubbleAndStep) {
  int cases = 0;
  for (int64_t p : {1, 2, 4}) {
    for (int64_t v : {1, 2}) {
      if (p == 1 && v > 1) continue;
      for (int64_t m : {1, 2, 4, 8, 12}) {
        // Interleaved with p not dividing m > p: the named difference
        // below.
        if (v > 1 && m > p && m % p != 0) continue;
        TestMapping mapping;
        mapping.p = p;
        mapping.v = v;
        mapping.global_batch = m;
        BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, Analyse(mapping));
        const ScheduleAnalysis& s = r.schedule;
        ASSERT_TRUE(s.simulated) << s.not_simulated;
        const IterationFigures& f = r.iteration.figures;
        ExpectRelative(s.simulated_bubble_time, f.bubble_time, "bubble");
        ExpectRelative(s.simulated_total_time, f.total_time, "total");
        ASSERT_EQ(static_cast<int64_t>(s.stage_idle_times.size()), p);
        // The first stage idles for the whole bubble.
        ExpectRelative(s.stage_idle_times[0], f.bubble_time, "stage 0 idle");
        if (v == 1) {  // 1F1B's first stage holds min(m, p) microbatches
          EXPECT_EQ(s.stage_peak_live_microbatches[0],
                    f.peak_inflight_microbatches);
        }
        EXPECT_FALSE(s.lineage.empty());
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 5 * 5);  // (p, v) in (1,1) (2,1) (2,2) (4,1) (4,2)
}

// Megatron-LM's interleaved order for p not dividing m > p has the p | m
// bubble; Calculon charges (v - 1)(p - m mod p) more chunks. The simulated
// figures differ from the analytic ones by exactly that named term.
TEST(ScheduleAnalysis, InterleavedLeftoverIsTheNamedDifference) {
  TestMapping mapping;
  mapping.p = 4;
  mapping.v = 2;
  mapping.global_batch = 6;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, Analyse(mapping));
  ASSERT_TRUE(r.schedule.simulated);
  const IterationFigures& f = r.iteration.figures;
  BP_ASSERT_OK_AND_ASSIGN(
      const double difference,
      InterleavedLeftoverDifference(
          4, 2, 6, ChunkDurationsOf(r.plan.block, r.iteration.step, f)));
  EXPECT_LT(difference, 0);
  ExpectRelative(r.schedule.simulated_bubble_time - f.bubble_time, difference,
                 "bubble difference");
  ExpectRelative(r.schedule.simulated_total_time - f.total_time, difference,
                 "total difference");
}

// gpipe and zb_h1 take bubble_time from the same simulation; forward-only
// inference never issues the 0-byte backward sends the analytic bubble
// counts (schedule_analysis.h UnscheduledBubbleTime).
TEST(ScheduleAnalysis, SimulatedSchedulesAndInference) {
  for (const PipelineSchedule& schedule :
       {PipelineSchedule{GPipe{}}, PipelineSchedule{ZeroBubbleH1{}}}) {
    TestMapping mapping;
    mapping.p = 4;
    mapping.schedule = schedule;
    BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, Analyse(mapping));
    ASSERT_TRUE(r.schedule.simulated);
    ExpectRelative(r.schedule.simulated_bubble_time,
                   r.iteration.figures.bubble_time, "bubble");
    ExpectRelative(r.schedule.simulated_total_time,
                   r.iteration.figures.total_time, "total");
  }
  TestMapping inference;
  inference.p = 4;
  inference.training = false;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, Analyse(inference));
  ASSERT_TRUE(r.schedule.simulated);
  const double unscheduled = UnscheduledBubbleTime(r.iteration);
  EXPECT_GT(unscheduled, 0);
  ExpectRelative(r.schedule.simulated_total_time,
                 r.iteration.figures.total_time - unscheduled, "total");
}

// A 1F1B pipeline of p = 4 over the test model's 8 blocks, m = 8, with the
// explicit layout `layout` (p * v entries) and `schedule` (unset: 1f1b or
// interleaved by v).
absl::StatusOr<PipelineResult> AnalyseLayout(
    std::vector<int64_t> layout, int64_t v = 1,
    std::optional<PipelineSchedule> schedule = std::nullopt) {
  TestMapping m;
  m.p = 4;
  m.v = v;
  m.global_batch = 8;
  m.schedule = schedule;
  MappingSpec spec = test_programs::TestSpec(m);
  std::get<TransformerTrainingMappingSpec>(spec)
      .parallelism.pipeline.stage_blocks = std::move(layout);
  absl::StatusOr<TypedProgram> program = CheckSpec(spec);
  if (!program.ok()) return program.status();
  return RunPipeline(*program);
}

// A chunk of n blocks: n - 1 base blocks and the edge block, both passes.
double LayoutChunkTime(const IterationFigures& f, int64_t n) {
  return static_cast<double>(n - 1) *
             (f.baseblock_fw_time + f.baseblock_bw_time) +
         f.edgeblock_fw_time + f.edgeblock_bw_time;
}

// Under an explicit layout the scheduler simulates each stage's own
// blocks: stage s is busy m * T(n_s). With the slowest stage last (1, 2,
// 2, 3) a 1F1B or GPipe pipeline runs m * T_max plus one chunk of every
// other stage, so the simulated bubble is sum_{s < p-1} T(n_s): for 1F1B
// what the analysis charges ((p - 1) chunks less the missing blocks, each
// at a base block, the cheaper here), for GPipe the bubble it takes from
// the same simulation.
TEST(ScheduleAnalysis, LayoutStagesAreSimulatedAtTheirOwnBlocks) {
  const std::vector<int64_t> layout = {1, 2, 2, 3};
  for (const PipelineSchedule& schedule :
       {PipelineSchedule{OneForwardOneBackward{}}, PipelineSchedule{GPipe{}}}) {
    BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r,
                            AnalyseLayout(layout, 1, schedule));
    const IterationFigures& f = r.iteration.figures;
    const ScheduleAnalysis& s = r.schedule;
    ASSERT_TRUE(s.simulated) << s.not_simulated;
    ASSERT_LE(f.baseblock_fw_time + f.baseblock_bw_time,
              f.edgeblock_fw_time + f.edgeblock_bw_time);
    double others = 0;
    for (int64_t k = 0; k < 4; ++k) {
      ExpectRelative(s.stage_busy_times[k], 8 * LayoutChunkTime(f, layout[k]),
                     "stage busy");
      if (k < 3) others += LayoutChunkTime(f, layout[k]);
    }
    ExpectRelative(s.simulated_bubble_time, others, "simulated bubble");
    ExpectRelative(f.bubble_time, others, "bubble");
    ExpectRelative(s.simulated_total_time, f.total_time, "total");
  }
}

// Interleaved: the analysis prices each of the busiest rank's chunks at
// its mean rounded up (rank 3 holds 1 + 2 blocks: two chunks of 2); the
// simulation runs each position at its own blocks, so that rank is busy
// m * (T(1) + T(2)), and the fill and drain of the lighter chunks are
// shorter than the analytic bubble.
TEST(ScheduleAnalysis, LayoutInterleavedChunksAtTheirOwnBlocks) {
  const std::vector<int64_t> layout = {0, 1, 1, 1, 1, 1, 1, 2};
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, AnalyseLayout(layout, 2));
  const IterationFigures& f = r.iteration.figures;
  const ScheduleAnalysis& s = r.schedule;
  ASSERT_TRUE(s.simulated) << s.not_simulated;
  EXPECT_EQ(r.iteration.step.blocks_per_chunk, 2);
  // Rank 0's first chunk is empty: only its pipeline sends.
  ExpectRelative(s.stage_busy_times[0],
                 8 * (f.chunk_fw_pp_time + f.chunk_bw_pp_time +
                      LayoutChunkTime(f, 1)),
                 "rank 0 busy");
  ExpectRelative(s.stage_busy_times[3],
                 8 * (LayoutChunkTime(f, 1) + LayoutChunkTime(f, 2)),
                 "rank 3 busy");
  EXPECT_LT(s.stage_busy_times[3], 8 * 2 * f.chunk_time);
  EXPECT_LT(s.simulated_bubble_time, f.bubble_time);
  EXPECT_LT(s.simulated_total_time, f.total_time);
}

// Beyond the scheduler's limit of p * chunks * m slots the analysis still
// succeeds, without simulated figures, and says why.
TEST(ScheduleAnalysis, BeyondTheSchedulersLimitsIsNotSimulated) {
  TestMapping mapping;
  mapping.p = 2;
  mapping.global_batch = kMaxMicrobatchChunkSlots;  // 2 * m slots
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, Analyse(mapping));
  EXPECT_FALSE(r.schedule.simulated);
  EXPECT_NE(r.schedule.not_simulated.find("100000"), std::string::npos)
      << r.schedule.not_simulated;
  EXPECT_TRUE(r.schedule.stage_idle_times.empty());
  EXPECT_TRUE(r.schedule.lineage.empty());
}

}  // namespace
}  // namespace blueprint
