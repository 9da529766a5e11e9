#include "core/spec/derive.h"

#include <variant>

#include "core/base/status_macros.h"
#include "core/spec/spec_view.h"

namespace blueprint {
namespace {

using spec_internal::SpecView;

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

bool InterleavingFits(int64_t virtual_stages, int64_t blocks_per_stage) {
  return virtual_stages <= blocks_per_stage &&
         blocks_per_stage % virtual_stages == 0;
}

bool TensorSplitsModel(const TransformerModel& model, int64_t tensor) {
  return model.hidden % tensor == 0 && model.feedforward % tensor == 0 &&
         model.attn_heads % tensor == 0;
}

bool AnyOffload(const Offload& offload) {
  return offload.weights || offload.activations || offload.optimizer;
}

bool OffloadFits(const Offload& offload, int64_t blocks_per_stage) {
  return !AnyOffload(offload) || blocks_per_stage >= kMinOffloadBlocksPerStage;
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
  view.optimizer_sharding = parallelism.data.optimizer_sharding;
  view.data_overlap = parallelism.data.overlap;
  view.recompute = parallelism.recompute;
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

}  // namespace blueprint
