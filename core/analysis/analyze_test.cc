#include "core/analysis/analyze.h"

#include <set>
#include <string>

#include "core/plan/plan.h"
#include "core/taskir/lower.h"
#include "core/testing/programs.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using test_programs::TestMapping;
using test_programs::TestProgram;

struct Analysed {
  TypedProgram program;
  PortablePlanIR plan;
  IterationAnalysis iteration;
  MemoryAnalysis memory;
};

Analysed Analyse(const TestMapping& m) {
  Analysed a;
  absl::StatusOr<TypedProgram> program = TestProgram(m);
  EXPECT_TRUE(program.ok()) << program.status();
  a.program = *program;
  absl::StatusOr<DistributedTaskIR> ir =
      LowerTensorParallelBlock().Run(a.program);
  EXPECT_TRUE(ir.ok()) << ir.status();
  absl::StatusOr<PortablePlanIR> plan = PlanPortable().Run(*ir, a.program);
  EXPECT_TRUE(plan.ok()) << plan.status();
  a.plan = *plan;
  absl::StatusOr<IterationAnalysis> it =
      AnalyzeIteration().Run(a.plan, a.program);
  EXPECT_TRUE(it.ok()) << it.status();
  a.iteration = *it;
  absl::StatusOr<MemoryAnalysis> mem = AnalyzeMemory().Run(a.plan, a.program);
  EXPECT_TRUE(mem.ok()) << mem.status();
  a.memory = *mem;
  return a;
}

TEST(AnalyzeIteration, SingleStageHasNoBubbleAndNoPipelineTraffic) {
  TestMapping m;
  const Analysed a = Analyse(m);
  EXPECT_EQ(a.iteration.schedule, "single_stage");
  EXPECT_EQ(a.iteration.figures.bubble_time, 0);
  EXPECT_EQ(a.iteration.figures.pp_comm_link_time, 0);
  const IterationFigures& f = a.iteration.figures;
  EXPECT_DOUBLE_EQ(f.total_time, f.fw_time + f.bw_time + f.optim_step_time);
}

// 1F1B: bubble = (p-1) * chunk time, with no extra term even when m % p != 0.
TEST(AnalyzeIteration, OneForwardOneBackwardBubble) {
  for (int64_t batch : {8, 6, 2}) {
    TestMapping m;
    m.p = 4;
    m.global_batch = batch;
    const Analysed a = Analyse(m);
    const IterationFigures& f = a.iteration.figures;
    EXPECT_EQ(a.iteration.schedule, "1f1b");
    EXPECT_DOUBLE_EQ(f.bubble_time, 3 * f.chunk_time) << "batch " << batch;
    EXPECT_EQ(f.extra_interleaving_bubbles, 0);
  }
}

// Interleaved: the chunk is bpp/v blocks; m % p != 0 adds (v-1)(p - m%p)
// whole chunks.
TEST(AnalyzeIteration, InterleavedBubbleContract) {
  TestMapping m;
  m.p = 2;
  m.v = 2;
  m.global_batch = 3;  // m = 3, m % p = 1
  const Analysed a = Analyse(m);
  const IterationFigures& f = a.iteration.figures;
  EXPECT_EQ(a.iteration.schedule, "interleaved_1f1b");
  EXPECT_EQ(a.iteration.step.blocks_per_chunk, 2);
  EXPECT_EQ(f.extra_interleaving_bubbles, 1);
  EXPECT_DOUBLE_EQ(f.bubble_time, (1 + 1) * f.chunk_time);
  m.global_batch = 4;
  const Analysed even = Analyse(m);
  EXPECT_DOUBLE_EQ(even.iteration.figures.bubble_time,
                   even.iteration.figures.chunk_time);
}

// blocks % p != 0 with an explicit uneven layout: blocks per stage rounded
// up, the bubble shortened by the missing blocks.
TEST(AnalyzeIteration, UnevenLayoutShortensTheBubble) {
  TestMapping m;
  m.p = 3;
  m.blocks = 8;  // 3 blocks on the first stages, R = 1
  const Analysed a = Analyse(m);
  const IterationFigures& f = a.iteration.figures;
  EXPECT_EQ(a.iteration.step.blocks_per_stage, 3);
  EXPECT_EQ(a.iteration.step.bubble_reduction_blocks, 1);
  EXPECT_GT(f.bubble_reduction_time, 0);
  EXPECT_DOUBLE_EQ(f.bubble_time, 2 * f.chunk_time - f.bubble_reduction_time);
}

TEST(AnalyzeIteration, ForwardOnlyInferenceHasNoBackward) {
  TestMapping m;
  m.training = false;
  m.p = 2;
  const Analysed a = Analyse(m);
  const IterationFigures& f = a.iteration.figures;
  EXPECT_EQ(a.iteration.schedule, "forward_only");
  EXPECT_EQ(f.bw_time, 0);
  EXPECT_EQ(f.optim_step_time, 0);
  EXPECT_EQ(f.dp_comm_exposed_time, 0);
  EXPECT_EQ(a.memory.figures.optimizer_space, 0);
  EXPECT_FALSE(a.memory.figures.checkpoint_min_defined);
}

TEST(AnalyzeIteration, DataParallelTrafficAndSharding) {
  TestMapping m;
  m.d = 4;
  const Analysed plain = Analyse(m);
  EXPECT_GT(plain.iteration.figures.dp_comm_link_time, 0);
  EXPECT_EQ(plain.iteration.figures.dp_comm_link_time,
            plain.iteration.figures.dp_comm_exposed_time);
  m.optimizer_sharding = true;
  const Analysed sharded = Analyse(m);
  // RS + AG on InfiniBand (scalars 1, offsets 0) cost exactly twice the
  // all-reduce (MODEL.md §4.8).
  EXPECT_NEAR(sharded.iteration.figures.block_dp_time,
              2 * plain.iteration.figures.block_dp_time, 1e-15);
  EXPECT_LT(sharded.memory.figures.optimizer_space,
            plain.memory.figures.optimizer_space);
  m.data_overlap = true;
  const Analysed overlapped = Analyse(m);
  EXPECT_EQ(overlapped.iteration.figures.dp_comm_link_time,
            sharded.iteration.figures.dp_comm_link_time);
}

TEST(AnalyzeMemory, ReportsCapacityViolationNamingTheField) {
  TestMapping m;
  m.hidden = 8192;
  m.feedforward = 32768;
  m.heads = 64;
  m.head_size = 128;
  m.blocks = 64;
  m.seq = 2048;
  const Analysed a = Analyse(m);
  ASSERT_EQ(a.memory.violations.size(), 1u);
  EXPECT_NE(a.memory.violations[0].message.find("system.mem1.GiB (80)"),
            std::string::npos)
      << a.memory.violations[0].message;
  EXPECT_EQ(a.memory.violations[0].field, "system.mem1.GiB");
  EXPECT_NE(a.memory.violations[0].message.find("proc_mem_tier1_cap_req"),
            std::string::npos);
}

// The lineage of the derived values names only values of BP_DERIVED_VALUES.
TEST(DerivedLineage, NamesDerivedValues) {
  std::set<std::string> names;
  ForEachDerivedValue(DerivedValues{}, [&](const char* name, const auto&) {
    names.insert(name);
  });
  for (const FigureLineage& f : DerivedLineage()) {
    EXPECT_EQ(names.count(f.figure), 1u) << f.figure;
  }
}

TEST(AnalyzeIteration, EveryFigureHasLineage) {
  TestMapping m;
  m.p = 2;
  const Analysed a = Analyse(m);
  int figures = 0;
  ForEachIterationFigure(a.iteration.figures, [&](const char*, double) {
    ++figures;
  });
  ForEachScheduleTerm(a.iteration.figures, [&](const char*, double) {
    ++figures;
  });
  EXPECT_EQ(static_cast<int>(a.iteration.lineage.size()), figures);
  for (const FigureLineage& f : a.iteration.lineage) {
    EXPECT_FALSE(f.lineage.sources.empty()) << f.figure;
  }
  const std::string text = ToText(a.iteration);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "blueprinting.iteration_analysis/1");
  EXPECT_NE(text.find("lineage total_time pass=AnalyzeIteration"),
            std::string::npos);
}

}  // namespace
}  // namespace blueprint
