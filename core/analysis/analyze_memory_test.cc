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
#include "core/analysis/lineage.h"
#include "core/base/units.h"
#include "core/plan/hardware.h"
#include "core/plan/plan.h"
#include "core/schedule/schedule_ir.h"
#include "core/testing/doubles.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using analyze_test::Analyse;
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
