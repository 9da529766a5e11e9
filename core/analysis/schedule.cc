#include "core/analysis/schedule.h"

#include "core/base/status_macros.h"
#include "core/base/units.h"
#include "core/spec/derive.h"
#include "core/spec/spec_schedule.h"
#include "core/taskir/optimizer.h"

namespace blueprint {
namespace {

// The bytes of one pipeline send of a microbatch (0 when p == 1).
double PipelineMessageBytes(const DerivedValues& dv,
                            const TransformerModel& model,
                            int64_t microbatch_size) {
  if (dv.pipeline <= 1) return 0;
  // 1/t of the activation under rs_ag and p2p_rs_ag.
  // Each context rank sends its own s / cp of the sequence.
  const int64_t batch_seq = microbatch_size * (model.seq_size / dv.context);
  const double per_rank = dv.pipeline_rs_ag
                              ? static_cast<double>(batch_seq / dv.tensor)
                              : static_cast<double>(batch_seq);
  return per_rank * model.hidden * dv.bytes_per_element;
}

}  // namespace

StepShape MakeStepShape(const DerivedValues& dv, const TransformerModel& model,
                        const System& system, const Batch& batch,
                        const ExecutionOptions& options) {
  return MakeStepShape(dv, model, system, batch, options,
                       AccountedModelOf(model));
}

StepShape MakeStepShape(const DerivedValues& dv, const TransformerModel& model,
                        const System& system, const Batch& batch,
                        const ExecutionOptions& options,
                        const AccountedModel& accounted) {
  StepShape s;
  s.training = dv.training;
  s.p = dv.pipeline;
  s.m = dv.microbatches;
  s.d = dv.data;
  s.v = dv.virtual_stages;
  s.blocks_per_stage = dv.blocks_per_stage;
  s.stages_per_rank = dv.stages_per_rank;
  s.blocks_per_chunk = dv.blocks_per_chunk;
  s.bubble_reduction_blocks = dv.bubble_reduction_blocks;
  s.global_batch = batch.global_batch_size;
  s.recompute = dv.recompute;
  s.optimizer_sharding = dv.optimizer_sharding;
  s.shard_parameters = dv.sharding == ShardingStage::kParameters;
  s.cp = dv.context;
  s.bytes_per_element = dv.bytes_per_element;
  s.weight_bytes_per_element = BytesPerElement(WeightDatatype(options));
  s.precision = options.precision;
  s.data_overlap = dv.data_overlap;
  s.offload = options.offload;
  s.pipeline_message_bytes =
      PipelineMessageBytes(dv, model, batch.microbatch_size);
  SetStepNetworks(s, system, dv.tensor_network, dv.pipeline_network,
                  dv.data_network);
  s.mem1 = &system.mem1;
  s.mem2 = &system.mem2;
  auto rate = system.matrix.rates.find(options.datatype);
  s.matrix_peak_flops =
      rate == system.matrix.rates.end() ? 0 : rate->second.tflops * kTFLOP;
  s.t = dv.tensor;
  s.embedding_copy = dv.padded_vocabulary > 0 && model.vocabulary.tied &&
                     dv.pipeline > 1 && dv.stages_per_rank == 1;
  s.accounted = accounted;
  s.padded_vocabulary = dv.padded_vocabulary;
  const Corrections corrections = CorrectionsFor(options.profile);
  s.scheduled_in_flight = corrections.On(Correction::kScheduledInFlight);
  s.grad_reduce_bytes = GradReduceBytesPerElement(options, corrections);
  return s;
}

void SetStepMicrobatchSize(StepShape& s, const DerivedValues& dv,
                           const TransformerModel& model,
                           int64_t microbatch_size) {
  s.m = MicrobatchCount(dv, microbatch_size);
  s.pipeline_message_bytes = PipelineMessageBytes(dv, model, microbatch_size);
}

double GradReduceBytesPerElement(const ExecutionOptions& options,
                                 const Corrections& corrections) {
  if (options.grad_reduce_datatype.has_value()) {
    return BytesPerElement(*options.grad_reduce_datatype);
  }
  if (corrections.On(Correction::kFp32GradientReduction) &&
      options.precision == PrecisionAccounting::kMegatronMixed &&
      options.datatype == DataType::kBFloat16) {
    return kFloat32Bytes;
  }
  // Gradients are never kept in the weights' storage datatype (FP8
  // parameters): in the datatype. 0, the weights' bytes (Calculon's rule),
  // only where the two have the same width.
  const int datatype_bytes = BytesPerElement(options.datatype);
  return BytesPerElement(WeightDatatype(options)) != datatype_bytes
             ? datatype_bytes
             : 0;
}

StepShape MakeStepShape(const TypedProgram& program) {
  StepShape shape =
      MakeStepShape(program.derived, program.model(), program.system(),
                    program.batch(), program.options());
  shape.simulated_schedule =
      SimulatedScheduleKind(program.pipeline().schedule);
  shape.scheduled_in_flight =
      program.corrections.On(Correction::kScheduledInFlight);
  shape.grad_reduce_bytes =
      GradReduceBytesPerElement(program.options(), program.corrections);
  SetStepLayout(shape, program.pipeline().stage_blocks);
  return shape;
}

void SetStepLayout(StepShape& s, const std::vector<int64_t>& stage_blocks) {
  if (stage_blocks.empty()) return;
  s.stage_blocks = stage_blocks;
  s.first_rank_blocks = RankBlocks(stage_blocks, s.p, 0);
  s.last_rank_blocks = RankBlocks(stage_blocks, s.p, s.p - 1);
}

}  // namespace blueprint
