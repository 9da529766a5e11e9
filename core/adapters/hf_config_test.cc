#include "core/adapters/hf_config.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/base/field_errors.h"
#include "core/base/input_limits.h"
#include "core/presets/presets.h"
#include "core/testing/files.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using test_files::ReadFile;

std::vector<std::string> Words(const std::string& text) {
  return absl::StrSplit(text, ' ', absl::SkipEmpty());
}

// The flags of a config as one space-separated line ("" on failure).
std::string Flags(const std::string& config_json) {
  absl::StatusOr<std::vector<std::string>> flags =
      MegatronFlagsFromHfConfig(config_json);
  EXPECT_TRUE(flags.ok()) << flags.status();
  return flags.ok() ? absl::StrJoin(*flags, " ") : "";
}

std::string Preset(const char* name) {
  const char* text = FindPreset(PresetKind::kModel, name);
  EXPECT_NE(text, nullptr) << name;
  return text == nullptr ? "" : text;
}

// A config with the keys every family needs, plus `extra` members.
std::string Config(const std::string& model_type, const std::string& extra) {
  return absl::StrCat(R"({"model_type": ")", model_type, R"(",
      "num_hidden_layers": 4, "hidden_size": 1024, "intermediate_size": 2816,
      "num_attention_heads": 16, "max_position_embeddings": 2048,
      "vocab_size": 32000)",
                      extra.empty() ? "" : ", ", extra, "}");
}

// The "field | message" of every error of a config.
std::vector<std::string> Errors(const std::string& config_json) {
  absl::StatusOr<std::vector<std::string>> flags =
      MegatronFlagsFromHfConfig(config_json);
  if (flags.ok()) return {};
  std::vector<std::string> out;
  for (const FieldError& e : FieldErrorsOf(flags.status())) {
    out.push_back(absl::StrCat(e.field, " | ", e.message));
  }
  return out;
}

//----- One published config per family
//------------------------------------------

constexpr char kTail[] =
    "--make-vocab-size-divisible-by 128 --untie-embeddings-and-output-weights "
    "--disable-bias-linear --swiglu --normalization RMSNorm "
    "--position-embedding-type rope";

TEST(HfConfig, Llama2IsMultiHead) {
  EXPECT_EQ(Flags(Preset("llama2-7b")),
            absl::StrCat("--num-layers 32 --hidden-size 4096 "
                         "--ffn-hidden-size 11008 --num-attention-heads 32 "
                         "--seq-length 4096 --max-position-embeddings 4096 "
                         "--vocab-size 32000 ",
                         kTail));
}

TEST(HfConfig, Llama31HasGroupedQueries) {
  EXPECT_EQ(Flags(Preset("llama3.1-70b")),
            absl::StrCat("--num-layers 80 --hidden-size 8192 "
                         "--ffn-hidden-size 28672 --num-attention-heads 64 "
                         "--group-query-attention --num-query-groups 8 "
                         "--seq-length 131072 --max-position-embeddings 131072 "
                         "--vocab-size 128256 ",
                         kTail));
}

// Llama-3.2-1B: head_dim 64 is hidden / heads (no --kv-channels), tied
// embeddings (no --untie-...).
TEST(HfConfig, Llama32TiesEmbeddings) {
  EXPECT_EQ(Flags(Preset("llama3.2-1b")),
            "--num-layers 16 --hidden-size 2048 --ffn-hidden-size 8192 "
            "--num-attention-heads 32 --group-query-attention "
            "--num-query-groups 8 --seq-length 131072 "
            "--max-position-embeddings 131072 --vocab-size 128256 "
            "--make-vocab-size-divisible-by 128 --disable-bias-linear "
            "--swiglu --normalization RMSNorm --position-embedding-type rope");
}

// Mistral v0.1's sliding_window is not read: full causal attention.
TEST(HfConfig, Mistral) {
  EXPECT_EQ(Flags(Preset("mistral-7b-v0.1")),
            absl::StrCat("--num-layers 32 --hidden-size 4096 "
                         "--ffn-hidden-size 14336 --num-attention-heads 32 "
                         "--group-query-attention --num-query-groups 8 "
                         "--seq-length 32768 --max-position-embeddings 32768 "
                         "--vocab-size 32000 ",
                         kTail));
}

// Qwen2's QKV biases are not modelled: --disable-bias-linear like the rest.
TEST(HfConfig, Qwen2) {
  EXPECT_EQ(Flags(Preset("qwen2.5-7b")),
            absl::StrCat("--num-layers 28 --hidden-size 3584 "
                         "--ffn-hidden-size 18944 --num-attention-heads 28 "
                         "--group-query-attention --num-query-groups 4 "
                         "--seq-length 131072 --max-position-embeddings 131072 "
                         "--vocab-size 152064 ",
                         kTail));
}

// Qwen3-32B: head_dim 128 is not hidden / heads (80).
TEST(HfConfig, Qwen3HeadSizeDiffers) {
  EXPECT_EQ(Flags(Preset("qwen3-32b")),
            absl::StrCat("--num-layers 64 --hidden-size 5120 "
                         "--ffn-hidden-size 25600 --num-attention-heads 64 "
                         "--group-query-attention --num-query-groups 8 "
                         "--kv-channels 128 --seq-length 40960 "
                         "--max-position-embeddings 40960 --vocab-size 151936 ",
                         kTail));
  // Without head_dim, Qwen3Config's default 128 (hidden / heads is 64).
  EXPECT_EQ(Words(Flags(Config("qwen3", "")))[8], "--kv-channels");
  EXPECT_EQ(Words(Flags(Config("qwen3", "")))[9], "128");
}

// Gemma-2B's shape: multi-query attention, tied embeddings by default, a
// GELU-gated MLP (--swiglu: the spec models gated, not the activation).
TEST(HfConfig, Gemma) {
  constexpr char kGemma2b[] = R"({
    "architectures": ["GemmaForCausalLM"], "model_type": "gemma",
    "head_dim": 256, "hidden_act": "gelu", "hidden_size": 2048,
    "intermediate_size": 16384, "max_position_embeddings": 8192,
    "num_attention_heads": 8, "num_hidden_layers": 18,
    "num_key_value_heads": 1, "rms_norm_eps": 1e-06, "vocab_size": 256000})";
  EXPECT_EQ(Flags(kGemma2b),
            "--num-layers 18 --hidden-size 2048 --ffn-hidden-size 16384 "
            "--num-attention-heads 8 --group-query-attention "
            "--num-query-groups 1 --seq-length 8192 "
            "--max-position-embeddings 8192 --vocab-size 256000 "
            "--make-vocab-size-divisible-by 128 --disable-bias-linear "
            "--swiglu --normalization RMSNorm --position-embedding-type rope");
  // Gemma-7B's shape: head_dim 256 is not 3072 / 16.
  constexpr char kGemma7b[] = R"({"model_type": "gemma", "head_dim": 256,
    "hidden_size": 3072, "intermediate_size": 24576,
    "max_position_embeddings": 8192, "num_attention_heads": 16,
    "num_hidden_layers": 28, "num_key_value_heads": 16,
    "vocab_size": 256000})";
  EXPECT_EQ(Flags(kGemma7b),
            "--num-layers 28 --hidden-size 3072 --ffn-hidden-size 24576 "
            "--num-attention-heads 16 --kv-channels 256 --seq-length 8192 "
            "--max-position-embeddings 8192 --vocab-size 256000 "
            "--make-vocab-size-divisible-by 128 --disable-bias-linear "
            "--swiglu --normalization RMSNorm --position-embedding-type rope");
  // Without head_dim: GemmaConfig's default, 256.
  EXPECT_NE(Flags(Config("gemma", "")).find("--kv-channels 256"),
            std::string::npos);
  // An explicit tie_word_embeddings false unties them.
  EXPECT_NE(Flags(Config("gemma", R"("tie_word_embeddings": false)"))
                .find("--untie-embeddings-and-output-weights"),
            std::string::npos);
}

//----- Mixtures of experts and latent attention
//--------------------------------

// A published config of testdata/hf/ (the MoE models that are no preset).
std::string Testdata(const std::string& name) {
  return ReadFile("core/adapters/testdata/hf/" + name + ".json");
}

// The flags between the vocabulary's and the experts' (every MoE config
// has an untied vocabulary and no MLP biases), and the last ones.
constexpr char kUntied[] =
    "--make-vocab-size-divisible-by 128 --untie-embeddings-and-output-weights "
    "--disable-bias-linear ";
constexpr char kMoeTail[] =
    "--swiglu --normalization RMSNorm --position-embedding-type rope";

// Mixtral: every block's MLP is 8 experts of intermediate_size, Megatron-LM's
// default expert size.
TEST(HfConfigMoe, Mixtral) {
  EXPECT_EQ(
      Flags(Preset("mixtral-8x7b-v0.1")),
      absl::StrCat("--num-layers 32 --hidden-size 4096 "
                   "--ffn-hidden-size 14336 --num-attention-heads 32 "
                   "--group-query-attention --num-query-groups 8 "
                   "--seq-length 32768 --max-position-embeddings 32768 "
                   "--vocab-size 32000 ",
                   kUntied, "--num-experts 8 --moe-router-topk 2 ", kMoeTail));
  EXPECT_EQ(
      Flags(Preset("mixtral-8x22b-v0.1")),
      absl::StrCat("--num-layers 56 --hidden-size 6144 "
                   "--ffn-hidden-size 16384 --num-attention-heads 48 "
                   "--group-query-attention --num-query-groups 8 "
                   "--seq-length 65536 --max-position-embeddings 65536 "
                   "--vocab-size 32768 ",
                   kUntied, "--num-experts 8 --moe-router-topk 2 ", kMoeTail));
}

// Qwen3-MoE: 128 experts of moe_intermediate_size in every block (step 1,
// no mlp_only_layers), heads of head_dim 128.
TEST(HfConfigMoe, Qwen3Moe) {
  constexpr char kQwen3Head[] =
      "--group-query-attention --num-query-groups 4 --kv-channels 128 "
      "--seq-length 40960 --max-position-embeddings 40960 --vocab-size "
      "151936 ";
  EXPECT_EQ(Flags(Preset("qwen3-30b-a3b")),
            absl::StrCat("--num-layers 48 --hidden-size 2048 "
                         "--ffn-hidden-size 6144 --num-attention-heads 32 ",
                         kQwen3Head, kUntied,
                         "--num-experts 128 --moe-router-topk 8 "
                         "--moe-ffn-hidden-size 768 ",
                         kMoeTail));
  EXPECT_EQ(Flags(Preset("qwen3-235b-a22b")),
            absl::StrCat("--num-layers 94 --hidden-size 4096 "
                         "--ffn-hidden-size 12288 --num-attention-heads 64 ",
                         kQwen3Head, kUntied,
                         "--num-experts 128 --moe-router-topk 8 "
                         "--moe-ffn-hidden-size 1536 ",
                         kMoeTail));
}

// Qwen1.5-MoE-A2.7B: 60 experts and a shared expert of 5632.
TEST(HfConfigMoe, Qwen2Moe) {
  EXPECT_EQ(Flags(Testdata("qwen1.5-moe-a2.7b")),
            absl::StrCat("--num-layers 24 --hidden-size 2048 "
                         "--ffn-hidden-size 5632 --num-attention-heads 16 "
                         "--seq-length 8192 --max-position-embeddings 8192 "
                         "--vocab-size 151936 ",
                         kUntied,
                         "--num-experts 60 --moe-router-topk 4 "
                         "--moe-ffn-hidden-size 1408 "
                         "--moe-shared-expert-intermediate-size 5632 ",
                         kMoeTail));
}

// DeepSeek: latent attention (V2-Lite's q_lora_rank null: no query latent),
// dense first blocks, shared experts of n_shared_experts *
// moe_intermediate_size, and V3's multi-token prediction.
TEST(HfConfigMoe, DeepSeek) {
  constexpr char kLatent[] =
      "--multi-latent-attention --kv-lora-rank 512 --qk-head-dim 128 "
      "--qk-pos-emb-head-dim 64 --v-head-dim 128 ";
  EXPECT_EQ(
      Flags(Preset("deepseek-v3")),
      absl::StrCat("--num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 "
                   "--num-attention-heads 128 --seq-length 163840 "
                   "--max-position-embeddings 163840 --vocab-size 129280 ",
                   kUntied, kLatent,
                   "--q-lora-rank 1536 --num-experts 256 --moe-router-topk 8 "
                   "--moe-ffn-hidden-size 2048 "
                   "--moe-shared-expert-intermediate-size 2048 "
                   "--moe-layer-freq ([0]*3+[1]*58) --mtp-num-layers 1 ",
                   kMoeTail));
  EXPECT_EQ(Flags(Testdata("deepseek-v2-lite")),
            absl::StrCat(
                "--num-layers 27 --hidden-size 2048 --ffn-hidden-size 10944 "
                "--num-attention-heads 16 --seq-length 163840 "
                "--max-position-embeddings 163840 --vocab-size 102400 ",
                kUntied, kLatent,
                "--num-experts 64 --moe-router-topk 6 "
                "--moe-ffn-hidden-size 1408 "
                "--moe-shared-expert-intermediate-size 2816 --moe-layer-freq "
                "([0]+[1]*26) ",
                kMoeTail));
}

// The MoE keys of a small config of each family (4 blocks).
constexpr char kQwenMoe[] =
    R"("num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 512)";
constexpr char kDeepSeek[] =
    R"("kv_lora_rank": 64, "qk_nope_head_dim": 32, "qk_rope_head_dim": 16,
       "v_head_dim": 32, "q_lora_rank": null, "n_routed_experts": 8,
       "num_experts_per_tok": 2, "moe_intermediate_size": 256,
       "n_shared_experts": 0)";

// The --moe-layer-freq value of a config ("" without the flag; "dense"
// without --num-experts).
std::string LayerFreq(const std::string& config) {
  const std::vector<std::string> words = Words(Flags(config));
  const auto experts = std::find(words.begin(), words.end(), "--num-experts");
  if (experts == words.end()) return "dense";
  const auto freq = std::find(words.begin(), words.end(), "--moe-layer-freq");
  return freq == words.end() || freq + 1 == words.end() ? "" : *(freq + 1);
}

TEST(HfConfigMoe, WhichBlocksHaveExpertsIsTheFamilysRule) {
  const std::string qwen = std::string(kQwenMoe) + ", ";
  // qwen*_moe: block i iff i is not in mlp_only_layers and (i + 1) %
  // decoder_sparse_step == 0.
  EXPECT_EQ(LayerFreq(Config("qwen3_moe", kQwenMoe)), "");
  EXPECT_EQ(
      LayerFreq(Config("qwen3_moe", qwen + R"("decoder_sparse_step": 2)")),
      "([0]+[1])*2");
  EXPECT_EQ(LayerFreq(Config("qwen2_moe",
                             qwen + R"("shared_expert_intermediate_size": 64,
                                       "mlp_only_layers": [0])")),
            "([0]+[1]*3)");
  EXPECT_EQ(LayerFreq(Config("qwen3_moe", qwen + R"("mlp_only_layers": [3],
                                                   "decoder_sparse_step": 3)")),
            "([0]*2+[1]+[0])");
  EXPECT_EQ(LayerFreq(Config("qwen3_moe",
                             qwen + R"("mlp_only_layers": [0, 1, 2, 3])")),
            "dense");
  EXPECT_EQ(LayerFreq(Config("qwen3_moe", qwen + R"("mlp_only_layers": null,
                                       "decoder_sparse_step": null)")),
            "");
  // deepseek: block i iff i >= first_k_dense_replace and i % moe_layer_freq
  // == 0.
  const std::string deepseek = std::string(kDeepSeek) + ", ";
  EXPECT_EQ(LayerFreq(Config("deepseek_v2", kDeepSeek)), "");
  EXPECT_EQ(
      LayerFreq(Config("deepseek_v2", deepseek + R"("first_k_dense_replace": 1,
                                           "moe_layer_freq": 2)")),
      "([0]*2+[1]+[0])");
  EXPECT_EQ(LayerFreq(Config("deepseek_v3",
                             deepseek + R"("first_k_dense_replace": 4)")),
            "dense");
  // A dense DeepSeek keeps its latent attention; no shared experts, no MTP
  // blocks (0).
  const std::string flags = Flags(
      Config("deepseek_v3", deepseek + R"("num_nextn_predict_layers": 0)"));
  EXPECT_NE(flags.find("--multi-latent-attention --kv-lora-rank 64 "
                       "--qk-head-dim 32 --qk-pos-emb-head-dim 16 "
                       "--v-head-dim 32 --num-experts 8"),
            std::string::npos)
      << flags;
  EXPECT_EQ(flags.find("--moe-shared-expert-intermediate-size"),
            std::string::npos);
  EXPECT_EQ(flags.find("--mtp-num-layers"), std::string::npos);
}

// DeepSeek's attention is latent: its num_key_value_heads and head_dim are
// not read; nor are the routing details of any family.
TEST(HfConfigMoe, OtherKeysAreIgnored) {
  EXPECT_EQ(Flags(Config("deepseek_v3", std::string(kDeepSeek) + R"(,
      "num_key_value_heads": 3, "head_dim": 7, "topk_method": "noaux_tc",
      "n_group": 8, "topk_group": 4, "scoring_func": "sigmoid",
      "routed_scaling_factor": 2.5, "ep_size": 1, "norm_topk_prob": true,
      "quantization_config": {"quant_method": "fp8"},
      "rope_scaling": {"type": "yarn", "factor": 40})")),
            Flags(Config("deepseek_v3", kDeepSeek)));
  EXPECT_EQ(Flags(Config("qwen3_moe", std::string(kQwenMoe) + R"(,
      "norm_topk_prob": true, "output_router_logits": false,
      "router_aux_loss_coef": 0.001, "max_window_layers": 4)")),
            Flags(Config("qwen3_moe", kQwenMoe)));
  EXPECT_EQ(Flags(Config("mixtral", R"("num_local_experts": 8,
      "num_experts_per_tok": 2, "router_jitter_noise": 0.1,
      "sliding_window": 4096)")),
            Flags(Config("mixtral", R"("num_local_experts": 8,
      "num_experts_per_tok": 2)")));
}

TEST(HfConfigMoe, ErrorsNameTheKey) {
  EXPECT_EQ(
      Errors(Config("deepseek_v3", "")),
      (std::vector<std::string>{
          "hf_config.kv_lora_rank | hf_config.kv_lora_rank: required key is "
          "missing",
          "hf_config.qk_nope_head_dim | hf_config.qk_nope_head_dim: "
          "required key is missing",
          "hf_config.qk_rope_head_dim | hf_config.qk_rope_head_dim: "
          "required key is missing",
          "hf_config.v_head_dim | hf_config.v_head_dim: required key is "
          "missing",
          "hf_config.q_lora_rank | hf_config.q_lora_rank: required key is "
          "missing",
          "hf_config.n_routed_experts | hf_config.n_routed_experts: "
          "required key is missing",
          "hf_config.num_experts_per_tok | hf_config.num_experts_per_tok: "
          "required key is missing",
          "hf_config.moe_intermediate_size | "
          "hf_config.moe_intermediate_size: required key is missing",
          "hf_config.n_shared_experts | hf_config.n_shared_experts: "
          "required key is missing"}));
  EXPECT_EQ(Errors(Config("mixtral", "")),
            (std::vector<std::string>{
                "hf_config.num_local_experts | hf_config.num_local_experts: "
                "required key is missing",
                "hf_config.num_experts_per_tok | "
                "hf_config.num_experts_per_tok: required key is missing"}));
  std::string deepseek = kDeepSeek;
  deepseek.replace(deepseek.find(R"("q_lora_rank": null)"), 19,
                   R"("q_lora_rank": 0)");
  deepseek.replace(deepseek.find(R"("n_shared_experts": 0)"), 21,
                   R"("n_shared_experts": -1)");
  EXPECT_EQ(Errors(Config("deepseek_v2",
                          deepseek + R"(, "first_k_dense_replace": "3")")),
            (std::vector<std::string>{
                "hf_config.q_lora_rank | hf_config.q_lora_rank: expected a "
                "positive integer, got 0",
                "hf_config.n_shared_experts | hf_config.n_shared_experts: "
                "expected a non-negative integer, got -1",
                "hf_config.first_k_dense_replace | "
                "hf_config.first_k_dense_replace: expected an integer, got "
                "string \"3\""}));
  const std::string qwen = std::string(kQwenMoe) + ", ";
  EXPECT_EQ(Errors(Config("qwen3_moe", qwen + R"("mlp_only_layers": "0")")),
            std::vector<std::string>{
                "hf_config.mlp_only_layers | hf_config.mlp_only_layers: "
                "expected an array of block indices, got string \"0\""});
  EXPECT_EQ(
      Errors(Config("qwen3_moe", qwen + R"("mlp_only_layers": [1, -1, 2.5])")),
      (std::vector<std::string>{
          "hf_config.mlp_only_layers[1] | hf_config.mlp_only_layers[1]: "
          "expected a block index (0 or more), got -1",
          "hf_config.mlp_only_layers[2] | hf_config.mlp_only_layers[2]: "
          "expected an integer, got 2.5"}));
  EXPECT_EQ(Errors(Config("qwen3_moe", qwen + R"("mlp_only_layers": [2, 4])")),
            std::vector<std::string>{
                "hf_config.mlp_only_layers[1] | hf_config.mlp_only_layers[1]: "
                "block 4 is beyond the last block (num_hidden_layers 4)"});
  // A pattern is built for at most 2^20 blocks.
  std::string many = Config("qwen3_moe", qwen + R"("decoder_sparse_step": 2)");
  many.replace(many.find(R"("num_hidden_layers": 4)"), 22,
               R"("num_hidden_layers": 2000000)");
  EXPECT_EQ(Errors(many),
            std::vector<std::string>{
                "hf_config.decoder_sparse_step | "
                "hf_config.decoder_sparse_step: dense blocks among 2000000 "
                "blocks (num_hidden_layers) are not modelled beyond 1048576 "
                "blocks"});
}

//----- Single keys
//--------------------------------------------------------------

TEST(HfConfig, OptionalKeysTakeTransformersDefaults) {
  // llama with only the required keys: MHA, head_dim 1024 / 16, untied, no
  // biases.
  EXPECT_EQ(Flags(Config("llama", "")),
            "--num-layers 4 --hidden-size 1024 --ffn-hidden-size 2816 "
            "--num-attention-heads 16 --seq-length 2048 "
            "--max-position-embeddings 2048 --vocab-size 32000 "
            "--make-vocab-size-divisible-by 128 "
            "--untie-embeddings-and-output-weights --disable-bias-linear "
            "--swiglu --normalization RMSNorm --position-embedding-type rope");
  // null is transformers' None: the default.
  EXPECT_EQ(Flags(Config("llama", R"("num_key_value_heads": null,
      "head_dim": null, "tie_word_embeddings": null, "mlp_bias": null)")),
            Flags(Config("llama", "")));
  // Values equal to the defaults give the same flags.
  EXPECT_EQ(Flags(Config("llama", R"("num_key_value_heads": 16,
      "head_dim": 64, "tie_word_embeddings": false, "mlp_bias": false)")),
            Flags(Config("llama", "")));
}

TEST(HfConfig, MlpBiasKeepsBiases) {
  const std::string flags = Flags(Config("llama", R"("mlp_bias": true)"));
  EXPECT_EQ(flags.find("--disable-bias-linear"), std::string::npos) << flags;
  // Only llama has the key; other families have no MLP biases.
  EXPECT_NE(Flags(Config("mistral", R"("mlp_bias": true)"))
                .find("--disable-bias-linear"),
            std::string::npos);
}

TEST(HfConfig, HeadDimOnlyWhenMegatronWouldDiffer) {
  // 1000 / 16 does not divide: transformers uses 1000 // 16 = 62, which
  // Megatron-LM must be told.
  std::string config = Config("mistral", "");
  config.replace(config.find("1024"), 4, "1000");
  EXPECT_NE(Flags(config).find("--kv-channels 62"), std::string::npos);
  EXPECT_NE(
      Flags(Config("llama", R"("head_dim": 128)")).find("--kv-channels 128"),
      std::string::npos);
}

TEST(HfConfig, OtherKeysAreIgnored) {
  EXPECT_EQ(Flags(Config("qwen2", R"("rope_theta": 1000000.0,
      "sliding_window": 131072, "use_sliding_window": true,
      "hidden_act": "gelu", "torch_dtype": "bfloat16",
      "rope_scaling": {"type": "yarn"}, "architectures": [])")),
            Flags(Config("qwen2", "")));
}

TEST(HfConfig, ModelTypesAreTheFamilies) {
  EXPECT_EQ(HfModelTypes(),
            (std::vector<std::string>{"deepseek_v2", "deepseek_v3", "gemma",
                                      "llama", "mistral", "mixtral", "qwen2",
                                      "qwen2_moe", "qwen3", "qwen3_moe"}));
}

//----- Errors
//-------------------------------------------------------------------

// Every model_type, as the errors list them.
constexpr char kFamilies[] =
    "\"deepseek_v2\", \"deepseek_v3\", \"gemma\", \"llama\", \"mistral\", "
    "\"mixtral\", \"qwen2\", \"qwen2_moe\", \"qwen3\", \"qwen3_moe\"";

TEST(HfConfig, UnknownModelTypeListsTheFamilies) {
  EXPECT_EQ(Errors(Config("gpt2", "")),
            std::vector<std::string>{
                absl::StrCat("hf_config.model_type | hf_config.model_type: "
                             "expected one of ",
                             kFamilies, ", got string \"gpt2\"")});
  EXPECT_EQ(Errors(R"({"model_type": 7, "num_hidden_layers": 1,
      "hidden_size": 1, "intermediate_size": 1, "num_attention_heads": 1,
      "max_position_embeddings": 1, "vocab_size": 1})"),
            std::vector<std::string>{
                absl::StrCat("hf_config.model_type | hf_config.model_type: "
                             "expected one of ",
                             kFamilies, ", got 7")});
}

TEST(HfConfig, EveryMissingKeyIsReported) {
  EXPECT_EQ(
      Errors("{}"),
      (std::vector<std::string>{
          absl::StrCat("hf_config.model_type | hf_config.model_type: required "
                       "key is missing (one of ",
                       kFamilies, ")"),
          "hf_config.num_hidden_layers | hf_config.num_hidden_layers: "
          "required key is missing",
          "hf_config.hidden_size | hf_config.hidden_size: required key is "
          "missing",
          "hf_config.intermediate_size | hf_config.intermediate_size: "
          "required key is missing",
          "hf_config.num_attention_heads | hf_config.num_attention_heads: "
          "required key is missing",
          "hf_config.max_position_embeddings | "
          "hf_config.max_position_embeddings: required key is missing",
          "hf_config.vocab_size | hf_config.vocab_size: required key is "
          "missing"}));
}

TEST(HfConfig, WrongTypesAndValuesNameTheKey) {
  EXPECT_EQ(
      Errors(R"({"model_type": "llama", "num_hidden_layers": "32",
          "hidden_size": 4096.0, "intermediate_size": -5,
          "num_attention_heads": 0, "max_position_embeddings": 1e30,
          "vocab_size": 18446744073709551615, "num_key_value_heads": true,
          "head_dim": [128], "tie_word_embeddings": "false",
          "mlp_bias": 1})"),
      (std::vector<std::string>{
          "hf_config.num_hidden_layers | hf_config.num_hidden_layers: "
          "expected an integer, got string \"32\"",
          "hf_config.hidden_size | hf_config.hidden_size: expected an "
          "integer, got 4096",
          "hf_config.intermediate_size | hf_config.intermediate_size: "
          "expected a positive integer, got -5",
          "hf_config.num_attention_heads | hf_config.num_attention_heads: "
          "expected a positive integer, got 0",
          "hf_config.num_key_value_heads | hf_config.num_key_value_heads: "
          "expected an integer, got true",
          "hf_config.head_dim | hf_config.head_dim: expected an integer, got "
          "an array",
          "hf_config.max_position_embeddings | "
          "hf_config.max_position_embeddings: expected an integer, got "
          "1e+30",
          "hf_config.vocab_size | hf_config.vocab_size: integer "
          "18446744073709551615 is too large (at most 9223372036854775807)",
          "hf_config.tie_word_embeddings | hf_config.tie_word_embeddings: "
          "expected a boolean (true or false), got string \"false\"",
          "hf_config.mlp_bias | hf_config.mlp_bias: expected a boolean (true "
          "or false), got 1"}));
  // A required key may not be null.
  std::string null_vocabulary = Config("llama", "");
  null_vocabulary.replace(null_vocabulary.find("32000"), 5, "null");
  EXPECT_EQ(Errors(null_vocabulary),
            std::vector<std::string>{"hf_config.vocab_size | "
                                     "hf_config.vocab_size: expected an "
                                     "integer, got null"});
}

TEST(HfConfig, DocumentErrors) {
  EXPECT_EQ(Errors("[1, 2]"),
            std::vector<std::string>{
                "hf_config | hf_config: expected an object, got an array"});
  EXPECT_EQ(Errors("null"),
            std::vector<std::string>{
                "hf_config | hf_config: expected an object, got null"});
  const std::vector<std::string> malformed = Errors(R"({"model_type": )");
  ASSERT_EQ(malformed.size(), 1u);
  EXPECT_EQ(malformed[0].rfind("hf_config | hf_config: malformed JSON: ", 0),
            0u)
      << malformed[0];
  const std::vector<std::string> duplicate =
      Errors(R"({"hidden_size": 1, "hidden_size": 2})");
  ASSERT_EQ(duplicate.size(), 1u);
  EXPECT_NE(duplicate[0].find("duplicate key"), std::string::npos);
  EXPECT_EQ(Errors(std::string(kMaxInputBytes + 1, ' ')),
            std::vector<std::string>{absl::StrCat(
                "hf_config | ", InputTooLargeMessage("hf_config"))});
}

//----- Presets
//-------------------------------------------------------------------

// Every shipped model preset maps, with its layer count first.
TEST(HfConfig, EveryPresetMaps) {
  const std::vector<std::string> names = PresetNames(PresetKind::kModel);
  EXPECT_GE(names.size(), 15u);
  for (const std::string& name : names) {
    const std::string text = FindPreset(PresetKind::kModel, name);
    absl::StatusOr<std::vector<std::string>> flags =
        MegatronFlagsFromHfConfig(text);
    ASSERT_TRUE(flags.ok()) << name << ": " << flags.status();
    ASSERT_GE(flags->size(), 2u);
    EXPECT_EQ((*flags)[0], "--num-layers") << name;
    EXPECT_NE(
        text.find(absl::StrCat("\"num_hidden_layers\": ", (*flags)[1], ",")),
        std::string::npos)
        << name;
  }
}

//----- Merging
//-------------------------------------------------------------------

TEST(HfConfig, FlagName) {
  EXPECT_EQ(MegatronFlagName("--seq-length"), "--seq-length");
  EXPECT_EQ(MegatronFlagName("--seq-length=4096"), "--seq-length");
  EXPECT_EQ(MegatronFlagName("4096"), "");
  EXPECT_EQ(MegatronFlagName("-x"), "");
  EXPECT_EQ(MegatronFlagName("--"), "");
  EXPECT_EQ(MegatronFlagName("--=1"), "");
  EXPECT_EQ(MegatronFlagName(""), "");
}

TEST(HfConfig, UserFlagsOverrideTheConfigs) {
  const std::vector<std::string> config = Words(
      "--num-layers 32 --group-query-attention --num-query-groups 8 "
      "--seq-length 131072 --swiglu --normalization RMSNorm");
  // Nothing in common: the config's flags, then the user's.
  EXPECT_EQ(absl::StrJoin(MergeMegatronFlags(
                              config, Words("--micro-batch-size 1 --bf16")),
                          " "),
            "--num-layers 32 --group-query-attention --num-query-groups 8 "
            "--seq-length 131072 --swiglu --normalization RMSNorm "
            "--micro-batch-size 1 --bf16");
  // A value flag, in either spelling, replaces the config's with its value.
  EXPECT_EQ(absl::StrJoin(MergeMegatronFlags(
                              config, {"--seq-length=4096", "--num-layers", "2",
                                       "--normalization", "LayerNorm"}),
                          " "),
            "--group-query-attention --num-query-groups 8 --swiglu "
            "--seq-length=4096 --num-layers 2 --normalization LayerNorm");
  // A switch given again appears once, where the user wrote it.
  EXPECT_EQ(absl::StrJoin(MergeMegatronFlags(
                              config, Words("--swiglu --num-query-groups 4")),
                          " "),
            "--num-layers 32 --group-query-attention --seq-length 131072 "
            "--normalization RMSNorm --swiglu --num-query-groups 4");
  // The user's words are kept as written, strays and all.
  EXPECT_EQ(MergeMegatronFlags({}, {"x", "--", "--seq-length"}),
            (std::vector<std::string>{"x", "--", "--seq-length"}));
  EXPECT_EQ(MergeMegatronFlags(config, {}), config);
}

// The README's key table is HfConfigKeysMarkdown().
TEST(HfConfig, ReadmeShowsTheKeyTable) {
  const std::optional<std::string> shown = test_files::MarkedSection(
      "core/adapters/README.md", "HfConfigKeysMarkdown()");
  ASSERT_TRUE(shown.has_value())
      << "core/adapters/README.md has no HfConfigKeysMarkdown() markers";
  EXPECT_TRUE(*shown == HfConfigKeysMarkdown())
      << "core/adapters/README.md's key table differs from "
         "HfConfigKeysMarkdown(); put this between its markers:\n"
      << HfConfigKeysMarkdown();
}

}  // namespace
}  // namespace blueprint
