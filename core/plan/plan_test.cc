#include "core/plan/plan.h"

#include <algorithm>
#include <string>

#include "core/plan/hardware.h"
#include "core/taskir/lower.h"
#include "core/testing/doubles.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using test_programs::A100System;
using test_programs::TestMapping;
using test_programs::TestProgram;

TEST(Hardware, EfficiencyLookupTakesFirstRowAtOrBelowTheSize) {
  const std::vector<EfficiencyRow> table = {{128, 0.95}, {16, 0.9}, {1, 0.6},
                                            {0, 0.1}};
  EXPECT_EQ(EfficiencyRowIndex(table, 200e9, 1e9), 0);
  EXPECT_EQ(EfficiencyRowIndex(table, 128e9, 1e9), 0);
  EXPECT_EQ(EfficiencyRowIndex(table, 127e9, 1e9), 1);
  EXPECT_EQ(EfficiencyRowIndex(table, 0.5e9, 1e9), 3);
  EXPECT_EQ(EfficiencyRowIndex(table, 0, 1e9), 3);
  const System s = A100System();
  BP_EXPECT_DOUBLE_EQ(
      RateThroughput(EngineRate(s.matrix, DataType::kFloat16), 200e9),
      312e12 * 0.95);
  EXPECT_EQ(EngineRate(s.matrix, DataType::kFloat8), nullptr);
  BP_EXPECT_DOUBLE_EQ(MemoryTime(s.mem1, 50e6), 50e6 / (2048e9 * 0.75));
}

// Correction kAchievableMatmulRate: a GEMM runs at the table's rate or the
// measured achievable rate, whichever is lower; no bound (0) is the table's.
TEST(Hardware, GemmTimeIsBoundedByTheAchievableRate) {
  System s = A100System();
  ProcessorRate& rate = s.matrix.rates.at(DataType::kFloat16);
  rate.achievable_tflops = 271.2;  // A100 BF16 MAMF (anchors.csv)
  const double achievable = AchievableThroughput(&rate);
  BP_EXPECT_DOUBLE_EQ(achievable, 271.2e12);
  // Large: the table's 0.95 of 312 is above 271.2, the bound rules.
  BP_EXPECT_DOUBLE_EQ(GemmTime(&rate, achievable, 200e9), 200e9 / 271.2e12);
  // Small (0.6 of 312 = 187.2): the table rules.
  BP_EXPECT_DOUBLE_EQ(GemmTime(&rate, achievable, 2e9), 2e9 / (312e12 * 0.6));
  BP_EXPECT_DOUBLE_EQ(GemmTime(&rate, 0, 200e9), 200e9 / (312e12 * 0.95));
  rate.achievable_tflops.reset();
  EXPECT_EQ(AchievableThroughput(&rate), 0);
  EXPECT_EQ(AchievableThroughput(nullptr), 0);
}

TEST(PlanPortable, AchievableMatmulRateBoundsGemmsOnlyWhenOn) {
  absl::StatusOr<TypedProgram> program = TestProgram(TestMapping{});
  ASSERT_THAT(program, IsOk());
  auto& spec = std::get<TransformerTrainingMappingSpec>(program->spec);
  // Below the table's lowest row (0.1 of peak): the bound rules any GEMM.
  const double bound =
      spec.system.matrix.rates.at(DataType::kFloat16).tflops * 0.01;
  spec.system.matrix.rates[DataType::kFloat16].achievable_tflops = bound;
  absl::StatusOr<DistributedTaskIR> ir =
      LowerTensorParallelBlock().Run(*program);
  ASSERT_THAT(ir, IsOk());
  int query = -1;
  for (const Task& task : ir->tasks) {
    if (task.name == "AttnBlock_Query") query = task.id;
  }
  ASSERT_GE(query, 0);
  const double flops = ir->tasks[static_cast<size_t>(query)].work[0].flops;
  ASSERT_GT(flops, 0);
  absl::StatusOr<PortablePlanIR> off = PlanPortable().Run(*ir, *program);
  ASSERT_THAT(off, IsOk());
  program->corrections.Set(Correction::kAchievableMatmulRate, true);
  absl::StatusOr<PortablePlanIR> on = PlanPortable().Run(*ir, *program);
  ASSERT_THAT(on, IsOk());
  const auto fw = [&](const PortablePlanIR& plan) {
    return plan.tasks[static_cast<size_t>(query)].flop_time[0];
  };
  BP_EXPECT_DOUBLE_EQ(
      fw(*off),
      FlopTime(spec.system.matrix, DataType::kFloat16, flops));
  BP_EXPECT_DOUBLE_EQ(fw(*on), flops / (bound * 1e12));
}

// MODEL.md §4.1: A100 NVLink all-reduce is 10us + 2S(n-1)/n / 195e9, IB any
// op is 20us + S/22.5e9.
TEST(Hardware, CollectiveTimes) {
  const System s = A100System();
  const double bytes = 100663296;
  BP_EXPECT_NEAR(
      CollectiveTime(s.networks[0], CollectiveOp::kAllReduce, bytes, 8),
      1e-5 + 2 * bytes * 7 / 8 / 195e9, 1e-15);
  BP_EXPECT_NEAR(
      CollectiveTime(s.networks[0], CollectiveOp::kReduceScatter, bytes, 8),
      1e-5 + 1.5 * bytes * 7 / 8 / 195e9, 1e-15);
  BP_EXPECT_NEAR(
      CollectiveTime(s.networks[1], CollectiveOp::kPointToPoint, bytes, 2),
      2e-5 + bytes / 22.5e9, 1e-15);
  // A 0-byte p2p still pays the latency (MODEL.md §6.4).
  BP_EXPECT_DOUBLE_EQ(
      CollectiveTime(s.networks[1], CollectiveOp::kPointToPoint, 0, 2), 2e-5);
}

// Correction hierarchical_all_to_all: the share of the local peers moves
// on the faster tier, the rest on the slower, at once; with one local peer
// it is the plain all-to-all, bit for bit.
TEST(Hardware, HierarchicalAllToAll) {
  const System s = A100System();
  const double bytes = 15e6;  // 1e6 for each of 15 peers
  const NetworkTier& ib = s.networks[1];
  const NetworkTier& nvlink = s.networks[0];
  EXPECT_EQ(HierarchicalAllToAllTime(ib, nvlink, bytes, 16, 1),
            CollectiveTime(ib, CollectiveOp::kAllToAll, bytes, 16));
  BP_EXPECT_DOUBLE_EXACT(
      HierarchicalAllToAllTime(ib, nvlink, bytes, 16, 8),
      CollectiveTime(ib, CollectiveOp::kAllToAll, 8e6, 16));
  // All peers local: the faster tier alone.
  BP_EXPECT_DOUBLE_EXACT(
      HierarchicalAllToAllTime(ib, nvlink, bytes, 16, 16),
      CollectiveTime(nvlink, CollectiveOp::kAllToAll, bytes, 16));
  // Expert peers on the tier below: N / etp of them, at most ep; none when
  // the all-to-all runs on tier 0.
  EXPECT_EQ(ExpertLocalPeers(s, 1, 16, 1), 8);
  EXPECT_EQ(ExpertLocalPeers(s, 1, 16, 2), 4);
  EXPECT_EQ(ExpertLocalPeers(s, 1, 4, 1), 4);
  EXPECT_EQ(ExpertLocalPeers(s, 1, 16, 16), 1);
  EXPECT_EQ(ExpertLocalPeers(s, 0, 8, 1), 1);
}

// Correction node_deduplicated_dispatch: 16 ranks on two nodes of 8, 128
// experts, top 8. The plain all-to-all sends 8 copies of a token, half of
// them to the other node; the deduplicated one sends it there once unless
// none of its experts is there, C(64, 8) / C(128, 8), and forwards 7/8 of
// its 8 copies on the faster tier.
TEST(Hardware, DeduplicatedAllToAll) {
  const System s = A100System();
  const NetworkTier& ib = s.networks[1];
  const NetworkTier& nvlink = s.networks[0];
  const double token = 1e6;
  const double bytes = token * 8 * 15 / 16;  // what leaves the rank
  double miss = 1;
  for (int j = 0; j < 8; ++j) miss *= (64.0 - j) / (128.0 - j);
  const double remote = token * (1 - miss);
  const double near = token * 8 * 7 / 8;
  const double want =
      std::max(CollectiveTime(ib, CollectiveOp::kAllToAll, remote, 2),
               CollectiveTime(nvlink, CollectiveOp::kAllToAll, near, 8));
  BP_EXPECT_DOUBLE_EQ(
      DeduplicatedAllToAllTime(ib, nvlink, bytes, 16, 8, 8, 128, false), want);
  EXPECT_LT(want, HierarchicalAllToAllTime(ib, nvlink, bytes, 16, 8));
  // One node, or no local peers: the hierarchical all-to-all, bit for bit.
  EXPECT_EQ(DeduplicatedAllToAllTime(ib, nvlink, bytes, 16, 16, 8, 128, false),
            HierarchicalAllToAllTime(ib, nvlink, bytes, 16, 16));
  EXPECT_EQ(DeduplicatedAllToAllTime(ib, nvlink, bytes, 16, 1, 8, 128, false),
            HierarchicalAllToAllTime(ib, nvlink, bytes, 16, 1));
}

// Correction rank_deduplicated_dispatch: a token goes to each of the 16
// ranks that holds one of its experts once, 8 of 128 experts on each:
// 16 (1 - C(120, 8) / C(128, 8)) copies instead of 8, on the faster tier
// and, within one node, on the only one.
TEST(Hardware, RankDeduplicatedAllToAll) {
  const System s = A100System();
  const NetworkTier& ib = s.networks[1];
  const NetworkTier& nvlink = s.networks[0];
  const double token = 1e6;
  const double bytes = token * 8 * 15 / 16;
  double rank_miss = 1;
  for (int j = 0; j < 8; ++j) rank_miss *= (120.0 - j) / (128.0 - j);
  const double copies = 16 * (1 - rank_miss);
  EXPECT_LT(copies, 8);
  double node_miss = 1;
  for (int j = 0; j < 8; ++j) node_miss *= (64.0 - j) / (128.0 - j);
  const double want = std::max(
      CollectiveTime(ib, CollectiveOp::kAllToAll, token * (1 - node_miss), 2),
      CollectiveTime(nvlink, CollectiveOp::kAllToAll, token * copies * 7 / 8,
                     8));
  BP_EXPECT_DOUBLE_EQ(
      DeduplicatedAllToAllTime(ib, nvlink, bytes, 16, 8, 8, 128, true), want);
  // One node of 16: the all-to-all of the deduplicated copies.
  BP_EXPECT_DOUBLE_EQ(
      DeduplicatedAllToAllTime(ib, nvlink, bytes, 16, 16, 8, 128, true),
      HierarchicalAllToAllTime(ib, nvlink, bytes * copies / 8, 16, 16));
  // One expert per rank: every routed expert is on its own rank, nothing
  // to deduplicate.
  BP_EXPECT_DOUBLE_EQ(
      DeduplicatedAllToAllTime(ib, nvlink, bytes, 16, 16, 8, 16, true),
      HierarchicalAllToAllTime(ib, nvlink, bytes, 16, 16));
}

// A collective with a measured bus bandwidth runs at it, by group size, in
// nccl-tests' own terms; Calculon's profile drops the measurement.
TEST(Hardware, MeasuredBusBandwidth) {
  System s = A100System();
  NetworkTier& nvlink = s.networks[0];
  nvlink.all_reduce.measured_busbw = {{8, 480}, {0, 370}};
  nvlink.all_gather.measured_busbw = {{0, 370}};
  const double bytes = 1e9;
  BP_EXPECT_DOUBLE_EQ(
      CollectiveTime(nvlink, CollectiveOp::kAllReduce, bytes, 8),
      nvlink.latency_s + bytes * 2 * 7 / 8 / (480 * 1e9));
  BP_EXPECT_DOUBLE_EQ(
      CollectiveTime(nvlink, CollectiveOp::kAllReduce, bytes, 4),
      nvlink.latency_s + bytes * 2 * 3 / 4 / (370 * 1e9));
  BP_EXPECT_DOUBLE_EQ(
      CollectiveTime(nvlink, CollectiveOp::kAllGather, bytes, 8),
      nvlink.latency_s + bytes * 7 / 8 / (370 * 1e9));
  // No measurement of reduce-scatter or point-to-point: the tier's rate.
  const System plain = A100System();
  BP_EXPECT_DOUBLE_EQ(
      CollectiveTime(nvlink, CollectiveOp::kReduceScatter, bytes, 8),
      CollectiveTime(plain.networks[0], CollectiveOp::kReduceScatter, bytes, 8));
  BP_EXPECT_DOUBLE_EQ(
      CollectiveTime(nvlink, CollectiveOp::kPointToPoint, bytes, 2),
      CollectiveTime(plain.networks[0], CollectiveOp::kPointToPoint, bytes, 2));

  const System refined =
      SystemUnderCorrections(s, CorrectionsFor(ModelProfile::kRefined));
  EXPECT_EQ(refined.networks[0].all_reduce.measured_busbw.size(), 2u);
  const System calculon =
      SystemUnderCorrections(s, CorrectionsFor(ModelProfile::kCalculon));
  for (const NetworkTier& net : calculon.networks) {
    EXPECT_TRUE(net.all_reduce.measured_busbw.empty());
    EXPECT_TRUE(net.all_gather.measured_busbw.empty());
  }
  BP_EXPECT_DOUBLE_EQ(
      CollectiveTime(calculon.networks[0], CollectiveOp::kAllReduce, bytes, 8),
      CollectiveTime(plain.networks[0], CollectiveOp::kAllReduce, bytes, 8));
}

absl::StatusOr<PortablePlanIR> Plan(const TestMapping& m) {
  absl::StatusOr<TypedProgram> program = TestProgram(m);
  if (!program.ok()) return program.status();
  absl::StatusOr<DistributedTaskIR> ir =
      LowerTensorParallelBlock().Run(*program);
  if (!ir.ok()) return ir.status();
  return PlanPortable().Run(*ir, *program);
}

TEST(PlanPortable, TensorCommIsNetworkTimeNeverCompute) {
  TestMapping m;
  m.t = 8;
  BP_ASSERT_OK_AND_ASSIGN(const PortablePlanIR plan, Plan(m));
  // Task 12 is AttnBlock_G: forward all-reduce.
  const TaskPlan& g = plan.tasks[12];
  BP_EXPECT_DOUBLE_EXACT(g.processing_time[0], 0);
  EXPECT_GT(g.net_time[0][0], 1e-5);
  BP_EXPECT_DOUBLE_EXACT(g.exposed_time[0][0], g.net_time[0][0]);
  BP_EXPECT_DOUBLE_EXACT(plan.block.baseblock_fw_tp_time,
                         plan.block.baseblock_fw_tp_time_exposed);
}

TEST(PlanPortable, SingleRankHasNoTensorTraffic) {
  TestMapping m;
  BP_ASSERT_OK_AND_ASSIGN(const PortablePlanIR plan, Plan(m));
  BP_EXPECT_DOUBLE_EXACT(plan.block.baseblock_fw_tp_time, 0);
  BP_EXPECT_DOUBLE_EXACT(plan.block.edgeblock_agrad_tp_time, 0);
  BP_EXPECT_DOUBLE_EXACT(plan.block.baseblock_fw_tp_size, 0);
}

TEST(PlanPortable, EdgeBlockSplitsOnlyForEdgeReduceScatter) {
  TestMapping m;
  m.t = 8;
  m.communication = EdgeReduceScatterAllGather{};
  BP_ASSERT_OK_AND_ASSIGN(const PortablePlanIR plan, Plan(m));
  EXPECT_NE(plan.block.baseblock_fw_tp_time, plan.block.edgeblock_fw_tp_time);
  // Base blocks all-reduce the full activation twice; the edge block
  // all-gathers and reduce-scatters it.
  BP_EXPECT_DOUBLE_EXACT(plan.block.baseblock_fw_tp_size, 2 * 32.0 * 64 * 2);
  BP_EXPECT_DOUBLE_EXACT(plan.block.edgeblock_fw_tp_size, 4 * 32.0 * 64 * 2);
}

TEST(PlanPortable, FullRecomputeChecksCheckpointAndStorage) {
  TestMapping m;
  m.t = 8;
  m.recompute = RecomputePolicy::kFull;
  BP_ASSERT_OK_AND_ASSIGN(const PortablePlanIR plan, Plan(m));
  BP_EXPECT_DOUBLE_EXACT(plan.block.block_act_storage_space, 0);
  BP_EXPECT_DOUBLE_EXACT(plan.block.block_act_checkpoint_size,
                         32.0 * 64 * 2);  // b*s*h*bpe
  EXPECT_GT(plan.block.block_re_time, 0);
  // The recompute time is the forward time of the recomputed tasks only.
  EXPECT_LE(plan.block.block_re_time, plan.block.block_fw_time);
}

TEST(PlanPortable, CriticalPathsIncludeExposedTensorTime) {
  TestMapping m;
  m.t = 8;
  BP_ASSERT_OK_AND_ASSIGN(const PortablePlanIR plan, Plan(m));
  BP_EXPECT_DOUBLE_EQ(
      plan.critical_path[0].forward,
      plan.block.block_fw_time + plan.block.baseblock_fw_tp_time_exposed);
  BP_EXPECT_DOUBLE_EQ(plan.critical_path[1].backward,
                      plan.block.block_agrad_time +
                          plan.block.block_wgrad_time +
                          plan.block.edgeblock_agrad_tp_time_exposed);
  const std::string text = ToText(plan);
  EXPECT_EQ(text.substr(0, text.find('\n')), "blueprinting.portable_plan_ir/1");
  EXPECT_NE(text.find("lineage pass=PlanPortable from [task:0"),
            std::string::npos);
}

// Correction kAttentionInDatatype: with FP8 GEMMs, the attention's batched
// matmuls run at the 16-bit rate, the linears at the FP8 rate.
TEST(PlanPortable, RefinedProfileKeepsAttentionMatmulsInTheDatatype) {
  absl::StatusOr<TypedProgram> program = TestProgram(TestMapping{});
  ASSERT_THAT(program, IsOk());
  auto& spec = std::get<TransformerTrainingMappingSpec>(program->spec);
  // An FP8 engine four times as fast as the 16-bit one.
  ProcessorRate fp8 = spec.system.matrix.rates.at(DataType::kFloat16);
  fp8.tflops *= 4;
  spec.system.matrix.rates[DataType::kFloat8] = fp8;
  spec.options.gemm_datatype = DataType::kFloat8;
  absl::StatusOr<DistributedTaskIR> ir =
      LowerTensorParallelBlock().Run(*program);
  ASSERT_THAT(ir, IsOk());
  int scores = -1, query = -1;
  for (const Task& task : ir->tasks) {
    if (task.name == "AttnBlock_Multihead_Key_Query") scores = task.id;
    if (task.name == "AttnBlock_Query") query = task.id;
  }
  ASSERT_GE(scores, 0);
  ASSERT_GE(query, 0);
  absl::StatusOr<PortablePlanIR> calculon = PlanPortable().Run(*ir, *program);
  ASSERT_THAT(calculon, IsOk());
  program->corrections.Set(Correction::kAttentionInDatatype, true);
  absl::StatusOr<PortablePlanIR> refined = PlanPortable().Run(*ir, *program);
  ASSERT_THAT(refined, IsOk());
  const auto fw = [](const PortablePlanIR& plan, int id) {
    return plan.tasks[static_cast<size_t>(id)].flop_time[0];
  };
  BP_EXPECT_DOUBLE_EQ(fw(*refined, scores), 4 * fw(*calculon, scores));
  BP_EXPECT_DOUBLE_EQ(fw(*refined, query), fw(*calculon, query));
}

TEST(VerifyPlanIR, RejectsCorruption) {
  TestMapping m;
  m.t = 8;
  absl::StatusOr<TypedProgram> program = TestProgram(m);
  ASSERT_THAT(program, IsOk());
  absl::StatusOr<DistributedTaskIR> ir =
      LowerTensorParallelBlock().Run(*program);
  ASSERT_THAT(ir, IsOk());
  absl::StatusOr<PortablePlanIR> plan = PlanPortable().Run(*ir, *program);
  ASSERT_THAT(plan, IsOk());
  PortablePlanIR bad = *plan;
  bad.tasks[2].mem_time[1] = -1;
  EXPECT_NE(std::string(VerifyPlanIR(bad, *ir).message())
                .find("negative or non-finite time"),
            std::string::npos);
  bad = *plan;
  bad.tasks.pop_back();
  EXPECT_NE(std::string(VerifyPlanIR(bad, *ir).message()).find("task plans"),
            std::string::npos);
  bad = *plan;
  bad.tasks[0].lineage.sources.clear();
  EXPECT_NE(std::string(VerifyPlanIR(bad, *ir).message()).find("lineage"),
            std::string::npos);
}

}  // namespace
}  // namespace blueprint
