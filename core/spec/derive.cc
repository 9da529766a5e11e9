#include "core/spec/derive.h"

#include <variant>

#include "core/base/status_macros.h"

namespace blueprint {
namespace {

// The parts both spec kinds share, and the third dimension as the derived
// values see it (DataParallel for training, ReplicaParallel for inference).
struct Parts {
  bool training = true;
  const TransformerModel* model = nullptr;
  const TensorParallel* tensor = nullptr;
  const PipelineParallel* pipeline = nullptr;
  const Batch* batch = nullptr;
  const ExecutionOptions* options = nullptr;
  int64_t data_degree = 1;
  int64_t data_network_tier = 0;
  bool optimizer_sharding = false;
  bool data_overlap = false;
  RecomputePolicy recompute = RecomputePolicy::kNone;
};

DerivedValues Derive(const Parts& s) {
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
  dv.world_size = t * p * d;
  dv.local_batch = s.batch->global_batch_size / d;
  dv.microbatches = dv.local_batch / s.batch->microbatch_size;
  dv.blocks_per_stage = BlocksPerStage(nb, p);
  dv.blocks_per_chunk = dv.blocks_per_stage / dv.virtual_stages;
  dv.bubble_reduction_blocks = BubbleReductionBlocks(nb, p);
  dv.bytes_per_element = BytesPerElement(s.options->datatype);
  dv.recompute = s.recompute;
  dv.sequence_parallel =
      std::holds_alternative<ReduceScatterAllGather>(s.tensor->communication);
  dv.pipeline_rs_ag = SplitsActivations(s.tensor->communication);
  dv.all_gather_redo = AllGatherRedo(s.tensor->communication);
  dv.optimizer_sharding = s.optimizer_sharding;
  dv.data_overlap = s.data_overlap;
  dv.tensor_network = s.tensor->network_tier;
  dv.pipeline_network = s.pipeline->network_tier;
  dv.data_network = s.data_network_tier;
  return dv;
}

Parts TrainingParts(const TransformerModel& model,
                    const TransformerTrainingParallelism& parallelism,
                    const Batch& batch, const ExecutionOptions& options) {
  Parts s;
  s.training = true;
  s.model = &model;
  s.tensor = &parallelism.tensor;
  s.pipeline = &parallelism.pipeline;
  s.batch = &batch;
  s.options = &options;
  s.data_degree = parallelism.data.degree;
  s.data_network_tier = parallelism.data.network_tier;
  s.optimizer_sharding = parallelism.data.optimizer_sharding;
  s.data_overlap = parallelism.data.overlap;
  s.recompute = parallelism.recompute;
  return s;
}

}  // namespace

int64_t BlocksPerStage(int64_t num_blocks, int64_t pipeline) {
  return num_blocks / pipeline + (num_blocks % pipeline != 0 ? 1 : 0);
}

int64_t BubbleReductionBlocks(int64_t num_blocks, int64_t pipeline) {
  const int64_t remainder = num_blocks % pipeline;
  return remainder != 0 ? pipeline - remainder : 0;
}

int64_t VirtualStages(const PipelineSchedule& schedule) {
  return std::visit(
      Overloaded{
          [](const SingleStage&) -> int64_t { return 1; },
          [](const OneForwardOneBackward&) -> int64_t { return 1; },
          [](const InterleavedOneForwardOneBackward& i) -> int64_t {
            return i.virtual_stages;
          },
          [](const ForwardOnly& f) -> int64_t { return f.virtual_stages; },
      },
      schedule);
}

bool SplitsActivations(const TensorCommunication& communication) {
  return std::visit(
      Overloaded{[](const AllReduce&) { return false; },
                 [](const ReduceScatterAllGather&) { return true; },
                 [](const EdgeReduceScatterAllGather&) { return true; }},
      communication);
}

bool AllGatherRedo(const TensorCommunication& communication) {
  const auto* rs_ag = std::get_if<ReduceScatterAllGather>(&communication);
  return rs_ag != nullptr && rs_ag->all_gather_redo;
}

bool AnyOffload(const Offload& offload) {
  return offload.weights || offload.activations || offload.optimizer;
}

bool OffloadFits(const Offload& offload, int64_t blocks_per_stage) {
  return !AnyOffload(offload) || blocks_per_stage >= kMinOffloadBlocksPerStage;
}

DerivedValues DeriveTrainingValues(
    const TransformerModel& model,
    const TransformerTrainingParallelism& parallelism, const Batch& batch,
    const ExecutionOptions& options) {
  return Derive(TrainingParts(model, parallelism, batch, options));
}

DerivedValues DeriveValues(const MappingSpec& spec) {
  return std::visit(
      Overloaded{[](const TransformerTrainingMappingSpec& s) {
                   return Derive(TrainingParts(s.model, s.parallelism, s.batch,
                                               s.options));
                 },
                 [](const TransformerInferenceMappingSpec& s) {
                   Parts parts;
                   parts.training = false;
                   parts.model = &s.model;
                   parts.tensor = &s.parallelism.tensor;
                   parts.pipeline = &s.parallelism.pipeline;
                   parts.batch = &s.batch;
                   parts.options = &s.options;
                   parts.data_degree = s.parallelism.replica.degree;
                   parts.data_network_tier = s.parallelism.replica.network_tier;
                   return Derive(parts);
                 }},
      spec);
}

}  // namespace blueprint
