#include "core/analysis/schedule.h"

#include "core/base/status_macros.h"
#include "core/base/units.h"

namespace blueprint {

StepShape MakeStepShape(const TypedProgram& program) {
  const DerivedValues& dv = program.derived;
  const System& system = program.system();
  StepShape s;
  s.training = dv.training;
  s.p = dv.pipeline;
  s.m = dv.microbatches;
  s.d = dv.data;
  // The schedule decides the number of chunks per stage; every constructor
  // is handled here and nowhere else in the analyses.
  s.v = std::visit(
      Overloaded{
          [](const SingleStage&) -> int64_t { return 1; },
          [](const OneForwardOneBackward&) -> int64_t { return 1; },
          [](const InterleavedOneForwardOneBackward& i) -> int64_t {
            return i.virtual_stages;
          },
          [](const ForwardOnly& f) -> int64_t { return f.virtual_stages; },
      },
      program.pipeline().schedule);
  s.blocks_per_stage = dv.blocks_per_stage;
  s.blocks_per_chunk = dv.blocks_per_chunk;
  s.bubble_reduction_blocks = dv.bubble_reduction_blocks;
  s.global_batch = program.batch().global_batch_size;
  s.recompute = dv.recompute;
  s.optimizer_sharding = dv.optimizer_sharding;
  s.data_overlap = dv.data_overlap;
  s.offload = program.options().offload;
  if (s.p > 1) {
    const double activation = static_cast<double>(
        program.batch().microbatch_size * program.model().seq_size);
    const double per_rank =
        dv.pipeline_rs_ag
            ? static_cast<double>(
                  (program.batch().microbatch_size * program.model().seq_size) /
                  dv.tensor)
            : activation;
    s.pipeline_message_bytes =
        per_rank * program.model().hidden * dv.bytes_per_element;
  }
  s.pipeline_net = &system.networks[static_cast<size_t>(dv.pipeline_network)];
  s.data_net = &system.networks[static_cast<size_t>(dv.data_network)];
  // Calculon compares network objects: the same tier index.
  s.data_net_is_tensor_net = dv.data_network == dv.tensor_network;
  s.data_net_is_pipeline_net = dv.data_network == dv.pipeline_network;
  s.mem1 = &system.mem1;
  s.mem2 = &system.mem2;
  auto rate = system.matrix.rates.find(program.options().datatype);
  s.matrix_peak_flops =
      rate == system.matrix.rates.end() ? 0 : rate->second.tflops * kTFLOP;
  return s;
}

}  // namespace blueprint
