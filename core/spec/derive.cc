#include "core/spec/derive.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <variant>
#include <utility>
#include <vector>

#include "core/base/status_macros.h"
#include "core/schedule/schedule_table.h"
#include "core/spec/spec_schedule.h"
#include "core/spec/spec_view.h"

namespace blueprint {
namespace {

using spec_internal::SpecView;

// The '1's in [begin, end): std::count, eight characters at a time (the
// strategy search derives a layer pattern's counts for every mapping).
int64_t CountOnes(const char* begin, const char* end) {
  constexpr uint64_t kOnes = 0x3131313131313131;  // '1' in every byte
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7f;
  int64_t count = 0;
  for (; end - begin >= 8; begin += 8) {
    uint64_t word;
    std::memcpy(&word, begin, sizeof(word));
    const uint64_t x = word ^ kOnes;  // a zero byte where the '1's are
    // The high bit of each byte of x that is zero (exact: no carry crosses
    // a byte).
    const uint64_t zero = ~(((x & kLow7) + kLow7) | x | kLow7);
    // Their number: the bytes of zero >> 7 (each 0 or 1) summed into the
    // top byte.
    count += static_cast<int64_t>(((zero >> 7) * 0x0101010101010101) >> 56);
  }
  return count + std::count(begin, end, '1');
}

DerivedValues Derive(const SpecView& s) {
  DerivedValues dv;
  const int64_t t = s.tensor->degree;
  const int64_t p = s.pipeline->degree;
  const int64_t d = s.data_degree;
  const int64_t nb = s.model->num_blocks;
  dv.training = s.training;
  dv.tensor = t;
  dv.pipeline = p;
  dv.data = d;
  dv.virtual_stages = VirtualStages(s.pipeline->schedule);
  const int64_t cp = s.context != nullptr ? s.context->degree : 1;
  dv.world_size = t * cp * p * d;
  dv.local_batch = s.batch->global_batch_size / d;
  SetMicrobatchSize(dv, s.batch->microbatch_size);
  dv.blocks_per_stage = BlocksPerStage(nb, p);
  dv.blocks_per_chunk = dv.blocks_per_stage / dv.virtual_stages;
  // Two stages per rank where the schedule's row says so (dualpipe).
  dv.stages_per_rank =
      ScheduleRowOf(ScheduleKindOf(s.pipeline->schedule)).stages_per_rank;
  dv.bubble_reduction_blocks = BubbleReductionBlocks(nb, p);
  dv.bytes_per_element = BytesPerElement(s.options->datatype);
  dv.recompute = s.recompute;
  dv.sequence_parallel =
      std::holds_alternative<ReduceScatterAllGather>(s.tensor->communication);
  dv.pipeline_rs_ag = SplitsActivations(s.tensor->communication);
  dv.all_gather_redo = AllGatherRedo(s.tensor->communication);
  dv.sharding = s.sharding != nullptr ? ShardingStageOf(*s.sharding)
                                      : ShardingStage::kNone;
  dv.optimizer_sharding = dv.sharding != ShardingStage::kNone;
  dv.sharding_group =
      s.sharding != nullptr ? ShardingGroupOf(*s.sharding, d) : 1;
  dv.data_overlap = s.data_overlap;
  dv.tensor_network = s.tensor->network_tier;
  dv.pipeline_network = s.pipeline->network_tier;
  dv.data_network = s.data_network_tier;
  dv.padded_vocabulary = PaddedVocabulary(s.model->vocabulary, t).value_or(0);
  dv.context = cp;
  if (s.expert != nullptr) {
    dv.expert = s.expert->degree;
    dv.expert_tensor = ExpertTensorDegree(*s.expert, t);
    dv.expert_network = s.expert->network_tier;
  } else {
    dv.expert_tensor = t;
  }
  dv.expert_data = t * cp * d / (dv.expert * dv.expert_tensor);
  if (s.context != nullptr) dv.context_network = s.context->network_tier;
  dv.moe_blocks = MoeBlocks(*s.model);
  dv.stage_moe_blocks = StageMoeBlocks(*s.model, p);
  const std::vector<int64_t>& layout = s.pipeline->stage_blocks;
  if (!layout.empty()) {
    const int64_t most = MostRankBlocks(layout, p);
    dv.blocks_per_stage = most;
    dv.blocks_per_chunk = LayoutBlocksPerChunk(most, dv.virtual_stages);
    dv.bubble_reduction_blocks =
        LayoutBubbleReduction(nb, p, dv.virtual_stages, most);
    dv.stage_moe_blocks = LayoutStageMoeBlocks(*s.model, layout, p);
  }
  return dv;
}

}  // namespace

ShardingStage ShardingStageOf(const DataSharding& sharding) {
  return std::visit(
      Overloaded{
          [](const NoSharding&) { return ShardingStage::kNone; },
          [](const ShardOptimizer&) { return ShardingStage::kOptimizer; },
          [](const ShardGradients&) { return ShardingStage::kGradients; },
          [](const ShardParameters&) { return ShardingStage::kParameters; },
      },
      sharding);
}

DataSharding DataShardingOf(ShardingStage stage) {
  switch (stage) {
    case ShardingStage::kNone:
      return NoSharding{};
    case ShardingStage::kOptimizer:
      return ShardOptimizer{};
    case ShardingStage::kGradients:
      return ShardGradients{};
    case ShardingStage::kParameters:
      return ShardParameters{};
  }
  return NoSharding{};
}

int64_t ShardingGroupOf(const DataSharding& sharding, int64_t data) {
  const int64_t group = std::visit(
      Overloaded{[](const NoSharding&) -> int64_t { return 1; },
                 [](const ShardOptimizer& s) { return s.group; },
                 [](const ShardGradients& s) { return s.group; },
                 [](const ShardParameters& s) { return s.group; }},
      sharding);
  return group == 0 ? data : group;
}

bool IsMoeBlock(const TransformerModel& model, int64_t block) {
  if (!model.moe.has_value()) return false;
  const std::string& pattern = model.moe->layer_pattern;
  if (pattern.empty()) return true;
  return block >= 0 && block < static_cast<int64_t>(pattern.size()) &&
         pattern[static_cast<size_t>(block)] == '1';
}

int64_t MoeBlocks(const TransformerModel& model) {
  if (!model.moe.has_value()) return 0;
  const std::string& pattern = model.moe->layer_pattern;
  if (pattern.empty()) return model.num_blocks;
  return CountOnes(pattern.data(), pattern.data() + pattern.size());
}

int64_t StageMoeBlocks(const TransformerModel& model, int64_t pipeline) {
  if (!model.moe.has_value() || pipeline < 1 || model.num_blocks < 1) return 0;
  const int64_t per_stage = BlocksPerStage(model.num_blocks, pipeline);
  if (model.moe->layer_pattern.empty()) return per_stage;
  // The pattern's stage-sized slices (the strategy search asks once per
  // mapping; a slice past the pattern's end counts no MoE block).
  const std::string& pattern = model.moe->layer_pattern;
  const int64_t length = std::min<int64_t>(
      model.num_blocks, static_cast<int64_t>(pattern.size()));
  int64_t most = 0;
  for (int64_t first = 0; first < length; first += per_stage) {
    const int64_t last = std::min(first + per_stage, length);
    const int64_t count =
        CountOnes(pattern.data() + first, pattern.data() + last);
    most = count > most ? count : most;
  }
  return most;
}

int64_t MostRankBlocks(const std::vector<int64_t>& stage_blocks,
                       int64_t pipeline) {
  std::vector<int64_t> rank(static_cast<size_t>(pipeline), 0);
  for (size_t k = 0; k < stage_blocks.size(); ++k) {
    rank[k % rank.size()] += stage_blocks[k];
  }
  return *std::max_element(rank.begin(), rank.end());
}

int64_t RankBlocks(const std::vector<int64_t>& stage_blocks, int64_t pipeline,
                   int64_t rank) {
  int64_t blocks = 0;
  for (size_t k = static_cast<size_t>(rank); k < stage_blocks.size();
       k += static_cast<size_t>(pipeline)) {
    blocks += stage_blocks[k];
  }
  return blocks;
}

int64_t LayoutStageMoeBlocks(const TransformerModel& model,
                             const std::vector<int64_t>& stage_blocks,
                             int64_t pipeline) {
  if (!model.moe.has_value()) return 0;
  if (model.moe->layer_pattern.empty()) {
    return MostRankBlocks(stage_blocks, pipeline);
  }
  // The pattern's slice of each entry, in model order, counted on its rank.
  const std::string& pattern = model.moe->layer_pattern;
  const int64_t length = static_cast<int64_t>(pattern.size());
  std::vector<int64_t> rank(static_cast<size_t>(pipeline), 0);
  int64_t first = 0;
  for (size_t k = 0; k < stage_blocks.size(); ++k) {
    const int64_t begin = std::min(first, length);
    const int64_t end = std::min(first + stage_blocks[k], length);
    rank[k % rank.size()] +=
        CountOnes(pattern.data() + begin, pattern.data() + end);
    first += stage_blocks[k];
  }
  return *std::max_element(rank.begin(), rank.end());
}

int64_t VirtualStages(const PipelineSchedule& schedule) {
  return std::visit(
      [](const auto& alternative) -> int64_t {
        using Schedule = std::decay_t<decltype(alternative)>;
        // A schedule without a field takes its row's v (dualpipe_v and zb_v:
        // two chunks per stage, the second on the way back up; dualpipe: two
        // stages per rank, but one chunk of each microbatch).
        constexpr int64_t kFixed =
            ScheduleRowOf(Schedule::kKind).virtual_stages.fixed;
        if constexpr (kFixed != 0) {
          return kFixed;
        } else {
          return alternative.virtual_stages;
        }
      },
      schedule);
}

namespace spec_internal {

SpecView ViewOf(const MappingSpec& spec) {
  return std::visit(
      Overloaded{[](const TransformerTrainingMappingSpec& s) {
                   SpecView view = TrainingViewOf(s.model, s.parallelism,
                                                  s.batch, s.options);
                   view.system = &s.system;
                   return view;
                 },
                 [](const TransformerInferenceMappingSpec& s) {
                   SpecView view;
                   view.training = false;
                   view.model = &s.model;
                   view.system = &s.system;
                   view.tensor = &s.parallelism.tensor;
                   view.pipeline = &s.parallelism.pipeline;
                   view.batch = &s.batch;
                   view.options = &s.options;
                   view.data_path = "parallelism.replica";
                   view.data_degree = s.parallelism.replica.degree;
                   view.data_network_tier = s.parallelism.replica.network_tier;
                   return view;
                 }},
      spec);
}

SpecView TrainingViewOf(const TransformerModel& model,
                        const TransformerTrainingParallelism& parallelism,
                        const Batch& batch, const ExecutionOptions& options) {
  SpecView view;
  view.training = true;
  view.model = &model;
  view.tensor = &parallelism.tensor;
  view.pipeline = &parallelism.pipeline;
  view.batch = &batch;
  view.options = &options;
  view.data_path = "parallelism.data";
  view.data_degree = parallelism.data.degree;
  view.data_network_tier = parallelism.data.network_tier;
  view.sharding = &parallelism.data.sharding;
  view.context = &parallelism.context;
  view.expert = &parallelism.expert;
  view.data_overlap = parallelism.data.overlap;
  view.recompute = parallelism.recompute;
  view.recompute_modules = parallelism.recompute_modules;
  return view;
}

}  // namespace spec_internal

DerivedValues DeriveTrainingValues(
    const TransformerModel& model,
    const TransformerTrainingParallelism& parallelism, const Batch& batch,
    const ExecutionOptions& options) {
  return Derive(
      spec_internal::TrainingViewOf(model, parallelism, batch, options));
}

DerivedValues DeriveValues(const MappingSpec& spec) {
  return Derive(spec_internal::ViewOf(spec));
}

TypedProgram AcceptedProgram(MappingSpec spec) {
  TypedProgram program;
  program.spec = std::move(spec);
  program.derived = DeriveValues(program.spec);
  program.corrections = CorrectionsFor(program.options().profile);
  return program;
}

}  // namespace blueprint
