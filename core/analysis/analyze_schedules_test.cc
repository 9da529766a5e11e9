// The iteration analysis of the simulated schedules (GPipe, zero-bubble,
// DualPipe and DualPipeV): their bubble, in-flight microbatches, F&B
// overlap, end ranks, and the checker's rules for them.
#include "core/analysis/analyze.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "core/analysis/analyze_test_util.h"
#include "core/analysis/figures.h"
#include "core/analysis/lineage.h"
#include "core/base/units.h"
#include "core/plan/hardware.h"
#include "core/plan/plan.h"
#include "core/schedule/schedule_ir.h"
#include "core/testing/doubles.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using analyze_test::Analyse;
using analyze_test::Analysed;
using test_programs::TestMapping;
using test_programs::TestProgram;

// GPipe re-proves 1F1B's bubble, (p - 1) chunk times, but keeps all m
// microbatches in flight; DualPipeV holds two chunks per stage.
TEST(AnalyzeIteration, SimulatedSchedulesBubbleAndInFlight) {
  TestMapping one_f_one_b;
  one_f_one_b.p = 2;
  TestMapping gpipe = one_f_one_b;
  gpipe.schedule = GPipe{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(one_f_one_b));
  BP_ASSERT_OK_AND_ASSIGN(const Analysed g, Analyse(gpipe));
  const IterationFigures& af = a.iteration.figures;
  const IterationFigures& gf = g.iteration.figures;
  EXPECT_TRUE(g.iteration.step.simulated_schedule.has_value());
  BP_EXPECT_NEAR(gf.bubble_time, af.bubble_time, 1e-12);
  BP_EXPECT_NEAR(gf.total_time, af.total_time, 1e-12);
  EXPECT_EQ(gf.extra_interleaving_bubbles, 0);
  EXPECT_EQ(gf.peak_inflight_microbatches,
            static_cast<double>(g.iteration.step.m));
  EXPECT_EQ(af.peak_inflight_microbatches, 2);  // min(m, p)
  EXPECT_GT(gf.chunk_bw_weight_time, 0);
  BP_EXPECT_NEAR(gf.chunk_bw_input_time + gf.chunk_bw_weight_time,
                 gf.chunk_bw_time, 1e-18);
  // act_space = working + storage * (blocks_per_stage * in_flight - 1).
  const BlockFigures& b = g.plan.block;
  const double bpp = static_cast<double>(g.iteration.step.blocks_per_stage);
  const double m = static_cast<double>(g.iteration.step.m);
  BP_EXPECT_NEAR(g.memory.figures.act_space,
                 b.block_act_working_space +
                     b.block_act_storage_space * (bpp * m - 1),
                 1e-12);
  BP_EXPECT_NEAR(a.memory.figures.act_space,
                 b.block_act_working_space +
                     b.block_act_storage_space * (bpp * 2 - 1),
                 1e-12);

  TestMapping dualpipe = one_f_one_b;
  dualpipe.schedule = DualPipeV{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed d, Analyse(dualpipe));
  EXPECT_EQ(d.iteration.step.v, 2);
  EXPECT_EQ(d.iteration.step.blocks_per_chunk, 2);
  EXPECT_GT(d.iteration.figures.bubble_time, 0);
  EXPECT_TRUE(std::isfinite(d.memory.figures.act_space));
}

// DualPipeV's F&B hides each chunk's exposed communication (TP, pipeline
// sends) under the other microbatch's compute: chunk_fb_time is less than
// F + B, the step is the simulated timeline's makespan (the pipeline terms
// less fb_overlap_saving_time plus the bubble) and shorter than the same
// order run without the overlap; the other schedules overlap nothing.
TEST(AnalyzeIteration, DualPipeVOverlapsForwardAndBackward) {
  // The test model with t = 2 is bound by its TP communication; with t = 1
  // and larger layers by its compute.
  TestMapping comm_bound;
  comm_bound.t = 2;
  comm_bound.p = 2;
  comm_bound.schedule = DualPipeV{};
  TestMapping compute_bound = comm_bound;
  compute_bound.t = 1;
  compute_bound.hidden = 1024;
  compute_bound.feedforward = 4096;
  compute_bound.heads = 16;
  compute_bound.head_size = 64;
  compute_bound.seq = 2048;
  for (const TestMapping& mapping : {comm_bound, compute_bound}) {
    SCOPED_TRACE(mapping.t == 2 ? "communication-bound" : "compute-bound");
    BP_ASSERT_OK_AND_ASSIGN(const Analysed d, Analyse(mapping));
    const IterationFigures& f = d.iteration.figures;
    const BlockFigures& b = d.plan.block;
    const StepShape& step = d.iteration.step;
    const double serial =
        f.chunk_fw_time + f.chunk_bw_input_time + f.chunk_bw_weight_time;
    const double base = static_cast<double>(step.blocks_per_chunk) - 1;
    const double comm =
        base * (b.baseblock_fw_tp_time_exposed +
                b.baseblock_recomm_time_exposed +
                b.baseblock_agrad_tp_time_exposed) +
        b.edgeblock_fw_tp_time_exposed + b.edgeblock_recomm_time_exposed +
        b.edgeblock_agrad_tp_time_exposed + f.chunk_fw_pp_time +
        f.chunk_bw_pp_time;
    ASSERT_GT(comm, 0);
    if (mapping.t == 2) {
      ASSERT_GT(comm, serial - comm);
      BP_EXPECT_NEAR(f.chunk_fb_time, comm, 1e-15);
    } else {
      ASSERT_LT(comm, serial - comm);
      BP_EXPECT_NEAR(f.chunk_fb_time, serial - comm, 1e-15);
    }
    EXPECT_LT(f.chunk_fb_time, serial);
    EXPECT_GT(f.fb_overlap_saving_time, 0);

    // The step's pipeline part is the simulated timeline's makespan.
    const ChunkDurations durations = ChunkDurationsOf(b, step, f);
    EXPECT_EQ(durations.overlapped_forward_backward, f.chunk_fb_time);
    BP_ASSERT_OK_AND_ASSIGN(
        const PipelineScheduleIR ir,
        BuildSchedule(ScheduleKind::kDualPipeV, step.p, step.v, step.m));
    BP_ASSERT_OK_AND_ASSIGN(const SimulationResult sim,
                            Simulate(ir, {durations}));
    const double pipeline = f.fw_time + f.bw_time + f.recompute_time +
                            f.recomm_exposed_time + f.tp_comm_exposed_time +
                            f.pp_comm_exposed_time +
                            f.fw_offload_exposed_time +
                            f.bw_offload_exposed_time;
    EXPECT_NEAR(pipeline - f.fb_overlap_saving_time + f.bubble_time,
                sim.makespan, 1e-12 * sim.makespan);
    // The same order without the overlap takes longer by the saving and
    // the bubble's difference.
    ChunkDurations serial_durations = durations;
    serial_durations.overlapped_forward_backward = -1;
    BP_ASSERT_OK_AND_ASSIGN(const SimulationResult no_overlap,
                            Simulate(ir, {serial_durations}));
    EXPECT_LT(sim.makespan, no_overlap.makespan);
    EXPECT_NEAR(no_overlap.makespan - sim.makespan,
                f.fb_overlap_saving_time + (no_overlap.bubble - f.bubble_time),
                1e-12 * sim.makespan);
  }

  TestMapping zero_bubble = comm_bound;
  zero_bubble.schedule = ZeroBubbleH1{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed z, Analyse(zero_bubble));
  EXPECT_EQ(z.iteration.figures.chunk_fb_time, 0);
  EXPECT_EQ(z.iteration.figures.fb_overlap_saving_time, 0);
}

// ZB-H1 keeps 1F1B's in-flight microbatches and activation memory; its
// bubble, at the mapping's chunk times, is (p - 1) max(F + B - W, F, B)
// against 1F1B's (p - 1)(F + B + W), and the step shortens by the
// difference.
TEST(AnalyzeIteration, ZeroBubbleH1AgainstOneForwardOneBackward) {
  TestMapping one_f_one_b;
  one_f_one_b.p = 4;
  one_f_one_b.global_batch = 8;
  TestMapping zero_bubble = one_f_one_b;
  zero_bubble.schedule = ZeroBubbleH1{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(one_f_one_b));
  BP_ASSERT_OK_AND_ASSIGN(const Analysed z, Analyse(zero_bubble));
  const IterationFigures& af = a.iteration.figures;
  const IterationFigures& zf = z.iteration.figures;
  ASSERT_TRUE(z.iteration.step.simulated_schedule.has_value());
  const double p = 4;
  const double f = zf.chunk_fw_time, b = zf.chunk_bw_input_time,
               w = zf.chunk_bw_weight_time;
  ASSERT_GT(w, 0);
  BP_EXPECT_NEAR(zf.bubble_time, (p - 1) * std::max({f + b - w, f, b}),
                 1e-12);
  EXPECT_LT(zf.bubble_time, af.bubble_time);
  BP_EXPECT_NEAR(af.total_time - zf.total_time,
                 af.bubble_time - zf.bubble_time, 1e-12);
  EXPECT_EQ(zf.peak_inflight_microbatches, af.peak_inflight_microbatches);
  EXPECT_EQ(z.memory.figures.act_space, a.memory.figures.act_space);
  EXPECT_EQ(z.memory.figures.proc_mem_tier1_cap_req,
            a.memory.figures.proc_mem_tier1_cap_req);
}

// ZB-H2 fills ZB-H1's bubble with more warm-up forwards: at most its
// bubble, and up to 2p - 1 microbatches in flight (the unit-time order's
// peak), more activation memory than 1F1B's.
TEST(AnalyzeIteration, ZeroBubbleH2AgainstZeroBubbleH1) {
  TestMapping h1;
  h1.p = 4;
  h1.global_batch = 8;
  h1.schedule = ZeroBubbleH1{};
  TestMapping h2 = h1;
  h2.schedule = ZeroBubbleH2{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(h1));
  BP_ASSERT_OK_AND_ASSIGN(const Analysed z, Analyse(h2));
  const IterationFigures& zf = z.iteration.figures;
  ASSERT_TRUE(z.iteration.step.simulated_schedule.has_value());
  EXPECT_GE(zf.bubble_time, 3 * zf.chunk_fw_time * (1 - 1e-12));
  EXPECT_LE(zf.bubble_time, a.iteration.figures.bubble_time * (1 + 1e-12));
  EXPECT_EQ(zf.peak_inflight_microbatches, 7);  // 2p - 1
  EXPECT_GT(z.memory.figures.act_space, a.memory.figures.act_space);
}

// ZB-V holds two chunks per stage in a V, ordered for the mapping's F, B
// and W times: 1F1B's in-flight microbatches and activation memory, and a
// bubble between one iteration's least, (p - 1) F, and interleaved 1F1B's
// at the same chunks.
TEST(AnalyzeIteration, ZeroBubbleVAgainstInterleaved) {
  TestMapping interleaved;
  interleaved.p = 4;
  interleaved.global_batch = 8;
  interleaved.schedule = InterleavedOneForwardOneBackward{2};
  TestMapping one_f_one_b = interleaved;
  one_f_one_b.schedule = OneForwardOneBackward{};
  TestMapping zero_bubble = interleaved;
  zero_bubble.schedule = ZeroBubbleV{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed i, Analyse(interleaved));
  BP_ASSERT_OK_AND_ASSIGN(const Analysed o, Analyse(one_f_one_b));
  BP_ASSERT_OK_AND_ASSIGN(const Analysed z, Analyse(zero_bubble));
  const IterationFigures& zf = z.iteration.figures;
  ASSERT_TRUE(z.iteration.step.simulated_schedule.has_value());
  EXPECT_EQ(z.iteration.step.v, 2);
  const double p = 4;
  EXPECT_GE(zf.bubble_time, (p - 1) * zf.chunk_fw_time * (1 - 1e-12));
  EXPECT_LT(zf.bubble_time, i.iteration.figures.bubble_time);
  EXPECT_EQ(zf.peak_inflight_microbatches,
            o.iteration.figures.peak_inflight_microbatches);
  EXPECT_EQ(z.memory.figures.act_space, o.memory.figures.act_space);
}

// The checker's rules of the simulated schedules: training with a pipeline,
// an even layout, and the constructor's shape rules on the spec's fields.
// DualPipe: rank s holds stage s of one model copy and stage p - 1 - s of
// the other. Each microbatch passes one of them, so the compute is 1F1B's;
// the rank's state, its optimizer step and its DP reduction are of both
// stages, its activations p + 1 stages' (the DeepSeek-V3 report's PP + 1),
// and it sums its gradients with its twin's over the pipeline tier.
TEST(AnalyzeIteration, DualPipeHoldsTwoStagesPerRank) {
  TestMapping one_f_one_b;
  one_f_one_b.p = 4;
  one_f_one_b.d = 2;
  one_f_one_b.global_batch = 32;  // m = 16
  one_f_one_b.recompute = RecomputePolicy::kFull;
  TestMapping dualpipe = one_f_one_b;
  dualpipe.schedule = DualPipe{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(one_f_one_b));
  BP_ASSERT_OK_AND_ASSIGN(const Analysed d, Analyse(dualpipe));
  const StepShape& step = d.iteration.step;
  EXPECT_EQ(d.program.derived.stages_per_rank, 2);
  EXPECT_EQ(a.program.derived.stages_per_rank, 1);
  EXPECT_EQ(step.stages_per_rank, 2);
  EXPECT_EQ(step.v, 1);
  EXPECT_EQ(step.blocks_per_chunk, step.blocks_per_stage);
  const IterationFigures& af = a.iteration.figures;
  const IterationFigures& df = d.iteration.figures;
  EXPECT_EQ(df.fw_time, af.fw_time);
  EXPECT_EQ(df.bw_time, af.bw_time);
  EXPECT_EQ(df.recompute_time, af.recompute_time);
  EXPECT_EQ(df.chunk_time, af.chunk_time);
  BP_EXPECT_NEAR(df.optim_step_time, 2 * af.optim_step_time, 1e-15);
  BP_EXPECT_NEAR(df.dp_comm_exposed_time, 2 * af.dp_comm_exposed_time, 1e-15);
  EXPECT_GT(af.dp_comm_exposed_time, 0);
  const BlockFigures& b = d.plan.block;
  const double bpp = static_cast<double>(step.blocks_per_stage);
  EXPECT_EQ(af.twin_stage_sync_time, 0);
  EXPECT_EQ(df.twin_stage_sync_time,
            CollectiveTime(*step.pipeline_net, CollectiveOp::kAllReduce,
                           2 * bpp * b.block_weight_grad_space_no_sharding,
                           2));
  EXPECT_GT(df.twin_stage_sync_time, 0);
  EXPECT_GT(df.fb_overlap_saving_time, 0);
  const MemoryFigures& am = a.memory.figures;
  const MemoryFigures& dm = d.memory.figures;
  BP_EXPECT_NEAR(dm.weight_space, 2 * am.weight_space, 1e-15);
  BP_EXPECT_NEAR(dm.optimizer_space, 2 * am.optimizer_space, 1e-15);
  BP_EXPECT_NEAR(dm.weight_grad_space,
                 b.block_weight_grad_space_no_sharding +
                     b.block_weight_grad_space * (2 * bpp - 1),
                 1e-15);
  // (p + 1) / 2 in units of the rank's two stages: p + 1 stages.
  EXPECT_EQ(df.peak_inflight_microbatches, 2.5);
  BP_EXPECT_NEAR(dm.act_checkpoint_size,
                 5 * bpp * b.block_act_checkpoint_size, 1e-15);
}

// DualPipe's end ranks each hold the first stage of one copy and the last
// of the other: the embedding and the output layer, each run for the m / 2
// microbatches of one direction, reduced over DP, summed with the twin's;
// a tied table is held once (no copy to synchronise on its own).
TEST(AnalyzeIteration, DualPipeEndRanksHoldTheEmbeddingAndTheHead) {
  TestMapping mapping;
  mapping.p = 4;
  mapping.d = 2;
  mapping.global_batch = 32;  // m = 16
  mapping.schedule = DualPipe{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed d, Analyse(mapping));
  const StepShape& step = d.iteration.step;
  StageExtras x;
  x.first.block_fw_time = 1e-3;
  x.first.block_agrad_time = 2e-3;
  x.first.block_optim_time = 1e-4;
  x.first.block_weight_space = 1e6;
  x.first.block_weight_grad_space = 2e6;
  x.first.block_weight_grad_space_no_sharding = 2e6;
  x.first.block_optimizer_space = 6e6;
  x.last = x.first;
  x.last.block_fw_time = 3e-3;
  x.last.block_wgrad_time = 4e-3;
  x.last.block_weight_grad_space_no_sharding = 3e6;
  IterationFigures it;
  ComputeIteration(d.plan.block, x, step, it);
  const double first = 1e-3 + 2e-3;
  const double last = 3e-3 + 2e-3 + 4e-3;
  BP_EXPECT_NEAR(it.first_stage_extra_time,
                 16.0 / 2 * (first + last) + 2 * 1e-4, 1e-15);
  EXPECT_EQ(it.last_stage_extra_time, it.first_stage_extra_time);
  EXPECT_EQ(it.stage_imbalance_time, it.first_stage_extra_time);
  EXPECT_EQ(it.embedding_sync_time, 0);
  BP_EXPECT_NEAR(
      it.stage_extra_dp_time,
      2 * CollectiveTime(*step.data_net, CollectiveOp::kAllReduce, 1e6, 2),
      1e-15);
  const double bpp = static_cast<double>(step.blocks_per_stage);
  EXPECT_EQ(it.twin_stage_sync_time,
            CollectiveTime(
                *step.pipeline_net, CollectiveOp::kAllReduce,
                2 * bpp * d.plan.block.block_weight_grad_space_no_sharding +
                    2e6 + 3e6,
                2));
  MemoryFigures memory;
  ComputeMemory(d.plan.block, x, step, memory);
  const double blocks = memory.weight_space + memory.weight_grad_space +
                        memory.optimizer_space;
  BP_EXPECT_NEAR(memory.first_stage_weight_and_optimizer_bytes,
                 blocks + 2 * (1e6 + 2e6 + 6e6), 1e-15);
  EXPECT_EQ(memory.last_stage_weight_and_optimizer_bytes,
            memory.first_stage_weight_and_optimizer_bytes);

  // A tied table: 1F1B's last stage keeps a copy, a dualpipe end rank
  // holds the one table both of its ends read.
  TransformerModel model = d.program.model();
  model.vocabulary.tied = true;
  DerivedValues dv = d.program.derived;
  dv.padded_vocabulary = 128;
  EXPECT_FALSE(MakeStepShape(dv, model, d.program.system(), d.program.batch(),
                             d.program.options())
                   .embedding_copy);
  dv.stages_per_rank = 1;
  EXPECT_TRUE(MakeStepShape(dv, model, d.program.system(), d.program.batch(),
                            d.program.options())
                  .embedding_copy);
}

TEST(AnalyzeIteration, SimulatedScheduleRules) {
  TestMapping dualpipe;
  dualpipe.p = 4;
  dualpipe.global_batch = 4;  // m = 4 < 2p
  dualpipe.schedule = DualPipeV{};
  const absl::StatusOr<TypedProgram> short_batch = TestProgram(dualpipe);
  ASSERT_FALSE(short_batch.ok());
  EXPECT_THAT(std::string(short_batch.status().message()),
              ::testing::HasSubstr(
                  "parallelism.pipeline.schedule dualpipe_v: m (4) must be at "
                  "least 2p (8)"));
  TestMapping twin;
  twin.p = 3;
  twin.d = 2;
  twin.blocks = 12;
  twin.global_batch = 10;  // m = 5
  twin.data_overlap = true;
  twin.schedule = DualPipe{};
  const absl::StatusOr<TypedProgram> twin_rules = TestProgram(twin);
  ASSERT_FALSE(twin_rules.ok());
  for (const char* rule :
       {"p (3) must be even for schedule dualpipe",
        "m (5) must be even for schedule dualpipe",
        "m (5) must be at least 2p (6)",
        "parallelism.data.overlap cannot be combined with "
        "parallelism.pipeline.schedule dualpipe"}) {
    EXPECT_THAT(std::string(twin_rules.status().message()),
                ::testing::HasSubstr(rule));
  }
  TestMapping inference;
  inference.p = 2;
  inference.training = false;
  inference.schedule = GPipe{};
  const absl::StatusOr<TypedProgram> wrong_kind = TestProgram(inference);
  ASSERT_FALSE(wrong_kind.ok());
  EXPECT_THAT(std::string(wrong_kind.status().message()),
              ::testing::HasSubstr("gpipe is a training schedule"));
  TestMapping single;
  single.schedule = GPipe{};
  const absl::StatusOr<TypedProgram> no_pipeline = TestProgram(single);
  ASSERT_FALSE(no_pipeline.ok());
  EXPECT_THAT(std::string(no_pipeline.status().message()),
              ::testing::HasSubstr("gpipe requires parallelism.pipeline.degree "
                                   "> 1"));
}

}  // namespace
}  // namespace blueprint
