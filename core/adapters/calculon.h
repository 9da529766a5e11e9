// The Calculon adapter: Calculon's application, execution and system JSON
// files (calculon/MODEL.md §2) to a MappingSpec, and back.
//
// The execution JSON must hold exactly Calculon's 23 keys with Calculon's
// meanings; a missing or unknown key is an error naming it. The mapping:
//   training true  -> TransformerTrainingMappingSpec, data_par -> DataParallel
//   training false -> TransformerInferenceMappingSpec, data_par ->
//                     ReplicaParallel (data_par_net is its network tier)
//   pipeline_interleaving v: v == 1 and p == 1 -> SingleStage,
//       v == 1 and p > 1 -> OneForwardOneBackward (training) or ForwardOnly
//       (inference), v > 1 -> InterleavedOneForwardOneBackward(v) (the checker
//       rejects it with p == 1 or for inference, as Calculon rejects p == 1)
//   num_blocks % pipeline_par != 0 -> stage_layout uneven (Calculon rounds
//       blocks per stage up), else even
//   tensor_par_comm_type ar | rs_ag (+ seq_par_ag_redo) | p2p_rs_ag ->
//       AllReduce | ReduceScatterAllGather{all_gather_redo} |
//       EdgeReduceScatterAllGather
// The adapter rejects what the typed spec cannot hold, with Calculon's
// execution-level assertions turned into messages: num_procs != t*p*d,
// pipeline_interleaving < 1, recompute / data_par_overlap /
// optimizer_offload without training, seq_par_ag_redo without rs_ag, and
// unknown enum spellings. optimizer_sharding with training false has no
// effect in Calculon and is dropped. Every other rule is the checker's
// (check.h): import, then check.
//
// Example:
//   absl::StatusOr<MappingSpec> spec = FromCalculon(app, exe, sys);
//   if (!spec.ok()) return spec.status();  // one problem per line
//   absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
#ifndef BLUEPRINTING_CORE_ADAPTERS_CALCULON_H_
#define BLUEPRINTING_CORE_ADAPTERS_CALCULON_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "nlohmann/json.hpp"

namespace blueprint {

// FromCalculon: a spec from the texts of Calculon's application, execution
// and system JSON files. Model and system names are empty (Calculon's files
// carry none). kInvalidArgument lists every problem of the three files, one
// per line, each naming "app.", "exe." or "sys." and the key, which is also
// its field (InvalidInputError; a malformed file's field is "app", "exe" or
// "sys", code kSyntax; the execution-level assertions are kInconsistent, or
// kOutOfRange for a count below 1 or an overflow).
absl::StatusOr<MappingSpec> FromCalculon(const std::string& app_json,
                                         const std::string& exe_json,
                                         const std::string& sys_json);

// FromCalculonApplication / FromCalculonSystem: one file alone; errors name
// "app." / "sys." paths. FromCalculonApplication also takes the `model`
// object of a canonical spec/2 or spec/3 (it has a "name"; every key of its
// version is then required; spec/3 when it has `moe`, `latent_attention` or
// `mtp_layers`): GQA, gated MLP, norms, biases, a vocabulary, experts,
// latent attention, MTP.
absl::StatusOr<TransformerModel> FromCalculonApplication(
    const std::string& app_json);
absl::StatusOr<System> FromCalculonSystem(const std::string& sys_json);

// CalculonExecution: Calculon's execution (its 23 keys), typed as the spec
// types them; the strategy search enumerates these. Keys and fields:
//   num_procs, batch_size, microbatch_size, datatype, fused_activation,
//   optimizer_sharding, training: the same names;
//   tensor_par, pipeline_par, data_par -> tensor, pipeline, data;
//   tensor_par_net, pipeline_par_net, data_par_net -> tensor_net,
//     pipeline_net, data_net;
//   pipeline_interleaving -> interleaving; activation_recompute ->
//   recompute; attention_type -> attention; tensor_par_overlap ->
//   tp_overlap; data_par_overlap -> dp_overlap;
//   tensor_par_comm_type + seq_par_ag_redo -> comm (the mapping above);
//   weight_offload, activations_offload, optimizer_offload -> offload.
struct CalculonExecution {
  int64_t num_procs = 1;
  int64_t tensor = 1, pipeline = 1, data = 1;  // t, p, d
  int64_t tensor_net = 0, pipeline_net = 0, data_net = 0;
  int64_t batch_size = 1;
  int64_t microbatch_size = 1;
  int64_t interleaving = 1;  // v
  DataType datatype = DataType::kFloat16;
  bool fused_activation = true;
  AttentionType attention = AttentionType::kMultiHead;
  RecomputePolicy recompute = RecomputePolicy::kNone;
  bool optimizer_sharding = false;
  TensorCommunication comm = AllReduce{};
  TensorOverlap tp_overlap = TensorOverlap::kNone;
  bool dp_overlap = false;
  Offload offload;
  bool training = true;
};

// TrainingMappingOf: the training mapping (spec.h TrainingMapping) of an
// execution, as FromCalculon maps it (the model decides the stage layout).
TrainingMapping TrainingMappingOf(const CalculonExecution& exe,
                                  const TransformerModel& model);

// SpecOf: the spec FromCalculon makes of `exe` (training or inference).
MappingSpec SpecOf(const CalculonExecution& exe, TransformerModel model,
                   System system);

// ToCalculonExecution: the 23-key execution JSON Calculon would run for a
// checked program (canonical text, ending in "\n"). Inference specs give
// training false, data_par = the replica degree and data_par_net = its tier.
nlohmann::json ToCalculonExecutionJson(const TypedProgram& program);
std::string ToCalculonExecution(const TypedProgram& program);

// ToCalculonApplication / ToCalculonSystem: Calculon's application and
// system JSON (canonical text, ending in "\n"; names are dropped).
std::string ToCalculonApplication(const TransformerModel& model);
std::string ToCalculonSystem(const System& system);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ADAPTERS_CALCULON_H_
