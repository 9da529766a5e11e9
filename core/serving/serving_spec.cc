#include "core/serving/serving_spec.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/adapters/calculon.h"
#include "core/adapters/hf_config.h"
#include "core/adapters/megatron.h"
#include "core/base/field_errors.h"
#include "core/base/input_limits.h"
#include "core/base/json.h"
#include "core/base/json_reader.h"
#include "core/base/status_macros.h"
#include "core/presets/presets.h"
#include "core/spec/enums.h"
#include "core/spec/spec_json.h"

namespace blueprint {
namespace {

using Json = nlohmann::json;

// The spellings of the sum types' "type" keys, in variant index order.
const std::vector<std::string>& PoolsChoices() {
  static const auto* choices =
      new std::vector<std::string>{"aggregated", "disaggregated"};
  return *choices;
}
const std::vector<std::string>& SpeculativeChoices() {
  static const auto* choices = new std::vector<std::string>{"none"};
  return *choices;
}

// The lines of a failed status as FieldErrors at `path` (a preset's errors
// are the preset's, not the document's: they concern the name given there).
void AppendErrors(const absl::Status& status, const std::string& path,
                  const std::string& what, std::vector<FieldError>* errors) {
  for (FieldError& e : FieldErrorsOf(status)) {
    errors->push_back({path, absl::StrCat(path, ": ", what, ": ", e.message),
                       e.code});
  }
}

// A model preset's model (ModelFromHfConfig of its config.json).
std::optional<TransformerModel> ModelOfPreset(const std::string& name,
                                              const System& system,
                                              std::vector<FieldError>* errors) {
  const char* config = FindPreset(PresetKind::kModel, name);
  if (config == nullptr) {
    errors->push_back(UnknownChoiceError("model", PresetNames(PresetKind::kModel),
                                         Json(name)));
    return std::nullopt;
  }
  absl::StatusOr<TransformerModel> model = ModelFromHfConfig(config, system);
  if (!model.ok()) {
    AppendErrors(model.status(), "model", "preset " + name, errors);
    return std::nullopt;
  }
  model->name = name;
  return *std::move(model);
}

std::optional<System> SystemOfPreset(const std::string& name,
                                     std::vector<FieldError>* errors) {
  const char* text = FindPreset(PresetKind::kSystem, name);
  if (text == nullptr) {
    errors->push_back(UnknownChoiceError(
        "system", PresetNames(PresetKind::kSystem), Json(name)));
    return std::nullopt;
  }
  absl::StatusOr<System> system = FromCalculonSystem(text);
  if (!system.ok()) {
    AppendErrors(system.status(), "system", "preset " + name, errors);
    return std::nullopt;
  }
  system->name = name;
  return *std::move(system);
}

void ReadPool(const Json& value, const std::string& path,
              std::vector<FieldError>* errors, ServingPool* out) {
  JsonObjectReader reader(value, path, errors);
  for (const ServingPoolKey& key : kServingPoolKeys) {
    reader.ReadInt(key.key, &(out->*key.field));
  }
  reader.RejectUnknownKeys();
}

Json PoolToJson(const ServingPool& pool) {
  Json out = Json::object();
  for (const ServingPoolKey& key : kServingPoolKeys) {
    out[key.key] = pool.*key.field;
  }
  return out;
}

// The "type" of a sum type's object: its index among `choices`, or nullopt
// (reported).
std::optional<size_t> ReadType(JsonObjectReader* reader,
                               const std::vector<std::string>& choices) {
  const Json* type = reader->Member("type");
  if (type == nullptr) return std::nullopt;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (type->is_string() && type->get_ref<const std::string&>() == choices[i]) {
      return i;
    }
  }
  reader->errors()->push_back(
      UnknownChoiceError(reader->PathOf("type"), choices, *type));
  return std::nullopt;
}

void ReadPools(const Json& value, std::vector<FieldError>* errors,
               ServingPools* out) {
  JsonObjectReader reader(value, "pools", errors);
  const std::optional<size_t> type = ReadType(&reader, PoolsChoices());
  if (type == 0u) {
    AggregatedPools pools;
    if (const Json* pool = reader.Member("pool")) {
      ReadPool(*pool, reader.PathOf("pool"), errors, &pools.pool);
    }
    *out = pools;
  } else if (type == 1u) {
    DisaggregatedPools pools;
    if (const Json* pool = reader.Member("prefill")) {
      ReadPool(*pool, reader.PathOf("prefill"), errors, &pools.prefill);
    }
    if (const Json* pool = reader.Member("decode")) {
      ReadPool(*pool, reader.PathOf("decode"), errors, &pools.decode);
    }
    *out = pools;
  }
  // Without a known type the other keys cannot be judged.
  if (type.has_value()) reader.RejectUnknownKeys();
}

Json PoolsToJson(const ServingPools& pools) {
  Json out = Json::object();
  out["type"] = PoolsChoices()[pools.index()];
  std::visit(Overloaded{[&](const AggregatedPools& a) {
                          out["pool"] = PoolToJson(a.pool);
                        },
                        [&](const DisaggregatedPools& d) {
                          out["prefill"] = PoolToJson(d.prefill);
                          out["decode"] = PoolToJson(d.decode);
                        }},
             pools);
  return out;
}

void ReadSpeculative(const Json& value, std::vector<FieldError>* errors,
                     SpeculativeDecoding* out) {
  JsonObjectReader reader(value, "speculative", errors);
  if (ReadType(&reader, SpeculativeChoices()) == 0u) *out = NoSpeculation{};
  reader.RejectUnknownKeys();
}

void ReadFormat(JsonObjectReader* top) {
  const Json* format = top->Member("format");
  if (format == nullptr) return;
  if (format->is_string() &&
      format->get_ref<const std::string&>() == kServingSpecFormat) {
    return;
  }
  top->errors()->push_back(
      {"format",
       absl::StrCat("format: expected \"", kServingSpecFormat, "\", got ",
                    JsonSnippet(*format)),
       ErrorCode::kUnsupported});
}

// The system first: a model preset is read on it.
void ReadSystemAndModel(JsonObjectReader* top, ServingSpec* spec) {
  std::vector<FieldError>* errors = top->errors();
  bool system_ok = false;
  if (const Json* system = top->Member("system")) {
    const size_t before = errors->size();
    if (system->is_string()) {
      std::optional<System> preset =
          SystemOfPreset(system->get_ref<const std::string&>(), errors);
      if (preset) spec->system = *std::move(preset);
    } else {
      ReadSystemJson(*system, "system", NameKey::kPresent, errors,
                     &spec->system);
    }
    system_ok = errors->size() == before;
  }
  if (const Json* model = top->Member("model")) {
    if (!model->is_string()) {
      ReadModelJson(*model, "model", ModelKeys::kSpecV3, errors, &spec->model);
    } else if (system_ok) {
      std::optional<TransformerModel> preset = ModelOfPreset(
          model->get_ref<const std::string&>(), spec->system, errors);
      if (preset) spec->model = *std::move(preset);
    }
  }
}

}  // namespace

namespace {

// The pool of each role: the shared one, or the role's own.
const ServingPool& PoolOf(const ServingSpec& spec, bool decode) {
  return std::visit(
      Overloaded{
          [](const AggregatedPools& a) -> const ServingPool& { return a.pool; },
          [decode](const DisaggregatedPools& d) -> const ServingPool& {
            return decode ? d.decode : d.prefill;
          }},
      spec.pools);
}

}  // namespace

absl::StatusOr<TransformerModel> ModelFromHfConfig(
    const std::string& config_json, const System& system) {
  BP_ASSIGN_OR_RETURN(const std::vector<std::string> flags,
                      MegatronFlagsFromHfConfig(config_json));
  BP_ASSIGN_OR_RETURN(
      const MappingSpec spec,
      FromMegatronArgs(
          MergeMegatronFlags(flags, {"--micro-batch-size", "1", "--bf16"}),
          system));
  const auto* training = std::get_if<TransformerTrainingMappingSpec>(&spec);
  if (training == nullptr) {
    return absl::InternalError("the Megatron-LM import gave no training spec");
  }
  return training->model;
}

const ServingPool& DecodePool(const ServingSpec& spec) {
  return PoolOf(spec, /*decode=*/true);
}

const ServingPool& PrefillPool(const ServingSpec& spec) {
  return PoolOf(spec, /*decode=*/false);
}

const char* DecodePoolPath(const ServingSpec& spec) {
  return IsDisaggregated(spec) ? "pools.decode" : "pools.pool";
}

const char* PrefillPoolPath(const ServingSpec& spec) {
  return IsDisaggregated(spec) ? "pools.prefill" : "pools.pool";
}

bool IsDisaggregated(const ServingSpec& spec) {
  return std::holds_alternative<DisaggregatedPools>(spec.pools);
}

absl::StatusOr<ServingSpec> ParseServingSpecJson(const std::string& text) {
  if (text.size() > kMaxInputBytes) {
    return InvalidInputError(
        {{"spec", InputTooLargeMessage("spec"), ErrorCode::kTooLarge}});
  }
  BP_ASSIGN_OR_RETURN(const Json value, ParseJson(text));
  std::vector<FieldError> errors;
  JsonObjectReader top(value, "", &errors);
  if (!top.is_object()) return InvalidInputError(errors);
  ServingSpec spec;
  ReadFormat(&top);
  ReadSystemAndModel(&top, &spec);
  top.ReadEnum("weight_datatype", &ParseEnum<DataType>, EnumChoices<DataType>(),
               &spec.weight_datatype);
  top.ReadDouble("memory_utilization", &spec.memory_utilization);
  if (const Json* kv = top.Member("kv_cache")) {
    JsonObjectReader reader(*kv, "kv_cache", &errors);
    reader.ReadEnum("datatype", &ParseEnum<DataType>, EnumChoices<DataType>(),
                    &spec.kv_cache.datatype);
    reader.ReadInt("block_tokens", &spec.kv_cache.block_tokens);
    reader.RejectUnknownKeys();
  }
  if (const Json* pools = top.Member("pools")) {
    ReadPools(*pools, &errors, &spec.pools);
  }
  if (const Json* workload = top.Member("workload")) {
    JsonObjectReader reader(*workload, "workload", &errors);
    reader.ReadInt("input_tokens", &spec.workload.input_tokens);
    reader.ReadInt("output_tokens", &spec.workload.output_tokens);
    reader.ReadInt("concurrency", &spec.workload.concurrency);
    reader.RejectUnknownKeys();
  }
  if (const Json* speculative = top.Member("speculative")) {
    ReadSpeculative(*speculative, &errors, &spec.speculative);
  }
  top.RejectUnknownKeys();
  if (!errors.empty()) return InvalidInputError(errors);
  return spec;
}

std::string ServingSpecToJson(const ServingSpec& spec) {
  return CanonicalJson(ServingSpecToJsonValue(spec)) + "\n";
}

Json ServingSpecToJsonValue(const ServingSpec& spec) {
  Json out = Json::object();
  out["format"] = kServingSpecFormat;
  out["model"] = ModelToJsonValue(spec.model, ModelKeys::kSpecV3);
  out["system"] = SystemToJsonValue(spec.system, NameKey::kPresent);
  out["weight_datatype"] = EnumName(spec.weight_datatype);
  out["memory_utilization"] = spec.memory_utilization;
  out["kv_cache"] = Json::object();
  out["kv_cache"]["datatype"] = EnumName(spec.kv_cache.datatype);
  out["kv_cache"]["block_tokens"] = spec.kv_cache.block_tokens;
  out["pools"] = PoolsToJson(spec.pools);
  out["workload"] = Json::object();
  out["workload"]["input_tokens"] = spec.workload.input_tokens;
  out["workload"]["output_tokens"] = spec.workload.output_tokens;
  out["workload"]["concurrency"] = spec.workload.concurrency;
  out["speculative"] = Json::object();
  out["speculative"]["type"] = SpeculativeChoices()[spec.speculative.index()];
  return out;
}

}  // namespace blueprint
