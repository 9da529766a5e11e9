// The lowering of parallelism.recompute_modules: each module's tasks run
// again in the backward pass (flags.recompute, collectives redone where the
// module's forward has them) and keep what Megatron-LM's checkpoint keeps;
// the other tasks do not change.
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "core/spec/check.h"
#include "core/taskir/lower.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using test_programs::TestMapping;
using test_programs::TestSpec;

// The test model, t = 2, with gated MoE blocks with shared experts where
// `pattern` has a 1 ("" every block), or latent attention.
TransformerTrainingMappingSpec Spec(bool moe, bool mla,
                                    const std::string& pattern = "") {
  TestMapping m;
  m.t = 2;
  auto s = std::get<TransformerTrainingMappingSpec>(TestSpec(m));
  s.model.mlp = MlpType::kGated;
  if (moe) s.model.moe = MixtureOfExperts{8, 2, 64, 64, pattern, 1};
  if (mla) s.model.latent_attention = LatentAttention{16, 16, 6, 2, 8};
  return s;
}

absl::StatusOr<DistributedTaskIR> Lower(TransformerTrainingMappingSpec s,
                                        RecomputeModules modules) {
  s.parallelism.recompute_modules = modules;
  absl::StatusOr<TypedProgram> program = CheckSpec(s);
  if (!program.ok()) return program.status();
  return LowerTensorParallelBlock().Run(*program);
}

RecomputeModules Only(RecomputeModule m) {
  RecomputeModules out;
  out.Add(m);
  return out;
}

// The tasks whose flags differ between `before` and `after`, with what
// changed, e.g. "MlpBlock_Mlp2 recompute stored".
std::set<std::string> Changed(const DistributedTaskIR& before,
                              const DistributedTaskIR& after) {
  std::set<std::string> out;
  EXPECT_EQ(before.tasks.size(), after.tasks.size());
  for (size_t i = 0; i < before.tasks.size() && i < after.tasks.size(); ++i) {
    const TaskFlags& x = before.tasks[i].flags;
    const TaskFlags& y = after.tasks[i].flags;
    std::string what;
    if (!x.recompute && y.recompute) what += " recompute";
    if (!x.recommunicate && y.recommunicate) what += " recommunicate";
    if (x.activation_stored && !y.activation_stored) what += " activation";
    if (x.output_stored && !y.output_stored) what += " output";
    EXPECT_EQ(x.activation_reused, y.activation_reused);
    // A module only adds recomputation and drops storage.
    EXPECT_FALSE(x.recompute && !y.recompute) << before.tasks[i].name;
    EXPECT_FALSE(!x.activation_stored && y.activation_stored)
        << before.tasks[i].name;
    if (!what.empty()) out.insert(before.tasks[i].name + what);
  }
  return out;
}

struct Case {
  RecomputeModule module;
  bool moe, mla;
  std::set<std::string> changed;
};

TEST(LowerRecomputeModules, EachModuleRecomputesItsTasks) {
  const std::vector<Case> cases = {
      // transformer_layer.py: input_layernorm and pre_mlp_layernorm under
      // CheckpointWithoutOutput.
      {RecomputeModule::kLayerNorm,
       false,
       false,
       {"AttnBlock_LayerNorm recompute output",
        "MlpBlock_LayerNorm recompute output"}},
      // transformer_layer.py recompute_mlp: the MLP from its kept input.
      {RecomputeModule::kMlp,
       false,
       false,
       {"MlpBlock_F recommunicate", "MlpBlock_Mlp1 recompute",
        "MlpBlock_GatedActivation recompute activation",
        "MlpBlock_Mlp2 recompute activation", "MlpBlock_G recommunicate"}},
      // multi_latent_attention.py recompute_up_proj.
      {RecomputeModule::kMlaUpProj,
       false,
       true,
       {"AttnBlock_Query_Up recompute output",
        "AttnBlock_KV_Up recompute output"}},
      // moe/experts.py activation_recompute.
      {RecomputeModule::kMoeAct,
       true,
       false,
       {"MoeBlock_Experts_GatedActivation recompute output"}},
      // moe/moe_layer.py shared_experts_recompute.
      {RecomputeModule::kSharedExperts,
       true,
       false,
       {"MoeBlock_Shared_F recommunicate activation",
        "MoeBlock_Shared_Mlp1 recompute activation",
        "MoeBlock_Shared_GatedActivation recompute activation",
        "MoeBlock_Shared_Mlp2 recompute activation",
        "MoeBlock_Shared_G recommunicate"}},
      // moe/moe_layer.py moe_layer_recompute: the whole layer.
      {RecomputeModule::kMoe,
       true,
       false,
       {"MoeBlock_Router recompute",
        "MoeBlock_Experts_Up recompute activation",
        "MoeBlock_Experts_GatedActivation recompute activation",
        "MoeBlock_Experts_Down recompute activation",
        "MoeBlock_Shared_F recommunicate activation",
        "MoeBlock_Shared_Mlp1 recompute activation",
        "MoeBlock_Shared_GatedActivation recompute activation",
        "MoeBlock_Shared_Mlp2 recompute activation",
        "MoeBlock_Shared_G recommunicate"}},
  };
  for (const Case& c : cases) {
    const TransformerTrainingMappingSpec s = Spec(c.moe, c.mla);
    BP_ASSERT_OK_AND_ASSIGN(const DistributedTaskIR before,
                            Lower(s, RecomputeModules{}));
    BP_ASSERT_OK_AND_ASSIGN(const DistributedTaskIR after,
                            Lower(s, Only(c.module)));
    ASSERT_THAT(VerifyTaskIR(after), IsOk());
    EXPECT_EQ(Changed(before, after), c.changed)
        << RecomputeModuleName(c.module);
  }
}

// "mlp" recomputes the dense blocks of a stage that mixes dense and MoE
// blocks, not the MoE ones; "moe" the MoE ones only.
TEST(LowerRecomputeModules, MlpAndMoeSplitAMixedStage) {
  const TransformerTrainingMappingSpec s = Spec(true, false, "01010101");
  RecomputeModules both = Only(RecomputeModule::kMlp);
  both.Add(RecomputeModule::kMoe);
  BP_ASSERT_OK_AND_ASSIGN(const DistributedTaskIR ir, Lower(s, both));
  for (const Task& task : ir.tasks) {
    const bool mlp = task.name.rfind("MlpBlock_Mlp", 0) == 0;
    const bool experts = task.name.rfind("MoeBlock_Experts", 0) == 0;
    if (mlp || experts) {
      EXPECT_TRUE(task.flags.recompute) << task.name;
    }
    if (task.name.rfind("AttnBlock_", 0) == 0) {
      EXPECT_FALSE(task.flags.recompute) << task.name;
    }
  }
}

}  // namespace
}  // namespace blueprint
