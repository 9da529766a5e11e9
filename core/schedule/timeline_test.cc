#include "core/schedule/timeline.h"

#include "core/schedule/reproof.h"
#include "core/schedule/schedule_ir.h"
#include "core/schedule/simulate.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

struct Simulated {
  PipelineScheduleIR ir;
  SimulationResult result;
  TimelineInputs inputs;
};

Simulated OneForwardOneBackward() {
  Simulated out;
  out.ir = *BuildSchedule(ScheduleKind::kOneForwardOneBackward, 2, 1, 2);
  out.inputs.durations.forward = 1;
  out.inputs.durations.backward_input = 2;
  out.inputs.analysis_bubble_time = AnalyticBubble(2, 1, 2, 3);
  out.inputs.total_time = 10;  // the makespan and 1 outside the pipeline
  out.result = *Simulate(out.ir, {out.inputs.durations});
  return out;
}

// The whole text of a small 1F1B: P2P commands on their streams at zero
// link time (a receive completes when its send does), the backward of
// microbatch 0 waiting for the last stage.
TEST(Timeline, TextOfTwoStageOneForwardOneBackward) {
  const Simulated s = OneForwardOneBackward();
  EXPECT_EQ(PrintTimeline(s.ir, s.result, s.inputs),
            "pipeline_timeline/1\n"
            "schedule 1f1b p 2 v 1 m 2 chunks_per_stage 1 training 1\n"
            "durations forward 1 backward_input 2 backward_weight 0 "
            "p2p_link_time 0\n"
            "makespan 9\n"
            "bubble 3\n"
            "analysis_bubble_time 3\n"
            "bubble_reduction_time 0\n"
            "unscheduled_bubble_time 0\n"
            "total_time 10\n"
            "simulated_total_time 10\n"
            "stage 0 busy 6 idle 3 peak_live_chunks 2 "
            "peak_live_microbatches 2\n"
            "  0 F mb 0 chunk 0 start 0 end 1\n"
            "  1 SendActivation mb 0 chunk 0 start 1 end 1\n"
            "  2 F mb 1 chunk 0 start 1 end 2\n"
            "  3 SendActivation mb 1 chunk 0 start 2 end 2\n"
            "  4 RecvGradient mb 0 chunk 0 start 4 end 4\n"
            "  5 B mb 0 chunk 0 start 4 end 6\n"
            "  6 RecvGradient mb 1 chunk 0 start 7 end 7\n"
            "  7 B mb 1 chunk 0 start 7 end 9\n"
            "stage 1 busy 6 idle 3 peak_live_chunks 1 "
            "peak_live_microbatches 1\n"
            "  0 RecvActivation mb 0 chunk 0 start 1 end 1\n"
            "  1 F mb 0 chunk 0 start 1 end 2\n"
            "  2 B mb 0 chunk 0 start 2 end 4\n"
            "  3 SendGradient mb 0 chunk 0 start 4 end 4\n"
            "  4 RecvActivation mb 1 chunk 0 start 2 end 2\n"
            "  5 F mb 1 chunk 0 start 4 end 5\n"
            "  6 B mb 1 chunk 0 start 5 end 7\n"
            "  7 SendGradient mb 1 chunk 0 start 7 end 7\n");
}

TEST(Timeline, JsonListsEveryCommandWithItsTimes) {
  const Simulated s = OneForwardOneBackward();
  const nlohmann::json json = TimelineJson(s.ir, s.result, s.inputs);
  EXPECT_EQ(json["format"], "blueprinting.pipeline_timeline/1");
  EXPECT_EQ(json["schedule"], "1f1b");
  EXPECT_EQ(json["makespan"], 9.0);
  EXPECT_EQ(json["simulated_total_time"], 10.0);
  ASSERT_EQ(json["stages"].size(), 2u);
  for (size_t stage = 0; stage < 2; ++stage) {
    const nlohmann::json& commands = json["stages"][stage]["commands"];
    ASSERT_EQ(commands.size(), s.ir.stages[stage].size());
    for (size_t i = 0; i < commands.size(); ++i) {
      EXPECT_EQ(commands[i]["start"], s.result.timings[stage][i].start);
      EXPECT_EQ(commands[i]["end"], s.result.timings[stage][i].end);
      EXPECT_EQ(commands[i]["lineage"], s.ir.stages[stage][i].lineage);
    }
  }
  EXPECT_EQ(json["stages"][1]["commands"][1]["kind"], "F");
  EXPECT_EQ(json["stages"][1]["commands"][1]["microbatch"], 0);
}

}  // namespace
}  // namespace blueprint
