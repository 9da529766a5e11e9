// The Megatron-LM adapter end to end: the Calculon cases of Korthikanti et
// al. 2022 as Megatron-LM command lines, the documented defaults, the
// checker after the import, and Megatron-LM's own launch scripts.
#include "core/adapters/megatron.h"

#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "core/adapters/megatron_test_util.h"
#include "core/base/field_errors.h"
#include "core/spec/check.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "core/spec/spec_json.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using megatron_test::A100;
using megatron_test::Args;
using megatron_test::CalculonCase;
using megatron_test::FlagsFile;
using megatron_test::H100WithBfloat16;
using megatron_test::kModel;

// Korthikanti et al. 2022 (arXiv 2205.05198) as Megatron-LM command lines:
// the configurations of Calculon's validation (MODEL.md §8). "full" is full
// recompute without sequence parallelism; "seqsel" is selective recompute
// with sequence parallelism.
struct Korthikanti {
  const char* oracle_case;
  const char* command_line;
};

class KorthikantiTest : public testing::TestWithParam<Korthikanti> {};

TEST_P(KorthikantiTest, MatchesTheCalculonCase) {
  absl::StatusOr<MappingSpec> megatron =
      FromMegatronArgs(Args(GetParam().command_line), A100());
  ASSERT_TRUE(megatron.ok()) << megatron.status();
  EXPECT_TRUE(CheckSpec(*megatron).ok());
  // Megatron-LM's model has biases on its linear layers, and the import
  // counts bytes as Megatron-LM's mixed precision does; Calculon's block has
  // neither. Without --vocab-size there is no vocabulary, as in Calculon.
  auto& s = std::get<TransformerTrainingMappingSpec>(*megatron);
  EXPECT_TRUE(s.model.linear_bias);
  EXPECT_EQ(s.options.precision, PrecisionAccounting::kMegatronMixed);
  // The import selects the refined profile (Megatron-Core's fused
  // attention); the mapping is Calculon's case all the same.
  EXPECT_EQ(s.options.profile, ModelProfile::kRefined);
  s.model.linear_bias = false;
  s.options.precision = PrecisionAccounting::kCalculon;
  s.options.profile = ModelProfile::kCalculon;
  // Calculon's files carry no model name, Megatron-LM's flags neither, and
  // the oracle cases use the documented defaults (fp16, tiers 0/1/1, no
  // fused activation): the rest of the specs is equal, not only the model,
  // degrees, schedule, batch, recompute and TP communication.
  EXPECT_EQ(SpecToJson(*megatron),
            SpecToJson(CalculonCase(GetParam().oracle_case)));
}

INSTANTIATE_TEST_SUITE_P(
    Paper, KorthikantiTest,
    testing::Values(
        Korthikanti{"v23_22B_t8_full_paperval",
                    "--num-layers 48 --hidden-size 6144 "
                    "--num-attention-heads 64 --seq-length 2048 "
                    "--tensor-model-parallel-size 8 --world-size 8 "
                    "--micro-batch-size 4 --global-batch-size 4 "
                    "--recompute-granularity full --recompute-method uniform "
                    "--fp16"},
        Korthikanti{"v09_175B_t8p8_v3_full_ar_paperval",
                    "--num-layers=96 --hidden-size=12288 "
                    "--num-attention-heads=96 --seq-length=2048 "
                    "--tensor-model-parallel-size=8 "
                    "--pipeline-model-parallel-size=8 "
                    "--num-layers-per-virtual-pipeline-stage=4 "
                    "--world-size=64 --micro-batch-size=1 "
                    "--global-batch-size=64 --recompute-granularity=full "
                    "--recompute-method=uniform --fp16"},
        Korthikanti{"v14_175B_t8p8_seqsel_redo",
                    "--num-layers 96 --hidden-size 12288 "
                    "--num-attention-heads 96 --seq-length 2048 "
                    "--tensor-model-parallel-size 8 "
                    "--pipeline-model-parallel-size 8 "
                    "--num-layers-per-virtual-pipeline-stage 4 "
                    "--world-size 64 --micro-batch-size 1 "
                    "--global-batch-size 64 --sequence-parallel "
                    "--recompute-granularity selective --fp16"},
        Korthikanti{"v24_530B_t8p35_v3_seqsel",
                    "--num-layers 105 --hidden-size 20480 "
                    "--num-attention-heads 128 --seq-length 2048 "
                    "--tensor-model-parallel-size 8 "
                    "--pipeline-model-parallel-size 35 "
                    "--virtual-pipeline-model-parallel-size 3 "
                    "--world-size 280 --micro-batch-size 1 "
                    "--global-batch-size 280 --sequence-parallel "
                    "--recompute-granularity selective --fp16"},
        Korthikanti{"v26_1T_t8p64_full_paperval",
                    "--num-layers 128 --hidden-size 25600 "
                    "--num-attention-heads 160 --kv-channels 160 "
                    "--ffn-hidden-size 102400 --seq-length 2048 "
                    "--tensor-model-parallel-size 8 "
                    "--pipeline-model-parallel-size 64 --world-size 512 "
                    "--micro-batch-size 1 --global-batch-size 512 "
                    "--recompute-granularity full --recompute-method uniform "
                    "--fp16"}),
    [](const testing::TestParamInfo<Korthikanti>& info) {
      return std::string(info.param.oracle_case).substr(0, 3);
    });

TEST(Megatron, DocumentedDefaults) {
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      Args("--num-layers 24 --hidden-size 1024 --num-attention-heads 16 "
           "--seq-length 1024 --micro-batch-size 2 "
           "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
           "--world-size 16 --sequence-parallel"),
      A100());
  ASSERT_TRUE(spec.ok()) << spec.status();
  const auto& s = std::get<TransformerTrainingMappingSpec>(*spec);
  EXPECT_EQ(s.model.name, "");
  EXPECT_EQ(s.model.feedforward, 4096);
  EXPECT_EQ(s.model.attn_size, 64);
  // Megatron-LM's architecture defaults; no vocabulary without --vocab-size.
  EXPECT_EQ(s.model.kv_heads, 16);
  EXPECT_EQ(s.model.mlp, MlpType::kPlain);
  EXPECT_EQ(s.model.norm, NormType::kLayerNorm);
  EXPECT_TRUE(s.model.linear_bias);
  EXPECT_EQ(s.model.vocabulary.size, 0);
  EXPECT_EQ(s.model.vocabulary.divisible_by, 128);
  EXPECT_TRUE(s.model.vocabulary.tied);
  EXPECT_EQ(s.model.vocabulary.position, PositionEmbedding::kNone);
  EXPECT_EQ(s.model.vocabulary.max_positions, 0);
  EXPECT_EQ(s.options.precision, PrecisionAccounting::kMegatronMixed);
  EXPECT_EQ(s.parallelism.data.degree, 4);
  EXPECT_EQ(s.batch.global_batch_size, 8);
  EXPECT_EQ(s.options.datatype, DataType::kFloat32);
  EXPECT_FALSE(s.options.fused_activation);
  EXPECT_EQ(s.options.attention, AttentionType::kMultiHead);
  EXPECT_EQ(s.parallelism.tensor.overlap, TensorOverlap::kNone);
  EXPECT_EQ(s.parallelism.tensor.network_tier, 0);
  // A data group spans t d = 8 neighbouring ranks (one A100 node); a
  // pipeline group all 16.
  EXPECT_EQ(s.parallelism.pipeline.network_tier, 1);
  EXPECT_EQ(s.parallelism.data.network_tier, 0);
  EXPECT_EQ(s.parallelism.pipeline.stage_layout, StageLayout::kEven);
  EXPECT_TRUE(std::holds_alternative<OneForwardOneBackward>(
      s.parallelism.pipeline.schedule));
  EXPECT_EQ(s.parallelism.recompute, RecomputePolicy::kNone);
  // Sequence parallelism without selective recompute: no all-gather redo.
  EXPECT_FALSE(
      std::get<ReduceScatterAllGather>(s.parallelism.tensor.communication)
          .all_gather_redo);
}

TEST(Megatron, CheckerReportsWhatMegatronWouldReject) {
  // Megatron-LM requires num_layers % pipeline size == 0: the even layout
  // makes the checker say so.
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      Args("--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
           "--seq-length 2048 --micro-batch-size 1 "
           "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 7 "
           "--world-size 56 --fp16"),
      A100());
  ASSERT_TRUE(spec.ok()) << spec.status();
  const std::vector<Violation> violations = FindViolations(*spec);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].field, "parallelism.pipeline.stage_layout");
}

//----- Megatron-LM's own launch scripts
//-------------------------------------------

TEST(MegatronExamples, Gpt3175bImportsAndChecks) {
  std::vector<std::string> notes;
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      FlagsFile("train_gpt3_175b_distributed"), H100WithBfloat16(), &notes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  ASSERT_TRUE(program.ok()) << program.status();
  const auto& s = std::get<TransformerTrainingMappingSpec>(*spec);
  EXPECT_EQ(s.model.num_blocks, 96);
  EXPECT_EQ(s.model.hidden, 12288);
  EXPECT_EQ(s.parallelism.tensor.degree, 8);
  EXPECT_EQ(s.parallelism.pipeline.degree, 16);
  EXPECT_EQ(s.parallelism.data.degree, 8);
  EXPECT_EQ(s.batch.global_batch_size, 1536);
  EXPECT_EQ(s.options.datatype, DataType::kFloat16);
  ASSERT_EQ(notes.size(), 2u) << absl::StrJoin(notes, "\n");
  EXPECT_TRUE(absl::StartsWith(notes[0], "ignored 24 Megatron-LM flags"))
      << notes[0];
  EXPECT_TRUE(absl::StartsWith(notes[1], "without --vocab-size")) << notes[1];
}

TEST(MegatronExamples, Llama3InBfloat16ImportsAndChecks) {
  std::vector<std::string> notes;
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      FlagsFile("train_llama3_8b_h100_bf16"), H100WithBfloat16(), &notes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  ASSERT_TRUE(program.ok()) << program.status();
  const auto& s = std::get<TransformerTrainingMappingSpec>(*spec);
  EXPECT_EQ(s.model.kv_heads, 8);
  EXPECT_EQ(s.model.attn_size, 128);
  EXPECT_EQ(s.model.feedforward, 14336);
  EXPECT_EQ(s.model.mlp, MlpType::kGated);
  EXPECT_EQ(s.model.norm, NormType::kRmsNorm);
  EXPECT_FALSE(s.model.linear_bias);
  EXPECT_EQ(s.model.vocabulary.size, 128256);
  EXPECT_FALSE(s.model.vocabulary.tied);
  EXPECT_EQ(s.model.vocabulary.position, PositionEmbedding::kRope);
  EXPECT_EQ(s.options.datatype, DataType::kBFloat16);
  EXPECT_EQ(s.parallelism.data.degree, 8);
  EXPECT_TRUE(
      std::holds_alternative<ShardOptimizer>(s.parallelism.data.sharding));
  EXPECT_TRUE(s.parallelism.data.overlap);
  EXPECT_EQ(program->derived.padded_vocabulary, 128256);
  // Its --grad-reduce-in-bf16: the gradients are reduced in bfloat16.
  EXPECT_EQ(s.options.grad_reduce_datatype, DataType::kBFloat16);
  ASSERT_EQ(notes.size(), 2u) << absl::StrJoin(notes, "\n");
  // --context-parallel-size 1 is modelled, not ignored.
  EXPECT_TRUE(absl::StartsWith(notes[0], "ignored 46 Megatron-LM flags"))
      << notes[0];
  EXPECT_EQ(notes[1],
            "--sequence-parallel has no effect with one tensor-parallel rank, "
            "as in Megatron-LM");
}

// The script as it is sets DTYPE=fp8: Transformer Engine's FP8 GEMMs
// (--fp8-format hybrid) on bfloat16 activations, FP8 weights
// (--fp8-param-gather); the scaling recipe's flags change nothing modelled.
TEST(MegatronExamples, Llama3InFp8ImportsAndChecks) {
  std::vector<std::string> notes;
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      FlagsFile("train_llama3_8b_h100_fp8"), H100WithBfloat16(), &notes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(CheckSpec(*spec).ok()) << CheckSpec(*spec).status();
  const auto& s = std::get<TransformerTrainingMappingSpec>(*spec);
  EXPECT_EQ(s.options.datatype, DataType::kBFloat16);
  EXPECT_EQ(s.options.gemm_datatype, DataType::kFloat8);
  EXPECT_EQ(s.options.weight_datatype, DataType::kFloat8);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("--fp8-amax-history-len --fp8-amax-compute-algo"),
            std::string::npos)
      << notes[0];
  // FP8 weights are Transformer Engine's FP8 training: not without it.
  const absl::StatusOr<MappingSpec> alone = FromMegatronArgs(
      Args(std::string(kModel) + "--bf16 --fp8-param-gather"),
      H100WithBfloat16());
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(FieldErrorsOf(alone.status()).at(0).message,
            "--fp8-param-gather needs --fp8-format: FP8 weights are "
            "Transformer Engine's FP8 training");
}

}  // namespace
}  // namespace blueprint
