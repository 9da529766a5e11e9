// One MoE block's figures (moe_block_*, AnalyzeIteration): each part's
// forward and backward time is its tagged tasks' plan times, the parts and
// the block's other tasks make up the block's critical paths, the
// exchanges' times agree with the per-step expert figures, and a model
// without experts has them all 0. Both profiles: the calculon profile has
// no permutation or router-kernel tasks, the refined profile has both.
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/analysis/analyze.h"
#include "core/analysis/analyze_test_util.h"
#include "core/plan/hardware.h"
#include "core/spec/check.h"
#include "core/taskir/task_ir.h"
#include "core/testing/doubles.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using analyze_test::Analysed;
using analyze_test::AnalyseProgram;
using test_programs::TestMapping;
using test_programs::TestSpec;

// The test mapping's tiny model (h 64, 8 blocks) at t = 2, d = 4 with 8
// routed experts of 128, 2 per token, 64 of shared experts, on ep = 4;
// every block MoE unless `pattern` says which.
MappingSpec MoeSpec(ModelProfile profile, const std::string& pattern = "",
                    int64_t p = 1) {
  TestMapping m;
  m.t = 2;
  m.d = 4;
  m.p = p;
  m.global_batch = 16;
  MappingSpec spec = TestSpec(m);
  auto& training = std::get<TransformerTrainingMappingSpec>(spec);
  MixtureOfExperts moe;
  moe.experts = 8;
  moe.topk = 2;
  moe.ffn = 128;
  moe.shared_ffn = 64;
  moe.layer_pattern = pattern;
  training.model.moe = moe;
  training.parallelism.expert.degree = 4;
  training.parallelism.expert.tensor_degree = 1;
  training.parallelism.expert.network_tier = 1;
  training.options.profile = profile;
  return spec;
}

double RankFigure(const Analysed& a, const std::string& name) {
  double value = 0;
  EXPECT_TRUE(FindIterationFigure(a.iteration, name, &value)) << name;
  return value;
}

// A part's forward or backward time as the report gives it: a compute
// part's time, or an exchange's exposed time.
double PartTime(const Analysed& a, MoePart part, const char* pass) {
  const std::string name = absl::StrCat("moe_block_", MoePartName(part));
  const bool exchange = part == MoePart::kDispatch || part == MoePart::kCombine;
  return RankFigure(
      a, absl::StrCat(name, "_", pass, exchange ? "_exposed_time" : "_time"));
}

constexpr MoePart kParts[] = {MoePart::kRouter,   MoePart::kPermutation,
                              MoePart::kDispatch, MoePart::kExperts,
                              MoePart::kCombine,  MoePart::kSharedExperts};

// The name every task of a part starts with.
const char* PrefixOf(MoePart part) {
  switch (part) {
    case MoePart::kRouter:
      return "MoeBlock_Router";
    case MoePart::kPermutation:
      return "MoeBlock_";  // and "ermute" below
    case MoePart::kDispatch:
      return "MoeBlock_Dispatch";
    case MoePart::kExperts:
      return "MoeBlock_Experts";
    case MoePart::kCombine:
      return "MoeBlock_Combine";
    case MoePart::kSharedExperts:
      return "MoeBlock_Shared_";
    case MoePart::kNone:
      return "";
  }
  return "";
}

// The parts and the block's other tasks (attention, the residual branches)
// add up to the block's forward critical path and to its backward one less
// recomputation; each part is the sum of its tasks' plan times.
TEST(MoeBlockFigures, PartsAndTheOtherTasksMakeTheBlock) {
  for (ModelProfile profile :
       {ModelProfile::kCalculon, ModelProfile::kRefined}) {
    SCOPED_TRACE(profile == ModelProfile::kCalculon ? "calculon" : "refined");
    BP_ASSERT_OK_AND_ASSIGN(const Analysed a,
                            AnalyseProgram(CheckSpec(MoeSpec(profile))));
    double parts_fw = 0, parts_bw = 0;
    for (MoePart part : kParts) {
      parts_fw += PartTime(a, part, "fw");
      parts_bw += PartTime(a, part, "bw");
    }
    double others_fw = 0, others_bw = 0;
    double experts_fw = 0, experts_bw = 0;
    std::vector<std::string> permutations;
    for (const Task& task : a.tasks.tasks) {
      if (task.placement != Placement::kEveryBlock) continue;
      const TaskPlan& t = a.plan.tasks[static_cast<size_t>(task.id)];
      const double fw = t.processing_time[kFw] + t.exposed_time[kFwPhase][0];
      const double bw = t.processing_time[kAgrad] + t.processing_time[kWgrad] +
                        t.exposed_time[kBwPhase][0];
      // Each tag where its task is: the part's names, and every MoE task
      // but the residual branch's tagged.
      EXPECT_TRUE(absl::StartsWith(task.name, PrefixOf(task.moe_part)))
          << task.name << " in " << MoePartName(task.moe_part);
      if (task.moe_part == MoePart::kNone) {
        EXPECT_TRUE(!absl::StartsWith(task.name, "MoeBlock_") ||
                    absl::EndsWith(task.name, "_Fork") ||
                    absl::EndsWith(task.name, "_LayerNorm") ||
                    absl::EndsWith(task.name, "_DropOut") ||
                    absl::EndsWith(task.name, "_Residual"))
            << task.name;
        others_fw += fw;
        others_bw += bw;
      }
      if (task.moe_part == MoePart::kPermutation) {
        EXPECT_TRUE(absl::StrContains(task.name, "ermute")) << task.name;
        permutations.push_back(task.name);
      }
      if (absl::StartsWith(task.name, "MoeBlock_Experts")) {
        experts_fw += t.processing_time[kFw];
        experts_bw += t.processing_time[kAgrad] + t.processing_time[kWgrad];
      }
    }
    const PortablePlanIR& plan = a.plan;
    BP_EXPECT_NEAR(parts_fw + others_fw, plan.critical_path[0].forward,
                   1e-12 * plan.critical_path[0].forward);
    const double backward = plan.critical_path[0].backward -
                            plan.block.block_re_time -
                            plan.block.baseblock_recomm_time_exposed;
    BP_EXPECT_NEAR(parts_bw + others_bw, backward, 1e-12 * backward);
    BP_EXPECT_NEAR(RankFigure(a, "moe_block_experts_fw_time"), experts_fw,
                   1e-12 * experts_fw);
    BP_EXPECT_NEAR(RankFigure(a, "moe_block_experts_bw_time"), experts_bw,
                   1e-12 * experts_bw);
    // Every part has work here but the permutations, which the calculon
    // profile has no tasks for.
    for (MoePart part : kParts) {
      const bool none =
          part == MoePart::kPermutation && profile == ModelProfile::kCalculon;
      EXPECT_EQ(PartTime(a, part, "fw") > 0, !none) << MoePartName(part);
      EXPECT_EQ(PartTime(a, part, "bw") > 0, !none) << MoePartName(part);
    }
    EXPECT_EQ(permutations.size(),
              profile == ModelProfile::kCalculon ? 0u : 4u);
    BP_EXPECT_DOUBLE_EXACT(RankFigure(a, "moe_blocks_per_stage"), 8);
  }
}

// The exchanges' network and exposed times per block and microbatch, over
// the stage's blocks and microbatches, are the step's expert figures; the
// shared experts beside the exchanges hide some of them.
TEST(MoeBlockFigures, ExchangesMakeTheStepsExpertFigures) {
  for (bool shared_overlap : {false, true}) {
    MappingSpec spec = MoeSpec(ModelProfile::kRefined);
    std::get<TransformerTrainingMappingSpec>(spec)
        .parallelism.expert.shared_expert_overlap = shared_overlap;
    BP_ASSERT_OK_AND_ASSIGN(const Analysed a, AnalyseProgram(CheckSpec(spec)));
    double net = 0, exposed = 0;
    for (const char* exchange : {"dispatch", "combine"}) {
      for (const char* pass : {"fw", "bw"}) {
        const std::string name =
            absl::StrCat("moe_block_", exchange, "_", pass);
        const double n = RankFigure(a, name + "_net_time");
        const double e = RankFigure(a, name + "_exposed_time");
        EXPECT_GT(n, 0) << name;
        EXPECT_LE(e, n) << name;
        net += n;
        exposed += e;
      }
    }
    const double runs = static_cast<double>(a.program.derived.blocks_per_stage *
                                            a.program.derived.microbatches);
    const double step_exposed = RankFigure(a, "ep_all_to_all_exposed_time");
    const double step_hidden = RankFigure(a, "ep_all_to_all_hidden_time");
    BP_EXPECT_NEAR(runs * exposed, step_exposed, 1e-12 * step_exposed);
    BP_EXPECT_NEAR(runs * (net - exposed), step_hidden,
                   1e-12 * (step_hidden + step_exposed));
    EXPECT_EQ(step_hidden > 0, shared_overlap);
  }
}

// Megatron-LM's allgather dispatcher: the dispatch all-gathers the rank's
// b * s / t tokens of the etp x ep ranks (the gathered tensor on the
// expert tier), the combine reduce-scatters it, the backward pass the other
// way round; the experts' unpermutation writes every gathered row.
TEST(MoeBlockFigures, AllGatherDispatcherGathersTheExpertTensorRanksTokens) {
  MappingSpec spec = MoeSpec(ModelProfile::kRefined);
  auto& training = std::get<TransformerTrainingMappingSpec>(spec);
  training.parallelism.expert.dispatcher = ExpertDispatcher::kAllGather;
  training.parallelism.expert.tensor_degree = 2;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, AnalyseProgram(CheckSpec(spec)));
  // TestMapping: microbatch 1, sequence 32, hidden 64, 2-byte activations;
  // t = 2, etp x ep = 8.
  const double gathered_rows = 1.0 * 32 / 2 * 8;
  const double gathered_bytes = gathered_rows * 64 * 2;
  int exchanges = 0, unpermutations = 0;
  for (const Task& task : a.tasks.tasks) {
    const bool dispatch = task.name == "MoeBlock_Dispatch";
    if (dispatch || task.name == "MoeBlock_Combine") {
      ++exchanges;
      const Collective& fw = task.collectives[0][0];
      const Collective& bw = task.collectives[1][0];
      EXPECT_EQ(fw.op, dispatch ? CollectiveOp::kAllGather
                                : CollectiveOp::kReduceScatter);
      EXPECT_EQ(bw.op, dispatch ? CollectiveOp::kReduceScatter
                                : CollectiveOp::kAllGather);
      EXPECT_EQ(fw.peers, 8);
      EXPECT_EQ(fw.bytes, gathered_bytes);
      EXPECT_EQ(bw.bytes, gathered_bytes);
    }
    if (task.name == "MoeBlock_UnpermuteExperts") {
      ++unpermutations;
      const auto* rows = std::get_if<PermutationTask>(&task.kind);
      ASSERT_NE(rows, nullptr);
      EXPECT_EQ(rows->written, static_cast<int64_t>(gathered_rows));
    }
    EXPECT_NE(task.name, "MoeBlock_PermuteTokens");
  }
  EXPECT_EQ(exchanges, 2);
  EXPECT_EQ(unpermutations, 1);
  // The exchange on the expert tier, at its collective rates.
  const NetworkTier& tier = training.system.networks[1];
  BP_EXPECT_NEAR(RankFigure(a, "moe_block_dispatch_fw_net_time"),
                 CollectiveTime(tier, CollectiveOp::kAllGather, gathered_bytes,
                                8),
                 1e-12);
}

// A stage of dense and MoE blocks: the figures are one MoE block's, not
// weighed by the MoE blocks' share of the stage as the block figures are.
TEST(MoeBlockFigures, OneMoeBlockOfAMixedStage) {
  BP_ASSERT_OK_AND_ASSIGN(
      const Analysed a,
      AnalyseProgram(CheckSpec(MoeSpec(ModelProfile::kRefined, "10101010",
                                       /*p=*/2))));
  BP_EXPECT_DOUBLE_EXACT(RankFigure(a, "moe_blocks_per_stage"), 2);
  double experts_fw = 0;
  for (const Task& task : a.tasks.tasks) {
    if (task.moe_part != MoePart::kExperts ||
        task.placement != Placement::kEveryBlock) {
      continue;
    }
    EXPECT_EQ(task.share, 0.5) << task.name;
    experts_fw +=
        a.plan.tasks[static_cast<size_t>(task.id)].processing_time[kFw];
  }
  EXPECT_GT(experts_fw, 0);
  BP_EXPECT_NEAR(RankFigure(a, "moe_block_experts_fw_time"), experts_fw,
                 1e-12 * experts_fw);
}

// Without experts every MoE figure is 0, each with its sources.
TEST(MoeBlockFigures, ZeroWithoutExperts) {
  TestMapping m;
  m.t = 2;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a,
                          AnalyseProgram(CheckSpec(TestSpec(m))));
  int figures = 0;
  for (const NamedFigure& f : a.iteration.rank_figures) {
    if (!absl::StartsWith(f.name, "moe_block")) continue;
    ++figures;
    BP_EXPECT_DOUBLE_EXACT(f.value, 0);
  }
  EXPECT_EQ(figures, 17);
  for (const FigureLineage& f : a.iteration.lineage) {
    if (!absl::StartsWith(f.figure, "moe_block")) continue;
    EXPECT_FALSE(f.lineage.sources.empty()) << f.figure;
    EXPECT_TRUE(absl::StrContains(f.formula, "0 without experts")) << f.figure;
  }
}

}  // namespace
}  // namespace blueprint
