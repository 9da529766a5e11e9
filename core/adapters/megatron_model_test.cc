// The Megatron-LM adapter's model flags (megatron_model.cc): attention,
// the gated MLP, normalization and biases, the vocabulary and the position
// embedding, mixtures of experts, latent attention, multi-token prediction.
#include "core/adapters/megatron.h"

#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "core/adapters/megatron_test_util.h"
#include "core/base/field_errors.h"
#include "core/spec/check.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using megatron_test::A100;
using megatron_test::Args;
using megatron_test::Codes;
using megatron_test::Errors;
using megatron_test::Fields;
using megatron_test::Import;
using megatron_test::Notes;
using megatron_test::kModel;

//----- The model flags
//----------------------------------------------------------

TEST(MegatronModel, GroupedQueryAttention) {
  EXPECT_EQ(Import(std::string(kModel) + "--group-query-attention "
                                         "--num-query-groups 4")
                .model.kv_heads,
            4);
  // Megatron-LM's default number of groups is 1.
  EXPECT_EQ(
      Import(std::string(kModel) + "--group-query-attention").model.kv_heads,
      1);
  // Without --group-query-attention Megatron-LM ignores the groups.
  const std::string alone = std::string(kModel) + "--num-query-groups 4";
  EXPECT_EQ(Import(alone).model.kv_heads, 16);
  EXPECT_EQ(Notes(alone), std::vector<std::string>{
                              "--num-query-groups has no effect without "
                              "--group-query-attention, as in Megatron-LM: "
                              "multi-head attention (model.kv_heads = "
                              "--num-attention-heads)"});
  EXPECT_EQ(Import(std::string(kModel) + "--kv-channels 128").model.attn_size,
            128);
}

TEST(MegatronModel, GatedMlpAndItsDefaultSize) {
  const TransformerTrainingMappingSpec gated =
      Import(std::string(kModel) + "--swiglu");
  EXPECT_EQ(gated.model.mlp, MlpType::kGated);
  // int((4 * 1024 * 2 / 3) / 64) * 64 = 2688.
  EXPECT_EQ(gated.model.feedforward, 2688);
  EXPECT_EQ(Import(std::string(kModel) + "--swiglu --ffn-hidden-size 2816")
                .model.feedforward,
            2816);
  EXPECT_EQ(Import("--num-layers 32 --hidden-size 4096 "
                   "--num-attention-heads 32 --seq-length 4096 "
                   "--micro-batch-size 1 --swiglu")
                .model.feedforward,
            10880);
  EXPECT_EQ(Import(kModel).model.mlp, MlpType::kPlain);
  EXPECT_EQ(
      Errors("--num-layers 2 --hidden-size 16 --num-attention-heads 2 "
             "--seq-length 8 --micro-batch-size 1 --swiglu"),
      std::vector<std::string>{
          "--ffn-hidden-size defaults to --hidden-size (16) * 8 / 3 rounded "
          "down to a multiple of 64 with --swiglu, which is 0; give "
          "--ffn-hidden-size"});
}

TEST(MegatronModel, NormalizationAndBiases) {
  EXPECT_EQ(Import(std::string(kModel) + "--normalization RMSNorm").model.norm,
            NormType::kRmsNorm);
  EXPECT_EQ(
      Import(std::string(kModel) + "--normalization LayerNorm").model.norm,
      NormType::kLayerNorm);
  EXPECT_EQ(Errors(std::string(kModel) + "--normalization rmsnorm"),
            std::vector<std::string>{
                "--normalization must be one of LayerNorm, RMSNorm (got "
                "\"rmsnorm\")"});
  EXPECT_TRUE(Import(kModel).model.linear_bias);
  EXPECT_FALSE(
      Import(std::string(kModel) + "--disable-bias-linear").model.linear_bias);
  // Megatron-LM has QKV biases whenever it has linear biases.
  EXPECT_TRUE(Import(std::string(kModel) + "--add-qkv-bias").model.linear_bias);
  EXPECT_EQ(
      Errors(std::string(kModel) + "--disable-bias-linear --add-qkv-bias"),
      std::vector<std::string>{
          "--add-qkv-bias with --disable-bias-linear puts biases on the "
          "QKV projection only, which the model cannot represent "
          "(model.linear_bias is all or none)"});
}

TEST(MegatronModel, Vocabulary) {
  const TransformerTrainingMappingSpec spec =
      Import(std::string(kModel) +
             "--make-vocab-size-divisible-by 64 "
             "--untie-embeddings-and-output-weights");
  EXPECT_EQ(spec.model.vocabulary.size, 50257);
  EXPECT_EQ(spec.model.vocabulary.divisible_by, 64);
  EXPECT_FALSE(spec.model.vocabulary.tied);
  // Megatron-LM's default position embedding is a learned table.
  EXPECT_EQ(spec.model.vocabulary.position, PositionEmbedding::kLearned);
  EXPECT_EQ(spec.model.vocabulary.max_positions, 1024);
  EXPECT_TRUE(Import(kModel).model.vocabulary.tied);
  EXPECT_EQ(Import(kModel).model.vocabulary.divisible_by, 128);
  // The padding is derived by the checker: 50257 -> a multiple of 128 * t.
  absl::StatusOr<MappingSpec> padded = FromMegatronArgs(
      Args(std::string(kModel) + "--tensor-model-parallel-size 8 "
                                 "--world-size 8 --fp16"),
      A100());
  ASSERT_TRUE(padded.ok()) << padded.status();
  absl::StatusOr<TypedProgram> program = CheckSpec(*padded);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(program->derived.padded_vocabulary, 51200);
}

TEST(MegatronModel, PositionEmbedding) {
  const std::string rope =
      std::string(kModel) + "--position-embedding-type rope";
  EXPECT_EQ(Import(rope).model.vocabulary.position, PositionEmbedding::kRope);
  // Only a learned table has rows.
  EXPECT_EQ(Import(rope).model.vocabulary.max_positions, 0);
  EXPECT_EQ(Import(std::string(kModel) + "--position-embedding-type none")
                .model.vocabulary.position,
            PositionEmbedding::kNone);
  EXPECT_EQ(
      Import(std::string(kModel) + "--position-embedding-type learned_absolute")
          .model.vocabulary.position,
      PositionEmbedding::kLearned);
  EXPECT_EQ(Errors(std::string(kModel) + "--position-embedding-type yarn"),
            std::vector<std::string>{
                "unsupported Megatron-LM flag --position-embedding-type yarn: "
                "the model cannot represent it (modelled: learned_absolute, "
                "rope, none)"});
  EXPECT_EQ(Errors(std::string(kModel) + "--position-embedding-type alibi"),
            std::vector<std::string>{
                "--position-embedding-type must be one of learned_absolute, "
                "rope, none (got \"alibi\")"});
  const std::string no_rows =
      "--num-layers 24 --hidden-size 1024 --num-attention-heads 16 "
      "--seq-length 1024 --micro-batch-size 2 --vocab-size 50257";
  EXPECT_EQ(Errors(no_rows),
            std::vector<std::string>{
                "--max-position-embeddings is required with a learned "
                "position embedding (--position-embedding-type "
                "learned_absolute, Megatron-LM's default): it is the number "
                "of rows of its table"});
  EXPECT_EQ(Errors(no_rows + " --position-embedding-type rope"),
            std::vector<std::string>{});
}

TEST(MegatronModel, WithoutAVocabularyNothingOfItIsModelled) {
  const std::string line =
      "--num-layers 24 --hidden-size 1024 --num-attention-heads 16 "
      "--seq-length 1024 --micro-batch-size 2 --max-position-embeddings 1024";
  const TransformerTrainingMappingSpec spec = Import(line);
  EXPECT_EQ(spec.model.vocabulary.size, 0);
  EXPECT_EQ(spec.model.vocabulary.position, PositionEmbedding::kNone);
  EXPECT_EQ(spec.model.vocabulary.max_positions, 0);
  EXPECT_EQ(Notes(line),
            std::vector<std::string>{
                "without --vocab-size there is no vocabulary to model "
                "(model.vocabulary.size 0): the input embedding, the output "
                "layer and the learned position embedding "
                "(--position-embedding-type learned_absolute, Megatron-LM's "
                "default) are not modelled"});
  EXPECT_EQ(Notes(line + " --position-embedding-type rope"),
            std::vector<std::string>{
                "without --vocab-size there is no vocabulary to model "
                "(model.vocabulary.size 0): the input embedding, the output "
                "layer are not modelled"});
}

//----- Mixtures of experts, latent attention, multi-token prediction
//------------

TEST(MegatronMixture, ExpertsAndTheirDefaults) {
  const TransformerTrainingMappingSpec dense = Import(kModel);
  EXPECT_FALSE(dense.model.moe.has_value());
  // Megatron-LM's defaults: top-2, experts of --ffn-hidden-size (4h here),
  // no shared experts, every block MoE, dropless routing.
  const TransformerTrainingMappingSpec s =
      Import(std::string(kModel) + "--num-experts 8");
  ASSERT_TRUE(s.model.moe.has_value());
  EXPECT_EQ(s.model.moe->experts, 8);
  EXPECT_EQ(s.model.moe->topk, 2);
  EXPECT_EQ(s.model.moe->ffn, 4096);
  EXPECT_EQ(s.model.moe->shared_ffn, 0);
  EXPECT_EQ(s.model.moe->layer_pattern, "");
  EXPECT_EQ(s.model.moe->capacity_factor, 1);
  EXPECT_FALSE(s.model.moe->router_fusion);
  EXPECT_FALSE(s.model.moe->aux_loss);
  EXPECT_EQ(s.model.feedforward, 4096);
  // --moe-router-fusion: Transformer Engine's fused router kernels.
  EXPECT_TRUE(Import(std::string(kModel) + "--num-experts 8 "
                                           "--moe-router-fusion")
                  .model.moe->router_fusion);
  const TransformerTrainingMappingSpec given = Import(
      std::string(kModel) +
      "--num-experts 64 --moe-router-topk 6 --moe-ffn-hidden-size 1408 "
      "--moe-shared-expert-intermediate-size 2816 --ffn-hidden-size 10944");
  ASSERT_TRUE(given.model.moe.has_value());
  EXPECT_EQ(given.model.moe->experts, 64);
  EXPECT_EQ(given.model.moe->topk, 6);
  EXPECT_EQ(given.model.moe->ffn, 1408);
  EXPECT_EQ(given.model.moe->shared_ffn, 2816);
  EXPECT_EQ(given.model.feedforward, 10944);
  // Without --num-experts Megatron-LM ignores the other MoE flags.
  const std::string idle = std::string(kModel) +
                           "--moe-router-topk 4 --moe-layer-freq 2 "
                           "--expert-tensor-parallel-size 2";
  EXPECT_FALSE(Import(idle).model.moe.has_value());
  EXPECT_EQ(Notes(idle),
            (std::vector<std::string>{
                "--moe-router-topk and --moe-layer-freq have no effect "
                "without --num-experts, as in Megatron-LM",
                "--expert-tensor-parallel-size has no effect without "
                "--num-experts, as in Megatron-LM"}));
}

TEST(MegatronMixture, LayerFrequencyIsAnIntegerOrAList) {
  const auto pattern = [](const std::string& freq) {
    const TransformerTrainingMappingSpec s = Import(
        std::string(kModel) + "--num-experts 8 --moe-layer-freq " + freq);
    return s.model.moe.has_value() ? s.model.moe->layer_pattern : "(dense)";
  };
  // An integer k: block i is MoE iff i % k == 0; 1 is every block.
  EXPECT_EQ(pattern("1"), "");
  EXPECT_EQ(pattern("2"), "101010101010101010101010");
  EXPECT_EQ(pattern("5"), "100001000010000100001000");
  EXPECT_EQ(pattern("100"), "1" + std::string(23, '0'));
  // A list expression, as Megatron-LM evaluates it; all 1s is every block.
  EXPECT_EQ(pattern("([0]*3+[1]*21)"), "000" + std::string(21, '1'));
  EXPECT_EQ(pattern("[1]*24"), "");
  EXPECT_EQ(pattern("([1]*3+[0])*6"), "111011101110111011101110");
  const std::string moe = std::string(kModel) + "--num-experts 8 ";
  EXPECT_EQ(Errors(moe + "--moe-layer-freq ([0]*3+[1]*20)"),
            std::vector<std::string>{
                "--moe-layer-freq has 23 elements but --num-layers is 24: "
                "one 0 (dense) or 1 (MoE) per block"});
  EXPECT_EQ(Errors(moe + "--moe-layer-freq [0]*24"),
            std::vector<std::string>{
                "--moe-layer-freq has no MoE block (1): a dense model has no "
                "--num-experts"});
  EXPECT_EQ(Errors(moe + "--moe-layer-freq ([0]*3+[2]*21)"),
            std::vector<std::string>{
                "--moe-layer-freq \"([0]*3+[2]*21)\" is not a list of 0s and "
                "1s: at character 9: a pattern holds 0 (dense) or 1 (MoE), "
                "not 2"});
  EXPECT_EQ(Errors(moe + "--moe-layer-freq=[__import__('os')]"),
            std::vector<std::string>{
                "--moe-layer-freq \"[__import__('os')]\" is not a list of 0s "
                "and 1s: at character 2: \"_\" is not allowed: Megatron-LM's "
                "patterns hold only digits and , [ ] ( ) + *"});
  EXPECT_EQ(Errors(moe + "--moe-layer-freq 0"),
            std::vector<std::string>{
                "--moe-layer-freq needs a positive integer that fits in 64 "
                "bits or a Python list expression holding '[' (digits only, "
                "no sign, spaces or leading zeros; got \"0\")"});
  EXPECT_EQ(Fields(moe + "--moe-layer-freq x"),
            std::vector<std::string>{"--moe-layer-freq"});
  EXPECT_EQ(Codes(moe + "--moe-layer-freq [2]"),
            std::vector<ErrorCode>{ErrorCode::kInvalidValue});
  // A pattern of an integer is built for at most 2^20 blocks.
  EXPECT_EQ(Errors("--num-layers 2000000 --hidden-size 1024 "
                   "--num-attention-heads 16 --seq-length 1024 "
                   "--micro-batch-size 2 --num-experts 8 --moe-layer-freq 2"),
            std::vector<std::string>{
                "--moe-layer-freq 2 with --num-layers 2000000: a pattern of "
                "more than 1048576 blocks is not modelled"});
}

TEST(MegatronMixture, CapacityFactorIsTheBusiestExpertsLoad) {
  const std::string moe =
      std::string(kModel) + "--num-experts 8 --moe-router-topk 2 ";
  const auto factor = [&](const std::string& value) {
    const TransformerTrainingMappingSpec s =
        Import(moe + "--moe-expert-capacity-factor " + value);
    return s.model.moe.has_value() ? s.model.moe->capacity_factor : -1;
  };
  EXPECT_EQ(factor("1.25"), 1.25);
  EXPECT_EQ(factor("1"), 1);
  EXPECT_EQ(factor("4"), 4);
  // Megatron-LM reads a negative factor as none (dropless); above experts /
  // topk no expert can take more than every token.
  EXPECT_EQ(factor("-1"), 1);
  EXPECT_EQ(factor("6.5"), 4);
  EXPECT_EQ(Notes(moe + "--moe-expert-capacity-factor -1"),
            std::vector<std::string>{
                "--moe-expert-capacity-factor -1 is below 0, which "
                "Megatron-LM reads as no capacity (dropless routing): "
                "model.moe.capacity_factor 1"});
  EXPECT_EQ(Notes(moe + "--moe-expert-capacity-factor 6.5"),
            std::vector<std::string>{
                "--moe-expert-capacity-factor 6.5 exceeds --num-experts / "
                "--moe-router-topk (4): no expert receives more than every "
                "token, so model.moe.capacity_factor is 4"});
  EXPECT_EQ(Errors(moe + "--moe-expert-capacity-factor 0.5"),
            std::vector<std::string>{
                "--moe-expert-capacity-factor 0.5 drops tokens even when the "
                "routing is even, which the model cannot represent "
                "(model.moe.capacity_factor is at least 1)"});
  EXPECT_EQ(Errors(moe + "--moe-expert-capacity-factor nan"),
            std::vector<std::string>{
                "--moe-expert-capacity-factor needs a finite decimal number "
                "(got \"nan\")"});
  EXPECT_EQ(Codes(moe + "--moe-expert-capacity-factor x1"),
            std::vector<ErrorCode>{ErrorCode::kWrongType});
}

TEST(MegatronLatentAttention, SizesHeadsAndDefaults) {
  // Megatron-LM's defaults: no query latent, kv 32, heads of 128 + 64 for
  // queries and keys and 128 for values.
  const TransformerTrainingMappingSpec s =
      Import(std::string(kModel) + "--multi-latent-attention");
  ASSERT_TRUE(s.model.latent_attention.has_value());
  EXPECT_EQ(s.model.latent_attention->q_lora_rank, 0);
  EXPECT_EQ(s.model.latent_attention->kv_lora_rank, 32);
  EXPECT_EQ(s.model.latent_attention->qk_head_dim, 128);
  EXPECT_EQ(s.model.latent_attention->qk_rope_head_dim, 64);
  EXPECT_EQ(s.model.latent_attention->v_head_dim, 128);
  EXPECT_EQ(s.model.attn_size, 192);
  EXPECT_EQ(s.model.kv_heads, 16);
  // DeepSeek-V3's attention: hidden / heads (56) is not the head size.
  const TransformerTrainingMappingSpec v3 = Import(
      "--num-layers 4 --hidden-size 7168 --num-attention-heads 128 "
      "--seq-length 4096 --micro-batch-size 1 --multi-latent-attention "
      "--q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 "
      "--qk-pos-emb-head-dim 64 --v-head-dim 128 --kv-channels 56");
  ASSERT_TRUE(v3.model.latent_attention.has_value());
  EXPECT_EQ(v3.model.latent_attention->q_lora_rank, 1536);
  EXPECT_EQ(v3.model.latent_attention->kv_lora_rank, 512);
  EXPECT_EQ(v3.model.attn_size, 192);
  EXPECT_EQ(v3.model.kv_heads, 128);
  EXPECT_EQ(Notes("--num-layers 4 --hidden-size 7168 --num-attention-heads "
                  "128 --seq-length 4096 --micro-batch-size 1 "
                  "--multi-latent-attention --kv-channels 56")
                .front(),
            "--kv-channels has no effect with --multi-latent-attention, as in "
            "Megatron-LM: a query/key head is --qk-head-dim + "
            "--qk-pos-emb-head-dim (model.attn_size)");
  // The head size needs no hidden / heads with latent attention.
  EXPECT_EQ(Errors("--num-layers 4 --hidden-size 100 --num-attention-heads 3 "
                   "--seq-length 64 --micro-batch-size 1 "
                   "--multi-latent-attention"),
            std::vector<std::string>{});
  // Megatron-LM asserts that latent attention has no query groups.
  EXPECT_EQ(Errors(std::string(kModel) + "--multi-latent-attention "
                                         "--group-query-attention "
                                         "--num-query-groups 4"),
            std::vector<std::string>{
                "--multi-latent-attention and --group-query-attention cannot "
                "both be given: Megatron-LM asserts that grouped-query "
                "attention is mutually exclusive with multi-latent "
                "attention"});
  EXPECT_EQ(Fields(std::string(kModel) +
                   "--multi-latent-attention --group-query-attention"),
            std::vector<std::string>{"model.kv_heads"});
  // Without --multi-latent-attention its sizes change nothing.
  const std::string idle =
      std::string(kModel) + "--q-lora-rank 64 --v-head-dim 64";
  EXPECT_FALSE(Import(idle).model.latent_attention.has_value());
  EXPECT_EQ(Notes(idle), std::vector<std::string>{
                             "--q-lora-rank and --v-head-dim have no effect "
                             "without --multi-latent-attention, as in "
                             "Megatron-LM"});
}

TEST(MegatronMultiTokenPrediction, Layers) {
  EXPECT_EQ(Import(kModel).model.mtp_layers, 0);
  EXPECT_EQ(Import(std::string(kModel) + "--mtp-num-layers 2").model.mtp_layers,
            2);
}

}  // namespace
}  // namespace blueprint
