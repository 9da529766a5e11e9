// The iteration analysis (AnalyzeIteration): the analytic schedules' bubble
// and traffic, every figure printed with its formula, the gradient
// reduction's datatype corrections, and the step time's lower bound.
#include "core/analysis/analyze.h"

#include <algorithm>
#include <cmath>
#include <optional>
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

TEST(AnalyzeIteration, SingleStageHasNoBubbleAndNoPipelineTraffic) {
  TestMapping m;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
  EXPECT_EQ(a.iteration.schedule, "single_stage");
  BP_EXPECT_DOUBLE_EXACT(a.iteration.figures.bubble_time, 0);
  BP_EXPECT_DOUBLE_EXACT(a.iteration.figures.pp_comm_link_time, 0);
  const IterationFigures& f = a.iteration.figures;
  BP_EXPECT_DOUBLE_EQ(f.total_time, f.fw_time + f.bw_time + f.optim_step_time);
}

// 1F1B: bubble = (p-1) * chunk time, with no extra term even when m % p != 0.
TEST(AnalyzeIteration, OneForwardOneBackwardBubble) {
  for (int64_t batch : {8, 6, 2}) {
    TestMapping m;
    m.p = 4;
    m.global_batch = batch;
    BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
    const IterationFigures& f = a.iteration.figures;
    EXPECT_EQ(a.iteration.schedule, "1f1b");
    BP_EXPECT_DOUBLE_EQ(f.bubble_time, 3 * f.chunk_time) << "batch " << batch;
    BP_EXPECT_DOUBLE_EXACT(f.extra_interleaving_bubbles, 0);
  }
}

// Interleaved: the chunk is bpp/v blocks; m % p != 0 adds (v-1)(p - m%p)
// whole chunks.
TEST(AnalyzeIteration, InterleavedBubbleContract) {
  TestMapping m;
  m.p = 2;
  m.v = 2;
  m.global_batch = 3;  // m = 3, m % p = 1
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
  const IterationFigures& f = a.iteration.figures;
  EXPECT_EQ(a.iteration.schedule, "interleaved_1f1b");
  EXPECT_EQ(a.iteration.step.blocks_per_chunk, 2);
  BP_EXPECT_DOUBLE_EXACT(f.extra_interleaving_bubbles, 1);
  BP_EXPECT_DOUBLE_EQ(f.bubble_time, (1 + 1) * f.chunk_time);
  m.global_batch = 4;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed even, Analyse(m));
  BP_EXPECT_DOUBLE_EQ(even.iteration.figures.bubble_time,
                      even.iteration.figures.chunk_time);
}

// blocks % p != 0 with an explicit uneven layout: blocks per stage rounded
// up, the bubble shortened by the missing blocks.
TEST(AnalyzeIteration, UnevenLayoutShortensTheBubble) {
  TestMapping m;
  m.p = 3;
  m.blocks = 8;  // 3 blocks on the first stages, R = 1
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
  const IterationFigures& f = a.iteration.figures;
  EXPECT_EQ(a.iteration.step.blocks_per_stage, 3);
  EXPECT_EQ(a.iteration.step.bubble_reduction_blocks, 1);
  EXPECT_GT(f.bubble_reduction_time, 0);
  BP_EXPECT_DOUBLE_EQ(f.bubble_time,
                      2 * f.chunk_time - f.bubble_reduction_time);
}

// |got - want| relative to |want|.
double Relative(double got, double want) {
  return std::fabs(got - want) / std::max(std::fabs(want), 1e-300);
}

// A 1F1B pipeline of p = 4 over the test model's 8 blocks with a
// vocabulary of `vocabulary` entries (untied) and the explicit layout
// `stage_blocks` (empty: the even split).
absl::StatusOr<Analysed> AnalyseLayout(int64_t vocabulary,
                                       std::vector<int64_t> stage_blocks,
                                       int64_t v = 1) {
  TestMapping m;
  m.p = 4;
  m.v = v;
  m.global_batch = 8;
  MappingSpec spec = TestSpec(m);
  auto& training = std::get<TransformerTrainingMappingSpec>(spec);
  training.model.vocabulary.size = vocabulary;
  training.model.vocabulary.tied = false;
  training.parallelism.pipeline.stage_blocks = std::move(stage_blocks);
  return AnalyseProgram(CheckSpec(spec));
}

// An explicit layout of equal stages prices as the even split: the end
// stages' extras add m * max(e) + min(e) (to the last bits).
TEST(AnalyzeIteration, EqualExplicitLayoutPricesAsTheEvenSplit) {
  for (int64_t v : {1, 2}) {
    BP_ASSERT_OK_AND_ASSIGN(const Analysed even, AnalyseLayout(32000, {}, v));
    BP_ASSERT_OK_AND_ASSIGN(
        const Analysed layout,
        AnalyseLayout(32000, std::vector<int64_t>(4 * v, 2 / v), v));
    const IterationFigures& e = even.iteration.figures;
    const IterationFigures& l = layout.iteration.figures;
    EXPECT_GT(e.stage_imbalance_time, 0);
    EXPECT_LE(Relative(l.stage_imbalance_time, e.stage_imbalance_time), 1e-12)
        << "v " << v;
    EXPECT_LE(Relative(l.total_time, e.total_time), 1e-12) << "v " << v;
    EXPECT_LE(Relative(l.first_stage_time, e.first_stage_time), 1e-12);
    EXPECT_LE(Relative(l.last_stage_time, e.last_stage_time), 1e-12);
  }
}

// Each stage priced on its own blocks: a layout that gives the end stages
// one block fewer (1, 3, 3, 1) hides a vocabulary lighter than a block in
// the pace: the extras are paid once, in the fill and drain, and the busiest
// stage (3 blocks) sets the pace; the even pricing would add m * max(e).
TEST(AnalyzeIteration, LighterEndStagesHideTheirVocabularyInThePace) {
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, AnalyseLayout(256, {1, 3, 3, 1}));
  const IterationFigures& f = a.iteration.figures;
  EXPECT_EQ(a.iteration.step.first_rank_blocks, 1);
  EXPECT_EQ(a.iteration.step.last_rank_blocks, 1);
  EXPECT_EQ(a.iteration.step.blocks_per_stage, 3);
  // Two blocks' time, (base + edge) of both passes, exceeds each extra.
  const double gap = f.baseblock_fw_time + f.edgeblock_fw_time +
                     f.baseblock_bw_time + f.edgeblock_bw_time;
  ASSERT_GT(f.first_stage_microbatch_time, 0);
  ASSERT_LT(f.last_stage_microbatch_time, gap);
  ASSERT_LT(f.first_stage_microbatch_time, gap);
  const double optim = std::max(a.plan.first_stage.block_optim_time,
                                a.plan.last_stage.block_optim_time);
  BP_EXPECT_DOUBLE_EQ(f.stage_imbalance_time,
                      f.first_stage_microbatch_time +
                          f.last_stage_microbatch_time + optim);
  // Each end stage computes a third of the busiest rank's blocks.
  const double blocks =
      f.fw_time + f.bw_time + f.recompute_time + f.optim_step_time;
  EXPECT_LE(Relative(f.first_stage_time,
                     blocks / 3 + f.first_stage_extra_time),
            1e-12);
  EXPECT_LE(Relative(f.last_stage_time, blocks / 3 + f.last_stage_extra_time),
            1e-12);
}

// A vocabulary heavier than the blocks the end stage lacks still sets the
// pace: (m - 1) * (e_last - gap) + e_first + e_last, less than the even
// pricing's m * e_last + e_first (the lacking block's time is the
// vocabulary's, m - 1 times).
TEST(AnalyzeIteration, HeavyVocabularyPacesTheLastStage) {
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a,
                          AnalyseLayout(32000, {1, 2, 3, 2}));
  const IterationFigures& f = a.iteration.figures;
  // The first rank lacks two blocks, the last one.
  const double first_gap = f.baseblock_fw_time + f.edgeblock_fw_time +
                           f.baseblock_bw_time + f.edgeblock_bw_time;
  const double gap = first_gap / 2;
  ASSERT_GT(f.last_stage_microbatch_time - gap,
            f.first_stage_microbatch_time - first_gap);
  ASSERT_GT(f.last_stage_microbatch_time, gap);
  const double optim = std::max(a.plan.first_stage.block_optim_time,
                                a.plan.last_stage.block_optim_time);
  const double m = 8;
  EXPECT_LE(Relative(f.stage_imbalance_time,
                     (m - 1) * (f.last_stage_microbatch_time - gap) +
                         f.first_stage_microbatch_time +
                         f.last_stage_microbatch_time + optim),
            1e-12);
  // The even pricing of the busiest stage plus the extras: more.
  EXPECT_LT(f.stage_imbalance_time,
            m * f.last_stage_microbatch_time + f.first_stage_microbatch_time +
                optim);
}

// A layout may leave the end stages without blocks (0, 4, 4, 0), as
// Megatron-LM's layout strings do: each of the 8 blocks the ranks lack
// shortens the bubble by the cheaper of a base and an edge block, so the
// p - 1 = 3 chunks of 4 blocks are never overdrawn (Calculon's half-edge
// pricing, meant for at most p - 1 missing blocks, could be).
TEST(AnalyzeIteration, EmptyEndStagesShortenTheBubbleByWholeBlocks) {
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, AnalyseLayout(256, {0, 4, 4, 0}));
  const IterationFigures& f = a.iteration.figures;
  ASSERT_EQ(a.iteration.step.bubble_reduction_blocks, 8);
  const double block = std::min(f.baseblock_fw_time + f.baseblock_bw_time,
                                f.edgeblock_fw_time + f.edgeblock_bw_time);
  BP_EXPECT_DOUBLE_EQ(f.bubble_reduction_time, 8 * block);
  EXPECT_GE(f.bubble_time, 0);
  EXPECT_LE(f.bubble_reduction_time, 3 * f.chunk_time);
}

TEST(AnalyzeIteration, ForwardOnlyInferenceHasNoBackward) {
  TestMapping m;
  m.training = false;
  m.p = 2;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
  const IterationFigures& f = a.iteration.figures;
  EXPECT_EQ(a.iteration.schedule, "forward_only");
  BP_EXPECT_DOUBLE_EXACT(f.bw_time, 0);
  BP_EXPECT_DOUBLE_EXACT(f.optim_step_time, 0);
  BP_EXPECT_DOUBLE_EXACT(f.dp_comm_exposed_time, 0);
  BP_EXPECT_DOUBLE_EXACT(a.memory.figures.optimizer_space, 0);
  EXPECT_FALSE(a.memory.figures.checkpoint_min_defined);
}

TEST(AnalyzeIteration, DataParallelTrafficAndSharding) {
  TestMapping m;
  m.d = 4;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed plain, Analyse(m));
  EXPECT_GT(plain.iteration.figures.dp_comm_link_time, 0);
  BP_EXPECT_DOUBLE_EXACT(plain.iteration.figures.dp_comm_link_time,
                         plain.iteration.figures.dp_comm_exposed_time);
  m.optimizer_sharding = true;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed sharded, Analyse(m));
  // RS + AG on InfiniBand (scalars 1, offsets 0) cost exactly twice the
  // all-reduce (MODEL.md §4.8).
  BP_EXPECT_NEAR(sharded.iteration.figures.block_dp_time,
                 2 * plain.iteration.figures.block_dp_time, 1e-15);
  EXPECT_LT(sharded.memory.figures.optimizer_space,
            plain.memory.figures.optimizer_space);
  m.data_overlap = true;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed overlapped, Analyse(m));
  BP_EXPECT_DOUBLE_EXACT(overlapped.iteration.figures.dp_comm_link_time,
                         sharded.iteration.figures.dp_comm_link_time);
}

TEST(AnalyzeIteration, PrintsEveryFigureWithItsFormula) {
  TestMapping m;
  m.p = 2;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
  const std::string text = ToText(a.iteration);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "blueprinting.iteration_analysis/2");
  EXPECT_NE(text.find("lineage bubble_time = simulated_schedule ? "
                      "simulated_bubble(p, v, m, chunk_fw_time, "
                      "chunk_bw_time, blocks_per_chunk * block_wgrad_time, "
                      "chunk_fb_time) : bubble_chunks * chunk_time - bubble_reduction_time "
                      "pass=AnalyzeIteration from ["),
            std::string::npos);
  const std::string memory = ToText(a.memory);
  EXPECT_EQ(memory.substr(0, memory.find('\n')),
            "blueprinting.memory_analysis/2");
  EXPECT_NE(memory.find("lineage weight_space = block_weight_space * "
                        "rank_blocks pass=AnalyzeMemory from "
                        "[block:block_weight_space,derived:blocks_per_stage,"
                        "derived:stages_per_rank]"),
            std::string::npos);
  EXPECT_NE(text.find("\nbubble_fraction="), std::string::npos);
  EXPECT_NE(text.find("lineage gemm_flops_per_rank = blocks_per_stage * "
                      "microbatches * sum over the block's GEMM tasks of (fw "
                      "+ agrad + wgrad) flops + microbatches (dualpipe: "
                      "half) * the same over stage 0's own GEMM tasks "
                      "(output layer when p = 1 or dualpipe) "
                      "pass=AnalyzeIteration"),
            std::string::npos);
  // Every per-rank figure has its formula and sources too.
  EXPECT_EQ(a.iteration.rank_figures.size(), 44u);
  for (const NamedFigure& rank : a.iteration.rank_figures) {
    bool found = false;
    for (const FigureLineage& f : a.iteration.lineage) {
      if (f.figure != rank.name) continue;
      found = true;
      EXPECT_FALSE(f.formula.empty()) << f.figure;
      EXPECT_FALSE(f.lineage.sources.empty()) << f.figure;
    }
    EXPECT_TRUE(found) << rank.name;
  }
  double value = -1;
  EXPECT_TRUE(FindIterationFigure(a.iteration, "critical_path_base_forward",
                                  &value));
  BP_EXPECT_DOUBLE_EXACT(value, a.plan.critical_path[0].forward);
  EXPECT_FALSE(FindIterationFigure(a.iteration, "no_such_figure", &value));
}

// Correction fp32_gradient_reduction: with bfloat16 under Megatron-LM's
// precision, the DP gradient collectives move the float32 main gradients
// (twice the bf16 weights' bytes), the weights' all-gathers stay in bf16;
// with float16, or the correction off, the gradients move in the datatype.
TEST(AnalyzeIteration, Fp32GradientReductionCorrection) {
  Corrections fp32_grads;
  fp32_grads.Set(Correction::kFp32GradientReduction, true);
  for (DataType datatype : {DataType::kBFloat16, DataType::kFloat16}) {
    for (bool sharded : {false, true}) {
      TestMapping mapping;
      mapping.d = 4;
      mapping.optimizer_sharding = sharded;
      MappingSpec spec = TestSpec(mapping);
      auto& training = std::get<TransformerTrainingMappingSpec>(spec);
      training.options.datatype = datatype;
      training.options.precision = PrecisionAccounting::kMegatronMixed;
      // The test system's bfloat16 rates: its float16 ones.
      for (auto* engine : {&training.system.matrix, &training.system.vector}) {
        engine->rates[DataType::kBFloat16] = engine->rates[DataType::kFloat16];
      }
      BP_ASSERT_OK_AND_ASSIGN(const Analysed off,
                              AnalyseProgram(CheckSpec(spec)));
      BP_ASSERT_OK_AND_ASSIGN(const Analysed on,
                              AnalyseProgram(CheckSpec(spec), fp32_grads));
      const std::string what = absl::StrCat(
          datatype == DataType::kBFloat16 ? "bf16" : "fp16",
          sharded ? " sharded" : "");
      const IterationFigures& a = off.iteration.figures;
      const IterationFigures& b = on.iteration.figures;
      ASSERT_GT(a.block_dp_size, 0) << what;
      EXPECT_EQ(a.block_dp_grad_size, a.block_dp_size) << what;
      const bool applies = datatype == DataType::kBFloat16;
      EXPECT_EQ(b.block_dp_size, a.block_dp_size) << what;
      BP_EXPECT_DOUBLE_EXACT(b.block_dp_grad_size,
                             applies ? 2 * a.block_dp_size : a.block_dp_size);
      BP_EXPECT_DOUBLE_EXACT(on.plan.block.block_weight_grad_space_no_sharding,
                             2 * a.block_dp_size);
      if (applies) {
        EXPECT_GT(b.block_dp_time, a.block_dp_time) << what;
        EXPECT_GT(b.total_time, a.total_time) << what;
      } else {
        EXPECT_EQ(b.block_dp_time, a.block_dp_time) << what;
        EXPECT_EQ(b.total_time, a.total_time) << what;
      }
      double grads = 0, gathers = 0;
      ASSERT_TRUE(FindIterationFigure(
          on.iteration,
          sharded ? "dp_reduce_scatter_bytes" : "dp_all_reduce_bytes", &grads));
      ASSERT_TRUE(FindIterationFigure(on.iteration, "dp_all_gather_bytes",
                                      &gathers));
      const double blocks =
          static_cast<double>(on.iteration.step.blocks_per_stage);
      BP_EXPECT_DOUBLE_EXACT(grads, blocks * b.block_dp_grad_size);
      BP_EXPECT_DOUBLE_EXACT(gathers, sharded ? blocks * b.block_dp_size : 0);
    }
  }
}

// options.grad_reduce_datatype overrides the profile: bfloat16 keeps the
// reduction in the weights' bytes under the correction (Megatron-LM's
// --grad-reduce-in-bf16), float32 moves the float32 gradients without it
// (--accumulate-allreduce-grads-in-fp32), in either precision accounting.
TEST(AnalyzeIteration, GradReduceDatatypeOverridesTheProfile) {
  Corrections fp32_grads;
  fp32_grads.Set(Correction::kFp32GradientReduction, true);
  for (PrecisionAccounting precision :
       {PrecisionAccounting::kMegatronMixed, PrecisionAccounting::kCalculon}) {
    TestMapping mapping;
    mapping.d = 4;
    MappingSpec spec = TestSpec(mapping);
    auto& training = std::get<TransformerTrainingMappingSpec>(spec);
    training.options.datatype = DataType::kBFloat16;
    training.options.precision = precision;
    for (auto* engine : {&training.system.matrix, &training.system.vector}) {
      engine->rates[DataType::kBFloat16] = engine->rates[DataType::kFloat16];
    }
    BP_ASSERT_OK_AND_ASSIGN(const Analysed plain,
                            AnalyseProgram(CheckSpec(spec)));
    const double weights = plain.iteration.figures.block_dp_size;
    ASSERT_GT(weights, 0);
    EXPECT_EQ(plain.iteration.figures.block_dp_grad_size, weights);
    training.options.grad_reduce_datatype = DataType::kBFloat16;
    BP_ASSERT_OK_AND_ASSIGN(const Analysed bf16,
                            AnalyseProgram(CheckSpec(spec), fp32_grads));
    EXPECT_EQ(bf16.iteration.figures.block_dp_grad_size, weights);
    BP_EXPECT_DOUBLE_EXACT(bf16.iteration.figures.total_time,
                           plain.iteration.figures.total_time);
    training.options.grad_reduce_datatype = DataType::kFloat32;
    BP_ASSERT_OK_AND_ASSIGN(const Analysed fp32,
                            AnalyseProgram(CheckSpec(spec)));
    BP_EXPECT_DOUBLE_EXACT(fp32.iteration.figures.block_dp_grad_size,
                           2 * weights);
    EXPECT_GT(fp32.iteration.figures.block_dp_time,
              plain.iteration.figures.block_dp_time);
  }
}

// The gradients are reduced in their own datatype, not the weights': with
// FP8 weights (Megatron-LM's --fp8-param-gather) and --grad-reduce-in-bf16
// the reduction moves two bytes per element, the weights' all-gather one.
TEST(AnalyzeIteration, GradReduceDatatypeIsNotTheWeights) {
  TestMapping mapping;
  mapping.d = 4;
  mapping.optimizer_sharding = true;
  MappingSpec spec = TestSpec(mapping);
  auto& training = std::get<TransformerTrainingMappingSpec>(spec);
  training.options.datatype = DataType::kBFloat16;
  training.options.precision = PrecisionAccounting::kMegatronMixed;
  training.options.gemm_datatype = DataType::kFloat8;
  training.options.weight_datatype = DataType::kFloat8;
  for (DataType d : {DataType::kBFloat16, DataType::kFloat8}) {
    for (auto* engine : {&training.system.matrix, &training.system.vector}) {
      engine->rates[d] = engine->rates[DataType::kFloat16];
    }
  }
  training.options.grad_reduce_datatype = DataType::kBFloat16;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed bf16, AnalyseProgram(CheckSpec(spec)));
  const IterationFigures& f = bf16.iteration.figures;
  ASSERT_GT(f.block_dp_size, 0);
  BP_EXPECT_DOUBLE_EXACT(f.block_dp_grad_size, 2 * f.block_dp_size);
  BP_EXPECT_DOUBLE_EXACT(
      f.block_dp_grad_size,
      bf16.plan.block.block_weight_grad_space_no_sharding / 2);
}

// The search bounds a block from the figures it keeps beside the block's
// tiers (BoundFiguresOf): the same bound, bit for bit, on every kind of
// shape (analytic with and without interleaving and a bubble reduction,
// simulated, and DualPipe's overlapped F&B), for a block whose every
// figure is distinct, so that a figure BoundFiguresOf drops changes it.
TEST(StepTimeLowerBound, BoundFiguresGiveTheBlocksBound) {
  BlockFigures block;
  double value = 0;
#define BP_SET_FIGURE(name, ...) block.name = (value += 1.25) * 1e-3;
  BP_BLOCK_FIGURES(BP_SET_FIGURE)
#undef BP_SET_FIGURE
  const BoundFigures bound = BoundFiguresOf(block);
  const struct {
    int64_t p, v, m, bpp, reduction, stages_per_rank;
    std::optional<ScheduleKind> schedule;
  } shapes[] = {{1, 1, 4, 8, 0, 1, std::nullopt},
                {4, 2, 6, 4, 0, 1, std::nullopt},
                {8, 1, 3, 3, 1, 1, std::nullopt},
                {8, 2, 16, 4, 1, 1, std::nullopt},
                {4, 1, 8, 2, 0, 1, ScheduleKind::kZbH1},
                {4, 1, 8, 2, 0, 1, ScheduleKind::kGPipe},
                {4, 2, 8, 2, 0, 1, ScheduleKind::kZbV},
                {4, 1, 8, 2, 0, 2, ScheduleKind::kDualPipe},
                {4, 2, 8, 2, 0, 1, ScheduleKind::kDualPipeV}};
  for (const auto& shape : shapes) {
    StepShape s;
    s.p = shape.p;
    s.v = shape.v;
    s.m = shape.m;
    s.blocks_per_stage = shape.bpp;
    s.blocks_per_chunk = shape.bpp / shape.v;
    s.bubble_reduction_blocks = shape.reduction;
    s.stages_per_rank = shape.stages_per_rank;
    s.simulated_schedule = shape.schedule;
    const double want = StepTimeLowerBound(block, s);
    EXPECT_GT(want, 0);
    EXPECT_EQ(StepTimeLowerBound(bound, s), want)
        << "p=" << s.p << " v=" << s.v << " m=" << s.m << " schedule="
        << (shape.schedule ? std::string(ScheduleKindName(*shape.schedule))
                           : std::string("analytic"));
  }
}

}  // namespace
}  // namespace blueprint
