// The memory analysis (AnalyzeMemory, figures_memory.cc): capacity
// violations, the scheduled in-flight correction, every figure assigned,
// and the state's tier-1 bytes.
#include "core/analysis/analyze.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/analysis/analyze_test_util.h"
#include "core/analysis/figures.h"
#include "core/analysis/stages.h"
#include "core/analysis/lineage.h"
#include "core/base/units.h"
#include "core/plan/hardware.h"
#include "core/plan/plan.h"
#include "core/schedule/schedule_ir.h"
#include "core/spec/check.h"
#include "core/testing/doubles.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using analyze_test::Analyse;
using analyze_test::AnalyseProgram;
using analyze_test::Analysed;
using test_programs::TestMapping;

TEST(AnalyzeMemory, ReportsCapacityViolationNamingTheField) {
  TestMapping m;
  m.hidden = 8192;
  m.feedforward = 32768;
  m.heads = 64;
  m.head_size = 128;
  m.blocks = 64;
  m.seq = 2048;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
  ASSERT_EQ(a.memory.violations.size(), 1u);
  EXPECT_NE(a.memory.violations[0].message.find("system.mem1.GiB (80)"),
            std::string::npos)
      << a.memory.violations[0].message;
  EXPECT_EQ(a.memory.violations[0].field, "system.mem1.GiB");
  EXPECT_NE(a.memory.violations[0].message.find("proc_mem_tier1_cap_req"),
            std::string::npos);
}

// Correction scheduled_in_flight: the memory analysis holds the command
// order's in-flight microbatches (1f1b min(m, p); interleaved Megatron-LM's
// warm-up plus one, InterleavedFirstStagePeakChunks / v), equal to
// Calculon's factor when p | m >= p and different otherwise; the times do
// not change.
TEST(AnalyzeMemory, ScheduledInFlightCorrection) {
  Corrections scheduled;
  scheduled.Set(Correction::kScheduledInFlight, true);
  struct Case {
    int64_t p, v, m;
  };
  for (const Case& c : {Case{4, 2, 8}, Case{4, 2, 6}, Case{4, 2, 2},
                        Case{4, 1, 2}, Case{4, 1, 8}, Case{1, 1, 4}}) {
    TestMapping mapping;
    mapping.p = c.p;
    mapping.v = c.v;
    mapping.global_batch = c.m;
    BP_ASSERT_OK_AND_ASSIGN(const Analysed calculon, Analyse(mapping));
    BP_ASSERT_OK_AND_ASSIGN(const Analysed refined,
                            Analyse(mapping, scheduled));
    const double p = static_cast<double>(c.p), v = static_cast<double>(c.v);
    const double m = static_cast<double>(c.m);
    const double in_flight =
        c.p == 1 ? 1
        : c.v > 1
            ? static_cast<double>(InterleavedFirstStagePeakChunks(c.p, c.v, c.m)) / v
            : std::min(m, p);
    const double factor =
        std::min(m, p) * (c.v > 1 ? 1 + (p - 1) / (v * p) : 1);
    const std::string what = absl::StrCat("p ", c.p, " v ", c.v, " m ", c.m);
    EXPECT_EQ(refined.iteration.figures.peak_inflight_microbatches, in_flight)
        << what;
    BP_EXPECT_DOUBLE_EQ(calculon.iteration.figures.peak_inflight_microbatches,
                        factor);
    const BlockFigures& b = refined.plan.block;
    const double bpp =
        static_cast<double>(refined.iteration.step.blocks_per_stage);
    BP_EXPECT_NEAR(refined.memory.figures.act_space,
                   b.block_act_working_space +
                       b.block_act_storage_space * (bpp * in_flight - 1),
                   1e-12);
    EXPECT_EQ(refined.iteration.figures.total_time,
              calculon.iteration.figures.total_time)
        << what;
  }
  // Where they differ: p | m >= p agrees with Calculon; 6 of 6 microbatches
  // (Megatron-LM's group of 6) against 5.5; 1 against 2.75 for m < p.
  TestMapping leftover;
  leftover.p = 4;
  leftover.v = 2;
  leftover.global_batch = 6;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(leftover, scheduled));
  EXPECT_EQ(a.iteration.figures.peak_inflight_microbatches, 6);
}

// ComputeMemory assigns every figure whatever the figures held before (the
// search reuses one scratch): into figures full of NaN, the same as into
// fresh ones, with and without training, recomputation, offload and the
// last stage's copy of a tied table, with first and last stage extras (the
// search's call).
// A 1F1B pipeline of p = 4 over `blocks` blocks of the test model with an
// untied vocabulary and the explicit layout `stage_blocks` (empty: even).
absl::StatusOr<Analysed> AnalyseLayout(int64_t blocks,
                                       std::vector<int64_t> stage_blocks,
                                       RecomputePolicy recompute) {
  TestMapping m;
  m.p = 4;
  m.blocks = blocks;
  m.recompute = recompute;
  MappingSpec spec = TestSpec(m);
  auto& training = std::get<TransformerTrainingMappingSpec>(spec);
  training.model.vocabulary.size = 32000;
  training.model.vocabulary.tied = false;
  training.parallelism.pipeline.stage_blocks = std::move(stage_blocks);
  return AnalyseProgram(CheckSpec(spec));
}

// Memory per stage: under an explicit layout each end stage holds its own
// blocks beside its vocabulary: the first stage of (1, 3, 3, 1) over 8
// blocks needs what the first stage of the even split of 4 blocks (one
// each) needs, at the same in-flight microbatches; the busiest (middle)
// rank keeps proc_mem_tier1_cap_req, and the maxima cover it.
TEST(AnalyzeMemory, ExplicitLayoutPricesEachEndStageOnItsOwnBlocks) {
  for (const RecomputePolicy recompute :
       {RecomputePolicy::kNone, RecomputePolicy::kFull}) {
    BP_ASSERT_OK_AND_ASSIGN(const Analysed layout,
                            AnalyseLayout(8, {1, 3, 3, 1}, recompute));
    BP_ASSERT_OK_AND_ASSIGN(const Analysed one, AnalyseLayout(4, {}, recompute));
    BP_ASSERT_OK_AND_ASSIGN(const Analysed even, AnalyseLayout(8, {}, recompute));
    const MemoryFigures& l = layout.memory.figures;
    const MemoryFigures& o = one.memory.figures;
    BP_EXPECT_DOUBLE_EQ(l.first_stage_mem_tier1_req, o.first_stage_mem_tier1_req);
    BP_EXPECT_DOUBLE_EQ(l.last_stage_mem_tier1_req, o.last_stage_mem_tier1_req);
    BP_EXPECT_DOUBLE_EQ(l.first_stage_weight_and_optimizer_bytes,
                        o.first_stage_weight_and_optimizer_bytes);
    BP_EXPECT_DOUBLE_EQ(l.last_stage_weight_and_optimizer_bytes,
                        o.last_stage_weight_and_optimizer_bytes);
    // The busiest rank (3 blocks) is the even split's of 8 over 4 (2 each)
    // plus one block: more than the layout's end stages' blocks.
    EXPECT_GT(l.proc_mem_tier1_cap_req, even.memory.figures.proc_mem_tier1_cap_req);
    EXPECT_EQ(l.max_stage_mem_tier1_req,
              std::max({l.first_stage_mem_tier1_req, l.last_stage_mem_tier1_req,
                        l.proc_mem_tier1_cap_req}));
    EXPECT_EQ(l.weight_and_optimizer_bytes,
              std::max({l.first_stage_weight_and_optimizer_bytes,
                        l.last_stage_weight_and_optimizer_bytes,
                        l.weight_space + l.weight_grad_space +
                            l.optimizer_space}));
  }
  // An end stage of no blocks holds its vocabulary alone.
  BP_ASSERT_OK_AND_ASSIGN(
      const Analysed empty,
      AnalyseLayout(8, {0, 3, 3, 2}, RecomputePolicy::kNone));
  const MemoryFigures& e = empty.memory.figures;
  const BlockFigures& first = empty.plan.first_stage;
  BP_EXPECT_DOUBLE_EQ(e.first_stage_weight_and_optimizer_bytes,
                      first.block_weight_space +
                          (first.block_weight_grad_space +
                           first.block_optimizer_space));
}

// StageFiguresOf: one entry per stage in model order, each on its own
// blocks: the end stages' time and memory are the first and last stage
// figures, a stage of the busiest rank's blocks takes the chunk time and
// needs proc_mem_tier1_cap_req, a lighter middle rank needs less; the even
// split prices every stage at blocks_per_chunk.
TEST(AnalyzeMemory, StageFiguresListEveryStage) {
  auto stages_of = [](const Analysed& a) {
    return StageFiguresOf(a.plan.block,
                          StageExtras{a.plan.first_stage, a.plan.last_stage},
                          a.iteration.step, a.iteration.figures,
                          a.memory.figures);
  };
  BP_ASSERT_OK_AND_ASSIGN(const Analysed layout,
                          AnalyseLayout(8, {1, 3, 3, 1}, RecomputePolicy::kNone));
  const std::vector<StageFigure> stages = stages_of(layout);
  ASSERT_EQ(stages.size(), 4u);
  const IterationFigures& it = layout.iteration.figures;
  const MemoryFigures& m = layout.memory.figures;
  const std::vector<ChunkDurations> positions = LayoutPositionDurations(
      layout.plan.block, layout.iteration.step, it);
  for (size_t k = 0; k < stages.size(); ++k) {
    EXPECT_EQ(stages[k].rank, static_cast<int64_t>(k));
    EXPECT_EQ(stages[k].chunk, 0);
    EXPECT_EQ(stages[k].blocks, (std::vector<int64_t>{1, 3, 3, 1})[k]);
  }
  const auto own = [&](size_t k) {
    return positions[k].forward + positions[k].backward_input +
           positions[k].backward_weight;
  };
  BP_EXPECT_DOUBLE_EQ(stages[0].microbatch_time,
                      own(0) + it.first_stage_microbatch_time);
  BP_EXPECT_DOUBLE_EQ(stages[1].microbatch_time,
                      it.chunk_fw_time + it.chunk_bw_time);
  BP_EXPECT_DOUBLE_EQ(stages[3].microbatch_time,
                      own(3) + it.last_stage_microbatch_time);
  BP_EXPECT_DOUBLE_EQ(stages[0].rank_mem_tier1_req, m.first_stage_mem_tier1_req);
  BP_EXPECT_DOUBLE_EQ(stages[1].rank_mem_tier1_req, m.proc_mem_tier1_cap_req);
  BP_EXPECT_DOUBLE_EQ(stages[2].rank_mem_tier1_req, m.proc_mem_tier1_cap_req);
  BP_EXPECT_DOUBLE_EQ(stages[3].rank_mem_tier1_req, m.last_stage_mem_tier1_req);

  // A light middle rank (1 block against the busiest 3) needs less.
  BP_ASSERT_OK_AND_ASSIGN(const Analysed light,
                          AnalyseLayout(8, {2, 1, 3, 2}, RecomputePolicy::kNone));
  const std::vector<StageFigure> light_stages = stages_of(light);
  EXPECT_GT(light_stages[1].rank_mem_tier1_req, 0);
  EXPECT_LT(light_stages[1].rank_mem_tier1_req,
            light_stages[2].rank_mem_tier1_req);
  EXPECT_LT(light_stages[1].microbatch_time, light_stages[2].microbatch_time);

  BP_ASSERT_OK_AND_ASSIGN(const Analysed even,
                          AnalyseLayout(8, {}, RecomputePolicy::kNone));
  const std::vector<StageFigure> even_stages = stages_of(even);
  ASSERT_EQ(even_stages.size(), 4u);
  for (const StageFigure& stage : even_stages) EXPECT_EQ(stage.blocks, 2);
  BP_EXPECT_DOUBLE_EQ(even_stages[1].microbatch_time,
                      even.iteration.figures.chunk_fw_time +
                          even.iteration.figures.chunk_bw_time);
  BP_EXPECT_DOUBLE_EQ(even_stages[2].rank_mem_tier1_req,
                      even.memory.figures.proc_mem_tier1_cap_req);
}

TEST(AnalyzeMemory, EveryFigureAssigned) {
  TestMapping mapping;
  mapping.p = 2;
  mapping.d = 2;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(mapping));
  StageExtras extras;
  extras.first.block_weight_space = 1e6;
  extras.first.block_act_working_space = 2e6;
  extras.last.block_weight_space = 3e6;
  extras.last.block_optimizer_space = 4e6;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Every combination of the four switches, one bit each.
  for (int variant = 0; variant < 16; ++variant) {
    StepShape step = a.iteration.step;
    step.training = (variant & 1) != 0;
    step.recompute =
        (variant & 2) != 0 ? RecomputePolicy::kFull : RecomputePolicy::kNone;
    step.offload.weights = step.offload.activations = step.offload.optimizer =
        (variant & 4) != 0;
    step.embedding_copy = (variant & 8) != 0;
    MemoryFigures fresh;
    ComputeMemory(a.plan.block, extras, step, fresh);
    MemoryFigures dirty;
#define BP_POISON(name, ...) dirty.name = nan;
    BP_MEMORY_FIGURES(BP_POISON)
    BP_MEMORY_TERMS(BP_POISON)
#undef BP_POISON
    dirty.checkpoint_min_defined = !fresh.checkpoint_min_defined;
    dirty.tier1_capacity = dirty.tier2_capacity = nan;
    ComputeMemory(a.plan.block, extras, step, dirty);
#define BP_EXPECT_SAME(name, ...)                                   \
  EXPECT_EQ(absl::StrCat(dirty.name), absl::StrCat(fresh.name)) \
      << #name << " variant=" << variant;
    BP_MEMORY_FIGURES(BP_EXPECT_SAME)
    BP_MEMORY_TERMS(BP_EXPECT_SAME)
    BP_EXPECT_SAME(tier1_capacity)
    BP_EXPECT_SAME(tier2_capacity)
    BP_EXPECT_SAME(checkpoint_min_defined)
#undef BP_EXPECT_SAME
  }
}

// StateTier1Bytes is ComputeMemory's tier-1 requirement without its
// activation terms: at most the requirement, and equal to it when the
// activations are 0, with every offload, recomputation, training and
// precision; StateExceedsTier1 is then MemoryTier1Fits's answer.
TEST(AnalyzeMemory, StateTier1BytesIsTheRequirementWithoutActivations) {
  const auto state_of = [](const BlockFigures& b) {
    return MemoryStateOf(b, StageExtras()).block;
  };
  TestMapping mapping;
  mapping.p = 2;
  mapping.d = 2;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(mapping));
  BlockFigures no_activations = a.plan.block;
  no_activations.block_act_working_space = 0;
  no_activations.block_act_storage_space = 0;
  no_activations.block_act_checkpoint_size = 0;
  no_activations.block_act_grad_space = 0;
  ASSERT_GT(a.plan.block.block_act_working_space, 0);
  for (int variant = 0; variant < 32; ++variant) {
    StepShape step = a.iteration.step;
    step.training = (variant & 1) != 0;
    step.recompute =
        (variant & 2) != 0 ? RecomputePolicy::kFull : RecomputePolicy::kNone;
    step.offload.weights = (variant & 4) != 0;
    step.offload.optimizer = (variant & 8) != 0;
    step.offload.activations = step.offload.weights;
    step.precision = (variant & 16) != 0 ? PrecisionAccounting::kMegatronMixed
                                         : PrecisionAccounting::kCalculon;
    MemoryFigures with, without;
    ComputeMemory(a.plan.block, step, with);
    ComputeMemory(no_activations, step, without);
    const double state = StateTier1Bytes(state_of(a.plan.block), step);
    EXPECT_GT(state, 0) << "variant=" << variant;
    EXPECT_LT(state, with.proc_mem_tier1_cap_req) << "variant=" << variant;
    EXPECT_EQ(StateTier1Bytes(state_of(no_activations), step),
              without.proc_mem_tier1_cap_req)
        << "variant=" << variant;
    EXPECT_EQ(StateExceedsTier1(state_of(no_activations), step),
              !MemoryTier1Fits(without))
        << "variant=" << variant;
    // A tier 1 the state alone is over.
    MemoryTier small = *step.mem1;
    small.gib = state / kGiB / 2;
    step.mem1 = &small;
    ComputeMemory(no_activations, step, without);
    EXPECT_TRUE(StateExceedsTier1(state_of(no_activations), step)) << variant;
    EXPECT_FALSE(MemoryTier1Fits(without)) << variant;
  }
}

}  // namespace
}  // namespace blueprint
