#include "core/search/block_table.h"

#include <algorithm>
#include <map>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/adapters/calculon.h"
#include "core/analysis/figures.h"
#include "core/analysis/schedule.h"
#include "core/plan/plan.h"
#include "core/search/search.h"
#include "core/search/test_models.h"
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
                             int64_t tensor_net, int64_t shard,
                             PrecisionAccounting precision) {
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
  MappingSpec spec = SpecOf(e, model, system);
  std::get<TransformerTrainingMappingSpec>(spec).options.precision = precision;
  absl::StatusOr<TypedProgram> program = CheckSpec(spec);
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

// How `got` differs from `want`, figure by figure; with
// `without_collectives`, got's collective figures (baseblock_*,
// edgeblock_*) are expected to be 0 instead (BlockTable::Compute).
std::vector<std::string> Differences(const BlockFigures& got,
                                     const BlockFigures& want,
                                     bool without_collectives = false) {
  std::vector<double> want_values;
  ForEachBlockFigure(want, [&](const char*, double v) {
    want_values.push_back(v);
  });
  std::vector<std::string> out;
  size_t i = 0;
  ForEachBlockFigure(got, [&](const char* name, double v) {
    const bool collective = absl::StartsWith(name, "baseblock_") ||
                            absl::StartsWith(name, "edgeblock_");
    const double expected =
        without_collectives && collective ? 0.0 : want_values[i];
    if (v != expected) {
      out.push_back(absl::StrCat(name, ": ", v, " vs ", expected));
    }
    ++i;
  });
  return out;
}

// Analytic step shapes (1F1B, interleaved with p not dividing m, a
// bubble reduction) for StepTimeLowerBound.
std::vector<StepShape> BoundShapes() {
  std::vector<StepShape> out;
  for (const auto& [p, v, m, bpp, reduction] :
       std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>>{
           {1, 1, 4, 8, 0},
           {4, 1, 8, 2, 0},
           {4, 2, 6, 4, 0},
           {8, 1, 3, 3, 1}}) {
    StepShape s;
    s.p = p;
    s.v = v;
    s.m = m;
    s.blocks_per_stage = bpp;
    s.blocks_per_chunk = bpp / v;
    s.bubble_reduction_blocks = reduction;
    out.push_back(s);
  }
  return out;
}

// The footprint figures (those ComputeMemory reads) of `got` differ from
// `want`'s.
std::vector<std::string> FootprintDifferences(const StagedBlock& got,
                                              const StagedBlock& want) {
  std::vector<std::string> out;
  const auto compare = [&](const char* where, const BlockFigures& g,
                           const BlockFigures& w) {
    const struct {
      const char* name;
      double got, want;
    } figures[] = {
        {"block_weight_space", g.block_weight_space, w.block_weight_space},
        {"block_act_working_space", g.block_act_working_space,
         w.block_act_working_space},
        {"block_act_storage_space", g.block_act_storage_space,
         w.block_act_storage_space},
        {"block_act_checkpoint_size", g.block_act_checkpoint_size,
         w.block_act_checkpoint_size},
        {"block_weight_grad_space", g.block_weight_grad_space,
         w.block_weight_grad_space},
        {"block_weight_grad_space_no_sharding",
         g.block_weight_grad_space_no_sharding,
         w.block_weight_grad_space_no_sharding},
        {"block_act_grad_space", g.block_act_grad_space,
         w.block_act_grad_space},
        {"block_optimizer_space", g.block_optimizer_space,
         w.block_optimizer_space},
    };
    for (const auto& f : figures) {
      if (f.got != f.want) {
        out.push_back(std::string(where) + f.name + ": " +
                      std::to_string(f.got) + " vs " + std::to_string(f.want));
      }
    }
  };
  compare("", got.block, want.block);
  compare("first_stage.", got.extras.first, want.extras.first);
  compare("last_stage.", got.extras.last, want.extras.last);
  return out;
}

// How the table's figures for `config` on `nets` (`got`, and its
// Footprint, Compute and the bound figures it keeps) differ from the full
// passes' (`want`).
std::vector<std::string> TableDifferences(
    BlockTable& table, const BlockConfig& config, const BlockNets& nets,
    const BlockShard& shard, const StagedBlock& got, const StagedBlock& want) {
  std::vector<std::string> diff = Differences(got.block, want.block);
  for (const std::string& d :
       Differences(got.extras.first, want.extras.first)) {
    diff.push_back("first_stage." + d);
  }
  for (const std::string& d : Differences(got.extras.last, want.extras.last)) {
    diff.push_back("last_stage." + d);
  }
  absl::StatusOr<BlockTable::Entry*> entry = table.Find(config);
  if (!entry.ok()) {
    diff.push_back(std::string(entry.status().message()));
    return diff;
  }
  for (const std::string& d :
       FootprintDifferences(*table.Footprint(*entry, shard), want)) {
    diff.push_back("footprint " + d);
  }
  // The bound figures kept beside the block bound it as the block does.
  absl::StatusOr<BlockTable::PlannedBlock> planned =
      table.GetPlanned(*entry, nets, shard);
  if (!planned.ok()) {
    diff.push_back(std::string(planned.status().message()));
    return diff;
  }
  if (planned->staged != &got) diff.push_back("GetPlanned: another block");
  for (const StepShape& s : BoundShapes()) {
    const double kept = StepTimeLowerBound(*planned->bound, s);
    const double bound = StepTimeLowerBound(want.block, s);
    if (kept != bound) {
      diff.push_back(absl::StrCat("kept bound ", kept, " vs ", bound,
                                  " (p=", s.p, " v=", s.v, " m=", s.m, ")"));
    }
  }
  // Compute: every figure but the collectives', which are 0; so its
  // step-time bound is at most the block's, whatever the shape.
  if (const StagedBlock* compute = table.Compute(*entry, shard)) {
    for (const auto& [where, c, w] :
         {std::tuple<const char*, const BlockFigures*, const BlockFigures*>{
              "", &compute->block, &want.block},
          {"first_stage.", &compute->extras.first, &want.extras.first},
          {"last_stage.", &compute->extras.last, &want.extras.last}}) {
      for (const std::string& d : Differences(*c, *w, true)) {
        diff.push_back(absl::StrCat("compute ", where, d));
      }
    }
    const std::optional<BoundFigures> compute_bound =
        table.ComputeBound(*entry, shard);
    for (const StepShape& s : BoundShapes()) {
      const double floor = StepTimeLowerBound(compute->block, s);
      const double bound = StepTimeLowerBound(got.block, s);
      if (!compute_bound.has_value() ||
          StepTimeLowerBound(*compute_bound, s) != floor) {
        diff.push_back(absl::StrCat("kept compute bound differs (p=", s.p,
                                    " v=", s.v, " m=", s.m, ")"));
      }
      if (!(floor <= bound)) {
        diff.push_back(absl::StrCat("compute bound ", floor, " above ", bound,
                                    " (p=", s.p, " v=", s.v, " m=", s.m, ")"));
      }
    }
  }
  return diff;
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
                                  const std::vector<int64_t>& shards,
                                  PrecisionAccounting precision =
                                      PrecisionAccounting::kCalculon) {
  BlockTable table(model, system, DataType::kFloat16, precision);
  int checked = 0;
  for (int64_t shard : shards) {
    for (const BlockConfig& config : configs) {
      for (int64_t tn = 0; tn < (config.tensor > 1 ? 2 : 1); ++tn) {
        absl::StatusOr<const StagedBlock*> got = table.Get(config, tn, shard);
        ASSERT_TRUE(got.ok()) << got.status();
        const StagedBlock want =
            FullPassFigures(model, system, config, tn, shard, precision);
        BlockShard sharding;
        if (shard > 1) {
          sharding = {ShardingStage::kOptimizer, shard,
                      static_cast<double>(shard)};
        }
        const std::vector<std::string> diff = TableDifferences(
            table, config, BlockNets{tn, 0, 0}, sharding, **got, want);
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
  // Megatron-LM's mixed precision: float32 main gradients, never sharded.
  ExpectTableMatchesFullPasses(model, test_programs::A100System(),
                               AllConfigs({4}, {2}), {1, 3, 64},
                               PrecisionAccounting::kMegatronMixed);
}

//----- Context and expert parallelism, every ZeRO stage ----------------------

// A small model with routed and shared experts (a layer pattern when
// `pattern`), latent attention (when `latent`), an untied vocabulary and a
// multi-token-prediction block.
TransformerModel MoeModel(bool pattern, bool latent) {
  return test_models::WithExperts(
      TinyModel(), 1000,
      test_models::Experts(8, 2, 32, 64, pattern ? "00111101" : "", 1.25),
      latent ? std::optional(test_models::Latent(16, 16, 6, 2, 8))
             : std::nullopt,
      1);
}

// The checked program of a mapping whose block is `config`, its
// collectives on `nets`, its state sharded by `stage` over d = `data` ranks.
absl::StatusOr<TypedProgram> MappingProgram(const TransformerModel& model,
                                            const System& system,
                                            const BlockConfig& config,
                                            const BlockNets& nets,
                                            ShardingStage stage, int64_t data,
                                            PrecisionAccounting precision,
                                            ModelProfile profile =
                                                ModelProfile::kCalculon) {
  CalculonExecution e;
  e.tensor = config.tensor;
  e.pipeline = config.pipeline;
  e.data = data;
  e.num_procs = config.tensor * config.context * config.pipeline * data;
  e.tensor_net = nets.tensor;
  e.pipeline_net = 1;
  e.data_net = 1;
  e.microbatch_size = config.microbatch_size;
  e.batch_size = config.microbatch_size * data;
  e.recompute = config.recompute;
  e.comm = config.comm;
  e.tp_overlap = config.tp_overlap;
  e.fused_activation = config.fused_activation;
  e.optimizer_sharding = stage != ShardingStage::kNone;
  TrainingMapping m = TrainingMappingOf(e, model);
  m.parallelism.context.degree = config.context;
  m.parallelism.context.network_tier = nets.context;
  m.parallelism.context.exchange = config.context_exchange;
  m.parallelism.expert.degree = config.expert;
  m.parallelism.expert.tensor_degree = config.expert_tensor;
  m.parallelism.expert.network_tier = nets.expert;
  m.parallelism.data.sharding = DataShardingOf(stage);
  m.options.precision = precision;
  m.options.profile = profile;
  return CheckSpec(TrainingSpecOf(model, system, m));
}

// The figures of the full passes on MappingProgram; `shard` is the shard
// the checked program gives.
StagedBlock FullPassFigures(const TransformerModel& model,
                            const System& system, const BlockConfig& config,
                            const BlockNets& nets, ShardingStage stage,
                            int64_t data, PrecisionAccounting precision,
                            ModelProfile profile, BlockShard* shard) {
  absl::StatusOr<TypedProgram> program = MappingProgram(
      model, system, config, nets, stage, data, precision, profile);
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return {};
  *shard = BlockShardOf(program->derived);
  absl::StatusOr<DistributedTaskIR> tasks =
      LowerTensorParallelBlock().Run(*program);
  EXPECT_TRUE(tasks.ok()) << tasks.status();
  if (!tasks.ok()) return {};
  absl::StatusOr<PortablePlanIR> plan = PlanPortable().Run(*tasks, *program);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  return StagedBlock{plan->block, {plan->first_stage, plan->last_stage}};
}

// Blocks of every recompute and TP communication, with cp and ep.
std::vector<BlockConfig> MoeConfigs(int64_t t, int64_t pipeline) {
  std::vector<BlockConfig> out;
  for (const BlockConfig& base : AllConfigs({t}, {2})) {
    if (base.tp_overlap != TensorOverlap::kNone || !base.fused_activation) {
      continue;  // TP overlap is not modelled with MoE
    }
    for (const auto& [cp, exchange] :
         {std::pair<int64_t, ContextExchange>{1, ContextExchange::kRing},
          {2, ContextExchange::kRing},
          {2, ContextExchange::kAllGather}}) {
      for (const auto& [ep, etp] :
           {std::pair<int64_t, int64_t>{1, t}, {2, t}, {2, 1}, {4, 1}}) {
        BlockConfig c = base;
        c.context = cp;
        c.context_exchange = exchange;
        c.expert = ep;
        c.expert_tensor = etp;
        c.pipeline = pipeline;
        out.push_back(c);
      }
    }
  }
  return out;
}

// The table's figures for every ZeRO stage are the full passes' bit for bit.
// With `release`, each entry is released after each check, so that the next
// is made again in storage other entries used before.
void ExpectMoeTableMatchesFullPasses(
    const TransformerModel& model, const std::vector<BlockConfig>& configs,
    PrecisionAccounting precision,
    ModelProfile profile = ModelProfile::kCalculon, bool release = false) {
  const System system = test_programs::A100System();
  BlockTable table(model, system, DataType::kFloat16, precision, profile);
  // As the search does, each configuration is lowered with its other (ep,
  // etp) and K/V exchange: the first of each ep > 1 or not in full, the
  // others relowered (Relower); every one is checked below.
  std::vector<std::pair<int64_t, int64_t>> variants;
  for (const BlockConfig& config : configs) {
    const std::pair<int64_t, int64_t> variant = {config.expert,
                                                 config.expert_tensor};
    if (model.moe.has_value() &&
        std::find(variants.begin(), variants.end(), variant) ==
            variants.end()) {
      variants.push_back(variant);
    }
  }
  for (const BlockConfig& config : configs) {
    ASSERT_TRUE(table
                    .Find(config, variants,
                          {ContextExchange::kRing, ContextExchange::kAllGather})
                    .ok());
  }
  const int64_t lowered = table.blocks_lowered();
  int checked = 0;
  const struct {
    ShardingStage stage;
    int64_t data;
  } shards[] = {{ShardingStage::kNone, 4},
                {ShardingStage::kOptimizer, 4},
                {ShardingStage::kGradients, 4},
                {ShardingStage::kParameters, 4},
                {ShardingStage::kParameters, 8},
                {ShardingStage::kGradients, 8}};
  for (const auto& [stage, data] : shards) {
    for (const BlockConfig& config : configs) {
      for (const BlockNets& nets :
           {BlockNets{0, 0, 0}, BlockNets{1, 0, 1}, BlockNets{0, 1, 0}}) {
        // NVLink (tier 0, must be filled) holds t * cp.
        if (config.tensor * config.context > 8) continue;
        BlockShard shard;
        const StagedBlock want = FullPassFigures(
            model, system, config, nets, stage, data, precision, profile,
            &shard);
        absl::StatusOr<const StagedBlock*> got =
            table.Get(config, nets, shard);
        ASSERT_TRUE(got.ok()) << got.status();
        const std::vector<std::string> diff =
            TableDifferences(table, config, nets, shard, **got, want);
        EXPECT_TRUE(diff.empty())
            << "t=" << config.tensor << " cp=" << config.context
            << " exchange=" << ContextExchangeName(config.context_exchange)
            << " ep=" << config.expert << " etp=" << config.expert_tensor
            << " p=" << config.pipeline
            << " recompute=" << RecomputeName(config.recompute)
            << " comm=" << TensorCommunicationName(config.comm)
            << " redo=" << AllGatherRedo(config.comm)
            << " nets=" << nets.tensor << "/" << nets.context << "/"
            << nets.expert << " stage=" << ShardingStageName(stage)
            << " d=" << data << ": " << diff.size() << " differ, first "
            << diff.front();
        ++checked;
        if (release) {
          absl::StatusOr<BlockTable::Entry*> entry = table.Find(config);
          ASSERT_TRUE(entry.ok()) << entry.status();
          table.Release(*entry);
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
  EXPECT_GT(table.blocks_resharded(), 0);
  EXPECT_EQ(table.blocks_lowered(), lowered);  // each once, above
}

TEST(BlockTableTest, MoeBlocksOfEveryShardMatchFullPassesBitForBit) {
  const TransformerModel model = MoeModel(false, false);
  ExpectMoeTableMatchesFullPasses(model, MoeConfigs(2, 1),
                                  PrecisionAccounting::kCalculon);
  ExpectMoeTableMatchesFullPasses(model, MoeConfigs(1, 1),
                                  PrecisionAccounting::kMegatronMixed);
}

// A layer pattern: dense and MoE blocks in the priced stage's shares, which
// depend on p.
TEST(BlockTableTest, PatternedMoeBlocksMatchFullPassesBitForBit) {
  const TransformerModel model = MoeModel(true, false);
  for (int64_t p : {1, 2}) {
    ExpectMoeTableMatchesFullPasses(model, MoeConfigs(2, p),
                                    PrecisionAccounting::kMegatronMixed);
  }
}

TEST(BlockTableTest, LatentAttentionMoeBlocksMatchFullPassesBitForBit) {
  ExpectMoeTableMatchesFullPasses(MoeModel(true, true), MoeConfigs(2, 2),
                                  PrecisionAccounting::kCalculon);
}

// The refined profile's blocks (the search's --profile refined): fused and
// causal attention, the selective recomputation of the core attention, and
// the hierarchical expert all-to-all where the expert tier is InfiniBand.
TEST(BlockTableTest, RefinedProfileBlocksMatchFullPassesBitForBit) {
  ExpectMoeTableMatchesFullPasses(MoeModel(false, true), MoeConfigs(2, 1),
                                  PrecisionAccounting::kMegatronMixed,
                                  ModelProfile::kRefined);
  ExpectMoeTableMatchesFullPasses(MoeModel(true, false), MoeConfigs(1, 2),
                                  PrecisionAccounting::kCalculon,
                                  ModelProfile::kRefined);
}

// Dense blocks with context parallelism and ZeRO-2/3.
TEST(BlockTableTest, DenseContextBlocksOfEveryShardMatchFullPasses) {
  TransformerModel model = TinyModel();
  model.kv_heads = 4;
  model.mlp = MlpType::kGated;
  model.vocabulary.size = 1000;
  std::vector<BlockConfig> configs;
  for (BlockConfig c : AllConfigs({2}, {2})) {
    c.expert_tensor = 0;
    for (ContextExchange x :
         {ContextExchange::kRing, ContextExchange::kAllGather}) {
      c.context = 2;
      c.context_exchange = x;
      configs.push_back(c);
    }
  }
  ExpectMoeTableMatchesFullPasses(model, configs,
                                  PrecisionAccounting::kMegatronMixed);
}

// Correction hierarchical_all_to_all: BlockPrices::Plan, given the tier
// below the expert tier and ExpertLocalPeersOf, prices the expert
// all-to-all as PlanPortable does, bit for bit; here 4 of the 8 expert peers
// share the first tier, so both parts of the exchange count.
TEST(BlockTableTest, PricesMirrorTheHierarchicalAllToAll) {
  const TransformerModel model = MoeModel(false, false);
  System system = test_programs::A100System();
  system.networks[0].size = 4;
  system.networks[0].must_be_filled = false;
  BlockConfig config;
  config.microbatch_size = 2;
  config.expert = 8;
  config.expert_tensor = 1;
  absl::StatusOr<TypedProgram> program =
      MappingProgram(model, system, config, BlockNets{0, 0, 1},
                     ShardingStage::kNone, 8, PrecisionAccounting::kCalculon);
  ASSERT_TRUE(program.ok()) << program.status();
  program->corrections = CorrectionsFor(ModelProfile::kRefined);
  EXPECT_EQ(ExpertLocalPeersOf(*program, 1), 4);
  absl::StatusOr<DistributedTaskIR> tasks =
      LowerTensorParallelBlock().Run(*program);
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  absl::StatusOr<PortablePlanIR> plan = PlanPortable().Run(*tasks, *program);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(BlockPrices::Supports(*tasks));
  const BlockPrices prices(*tasks, system, DataType::kFloat16,
                           /*achievable_matmul=*/false);
  const StagedBlock compute =
      prices.PlanCompute(FootprintFigures(*tasks, *program));
  const StagedBlock got =
      prices.Plan(compute, system.networks[0], system.networks[1],
                  system.networks[0], system.networks[0], 4);
  const std::vector<std::string> diff = Differences(got.block, plan->block);
  EXPECT_TRUE(diff.empty()) << diff.size() << " differ, first "
                            << diff.front();
  // The whole exchange on the slower tier takes longer.
  const StagedBlock flat =
      prices.Plan(compute, system.networks[0], system.networks[1],
                  system.networks[0], system.networks[0], 1);
  EXPECT_GT(flat.block.baseblock_fw_tp_time, got.block.baseblock_fw_tp_time);
}

// Relower, from a block at other expert degrees and K/V exchange (and from
// the one before, as the table chains them), gives RunWithoutLineage's IR
// field for field; it refuses a block of another structure.
TEST(RelowerTest, IsTheFullLoweringFieldForField) {
  const System system = test_programs::A100System();
  const auto program_of = [&](const TransformerModel& model,
                              BlockConfig config, int64_t ep, int64_t etp,
                              ModelProfile profile) {
    config.expert = ep;
    config.expert_tensor = etp;
    return MappingProgram(model, system, config, BlockNets{0, 0, 0},
                          ShardingStage::kParameters, 8,
                          PrecisionAccounting::kMegatronMixed, profile);
  };
  int relowered = 0;
  for (const bool latent : {false, true}) {
    for (const bool pattern : {false, true}) {
      const TransformerModel model = MoeModel(pattern, latent);
      for (const ModelProfile profile :
           {ModelProfile::kCalculon, ModelProfile::kRefined}) {
        for (const BlockConfig& base : MoeConfigs(2, pattern ? 2 : 1)) {
          if (base.expert != 1) continue;  // MoeConfigs' (ep, etp) below
          // The exchange changes only with cp > 1.
          constexpr ContextExchange kRing = ContextExchange::kRing;
          constexpr ContextExchange kGather = ContextExchange::kAllGather;
          using Step = std::tuple<ContextExchange, int64_t, int64_t>;
          for (const std::vector<Step>& chain :
               {std::vector<Step>{{kRing, 2, 2},
                                  {kRing, 2, 1},
                                  {kGather, 2, 1},
                                  {kGather, 4, 1},
                                  {kRing, 8, 1}},
                std::vector<Step>{{kGather, 1, 2}, {kRing, 1, 1}}}) {
            DistributedTaskIR ir;
            RelowerSections sections;
            std::vector<int32_t> rebuilt;
            for (size_t i = 0; i < chain.size(); ++i) {
              const auto [exchange, ep, etp] = chain[i];
              BlockConfig config = base;
              config.context_exchange = exchange;
              absl::StatusOr<TypedProgram> program =
                  program_of(model, config, ep, etp, profile);
              ASSERT_TRUE(program.ok()) << program.status();
              program->corrections = CorrectionsFor(profile);
              absl::StatusOr<DistributedTaskIR> full =
                  LowerTensorParallelBlock().RunWithoutLineage(*program);
              ASSERT_TRUE(full.ok()) << full.status();
              if (i == 0) {
                ASSERT_TRUE(LowerTensorParallelBlock()
                                .RunWithoutLineage(*program, ir, &sections)
                                .ok());
                EXPECT_EQ(ToText(ir), ToText(*full));
                EXPECT_FALSE(sections.sections.empty());
                continue;
              }
              ASSERT_TRUE(LowerTensorParallelBlock()
                              .Relower(*program, sections, ir, rebuilt)
                              .ok());
              EXPECT_FALSE(rebuilt.empty());
              EXPECT_LT(rebuilt.size(), ir.tasks.size());
              EXPECT_EQ(ToText(ir), ToText(*full))
                  << "ep=" << ep << " etp=" << etp
                  << " exchange=" << ContextExchangeName(exchange)
                  << " latent=" << latent << " pattern=" << pattern
                  << " cp=" << base.context
                  << " recompute=" << RecomputeName(base.recompute);
              ++relowered;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(relowered, 100);

  // Not the same tasks: ep > 1 and ep = 1, another t, a MoE block whose
  // pattern differs (the task count).
  const TransformerModel model = MoeModel(false, false);
  BlockConfig config;
  config.tensor = 2;
  config.microbatch_size = 2;
  absl::StatusOr<TypedProgram> dense_experts =
      program_of(model, config, 1, 2, ModelProfile::kCalculon);
  absl::StatusOr<TypedProgram> routed =
      program_of(model, config, 2, 2, ModelProfile::kCalculon);
  BlockConfig other_t = config;
  other_t.tensor = 1;
  absl::StatusOr<TypedProgram> narrow =
      program_of(model, other_t, 4, 1, ModelProfile::kCalculon);
  absl::StatusOr<TypedProgram> recomputed = program_of(
      MoeModel(true, false), config, 4, 1, ModelProfile::kCalculon);
  ASSERT_TRUE(dense_experts.ok() && routed.ok() && narrow.ok() &&
              recomputed.ok());
  std::vector<int32_t> rebuilt;
  for (const TypedProgram* program : {&*routed, &*narrow, &*recomputed}) {
    DistributedTaskIR ir;
    RelowerSections sections;
    ASSERT_TRUE(LowerTensorParallelBlock()
                    .RunWithoutLineage(
                        program == &*routed ? *dense_experts : *routed, ir,
                        &sections)
                    .ok());
    const absl::Status status =
        LowerTensorParallelBlock().Relower(*program, sections, ir, rebuilt);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(std::string(status.message()).find("relowering"),
              std::string::npos)
        << status;
  }
}

// Released entries make their figures again, in storage other entries
// released: the same figures, and the lowering is kept.
TEST(BlockTableTest, ReleasedEntriesMakeTheSameFiguresAgain) {
  ExpectMoeTableMatchesFullPasses(MoeModel(false, true), MoeConfigs(2, 1),
                                  PrecisionAccounting::kMegatronMixed,
                                  ModelProfile::kCalculon, /*release=*/true);
}

TEST(BlockTableTest, FamiliesAreWhatAGroupFixes) {
  const TransformerModel model = MoeModel(true, false);
  const System system = test_programs::A100System();
  BlockTable table(model, system, DataType::kFloat16);
  BlockConfig config{
      2, 1, RecomputePolicy::kNone, AllReduce{}, TensorOverlap::kNone, true};
  config.context = 2;
  config.expert = 2;
  config.expert_tensor = 2;
  BlockConfig other_choice = config;
  other_choice.microbatch_size = 4;
  other_choice.recompute = RecomputePolicy::kFull;
  other_choice.comm = ReduceScatterAllGather{};
  other_choice.fused_activation = false;
  other_choice.context_exchange = ContextExchange::kAllGather;
  EXPECT_EQ(table.Family(config), table.Family(other_choice));
  BlockConfig etp_zero = config;
  etp_zero.expert_tensor = 0;  // the tensor degree
  EXPECT_EQ(table.Family(config), table.Family(etp_zero));
  BlockConfig other_ep = config;
  other_ep.expert = 4;
  BlockConfig other_etp = config;
  other_etp.expert_tensor = 1;
  BlockConfig other_cp = config;
  other_cp.context = 4;
  BlockConfig other_t = config;
  other_t.tensor = 4;
  for (const BlockConfig& other : {other_ep, other_etp, other_cp, other_t}) {
    EXPECT_FALSE(table.Family(config) == table.Family(other));
  }
  // The pattern "00111101" (8 blocks): the most loaded stage's MoE share
  // is 5/8 with p = 1, 3/4 with p = 2 and 1 with p = 4 or 8, which share
  // their blocks.
  BlockConfig p1 = config, p2 = config, p4 = config, p8 = config;
  p2.pipeline = 2;
  p4.pipeline = 4;
  p8.pipeline = 8;
  EXPECT_FALSE(table.Family(p1) == table.Family(p2));
  EXPECT_FALSE(table.Family(p2) == table.Family(p4));
  EXPECT_EQ(table.Family(p4), table.Family(p8));
}

// The memory parts the search keeps apart (MemoryState, MemoryActivations)
// as lists of their figures, block, first stage and last stage.
std::vector<double> Figures(const BlockState& s) {
  return {s.weight_space, s.weight_grad_space, s.weight_grad_space_no_sharding,
          s.optimizer_space};
}
std::vector<double> Figures(const BlockActivations& a) {
  return {a.working_space, a.storage_space, a.checkpoint_size, a.grad_space};
}
template <typename Part>
std::vector<double> Figures(const Part& part) {
  std::vector<double> out = Figures(part.block);
  for (const auto* stage : {&part.first, &part.last}) {
    const std::vector<double> more = Figures(*stage);
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

// The search rules out every choice of a group whose ZeRO stage and offload
// leave the weights, gradients and optimizer state alone over the capacity
// (StateExceedsTier1), at every microbatch size at once, and makes every
// memory verdict of a group from one state per ZeRO stage: the state
// figures (the block's and the stage extras') must depend on neither the
// microbatch size nor what else a choice picks (recomputation, TP
// communication and overlap, fused activation, K/V exchange), bit for bit,
// for every block and shard. It keeps one set of activation figures per
// block configuration and microbatch size for every ZeRO stage: they must
// not depend on the shard.
TEST(BlockTableTest, MemoryPartsAreTheSameWhereTheSearchSharesThem) {
  const System system = test_programs::A100System();
  std::vector<BlockConfig> dense;
  for (BlockConfig c : AllConfigs({1, 2}, {1})) {
    c.pipeline = 2;
    dense.push_back(c);
  }
  const struct {
    TransformerModel model;
    std::vector<BlockConfig> configs;
  } cases[] = {{MoeModel(false, true), MoeConfigs(2, 2)},
               {MoeModel(true, false), MoeConfigs(1, 2)},
               {Gpt3Model(), dense}};
  for (const auto& [model, configs] : cases) {
    for (PrecisionAccounting precision :
         {PrecisionAccounting::kCalculon, PrecisionAccounting::kMegatronMixed}) {
      BlockTable table(model, system, DataType::kFloat16, precision);
      int checked = 0;
      // The activations of each (configuration, b) with the first shard.
      std::map<std::pair<size_t, int64_t>, std::vector<double>> activations;
      for (const BlockShard& shard :
           {BlockShard{ShardingStage::kNone, 1, 1},
            BlockShard{ShardingStage::kOptimizer, 4, 2},
            BlockShard{ShardingStage::kGradients, 4, 2},
            BlockShard{ShardingStage::kParameters, 8, 4}}) {
        // The first figures of each group (t, cp, ep, etp, p).
        std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>,
                 std::vector<double>>
            firsts;
        for (size_t index = 0; index < configs.size(); ++index) {
          const BlockConfig& config = configs[index];
          const std::vector<std::pair<int64_t, int64_t>> variants = {
              {config.expert, config.expert_tensor}};
          for (int64_t b : {1, 2, 4, 16}) {
            BlockConfig sized = config;
            sized.microbatch_size = b;
            absl::StatusOr<BlockTable::Entry*> entry = table.Find(
                sized, model.moe.has_value() ? variants
                                             : decltype(variants){},
                {ContextExchange::kRing, ContextExchange::kAllGather});
            ASSERT_TRUE(entry.ok()) << entry.status();
            const StagedBlock& footprint = *table.Footprint(*entry, shard);
            const std::string where =
                absl::StrCat("b=", b, " t=", config.tensor,
                             " cp=", config.context, " ep=", config.expert,
                             " recompute=", RecomputeName(config.recompute),
                             " comm=", TensorCommunicationName(config.comm),
                             " stage=", ShardingStageName(shard.stage));
            const std::vector<double> acts =
                Figures(MemoryActivationsOf(footprint.block, footprint.extras));
            const auto [acts_first, acts_made] =
                activations.emplace(std::make_pair(index, b), acts);
            if (!acts_made) {
              EXPECT_EQ(acts, acts_first->second) << where;
            }
            const std::vector<double> state =
                Figures(MemoryStateOf(footprint.block, footprint.extras));
            const auto [first, made] = firsts.emplace(
                std::make_tuple(config.tensor, config.context, config.expert,
                                config.expert_tensor, config.pipeline),
                state);
            if (made) continue;
            EXPECT_EQ(state, first->second) << where;
            ++checked;
          }
        }
      }
      EXPECT_GT(checked, 100);
    }
  }
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
