// SimulatePipelineSchedule inside the pipeline: `analyze`'s simulated
// figures re-prove the analytic bubble and step of single_stage, 1f1b and
// interleaved 1f1b, differ by the named term where Calculon's leftover
// chunks are not what the table order produces, and are absent (with the
// reason) for a shape beyond the scheduler's limits.
#include <cmath>
#include <cstdint>
#include <string>

#include "core/analysis/figures.h"
#include "core/pipeline/pipeline.h"
#include "core/schedule/reproof.h"
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
