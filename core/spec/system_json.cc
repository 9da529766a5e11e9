// Reading and writing a system (Calculon's system JSON, with this
// project's optional keys: achievable_tflops, measured_busbw): the public
// SystemToJsonValue and ReadSystemJson of spec_json.h, apart from the spec's
// other parts so that each file stays readable.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/field_errors.h"
#include "core/base/json.h"
#include "core/base/json_reader.h"
#include "core/spec/enums.h"
#include "core/spec/spec_json.h"

namespace blueprint {
namespace {

using Json = nlohmann::json;

// Each Read* reads one object at `path` into `out`, appending a FieldError to
// `errors` for every problem; `out` keeps defaults where a field was bad.

Json EfficiencyToJson(const std::vector<EfficiencyRow>& rows) {
  Json out = Json::array();
  for (const EfficiencyRow& row : rows) {
    out.push_back(Json::array({row.threshold, row.efficiency}));
  }
  return out;
}

Json ProcessorToJson(const Processor& processor) {
  Json out = Json::object();
  for (const auto& [datatype, rate] : processor.rates) {
    Json entry = Json::object();
    entry["tflops"] = rate.tflops;
    entry["gflops_efficiency"] = EfficiencyToJson(rate.gflops_efficiency);
    if (rate.achievable_tflops.has_value()) {
      entry["achievable_tflops"] = *rate.achievable_tflops;
    }
    out[DataTypeName(datatype)] = std::move(entry);
  }
  return out;
}

Json MemoryToJson(const MemoryTier& memory) {
  Json out = Json::object();
  out["GiB"] = memory.gib;
  out["GBps"] = memory.gbps;
  out["MB_efficiency"] = EfficiencyToJson(memory.mb_efficiency);
  return out;
}

Json OpToJson(const NetworkOpCost& op) {
  Json offset = nullptr;
  if (op.offset.has_value()) offset = *op.offset;
  return Json::array({op.scalar, offset});
}

Json NetworkToJson(const NetworkTier& network) {
  Json out = Json::object();
  out["bandwidth"] = network.bandwidth_gbps;
  out["efficiency"] = network.efficiency;
  out["size"] = network.size;
  out["latency"] = network.latency_s;
  out["ops"] = Json::object();
  out["ops"]["p2p"] = OpToJson(network.p2p);
  out["ops"]["reduce_scatter"] = OpToJson(network.reduce_scatter);
  out["ops"]["all_gather"] = OpToJson(network.all_gather);
  out["ops"]["all_reduce"] = OpToJson(network.all_reduce);
  out["must_be_filled"] = network.must_be_filled;
  out["processor_usage"] = network.processor_usage;
  Json measured = Json::object();
  for (const auto& [key, op] : NetworkCollectives(network)) {
    if (!op->measured_busbw.empty()) {
      measured[key] = EfficiencyToJson(op->measured_busbw);
    }
  }
  if (!measured.empty()) out["measured_busbw"] = std::move(measured);
  return out;
}

void ReadEfficiency(const Json& value, const std::string& path,
                    std::vector<FieldError>* errors,
                    std::vector<EfficiencyRow>* out) {
  if (!value.is_array()) {
    errors->push_back({path,
                       absl::StrCat(path,
                                    ": expected an array of "
                                    "[threshold, efficiency] rows, got ",
                                    JsonSnippet(value)),
                       ErrorCode::kWrongType});
    return;
  }
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string row_path = ElementPath(path, i);
    const Json& row = value[i];
    if (!row.is_array() || row.size() != 2) {
      errors->push_back({row_path,
                         absl::StrCat(row_path,
                                      ": expected a [threshold, "
                                      "efficiency] pair, got ",
                                      JsonSnippet(row)),
                         ErrorCode::kWrongType});
      continue;
    }
    // Both halves are read, so that both can be reported.
    EfficiencyRow parsed;
    const bool threshold_ok = JsonToDouble(row[0], ElementPath(row_path, 0),
                                           errors, &parsed.threshold);
    const bool efficiency_ok = JsonToDouble(row[1], ElementPath(row_path, 1),
                                            errors, &parsed.efficiency);
    if (threshold_ok && efficiency_ok) out->push_back(parsed);
  }
}

void ReadProcessor(const Json& value, const std::string& path,
                   std::vector<FieldError>* errors, Processor* out) {
  if (!value.is_object()) {
    errors->push_back(
        {path,
         absl::StrCat(path, ": expected an object keyed by datatype, got ",
                      JsonSnippet(value)),
         ErrorCode::kWrongType});
    return;
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string rate_path = MemberPath(path, it.key());
    const std::optional<DataType> datatype = ParseDataType(it.key());
    if (!datatype.has_value()) {
      errors->push_back(
          {rate_path,
           absl::StrCat(rate_path, ": unknown datatype (expected one of: ",
                        absl::StrJoin(EnumChoices<DataType>(), ", "), ")"),
           ErrorCode::kUnknownChoice});
      continue;
    }
    JsonObjectReader reader(*it, rate_path, errors);
    ProcessorRate rate;
    reader.ReadDouble("tflops", &rate.tflops);
    if (const Json* table = reader.Member("gflops_efficiency")) {
      ReadEfficiency(*table, reader.PathOf("gflops_efficiency"), errors,
                     &rate.gflops_efficiency);
    }
    // Optional (this project's presets; Calculon's files have none).
    if (it->is_object() && it->contains("achievable_tflops")) {
      double achievable = 0;
      if (reader.ReadDouble("achievable_tflops", &achievable)) {
        rate.achievable_tflops = achievable;
      }
    }
    reader.RejectUnknownKeys();
    out->rates[*datatype] = std::move(rate);
  }
}

void ReadMemory(const Json& value, const std::string& path,
                std::vector<FieldError>* errors, MemoryTier* out) {
  JsonObjectReader reader(value, path, errors);
  reader.ReadDouble("GiB", &out->gib);
  reader.ReadDouble("GBps", &out->gbps);
  if (const Json* table = reader.Member("MB_efficiency")) {
    ReadEfficiency(*table, reader.PathOf("MB_efficiency"), errors,
                   &out->mb_efficiency);
  }
  reader.RejectUnknownKeys();
}

// An op is [scalar, offset] with offset null for p2p (Calculon's format).
void ReadOp(const Json& value, const std::string& path,
            std::vector<FieldError>* errors, NetworkOpCost* out) {
  if (!value.is_array() || value.size() != 2) {
    errors->push_back(
        {path,
         absl::StrCat(path, ": expected a [scalar, offset] pair, got ",
                      JsonSnippet(value)),
         ErrorCode::kWrongType});
    return;
  }
  JsonToDouble(value[0], ElementPath(path, 0), errors, &out->scalar);
  if (value[1].is_null()) {
    out->offset.reset();
  } else {
    double offset = 0;
    if (JsonToDouble(value[1], ElementPath(path, 1), errors, &offset)) {
      out->offset = offset;
    }
  }
}

void ReadNetwork(const Json& value, const std::string& path,
                 std::vector<FieldError>* errors, NetworkTier* out) {
  JsonObjectReader reader(value, path, errors);
  reader.ReadDouble("bandwidth", &out->bandwidth_gbps);
  reader.ReadDouble("efficiency", &out->efficiency);
  reader.ReadInt("size", &out->size);
  reader.ReadDouble("latency", &out->latency_s);
  if (const Json* ops = reader.Member("ops")) {
    JsonObjectReader ops_reader(*ops, reader.PathOf("ops"), errors);
    for (const auto& [key, op] :
         {std::pair<const char*, NetworkOpCost*>{"p2p", &out->p2p},
          {"reduce_scatter", &out->reduce_scatter},
          {"all_gather", &out->all_gather},
          {"all_reduce", &out->all_reduce}}) {
      if (const Json* op_value = ops_reader.Member(key)) {
        ReadOp(*op_value, ops_reader.PathOf(key), errors, op);
      }
    }
    ops_reader.RejectUnknownKeys();
  }
  reader.ReadBool("must_be_filled", &out->must_be_filled);
  reader.ReadDouble("processor_usage", &out->processor_usage);
  // Optional (this project's presets; Calculon's files have none).
  if (value.is_object() && value.contains("measured_busbw")) {
    const Json* measured = reader.Member("measured_busbw");
    JsonObjectReader measured_reader(*measured,
                                     reader.PathOf("measured_busbw"), errors);
    for (const auto& [key, op] : NetworkCollectives(*out)) {
      if (measured->is_object() && measured->contains(key)) {
        ReadEfficiency(*measured_reader.Member(key),
                       measured_reader.PathOf(key), errors,
                       &op->measured_busbw);
      }
    }
    measured_reader.RejectUnknownKeys();
  }
  reader.RejectUnknownKeys();
}

}  // namespace

nlohmann::json SystemToJsonValue(const System& system, NameKey name) {
  Json out = Json::object();
  if (name == NameKey::kPresent) out["name"] = system.name;
  out["matrix"] = ProcessorToJson(system.matrix);
  out["vector"] = ProcessorToJson(system.vector);
  out["mem1"] = MemoryToJson(system.mem1);
  out["mem2"] = MemoryToJson(system.mem2);
  out["processing_mode"] = ProcessingModeName(system.processing_mode);
  out["networks"] = Json::array();
  for (const NetworkTier& network : system.networks) {
    out["networks"].push_back(NetworkToJson(network));
  }
  return out;
}

void ReadSystemJson(const nlohmann::json& value, const std::string& path,
                    NameKey name, std::vector<FieldError>* errors,
                    System* out) {
  JsonObjectReader reader(value, path, errors);
  if (name == NameKey::kPresent) reader.ReadString("name", &out->name);
  if (const Json* matrix = reader.Member("matrix")) {
    ReadProcessor(*matrix, reader.PathOf("matrix"), errors, &out->matrix);
  }
  if (const Json* vector = reader.Member("vector")) {
    ReadProcessor(*vector, reader.PathOf("vector"), errors, &out->vector);
  }
  if (const Json* mem1 = reader.Member("mem1")) {
    ReadMemory(*mem1, reader.PathOf("mem1"), errors, &out->mem1);
  }
  if (const Json* mem2 = reader.Member("mem2")) {
    ReadMemory(*mem2, reader.PathOf("mem2"), errors, &out->mem2);
  }
  reader.ReadEnum("processing_mode", &ParseProcessingMode,
                  EnumChoices<ProcessingMode>(), &out->processing_mode);
  if (const Json* networks = reader.Member("networks")) {
    const std::string networks_path = reader.PathOf("networks");
    if (!networks->is_array()) {
      errors->push_back(
          {networks_path,
           absl::StrCat(networks_path,
                        ": expected an array of network tiers, got ",
                        JsonSnippet(*networks)),
           ErrorCode::kWrongType});
    } else {
      for (size_t i = 0; i < networks->size(); ++i) {
        NetworkTier network;
        ReadNetwork((*networks)[i], ElementPath(networks_path, i), errors,
                    &network);
        out->networks.push_back(std::move(network));
      }
    }
  }
  reader.RejectUnknownKeys();
}

}  // namespace blueprint
