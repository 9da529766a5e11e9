#include "core/search/block_table.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/plan/plan.h"
#include "core/search/search.h"
#include "core/spec/check.h"
#include "core/taskir/lower.h"
#include "core/testing/programs.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

TransformerModel Gpt3Model() {
  return CalculonModel("gpt3-175B", 12288, 49152, 96, 128, 96, 2048);
}

TransformerModel TinyModel() { return CalculonModel("tiny", 64, 256, 8, 8, 8, 32); }

// The figures of the full passes on the checked program of a mapping whose
// block is `config`, with the optimizer sharded over d = `shard` ranks.
StagedBlock FullPassFigures(const TransformerModel& model,
                             const System& system, const BlockConfig& config,
                             int64_t tensor_net, int64_t shard) {
  CalculonExecution e;
  e.tensor = config.tensor;
  e.data = shard;
  e.num_procs = config.tensor * shard;
  e.tensor_net = tensor_net;
  e.data_net = 1;
  e.microbatch_size = config.microbatch_size;
  e.batch_size = config.microbatch_size * shard;
  e.recompute = config.recompute;
  e.comm = config.comm;
  e.tp_overlap = config.tp_overlap;
  e.fused_activation = config.fused_activation;
  e.optimizer_sharding = shard > 1;
  absl::StatusOr<TypedProgram> program = CheckSpec(SpecOf(e, model, system));
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return {};
  absl::StatusOr<DistributedTaskIR> tasks =
      LowerTensorParallelBlock().Run(*program);
  EXPECT_TRUE(tasks.ok()) << tasks.status();
  absl::StatusOr<PortablePlanIR> plan = PlanPortable().Run(*tasks, *program);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  return StagedBlock{plan->block, {plan->first_stage, plan->last_stage}};
}

std::vector<std::string> Differences(const BlockFigures& got,
                                     const BlockFigures& want) {
  std::vector<double> want_values;
  ForEachBlockFigure(want, [&](const char*, double v) {
    want_values.push_back(v);
  });
  std::vector<std::string> out;
  size_t i = 0;
  ForEachBlockFigure(got, [&](const char* name, double v) {
    if (v != want_values[i]) {
      out.push_back(std::string(name) + ": " + std::to_string(v) + " vs " +
                    std::to_string(want_values[i]));
    }
    ++i;
  });
  return out;
}

std::vector<BlockConfig> AllConfigs(const std::vector<int64_t>& tensors,
                                    const std::vector<int64_t>& microbatches) {
  std::vector<BlockConfig> out;
  for (int64_t t : tensors) {
    for (int64_t b : microbatches) {
      for (RecomputePolicy r :
           {RecomputePolicy::kFull, RecomputePolicy::kAttentionOnly,
            RecomputePolicy::kNone}) {
        for (const TensorCommunication& c :
             {TensorCommunication{AllReduce{}},
              TensorCommunication{EdgeReduceScatterAllGather{}},
              TensorCommunication{ReduceScatterAllGather{}}}) {
          for (bool redo : {true, false}) {
            if (redo && (!std::holds_alternative<ReduceScatterAllGather>(c) ||
                         r == RecomputePolicy::kFull)) {
              continue;
            }
            const TensorCommunication comm =
                redo ? TensorCommunication{ReduceScatterAllGather{true}} : c;
            for (TensorOverlap o : {TensorOverlap::kNone, TensorOverlap::kRing,
                                    TensorOverlap::kPipe}) {
              if (t == 1 && o != TensorOverlap::kNone) continue;
              for (bool fused : {true, false}) {
                out.push_back({t, b, r, comm, o, fused});
              }
            }
          }
        }
      }
    }
  }
  return out;
}

// The table's figures, sharded or not, are the full passes' bit for bit.
void ExpectTableMatchesFullPasses(const TransformerModel& model,
                                  const System& system,
                                  const std::vector<BlockConfig>& configs,
                                  const std::vector<int64_t>& shards) {
  BlockTable table(model, system, DataType::kFloat16);
  int checked = 0;
  for (int64_t shard : shards) {
    for (const BlockConfig& config : configs) {
      for (int64_t tn = 0; tn < (config.tensor > 1 ? 2 : 1); ++tn) {
        absl::StatusOr<const StagedBlock*> got = table.Get(config, tn, shard);
        ASSERT_TRUE(got.ok()) << got.status();
        const StagedBlock want =
            FullPassFigures(model, system, config, tn, shard);
        std::vector<std::string> diff = Differences((*got)->block, want.block);
        for (const std::string& d :
             Differences((*got)->extras.first, want.extras.first)) {
          diff.push_back("first_stage." + d);
        }
        for (const std::string& d :
             Differences((*got)->extras.last, want.extras.last)) {
          diff.push_back("last_stage." + d);
        }
        EXPECT_TRUE(diff.empty())
            << "t=" << config.tensor << " b=" << config.microbatch_size
            << " recompute=" << RecomputeName(config.recompute)
            << " comm=" << TensorCommunicationName(config.comm)
            << " redo=" << AllGatherRedo(config.comm)
            << " overlap=" << TensorOverlapName(config.tp_overlap)
            << " fused=" << config.fused_activation << " tn=" << tn
            << " shard=" << shard << ": " << diff.front();
        ++checked;
      }
    }
  }
  // Every block is planned once per tier, whatever the shards asked for.
  int64_t planned = 0;
  for (const BlockConfig& config : configs) {
    planned += config.tensor > 1 ? 2 : 1;
  }
  EXPECT_EQ(table.blocks_planned(), planned);
  EXPECT_GT(checked, 0);
}

TEST(BlockTableTest, Gpt3BlocksMatchFullPassesBitForBit) {
  ExpectTableMatchesFullPasses(Gpt3Model(), test_programs::A100System(),
                               AllConfigs({1, 8}, {1, 3}), {1, 2, 3, 64});
}

TEST(BlockTableTest, TinyRooflineBlocksMatchFullPassesBitForBit) {
  System system = test_programs::A100System();
  system.processing_mode = ProcessingMode::kRoofline;
  ExpectTableMatchesFullPasses(TinyModel(), system, AllConfigs({2, 4}, {2}),
                               {1, 5, 1024});
}

// A model with a vocabulary: the first and last stage's figures (embedding,
// output layer) are resharded like the block's.
TEST(BlockTableTest, VocabularyStagesMatchFullPassesBitForBit) {
  TransformerModel model = TinyModel();
  model.kv_heads = 4;
  model.mlp = MlpType::kGated;
  model.norm = NormType::kRmsNorm;
  model.vocabulary.size = 1000;
  model.vocabulary.tied = false;
  ExpectTableMatchesFullPasses(model, test_programs::A100System(),
                               AllConfigs({1, 4}, {2}), {1, 3, 64});
}

TEST(BlockTableTest, ClearForgetsBlocks) {
  const TransformerModel model = TinyModel();
  const System system = test_programs::A100System();
  BlockTable table(model, system, DataType::kFloat16);
  const BlockConfig config{
      2, 1, RecomputePolicy::kNone, AllReduce{}, TensorOverlap::kNone, true};
  ASSERT_TRUE(table.Get(config, 0, 1).ok());
  ASSERT_TRUE(table.Get(config, 0, 1).ok());
  EXPECT_EQ(table.blocks_planned(), 1);
  table.Clear();
  ASSERT_TRUE(table.Get(config, 0, 4).ok());
  EXPECT_EQ(table.blocks_planned(), 2);
  EXPECT_EQ(table.blocks_resharded(), 1);
}

}  // namespace
}  // namespace blueprint
