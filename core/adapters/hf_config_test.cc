#include "core/adapters/hf_config.h"

#include <fstream>
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
            (std::vector<std::string>{"gemma", "llama", "mistral", "qwen2",
                                      "qwen3"}));
}

//----- Errors
//-------------------------------------------------------------------

TEST(HfConfig, UnknownModelTypeListsTheFamilies) {
  EXPECT_EQ(Errors(Config("gpt2", "")),
            std::vector<std::string>{
                "hf_config.model_type | hf_config.model_type: expected one of "
                "\"gemma\", \"llama\", \"mistral\", \"qwen2\", \"qwen3\", got "
                "string \"gpt2\""});
  EXPECT_EQ(Errors(R"({"model_type": 7, "num_hidden_layers": 1,
      "hidden_size": 1, "intermediate_size": 1, "num_attention_heads": 1,
      "max_position_embeddings": 1, "vocab_size": 1})"),
            std::vector<std::string>{
                "hf_config.model_type | hf_config.model_type: expected one of "
                "\"gemma\", \"llama\", \"mistral\", \"qwen2\", \"qwen3\", got "
                "7"});
}

TEST(HfConfig, EveryMissingKeyIsReported) {
  EXPECT_EQ(
      Errors("{}"),
      (std::vector<std::string>{
          "hf_config.model_type | hf_config.model_type: required key is "
          "missing (one of \"gemma\", \"llama\", \"mistral\", \"qwen2\", "
          "\"qwen3\")",
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
  constexpr char kBegin[] = "<!-- begin HfConfigKeysMarkdown() -->\n";
  constexpr char kEnd[] = "<!-- end HfConfigKeysMarkdown() -->\n";
  const std::string readme = ReadFile("core/adapters/README.md");
  const size_t begin = readme.find(kBegin);
  const size_t end = readme.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << "no " << kBegin;
  ASSERT_NE(end, std::string::npos) << "no " << kEnd;
  ASSERT_LT(begin, end);
  const size_t start = begin + std::string(kBegin).size();
  const std::string want = HfConfigKeysMarkdown();
  EXPECT_TRUE(readme.substr(start, end - start) == want)
      << "core/adapters/README.md's key table differs from "
         "HfConfigKeysMarkdown(); put this between its markers:\n"
      << want;
}

}  // namespace
}  // namespace blueprint
