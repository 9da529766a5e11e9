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
#include "core/base/field_errors.h"
#include "core/base/input_limits.h"
#include "core/base/json.h"
#include "core/base/json_reader.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

using Json = nlohmann::json;

// Megatron-LM's default --make-vocab-size-divisible-by.
constexpr int64_t kVocabularyDivisor = 128;

// What a family's config class assumes for a key its config.json lacks
// (transformers' defaults).
struct Family {
  const char* model_type;
  bool tied;         // tie_word_embeddings
  int64_t head_dim;  // head_dim; 0: hidden_size // num_attention_heads
};

// Sorted by model_type.
constexpr Family kFamilies[] = {
    {"gemma", /*tied=*/true, /*head_dim=*/256},
    {"llama", false, 0},
    {"mistral", false, 0},
    {"qwen2", false, 0},
    {"qwen3", false, 128},
};

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

  std::optional<int64_t> PositiveInteger(const std::string& key,
                                         bool required) {
    const Json* value = Find(key, required);
    int64_t number = 0;
    if (value == nullptr || !JsonToInt(*value, PathOf(key), errors_, &number)) {
      return std::nullopt;
    }
    if (number <= 0) {
      errors_->push_back(
          {PathOf(key),
           absl::StrCat(PathOf(key), ": expected a positive integer, got ",
                        number),
           ErrorCode::kOutOfRange});
      return std::nullopt;
    }
    return number;
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
  std::map<std::string, int64_t> numbers;
  std::map<std::string, bool> switches;

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

Values ReadValues(const Json& config, std::vector<FieldError>* errors) {
  ConfigReader r(config, errors);
  Values values;
  values.family = r.ModelType();
  for (const HfConfigKey& key : HfConfigKeys()) {
    if (!key.families.empty() &&
        (values.family == nullptr ||
         std::find(key.families.begin(), key.families.end(),
                   values.family->model_type) == key.families.end())) {
      continue;
    }
    const bool required = key.absent == kHfRequired;
    switch (key.value) {
      case HfValue::kPositiveInteger:
        if (std::optional<int64_t> n = r.PositiveInteger(key.key, required)) {
          values.numbers[key.key] = *n;
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

// The flags of a parsed config object, or errors.
std::vector<std::string> FlagsOf(const Json& config,
                                 std::vector<FieldError>* errors) {
  const Values values = ReadValues(config, errors);
  if (!errors->empty()) return {};
  const Family& family = *values.family;
  // Required, so present.
  const int64_t hidden = *values.Number("hidden_size");
  const int64_t heads = *values.Number("num_attention_heads");
  const int64_t positions = *values.Number("max_position_embeddings");

  std::vector<std::string> flags;
  const auto add = [&flags](const char* flag, int64_t value) {
    flags.push_back(flag);
    flags.push_back(absl::StrCat(value));
  };
  add("--num-layers", *values.Number("num_hidden_layers"));
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
  const int64_t dim =
      values.Number("head_dim")
          .value_or(family.head_dim > 0 ? family.head_dim : hidden / heads);
  if (hidden % heads != 0 || dim != hidden / heads) add("--kv-channels", dim);
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
    const std::string& config_json) {
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
    flags = FlagsOf(*config, &errors);
  }
  if (!errors.empty()) return InvalidInputError(errors);
  return flags;
}

const std::vector<HfConfigKey>& HfConfigKeys() {
  // clang-format off
  // {key, families, value, flags, absent}
  static const auto* keys = new std::vector<HfConfigKey>{
      {"num_hidden_layers", {}, HfValue::kPositiveInteger, "`--num-layers`",
       kHfRequired},
      {"hidden_size", {}, HfValue::kPositiveInteger, "`--hidden-size`", kHfRequired},
      {"intermediate_size", {}, HfValue::kPositiveInteger, "`--ffn-hidden-size`",
       kHfRequired},
      {"num_attention_heads", {}, HfValue::kPositiveInteger,
       "`--num-attention-heads`", kHfRequired},
      {"num_key_value_heads", {}, HfValue::kPositiveInteger,
       "`--group-query-attention --num-query-groups N`, only when it differs "
       "from `num_attention_heads`",
       "`num_attention_heads` (multi-head attention)"},
      {"head_dim", {}, HfValue::kPositiveInteger,
       "`--kv-channels N`, only when it differs from `hidden_size / "
       "num_attention_heads` (Megatron-LM's default, which must divide "
       "evenly)",
       "qwen3: 128, gemma: 256, others: `hidden_size // "
       "num_attention_heads` (transformers' defaults)"},
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
    }
    std::string value;
    switch (key.value) {
      case HfValue::kPositiveInteger:
        value = "positive integer";
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
