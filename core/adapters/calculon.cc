#include "core/adapters/calculon.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/checked_math.h"
#include "core/base/json.h"
#include "core/base/field_errors.h"
#include "core/base/json_reader.h"
#include "core/base/status_macros.h"
#include "core/spec/enums.h"
#include "core/spec/spec_json.h"

namespace blueprint {
namespace {

using Json = nlohmann::json;

// The two keys CalculonExecution folds into its TensorCommunication, as
// read (CheckExecution needs them apart).
struct CommunicationKeys {
  std::string tensor_par_comm_type;
  bool seq_par_ag_redo = false;
};

TensorCommunication CommunicationOf(const CommunicationKeys& keys) {
  TensorCommunication communication =
      VariantOfCalculonType<TensorCommunication>(keys.tensor_par_comm_type)
          .value_or(AllReduce{});
  std::visit(Overloaded{[](AllReduce&) {},
                        [&](ReduceScatterAllGather& rs_ag) {
                          rs_ag.all_gather_redo = keys.seq_par_ag_redo;
                        },
                        [](EdgeReduceScatterAllGather&) {}},
             communication);
  return communication;
}

// Parses `text`; a malformed document becomes one error (kSyntax) on its role,
// its message prefixed by the role.
std::optional<Json> ParseDocument(const std::string& text, const char* role,
                                  std::vector<FieldError>* errors) {
  absl::StatusOr<Json> value = ParseJson(text);
  if (!value.ok()) {
    errors->push_back({role, absl::StrCat(role, ": ", value.status().message()),
                       ErrorCode::kSyntax});
    return std::nullopt;
  }
  return *std::move(value);
}

// Reads the 23 keys; returns false if any is missing, unknown or mistyped.
bool ReadExecution(const Json& value, std::vector<FieldError>* errors,
                   CalculonExecution* exe, CommunicationKeys* comm_keys) {
  const size_t errors_before = errors->size();
  JsonObjectReader r(value, "exe", errors);
  r.ReadInt("num_procs", &exe->num_procs);
  r.ReadInt("tensor_par", &exe->tensor);
  r.ReadInt("pipeline_par", &exe->pipeline);
  r.ReadInt("data_par", &exe->data);
  r.ReadInt("tensor_par_net", &exe->tensor_net);
  r.ReadInt("pipeline_par_net", &exe->pipeline_net);
  r.ReadInt("data_par_net", &exe->data_net);
  r.ReadInt("batch_size", &exe->batch_size);
  r.ReadInt("microbatch_size", &exe->microbatch_size);
  // Calculon's spellings (enums.h).
  r.ReadEnum("datatype", &ParseCalculonEnum<DataType>,
             EnumCalculonChoices<DataType>(), &exe->datatype);
  r.ReadBool("fused_activation", &exe->fused_activation);
  r.ReadEnum("attention_type", &ParseCalculonEnum<AttentionType>,
             EnumCalculonChoices<AttentionType>(), &exe->attention);
  r.ReadEnum("activation_recompute", &ParseCalculonEnum<RecomputePolicy>,
             EnumCalculonChoices<RecomputePolicy>(), &exe->recompute);
  r.ReadInt("pipeline_interleaving", &exe->interleaving);
  r.ReadBool("optimizer_sharding", &exe->optimizer_sharding);
  if (const Json* comm = r.Member("tensor_par_comm_type")) {
    if (comm->is_string() && VariantOfCalculonType<TensorCommunication>(
                                 comm->get_ref<const std::string&>())) {
      comm_keys->tensor_par_comm_type = comm->get_ref<const std::string&>();
    } else {
      errors->push_back(UnknownChoiceError(
          "exe.tensor_par_comm_type",
          VariantCalculonChoices<TensorCommunication>(), *comm));
    }
  }
  r.ReadEnum("tensor_par_overlap", &ParseCalculonEnum<TensorOverlap>,
             EnumCalculonChoices<TensorOverlap>(), &exe->tp_overlap);
  r.ReadBool("seq_par_ag_redo", &comm_keys->seq_par_ag_redo);
  r.ReadBool("data_par_overlap", &exe->dp_overlap);
  r.ReadBool("weight_offload", &exe->offload.weights);
  r.ReadBool("activations_offload", &exe->offload.activations);
  r.ReadBool("optimizer_offload", &exe->offload.optimizer);
  r.ReadBool("training", &exe->training);
  r.RejectUnknownKeys();
  exe->comm = CommunicationOf(*comm_keys);
  return errors->size() == errors_before;
}

// Calculon's execution-level assertions that the typed spec cannot express,
// as errors on the key they concern, their messages naming the keys and
// values.
void CheckExecution(const CalculonExecution& exe, const CommunicationKeys& comm,
                    std::vector<FieldError>* errors) {
  const std::optional<int64_t> procs =
      CheckedProduct({exe.tensor, exe.pipeline, exe.data});
  if (!procs) {
    errors->push_back(
        {"exe.num_procs",
         absl::StrCat("exe.num_procs (", exe.num_procs,
                      ") must equal tensor_par (", exe.tensor,
                      ") * pipeline_par (", exe.pipeline, ") * data_par (",
                      exe.data, "), which overflows 64-bit integers"),
         ErrorCode::kOutOfRange});
  } else if (*procs != exe.num_procs) {
    errors->push_back({"exe.num_procs",
                       absl::StrCat("exe.num_procs (", exe.num_procs,
                                    ") must equal tensor_par (", exe.tensor,
                                    ") * pipeline_par (", exe.pipeline,
                                    ") * data_par (", exe.data, ") = ", *procs),
                       ErrorCode::kInconsistent});
  }
  if (exe.interleaving < 1) {
    errors->push_back({"exe.pipeline_interleaving",
                       absl::StrCat("exe.pipeline_interleaving (",
                                    exe.interleaving, ") must be at least 1"),
                       ErrorCode::kOutOfRange});
  }
  if (!exe.training) {
    if (exe.recompute != RecomputePolicy::kNone) {
      errors->push_back(
          {"exe.activation_recompute",
           absl::StrCat("exe.activation_recompute (",
                        EnumCalculonName(exe.recompute),
                        ") requires exe.training true: Calculon only "
                        "recomputes during training"),
           ErrorCode::kInconsistent});
    }
    if (exe.dp_overlap) {
      errors->push_back(
          {"exe.data_par_overlap",
           "exe.data_par_overlap (true) requires exe.training true: Calculon "
           "only overlaps DP communication during training",
           ErrorCode::kInconsistent});
    }
    if (exe.offload.optimizer) {
      errors->push_back(
          {"exe.optimizer_offload",
           "exe.optimizer_offload (true) requires exe.training true: Calculon "
           "only offloads the optimizer during training",
           ErrorCode::kInconsistent});
    }
  }
  if (comm.seq_par_ag_redo &&
      comm.tensor_par_comm_type !=
          VariantCalculonName(TensorCommunication{ReduceScatterAllGather{}})) {
    errors->push_back(
        {"exe.seq_par_ag_redo",
         absl::StrCat("exe.seq_par_ag_redo (true) requires "
                      "exe.tensor_par_comm_type rs_ag (got ",
                      comm.tensor_par_comm_type,
                      "): only sequence-parallel all-gathers can be redone"),
         ErrorCode::kInconsistent});
  }
}

// Calculon's pipeline (CalculonPipeline); inference keeps Calculon's
// interleaving as forward chunks per stage (a single stage with v > 1 is
// left to the checker to reject, as Calculon does).
PipelineParallel PipelineOf(const CalculonExecution& exe,
                            const TransformerModel& model) {
  PipelineParallel pipeline = CalculonPipeline(
      exe.pipeline, exe.interleaving, model.num_blocks, exe.pipeline_net);
  if (!exe.training && (exe.pipeline > 1 || exe.interleaving > 1)) {
    pipeline.schedule = ForwardOnly{exe.interleaving};
  }
  return pipeline;
}

}  // namespace

TrainingMapping TrainingMappingOf(const CalculonExecution& exe,
                                  const TransformerModel& model) {
  TrainingMapping parts;
  TensorParallel& tensor = parts.parallelism.tensor;
  tensor.degree = exe.tensor;
  tensor.communication = exe.comm;
  tensor.overlap = exe.tp_overlap;
  tensor.network_tier = exe.tensor_net;
  parts.parallelism.pipeline = PipelineOf(exe, model);
  parts.parallelism.data.degree = exe.data;
  if (exe.optimizer_sharding) {
    parts.parallelism.data.sharding = ShardOptimizer{};
  }
  parts.parallelism.data.overlap = exe.dp_overlap;
  parts.parallelism.data.network_tier = exe.data_net;
  parts.parallelism.recompute = exe.recompute;
  parts.batch.global_batch_size = exe.batch_size;
  parts.batch.microbatch_size = exe.microbatch_size;
  parts.options.datatype = exe.datatype;
  parts.options.fused_activation = exe.fused_activation;
  parts.options.attention = exe.attention;
  parts.options.offload = exe.offload;
  return parts;
}

MappingSpec SpecOf(const CalculonExecution& exe, TransformerModel model,
                   System system) {
  const TrainingMapping parts = TrainingMappingOf(exe, model);
  if (exe.training) {
    return TrainingSpecOf(std::move(model), std::move(system), parts);
  }
  // optimizer_sharding, data_par_overlap and recompute have no inference
  // counterpart (CheckExecution rejects the last two).
  TransformerInferenceMappingSpec spec;
  spec.model = std::move(model);
  spec.system = std::move(system);
  spec.parallelism.tensor = parts.parallelism.tensor;
  spec.parallelism.pipeline = parts.parallelism.pipeline;
  spec.parallelism.replica.degree = exe.data;
  spec.parallelism.replica.network_tier = exe.data_net;
  spec.batch = parts.batch;
  spec.options = parts.options;
  return spec;
}

absl::StatusOr<MappingSpec> FromCalculon(const std::string& app_json,
                                         const std::string& exe_json,
                                         const std::string& sys_json) {
  std::vector<FieldError> errors;
  TransformerModel model;
  if (std::optional<Json> app = ParseDocument(app_json, "app", &errors)) {
    ReadModelJson(*app, "app", ModelKeys::kCalculon, &errors, &model);
  }
  CalculonExecution exe;
  CommunicationKeys comm;
  if (std::optional<Json> value = ParseDocument(exe_json, "exe", &errors)) {
    if (ReadExecution(*value, &errors, &exe, &comm)) {
      CheckExecution(exe, comm, &errors);
    }
  }
  System system;
  if (std::optional<Json> sys = ParseDocument(sys_json, "sys", &errors)) {
    ReadSystemJson(*sys, "sys", NameKey::kAbsent, &errors, &system);
  }
  if (!errors.empty()) return InvalidInputError(errors);
  return SpecOf(exe, std::move(model), std::move(system));
}

absl::StatusOr<TransformerModel> FromCalculonApplication(
    const std::string& app_json) {
  std::vector<FieldError> errors;
  TransformerModel model;
  if (std::optional<Json> app = ParseDocument(app_json, "app", &errors)) {
    // Calculon's application has no name; a spec's model object has one,
    // and a spec/3 one also moe, latent_attention and mtp_layers.
    const bool spec_model = app->is_object() && app->contains("name");
    const bool spec_v3 =
        spec_model && (app->contains("moe") ||
                       app->contains("latent_attention") ||
                       app->contains("mtp_layers"));
    ReadModelJson(*app, "app",
                  spec_v3      ? ModelKeys::kSpecV3
                  : spec_model ? ModelKeys::kSpecV2
                               : ModelKeys::kCalculon,
                  &errors, &model);
  }
  if (!errors.empty()) return InvalidInputError(errors);
  return model;
}

absl::StatusOr<System> FromCalculonSystem(const std::string& sys_json) {
  std::vector<FieldError> errors;
  System system;
  if (std::optional<Json> sys = ParseDocument(sys_json, "sys", &errors)) {
    ReadSystemJson(*sys, "sys", NameKey::kAbsent, &errors, &system);
  }
  if (!errors.empty()) return InvalidInputError(errors);
  return system;
}

nlohmann::json ToCalculonExecutionJson(const TypedProgram& program) {
  const DerivedValues& d = program.derived;
  const ExecutionOptions& options = program.options();
  const TensorParallel& tensor = program.tensor();
  Json exe = Json::object();
  exe["num_procs"] = d.world_size;
  exe["tensor_par"] = d.tensor;
  exe["pipeline_par"] = d.pipeline;
  exe["data_par"] = d.data;
  exe["tensor_par_net"] = d.tensor_network;
  exe["pipeline_par_net"] = d.pipeline_network;
  exe["data_par_net"] = d.data_network;
  exe["batch_size"] = program.batch().global_batch_size;
  exe["microbatch_size"] = program.batch().microbatch_size;
  exe["datatype"] = EnumCalculonName(options.datatype);
  exe["fused_activation"] = options.fused_activation;
  exe["attention_type"] = EnumCalculonName(options.attention);
  exe["activation_recompute"] = EnumCalculonName(d.recompute);
  exe["pipeline_interleaving"] = d.virtual_stages;
  exe["optimizer_sharding"] = d.optimizer_sharding;
  exe["tensor_par_comm_type"] = VariantCalculonName(tensor.communication);
  exe["tensor_par_overlap"] = EnumCalculonName(tensor.overlap);
  exe["seq_par_ag_redo"] = d.all_gather_redo;
  exe["data_par_overlap"] = d.data_overlap;
  exe["weight_offload"] = options.offload.weights;
  exe["activations_offload"] = options.offload.activations;
  exe["optimizer_offload"] = options.offload.optimizer;
  exe["training"] = d.training;
  return exe;
}

std::string ToCalculonExecution(const TypedProgram& program) {
  return CanonicalJson(ToCalculonExecutionJson(program)) + "\n";
}

std::string ToCalculonApplication(const TransformerModel& model) {
  return CanonicalJson(ModelToJsonValue(model, ModelKeys::kCalculon)) + "\n";
}

std::string ToCalculonSystem(const System& system) {
  return CanonicalJson(SystemToJsonValue(system, NameKey::kAbsent)) + "\n";
}

}  // namespace blueprint
