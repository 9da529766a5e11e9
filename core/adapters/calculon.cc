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

// Calculon's Llm.Execution, read key by key (MODEL.md §2).
struct Execution {
  int64_t num_procs = 0;
  int64_t tensor_par = 0;
  int64_t pipeline_par = 0;
  int64_t data_par = 0;
  int64_t tensor_par_net = 0;
  int64_t pipeline_par_net = 0;
  int64_t data_par_net = 0;
  int64_t batch_size = 0;
  int64_t microbatch_size = 0;
  DataType datatype = DataType::kFloat16;
  bool fused_activation = false;
  AttentionType attention_type = AttentionType::kMultiHead;
  RecomputePolicy activation_recompute = RecomputePolicy::kNone;
  int64_t pipeline_interleaving = 0;
  bool optimizer_sharding = false;
  std::string tensor_par_comm_type;
  TensorOverlap tensor_par_overlap = TensorOverlap::kNone;
  bool seq_par_ag_redo = false;
  bool data_par_overlap = false;
  bool weight_offload = false;
  bool activations_offload = false;
  bool optimizer_offload = false;
  bool training = true;
};

// Parses `text`; a malformed document becomes one error prefixed by its role.
std::optional<Json> ParseDocument(const std::string& text, const char* role,
                                  std::vector<std::string>* errors) {
  absl::StatusOr<Json> value = ParseJson(text);
  if (!value.ok()) {
    errors->push_back(absl::StrCat(role, ": ", value.status().message()));
    return std::nullopt;
  }
  return *std::move(value);
}

// Reads the 23 keys; returns false if any is missing, unknown or mistyped.
bool ReadExecution(const Json& value, std::vector<std::string>* errors,
                   Execution* exe) {
  const size_t errors_before = errors->size();
  JsonObjectReader r(value, "exe", errors);
  r.ReadInt("num_procs", &exe->num_procs);
  r.ReadInt("tensor_par", &exe->tensor_par);
  r.ReadInt("pipeline_par", &exe->pipeline_par);
  r.ReadInt("data_par", &exe->data_par);
  r.ReadInt("tensor_par_net", &exe->tensor_par_net);
  r.ReadInt("pipeline_par_net", &exe->pipeline_par_net);
  r.ReadInt("data_par_net", &exe->data_par_net);
  r.ReadInt("batch_size", &exe->batch_size);
  r.ReadInt("microbatch_size", &exe->microbatch_size);
  // Calculon's spellings (enums.h).
  r.ReadEnum("datatype", &ParseCalculonEnum<DataType>,
             EnumCalculonChoices<DataType>(), &exe->datatype);
  r.ReadBool("fused_activation", &exe->fused_activation);
  r.ReadEnum("attention_type", &ParseCalculonEnum<AttentionType>,
             EnumCalculonChoices<AttentionType>(), &exe->attention_type);
  r.ReadEnum("activation_recompute", &ParseCalculonEnum<RecomputePolicy>,
             EnumCalculonChoices<RecomputePolicy>(),
             &exe->activation_recompute);
  r.ReadInt("pipeline_interleaving", &exe->pipeline_interleaving);
  r.ReadBool("optimizer_sharding", &exe->optimizer_sharding);
  if (const Json* comm = r.Member("tensor_par_comm_type")) {
    if (comm->is_string() && VariantOfCalculonType<TensorCommunication>(
                                 comm->get_ref<const std::string&>())) {
      exe->tensor_par_comm_type = comm->get_ref<const std::string&>();
    } else {
      errors->push_back(UnknownChoiceMessage(
          "exe.tensor_par_comm_type",
          VariantCalculonChoices<TensorCommunication>(), *comm));
    }
  }
  r.ReadEnum("tensor_par_overlap", &ParseCalculonEnum<TensorOverlap>,
             EnumCalculonChoices<TensorOverlap>(), &exe->tensor_par_overlap);
  r.ReadBool("seq_par_ag_redo", &exe->seq_par_ag_redo);
  r.ReadBool("data_par_overlap", &exe->data_par_overlap);
  r.ReadBool("weight_offload", &exe->weight_offload);
  r.ReadBool("activations_offload", &exe->activations_offload);
  r.ReadBool("optimizer_offload", &exe->optimizer_offload);
  r.ReadBool("training", &exe->training);
  r.RejectUnknownKeys();
  return errors->size() == errors_before;
}

// Calculon's execution-level assertions that the typed spec cannot express,
// as messages naming the keys and values.
void CheckExecution(const Execution& exe, std::vector<std::string>* errors) {
  const std::optional<int64_t> procs =
      CheckedProduct({exe.tensor_par, exe.pipeline_par, exe.data_par});
  if (!procs) {
    errors->push_back(absl::StrCat(
        "exe.num_procs (", exe.num_procs, ") must equal tensor_par (",
        exe.tensor_par, ") * pipeline_par (", exe.pipeline_par,
        ") * data_par (", exe.data_par, "), which overflows 64-bit integers"));
  } else if (*procs != exe.num_procs) {
    errors->push_back(absl::StrCat(
        "exe.num_procs (", exe.num_procs, ") must equal tensor_par (",
        exe.tensor_par, ") * pipeline_par (", exe.pipeline_par,
        ") * data_par (", exe.data_par, ") = ", *procs));
  }
  if (exe.pipeline_interleaving < 1) {
    errors->push_back(absl::StrCat("exe.pipeline_interleaving (",
                                   exe.pipeline_interleaving,
                                   ") must be at least 1"));
  }
  if (!exe.training) {
    if (exe.activation_recompute != RecomputePolicy::kNone) {
      errors->push_back(absl::StrCat(
          "exe.activation_recompute (",
          EnumCalculonName(exe.activation_recompute),
          ") requires exe.training true: Calculon only recomputes during "
          "training"));
    }
    if (exe.data_par_overlap) {
      errors->push_back(
          "exe.data_par_overlap (true) requires exe.training true: Calculon "
          "only overlaps DP communication during training");
    }
    if (exe.optimizer_offload) {
      errors->push_back(
          "exe.optimizer_offload (true) requires exe.training true: Calculon "
          "only offloads the optimizer during training");
    }
  }
  if (exe.seq_par_ag_redo &&
      exe.tensor_par_comm_type !=
          VariantCalculonName(TensorCommunication{ReduceScatterAllGather{}})) {
    errors->push_back(absl::StrCat(
        "exe.seq_par_ag_redo (true) requires exe.tensor_par_comm_type rs_ag "
        "(got ",
        exe.tensor_par_comm_type,
        "): only sequence-parallel all-gathers can be redone"));
  }
}

TensorCommunication CommunicationOf(const Execution& exe) {
  TensorCommunication communication =
      VariantOfCalculonType<TensorCommunication>(exe.tensor_par_comm_type)
          .value_or(AllReduce{});
  std::visit(Overloaded{[](AllReduce&) {},
                        [&](ReduceScatterAllGather& rs_ag) {
                          rs_ag.all_gather_redo = exe.seq_par_ag_redo;
                        },
                        [](EdgeReduceScatterAllGather&) {}},
             communication);
  return communication;
}

PipelineParallel PipelineOf(const Execution& exe,
                            const TransformerModel& model) {
  PipelineParallel pipeline;
  pipeline.degree = exe.pipeline_par;
  pipeline.network_tier = exe.pipeline_par_net;
  // Inference keeps Calculon's interleaving as forward chunks per stage; a
  // single stage with v > 1 is left to the checker to reject, as Calculon
  // does.
  if (!exe.training && (exe.pipeline_par > 1 || exe.pipeline_interleaving > 1)) {
    pipeline.schedule = ForwardOnly{exe.pipeline_interleaving};
  } else if (exe.pipeline_interleaving > 1) {
    pipeline.schedule =
        InterleavedOneForwardOneBackward{exe.pipeline_interleaving};
  } else if (exe.pipeline_par == 1) {
    pipeline.schedule = SingleStage{};
  } else {
    pipeline.schedule = OneForwardOneBackward{};
  }
  const bool uneven = exe.pipeline_par > 0 && model.num_blocks > 0 &&
                      model.num_blocks % exe.pipeline_par != 0;
  pipeline.stage_layout = uneven ? StageLayout::kUneven : StageLayout::kEven;
  return pipeline;
}

MappingSpec SpecOf(const Execution& exe, TransformerModel model,
                   System system) {
  TensorParallel tensor;
  tensor.degree = exe.tensor_par;
  tensor.communication = CommunicationOf(exe);
  tensor.overlap = exe.tensor_par_overlap;
  tensor.network_tier = exe.tensor_par_net;
  const PipelineParallel pipeline = PipelineOf(exe, model);

  ExecutionOptions options;
  options.datatype = exe.datatype;
  options.fused_activation = exe.fused_activation;
  options.attention = exe.attention_type;
  options.offload.weights = exe.weight_offload;
  options.offload.activations = exe.activations_offload;
  options.offload.optimizer = exe.optimizer_offload;

  Batch batch;
  batch.global_batch_size = exe.batch_size;
  batch.microbatch_size = exe.microbatch_size;

  if (exe.training) {
    TransformerTrainingMappingSpec spec;
    spec.model = std::move(model);
    spec.system = std::move(system);
    spec.parallelism.tensor = tensor;
    spec.parallelism.pipeline = pipeline;
    spec.parallelism.data.degree = exe.data_par;
    spec.parallelism.data.optimizer_sharding = exe.optimizer_sharding;
    spec.parallelism.data.overlap = exe.data_par_overlap;
    spec.parallelism.data.network_tier = exe.data_par_net;
    spec.parallelism.recompute = exe.activation_recompute;
    spec.batch = batch;
    spec.options = options;
    return spec;
  }
  TransformerInferenceMappingSpec spec;
  spec.model = std::move(model);
  spec.system = std::move(system);
  spec.parallelism.tensor = tensor;
  spec.parallelism.pipeline = pipeline;
  spec.parallelism.replica.degree = exe.data_par;
  spec.parallelism.replica.network_tier = exe.data_par_net;
  spec.batch = batch;
  spec.options = options;
  return spec;
}

absl::Status ErrorsToStatus(const std::vector<std::string>& errors) {
  return InvalidInputError(ReaderFieldErrors(errors));
}

}  // namespace

absl::StatusOr<MappingSpec> FromCalculon(const std::string& app_json,
                                         const std::string& exe_json,
                                         const std::string& sys_json) {
  std::vector<std::string> errors;
  TransformerModel model;
  if (std::optional<Json> app = ParseDocument(app_json, "app", &errors)) {
    ReadModelJson(*app, "app", NameKey::kAbsent, &errors, &model);
  }
  Execution exe;
  if (std::optional<Json> value = ParseDocument(exe_json, "exe", &errors)) {
    if (ReadExecution(*value, &errors, &exe)) CheckExecution(exe, &errors);
  }
  System system;
  if (std::optional<Json> sys = ParseDocument(sys_json, "sys", &errors)) {
    ReadSystemJson(*sys, "sys", NameKey::kAbsent, &errors, &system);
  }
  if (!errors.empty()) return ErrorsToStatus(errors);
  return SpecOf(exe, std::move(model), std::move(system));
}

absl::StatusOr<TransformerModel> FromCalculonApplication(
    const std::string& app_json) {
  std::vector<std::string> errors;
  TransformerModel model;
  if (std::optional<Json> app = ParseDocument(app_json, "app", &errors)) {
    ReadModelJson(*app, "app", NameKey::kAbsent, &errors, &model);
  }
  if (!errors.empty()) return ErrorsToStatus(errors);
  return model;
}

absl::StatusOr<System> FromCalculonSystem(const std::string& sys_json) {
  std::vector<std::string> errors;
  System system;
  if (std::optional<Json> sys = ParseDocument(sys_json, "sys", &errors)) {
    ReadSystemJson(*sys, "sys", NameKey::kAbsent, &errors, &system);
  }
  if (!errors.empty()) return ErrorsToStatus(errors);
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
  return CanonicalJson(ModelToJsonValue(model, NameKey::kAbsent)) + "\n";
}

std::string ToCalculonSystem(const System& system) {
  return CanonicalJson(SystemToJsonValue(system, NameKey::kAbsent)) + "\n";
}

}  // namespace blueprint
