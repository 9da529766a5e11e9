// File: derive.h
//
// The derived values of a mapping (program.h DerivedValues) and the small
// structural rules the checker and the strategy search share, each written
// once. Pure and allocation-free: the
// checker derives a TypedProgram's values with DeriveValues once it has
// accepted the spec (check.h), and the strategy search derives every mapping
// it evaluates with DeriveTrainingValues, without building a spec. Both
// assume a spec the checker accepts (degrees >= 1, batches that divide, a
// schedule that suits the pipeline degree): on another spec they may divide
// by zero.
//
// Example:
//   absl::StatusOr<TypedProgram> program = CheckSpec(spec);  // uses it
//   const DerivedValues dv = DeriveValues(spec);  // == program->derived
#ifndef BLUEPRINTING_CORE_SPEC_DERIVE_H_
#define BLUEPRINTING_CORE_SPEC_DERIVE_H_

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "core/base/checked_math.h"
#include "core/base/status_macros.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"

namespace blueprint {

// BlocksPerStage: ceil(num_blocks / pipeline) (Calculon's compile()).
inline int64_t BlocksPerStage(int64_t num_blocks, int64_t pipeline) {
  return num_blocks / pipeline + (num_blocks % pipeline != 0 ? 1 : 0);
}

// BubbleReductionBlocks: the blocks the last stages lack when num_blocks is
// not a multiple of the pipeline degree (pipeline - num_blocks % pipeline),
// by which Calculon shortens the bubble; 0 for an even layout.
inline int64_t BubbleReductionBlocks(int64_t num_blocks, int64_t pipeline) {
  const int64_t remainder = num_blocks % pipeline;
  return remainder != 0 ? pipeline - remainder : 0;
}

// An explicit stage layout (PipelineParallel::stage_blocks, p * v entries
// in model order, entry k on rank k % p), its figures on the busiest rank:
// MostRankBlocks, the most blocks one pipeline rank holds (the stage that
// paces the pipeline and needs the most memory); LayoutBlocksPerChunk, that
// rank's blocks over its v chunks, rounded up (the analyses price v equal
// chunks, so a rank's unequal chunks are priced as its mean chunk, rounded
// up: never less work than the busiest rank does); LayoutBubbleReduction,
// the blocks the other stages lack (p * most - num_blocks), by which the
// fill and drain of a 1F1B pipeline are shorter: its makespan is
// (m - 1) * slowest + the sum of all stages, so the (p - 1) chunks of the
// bubble lose them; 0 with v > 1 (the interleaved fill and drain are
// priced at the busiest rank's chunks). The layout must be one the checker
// accepts (entries >= 0 summing to num_blocks).
int64_t MostRankBlocks(const std::vector<int64_t>& stage_blocks,
                       int64_t pipeline);
// RankBlocks: the blocks pipeline rank `rank` holds (its chunks summed):
// the first rank's and the last rank's are the ones the embedding and the
// output layer ride on (the analyses price each end stage on its own
// blocks).
int64_t RankBlocks(const std::vector<int64_t>& stage_blocks, int64_t pipeline,
                   int64_t rank);
inline int64_t LayoutBlocksPerChunk(int64_t most_rank_blocks,
                                    int64_t virtual_stages) {
  return most_rank_blocks / virtual_stages +
         (most_rank_blocks % virtual_stages != 0 ? 1 : 0);
}
inline int64_t LayoutBubbleReduction(int64_t num_blocks, int64_t pipeline,
                                     int64_t virtual_stages,
                                     int64_t most_rank_blocks) {
  return virtual_stages == 1 ? pipeline * most_rank_blocks - num_blocks : 0;
}

// ShardingStageOf: the ZeRO stage of a sharding; ShardingGroupOf: the ranks
// that share one copy of the sharded state (group 0: all `data` ranks; 1
// without sharding).
ShardingStage ShardingStageOf(const DataSharding& sharding);
// DataShardingOf: the sharding of a ZeRO stage over all `data` ranks (group
// 0), ShardingStageOf's inverse.
DataSharding DataShardingOf(ShardingStage stage);
int64_t ShardingGroupOf(const DataSharding& sharding, int64_t data);

// ExpertTensorDegree: etp, the spec's or (0) the tensor degree t.
inline int64_t ExpertTensorDegree(const ExpertParallel& expert,
                                  int64_t tensor) {
  return expert.tensor_degree == 0 ? tensor : expert.tensor_degree;
}

// IsMoeBlock: block `block` (0-based) has a mixture of experts; MoeBlocks:
// how many do; StageMoeBlocks: the most any pipeline stage holds (blocks are
// laid over the stages in order, BlocksPerStage each). The pattern must be
// valid (the checker's rule) for the counts to mean anything.
bool IsMoeBlock(const TransformerModel& model, int64_t block);
int64_t MoeBlocks(const TransformerModel& model);
int64_t StageMoeBlocks(const TransformerModel& model, int64_t pipeline);
// LayoutStageMoeBlocks: the same for an explicit layout (a rank's chunks
// summed).
int64_t LayoutStageMoeBlocks(const TransformerModel& model,
                             const std::vector<int64_t>& stage_blocks,
                             int64_t pipeline);

// VirtualStages: the chunks of a microbatch's route per stage of a schedule
// (v of interleaved_1f1b and forward_only; the schedule table row's fixed v
// otherwise: 2 for dualpipe_v and zb_v, 1 for the others).
int64_t VirtualStages(const PipelineSchedule& schedule);

// SplitsActivations: rs_ag and p2p_rs_ag split the activations (microbatch *
// sequence rows) t ways, so pipeline sends carry 1/t of them.
inline bool SplitsActivations(const TensorCommunication& communication) {
  return std::visit(
      Overloaded{[](const AllReduce&) { return false; },
                 [](const ReduceScatterAllGather&) { return true; },
                 [](const EdgeReduceScatterAllGather&) { return true; }},
      communication);
}

// AllGatherRedo: rs_ag with all_gather_redo (Calculon's seq_par_ag_redo).
inline bool AllGatherRedo(const TensorCommunication& communication) {
  const auto* rs_ag = std::get_if<ReduceScatterAllGather>(&communication);
  return rs_ag != nullptr && rs_ag->all_gather_redo;
}

// kMaxVocabulary: the bound on vocabulary sizes, their padding multiple and
// max_positions (2^31), which keeps the padding and every embedding product
// within 64-bit integers.
inline constexpr int64_t kMaxVocabulary = int64_t{1} << 31;

// PaddedVocabulary: Megatron-LM's padding of the vocabulary to a multiple of
// divisible_by * t; 0 without a vocabulary, nullopt if the multiple
// overflows 64 bits.
inline std::optional<int64_t> PaddedVocabulary(const Vocabulary& vocabulary,
                                               int64_t tensor) {
  if (vocabulary.size <= 0 || vocabulary.divisible_by <= 0 || tensor <= 0) {
    return 0;
  }
  const std::optional<int64_t> multiple =
      CheckedMul(vocabulary.divisible_by, tensor);
  if (!multiple) return std::nullopt;
  const int64_t rows = vocabulary.size / *multiple +
                       (vocabulary.size % *multiple != 0 ? 1 : 0);
  return CheckedMul(rows, *multiple);
}

// AnyOffload: some state is offloaded to the second memory tier.
inline bool AnyOffload(const Offload& offload) {
  return offload.weights || offload.activations || offload.optimizer;
}

// OffloadFits: Calculon's offload rule, offloading needs at least
// kMinOffloadBlocksPerStage blocks per stage (it overlaps the transfer of
// one block with the work of the others).
inline constexpr int64_t kMinOffloadBlocksPerStage = 3;
inline bool OffloadFits(const Offload& offload, int64_t blocks_per_stage) {
  return !AnyOffload(offload) || blocks_per_stage >= kMinOffloadBlocksPerStage;
}

// DeriveTrainingValues: the derived values of the training spec with these
// parts (the system only matters through the tiers the parallelism names).
DerivedValues DeriveTrainingValues(
    const TransformerModel& model,
    const TransformerTrainingParallelism& parallelism, const Batch& batch,
    const ExecutionOptions& options);

// SetMicrobatchSize: `derived` of a spec given another microbatch size;
// only the microbatch count depends on it (Derive calls it too).
// MicrobatchCount: the microbatches of those derived values at that size.
inline int64_t MicrobatchCount(const DerivedValues& derived,
                               int64_t microbatch_size) {
  return derived.local_batch / microbatch_size;
}
inline void SetMicrobatchSize(DerivedValues& derived,
                              int64_t microbatch_size) {
  derived.microbatches = MicrobatchCount(derived, microbatch_size);
}

// DeriveValues: the derived values of a spec of either kind.
DerivedValues DeriveValues(const MappingSpec& spec);

// AcceptedProgram: the program CheckSpec (check.h) makes of a spec it
// accepts: the spec, its derived values and its profile's corrections,
// without running the checker again on a spec accepted by construction
// (the strategy search's mappings, whose rules it enumerates within).
TypedProgram AcceptedProgram(MappingSpec spec);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_DERIVE_H_
