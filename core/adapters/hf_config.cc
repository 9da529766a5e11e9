#include "core/adapters/hf_config.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/adapters/layer_pattern.h"
#include "core/base/field_errors.h"
#include "core/base/input_limits.h"
#include "core/base/json.h"
#include "core/base/json_reader.h"
#include "core/spec/check.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

using Json = nlohmann::json;

// Megatron-LM's default --make-vocab-size-divisible-by.
constexpr int64_t kVocabularyDivisor = 128;

// How a family's blocks are built beyond the dense ones.
enum class Architecture {
  kDense,     // every MLP dense
  kMixtral,   // every block's MLP is a mixture of experts of intermediate_size
  kQwenMoe,   // experts in the blocks decoder_sparse_step and
              // mlp_only_layers say
  kDeepSeek,  // latent attention; experts after first_k_dense_replace
};

// What a family's config class assumes for a key its config.json lacks
// (transformers' defaults), and its architecture.
struct Family {
  const char* model_type;
  bool tied;         // tie_word_embeddings
  int64_t head_dim;  // head_dim; 0: hidden_size // num_attention_heads
  Architecture architecture;
};

// Sorted by model_type.
constexpr Family kFamilies[] = {
    {"deepseek_v2", /*tied=*/false, /*head_dim=*/0, Architecture::kDeepSeek},
    {"deepseek_v3", false, 0, Architecture::kDeepSeek},
    {"gemma", true, 256, Architecture::kDense},
    {"llama", false, 0, Architecture::kDense},
    {"mistral", false, 0, Architecture::kDense},
    {"mixtral", false, 0, Architecture::kMixtral},
    {"qwen2", false, 0, Architecture::kDense},
    {"qwen2_moe", false, 0, Architecture::kQwenMoe},
    {"qwen3", false, 128, Architecture::kDense},
    {"qwen3_moe", false, 0, Architecture::kQwenMoe},
};

// The families whose attention is Megatron-LM's multi-latent attention: they
// have no key/value heads or head_dim of their own.
const std::vector<std::string>& LatentFamilies() {
  static const auto* families =
      new std::vector<std::string>{"deepseek_v2", "deepseek_v3"};
  return *families;
}

const Family* FindFamily(const std::string& model_type) {
  for (const Family& family : kFamilies) {
    if (model_type == family.model_type) return &family;
  }
  return nullptr;
}

// The members of the config object, read with one error line per problem.
class ConfigReader {
 public:
  ConfigReader(const Json& object, std::vector<FieldError>* errors)
      : object_(object), errors_(errors) {}

  std::string PathOf(const std::string& key) const {
    return MemberPath(kHfConfigName, key);
  }

  // The value of `key`; nullptr when it is absent, or null and optional
  // (transformers reads null as "the default"). A required key that is
  // missing is an error; `choices` (if any) are named in it.
  const Json* Find(const std::string& key, bool required,
                   const std::vector<std::string>& choices = {}) {
    const auto it = object_.find(key);
    if (it != object_.end() && (required || !it->is_null())) return &*it;
    if (required && it == object_.end()) {
      std::string message =
          absl::StrCat(PathOf(key), ": required key is missing");
      if (!choices.empty()) {
        absl::StrAppend(&message, " (one of ", Quoted(choices), ")");
      }
      errors_->push_back(
          {PathOf(key), std::move(message), ErrorCode::kMissingField});
    }
    return nullptr;
  }

  // An integer of at least `minimum` (0 or 1); `null_is` is what a null
  // value means (nullopt: a null is the key's absence, or an error when it
  // is required).
  std::optional<int64_t> Integer(const std::string& key, bool required,
                                 int64_t minimum,
                                 std::optional<int64_t> null_is = {}) {
    const Json* value = Find(key, required || null_is.has_value());
    if (value != nullptr && value->is_null() && null_is) return null_is;
    int64_t number = 0;
    if (value == nullptr || !JsonToInt(*value, PathOf(key), errors_, &number)) {
      return std::nullopt;
    }
    // At most the spec's kMaxCount: a larger size could not pass the
    // checker, and products of two (n_shared_experts times
    // moe_intermediate_size) stay within 64 bits.
    if (number < minimum || number > kMaxCount) {
      errors_->push_back(
          {PathOf(key),
           absl::StrCat(PathOf(key), ": expected a ",
                        minimum > 0 ? "positive" : "non-negative", " integer",
                        number > kMaxCount
                            ? absl::StrCat(" of at most ", kMaxCount)
                            : "",
                        ", got ", number),
           ErrorCode::kOutOfRange});
      return std::nullopt;
    }
    return number;
  }

  // An array of non-negative integers (block indices); absent or null: {}.
  std::optional<std::vector<int64_t>> Indices(const std::string& key) {
    const Json* value = Find(key, /*required=*/false);
    if (value == nullptr) return std::vector<int64_t>{};
    if (!value->is_array()) {
      errors_->push_back({PathOf(key),
                          absl::StrCat(PathOf(key),
                                       ": expected an array of block indices, "
                                       "got ",
                                       JsonSnippet(*value)),
                          ErrorCode::kWrongType});
      return std::nullopt;
    }
    std::vector<int64_t> indices;
    bool ok = true;
    for (size_t i = 0; i < value->size(); ++i) {
      const std::string path = absl::StrCat(PathOf(key), "[", i, "]");
      int64_t index = 0;
      if (!JsonToInt((*value)[i], path, errors_, &index)) {
        ok = false;
      } else if (index < 0) {
        errors_->push_back(
            {path,
             absl::StrCat(path, ": expected a block index (0 or more), got ",
                          index),
             ErrorCode::kOutOfRange});
        ok = false;
      } else {
        indices.push_back(index);
      }
    }
    if (!ok) return std::nullopt;
    return indices;
  }

  std::optional<bool> Boolean(const std::string& key) {
    const Json* value = Find(key, /*required=*/false);
    bool flag = false;
    if (value == nullptr || !JsonToBool(*value, PathOf(key), errors_, &flag)) {
      return std::nullopt;
    }
    return flag;
  }

  // The family model_type names, or nullptr (reported).
  const Family* ModelType() {
    const std::vector<std::string>& choices = HfModelTypes();
    const Json* value = Find("model_type", /*required=*/true, choices);
    if (value == nullptr) return nullptr;
    const Family* family =
        value->is_string() ? FindFamily(value->get_ref<const std::string&>())
                           : nullptr;
    if (family == nullptr) {
      errors_->push_back(
          UnknownChoiceError(PathOf("model_type"), choices, *value));
    }
    return family;
  }

 private:
  static std::string Quoted(const std::vector<std::string>& words) {
    std::vector<std::string> quoted;
    for (const std::string& word : words) quoted.push_back(Json(word).dump());
    return absl::StrJoin(quoted, ", ");
  }

  const Json& object_;
  std::vector<FieldError>* errors_;
};

// The values of the keys of HfConfigKeys() a config has (errors for the
// rest), after its model_type.
struct Values {
  const Family* family = nullptr;
  std::map<std::string, int64_t> numbers;  // kPositiveIntegerOrNull: null 0
  std::map<std::string, bool> switches;
  std::map<std::string, std::vector<int64_t>> indices;

  std::optional<int64_t> Number(const std::string& key) const {
    const auto it = numbers.find(key);
    if (it == numbers.end()) return std::nullopt;
    return it->second;
  }
  std::optional<bool> Switch(const std::string& key) const {
    const auto it = switches.find(key);
    if (it == switches.end()) return std::nullopt;
    return it->second;
  }
};

// Whether a config of `family` has `key` (an unknown family: only the keys
// of every family).
bool HasKey(const HfConfigKey& key, const Family* family) {
  const auto listed = [&](const std::vector<std::string>& families) {
    return family != nullptr && std::find(families.begin(), families.end(),
                                          family->model_type) != families.end();
  };
  if (!key.families.empty()) return listed(key.families);
  return family == nullptr || !listed(key.excluded);
}

Values ReadValues(const Json& config, std::vector<FieldError>* errors) {
  ConfigReader r(config, errors);
  Values values;
  values.family = r.ModelType();
  for (const HfConfigKey& key : HfConfigKeys()) {
    if (!HasKey(key, values.family)) continue;
    const bool required = key.absent == kHfRequired;
    switch (key.value) {
      case HfValue::kPositiveInteger:
      case HfValue::kNonNegativeInteger:
      case HfValue::kPositiveIntegerOrNull: {
        const int64_t minimum =
            key.value == HfValue::kNonNegativeInteger ? 0 : 1;
        const std::optional<int64_t> null_is =
            key.value == HfValue::kPositiveIntegerOrNull
                ? std::optional<int64_t>(0)
                : std::nullopt;
        if (std::optional<int64_t> n =
                r.Integer(key.key, required, minimum, null_is)) {
          values.numbers[key.key] = *n;
        }
        break;
      }
      case HfValue::kLayerIndices:
        if (std::optional<std::vector<int64_t>> list = r.Indices(key.key)) {
          values.indices[key.key] = *std::move(list);
        }
        break;
      case HfValue::kBoolean:
        if (std::optional<bool> b = r.Boolean(key.key)) {
          values.switches[key.key] = *b;
        }
        break;
      case HfValue::kModelType:
        break;  // read first
    }
  }
  return values;
}

// The blocks with experts of a config's model, one '0' (dense) or '1' (MoE)
// per block of `layers` (the config's num_hidden_layers, or the proxy's
// --num-layers), "" when every block has them; nullopt for a dense model (no
// expert in any block). Appends an error for a block index beyond the
// config's own blocks or a pattern longer than a --moe-layer-freq expression
// may be.
std::optional<std::string> ExpertBlocks(const Values& values, int64_t layers,
                                        std::vector<FieldError>* errors) {
  std::string pattern;
  const auto build = [&](const std::string& key, auto is_moe) {
    if (layers > kMaxLayerPattern) {
      const std::string path = MemberPath(kHfConfigName, key);
      errors->push_back(
          {path,
           absl::StrCat(path, ": dense blocks among ", layers,
                        " blocks (num_hidden_layers) are not modelled beyond ",
                        kMaxLayerPattern, " blocks"),
           ErrorCode::kOutOfRange});
      return;
    }
    for (int64_t i = 0; i < layers; ++i)
      pattern.push_back(is_moe(i) ? '1' : '0');
  };
  switch (values.family->architecture) {
    case Architecture::kDense:
      return std::nullopt;
    case Architecture::kMixtral:
      return std::string();
    case Architecture::kQwenMoe: {
      // transformers: block i is sparse iff i is not in mlp_only_layers and
      // (i + 1) % decoder_sparse_step == 0.
      const int64_t step = values.Number("decoder_sparse_step").value_or(1);
      std::set<int64_t> dense;
      const auto it = values.indices.find("mlp_only_layers");
      if (it != values.indices.end()) {
        for (size_t i = 0; i < it->second.size(); ++i) {
          const int64_t index = it->second[i];
          const int64_t config_layers = *values.Number("num_hidden_layers");
          if (index >= config_layers) {
            const std::string path = absl::StrCat(
                MemberPath(kHfConfigName, "mlp_only_layers"), "[", i, "]");
            errors->push_back(
                {path,
                 absl::StrCat(path, ": block ", index,
                              " is beyond the last block (num_hidden_layers ",
                              config_layers, ")"),
                 ErrorCode::kOutOfRange});
          }
          dense.insert(index);
        }
      }
      if (step == 1 && dense.empty()) return std::string();
      build(dense.empty() ? "decoder_sparse_step" : "mlp_only_layers",
            [&](int64_t i) {
              return dense.count(i) == 0 && (i + 1) % step == 0;
            });
      break;
    }
    case Architecture::kDeepSeek: {
      // DeepSeek's modelling code: block i has experts iff
      // i >= first_k_dense_replace and i % moe_layer_freq == 0.
      const int64_t first = values.Number("first_k_dense_replace").value_or(0);
      const int64_t freq = values.Number("moe_layer_freq").value_or(1);
      if (first == 0 && freq == 1) return std::string();
      build(first > 0 ? "first_k_dense_replace" : "moe_layer_freq",
            [&](int64_t i) { return i >= first && i % freq == 0; });
      break;
    }
  }
  if (pattern.find('1') == std::string::npos) return std::nullopt;
  if (pattern.find('0') == std::string::npos) return std::string();
  return pattern;
}

// The flags of a parsed config object, or errors.
std::vector<std::string> FlagsOf(const Json& config,
                                 std::optional<int64_t> num_layers,
                                 std::vector<FieldError>* errors) {
  const Values values = ReadValues(config, errors);
  if (!errors->empty()) return {};
  const Family& family = *values.family;
  // Required, so present.
  const int64_t hidden = *values.Number("hidden_size");
  const int64_t heads = *values.Number("num_attention_heads");
  const int64_t positions = *values.Number("max_position_embeddings");

  const int64_t layers = *values.Number("num_hidden_layers");
  // Which blocks have experts, as the family's transformers class decides.
  const std::optional<std::string> pattern =
      ExpertBlocks(values, num_layers.value_or(layers), errors);
  if (!errors->empty()) return {};

  std::vector<std::string> flags;
  const auto add = [&flags](const char* flag, int64_t value) {
    flags.push_back(flag);
    flags.push_back(absl::StrCat(value));
  };
  add("--num-layers", layers);
  add("--hidden-size", hidden);
  add("--ffn-hidden-size", *values.Number("intermediate_size"));
  add("--num-attention-heads", heads);
  const std::optional<int64_t> kv_heads = values.Number("num_key_value_heads");
  if (kv_heads && *kv_heads != heads) {
    flags.push_back("--group-query-attention");
    add("--num-query-groups", *kv_heads);
  }
  // transformers: head_dim, else the family's default, else hidden // heads.
  // Megatron-LM: --kv-channels, else hidden / heads (which must divide).
  // Latent attention sizes its heads itself.
  const int64_t dim =
      values.Number("head_dim")
          .value_or(family.head_dim > 0 ? family.head_dim : hidden / heads);
  if (family.architecture != Architecture::kDeepSeek &&
      (hidden % heads != 0 || dim != hidden / heads)) {
    add("--kv-channels", dim);
  }
  add("--seq-length", positions);
  add("--max-position-embeddings", positions);
  add("--vocab-size", *values.Number("vocab_size"));
  add("--make-vocab-size-divisible-by", kVocabularyDivisor);
  if (!values.Switch("tie_word_embeddings").value_or(family.tied)) {
    flags.push_back("--untie-embeddings-and-output-weights");
  }
  if (!values.Switch("mlp_bias").value_or(false)) {
    flags.push_back("--disable-bias-linear");
  }
  if (family.architecture == Architecture::kDeepSeek) {
    flags.push_back("--multi-latent-attention");
    add("--kv-lora-rank", *values.Number("kv_lora_rank"));
    add("--qk-head-dim", *values.Number("qk_nope_head_dim"));
    add("--qk-pos-emb-head-dim", *values.Number("qk_rope_head_dim"));
    add("--v-head-dim", *values.Number("v_head_dim"));
    // null (0): queries projected directly, Megatron-LM's default.
    if (const int64_t rank = *values.Number("q_lora_rank"); rank > 0) {
      add("--q-lora-rank", rank);
    }
  }
  if (pattern) {
    // Experts: their number, the top-k, their size and the shared ones.
    for (const char* key :
         {"num_local_experts", "num_experts", "n_routed_experts"}) {
      if (const std::optional<int64_t> n = values.Number(key)) {
        add("--num-experts", *n);
      }
    }
    add("--moe-router-topk", *values.Number("num_experts_per_tok"));
    const std::optional<int64_t> expert =
        values.Number("moe_intermediate_size");
    if (expert) add("--moe-ffn-hidden-size", *expert);
    if (const std::optional<int64_t> shared =
            values.Number("shared_expert_intermediate_size")) {
      add("--moe-shared-expert-intermediate-size", *shared);
    }
    // n_shared_experts shared experts of moe_intermediate_size each: one
    // MLP of their total size (both required, so present).
    if (const std::optional<int64_t> n = values.Number("n_shared_experts");
        n && *n > 0) {
      add("--moe-shared-expert-intermediate-size", *n * *expert);
    }
    if (!pattern->empty()) {
      flags.push_back("--moe-layer-freq");
      flags.push_back(LayerPatternExpression(*pattern));
    }
  }
  if (const int64_t mtp = values.Number("num_nextn_predict_layers").value_or(0);
      mtp > 0) {
    add("--mtp-num-layers", mtp);
  }
  flags.insert(flags.end(), {"--swiglu", "--normalization", "RMSNorm",
                             "--position-embedding-type", "rope"});
  return flags;
}

}  // namespace

const std::vector<std::string>& HfModelTypes() {
  static const auto* types = [] {
    auto* out = new std::vector<std::string>;
    for (const Family& family : kFamilies) out->push_back(family.model_type);
    return out;
  }();
  return *types;
}

absl::StatusOr<std::vector<std::string>> MegatronFlagsFromHfConfig(
    const std::string& config_json, std::optional<int64_t> num_layers) {
  std::vector<FieldError> errors;
  std::vector<std::string> flags;
  if (config_json.size() > kMaxInputBytes) {
    errors.push_back({kHfConfigName, InputTooLargeMessage(kHfConfigName),
                      ErrorCode::kTooLarge});
  } else if (absl::StatusOr<Json> config = ParseJson(config_json);
             !config.ok()) {
    errors.push_back(
        {kHfConfigName,
         absl::StrCat(kHfConfigName, ": ", config.status().message()),
         ErrorCode::kSyntax});
  } else if (!config->is_object()) {
    errors.push_back({kHfConfigName,
                      absl::StrCat(kHfConfigName, ": expected an object, got ",
                                   JsonSnippet(*config)),
                      ErrorCode::kWrongType});
  } else {
    flags = FlagsOf(*config, num_layers, &errors);
  }
  if (!errors.empty()) return InvalidInputError(errors);
  return flags;
}

const std::vector<HfConfigKey>& HfConfigKeys() {
  static const std::vector<std::string> kMoeFamilies = {
      "deepseek_v2", "deepseek_v3", "mixtral", "qwen2_moe", "qwen3_moe"};
  static const std::vector<std::string> kSizedExpertFamilies = {
      "deepseek_v2", "deepseek_v3", "qwen2_moe", "qwen3_moe"};
  // clang-format off
  // {key, families, value, flags, absent}
  static const auto* keys = new std::vector<HfConfigKey>{
      {"num_hidden_layers", {}, HfValue::kPositiveInteger, "`--num-layers`",
       kHfRequired},
      {"hidden_size", {}, HfValue::kPositiveInteger, "`--hidden-size`", kHfRequired},
      {"intermediate_size", {}, HfValue::kPositiveInteger,
       "`--ffn-hidden-size`: the dense blocks' MLP (mixtral: every expert's, "
       "which Megatron-LM's `--moe-ffn-hidden-size` defaults to)",
       kHfRequired},
      {"num_attention_heads", {}, HfValue::kPositiveInteger,
       "`--num-attention-heads`", kHfRequired},
      {"num_key_value_heads", {}, HfValue::kPositiveInteger,
       "`--group-query-attention --num-query-groups N`, only when it differs "
       "from `num_attention_heads`",
       "`num_attention_heads` (multi-head attention)", LatentFamilies()},
      {"head_dim", {}, HfValue::kPositiveInteger,
       "`--kv-channels N`, only when it differs from `hidden_size / "
       "num_attention_heads` (Megatron-LM's default, which must divide "
       "evenly)",
       "qwen3: 128, gemma: 256, others: `hidden_size // "
       "num_attention_heads` (transformers' defaults)",
       LatentFamilies()},
      {"max_position_embeddings", {}, HfValue::kPositiveInteger,
       "`--seq-length N --max-position-embeddings N`: the longest sequence "
       "the checkpoint supports; give `--seq-length` to train on shorter ones",
       kHfRequired},
      {"vocab_size", {}, HfValue::kPositiveInteger,
       "`--vocab-size N --make-vocab-size-divisible-by 128` (Megatron-LM's "
       "default: the vocabulary is padded to a multiple of 128 * t)",
       kHfRequired},
      {"tie_word_embeddings", {}, HfValue::kBoolean,
       "`--untie-embeddings-and-output-weights` when `false`",
       "gemma: `true`, others: `false` (transformers' defaults)"},
      {"mlp_bias", {"llama"}, HfValue::kBoolean,
       "`--disable-bias-linear` unless `true`; the other families have no "
       "biases on the MLP and always get `--disable-bias-linear`",
       "`false`"},
      {"kv_lora_rank", LatentFamilies(), HfValue::kPositiveInteger,
       "`--multi-latent-attention --kv-lora-rank N`", kHfRequired},
      {"qk_nope_head_dim", LatentFamilies(), HfValue::kPositiveInteger,
       "`--qk-head-dim N`", kHfRequired},
      {"qk_rope_head_dim", LatentFamilies(), HfValue::kPositiveInteger,
       "`--qk-pos-emb-head-dim N`", kHfRequired},
      {"v_head_dim", LatentFamilies(), HfValue::kPositiveInteger,
       "`--v-head-dim N`", kHfRequired},
      {"q_lora_rank", LatentFamilies(), HfValue::kPositiveIntegerOrNull,
       "`--q-lora-rank N`; `null`: none (queries projected directly, "
       "Megatron-LM's default)",
       kHfRequired},
      {"num_local_experts", {"mixtral"}, HfValue::kPositiveInteger,
       "`--num-experts`", kHfRequired},
      {"num_experts", {"qwen2_moe", "qwen3_moe"}, HfValue::kPositiveInteger,
       "`--num-experts`", kHfRequired},
      {"n_routed_experts", LatentFamilies(), HfValue::kPositiveInteger,
       "`--num-experts`", kHfRequired},
      {"num_experts_per_tok", kMoeFamilies, HfValue::kPositiveInteger,
       "`--moe-router-topk`", kHfRequired},
      {"moe_intermediate_size", kSizedExpertFamilies,
       HfValue::kPositiveInteger, "`--moe-ffn-hidden-size`", kHfRequired},
      {"shared_expert_intermediate_size", {"qwen2_moe"},
       HfValue::kPositiveInteger, "`--moe-shared-expert-intermediate-size`",
       kHfRequired},
      {"n_shared_experts", LatentFamilies(), HfValue::kNonNegativeInteger,
       "`--moe-shared-expert-intermediate-size` N * `moe_intermediate_size` "
       "when N > 0",
       kHfRequired},
      {"decoder_sparse_step", {"qwen2_moe", "qwen3_moe"},
       HfValue::kPositiveInteger,
       "with `mlp_only_layers`, `--moe-layer-freq` when a block is dense: "
       "block i has experts iff i is not in `mlp_only_layers` and (i + 1) % "
       "`decoder_sparse_step` == 0 (transformers' rule), as a list "
       "expression such as `([0]+[1])*24`",
       "1"},
      {"mlp_only_layers", {"qwen2_moe", "qwen3_moe"}, HfValue::kLayerIndices,
       "the dense blocks, see `decoder_sparse_step`", "`[]`"},
      {"first_k_dense_replace", LatentFamilies(),
       HfValue::kNonNegativeInteger,
       "with `moe_layer_freq`, `--moe-layer-freq` when a block is dense: "
       "block i has experts iff i >= `first_k_dense_replace` and i % "
       "`moe_layer_freq` == 0 (DeepSeek's rule), e.g. `([0]*3+[1]*58)`",
       "0"},
      {"moe_layer_freq", LatentFamilies(), HfValue::kPositiveInteger,
       "see `first_k_dense_replace`", "1"},
      {"num_nextn_predict_layers", LatentFamilies(),
       HfValue::kNonNegativeInteger, "`--mtp-num-layers N` when N > 0", "0"},
      {"model_type", {}, HfValue::kModelType,
       "`--swiglu --normalization RMSNorm --position-embedding-type rope` "
       "(every family: a gated MLP, RMSNorm, rotary positions)",
       kHfRequired},
  };
  // clang-format on
  return *keys;
}

std::string HfConfigKeysMarkdown() {
  const auto cell = [](absl::string_view text) {
    return absl::StrReplaceAll(text, {{"|", "\\|"}});
  };
  std::string out =
      "| Key | Value | Megatron-LM flags | Without it |\n"
      "| --- | --- | --- | --- |\n";
  for (const HfConfigKey& key : HfConfigKeys()) {
    std::string name = absl::StrCat("`", key.key, "`");
    if (!key.families.empty()) {
      absl::StrAppend(&name, " (", absl::StrJoin(key.families, ", "), ")");
    } else if (!key.excluded.empty()) {
      absl::StrAppend(&name, " (not ", absl::StrJoin(key.excluded, ", "), ")");
    }
    std::string value;
    switch (key.value) {
      case HfValue::kPositiveInteger:
        value = "positive integer";
        break;
      case HfValue::kNonNegativeInteger:
        value = "integer >= 0";
        break;
      case HfValue::kPositiveIntegerOrNull:
        value = "positive integer or `null`";
        break;
      case HfValue::kLayerIndices:
        value = "array of block indices";
        break;
      case HfValue::kBoolean:
        value = "boolean";
        break;
      case HfValue::kModelType:
        value = absl::StrCat("string: `", absl::StrJoin(HfModelTypes(), "`, `"),
                             "`");
        break;
    }
    absl::StrAppend(&out, "| ", name, " | ", cell(value), " | ",
                    cell(key.flags), " | ", cell(key.absent), " |\n");
  }
  return out;
}

std::string MegatronFlagName(absl::string_view word) {
  if (!absl::StartsWith(word, "--")) return "";
  const absl::string_view name = word.substr(0, word.find('='));
  return name.size() > 2 ? std::string(name) : "";
}

std::vector<std::string> MergeMegatronFlags(
    const std::vector<std::string>& config_flags,
    const std::vector<std::string>& user_flags) {
  std::set<std::string> given;
  for (const std::string& word : user_flags) {
    std::string name = MegatronFlagName(word);
    if (!name.empty()) given.insert(std::move(name));
  }
  std::vector<std::string> merged;
  bool replaced = false;  // the current config flag is one the user gives
  for (const std::string& word : config_flags) {
    const std::string name = MegatronFlagName(word);
    if (!name.empty()) replaced = given.count(name) > 0;
    if (!replaced) merged.push_back(word);
  }
  merged.insert(merged.end(), user_flags.begin(), user_flags.end());
  return merged;
}

}  // namespace blueprint
