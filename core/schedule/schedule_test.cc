#include <string>

#include "absl/status/status.h"
#include "core/base/field_errors.h"
#include "core/schedule/schedule_ir.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

// (f) Every violated rule at once, each naming its field and value.
TEST(BuildSchedule, ReportsEveryViolation) {
  absl::StatusOr<PipelineScheduleIR> ir =
      BuildSchedule(ScheduleKind::kDualPipe, 3, 2, 3);
  ASSERT_FALSE(ir.ok());
  EXPECT_EQ(ir.status().code(), absl::StatusCode::kInvalidArgument);
  const std::vector<FieldError> errors = FieldErrorsOf(ir.status());
  ASSERT_EQ(errors.size(), 4u) << ir.status();
  EXPECT_EQ(errors[0].message, "v (2) must be 1 for schedule dualpipe");
  EXPECT_EQ(errors[1].message, "p (3) must be even for schedule dualpipe");
  EXPECT_EQ(errors[2].message, "m (3) must be even for schedule dualpipe");
  EXPECT_EQ(errors[3].message,
            "m (3) must be at least 2p (6) for schedule dualpipe");

  absl::StatusOr<PipelineScheduleIR> zeros =
      BuildSchedule(ScheduleKind::kOneForwardOneBackward, 0, 0, 0);
  ASSERT_FALSE(zeros.ok());
  // p, v and m out of range, and v not 1 for 1f1b.
  EXPECT_EQ(FieldErrorsOf(zeros.status()).size(), 4u) << zeros.status();
  EXPECT_EQ(FieldErrorsOf(zeros.status())[0].field, "p");
}

TEST(BuildSchedule, KindRules) {
  EXPECT_FALSE(BuildSchedule(ScheduleKind::kSingleStage, 2, 1, 4).ok());
  EXPECT_FALSE(BuildSchedule(ScheduleKind::kInterleaved, 4, 1, 4).ok());
  EXPECT_FALSE(BuildSchedule(ScheduleKind::kZbV, 4, 3, 8).ok());
  EXPECT_FALSE(BuildSchedule(ScheduleKind::kDualPipeV, 4, 2, 7).ok());
  EXPECT_TRUE(BuildSchedule(ScheduleKind::kDualPipeV, 4, 2, 8).ok());
  EXPECT_TRUE(BuildSchedule(ScheduleKind::kDualPipe, 4, 1, 8).ok());
}

TEST(BuildSchedule, SizeLimit) {
  absl::StatusOr<PipelineScheduleIR> ir = BuildSchedule(
      ScheduleKind::kOneForwardOneBackward, kMaxStages, 1, kMaxMicrobatches);
  ASSERT_FALSE(ir.ok());
  EXPECT_EQ(FieldErrorsOf(ir.status())[0].code, ErrorCode::kTooLarge);
  EXPECT_FALSE(BuildSchedule(ScheduleKind::kGPipe, kMaxStages + 1, 1, 1).ok());
}

TEST(BuildSchedule, Lineage) {
  absl::StatusOr<PipelineScheduleIR> ir =
      BuildSchedule(ScheduleKind::kOneForwardOneBackward, 4, 1, 8);
  ASSERT_TRUE(ir.ok());
  bool found = false;
  for (const Command& c : ir->stages[2]) {
    if (c.kind == CommandKind::kForward && c.microbatch == 5) {
      EXPECT_EQ(c.lineage, "schedule:1f1b stage 2 mb 5 chunk 0 F");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

// (g) The canonical text is stable: pinned for a small 1F1B.
constexpr char kGolden[] = R"(pipeline_schedule/1
schedule 1f1b p 2 v 1 m 2 chunks_per_stage 1 training 1
route 0: 0.0 1.0
microbatches 0..1 route 0
stage 0 commands 10
0 0 F mb 0 chunk 0 | schedule:1f1b stage 0 mb 0 chunk 0 F
0 1 SendActivation mb 0 chunk 0 peer 1 | schedule:1f1b stage 0 mb 0 chunk 0 SendActivation to 1
0 2 F mb 1 chunk 0 | schedule:1f1b stage 0 mb 1 chunk 0 F
0 3 SendActivation mb 1 chunk 0 peer 1 | schedule:1f1b stage 0 mb 1 chunk 0 SendActivation to 1
0 4 RecvGradient mb 0 chunk 0 peer 1 | schedule:1f1b stage 0 mb 0 chunk 0 RecvGradient from 1
0 5 B mb 0 chunk 0 whole | schedule:1f1b stage 0 mb 0 chunk 0 B
0 6 RecvGradient mb 1 chunk 0 peer 1 | schedule:1f1b stage 0 mb 1 chunk 0 RecvGradient from 1
0 7 B mb 1 chunk 0 whole | schedule:1f1b stage 0 mb 1 chunk 0 B
0 8 DataParallelReduce duration 0.1 | schedule:1f1b stage 0 DataParallelReduce
0 9 OptimizerStep duration 2.5 | schedule:1f1b stage 0 OptimizerStep
stage 1 commands 10
1 0 RecvActivation mb 0 chunk 0 peer 0 | schedule:1f1b stage 1 mb 0 chunk 0 RecvActivation from 0
1 1 F mb 0 chunk 0 | schedule:1f1b stage 1 mb 0 chunk 0 F
1 2 B mb 0 chunk 0 whole | schedule:1f1b stage 1 mb 0 chunk 0 B
1 3 SendGradient mb 0 chunk 0 peer 0 | schedule:1f1b stage 1 mb 0 chunk 0 SendGradient to 0
1 4 RecvActivation mb 1 chunk 0 peer 0 | schedule:1f1b stage 1 mb 1 chunk 0 RecvActivation from 0
1 5 F mb 1 chunk 0 | schedule:1f1b stage 1 mb 1 chunk 0 F
1 6 B mb 1 chunk 0 whole | schedule:1f1b stage 1 mb 1 chunk 0 B
1 7 SendGradient mb 1 chunk 0 peer 0 | schedule:1f1b stage 1 mb 1 chunk 0 SendGradient to 0
1 8 DataParallelReduce duration 0.1 | schedule:1f1b stage 1 DataParallelReduce
1 9 OptimizerStep duration 2.5 | schedule:1f1b stage 1 OptimizerStep
)";

TEST(PrintSchedule, Canonical) {
  absl::StatusOr<PipelineScheduleIR> ir =
      BuildSchedule(ScheduleKind::kOneForwardOneBackward, 2, 1, 2);
  ASSERT_TRUE(ir.ok());
  ASSERT_TRUE(AppendStepTail(*ir, 0.1, 2.5).ok());
  const std::string text = PrintSchedule(*ir);
  EXPECT_EQ(text, PrintSchedule(*ir));
  EXPECT_EQ(text, kGolden);
}

}  // namespace
}  // namespace blueprint
