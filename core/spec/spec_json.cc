#include "core/spec/spec_json.h"

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/json.h"
#include "core/base/field_errors.h"
#include "core/base/json_reader.h"
#include "core/base/status_macros.h"
#include "core/spec/enums.h"

namespace blueprint {
namespace {

using Json = nlohmann::json;

// Every enum's list of choices comes from its table (enums.h).

//----- Writing
//----------------------------------------------------------------------

Json CommunicationToJson(const TensorCommunication& communication) {
  Json out = Json::object();
  out["type"] = TensorCommunicationName(communication);
  std::visit(Overloaded{[](const AllReduce&) {},
                        [&](const ReduceScatterAllGather& c) {
                          out["all_gather_redo"] = c.all_gather_redo;
                        },
                        [](const EdgeReduceScatterAllGather&) {}},
             communication);
  return out;
}

Json ScheduleToJson(const PipelineSchedule& schedule) {
  Json out = Json::object();
  out["type"] = PipelineScheduleName(schedule);
  // Its one field, where its schedule table row has no fixed v.
  std::visit(
      [&](const auto& s) {
        using Schedule = std::decay_t<decltype(s)>;
        if constexpr (ScheduleRowOf(Schedule::kKind).virtual_stages.fixed ==
                      0) {
          out["virtual_stages"] = s.virtual_stages;
        }
      },
      schedule);
  return out;
}

Json TensorToJson(const TensorParallel& tensor) {
  Json out = Json::object();
  out["degree"] = tensor.degree;
  out["communication"] = CommunicationToJson(tensor.communication);
  out["overlap"] = TensorOverlapName(tensor.overlap);
  out["network_tier"] = tensor.network_tier;
  return out;
}

Json PipelineToJson(const PipelineParallel& pipeline) {
  Json out = Json::object();
  out["degree"] = pipeline.degree;
  out["schedule"] = ScheduleToJson(pipeline.schedule);
  out["network_tier"] = pipeline.network_tier;
  out["stage_layout"] = StageLayoutName(pipeline.stage_layout);
  // Written only when given, so that every spec without one prints as it
  // did before the field existed.
  if (!pipeline.stage_blocks.empty()) {
    out["stage_blocks"] = pipeline.stage_blocks;
  }
  return out;
}

Json DataToJson(const DataParallel& data) {
  Json out = Json::object();
  out["degree"] = data.degree;
  Json sharding = Json::object();
  sharding["type"] = DataShardingName(data.sharding);
  std::visit(Overloaded{[](const NoSharding&) {},
                        [&](const ShardOptimizer& s) {
                          sharding["group"] = s.group;
                        },
                        [&](const ShardGradients& s) {
                          sharding["group"] = s.group;
                        },
                        [&](const ShardParameters& s) {
                          sharding["group"] = s.group;
                        }},
             data.sharding);
  out["sharding"] = std::move(sharding);
  out["overlap"] = data.overlap;
  out["network_tier"] = data.network_tier;
  return out;
}

Json ContextToJson(const ContextParallel& context) {
  Json out = Json::object();
  out["degree"] = context.degree;
  out["exchange"] = ContextExchangeName(context.exchange);
  out["network_tier"] = context.network_tier;
  return out;
}

Json ExpertToJson(const ExpertParallel& expert) {
  Json out = Json::object();
  out["degree"] = expert.degree;
  out["tensor_degree"] = expert.tensor_degree;
  out["network_tier"] = expert.network_tier;
  out["dispatcher"] = ExpertDispatcherName(expert.dispatcher);
  out["overlap"] = expert.overlap;
  out["delay_wgrad"] = expert.delay_wgrad;
  out["shared_expert_overlap"] = expert.shared_expert_overlap;
  return out;
}

Json BatchToJson(const Batch& batch) {
  Json out = Json::object();
  out["global_batch_size"] = batch.global_batch_size;
  out["microbatch_size"] = batch.microbatch_size;
  return out;
}

Json OptionsToJson(const ExecutionOptions& options) {
  Json out = Json::object();
  out["datatype"] = DataTypeName(options.datatype);
  out["gemm_datatype"] = options.gemm_datatype.has_value()
                             ? Json(DataTypeName(*options.gemm_datatype))
                             : Json(nullptr);
  out["weight_datatype"] = options.weight_datatype.has_value()
                               ? Json(DataTypeName(*options.weight_datatype))
                               : Json(nullptr);
  out["grad_reduce_datatype"] =
      options.grad_reduce_datatype.has_value()
          ? Json(DataTypeName(*options.grad_reduce_datatype))
          : Json(nullptr);
  out["precision"] = PrecisionName(options.precision);
  out["recipe"] = RecipeName(options.recipe);
  out["unquantized_first_blocks"] = options.unquantized_first_blocks;
  out["unquantized_last_blocks"] = options.unquantized_last_blocks;
  out["profile"] = ModelProfileName(options.profile);
  out["fused_activation"] = options.fused_activation;
  out["attention"] = AttentionName(options.attention);
  out["offload"] = Json::object();
  out["offload"]["weights"] = options.offload.weights;
  out["offload"]["activations"] = options.offload.activations;
  out["offload"]["optimizer"] = options.offload.optimizer;
  return out;
}

//----- Reading
//----------------------------------------------------------------------

// Each Read* reads one object at `path` into `out`, appending a FieldError to
// `errors` for every problem; `out` keeps defaults where a field was bad.


void ReadCommunication(const Json& value, const std::string& path,
                       std::vector<FieldError>* errors,
                       TensorCommunication* out) {
  JsonObjectReader reader(value, path, errors);
  const Json* type_value = reader.Member("type");
  if (type_value == nullptr) return;  // the other keys depend on the type
  std::optional<TensorCommunication> communication;
  if (type_value->is_string()) {
    communication = VariantOfType<TensorCommunication>(
        type_value->get_ref<const std::string&>());
  }
  if (!communication.has_value()) {
    errors->push_back(UnknownChoiceError(
        reader.PathOf("type"), TensorCommunicationChoices(), *type_value));
    return;
  }
  std::visit(Overloaded{[](AllReduce&) {},
                        [&](ReduceScatterAllGather& rs_ag) {
                          reader.ReadBool("all_gather_redo",
                                          &rs_ag.all_gather_redo);
                        },
                        [](EdgeReduceScatterAllGather&) {}},
             *communication);
  *out = *communication;
  reader.RejectUnknownKeys();
}

void ReadSchedule(const Json& value, const std::string& path,
                  std::vector<FieldError>* errors, PipelineSchedule* out) {
  JsonObjectReader reader(value, path, errors);
  const Json* type_value = reader.Member("type");
  if (type_value == nullptr) return;  // the other keys depend on the type
  std::optional<PipelineSchedule> schedule;
  if (type_value->is_string()) {
    schedule = VariantOfType<PipelineSchedule>(
        type_value->get_ref<const std::string&>());
  }
  if (!schedule.has_value()) {
    errors->push_back(UnknownChoiceError(
        reader.PathOf("type"), PipelineScheduleChoices(), *type_value));
    return;
  }
  std::visit(
      [&](auto& s) {
        using Schedule = std::decay_t<decltype(s)>;
        if constexpr (ScheduleRowOf(Schedule::kKind).virtual_stages.fixed ==
                      0) {
          reader.ReadInt("virtual_stages", &s.virtual_stages);
        }
      },
      *schedule);
  *out = *schedule;
  reader.RejectUnknownKeys();
}

void ReadTensor(const Json& value, const std::string& path,
                std::vector<FieldError>* errors, TensorParallel* out) {
  JsonObjectReader reader(value, path, errors);
  reader.ReadInt("degree", &out->degree);
  if (const Json* communication = reader.Member("communication")) {
    ReadCommunication(*communication, reader.PathOf("communication"), errors,
                      &out->communication);
  }
  reader.ReadEnum("overlap", &ParseTensorOverlap, EnumChoices<TensorOverlap>(),
                  &out->overlap);
  reader.ReadInt("network_tier", &out->network_tier);
  reader.RejectUnknownKeys();
}

// An array of at most kMaxStageBlocksEntries integers; the checker judges
// their values.
void ReadStageBlocks(const Json& value, const std::string& path,
                     std::vector<FieldError>* errors,
                     std::vector<int64_t>* out) {
  if (!value.is_array() || value.empty() ||
      value.size() > static_cast<size_t>(kMaxStageBlocksEntries)) {
    errors->push_back(
        {path,
         absl::StrCat(path, ": expected an array of 1 to ",
                      kMaxStageBlocksEntries,
                      " block counts (one per pipeline stage and virtual "
                      "stage), got ",
                      JsonSnippet(value)),
         ErrorCode::kWrongType});
    return;
  }
  std::vector<int64_t> blocks(value.size(), 0);
  bool ok = true;
  for (size_t i = 0; i < value.size(); ++i) {
    ok = JsonToInt(value[i], ElementPath(path, i), errors, &blocks[i]) && ok;
  }
  if (ok) *out = std::move(blocks);
}

void ReadPipeline(const Json& value, const std::string& path,
                  std::vector<FieldError>* errors, PipelineParallel* out) {
  JsonObjectReader reader(value, path, errors);
  reader.ReadInt("degree", &out->degree);
  if (const Json* schedule = reader.Member("schedule")) {
    ReadSchedule(*schedule, reader.PathOf("schedule"), errors, &out->schedule);
  }
  reader.ReadInt("network_tier", &out->network_tier);
  reader.ReadEnum("stage_layout", &ParseStageLayout, EnumChoices<StageLayout>(),
                  &out->stage_layout);
  // Optional (absent: no explicit layout).
  if (value.is_object() && value.contains("stage_blocks")) {
    ReadStageBlocks(*reader.Member("stage_blocks"),
                    reader.PathOf("stage_blocks"), errors, &out->stage_blocks);
  }
  reader.RejectUnknownKeys();
}

void ReadSharding(const Json& value, const std::string& path,
                  std::vector<FieldError>* errors, DataSharding* out) {
  JsonObjectReader reader(value, path, errors);
  const Json* type_value = reader.Member("type");
  if (type_value == nullptr) return;  // the other keys depend on the type
  std::optional<DataSharding> sharding;
  if (type_value->is_string()) {
    sharding =
        VariantOfType<DataSharding>(type_value->get_ref<const std::string&>());
  }
  if (!sharding.has_value()) {
    errors->push_back(UnknownChoiceError(reader.PathOf("type"),
                                         DataShardingChoices(), *type_value));
    return;
  }
  std::visit(
      Overloaded{[](NoSharding&) {},
                 [&](ShardOptimizer& s) { reader.ReadInt("group", &s.group); },
                 [&](ShardGradients& s) { reader.ReadInt("group", &s.group); },
                 [&](ShardParameters& s) {
                   reader.ReadInt("group", &s.group);
                 }},
      *sharding);
  *out = *sharding;
  reader.RejectUnknownKeys();
}

// spec/2 says optimizer_sharding (Calculon's switch, ZeRO-1 over all d
// ranks); spec/3 the sharding sum type.
void ReadData(const Json& value, const std::string& path, ModelKeys keys,
              std::vector<FieldError>* errors, DataParallel* out) {
  JsonObjectReader reader(value, path, errors);
  reader.ReadInt("degree", &out->degree);
  if (keys == ModelKeys::kSpecV3) {
    if (const Json* sharding = reader.Member("sharding")) {
      ReadSharding(*sharding, reader.PathOf("sharding"), errors,
                   &out->sharding);
    }
  } else {
    bool optimizer_sharding = false;
    reader.ReadBool("optimizer_sharding", &optimizer_sharding);
    if (optimizer_sharding) out->sharding = ShardOptimizer{};
  }
  reader.ReadBool("overlap", &out->overlap);
  reader.ReadInt("network_tier", &out->network_tier);
  reader.RejectUnknownKeys();
}

void ReadReplica(const Json& value, const std::string& path,
                 std::vector<FieldError>* errors, ReplicaParallel* out) {
  JsonObjectReader reader(value, path, errors);
  reader.ReadInt("degree", &out->degree);
  reader.ReadInt("network_tier", &out->network_tier);
  reader.RejectUnknownKeys();
}

void ReadBatch(const Json& value, const std::string& path,
               std::vector<FieldError>* errors, Batch* out) {
  JsonObjectReader reader(value, path, errors);
  reader.ReadInt("global_batch_size", &out->global_batch_size);
  reader.ReadInt("microbatch_size", &out->microbatch_size);
  reader.RejectUnknownKeys();
}

void ReadOptions(const Json& value, const std::string& path, ModelKeys keys,
                 std::vector<FieldError>* errors, ExecutionOptions* out) {
  JsonObjectReader reader(value, path, errors);
  reader.ReadEnum("datatype", &ParseDataType, EnumChoices<DataType>(),
                  &out->datatype);
  if (keys == ModelKeys::kSpecV3) {
    for (const auto& [key, target] :
         {std::pair<const char*, std::optional<DataType>*>{
              "gemm_datatype", &out->gemm_datatype},
          {"weight_datatype", &out->weight_datatype},
          {"grad_reduce_datatype", &out->grad_reduce_datatype}}) {
      // null: the same as datatype (grad_reduce_datatype: the profile's).
      // grad_reduce_datatype came after spec/3's other options: absent
      // means null, so that every earlier document reads as it did.
      if (target == &out->grad_reduce_datatype && value.is_object() &&
          !value.contains(key)) {
        continue;
      }
      const Json* value = reader.Member(key);
      if (value == nullptr || value->is_null()) continue;
      DataType datatype = DataType::kFloat16;
      if (JsonToEnum(*value, reader.PathOf(key), errors, &ParseDataType,
                     EnumChoices<DataType>(), &datatype)) {
        *target = datatype;
      }
    }
  }
  if (keys == ModelKeys::kSpecV2 || keys == ModelKeys::kSpecV3) {
    reader.ReadEnum("precision", &ParsePrecision,
                    EnumChoices<PrecisionAccounting>(), &out->precision);
  }
  // The profile came after spec/3's other options: absent means calculon,
  // so that every earlier document reads as it did.
  if (keys == ModelKeys::kSpecV3 && value.is_object() &&
      value.contains("profile")) {
    reader.ReadEnum("profile", &ParseModelProfile, EnumChoices<ModelProfile>(),
                    &out->profile);
  }
  // The recipe came later still: absent means none.
  if (keys == ModelKeys::kSpecV3 && value.is_object() &&
      value.contains("recipe")) {
    reader.ReadEnum("recipe", &ParseRecipe, EnumChoices<QuantizationRecipe>(),
                    &out->recipe);
  }
  // The recipe's unquantized blocks came after it: absent means 0.
  for (const auto& [key, target] :
       {std::pair{"unquantized_first_blocks", &out->unquantized_first_blocks},
        std::pair{"unquantized_last_blocks", &out->unquantized_last_blocks}}) {
    if (keys == ModelKeys::kSpecV3 && value.is_object() &&
        value.contains(key)) {
      reader.ReadInt(key, target);
    }
  }
  reader.ReadBool("fused_activation", &out->fused_activation);
  reader.ReadEnum("attention", &ParseAttention, EnumChoices<AttentionType>(),
                  &out->attention);
  if (const Json* offload = reader.Member("offload")) {
    JsonObjectReader offload_reader(*offload, reader.PathOf("offload"), errors);
    offload_reader.ReadBool("weights", &out->offload.weights);
    offload_reader.ReadBool("activations", &out->offload.activations);
    offload_reader.ReadBool("optimizer", &out->offload.optimizer);
    offload_reader.RejectUnknownKeys();
  }
  reader.RejectUnknownKeys();
}

// Reads the members both spec kinds share and the kind's parallelism.
template <typename Spec>
void ReadCommon(JsonObjectReader* top, ModelKeys keys, Spec* spec) {
  std::vector<FieldError>* errors = top->errors();
  if (const Json* model = top->Member("model")) {
    ReadModelJson(*model, "model", keys, errors, &spec->model);
  }
  if (const Json* system = top->Member("system")) {
    ReadSystemJson(*system, "system", NameKey::kPresent, errors, &spec->system);
  }
  if (const Json* batch = top->Member("batch")) {
    ReadBatch(*batch, "batch", errors, &spec->batch);
  }
  if (const Json* options = top->Member("options")) {
    ReadOptions(*options, "options", keys, errors, &spec->options);
  }
}

// parallelism.recompute_modules: an array of distinct module names
// (absent: none). "core_attn" is the recompute policy attn_only.
void ReadRecomputeModules(const Json& value, const std::string& path,
                          std::vector<FieldError>* errors,
                          RecomputeModules* out) {
  if (!value.is_array()) {
    errors->push_back({path,
                       absl::StrCat(path, ": expected an array of module "
                                          "names, got ",
                                    JsonSnippet(value)),
                       ErrorCode::kWrongType});
    return;
  }
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string item = ElementPath(path, i);
    if (value[i].is_string() &&
        value[i].get_ref<const std::string&>() == "core_attn") {
      errors->push_back(
          {item,
           absl::StrCat(item,
                        ": \"core_attn\" is parallelism.recompute "
                        "\"attn_only\" (the core attention's one home)"),
           ErrorCode::kInvalidValue});
      continue;
    }
    RecomputeModule module = RecomputeModule::kMoeAct;
    if (!JsonToEnum(value[i], item, errors, &ParseRecomputeModule,
                    EnumChoices<RecomputeModule>(), &module)) {
      continue;
    }
    if (out->Has(module)) {
      errors->push_back({item,
                         absl::StrCat(item, ": \"", RecomputeModuleName(module),
                                      "\" is listed twice"),
                         ErrorCode::kInvalidValue});
    }
    out->Add(module);
  }
}

Json RecomputeModulesToJson(RecomputeModules modules) {
  Json out = Json::array();
  for (const EnumRow<RecomputeModule>& row : kRecomputeModuleRows) {
    if (modules.Has(row.value)) out.push_back(row.spelling.name);
  }
  return out;
}

void ReadParallelism(const Json& value, ModelKeys keys,
                     std::vector<FieldError>* errors,
                     TransformerTrainingParallelism* out) {
  JsonObjectReader reader(value, "parallelism", errors);
  if (const Json* tensor = reader.Member("tensor")) {
    ReadTensor(*tensor, reader.PathOf("tensor"), errors, &out->tensor);
  }
  if (const Json* pipeline = reader.Member("pipeline")) {
    ReadPipeline(*pipeline, reader.PathOf("pipeline"), errors, &out->pipeline);
  }
  if (const Json* data = reader.Member("data")) {
    ReadData(*data, reader.PathOf("data"), keys, errors, &out->data);
  }
  if (keys == ModelKeys::kSpecV3) {
    if (const Json* context = reader.Member("context")) {
      JsonObjectReader r(*context, reader.PathOf("context"), errors);
      r.ReadInt("degree", &out->context.degree);
      r.ReadEnum("exchange", &ParseContextExchange,
                 EnumChoices<ContextExchange>(), &out->context.exchange);
      r.ReadInt("network_tier", &out->context.network_tier);
      r.RejectUnknownKeys();
    }
    if (const Json* expert = reader.Member("expert")) {
      JsonObjectReader r(*expert, reader.PathOf("expert"), errors);
      r.ReadInt("degree", &out->expert.degree);
      r.ReadInt("tensor_degree", &out->expert.tensor_degree);
      r.ReadInt("network_tier", &out->expert.network_tier);
      // The dispatcher and the overlaps came after spec/3's other expert
      // keys: absent means all_to_all and off, so that every earlier
      // document reads as it did.
      if (expert->is_object() && expert->contains("dispatcher")) {
        r.ReadEnum("dispatcher", &ParseExpertDispatcher,
                   EnumChoices<ExpertDispatcher>(), &out->expert.dispatcher);
      }
      for (const auto& [key, target] :
           {std::pair<const char*, bool*>{"overlap", &out->expert.overlap},
            {"delay_wgrad", &out->expert.delay_wgrad},
            {"shared_expert_overlap", &out->expert.shared_expert_overlap}}) {
        if (expert->is_object() && expert->contains(key)) {
          r.ReadBool(key, target);
        }
      }
      r.RejectUnknownKeys();
    }
  }
  reader.ReadEnum("recompute", &ParseRecompute, EnumChoices<RecomputePolicy>(),
                  &out->recompute);
  // Recompute modules came after spec/3's other keys: absent means none.
  if (keys == ModelKeys::kSpecV3 && value.is_object() &&
      value.contains("recompute_modules")) {
    ReadRecomputeModules(*reader.Member("recompute_modules"),
                         reader.PathOf("recompute_modules"), errors,
                         &out->recompute_modules);
  }
  reader.RejectUnknownKeys();
}

void ReadParallelism(const Json& value, ModelKeys,
                     std::vector<FieldError>* errors,
                     TransformerInferenceParallelism* out) {
  JsonObjectReader reader(value, "parallelism", errors);
  if (const Json* tensor = reader.Member("tensor")) {
    ReadTensor(*tensor, reader.PathOf("tensor"), errors, &out->tensor);
  }
  if (const Json* pipeline = reader.Member("pipeline")) {
    ReadPipeline(*pipeline, reader.PathOf("pipeline"), errors, &out->pipeline);
  }
  if (const Json* replica = reader.Member("replica")) {
    ReadReplica(*replica, reader.PathOf("replica"), errors, &out->replica);
  }
  reader.RejectUnknownKeys();
}

template <typename Spec>
Spec ReadSpec(JsonObjectReader* top, ModelKeys keys) {
  Spec spec;
  ReadCommon(top, keys, &spec);
  if (const Json* parallelism = top->Member("parallelism")) {
    ReadParallelism(*parallelism, keys, top->errors(), &spec.parallelism);
  }
  return spec;
}

}  // namespace

const std::vector<std::string>& TensorCommunicationChoices() {
  return VariantChoices<TensorCommunication>();
}

const std::vector<std::string>& PipelineScheduleChoices() {
  return VariantChoices<PipelineSchedule>();
}

const std::vector<std::string>& DataShardingChoices() {
  return VariantChoices<DataSharding>();
}

nlohmann::json ModelToJsonValue(const TransformerModel& model,
                                ModelKeys keys) {
  Json out = Json::object();
  if (keys != ModelKeys::kCalculon) out["name"] = model.name;
  out["hidden"] = model.hidden;
  out["feedforward"] = model.feedforward;
  out["seq_size"] = model.seq_size;
  out["attn_heads"] = model.attn_heads;
  out["attn_size"] = model.attn_size;
  out["num_blocks"] = model.num_blocks;
  if (keys == ModelKeys::kSpecV2 || keys == ModelKeys::kSpecV3) {
    out["kv_heads"] = model.kv_heads;
    out["mlp"] = MlpTypeName(model.mlp);
    out["norm"] = NormTypeName(model.norm);
    out["linear_bias"] = model.linear_bias;
    const Vocabulary& vocabulary = model.vocabulary;
    Json vocab = Json::object();
    vocab["size"] = vocabulary.size;
    vocab["divisible_by"] = vocabulary.divisible_by;
    vocab["tied"] = vocabulary.tied;
    vocab["position_embedding"] = PositionEmbeddingName(vocabulary.position);
    vocab["max_positions"] = vocabulary.max_positions;
    out["vocabulary"] = std::move(vocab);
  }
  if (keys == ModelKeys::kSpecV3) {
    Json moe = nullptr;
    if (model.moe.has_value()) {
      const MixtureOfExperts& e = *model.moe;
      moe = Json::object();
      moe["experts"] = e.experts;
      moe["topk"] = e.topk;
      moe["ffn"] = e.ffn;
      moe["shared_ffn"] = e.shared_ffn;
      moe["layer_pattern"] = e.layer_pattern;
      moe["capacity_factor"] = e.capacity_factor;
      moe["router_fusion"] = e.router_fusion;
      moe["aux_loss"] = e.aux_loss;
    }
    out["moe"] = std::move(moe);
    Json mla = nullptr;
    if (model.latent_attention.has_value()) {
      const LatentAttention& l = *model.latent_attention;
      mla = Json::object();
      mla["q_lora_rank"] = l.q_lora_rank;
      mla["kv_lora_rank"] = l.kv_lora_rank;
      mla["qk_head_dim"] = l.qk_head_dim;
      mla["qk_rope_head_dim"] = l.qk_rope_head_dim;
      mla["v_head_dim"] = l.v_head_dim;
    }
    out["latent_attention"] = std::move(mla);
    out["mtp_layers"] = model.mtp_layers;
  }
  return out;
}

void ReadModelJson(const nlohmann::json& value, const std::string& path,
                   ModelKeys keys, std::vector<FieldError>* errors,
                   TransformerModel* out) {
  JsonObjectReader reader(value, path, errors);
  if (keys != ModelKeys::kCalculon) reader.ReadString("name", &out->name);
  reader.ReadInt("hidden", &out->hidden);
  reader.ReadInt("feedforward", &out->feedforward);
  reader.ReadInt("seq_size", &out->seq_size);
  reader.ReadInt("attn_heads", &out->attn_heads);
  reader.ReadInt("attn_size", &out->attn_size);
  reader.ReadInt("num_blocks", &out->num_blocks);
  if (keys == ModelKeys::kSpecV2 || keys == ModelKeys::kSpecV3) {
    reader.ReadInt("kv_heads", &out->kv_heads);
    reader.ReadEnum("mlp", &ParseMlpType, EnumChoices<MlpType>(), &out->mlp);
    reader.ReadEnum("norm", &ParseNormType, EnumChoices<NormType>(),
                    &out->norm);
    reader.ReadBool("linear_bias", &out->linear_bias);
    if (const Json* vocab = reader.Member("vocabulary")) {
      JsonObjectReader vocab_reader(*vocab, reader.PathOf("vocabulary"),
                                    errors);
      Vocabulary& vocabulary = out->vocabulary;
      vocab_reader.ReadInt("size", &vocabulary.size);
      vocab_reader.ReadInt("divisible_by", &vocabulary.divisible_by);
      vocab_reader.ReadBool("tied", &vocabulary.tied);
      vocab_reader.ReadEnum("position_embedding", &ParsePositionEmbedding,
                            EnumChoices<PositionEmbedding>(),
                            &vocabulary.position);
      vocab_reader.ReadInt("max_positions", &vocabulary.max_positions);
      vocab_reader.RejectUnknownKeys();
    }
    if (keys == ModelKeys::kSpecV3) {
      if (const Json* moe = reader.Member("moe"); moe && !moe->is_null()) {
        JsonObjectReader r(*moe, reader.PathOf("moe"), errors);
        MixtureOfExperts e;
        r.ReadInt("experts", &e.experts);
        r.ReadInt("topk", &e.topk);
        r.ReadInt("ffn", &e.ffn);
        r.ReadInt("shared_ffn", &e.shared_ffn);
        r.ReadString("layer_pattern", &e.layer_pattern);
        r.ReadDouble("capacity_factor", &e.capacity_factor);
        // The router's kernels came after spec/3's other MoE keys: absent
        // means unfused and no auxiliary loss, so that every earlier
        // document reads as it did.
        for (const auto& [key, target] :
             {std::pair<const char*, bool*>{"router_fusion", &e.router_fusion},
              {"aux_loss", &e.aux_loss}}) {
          if (moe->is_object() && moe->contains(key)) r.ReadBool(key, target);
        }
        r.RejectUnknownKeys();
        out->moe = std::move(e);
      }
      if (const Json* mla = reader.Member("latent_attention");
          mla && !mla->is_null()) {
        JsonObjectReader r(*mla, reader.PathOf("latent_attention"), errors);
        LatentAttention l;
        r.ReadInt("q_lora_rank", &l.q_lora_rank);
        r.ReadInt("kv_lora_rank", &l.kv_lora_rank);
        r.ReadInt("qk_head_dim", &l.qk_head_dim);
        r.ReadInt("qk_rope_head_dim", &l.qk_rope_head_dim);
        r.ReadInt("v_head_dim", &l.v_head_dim);
        r.RejectUnknownKeys();
        out->latent_attention = l;
      }
      reader.ReadInt("mtp_layers", &out->mtp_layers);
    }
  } else {
    out->kv_heads = out->attn_heads;  // Calculon's block
  }
  reader.RejectUnknownKeys();
}


nlohmann::json SpecToJsonValue(const MappingSpec& spec) {
  Json out = Json::object();
  out["format"] = kSpecFormat;
  out["kind"] = VariantTypeName(spec);
  std::visit(
      Overloaded{
          [&](const TransformerTrainingMappingSpec& s) {
            out["model"] = ModelToJsonValue(s.model, ModelKeys::kSpecV3);
            out["system"] = SystemToJsonValue(s.system, NameKey::kPresent);
            Json parallelism = Json::object();
            parallelism["tensor"] = TensorToJson(s.parallelism.tensor);
            parallelism["pipeline"] = PipelineToJson(s.parallelism.pipeline);
            parallelism["data"] = DataToJson(s.parallelism.data);
            parallelism["context"] = ContextToJson(s.parallelism.context);
            parallelism["expert"] = ExpertToJson(s.parallelism.expert);
            parallelism["recompute"] = RecomputeName(s.parallelism.recompute);
            if (!s.parallelism.recompute_modules.empty()) {
              parallelism["recompute_modules"] =
                  RecomputeModulesToJson(s.parallelism.recompute_modules);
            }
            out["parallelism"] = std::move(parallelism);
            out["batch"] = BatchToJson(s.batch);
            out["options"] = OptionsToJson(s.options);
          },
          [&](const TransformerInferenceMappingSpec& s) {
            out["model"] = ModelToJsonValue(s.model, ModelKeys::kSpecV3);
            out["system"] = SystemToJsonValue(s.system, NameKey::kPresent);
            Json parallelism = Json::object();
            parallelism["tensor"] = TensorToJson(s.parallelism.tensor);
            parallelism["pipeline"] = PipelineToJson(s.parallelism.pipeline);
            Json replica = Json::object();
            replica["degree"] = s.parallelism.replica.degree;
            replica["network_tier"] = s.parallelism.replica.network_tier;
            parallelism["replica"] = std::move(replica);
            out["parallelism"] = std::move(parallelism);
            out["batch"] = BatchToJson(s.batch);
            out["options"] = OptionsToJson(s.options);
          }},
      spec);
  return out;
}

std::string SpecToJson(const MappingSpec& spec) {
  return CanonicalJson(SpecToJsonValue(spec)) + "\n";
}

absl::StatusOr<MappingSpec> SpecFromJsonValue(const nlohmann::json& value) {
  std::vector<FieldError> errors;
  JsonObjectReader top(value, "", &errors);
  if (!top.is_object()) return InvalidInputError(errors);

  ModelKeys keys = ModelKeys::kSpecV3;
  if (const Json* format = top.Member("format")) {
    const std::string* text = format->is_string()
                                  ? &format->get_ref<const std::string&>()
                                  : nullptr;
    if (text != nullptr && *text == kSpecFormatV1) {
      keys = ModelKeys::kSpecV1;
    } else if (text != nullptr && *text == kSpecFormatV2) {
      keys = ModelKeys::kSpecV2;
    } else if (text == nullptr || *text != kSpecFormat) {
      errors.push_back(
          {"format",
           absl::StrCat("format: expected \"", kSpecFormat, "\" (or \"",
                        kSpecFormatV2, "\", \"", kSpecFormatV1, "\"), got ",
                        JsonSnippet(*format)),
           ErrorCode::kUnsupported});
    }
  }
  std::optional<MappingSpec> kind;  // the kind's default spec
  if (const Json* kind_value = top.Member("kind")) {
    if (kind_value->is_string()) {
      kind = VariantOfType<MappingSpec>(kind_value->get_ref<const std::string&>());
    }
    if (!kind.has_value()) {
      errors.push_back(UnknownChoiceError("kind", VariantChoices<MappingSpec>(),
                                          *kind_value));
    }
  }
  MappingSpec spec;
  if (kind.has_value()) {
    std::visit(Overloaded{[&](const TransformerTrainingMappingSpec&) {
                            spec = ReadSpec<TransformerTrainingMappingSpec>(
                                &top, keys);
                          },
                          [&](const TransformerInferenceMappingSpec&) {
                            spec = ReadSpec<TransformerInferenceMappingSpec>(
                                &top, keys);
                          }},
               *kind);
  } else {
    // Without a kind the parallelism's keys are unknown; still report every
    // problem of the other sections.
    TransformerTrainingMappingSpec ignored;
    ReadCommon(&top, keys, &ignored);
    top.Member("parallelism");
  }
  top.RejectUnknownKeys();
  if (!errors.empty()) return InvalidInputError(errors);
  return spec;
}

absl::StatusOr<MappingSpec> ParseSpecJson(const std::string& text) {
  BP_ASSIGN_OR_RETURN(const Json value, ParseJson(text));
  return SpecFromJsonValue(value);
}

nlohmann::json DerivedToJsonValue(const DerivedValues& derived) {
  Json out = Json::object();
  ForEachDerivedValue(derived, [&](const char* name, const auto& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>,
                                 RecomputePolicy>) {
      out[name] = RecomputeName(value);
    } else if constexpr (std::is_same_v<std::decay_t<decltype(value)>,
                                        ShardingStage>) {
      out[name] = ShardingStageName(value);
    } else {
      out[name] = value;
    }
  });
  return out;
}

std::string ProgramToJson(const TypedProgram& program) {
  Json out = Json::object();
  out["format"] = kProgramFormat;
  out["spec"] = SpecToJsonValue(program.spec);
  out["derived"] = DerivedToJsonValue(program.derived);
  return CanonicalJson(out) + "\n";
}

}  // namespace blueprint
