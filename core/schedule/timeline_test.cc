#include "core/schedule/timeline.h"

#include <string>

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

// With its sources named, the header says what priced each duration and
// every compute command's lineage ends with its duration's source and the
// block plan; P2P commands keep their own.
TEST(Timeline, ComputeCommandsNameWhatPricedThem) {
  Simulated s = OneForwardOneBackward();
  s.inputs.forward_source = "iteration:chunk_fw_time";
  s.inputs.backward_input_source = "iteration:chunk_bw_input_time";
  s.inputs.backward_weight_source = "iteration:chunk_bw_weight_time";
  s.inputs.backward_source = "iteration:chunk_bw_time";
  s.inputs.plan_source = "plan_ir:block";
  const std::string text = PrintTimeline(s.ir, s.result, s.inputs);
  EXPECT_NE(text.find("\npriced_by forward iteration:chunk_fw_time "
                      "backward_input iteration:chunk_bw_input_time "
                      "backward_weight iteration:chunk_bw_weight_time "
                      "backward iteration:chunk_bw_time plan plan_ir:block\n"),
            std::string::npos)
      << text;
  const nlohmann::json json = TimelineJson(s.ir, s.result, s.inputs);
  int compute = 0, p2p = 0;
  for (const nlohmann::json& stage : json["stages"]) {
    for (const nlohmann::json& c : stage["commands"]) {
      const std::string lineage = c["lineage"].get<std::string>();
      const std::string kind = c["kind"].get<std::string>();
      if (kind == "F") {
        EXPECT_NE(lineage.find(" F priced_by iteration:chunk_fw_time <- "
                               "plan_ir:block"),
                  std::string::npos)
            << lineage;
        ++compute;
      } else if (kind == "B") {
        // 1F1B's backward is whole: chunk_bw_time.
        EXPECT_NE(lineage.find("priced_by iteration:chunk_bw_time <- "
                               "plan_ir:block"),
                  std::string::npos)
            << lineage;
        ++compute;
      } else {
        EXPECT_EQ(lineage.find("priced_by"), std::string::npos) << lineage;
        ++p2p;
      }
    }
  }
  EXPECT_EQ(compute, 8);
  EXPECT_GT(p2p, 0);
  // Without sources (durations given directly) nothing is added.
  EXPECT_EQ(PrintTimeline(s.ir, s.result, OneForwardOneBackward().inputs)
                .find("priced_by"),
            std::string::npos);
}

// An explicit layout: each position's durations printed and simulated at
// their own length (1F1B, p = 2, m = 2, the slower stage last: makespan
// m * 6 + 3 = 15, busiest stage 12, bubble 3), and the simulated step
// replacing the analysis' bubble (4) and busiest compute (13) by the
// simulation's: 20 + (3 - 4) + (12 - 13) = 18.
TEST(Timeline, LayoutPositionsAndTheBusiestCompute) {
  Simulated s;
  s.ir = *BuildSchedule(ScheduleKind::kOneForwardOneBackward, 2, 1, 2);
  ChunkDurations light, heavy;
  light.forward = 1;
  light.backward_input = 2;
  heavy.forward = 2;
  heavy.backward_input = 4;
  s.inputs.durations = heavy;
  s.inputs.position_durations = {light, heavy};
  s.inputs.analysis_bubble_time = 4;
  s.inputs.analysis_busy_time = 13;
  s.inputs.total_time = 20;
  s.result = *Simulate(
      s.ir, *DurationsByStageChunk(s.ir, s.inputs.position_durations));
  EXPECT_EQ(s.result.makespan, 15);
  EXPECT_EQ(s.result.bubble, 3);
  EXPECT_EQ(SimulatedTotalTime(s.result, s.inputs), 18);
  const std::string text = PrintTimeline(s.ir, s.result, s.inputs);
  EXPECT_NE(text.find("\nposition 0 forward 1 backward_input 2 "
                      "backward_weight 0\nposition 1 forward 2 "
                      "backward_input 4 backward_weight 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nanalysis_busy_time 13\n"), std::string::npos);
  EXPECT_NE(text.find("\nsimulated_total_time 18\n"), std::string::npos);
  const nlohmann::json json = TimelineJson(s.ir, s.result, s.inputs);
  EXPECT_EQ(json["analysis_busy_time"], 13);
  ASSERT_EQ(json["position_durations"].size(), 2u);
  EXPECT_EQ(json["position_durations"][1]["backward_input"], 4);
  // Without a layout neither appears.
  const Simulated plain = OneForwardOneBackward();
  EXPECT_EQ(PrintTimeline(plain.ir, plain.result, plain.inputs)
                .find("position"),
            std::string::npos);
  EXPECT_FALSE(TimelineJson(plain.ir, plain.result, plain.inputs)
                   .contains("analysis_busy_time"));
}

}  // namespace
}  // namespace blueprint
