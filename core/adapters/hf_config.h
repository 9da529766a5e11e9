// The Hugging Face adapter: a model's config.json (the transformers
// PretrainedConfig saved with a checkpoint) to the Megatron-LM flags that build
// the same model, which the Megatron-LM adapter (megatron.h) then turns into a
// spec. `blueprint import megatron --hf-config CONFIG -- FLAGS...` merges the
// config's flags with the user's (MergeMegatronFlags: a flag the user gives
// replaces the config's) and calls FromMegatronArgs on the result.
//
// The families are those Megatron-LM's and Megatron-Bridge's converters map
// to a GPT model with a gated MLP, RMSNorm and RoPE: model_type "llama",
// "mistral", "qwen2", "qwen3", "gemma", and their mixtures of experts
// "mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3" (the
// DeepSeek ones with multi-latent attention and, V3, multi-token
// prediction). The keys read, the flags each becomes and what holds without
// it are one table, HfConfigKeys() (shown in core/adapters/README.md with
// the approximations of each family); every other key is ignored. The
// choices:
//   * --seq-length is max_position_embeddings (the longest sequence the
//     checkpoint supports); give --seq-length to train shorter sequences.
//   * --make-vocab-size-divisible-by 128, Megatron-LM's default: the padded
//     vocabulary is Megatron-LM's (vocab_size rounded up to 128 * t).
//   * Every family's MLP is gated (--swiglu): the spec models a gated MLP,
//     not its activation (SiLU, or GELU for gemma).
//   * Attention-only biases (qwen2's QKV biases, attention_bias), qwen3's
//     QK norms and qwen2_moe's shared-expert gate are not modelled; see the
//     README for their size.
//   * Which blocks have experts is transformers' rule of each family
//     (qwen*_moe: decoder_sparse_step and mlp_only_layers; deepseek:
//     first_k_dense_replace and moe_layer_freq), written as a
//     --moe-layer-freq list expression when some block is dense.
//
// Errors are FieldErrors (core/base/field_errors.h) whose field is the
// config's key as a path, "hf_config.hidden_size" ("hf_config" for the
// document as a whole), all reported at once.
//
// Example:
//   absl::StatusOr<std::vector<std::string>> flags =
//       MegatronFlagsFromHfConfig(config_json);
//   // {"--num-layers", "32", "--hidden-size", "4096", ...}
//   FromMegatronArgs(MergeMegatronFlags(*flags, user_flags), system);
#ifndef BLUEPRINTING_CORE_ADAPTERS_HF_CONFIG_H_
#define BLUEPRINTING_CORE_ADAPTERS_HF_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace blueprint {

// The name of the config document in error paths and fields.
inline constexpr char kHfConfigName[] = "hf_config";

// MegatronFlagsFromHfConfig: the Megatron-LM model flags of a config.json
// text of at most kMaxInputBytes (core/base/input_limits.h), in the order of
// HfConfigKeys(), each flag followed by its value if it takes one.
// kInvalidArgument (InvalidInputError) lists every problem: malformed JSON,
// not an object, an unsupported or missing model_type (naming the supported
// ones), a missing required key, a value of the wrong type, a number that is
// not a positive integer.
// With `num_layers` (the user's --num-layers: a proxy run that truncates
// the model, as benchmark recipes do), the dense and MoE blocks follow the
// config's rule over that many blocks, so that its --moe-layer-freq has
// --num-layers elements; --num-layers itself stays the config's (the user's
// replaces it, MergeMegatronFlags).
absl::StatusOr<std::vector<std::string>> MegatronFlagsFromHfConfig(
    const std::string& config_json,
    std::optional<int64_t> num_layers = std::nullopt);

// HfModelTypes: the model_type values accepted, sorted.
const std::vector<std::string>& HfModelTypes();

// The `absent` of a key that must be given.
inline constexpr char kHfRequired[] = "required";

enum class HfValue {
  kPositiveInteger,        // a JSON integer >= 1
  kNonNegativeInteger,     // a JSON integer >= 0
  kPositiveIntegerOrNull,  // a JSON integer >= 1, or null (which the key's
                           // `flags` give a meaning; not its default)
  kLayerIndices,           // an array of block indices, 0 to layers - 1
  kBoolean,                // true or false
  kModelType,              // a string, one of HfModelTypes()
};

// One key of config.json that MegatronFlagsFromHfConfig reads.
struct HfConfigKey {
  std::string key;                    // "num_key_value_heads"
  std::vector<std::string> families;  // the model types that have it; {} all
  HfValue value;
  std::string flags;   // Markdown: the Megatron-LM flags it becomes
  std::string absent;  // kHfRequired, or (Markdown) what holds without it;
                       // null is absent, as transformers reads it (but for
                       // kPositiveIntegerOrNull)
  std::vector<std::string> excluded = {};  // with families {}: all but these
};

// HfConfigKeys: the keys read (model_type first, then the others in this
// order), in the order their flags are emitted.
const std::vector<HfConfigKey>& HfConfigKeys();

// HfConfigKeysMarkdown: HfConfigKeys() as the Markdown table that
// core/adapters/README.md shows (a header row, then one row per key; every
// line ends in '\n').
std::string HfConfigKeysMarkdown();

// MegatronFlagName: the flag a command-line word names, "--seq-length" for
// both "--seq-length" and "--seq-length=4096"; "" for a word that is not a
// flag (a value, a positional argument).
std::string MegatronFlagName(absl::string_view word);

// MergeMegatronFlags: `config_flags`, minus every flag that `user_flags`
// names (with the values that follow it up to the next flag), then
// `user_flags` unchanged. So a user's flag overrides the config's whatever its
// spelling ("--seq-length 4096" or "--seq-length=4096"), the user's words
// reach the Megatron-LM adapter as written (its errors quote them), and a
// switch of the config can be repeated but not removed. `config_flags` must
// be a list MegatronFlagsFromHfConfig made: every value follows its flag.
std::vector<std::string> MergeMegatronFlags(
    const std::vector<std::string>& config_flags,
    const std::vector<std::string>& user_flags);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ADAPTERS_HF_CONFIG_H_
