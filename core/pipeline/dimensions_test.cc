// The parallel dimensions of the MoE issue through every stage: ZeRO-1/2/3
// bytes per parameter on a dense model, context parallelism's invariants,
// and the expert all-to-all and expert weights of a mixture of experts.
#include <cmath>
#include <string>
#include <vector>

#include "core/pipeline/pipeline.h"
#include "core/spec/check.h"
#include "core/spec/spec.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

// A Llama-shaped dense model without a vocabulary (every stage alike), in
// Megatron-LM's mixed precision: t 2, p 1, d 8, on Calculon's a100_80g.
TransformerTrainingMappingSpec DenseSpec() {
  TransformerTrainingMappingSpec spec;
  spec.model = CalculonModel("dense", 4096, 14336, 32, 128, 8, 4096);
  spec.model.kv_heads = 8;
  spec.model.mlp = MlpType::kGated;
  spec.model.norm = NormType::kRmsNorm;
  spec.system = test_programs::A100System();
  spec.parallelism.tensor.degree = 2;
  spec.parallelism.tensor.network_tier = 0;
  spec.parallelism.pipeline.network_tier = 1;
  spec.parallelism.data.degree = 8;
  spec.parallelism.data.network_tier = 1;
  spec.parallelism.recompute = RecomputePolicy::kFull;
  spec.batch = {64, 1};
  spec.options.precision = PrecisionAccounting::kMegatronMixed;
  return spec;
}

// 8 experts of DenseSpec's feedforward, 2 routed per token, ep 4 with
// etp 1 on the first tier.
void AddExperts(TransformerTrainingMappingSpec& spec) {
  MixtureOfExperts moe;
  moe.experts = 8;
  moe.topk = 2;
  moe.ffn = 14336;
  spec.model.moe = moe;
  spec.parallelism.expert = {4, 1, 0};
}

absl::StatusOr<PipelineResult> Analyse(const TransformerTrainingMappingSpec& s) {
  absl::StatusOr<TypedProgram> program = CheckSpec(s);
  if (!program.ok()) return program.status();
  return RunPipeline(*program);
}

double RankFigure(const PipelineResult& r, const std::string& name) {
  for (const NamedFigure& f : r.iteration.rank_figures) {
    if (f.name == name) return f.value;
  }
  ADD_FAILURE() << "no rank figure " << name;
  return NAN;
}

double Relative(double got, double want) {
  return std::fabs(got - want) / std::fabs(want);
}

// The ZeRO paper's accounting on top of Megatron-LM's 18 bytes per
// parameter: sharding over d = 8 ranks gives 6 + 12/d (optimizer state),
// 2 + 16/d (+ gradients) and 18/d (+ parameters).
TEST(Dimensions, ZeroStagesGiveTheirBytesPerParameter) {
  TransformerTrainingMappingSpec spec = DenseSpec();
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult none, Analyse(spec));
  // The parameters on a rank: its blocks' weights, 2 bytes each.
  const double parameters = none.plan.block.block_weight_space / 2 *
                            static_cast<double>(none.program.derived
                                                    .blocks_per_stage);
  const double d = 8;
  EXPECT_LE(Relative(none.memory.figures.weight_and_optimizer_bytes,
                     18 * parameters),
            1e-12);
  const struct {
    DataSharding sharding;
    double bytes_per_parameter;
  } stages[] = {{ShardOptimizer{}, 6 + 12 / d},
                {ShardGradients{}, 2 + 16 / d},
                {ShardParameters{}, 18 / d}};
  for (const auto& stage : stages) {
    spec.parallelism.data.sharding = stage.sharding;
    SCOPED_TRACE(DataShardingName(stage.sharding));
    BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, Analyse(spec));
    EXPECT_LE(Relative(r.memory.figures.weight_and_optimizer_bytes,
                       stage.bytes_per_parameter * parameters),
              1e-12)
        << r.memory.figures.weight_and_optimizer_bytes /
               parameters;
  }
  // Hybrid sharding (groups of 4 of the 8 ranks) shards 4 ways.
  spec.parallelism.data.sharding = ShardParameters{4};
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult hybrid, Analyse(spec));
  EXPECT_LE(Relative(hybrid.memory.figures.weight_and_optimizer_bytes,
                     18.0 / 4 * parameters),
            1e-12);
  // ZeRO-3 moves the whole weights twice more per step than ZeRO-1/2.
  EXPECT_GT(RankFigure(hybrid, "dp_param_all_gather_bytes"), 0);
  EXPECT_EQ(RankFigure(none, "dp_param_all_gather_bytes"), 0);
}

// With cp ranks the sequence splits: per-rank GEMM work and activation
// memory divide by cp; the model's parameters and FLOPs do not change.
TEST(Dimensions, ContextParallelismSplitsWorkAndActivationsNotTheModel) {
  TransformerTrainingMappingSpec spec = DenseSpec();
  spec.parallelism.recompute = RecomputePolicy::kNone;
  spec.model.vocabulary.size = 32000;
  spec.model.vocabulary.tied = false;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult one, Analyse(spec));
  for (const ContextExchange exchange :
       {ContextExchange::kRing, ContextExchange::kAllGather}) {
    spec.parallelism.context = {2, exchange, 0};
    SCOPED_TRACE(ContextExchangeName(exchange));
    BP_ASSERT_OK_AND_ASSIGN(const PipelineResult two, Analyse(spec));
    EXPECT_EQ(two.program.derived.world_size, 2 * one.program.derived.world_size);
    EXPECT_EQ(two.iteration.figures.parameters_total,
              one.iteration.figures.parameters_total);
    EXPECT_EQ(two.iteration.figures.model_flops_per_iteration,
              one.iteration.figures.model_flops_per_iteration);
    EXPECT_LE(Relative(RankFigure(two, "gemm_flops_per_rank"),
                       RankFigure(one, "gemm_flops_per_rank") / 2),
              1e-12);
    EXPECT_LE(Relative(two.plan.block.block_act_storage_space,
                       one.plan.block.block_act_storage_space / 2),
              1e-12);
    EXPECT_GT(RankFigure(two, "cp_kv_bytes"), 0);
    EXPECT_LE(RankFigure(two, "cp_kv_exposed_time"),
              RankFigure(two, "cp_kv_bytes"));  // some of it, finite
    EXPECT_EQ(RankFigure(one, "cp_kv_bytes"), 0);
  }
}

// A mixture of experts: the rank holds experts / ep experts of 1/etp each,
// and sends topk copies of its tokens to them and back.
TEST(Dimensions, ExpertParallelismShardsExpertsAndExchangesTokens) {
  TransformerTrainingMappingSpec spec = DenseSpec();
  AddExperts(spec);
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult r, Analyse(spec));
  const DerivedValues& d = r.program.derived;
  EXPECT_EQ(d.expert_data, 4);  // t * d / (etp * ep) = 16 / 4
  const double blocks = static_cast<double>(d.blocks_per_stage);
  const double m = static_cast<double>(d.microbatches);
  EXPECT_EQ(RankFigure(r, "expert_parameters_per_rank"),
            blocks * (8.0 / 4) * 3 * 4096 * 14336);
  // b * s / t tokens, topk copies of h elements, 2 bytes, (ep - 1) / ep of
  // them leaving; dispatch and combine, forward and backward.
  const double leaving = 1.0 * 4096 / 2 * 2 * 4096 * 2 * 3 / 4;
  EXPECT_EQ(RankFigure(r, "ep_all_to_all_bytes"), blocks * m * 4 * leaving);
  EXPECT_GT(RankFigure(r, "ep_all_to_all_exposed_time"), 0);
  // Parameters as Megatron-LM counts them: 8 experts in total, 2 active.
  const double attention = 2.0 * 4096 * (4096 + 1024);
  const double norms = 2.0 * 4096;
  const double expert = 3.0 * 4096 * 14336;
  const double router = 4096.0 * 8;
  EXPECT_EQ(r.iteration.figures.parameters_total,
            8 * (attention + norms + 8 * expert + router));
  EXPECT_EQ(r.iteration.figures.parameters_active,
            8 * (attention + norms + 2 * expert + router));
  spec.parallelism.expert.degree = 1;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult local, Analyse(spec));
  EXPECT_EQ(RankFigure(local, "ep_all_to_all_bytes"), 0);
}

// Combined 1F1B (parallelism.expert.overlap) hides the expert exchanges
// under the adjacent microbatch's compute; correction
// expert_overlap_processor_usage keeps the exchange tier's processor_usage
// (0.15 on the A100 system's first tier) of the hidden time exposed.
TEST(Dimensions, HiddenExpertExchangesTakeTheirProcessorShare) {
  TransformerTrainingMappingSpec spec = DenseSpec();
  AddExperts(spec);
  spec.options.profile = ModelProfile::kRefined;
  spec.parallelism.recompute = RecomputePolicy::kNone;
  spec.parallelism.expert.overlap = true;
  BP_ASSERT_OK_AND_ASSIGN(TypedProgram program, CheckSpec(spec));
  program.corrections.Set(Correction::kExpertOverlapProcessorUsage, false);
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult free, RunPipeline(program));
  program.corrections.Set(Correction::kExpertOverlapProcessorUsage, true);
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult shared, RunPipeline(program));
  const double hidden = RankFigure(free, "ep_all_to_all_hidden_time");
  const double exposed = RankFigure(free, "ep_all_to_all_exposed_time");
  ASSERT_GT(hidden, 0);
  const double pu = spec.system.networks[0].processor_usage;
  EXPECT_LE(Relative(RankFigure(shared, "ep_all_to_all_exposed_time"),
                     exposed + pu * hidden),
            1e-12);
  EXPECT_LE(Relative(RankFigure(shared, "ep_all_to_all_hidden_time"),
                     (1 - pu) * hidden),
            1e-12);
  EXPECT_GT(shared.iteration.figures.total_time,
            free.iteration.figures.total_time);
  // Without the overlap nothing hides and the correction changes nothing.
  spec.parallelism.expert.overlap = false;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult plain, Analyse(spec));
  EXPECT_EQ(RankFigure(plain, "ep_all_to_all_hidden_time"), 0);
}

// A tier's measured bus bandwidths price its collectives under the refined
// profile's measured_collective_rates only: off, or under Calculon's
// profile, the figures are those of the system without them.
TEST(Dimensions, MeasuredCollectiveRatesPriceTheTierCollectives) {
  TransformerTrainingMappingSpec spec = DenseSpec();
  spec.options.profile = ModelProfile::kRefined;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult plain, Analyse(spec));
  const NetworkTier& nvlink = spec.system.networks[0];
  const double rated = nvlink.bandwidth_gbps * nvlink.efficiency;
  for (NetworkOpCost* op : {&spec.system.networks[0].all_reduce,
                            &spec.system.networks[0].all_gather,
                            &spec.system.networks[0].reduce_scatter}) {
    op->measured_busbw = {{0, 4 * rated}};
  }
  BP_ASSERT_OK_AND_ASSIGN(TypedProgram program, CheckSpec(spec));
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult measured, RunPipeline(program));
  ASSERT_GT(plain.plan.block.baseblock_fw_tp_time, 0);
  EXPECT_LT(measured.plan.block.baseblock_fw_tp_time,
            plain.plan.block.baseblock_fw_tp_time / 2);
  program.corrections.Set(Correction::kMeasuredCollectiveRates, false);
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult off, RunPipeline(program));
  EXPECT_EQ(off.iteration.figures.total_time,
            plain.iteration.figures.total_time);
  spec.options.profile = ModelProfile::kCalculon;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult calculon, Analyse(spec));
  TransformerTrainingMappingSpec unmeasured = DenseSpec();
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult calculon_plain,
                          Analyse(unmeasured));
  EXPECT_EQ(calculon.iteration.figures.total_time,
            calculon_plain.iteration.figures.total_time);
}

// FP8 training: GEMMs at the matrix engine's float8 rate (here twice the
// float16 one), everything else at the datatype's; FP8 weights take half
// the bytes of float16 ones.
TEST(Dimensions, GemmAndWeightDatatypesPriceGemmsAndWeights) {
  TransformerTrainingMappingSpec spec = DenseSpec();
  for (Processor* engine : {&spec.system.matrix, &spec.system.vector}) {
    ProcessorRate fp8 = engine->rates.at(DataType::kFloat16);
    fp8.tflops *= 2;
    engine->rates[DataType::kFloat8] = fp8;
  }
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult half, Analyse(spec));
  spec.options.gemm_datatype = DataType::kFloat8;
  spec.options.weight_datatype = DataType::kFloat8;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult fp8, Analyse(spec));
  ASSERT_EQ(half.tasks.tasks.size(), fp8.tasks.tasks.size());
  int gemms = 0;
  for (size_t i = 0; i < half.tasks.tasks.size(); ++i) {
    const Task& task = half.tasks.tasks[i];
    const double before = half.plan.tasks[i].flop_time[0];
    const double after = fp8.plan.tasks[i].flop_time[0];
    if (task.work[0].matrix_engine && task.work[0].flops > 0) {
      EXPECT_EQ(after, before / 2) << task.name;
      ++gemms;
    } else {
      EXPECT_EQ(after, before) << task.name;
    }
  }
  EXPECT_GT(gemms, 0);
  EXPECT_EQ(fp8.plan.block.block_weight_space,
            half.plan.block.block_weight_space / 2);
  EXPECT_LT(fp8.iteration.figures.total_time,
            half.iteration.figures.total_time);
}

// FP8 weights (Megatron-LM's --fp8-param-gather) under ZeRO-3: the
// parameter all-gathers move one byte per weight, the gradient
// reduce-scatter the datatype's two (gradients are never FP8); the expert
// parameters per rank count parameters, whatever their storage width.
TEST(Dimensions, Fp8WeightsAreGatheredAsFp8AndReducedInTheDatatype) {
  TransformerTrainingMappingSpec spec = DenseSpec();
  spec.options.precision = PrecisionAccounting::kCalculon;
  for (Processor* engine : {&spec.system.matrix, &spec.system.vector}) {
    engine->rates[DataType::kFloat8] = engine->rates.at(DataType::kFloat16);
  }
  AddExperts(spec);
  spec.parallelism.data.sharding = ShardParameters{};
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult half, Analyse(spec));
  spec.options.weight_datatype = DataType::kFloat8;
  BP_ASSERT_OK_AND_ASSIGN(const PipelineResult fp8, Analyse(spec));
  const IterationFigures& h = half.iteration.figures;
  const IterationFigures& f = fp8.iteration.figures;
  ASSERT_GT(h.block_dp_size, 0);
  EXPECT_EQ(f.block_dp_size, h.block_dp_size / 2);
  EXPECT_EQ(f.block_dp_grad_size, h.block_dp_grad_size);
  EXPECT_EQ(h.block_dp_grad_size, h.block_dp_size);
  EXPECT_EQ(RankFigure(fp8, "dp_param_all_gather_bytes"),
            RankFigure(half, "dp_param_all_gather_bytes") / 2);
  EXPECT_GT(RankFigure(fp8, "expert_parameters_per_rank"), 0);
  EXPECT_EQ(RankFigure(fp8, "expert_parameters_per_rank"),
            RankFigure(half, "expert_parameters_per_rank"));
}

}  // namespace
}  // namespace blueprint
