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
  dv.padded_vocabulary = PaddedVocabulary(s.model->vocabulary, t).value_or(0);
  return dv;
}

}  // namespace

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
