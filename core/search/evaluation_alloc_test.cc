// The search evaluates each mapping without allocating: its per-mapping
// steps (a block-table hit, the step shape, memory, iteration, the top-N
// insertion once full) are run here under a counting operator new.
#include <atomic>
#include <cstdlib>
#include <new>
#include <optional>

#include "core/adapters/calculon.h"
#include "core/analysis/figures.h"
#include "core/search/block_table.h"
#include "core/search/search.h"
#include "core/search/test_models.h"
#include "core/search/top_n.h"
#include "core/testing/programs.h"
#include "gtest/gtest.h"

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  std::abort();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace blueprint {
namespace {

// A mapping's memory (from `footprint`) and iteration (from `block`), and
// its offer to `top` (the i-th mapping scores 1 + i % 7); returns a
// checksum.
double Evaluate(const StagedBlock& footprint, const StagedBlock& block,
                const StepShape& step, const TrainingMapping& mapping, int i,
                TopN<TrainingMapping>& top) {
  MemoryFigures memory;
  ComputeMemory(footprint.block, footprint.extras, step, memory);
  IterationFigures iteration;
  ComputeIteration(block.block, block.extras, step, iteration);
  const double score = 1.0 + (i % 7);
  if (top.Admits(score)) top.Insert(score) = mapping;
  return memory.proc_mem_tier1_cap_req + iteration.sample_rate;
}

TEST(EvaluationAllocTest, PerMappingEvaluationDoesNotAllocate) {
  const TransformerModel model = CalculonModel("gpt3-175B", 12288, 49152, 96, 128, 96, 2048);
  const System system = test_programs::A100System();
  BlockTable table(model, system, DataType::kFloat16);
  const BlockConfig config{8,
                           2,
                           RecomputePolicy::kAttentionOnly,
                           ReduceScatterAllGather{false},
                           TensorOverlap::kRing,
                           true};
  CalculonExecution e;
  e.num_procs = 512;
  e.tensor = 8;
  e.pipeline = 8;
  e.data = 8;
  e.interleaving = 4;
  e.batch_size = 512;
  e.microbatch_size = 2;
  e.recompute = config.recompute;
  e.comm = config.comm;
  e.tp_overlap = config.tp_overlap;
  e.optimizer_sharding = true;
  e.dp_overlap = true;
  e.offload = {true, true, true};
  e.data_net = 1;
  TrainingMapping mapping = TrainingMappingOf(e, model);
  ASSERT_TRUE(table.Get(config, 0, 8).ok());  // computed: allocates
  TopN<TrainingMapping> top(4);
  for (double score : {4.0, 3.0, 2.0, 1.0}) top.Insert(score) = mapping;

  double checksum = 0;
  const long before = g_allocations.load();
  for (int i = 0; i < 1000; ++i) {
    absl::StatusOr<const StagedBlock*> block = table.Get(config, 0, 8);
    if (!block.ok()) break;
    mapping.parallelism.pipeline.network_tier = i % 2;
    mapping.parallelism.data.network_tier = (i / 2) % 2;
    mapping.parallelism.data.overlap = i % 3 != 0;
    checksum += Evaluate(**block, **block,
                         MappingStepShape(model, system, mapping), mapping, i,
                         top);
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
  EXPECT_GT(checksum, 0);
}

// The same with a MoE model on context and expert parallelism, ZeRO-3:
// the footprint, the planned block with the shard's terms, the step shape
// with the extras.
TEST(EvaluationAllocTest, MoePerMappingEvaluationDoesNotAllocate) {
  const TransformerModel model = test_models::WithExperts(
      CalculonModel("moe", 4096, 12288, 64, 128, 8, 4096), 32000,
      test_models::Experts(64, 8, 1536, 0, "01111111"), std::nullopt);
  const System system = test_programs::A100System();
  BlockTable table(model, system, DataType::kFloat16);
  BlockConfig config;
  config.tensor = 2;
  config.microbatch_size = 1;
  config.recompute = RecomputePolicy::kFull;
  config.comm = ReduceScatterAllGather{false};
  config.context = 2;
  config.expert = 8;
  config.expert_tensor = 1;
  config.pipeline = 2;
  CalculonExecution e;
  e.num_procs = 64;
  e.tensor = 2;
  e.pipeline = 2;
  e.data = 8;
  e.batch_size = 64;
  e.microbatch_size = 1;
  e.recompute = config.recompute;
  e.comm = config.comm;
  e.optimizer_sharding = true;
  e.data_net = 1;
  TrainingMapping mapping = TrainingMappingOf(e, model);
  mapping.parallelism.context.degree = 2;
  mapping.parallelism.expert.degree = 8;
  mapping.parallelism.expert.tensor_degree = 1;
  mapping.parallelism.expert.network_tier = 1;
  mapping.parallelism.data.sharding = ShardParameters{};
  const BlockShard shard =
      BlockShardOf(MappingProgram(model, system, mapping).derived);
  absl::StatusOr<BlockTable::Entry*> entry = table.Find(config);
  ASSERT_TRUE(entry.ok()) << entry.status();
  const BlockNets nets[2] = {{0, 0, 1}, {0, 1, 1}};
  for (const BlockNets& n : nets) {
    ASSERT_TRUE(table.Get(*entry, n, shard).ok());  // computed: allocates
  }
  table.Footprint(*entry, shard);  // composed on first use: allocates
  TopN<TrainingMapping> top(4);
  for (double score : {4.0, 3.0, 2.0, 1.0}) top.Insert(score) = mapping;

  double checksum = 0;
  const long before = g_allocations.load();
  for (int i = 0; i < 1000; ++i) {
    absl::StatusOr<BlockTable::Entry*> found = table.Find(config);
    if (!found.ok()) break;
    const StagedBlock* footprint = table.Footprint(*found, shard);
    absl::StatusOr<const StagedBlock*> block =
        table.Get(*found, nets[i % 2], shard);
    if (!block.ok()) break;
    mapping.parallelism.pipeline.network_tier = i % 2;
    mapping.parallelism.context.network_tier = nets[i % 2].context;
    mapping.parallelism.data.overlap = i % 3 != 0;
    checksum += Evaluate(*footprint, **block,
                         MappingStepShape(model, system, mapping), mapping, i,
                         top);
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
  EXPECT_GT(checksum, 0);
}

}  // namespace
}  // namespace blueprint
