// TypedProgram: a mapping spec that passed every check (check.h), together
// with the values derived from it. Every later pass consumes a TypedProgram,
// never a raw spec, so none of them re-derives a degree or re-checks a rule.
#ifndef BLUEPRINTING_CORE_SPEC_PROGRAM_H_
#define BLUEPRINTING_CORE_SPEC_PROGRAM_H_

#include <cstdint>

#include "core/spec/corrections.h"
#include "core/spec/spec.h"

namespace blueprint {

// The ZeRO stage of a DataSharding, as a plain value (ordered: each stage
// shards what the one before does and more).
enum class ShardingStage { kNone = 0, kOptimizer = 1, kGradients = 2,
                           kParameters = 3 };
// The DataSharding type names: "none", "optimizer", ...
const char* ShardingStageName(ShardingStage s);

// BP_DERIVED_VALUES: every derived value, once, as X(type, name, initial
// value). The struct, the checker's JSON printing (spec_json.cc) and the
// tests all expand this list, so a new value is added in one place; its
// meaning is documented here and its formula in derive.cc.
//   training                 the spec is a training spec
//   tensor, pipeline, data   t, p, d (d: replicas for inference)
//   virtual_stages           v (1 unless interleaved or forward_only)
//   world_size               t*p*d
//   local_batch              global_batch / d
//   microbatches             m = global_batch / (d * microbatch_size)
//   blocks_per_stage         ceil(num_blocks / p) (num_blocks / p if even)
//   blocks_per_chunk         blocks_per_stage / v
//   stages_per_rank          2 for dualpipe (rank s also holds stage
//                            p - 1 - s of the second model copy), else 1:
//                            a rank's weights, gradients, optimizer state
//                            and activations are of stages_per_rank *
//                            blocks_per_stage blocks
//   bubble_reduction_blocks  p - num_blocks % p when uneven, else 0
//   bytes_per_element        of the datatype
//   recompute                kNone for inference
//   sequence_parallel        communication is ReduceScatterAllGather
//   pipeline_rs_ag           rs_ag or p2p_rs_ag: PP sends 1/t
//   all_gather_redo          rs_ag with all_gather_redo
//   optimizer_sharding       training only
//   data_overlap             training only
//   tensor_network, pipeline_network, data_network   the network tiers
//   padded_vocabulary        the vocabulary padded to a multiple of
//                            divisible_by * t (Megatron-LM), 0 without one
//   context                  cp (1 for inference)
//   expert, expert_tensor    ep and etp (etp: the spec's, or t for 0)
//   expert_data              the ranks that hold copies of one expert:
//                            t * cp * d / (etp * ep)
//   sharding                 what the data-parallel ranks shard (ZeRO stage)
//   sharding_group           the ranks that share one copy (d for 0)
//   moe_blocks               blocks with a mixture of experts
//   stage_moe_blocks         MoE blocks of the stage that has most of them:
//                            the stage the analyses price
//   context_network, expert_network   their network tiers
#define BP_DERIVED_VALUES(X)                            \
  X(bool, training, true)                               \
  X(int64_t, tensor, 1)                                 \
  X(int64_t, pipeline, 1)                               \
  X(int64_t, data, 1)                                   \
  X(int64_t, virtual_stages, 1)                         \
  X(int64_t, world_size, 1)                             \
  X(int64_t, local_batch, 0)                            \
  X(int64_t, microbatches, 0)                           \
  X(int64_t, blocks_per_stage, 0)                       \
  X(int64_t, blocks_per_chunk, 0)                       \
  X(int64_t, stages_per_rank, 1)                        \
  X(int64_t, bubble_reduction_blocks, 0)                \
  X(int, bytes_per_element, 2)                          \
  X(RecomputePolicy, recompute, RecomputePolicy::kNone) \
  X(bool, sequence_parallel, false)                     \
  X(bool, pipeline_rs_ag, false)                        \
  X(bool, all_gather_redo, false)                       \
  X(bool, optimizer_sharding, false)                    \
  X(bool, data_overlap, false)                          \
  X(int64_t, tensor_network, 0)                         \
  X(int64_t, pipeline_network, 0)                       \
  X(int64_t, data_network, 0)                           \
  X(int64_t, padded_vocabulary, 0)                      \
  X(int64_t, context, 1)                                \
  X(int64_t, expert, 1)                                 \
  X(int64_t, expert_tensor, 1)                          \
  X(int64_t, expert_data, 1)                            \
  X(ShardingStage, sharding, ShardingStage::kNone)      \
  X(int64_t, sharding_group, 1)                         \
  X(int64_t, moe_blocks, 0)                             \
  X(int64_t, stage_moe_blocks, 0)                       \
  X(int64_t, context_network, 0)                        \
  X(int64_t, expert_network, 0)

// DerivedValues: projections of the spec (the seed's "derived projection"),
// computed by DeriveValues (derive.h) once the checker has accepted the spec.
struct DerivedValues {
#define BP_DECLARE_DERIVED(type, name, initial) type name = initial;
  BP_DERIVED_VALUES(BP_DECLARE_DERIVED)
#undef BP_DECLARE_DERIVED
};

// ForEachDerivedValue: calls f(name, value) for every derived value, in the
// order of BP_DERIVED_VALUES.
template <typename F>
void ForEachDerivedValue(const DerivedValues& dv, F&& f) {
#define BP_VISIT_DERIVED(type, name, initial) f(#name, dv.name);
  BP_DERIVED_VALUES(BP_VISIT_DERIVED)
#undef BP_VISIT_DERIVED
}

struct TypedProgram {
  MappingSpec spec;
  DerivedValues derived;
  // The refined profile's corrections in force: CorrectionsFor(the spec's
  // options.profile), set by CheckSpec. Not printed (the profile is); only
  // `blueprint validate --without` turns one off to measure it.
  Corrections corrections;

  const TransformerModel& model() const;
  const System& system() const;
  const Batch& batch() const;
  const ExecutionOptions& options() const;
  const TensorParallel& tensor() const;
  const PipelineParallel& pipeline() const;
};

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_PROGRAM_H_
