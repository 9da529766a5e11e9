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

#include "core/spec/program.h"
#include "core/spec/spec.h"

namespace blueprint {

// BlocksPerStage: ceil(num_blocks / pipeline) (Calculon's compile()).
int64_t BlocksPerStage(int64_t num_blocks, int64_t pipeline);

// BubbleReductionBlocks: the blocks the last stages lack when num_blocks is
// not a multiple of the pipeline degree (pipeline - num_blocks % pipeline),
// by which Calculon shortens the bubble; 0 for an even layout.
int64_t BubbleReductionBlocks(int64_t num_blocks, int64_t pipeline);

// VirtualStages: the chunks per stage of a schedule (v of interleaved_1f1b
// and forward_only, 1 otherwise).
int64_t VirtualStages(const PipelineSchedule& schedule);

// SplitsActivations: rs_ag and p2p_rs_ag split the activations (microbatch *
// sequence rows) t ways, so pipeline sends carry 1/t of them.
bool SplitsActivations(const TensorCommunication& communication);

// AllGatherRedo: rs_ag with all_gather_redo (Calculon's seq_par_ag_redo).
bool AllGatherRedo(const TensorCommunication& communication);

// InterleavingFits: `virtual_stages` chunks split the blocks of a stage
// evenly (Calculon's compile(): v <= blocks_per_stage and v divides it).
bool InterleavingFits(int64_t virtual_stages, int64_t blocks_per_stage);

// TensorSplitsModel: t divides the model's hidden, feedforward and
// attention-head counts (each GEMM and head split evenly t ways).
bool TensorSplitsModel(const TransformerModel& model, int64_t tensor);

// AnyOffload: some state is offloaded to the second memory tier.
bool AnyOffload(const Offload& offload);

// OffloadFits: Calculon's offload rule, offloading needs at least
// kMinOffloadBlocksPerStage blocks per stage (it overlaps the transfer of
// one block with the work of the others).
inline constexpr int64_t kMinOffloadBlocksPerStage = 3;
bool OffloadFits(const Offload& offload, int64_t blocks_per_stage);

// DeriveTrainingValues: the derived values of the training spec with these
// parts (the system only matters through the tiers the parallelism names).
DerivedValues DeriveTrainingValues(
    const TransformerModel& model,
    const TransformerTrainingParallelism& parallelism, const Batch& batch,
    const ExecutionOptions& options);

// DeriveValues: the derived values of a spec of either kind.
DerivedValues DeriveValues(const MappingSpec& spec);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_DERIVE_H_
