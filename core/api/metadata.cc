#include "core/api/metadata.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/base/field_errors.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "core/figures/figure_table.h"
#include "core/spec/check.h"
#include "core/spec/enums.h"
#include "core/spec/spec.h"
#include "core/spec/spec_json.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

using Json = nlohmann::json;

Json EnumsJson() {
  Json out = Json::object();
  ForEachEnumTable([&](const char* id, bool variant,
                       const std::vector<Spelling>& spellings) {
    Json choices = Json::array();
    for (const Spelling& s : spellings) {
      Json choice = Json::object();
      choice["name"] = s.name;
      choice["calculon"] =
          s.calculon != nullptr ? Json(s.calculon) : Json(nullptr);
      choice["meaning"] = s.meaning;
      choices.push_back(std::move(choice));
    }
    out[id] = Json::object({{"variant", variant}, {"choices", choices}});
  });
  return out;
}

// In table order (core/base/field_errors.h).
Json ErrorCodesJson() {
  Json out = Json::array();
  for (const ErrorCodeInfo& info : kErrorCodes) {
    out.push_back(
        Json::object({{"name", info.name}, {"meaning", info.meaning}}));
  }
  return out;
}

// The figure table (core/figures/figure_table.h), a row per figure; label
// is null for a figure the page's summary does not show, formula for a
// block figure (the plan's sums over the tasks).
Json FiguresJson() {
  Json out = Json::object();
  for (const FigureRow& f : FigureTable()) {
    out[f.name] = Json::object(
        {{"unit", FigureUnitName(f.unit)},
         {"group", FigureGroupName(f.group)},
         {"label", f.label[0] != '\0' ? Json(f.label) : Json(nullptr)},
         {"meaning", f.meaning},
         {"formula", f.formula[0] != '\0' ? Json(f.formula) : Json(nullptr)}});
  }
  return out;
}

//----- Spec fields, derived from the spec writer ------------------------------

// A system with one of everything, so that every key is printed.
System SampleSystem() {
  System system;
  const ProcessorRate rate{1, {{0, 1}}};
  system.matrix.rates[DataType::kFloat16] = rate;
  system.vector.rates[DataType::kFloat16] = rate;
  system.mem1 = {1, 1, {{0, 1}}};
  system.mem2 = {1, 1, {{0, 1}}};
  NetworkTier network;
  network.size = 1;
  network.reduce_scatter.offset = 0;
  network.all_gather.offset = 0;
  network.all_reduce.offset = 0;
  system.networks.push_back(network);
  return system;
}

// The path patterns of every leaf of `value` with their JSON types. Lists
// of rows (networks, efficiency tables) become "[]"; fixed pairs (an op's
// [scalar, offset], an efficiency row) keep their index; the keys of an
// engine are datatypes.
void Leaves(const Json& value, const std::string& path,
            std::map<std::string, std::string>* out) {
  if (value.is_object()) {
    const bool engine = path == "system.matrix" || path == "system.vector";
    for (const auto& item : value.items()) {
      const std::string key = engine ? "<datatype>" : item.key();
      Leaves(item.value(), path.empty() ? key : absl::StrCat(path, ".", key),
             out);
    }
  } else if (value.is_array()) {
    const bool rows = path == "system.networks" ||
                      absl::EndsWith(path, "_efficiency");
    for (size_t i = 0; i < value.size(); ++i) {
      Leaves(value[i],
             rows ? absl::StrCat(path, "[]") : absl::StrCat(path, "[", i, "]"),
             out);
    }
  } else {
    (*out)[path] = value.is_boolean()          ? "boolean"
                   : value.is_number_integer() ? "integer"
                   : value.is_number()         ? "number"
                   : value.is_string()         ? "string"
                                               : "null";
  }
}

// The string fields whose values an enum table spells.
const std::map<std::string, std::string>& ChoiceFields() {
  static const auto* fields = new std::map<std::string, std::string>{
      {"kind", VariantTable<MappingSpec>::kId},
      {"system.processing_mode", EnumTable<ProcessingMode>::kId},
      {"parallelism.tensor.communication.type",
       VariantTable<TensorCommunication>::kId},
      {"parallelism.tensor.overlap", EnumTable<TensorOverlap>::kId},
      {"parallelism.pipeline.schedule.type",
       VariantTable<PipelineSchedule>::kId},
      {"parallelism.pipeline.stage_layout", EnumTable<StageLayout>::kId},
      {"parallelism.data.sharding.type", VariantTable<DataSharding>::kId},
      {"parallelism.context.exchange", EnumTable<ContextExchange>::kId},
      {"parallelism.expert.dispatcher", EnumTable<ExpertDispatcher>::kId},
      {"parallelism.recompute", EnumTable<RecomputePolicy>::kId},
      {"options.datatype", EnumTable<DataType>::kId},
      {"options.gemm_datatype", EnumTable<DataType>::kId},
      {"options.weight_datatype", EnumTable<DataType>::kId},
      {"options.grad_reduce_datatype", EnumTable<DataType>::kId},
      {"options.attention", EnumTable<AttentionType>::kId},
      {"options.precision", EnumTable<PrecisionAccounting>::kId},
      {"options.profile", EnumTable<ModelProfile>::kId},
      {"options.recipe", EnumTable<QuantizationRecipe>::kId},
      {"model.mlp", EnumTable<MlpType>::kId},
      {"model.norm", EnumTable<NormType>::kId},
      {"model.vocabulary.position_embedding",
       EnumTable<PositionEmbedding>::kId},
  };
  return *fields;
}

// The model's optional parts (null, or an object whose keys are then
// fields): the samples hold them, and their keys say which they are
// `within`.
const std::vector<std::string>& OptionalObjects() {
  static const auto* paths =
      new std::vector<std::string>{"model.moe", "model.latent_attention"};
  return *paths;
}

// One sample spec per combination of kind, schedule, TP communication and
// data sharding alternative (inference has no sharding: its samples repeat),
// with the names of the alternatives it holds; every model has its optional
// parts.
struct Sample {
  MappingSpec spec;
  std::string kind, schedule, communication, sharding;
};

std::vector<Sample> Samples() {
  std::vector<Sample> out;
  for (const std::string& kind : VariantChoices<MappingSpec>()) {
    for (const std::string& schedule : VariantChoices<PipelineSchedule>()) {
      for (const std::string& comm : VariantChoices<TensorCommunication>()) {
        for (const std::string& sharding : VariantChoices<DataSharding>()) {
          MappingSpec spec = *VariantOfType<MappingSpec>(kind);
          auto fill = [&](auto& s) {  // both kinds share these members
            s.system = SampleSystem();
            s.model.moe = MixtureOfExperts{};
            s.model.latent_attention = LatentAttention{};
            s.options.gemm_datatype = DataType::kFloat8;
            s.options.weight_datatype = DataType::kFloat8;
            s.options.grad_reduce_datatype = DataType::kFloat32;
            s.parallelism.pipeline.schedule =
                *VariantOfType<PipelineSchedule>(schedule);
            s.parallelism.tensor.communication =
                *VariantOfType<TensorCommunication>(comm);
          };
          std::visit(Overloaded{[&](TransformerTrainingMappingSpec& s) {
                                  fill(s);
                                  s.parallelism.data.sharding =
                                      *VariantOfType<DataSharding>(sharding);
                                },
                                [&](TransformerInferenceMappingSpec& s) {
                                  fill(s);
                                }},
                     spec);
          out.push_back({std::move(spec), kind, schedule, comm, sharding});
        }
      }
    }
  }
  return out;
}

Json SpecFieldsJson() {
  struct Seen {
    std::string type;
    std::set<std::string> kinds, schedules, communications, shardings;
  };
  std::map<std::string, Seen> fields;
  for (const Sample& sample : Samples()) {
    std::map<std::string, std::string> leaves;
    Leaves(SpecToJsonValue(sample.spec), "", &leaves);
    for (const auto& [path, type] : leaves) {
      Seen& seen = fields[path];
      // p2p's offset is null, the collectives' a number: one path each.
      seen.type = type;
      seen.kinds.insert(sample.kind);
      seen.schedules.insert(sample.schedule);
      seen.communications.insert(sample.communication);
      seen.shardings.insert(sample.sharding);
    }
  }
  // The optional parts themselves: null or an object.
  for (const std::string& path : OptionalObjects()) {
    Seen& seen = fields[path];
    seen.type = "object";
    seen.kinds = {VariantChoices<MappingSpec>().begin(),
                  VariantChoices<MappingSpec>().end()};
  }
  std::map<std::string, FieldRange> ranges;
  for (const FieldRange& range : CheckedFieldRanges()) {
    ranges[range.field] = range;
  }
  // An optional number that no sample's system gives (Calculon's files have
  // none; this project's presets do: presets/systems/README.md).
  std::vector<std::string> optional_numbers = {
      "system.matrix.<datatype>.achievable_tflops",
      "system.vector.<datatype>.achievable_tflops"};
  const NetworkTier names;
  for (const auto& [op, unused] : NetworkCollectives(names)) {
    for (const char* half : {"[][0]", "[][1]"}) {
      optional_numbers.push_back(
          absl::StrCat("system.networks[].measured_busbw.", op, half));
    }
  }
  for (const std::string& path : optional_numbers) {
    fields[path].type = "number";
    fields[path].kinds = {VariantChoices<MappingSpec>().begin(),
                          VariantChoices<MappingSpec>().end()};
  }
  // Lists bounded by the checker (system.networks) are no leaves.
  fields["system.networks"].type = "array";
  fields["system.networks"].kinds = {VariantChoices<MappingSpec>().begin(),
                                     VariantChoices<MappingSpec>().end()};
  // An explicit stage layout: written only when given, so no sample holds
  // it; one integer per pipeline stage and virtual stage.
  fields["parallelism.pipeline.stage_blocks"].type = "array";
  fields["parallelism.pipeline.stage_blocks"].kinds = {
      VariantChoices<MappingSpec>().begin(),
      VariantChoices<MappingSpec>().end()};

  // In table order, the alternatives of `all` that `seen` holds.
  auto in_order = [](const std::vector<std::string>& all,
                     const std::set<std::string>& seen) {
    Json out = Json::array();
    for (const std::string& name : all) {
      if (seen.count(name) > 0) out.push_back(name);
    }
    return out;
  };
  Json out = Json::object();
  for (const auto& [path, seen] : fields) {
    Json field = Json::object();
    field["type"] = seen.type;
    field["kinds"] = in_order(VariantChoices<MappingSpec>(), seen.kinds);
    if (const auto choice = ChoiceFields().find(path);
        choice != ChoiceFields().end()) {
      field["choices"] = choice->second;
    }
    if (seen.schedules.empty()) {
      // Not a leaf of the samples (system.networks): no alternatives.
    } else if (seen.schedules.size() <
               VariantChoices<PipelineSchedule>().size()) {
      field["when"] = Json::object(
          {{"field", "parallelism.pipeline.schedule.type"},
           {"in", in_order(VariantChoices<PipelineSchedule>(),
                           seen.schedules)}});
    } else if (seen.communications.size() <
               VariantChoices<TensorCommunication>().size()) {
      field["when"] = Json::object(
          {{"field", "parallelism.tensor.communication.type"},
           {"in", in_order(VariantChoices<TensorCommunication>(),
                           seen.communications)}});
    } else if (seen.shardings.size() < VariantChoices<DataSharding>().size()) {
      field["when"] = Json::object(
          {{"field", "parallelism.data.sharding.type"},
           {"in", in_order(VariantChoices<DataSharding>(), seen.shardings)}});
    }
    // Optional datatypes: null means options.datatype (the gradient
    // reduction's: the profile's).
    if (path == "options.gemm_datatype" || path == "options.weight_datatype" ||
        path == "options.grad_reduce_datatype") {
      field["nullable"] = true;
    }
    for (const std::string& optional : OptionalObjects()) {
      if (path == optional) field["nullable"] = true;
      if (absl::StartsWith(path, optional + ".")) field["within"] = optional;
    }
    if (const auto range = ranges.find(path); range != ranges.end()) {
      // Integer fields get integer bounds.
      const bool integral = seen.type == "integer" || seen.type == "array";
      auto bound = [integral](double x) {
        return integral
                   ? Json(static_cast<int64_t>(x))
                   : Json(x);
      };
      field["min"] = bound(range->second.min);
      field["max"] = bound(range->second.max);
      if (!range->second.unit.empty()) field["unit"] = range->second.unit;
      field["why"] = range->second.why;
    }
    out[path] = std::move(field);
  }
  return out;
}

}  // namespace

CommandResult Metadata() {
  Json out = Json::object();
  out["format"] = kMetadataFormat;
  out["enums"] = EnumsJson();
  out["error_codes"] = ErrorCodesJson();
  out["figures"] = FiguresJson();
  out["spec_fields"] = SpecFieldsJson();
  CommandResult result;
  result.output = CanonicalJson(out) + "\n";
  return result;
}

}  // namespace blueprint
