// File: spec_view.h
//
// SpecView: the fields of a mapping spec that the checker's rules and the
// derived values read, gathered from either spec kind, by pointer (no copy,
// no allocation). Internal to core/spec (the checker's check*.cc, derive.cc).
//
// Example:
//   const SpecView view = ViewOf(spec);
//   if (view.data_degree > 1) ...
#ifndef BLUEPRINTING_CORE_SPEC_SPEC_VIEW_H_
#define BLUEPRINTING_CORE_SPEC_SPEC_VIEW_H_

#include <cstdint>

#include "core/spec/spec.h"

namespace blueprint {
namespace spec_internal {

struct SpecView {
  bool training = true;
  const TransformerModel* model = nullptr;
  const System* system = nullptr;  // null for TrainingViewOf's parts
  const TensorParallel* tensor = nullptr;
  const PipelineParallel* pipeline = nullptr;
  const Batch* batch = nullptr;
  const ExecutionOptions* options = nullptr;
  // The third dimension: DataParallel for training, ReplicaParallel for
  // inference. `data_path` is its field path in the canonical JSON.
  const char* data_path = "parallelism.data";
  int64_t data_degree = 1;
  int64_t data_network_tier = 0;
  const DataSharding* sharding = nullptr;      // null for inference
  const ContextParallel* context = nullptr;   // null for inference
  const ExpertParallel* expert = nullptr;     // null for inference
  bool data_overlap = false;
  RecomputePolicy recompute = RecomputePolicy::kNone;
  RecomputeModules recompute_modules;  // none for inference
};

// ViewOf: the view of a spec of either kind; `spec` must outlive it.
SpecView ViewOf(const MappingSpec& spec);

// TrainingViewOf: the view of a training spec's parts besides the system
// (system stays null); the arguments must outlive it.
SpecView TrainingViewOf(const TransformerModel& model,
                        const TransformerTrainingParallelism& parallelism,
                        const Batch& batch, const ExecutionOptions& options);

}  // namespace spec_internal
}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_SPEC_VIEW_H_
