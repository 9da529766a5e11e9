#include "core/testing/programs.h"

#include "core/spec/check.h"

namespace blueprint::test_programs {

System A100System() {
  System s;
  s.name = "a100_80g";
  s.matrix.rates[DataType::kFloat16] = {
      312, {{128, 0.95}, {16, 0.9}, {1, 0.6}, {0, 0.1}}};
  s.vector.rates[DataType::kFloat16] = {78, {{16, 0.95}, {1, 0.5}, {0, 0.1}}};
  s.mem1 = {80, 2048, {{100, 0.9}, {10, 0.75}, {1, 0.6}, {0, 0.3}}};
  s.mem2 = {512, 32, {{100, 0.95}, {10, 0.9}, {1, 0.7}, {0, 0.3}}};
  s.processing_mode = ProcessingMode::kNoOverlap;
  NetworkTier nvlink;
  nvlink.bandwidth_gbps = 300;
  nvlink.efficiency = 0.65;
  nvlink.size = 8;
  nvlink.latency_s = 1e-5;
  nvlink.p2p = {1.0, std::nullopt};
  nvlink.reduce_scatter = {1.5, -1.0};
  nvlink.all_gather = {1.5, -1.0};
  nvlink.all_reduce = {2.0, -1.0};
  nvlink.must_be_filled = true;
  nvlink.processor_usage = 0.15;
  NetworkTier ib;
  ib.bandwidth_gbps = 25;
  ib.efficiency = 0.9;
  ib.size = 65536;
  ib.latency_s = 2e-5;
  ib.p2p = {1.0, std::nullopt};
  ib.reduce_scatter = {1.0, 0.0};
  ib.all_gather = {1.0, 0.0};
  ib.all_reduce = {1.0, 0.0};
  ib.must_be_filled = false;
  ib.processor_usage = 0.02;
  s.networks = {nvlink, ib};
  return s;
}

namespace {

PipelineSchedule ScheduleOf(const TestMapping& m) {
  if (m.schedule.has_value()) return *m.schedule;
  if (m.v > 1) return InterleavedOneForwardOneBackward{m.v};
  if (m.p == 1) return SingleStage{};
  if (m.training) return OneForwardOneBackward{};
  return ForwardOnly{};
}

}  // namespace

MappingSpec TestSpec(const TestMapping& m) {
  TransformerModel model;
  model.name = "tiny";
  model.hidden = m.hidden;
  model.feedforward = m.feedforward;
  model.attn_heads = m.heads;
  model.kv_heads = m.heads;
  model.attn_size = m.head_size;
  model.num_blocks = m.blocks;
  model.seq_size = m.seq;
  TensorParallel tensor;
  tensor.degree = m.t;
  tensor.communication = m.communication;
  tensor.overlap = m.overlap;
  // TP inside the NVLink tier only when it fills it; otherwise InfiniBand.
  tensor.network_tier = m.t == 8 ? 0 : 1;
  PipelineParallel pipeline;
  pipeline.degree = m.p;
  pipeline.schedule = ScheduleOf(m);
  pipeline.network_tier = 1;
  pipeline.stage_layout =
      m.blocks % m.p == 0 ? StageLayout::kEven : StageLayout::kUneven;
  ExecutionOptions options;
  options.datatype = DataType::kFloat16;
  options.fused_activation = m.fused_activation;
  options.attention =
      m.multiquery ? AttentionType::kMultiQuery : AttentionType::kMultiHead;
  options.offload = m.offload;
  Batch batch{m.global_batch, m.microbatch};
  if (m.training) {
    TransformerTrainingMappingSpec spec;
    spec.model = model;
    spec.system = A100System();
    spec.parallelism.tensor = tensor;
    spec.parallelism.pipeline = pipeline;
    spec.parallelism.data.degree = m.d;
    if (m.optimizer_sharding) spec.parallelism.data.sharding = ShardOptimizer{};
    spec.parallelism.data.overlap = m.data_overlap;
    spec.parallelism.data.network_tier = 1;
    spec.parallelism.recompute = m.recompute;
    spec.batch = batch;
    spec.options = options;
    return spec;
  }
  TransformerInferenceMappingSpec spec;
  spec.model = model;
  spec.system = A100System();
  spec.parallelism.tensor = tensor;
  spec.parallelism.pipeline = pipeline;
  spec.parallelism.replica = {m.d, 1};
  spec.batch = batch;
  spec.options = options;
  return spec;
}

absl::StatusOr<TypedProgram> TestProgram(const TestMapping& m) {
  return CheckSpec(TestSpec(m));
}

}  // namespace blueprint::test_programs
