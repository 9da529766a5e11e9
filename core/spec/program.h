// TypedProgram: a mapping spec that passed every check (check.h), together
// with the values derived from it. Every later pass consumes a TypedProgram,
// never a raw spec, so none of them re-derives a degree or re-checks a rule.
#ifndef BLUEPRINTING_CORE_SPEC_PROGRAM_H_
#define BLUEPRINTING_CORE_SPEC_PROGRAM_H_

#include <cstdint>

#include "core/spec/spec.h"

namespace blueprint {

// DerivedValues: projections of the spec (the seed's "derived projection"),
// computed once by the checker with checked arithmetic.
struct DerivedValues {
  bool training = true;
  int64_t tensor = 1;          // t
  int64_t pipeline = 1;        // p
  int64_t data = 1;            // d (training) or replicas (inference)
  int64_t virtual_stages = 1;  // v (1 unless interleaved)
  int64_t world_size = 1;      // t*p*d
  int64_t local_batch = 0;     // global_batch / d
  int64_t microbatches = 0;    // m = global_batch / (d * microbatch_size)
  // ceil(num_blocks / p): equal to num_blocks / p for an even layout.
  int64_t blocks_per_stage = 0;
  int64_t blocks_per_chunk = 0;         // blocks_per_stage / v
  int64_t bubble_reduction_blocks = 0;  // p - nb % p when uneven, else 0
  int bytes_per_element = 2;
  RecomputePolicy recompute = RecomputePolicy::kNone;  // kNone for inference
  bool sequence_parallel = false;    // communication is ReduceScatterAllGather
  bool pipeline_rs_ag = false;       // rs_ag or p2p_rs_ag: PP sends 1/t
  bool all_gather_redo = false;
  bool optimizer_sharding = false;   // training only
  bool data_overlap = false;         // training only
  int64_t tensor_network = 0;
  int64_t pipeline_network = 0;
  int64_t data_network = 0;
};

struct TypedProgram {
  MappingSpec spec;
  DerivedValues derived;

  const TransformerModel& model() const;
  const System& system() const;
  const Batch& batch() const;
  const ExecutionOptions& options() const;
  const TensorParallel& tensor() const;
  const PipelineParallel& pipeline() const;
};

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_PROGRAM_H_
