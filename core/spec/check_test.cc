#include "core/spec/check.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "core/spec/spec_json.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

// Calculon's a100_80g system (calculon/systems/a100_80g.json).
System A100() { return test_programs::A100System(); }

// GPT-3 175B, t8 p8 v3, full recompute: oracle case v09.
TransformerTrainingMappingSpec Gpt3Training() {
  TransformerTrainingMappingSpec spec;
  spec.model = CalculonModel("gpt3-175B", 12288, 49152, 96, 128, 96, 2048);
  spec.system = A100();
  spec.parallelism.tensor.degree = 8;
  spec.parallelism.tensor.network_tier = 0;
  spec.parallelism.pipeline.degree = 8;
  spec.parallelism.pipeline.schedule = InterleavedOneForwardOneBackward{3};
  spec.parallelism.pipeline.network_tier = 1;
  spec.parallelism.data.degree = 1;
  spec.parallelism.data.network_tier = 1;
  spec.parallelism.recompute = RecomputePolicy::kFull;
  spec.batch = {64, 1};
  return spec;
}

TransformerInferenceMappingSpec Gpt3Inference() {
  TransformerInferenceMappingSpec spec;
  spec.model = CalculonModel("gpt3-175B", 12288, 49152, 96, 128, 96, 2048);
  spec.system = A100();
  spec.parallelism.tensor.degree = 8;
  spec.parallelism.pipeline.degree = 2;
  spec.parallelism.pipeline.schedule = ForwardOnly{};
  spec.parallelism.pipeline.network_tier = 1;
  spec.parallelism.replica.degree = 1;
  spec.parallelism.replica.network_tier = 1;
  spec.batch = {16, 1};
  return spec;
}

std::vector<std::string> Messages(const MappingSpec& spec) {
  std::vector<std::string> out;
  for (const Violation& v : FindViolations(spec)) out.push_back(v.message);
  return out;
}

TEST(CheckSpec, ValidTrainingSpecDerivesEveryValue) {
  absl::StatusOr<TypedProgram> program = CheckSpec(Gpt3Training());
  ASSERT_THAT(program, IsOk());
  const DerivedValues& d = program->derived;
  EXPECT_TRUE(d.training);
  EXPECT_EQ(d.tensor, 8);
  EXPECT_EQ(d.pipeline, 8);
  EXPECT_EQ(d.data, 1);
  EXPECT_EQ(d.virtual_stages, 3);
  EXPECT_EQ(d.world_size, 64);
  EXPECT_EQ(d.local_batch, 64);
  EXPECT_EQ(d.microbatches, 64);
  EXPECT_EQ(d.blocks_per_stage, 12);
  EXPECT_EQ(d.blocks_per_chunk, 4);
  EXPECT_EQ(d.bubble_reduction_blocks, 0);
  EXPECT_EQ(d.bytes_per_element, 2);
  EXPECT_EQ(d.recompute, RecomputePolicy::kFull);
  EXPECT_FALSE(d.sequence_parallel);
  EXPECT_FALSE(d.pipeline_rs_ag);
  EXPECT_FALSE(d.all_gather_redo);
  EXPECT_FALSE(d.optimizer_sharding);
  EXPECT_FALSE(d.data_overlap);
  EXPECT_EQ(d.tensor_network, 0);
  EXPECT_EQ(d.pipeline_network, 1);
  EXPECT_EQ(d.data_network, 1);
  EXPECT_EQ(SpecToJson(program->spec), SpecToJson(Gpt3Training()));
}

// Inference reduces no gradients; a training spec may name float32 or its
// datatype.
TEST(CheckSpec, GradReduceDatatype) {
  TransformerInferenceMappingSpec inference = Gpt3Inference();
  inference.options.grad_reduce_datatype = DataType::kFloat32;
  EXPECT_EQ(Messages(inference),
            std::vector<std::string>{
                "options.grad_reduce_datatype is float32, but an inference "
                "spec reduces no gradients: leave it null"});
  TransformerTrainingMappingSpec training = Gpt3Training();
  for (DataType datatype : {DataType::kFloat32, DataType::kFloat16}) {
    training.options.grad_reduce_datatype = datatype;
    EXPECT_THAT(CheckSpec(training), IsOk());
  }
}

TEST(CheckSpec, ValidInferenceSpec) {
  TransformerInferenceMappingSpec spec = Gpt3Inference();
  spec.parallelism.tensor.communication = ReduceScatterAllGather{true};
  spec.parallelism.replica.degree = 4;
  spec.batch.global_batch_size = 64;
  absl::StatusOr<TypedProgram> program = CheckSpec(spec);
  ASSERT_THAT(program, IsOk());
  const DerivedValues& d = program->derived;
  EXPECT_FALSE(d.training);
  EXPECT_EQ(d.data, 4);
  EXPECT_EQ(d.world_size, 64);
  EXPECT_EQ(d.local_batch, 16);
  EXPECT_EQ(d.microbatches, 16);
  EXPECT_EQ(d.blocks_per_stage, 48);
  EXPECT_EQ(d.blocks_per_chunk, 48);
  EXPECT_EQ(d.recompute, RecomputePolicy::kNone);
  EXPECT_TRUE(d.sequence_parallel);
  EXPECT_TRUE(d.pipeline_rs_ag);
  EXPECT_TRUE(d.all_gather_redo);
  EXPECT_EQ(d.data_network, 1);
}

TEST(CheckSpec, UnevenLayoutRoundsUpAndShortensTheBubble) {
  TransformerTrainingMappingSpec spec = Gpt3Training();  // oracle v13
  spec.parallelism.pipeline.degree = 7;
  spec.parallelism.pipeline.schedule = OneForwardOneBackward{};
  spec.batch.global_batch_size = 56;
  EXPECT_EQ(Messages(spec),
            std::vector<std::string>{
                "model.num_blocks (96) must be divisible by "
                "parallelism.pipeline.degree (7) with "
                "parallelism.pipeline.stage_layout even (uneven rounds "
                "blocks_per_stage up and shortens the bubble, as Calculon "
                "does)"});
  spec.parallelism.pipeline.stage_layout = StageLayout::kUneven;
  absl::StatusOr<TypedProgram> program = CheckSpec(spec);
  ASSERT_THAT(program, IsOk());
  EXPECT_EQ(program->derived.blocks_per_stage, 14);
  EXPECT_EQ(program->derived.bubble_reduction_blocks, 2);
  EXPECT_EQ(program->derived.blocks_per_chunk, 14);
}

// As in Calculon, more stages than blocks is a valid uneven layout: one
// block per stage, the stages without a block shorten the bubble.
TEST(CheckSpec, UnevenLayoutAllowsMoreStagesThanBlocks) {
  TransformerTrainingMappingSpec spec = Gpt3Training();
  spec.model.num_blocks = 5;
  spec.parallelism.pipeline.schedule = OneForwardOneBackward{};
  spec.parallelism.pipeline.stage_layout = StageLayout::kUneven;
  absl::StatusOr<TypedProgram> program = CheckSpec(spec);
  ASSERT_THAT(program, IsOk());
  EXPECT_EQ(program->derived.blocks_per_stage, 1);
  EXPECT_EQ(program->derived.bubble_reduction_blocks, 3);
}

// An explicit layout (Megatron-LM's): the busiest rank paces the pipeline
// and the others' missing blocks shorten a 1F1B bubble.
TEST(CheckSpec, ExplicitStageBlocksDeriveTheBusiestRank) {
  TransformerTrainingMappingSpec spec = Gpt3Training();  // 96 blocks, p 8
  spec.parallelism.pipeline.schedule = OneForwardOneBackward{};
  spec.parallelism.pipeline.stage_blocks = {11, 12, 12, 12, 12, 12, 12, 13};
  absl::StatusOr<TypedProgram> program = CheckSpec(spec);
  ASSERT_THAT(program, IsOk());
  EXPECT_EQ(program->derived.blocks_per_stage, 13);
  EXPECT_EQ(program->derived.blocks_per_chunk, 13);
  EXPECT_EQ(program->derived.bubble_reduction_blocks, 8 * 13 - 96);
  // Interleaved: entry k on rank k % p; rank 0 holds 7 + 6 = 13 blocks,
  // priced as two chunks of 7; the interleaved bubble keeps its chunks.
  spec.parallelism.pipeline.schedule = InterleavedOneForwardOneBackward{2};
  spec.parallelism.pipeline.stage_blocks = {7, 6, 6, 6, 6, 6, 6, 5,
                                            6, 6, 6, 6, 6, 6, 6, 6};
  program = CheckSpec(spec);
  ASSERT_THAT(program, IsOk());
  EXPECT_EQ(program->derived.blocks_per_stage, 13);
  EXPECT_EQ(program->derived.blocks_per_chunk, 7);
  EXPECT_EQ(program->derived.bubble_reduction_blocks, 0);
}

TEST(CheckSpec, ExplicitStageBlocksReportEveryViolation) {
  TransformerTrainingMappingSpec spec = Gpt3Training();
  spec.parallelism.pipeline.schedule = OneForwardOneBackward{};
  spec.parallelism.pipeline.stage_layout = StageLayout::kUneven;
  spec.parallelism.pipeline.stage_blocks = {-1, 12, 12};
  EXPECT_EQ(
      Messages(spec),
      (std::vector<std::string>{
          "parallelism.pipeline.stage_layout uneven cannot be combined with "
          "parallelism.pipeline.stage_blocks, which lays the blocks out "
          "itself; use even",
          "parallelism.pipeline.stage_blocks has 3 entries but needs one per "
          "pipeline stage and virtual stage: parallelism.pipeline.degree (8) "
          "* 1 virtual stages of 1f1b",
          "parallelism.pipeline.stage_blocks[0] (-1) must be at least 0"}));
  spec.parallelism.pipeline.stage_layout = StageLayout::kEven;
  spec.parallelism.pipeline.stage_blocks = {12, 12, 12, 12, 12, 12, 12, 13};
  EXPECT_EQ(Messages(spec),
            std::vector<std::string>{
                "parallelism.pipeline.stage_blocks sums to 97 blocks but "
                "model.num_blocks (96): every block sits on exactly one "
                "stage"});
  // A one-route schedule in Megatron-LM's order takes a layout, simulated
  // or not; a V (zb_v, dualpipe_v) or two routes (dualpipe) do not.
  spec.parallelism.pipeline.stage_blocks = {11, 12, 12, 13, 13, 12, 12, 11};
  for (const PipelineSchedule& schedule :
       {PipelineSchedule(GPipe{}), PipelineSchedule(ZeroBubbleH1{}),
        PipelineSchedule(ZeroBubbleH2{})}) {
    spec.parallelism.pipeline.schedule = schedule;
    EXPECT_THAT(Messages(spec), ::testing::IsEmpty());
  }
  spec.parallelism.pipeline.schedule = ZeroBubbleV{};
  spec.parallelism.pipeline.stage_blocks = {6, 6, 6, 6, 6, 6, 6, 6,
                                            6, 6, 6, 6, 6, 6, 6, 6};
  EXPECT_EQ(Messages(spec),
            std::vector<std::string>{
                "parallelism.pipeline.stage_blocks cannot be combined with "
                "parallelism.pipeline.schedule zb_v: its route does not put "
                "model stage k on rank k % degree (Megatron-LM's layout "
                "order); use 1f1b, interleaved_1f1b, gpipe, zb_h1 or "
                "zb_h2"});
}

// One rule per row: the code, the mutation, the field and the exact message.
struct RuleCase {
  const char* name;
  ErrorCode code;
  std::function<void(TransformerTrainingMappingSpec&)> mutate;
  const char* field;
  const char* message;
};

class TrainingRuleTest : public ::testing::TestWithParam<RuleCase> {};

TEST_P(TrainingRuleTest, ReportsExactlyThisViolation) {
  TransformerTrainingMappingSpec spec = Gpt3Training();
  GetParam().mutate(spec);
  const std::vector<Violation> violations = FindViolations(spec);
  ASSERT_EQ(violations.size(), 1u) << Messages(spec).front();
  EXPECT_EQ(violations[0].field, GetParam().field);
  EXPECT_EQ(violations[0].message, GetParam().message);
  EXPECT_EQ(violations[0].code, GetParam().code);
  // CheckSpec carries the same error through its status.
  EXPECT_THAT(CheckSpec(spec),
              FieldErrorsAre(::testing::ElementsAre(violations[0])));
}

INSTANTIATE_TEST_SUITE_P(
    Rules, TrainingRuleTest,
    ::testing::Values(
        RuleCase{"hidden_positive", ErrorCode::kOutOfRange,
                 [](auto& s) { s.model.hidden = 0; }, "model.hidden",
                 "model.hidden (0) must be positive"},
        RuleCase{"grad_reduce_datatype", ErrorCode::kInconsistent,
                 [](auto& s) {
                   s.options.grad_reduce_datatype = DataType::kBFloat16;
                 },
                 "options.grad_reduce_datatype",
                 "options.grad_reduce_datatype is bfloat16, but the "
                 "gradients are reduced in float32 or in options.datatype "
                 "(float16)"},
        RuleCase{
            "world_size",
            ErrorCode::kNotDivisible,  // x01 is the adapter's; x02: batch vs d
            [](auto& s) { s.parallelism.data.degree = 3; },
            "batch.global_batch_size",
            "batch.global_batch_size (64) must be divisible by "
            "parallelism.data.degree (3)"},
        RuleCase{"local_batch", ErrorCode::kNotDivisible,  // x03
                 [](auto& s) { s.batch.microbatch_size = 3; },
                 "batch.microbatch_size",
                 "local batch size (batch.global_batch_size 64 / "
                 "parallelism.data.degree 1 = 64) must be divisible by "
                 "batch.microbatch_size (3)"},
        RuleCase{"v_at_most_blocks", ErrorCode::kOutOfRange,  // x04
                 [](auto& s) {
                   s.parallelism.pipeline.schedule =
                       InterleavedOneForwardOneBackward{24};
                 },
                 "parallelism.pipeline.schedule.virtual_stages",
                 "parallelism.pipeline.schedule.virtual_stages (24) must be "
                 "at most blocks_per_stage (12)"},
        RuleCase{"v_divides_blocks", ErrorCode::kNotDivisible,  // x05
                 [](auto& s) {
                   s.parallelism.pipeline.schedule =
                       InterleavedOneForwardOneBackward{5};
                 },
                 "parallelism.pipeline.schedule.virtual_stages",
                 "parallelism.pipeline.schedule.virtual_stages (5) must "
                 "divide blocks_per_stage (12)"},
        RuleCase{"v_at_least_two", ErrorCode::kOutOfRange,
                 [](auto& s) {
                   s.parallelism.pipeline.schedule =
                       InterleavedOneForwardOneBackward{1};
                 },
                 "parallelism.pipeline.schedule.virtual_stages",
                 "parallelism.pipeline.schedule.virtual_stages (1) must be at "
                 "least 2 (one virtual stage is the 1f1b schedule)"},
        RuleCase{"hidden_split", ErrorCode::kNotDivisible,  // x06
                 [](auto& s) { s.model.hidden = 12289; }, "model.hidden",
                 "model.hidden (12289) must be divisible by "
                 "parallelism.tensor.degree (8)"},
        RuleCase{"feedforward_split", ErrorCode::kNotDivisible,
                 [](auto& s) { s.model.feedforward = 49156; },
                 "model.feedforward",
                 "model.feedforward (49156) must be divisible by "
                 "parallelism.tensor.degree (8)"},
        RuleCase{"kv_heads_split", ErrorCode::kNotDivisible,
                 [](auto& s) { s.model.kv_heads = 4; }, "model.kv_heads",
                 "model.kv_heads (4) must be divisible by "
                 "parallelism.tensor.degree (8)"},
        RuleCase{"kv_heads_group", ErrorCode::kNotDivisible,
                 [](auto& s) { s.model.kv_heads = 64; }, "model.kv_heads",
                 "model.kv_heads (64) must divide model.attn_heads (96): "
                 "each key/value head serves a whole group of query heads"},
        RuleCase{"multiquery_with_groups", ErrorCode::kInconsistent,
                 [](auto& s) {
                   s.model.kv_heads = 8;
                   s.options.attention = AttentionType::kMultiQuery;
                 },
                 "options.attention",
                 "options.attention multiquery (Calculon's one key/value "
                 "head, replicated on every TP rank) cannot be combined with "
                 "model.kv_heads (8) < model.attn_heads (96): grouped-query "
                 "attention is set by model.kv_heads alone; use multihead"},
        RuleCase{"learned_positions_cover_the_sequence", ErrorCode::kOutOfRange,
                 [](auto& s) {
                   s.model.vocabulary.size = 50257;
                   s.model.vocabulary.position = PositionEmbedding::kLearned;
                   s.model.vocabulary.max_positions = 1024;
                 },
                 "model.vocabulary.max_positions",
                 "model.vocabulary.max_positions (1024) must be at least "
                 "model.seq_size (2048) with a learned position embedding"},
        RuleCase{"vocabulary_not_negative", ErrorCode::kOutOfRange,
                 [](auto& s) { s.model.vocabulary.size = -1; },
                 "model.vocabulary.size",
                 "model.vocabulary.size (-1) must be at least 0 (0: no "
                 "embedding and no output layer, Calculon's model)"},
        RuleCase{"vocabulary_padding_positive", ErrorCode::kOutOfRange,
                 [](auto& s) { s.model.vocabulary.divisible_by = 0; },
                 "model.vocabulary.divisible_by",
                 "model.vocabulary.divisible_by (0) must be positive"},
        RuleCase{"tier_too_small", ErrorCode::kInconsistent,  // x07
                 [](auto& s) {
                   s.parallelism.tensor.degree = 16;
                   s.batch.global_batch_size = 64;
                 },
                 "system.networks[0].size",
                 "network tier 0 isn't big enough: parallelism.tensor.degree "
                 "(16) mapped to it needs 16 processors, but "
                 "system.networks[0].size is 8"},
        RuleCase{"tier_not_filled", ErrorCode::kInconsistent,  // x08
                 [](auto& s) {
                   s.parallelism.tensor.degree = 2;
                   s.parallelism.pipeline.degree = 3;
                   s.parallelism.pipeline.schedule = OneForwardOneBackward{};
                   s.parallelism.pipeline.network_tier = 0;
                 },
                 "system.networks[0].size",
                 "network tier 0 isn't fully used: parallelism.tensor.degree "
                 "(2) * parallelism.pipeline.degree (3) mapped to it use 6 "
                 "processors, which does not divide system.networks[0].size "
                 "(8) although system.networks[0].must_be_filled is true"},
        RuleCase{"tier_shared_too_small", ErrorCode::kInconsistent,
                 [](auto& s) { s.parallelism.pipeline.network_tier = 0; },
                 "system.networks[0].size",
                 "network tier 0 isn't big enough: parallelism.tensor.degree "
                 "(8) * parallelism.pipeline.degree (8) mapped to it need 64 "
                 "processors, but system.networks[0].size is 8"},
        RuleCase{"tier_out_of_range", ErrorCode::kOutOfRange,
                 [](auto& s) { s.parallelism.data.network_tier = 2; },
                 "parallelism.data.network_tier",
                 "parallelism.data.network_tier (2) must name one of the "
                 "system's 2 network tiers (0 to 1)"},
        RuleCase{"optimizer_sharding_d1", ErrorCode::kInconsistent,  // x10
                 [](auto& s) { s.parallelism.data.sharding = ShardOptimizer{}; },
                 "parallelism.data.sharding",
                 "parallelism.data.sharding (optimizer) requires "
                 "parallelism.data.degree > 1 (got 1)"},
        RuleCase{"interleaved_p1", ErrorCode::kInconsistent,  // x12
                 [](auto& s) {
                   s.parallelism.pipeline.degree = 1;
                   s.parallelism.pipeline.schedule =
                       InterleavedOneForwardOneBackward{2};
                   s.batch.global_batch_size = 8;
                 },
                 "parallelism.pipeline.schedule",
                 "parallelism.pipeline.schedule interleaved_1f1b with "
                 "parallelism.pipeline.schedule.virtual_stages (2) requires "
                 "parallelism.pipeline.degree > 1 (got 1); use single_stage"},
        RuleCase{"one_f_one_b_p1", ErrorCode::kInconsistent,
                 [](auto& s) {
                   s.parallelism.pipeline.degree = 1;
                   s.parallelism.pipeline.schedule = OneForwardOneBackward{};
                 },
                 "parallelism.pipeline.schedule",
                 "parallelism.pipeline.schedule 1f1b requires "
                 "parallelism.pipeline.degree > 1 (got 1); use single_stage"},
        RuleCase{
            "single_stage_p8", ErrorCode::kInconsistent,
            [](auto& s) { s.parallelism.pipeline.schedule = SingleStage{}; },
            "parallelism.pipeline.schedule",
            "parallelism.pipeline.schedule single_stage requires "
            "parallelism.pipeline.degree 1, but "
            "parallelism.pipeline.degree (8) is larger; use 1f1b or "
            "interleaved_1f1b"},
        RuleCase{
            "forward_only_in_training", ErrorCode::kInconsistent,
            [](auto& s) { s.parallelism.pipeline.schedule = ForwardOnly{}; },
            "parallelism.pipeline.schedule",
            "parallelism.pipeline.schedule forward_only is an inference "
            "schedule; training uses single_stage (pipeline degree 1), "
            "1f1b or interleaved_1f1b"},
        RuleCase{"offload_few_blocks", ErrorCode::kUnsupported,  // x13
                 [](auto& s) {
                   s.parallelism.pipeline.degree = 48;
                   s.parallelism.pipeline.schedule = OneForwardOneBackward{};
                   s.options.offload.weights = true;
                 },
                 "options.offload",
                 "options.offload (weights) requires blocks_per_stage >= 3 "
                 "(got 2)"},
        RuleCase{"dp_overlap_d1", ErrorCode::kInconsistent,  // x14
                 [](auto& s) { s.parallelism.data.overlap = true; },
                 "parallelism.data.overlap",
                 "parallelism.data.overlap requires parallelism.data.degree "
                 "> 1 (got 1)"},
        RuleCase{"tp_overlap_t1", ErrorCode::kInconsistent,  // x17
                 [](auto& s) {
                   s.parallelism.tensor.degree = 1;
                   s.parallelism.tensor.overlap = TensorOverlap::kRing;
                 },
                 "parallelism.tensor.overlap",
                 "parallelism.tensor.overlap (ring) requires "
                 "parallelism.tensor.degree > 1 (got 1)"},
        RuleCase{"ag_redo_with_full", ErrorCode::kInconsistent,
                 [](auto& s) {
                   s.parallelism.tensor.communication =
                       ReduceScatterAllGather{true};
                 },
                 "parallelism.tensor.communication.all_gather_redo",
                 "parallelism.tensor.communication.all_gather_redo cannot be "
                 "combined with parallelism.recompute (full): full recompute "
                 "already redoes every all-gather"},
        RuleCase{"batch_seq_split", ErrorCode::kNotDivisible,
                 [](auto& s) {
                   s.model.seq_size = 2047;
                   s.parallelism.tensor.communication =
                       EdgeReduceScatterAllGather{};
                 },
                 "parallelism.tensor.communication",
                 "batch.microbatch_size (1) * model.seq_size (2047) = 2047 "
                 "must be divisible by parallelism.tensor.degree (8) with "
                 "parallelism.tensor.communication p2p_rs_ag: its activations "
                 "are split t ways"},
        RuleCase{"datatype_missing", ErrorCode::kInconsistent,
                 [](auto& s) {
                   s.system.vector.rates[DataType::kFloat8] =
                       s.system.vector.rates[DataType::kFloat16];
                   s.options.datatype = DataType::kFloat8;
                 },
                 "options.datatype",
                 "options.datatype (float8) is not supported by system.matrix "
                 "(it has: float16)"},
        RuleCase{"efficiency_not_descending", ErrorCode::kInvalidValue,
                 [](auto& s) {
                   s.system.matrix.rates[DataType::kFloat16]
                       .gflops_efficiency[1]
                       .threshold = 128;
                 },
                 "system.matrix.float16.gflops_efficiency[1][0]",
                 "system.matrix.float16.gflops_efficiency thresholds must be "
                 "strictly descending: "
                 "system.matrix.float16.gflops_efficiency[1][0] (128) is not "
                 "below system.matrix.float16.gflops_efficiency[0][0] (128)"},
        RuleCase{"efficiency_last_not_zero", ErrorCode::kInvalidValue,
                 [](auto& s) { s.system.mem1.mb_efficiency.pop_back(); },
                 "system.mem1.MB_efficiency[2][0]",
                 "system.mem1.MB_efficiency must end with threshold 0 so that "
                 "every size finds an efficiency "
                 "(system.mem1.MB_efficiency[2][0] is 1)"},
        RuleCase{
            "efficiency_range", ErrorCode::kOutOfRange,
            [](auto& s) { s.system.mem2.mb_efficiency[0].efficiency = 1.5; },
            "system.mem2.MB_efficiency[0][1]",
            "system.mem2.MB_efficiency[0][1] (1.5) must be between 0.001 and "
            "1 (a fraction of the peak)"},
        RuleCase{"bandwidth", ErrorCode::kOutOfRange,
                 [](auto& s) { s.system.networks[1].bandwidth_gbps = -25; },
                 "system.networks[1].bandwidth",
                 "system.networks[1].bandwidth (-25) must be between 0.001 "
                 "and 1000000000 GB/s (a memory or link rate)"},
        RuleCase{"processor_usage", ErrorCode::kOutOfRange,
                 [](auto& s) { s.system.networks[0].processor_usage = 1; },
                 "system.networks[0].processor_usage",
                 "system.networks[0].processor_usage (1) must be between 0 "
                 "and 0.99 (the fraction of the processor a link's transfers "
                 "use)"},
        RuleCase{"p2p_offset", ErrorCode::kWrongType,
                 [](auto& s) { s.system.networks[0].p2p.offset = 0.5; },
                 "system.networks[0].ops.p2p[1]",
                 "system.networks[0].ops.p2p[1] (0.5) must be null: "
                 "point-to-point sends have no offset"},
        RuleCase{"collective_offset", ErrorCode::kWrongType,
                 [](auto& s) {
                   s.system.networks[0].all_reduce.offset = std::nullopt;
                 },
                 "system.networks[0].ops.all_reduce[1]",
                 "system.networks[0].ops.all_reduce[1] must be a number: a "
                 "collective needs an offset"},
        RuleCase{"tflops_nan", ErrorCode::kOutOfRange,
                 [](auto& s) {
                   s.system.vector.rates[DataType::kFloat16].tflops = NAN;
                 },
                 "system.vector.float16.tflops",
                 "system.vector.float16.tflops (nan) must be between 0.001 "
                 "and 1000000000 TFLOP/s (an engine's peak rate)"},
        RuleCase{"microscaled_recipe_without_float4", ErrorCode::kUnsupported,
                 [](auto& s) {
                   for (Processor* p : {&s.system.matrix, &s.system.vector}) {
                     p->rates[DataType::kFloat8] =
                         p->rates.at(DataType::kFloat16);
                   }
                   s.options.gemm_datatype = DataType::kFloat8;
                   s.options.recipe = QuantizationRecipe::kMxfp8;
                 },
                 "options.recipe",
                 "options.recipe mxfp8 needs a GPU with float4 tensor cores, "
                 "but system.matrix has no float4 rate"},
        RuleCase{"achievable_above_peak", ErrorCode::kOutOfRange,
                 [](auto& s) {
                   ProcessorRate& rate =
                       s.system.matrix.rates[DataType::kFloat16];
                   rate.achievable_tflops = rate.tflops * 2;
                 },
                 "system.matrix.float16.achievable_tflops",
                 "system.matrix.float16.achievable_tflops (624) must not "
                 "exceed system.matrix.float16.tflops (312): a measured rate "
                 "is at most the peak"},
        RuleCase{"measured_busbw_order", ErrorCode::kInvalidValue,
                 [](auto& s) {
                   s.system.networks[0].all_reduce.measured_busbw = {
                       {4, 370}, {8, 480}, {0, 370}};
                 },
                 "system.networks[0].measured_busbw.all_reduce[1][0]",
                 "system.networks[0].measured_busbw.all_reduce thresholds "
                 "must be strictly descending: "
                 "system.networks[0].measured_busbw.all_reduce[1][0] (8) is "
                 "not below system.networks[0].measured_busbw.all_reduce[0][0] "
                 "(4)"},
        RuleCase{"measured_busbw_rate", ErrorCode::kOutOfRange,
                 [](auto& s) {
                   s.system.networks[0].all_gather.measured_busbw = {{0, 0}};
                 },
                 "system.networks[0].measured_busbw.all_gather[0][1]",
                 "system.networks[0].measured_busbw.all_gather[0][1] (0) must "
                 "be between 0.001 and 1000000000 GB/s (a memory or link "
                 "rate)"},
        RuleCase{"bandwidth_denormal", ErrorCode::kOutOfRange,
                 [](auto& s) { s.system.networks[1].bandwidth_gbps = 5e-324; },
                 "system.networks[1].bandwidth",
                 "system.networks[1].bandwidth (5e-324) must be between 0.001 "
                 "and 1000000000 GB/s (a memory or link rate)"},
        RuleCase{
            "offset_below_minus_two", ErrorCode::kOutOfRange,
            [](auto& s) { s.system.networks[0].all_reduce.offset = -1e300; },
            "system.networks[0].ops.all_reduce[1]",
            "system.networks[0].ops.all_reduce[1] (-1e+300) must be "
            "between -2 and 1000 (a collective's size offset; 1 + offset "
            "/ n must stay >= 0 for groups of n >= 2)"},
        RuleCase{
            "too_many_network_tiers", ErrorCode::kOutOfRange,
            [](auto& s) { s.system.networks.resize(9, s.system.networks[1]); },
            "system.networks",
            "system.networks lists 9 network tiers, more than the limit "
            "of 8 (a real system has a few: NVLink, node, rack, pod; the "
            "search tries every tier for every parallel dimension)"},
        RuleCase{
            "memory_efficiency_tiny", ErrorCode::kOutOfRange,
            [](auto& s) { s.system.mem1.mb_efficiency[3].efficiency = 1e-300; },
            "system.mem1.MB_efficiency[3][1]",
            "system.mem1.MB_efficiency[3][1] (1e-300) must be between "
            "0.001 and 1 (a fraction of the peak)"}),
    [](const ::testing::TestParamInfo<RuleCase>& info) {
      return std::string(info.param.name);
    });

// A mixture of experts (16 experts, top 2) on the GPT-3 mapping above: t 8,
// p 8, d 2, ZeRO-1, ep 2 (etp = t), latent attention off.
TransformerTrainingMappingSpec MoeTraining() {
  TransformerTrainingMappingSpec spec = Gpt3Training();
  MixtureOfExperts moe;
  moe.experts = 16;
  moe.topk = 2;
  moe.ffn = 8192;
  spec.model.moe = moe;
  spec.parallelism.data.degree = 2;
  spec.parallelism.data.sharding = ShardOptimizer{};
  spec.parallelism.expert.degree = 2;
  spec.parallelism.expert.network_tier = 1;
  return spec;
}

TEST(CheckSpec, MixtureOfExpertsDerivesExpertRanks) {
  TransformerTrainingMappingSpec spec = MoeTraining();
  spec.model.moe->layer_pattern = std::string(48, '0') + std::string(48, '1');
  absl::StatusOr<TypedProgram> program = CheckSpec(spec);
  ASSERT_THAT(program, IsOk());
  const DerivedValues& d = program->derived;
  EXPECT_EQ(d.expert, 2);
  EXPECT_EQ(d.expert_tensor, 8);
  EXPECT_EQ(d.expert_data, 1);  // t * cp * d / (etp * ep) = 8 * 2 / 16
  EXPECT_EQ(d.moe_blocks, 48);
  // Stages hold 12 blocks in order: stages 4 to 7 are all MoE.
  EXPECT_EQ(d.stage_moe_blocks, 12);
  EXPECT_EQ(d.sharding, ShardingStage::kOptimizer);
  EXPECT_EQ(d.sharding_group, 2);
  EXPECT_EQ(d.world_size, 128);
  spec.parallelism.context.degree = 2;
  spec.parallelism.context.network_tier = 1;
  program = CheckSpec(spec);
  ASSERT_THAT(program, IsOk());
  EXPECT_EQ(program->derived.world_size, 256);
  EXPECT_EQ(program->derived.expert_data, 2);
}

class MoeRuleTest : public ::testing::TestWithParam<RuleCase> {};

TEST_P(MoeRuleTest, ReportsExactlyThisViolation) {
  TransformerTrainingMappingSpec spec = MoeTraining();
  ASSERT_THAT(CheckSpec(spec), IsOk());
  GetParam().mutate(spec);
  const std::vector<Violation> violations = FindViolations(spec);
  ASSERT_EQ(violations.size(), 1u)
      << (violations.empty() ? "none" : Messages(spec).front());
  EXPECT_EQ(violations[0].field, GetParam().field);
  EXPECT_EQ(violations[0].message, GetParam().message);
  EXPECT_EQ(violations[0].code, GetParam().code);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, MoeRuleTest,
    ::testing::Values(
        RuleCase{"topk_at_most_experts", ErrorCode::kOutOfRange,
                 [](auto& s) { s.model.moe->topk = 17; }, "model.moe.topk",
                 "model.moe.topk (17) must be at most model.moe.experts (16)"},
        RuleCase{"capacity_factor", ErrorCode::kOutOfRange,
                 [](auto& s) { s.model.moe->capacity_factor = 9; },
                 "model.moe.capacity_factor",
                 "model.moe.capacity_factor (9) must be between 1 (tokens "
                 "spread evenly) and experts / topk (8: every token at the "
                 "busiest expert)"},
        RuleCase{"layer_pattern_length", ErrorCode::kInvalidValue,
                 [](auto& s) { s.model.moe->layer_pattern = "0111"; },
                 "model.moe.layer_pattern",
                 "model.moe.layer_pattern (4 characters) must be empty "
                 "(every block MoE) or hold one '0' (dense) or '1' (MoE) per "
                 "block of model.num_blocks (96)"},
        RuleCase{"layer_pattern_dense", ErrorCode::kInconsistent,
                 [](auto& s) {
                   s.model.moe->layer_pattern = std::string(96, '0');
                 },
                 "model.moe.layer_pattern",
                 "model.moe.layer_pattern has no MoE block ('1'): a dense "
                 "model has model.moe null"},
        RuleCase{"ep_divides_experts", ErrorCode::kNotDivisible,
                 [](auto& s) {
                   s.model.moe->experts = 15;
                   s.model.moe->topk = 1;
                 },
                 "parallelism.expert.degree",
                 "parallelism.expert.degree (2) must divide "
                 "model.moe.experts (15)"},
        RuleCase{"etp_divides_expert_ffn", ErrorCode::kNotDivisible,
                 [](auto& s) { s.model.moe->ffn = 8196; },
                 "model.moe.ffn",
                 "model.moe.ffn (8196) must be divisible by the expert "
                 "tensor degree (8)"},
        RuleCase{"expert_ranks_fold", ErrorCode::kNotDivisible,
                 [](auto& s) { s.parallelism.expert.degree = 4; },
                 "parallelism.expert.degree",
                 "parallelism.expert.degree (4) * expert tensor degree (8) "
                 "must divide the ranks of a pipeline stage, "
                 "parallelism.tensor.degree * context.degree * data.degree "
                 "(16): expert parallelism is folded onto them"},
        RuleCase{"experts_need_moe", ErrorCode::kInconsistent,
                 [](auto& s) { s.model.moe.reset(); },
                 "parallelism.expert.degree",
                 "parallelism.expert.degree (2) needs experts to split: "
                 "model.moe is null"},
        RuleCase{"latent_attention_heads", ErrorCode::kInconsistent,
                 [](auto& s) {
                   s.model.latent_attention =
                       LatentAttention{0, 512, 96, 32, 128};
                   s.model.kv_heads = 8;
                 },
                 "model.kv_heads",
                 "model.kv_heads (8) must equal model.attn_heads (96) with "
                 "model.latent_attention: every head has its own key and "
                 "value from the shared latent"},
        RuleCase{"latent_attention_head_size", ErrorCode::kInconsistent,
                 [](auto& s) {
                   s.model.latent_attention =
                       LatentAttention{0, 512, 128, 64, 128};
                 },
                 "model.attn_size",
                 "model.attn_size (128) must equal "
                 "model.latent_attention.qk_head_dim + qk_rope_head_dim "
                 "(192): the size of a query and key head"},
        RuleCase{"latent_attention_split", ErrorCode::kNotDivisible,
                 [](auto& s) {
                   s.model.latent_attention =
                       LatentAttention{0, 500, 96, 32, 128};
                 },
                 "model.latent_attention.kv_lora_rank",
                 "model.latent_attention.kv_lora_rank (500) must be "
                 "divisible by parallelism.tensor.degree (8): every "
                 "latent-attention matrix is split t ways, as Megatron-LM's "
                 "accounting has it"},
        RuleCase{"mtp_needs_vocabulary", ErrorCode::kInconsistent,
                 [](auto& s) { s.model.mtp_layers = 1; }, "model.mtp_layers",
                 "model.mtp_layers (1) needs an output layer: "
                 "model.vocabulary.size must be positive (got 0)"},
        RuleCase{"context_chunks", ErrorCode::kNotDivisible,
                 [](auto& s) {
                   s.parallelism.context.degree = 2;
                   s.parallelism.context.network_tier = 1;
                   s.model.seq_size = 2050;
                 },
                 "model.seq_size",
                 "model.seq_size (2050) must be divisible by 2 * "
                 "parallelism.context.degree (2): each rank holds two "
                 "load-balanced causal chunks"},
        RuleCase{"context_batch_seq_split", ErrorCode::kNotDivisible,
                 [](auto& s) {
                   s.parallelism.context.degree = 2;
                   s.parallelism.context.network_tier = 1;
                   s.model.seq_size = 2056;
                   s.parallelism.tensor.communication =
                       ReduceScatterAllGather{};
                 },
                 "parallelism.tensor.communication",
                 "batch.microbatch_size (1) * model.seq_size (2056) / "
                 "parallelism.context.degree (2) = 1028 must be divisible by "
                 "parallelism.tensor.degree (8) with "
                 "parallelism.tensor.communication rs_ag: its activations are "
                 "split t ways"},
        RuleCase{"sharding_group", ErrorCode::kNotDivisible,
                 [](auto& s) {
                   s.parallelism.data.degree = 4;
                   s.batch.global_batch_size = 64;
                   s.parallelism.data.sharding = ShardParameters{3};
                 },
                 "parallelism.data.sharding.group",
                 "parallelism.data.sharding.group (3) must be 0 (all of "
                 "parallelism.data.degree) or a divisor of "
                 "parallelism.data.degree (4) above 1"},
        RuleCase{"tensor_overlap_with_moe", ErrorCode::kUnsupported,
                 [](auto& s) {
                   s.parallelism.tensor.overlap = TensorOverlap::kRing;
                 },
                 "parallelism.tensor.overlap",
                 "parallelism.tensor.overlap (ring) is not modelled with "
                 "model.moe: use none"}),
    [](const ::testing::TestParamInfo<RuleCase>& info) {
      return std::string(info.param.name);
    });

TEST(CheckSpec, ReportsEveryViolationInAFixedOrder) {
  TransformerTrainingMappingSpec spec = Gpt3Training();
  spec.model.hidden = 12289;
  spec.parallelism.data.degree = 0;
  spec.parallelism.pipeline.schedule = InterleavedOneForwardOneBackward{5};
  spec.parallelism.tensor.overlap = TensorOverlap::kPipe;
  spec.parallelism.tensor.degree = 1;
  spec.options.datatype = DataType::kBFloat16;
  const std::vector<std::string> expected = {
      "options.datatype (bfloat16) is not supported by system.matrix (it "
      "has: float16)",
      "options.datatype (bfloat16) is not supported by system.vector (it "
      "has: float16)",
      "parallelism.data.degree (0) must be at least 1",
      "parallelism.pipeline.schedule.virtual_stages (5) must divide "
      "blocks_per_stage (12)",
      "parallelism.tensor.overlap (pipe) requires parallelism.tensor.degree "
      "> 1 (got 1)",
  };
  EXPECT_EQ(Messages(spec), expected);
  absl::StatusOr<TypedProgram> program = CheckSpec(spec);
  ASSERT_THAT(program, StatusIs(absl::StatusCode::kInvalidArgument));
  std::string joined;
  for (const std::string& line : expected) {
    joined += (joined.empty() ? "" : "\n") + line;
  }
  EXPECT_EQ(std::string(program.status().message()), joined);
}

TEST(CheckSpec, HugeDegreesAreErrorsNotOverflows) {
  TransformerTrainingMappingSpec spec = Gpt3Training();
  spec.parallelism.tensor.degree = int64_t{1} << 62;
  spec.parallelism.data.degree = 4;
  spec.batch.global_batch_size = INT64_MAX;
  const std::vector<std::string> messages = Messages(spec);
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages[0],
            "parallelism.tensor.degree (4611686018427387904) must be at most "
            "2147483648 (the largest size, degree or batch a spec may give)");

  // Degrees within kMaxCount can still multiply past 64 bits.
  TransformerTrainingMappingSpec tiers = Gpt3Training();
  tiers.parallelism.tensor.degree = kMaxCount;
  tiers.parallelism.pipeline.degree = kMaxCount;
  tiers.parallelism.data.degree = 4;
  const std::vector<std::string> tier_messages = Messages(tiers);
  ASSERT_FALSE(tier_messages.empty());
  EXPECT_EQ(tier_messages[0],
            "world size parallelism.tensor.degree (2147483648) * "
            "parallelism.pipeline.degree (2147483648) * "
            "parallelism.data.degree (4) * parallelism.context.degree (1) "
            "overflows 64-bit integers");
}

// Every integer of a spec has a maximum (kMaxCount unless less), reported
// with the field: sizes that would make the analysis overflow never pass.
TEST(CheckSpec, EveryCountHasAMaximum) {
  TransformerTrainingMappingSpec spec = Gpt3Training();
  spec.model.hidden = kMaxCount + 1;
  spec.model.moe = MixtureOfExperts{};
  spec.model.moe->experts = 8;
  spec.model.moe->topk = 2;
  spec.model.moe->ffn = 4096;
  spec.model.moe->shared_ffn = 3 * (int64_t{1} << 50);
  spec.parallelism.expert.tensor_degree = kMaxCount + 1;
  spec.batch.microbatch_size = kMaxCount + 1;
  const std::vector<Violation> violations = FindViolations(spec);
  std::vector<std::string> fields;
  for (const Violation& v : violations) fields.push_back(v.field);
  for (const char* field :
       {"model.hidden", "model.moe.shared_ffn",
        "parallelism.expert.tensor_degree", "batch.microbatch_size"}) {
    EXPECT_THAT(fields, ::testing::Contains(field)) << field;
  }
  // Every field the checker bounds has a maximum in the range table.
  for (const FieldRange& range : CheckedFieldRanges()) {
    EXPECT_GE(range.max, range.min) << range.field;
  }
}

// The shared experts' work is bounded like the routed experts': a size
// within kMaxCount whose work would overflow is refused on its field
// (issue 49: shared_ffn = 2^31 passed and the task IR went negative).
TEST(CheckSpec, SharedExpertWorkIsBounded) {
  TransformerTrainingMappingSpec spec = Gpt3Training();
  spec.model.moe = MixtureOfExperts{};
  spec.model.moe->experts = 8;
  spec.model.moe->topk = 2;
  spec.model.moe->ffn = 4096;
  spec.model.moe->shared_ffn = kMaxCount;
  spec.model.seq_size = int64_t{1} << 20;
  spec.batch = {int64_t{1} << 10, int64_t{1} << 10};
  bool named = false;
  for (const Violation& v : FindViolations(spec)) {
    named |= v.field == "model.moe.shared_ffn" &&
             v.message.find("moe.shared_ffn") != std::string::npos &&
             v.message.find("overflows") != std::string::npos;
  }
  EXPECT_TRUE(named);
}

// A network tier is checked whatever its degree (issue 49: an expert tier
// of -1 passed with the expert degree 1 and was printed as derived).
TEST(CheckSpec, ExpertTierIsCheckedAtDegreeOne) {
  for (const int64_t tier : {int64_t{-1}, int64_t{1} << 31, int64_t{7}}) {
    TransformerTrainingMappingSpec spec = Gpt3Training();
    spec.parallelism.expert.degree = 1;
    spec.parallelism.expert.network_tier = tier;
    std::vector<std::string> fields;
    for (const Violation& v : FindViolations(spec)) fields.push_back(v.field);
    EXPECT_THAT(fields, ::testing::Contains("parallelism.expert.network_tier"))
        << tier;
  }
}

TEST(CheckSpec, HugeModelsAreErrorsNotOverflows) {
  TransformerTrainingMappingSpec spec = Gpt3Training();
  spec.model.seq_size = int64_t{1} << 30;
  spec.model.hidden = int64_t{1} << 30;
  spec.parallelism.tensor.communication = ReduceScatterAllGather{};
  spec.batch.microbatch_size = int64_t{1} << 30;
  spec.batch.global_batch_size = int64_t{1} << 30;
  const std::vector<std::string> messages = Messages(spec);
  EXPECT_EQ(messages,
            (std::vector<std::string>{
                "one block's work 2 * b * s * hidden * feedforward (b = "
                "batch.microbatch_size, s = model.seq_size) overflows 64-bit "
                "integers",
                "one block's work 2 * b * s * hidden * attn_heads * attn_size "
                "(b = batch.microbatch_size, s = model.seq_size) overflows "
                "64-bit integers",
                "one block's work 4 * b * attn_heads * s * s * attn_size (b = "
                "batch.microbatch_size, s = model.seq_size) overflows 64-bit "
                "integers",
            }));
}

TEST(CheckSpec, QueryAndKeyValueHeadsSplitOverTensorParallelism) {
  TransformerTrainingMappingSpec spec = Gpt3Training();
  spec.model.attn_heads = 100;
  spec.model.kv_heads = 100;
  EXPECT_EQ(Messages(spec),
            (std::vector<std::string>{
                "model.attn_heads (100) must be divisible by "
                "parallelism.tensor.degree (8)"}));
  spec.model.kv_heads = 4;  // reported when it differs from attn_heads
  EXPECT_EQ(Messages(spec),
            (std::vector<std::string>{
                "model.attn_heads (100) must be divisible by "
                "parallelism.tensor.degree (8)",
                "model.kv_heads (4) must be divisible by "
                "parallelism.tensor.degree (8)"}));
}

TEST(CheckSpec, PaddedVocabularyIsDerived) {
  TransformerTrainingMappingSpec spec = Gpt3Training();
  spec.model.vocabulary.size = 50257;  // GPT-2's tokenizer
  absl::StatusOr<TypedProgram> program = CheckSpec(spec);
  ASSERT_THAT(program, IsOk());
  // Padded to a multiple of 128 * t = 1024.
  EXPECT_EQ(program->derived.padded_vocabulary, 51200);
  spec.model.vocabulary.size = 0;
  program = CheckSpec(spec);
  ASSERT_THAT(program, IsOk());
  EXPECT_EQ(program->derived.padded_vocabulary, 0);
}

TEST(CheckSpec, HugeVocabulariesAreErrorsNotOverflows) {
  TransformerTrainingMappingSpec spec = Gpt3Training();
  spec.model.vocabulary.size = int64_t{1} << 31;
  spec.model.vocabulary.divisible_by = int64_t{1} << 31;
  spec.batch = {64, 64};  // 2 * 64 * 2048 * 12288 * 2^34 > 2^63
  EXPECT_THAT(Messages(spec),
              ::testing::Contains(::testing::HasSubstr(
                  "one block's work 2 * b * s * hidden * padded vocabulary")));
  spec.model.vocabulary.size = (int64_t{1} << 31) + 1;
  EXPECT_THAT(Messages(spec),
              ::testing::Contains("model.vocabulary.size (2147483649) must be "
                                  "at most 2147483648"));
}

TEST(CheckSpec, InferenceSchedules) {
  TransformerInferenceMappingSpec spec = Gpt3Inference();
  spec.parallelism.pipeline.schedule = InterleavedOneForwardOneBackward{2};
  EXPECT_EQ(Messages(spec),
            std::vector<std::string>{
                "parallelism.pipeline.schedule interleaved_1f1b is a training "
                "schedule; inference uses single_stage (pipeline degree 1) or "
                "forward_only"});
  spec.parallelism.pipeline.schedule = SingleStage{};
  EXPECT_EQ(Messages(spec),
            std::vector<std::string>{
                "parallelism.pipeline.schedule single_stage requires "
                "parallelism.pipeline.degree 1, but "
                "parallelism.pipeline.degree (2) is larger; use forward_only"});
  spec.parallelism.pipeline.degree = 1;
  EXPECT_TRUE(Messages(spec).empty());
  spec.parallelism.pipeline.schedule = ForwardOnly{};
  EXPECT_EQ(Messages(spec),
            std::vector<std::string>{
                "parallelism.pipeline.schedule forward_only requires "
                "parallelism.pipeline.degree > 1 (got 1); use single_stage"});
}

TEST(CheckSpec, InferenceHasNoOptimizerToOffload) {
  TransformerInferenceMappingSpec spec = Gpt3Inference();
  spec.parallelism.pipeline.degree = 8;
  spec.options.offload.optimizer = true;
  EXPECT_EQ(Messages(spec),
            std::vector<std::string>{
                "options.offload.optimizer requires a training spec: "
                "inference keeps no optimizer state"});
}

TEST(CheckSpec, OutOfMemoryIsNotTheCheckersConcern) {
  // Oracle x09: Calculon rejects it only in its memory-capacity check.
  TransformerTrainingMappingSpec spec = Gpt3Training();
  spec.parallelism.recompute = RecomputePolicy::kNone;
  spec.parallelism.tensor.communication = ReduceScatterAllGather{};
  EXPECT_THAT(CheckSpec(spec), IsOk());
}

TEST(CheckSpec, EmptySpecReportsWithoutCrashing) {
  const std::vector<std::string> training =
      Messages(TransformerTrainingMappingSpec{});
  EXPECT_FALSE(training.empty());
  const std::vector<std::string> inference =
      Messages(TransformerInferenceMappingSpec{});
  EXPECT_FALSE(inference.empty());
}

}  // namespace
}  // namespace blueprint
