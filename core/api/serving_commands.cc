#include "core/api/serving_commands.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/adapters/calculon.h"
#include "core/adapters/hf_config.h"
#include "core/serving/serving_check.h"
#include "core/serving/serving_model.h"
#include "core/serving/serving_report.h"
#include "core/serving/serving_search.h"
#include "core/serving/serving_search_flags.h"
#include "core/serving/serving_spec.h"
#include "core/serving/sglang_import.h"
#include "core/serving/vllm_import.h"

namespace blueprint {
namespace {

// Parses and analyses, or fills `failure`.
bool Run(const std::string& spec_json, ServingSpec* spec,
         ServingAnalysis* analysis, CommandResult* failure) {
  absl::StatusOr<ServingSpec> parsed = ParseServingSpecJson(spec_json);
  if (!parsed.ok()) {
    *failure = FailureResult(parsed.status());
    return false;
  }
  absl::StatusOr<ServingAnalysis> analysed = AnalyzeServing(*parsed);
  if (!analysed.ok()) {
    *failure = FailureResult(analysed.status());
    return false;
  }
  *spec = *std::move(parsed);
  *analysis = *std::move(analysed);
  return true;
}

// The errors of `status`, each message prefixed with the flag whose input
// it concerns, appended to `out`.
void AppendFlagErrors(const absl::Status& status, const char* flag,
                      std::vector<FieldError>* out) {
  for (FieldError& e : FailureResult(status).errors) {
    e.message = std::string(flag) + ": " + e.message;
    out->push_back(std::move(e));
  }
}

}  // namespace

CommandResult ServeSearchFlagErrors(const std::vector<std::string>& args) {
  absl::StatusOr<ServingSearchOptions> options = ParseServingSearchFlags(args);
  return options.ok() ? CommandResult{} : FailureResult(options.status());
}

const char* ServeSearchSynopsis() {
  static const std::string* synopsis =
      new std::string(ServingSearchFlagsSynopsis());
  return synopsis->c_str();
}

CommandResult ServeSearch(const std::string& system_json,
                          const std::string& hf_config_json,
                          const std::vector<std::string>& args) {
  if (auto oversized = OversizedInput(
          {{"system", &system_json}, {kHfConfigName, &hf_config_json}})) {
    return *oversized;
  }
  absl::StatusOr<ServingSearchOptions> options = ParseServingSearchFlags(args);
  std::vector<FieldError> errors;
  if (!options.ok()) errors = FailureResult(options.status()).errors;
  absl::StatusOr<System> system = FromCalculonSystem(system_json);
  if (!system.ok()) AppendFlagErrors(system.status(), "--system", &errors);
  std::optional<TransformerModel> model;
  if (system.ok()) {
    absl::StatusOr<TransformerModel> read =
        ModelFromHfConfig(hf_config_json, *system);
    if (read.ok()) {
      model = *std::move(read);
    } else {
      AppendFlagErrors(read.status(), "--hf-config", &errors);
    }
  }
  CommandResult out;
  if (!errors.empty()) {
    out.exit_code = kExitInvalidInput;
    out.errors = std::move(errors);
    return out;
  }
  absl::StatusOr<ServingSearchResult> result =
      SearchServing(*model, *system, *options);
  if (!result.ok()) return FailureResult(result.status());
  out.output = FormatServingSearch(*result, *options);
  return out;
}

CommandResult ServeCheck(const std::string& spec_json) {
  absl::StatusOr<ServingSpec> spec = ParseServingSpecJson(spec_json);
  if (!spec.ok()) return FailureResult(spec.status());
  if (absl::Status checked = CheckServingSpec(*spec); !checked.ok()) {
    return FailureResult(checked);
  }
  CommandResult result;
  result.output = ServingSpecToJson(*spec);
  return result;
}

CommandResult Serve(const std::string& spec_json) {
  ServingSpec spec;
  ServingAnalysis analysis;
  CommandResult result;
  if (!Run(spec_json, &spec, &analysis, &result)) return result;
  result.output = ServingAnalysisText(spec, analysis);
  return result;
}

CommandResult ServeExplain(const std::string& spec_json,
                           const std::string& figure) {
  ServingSpec spec;
  ServingAnalysis analysis;
  CommandResult result;
  if (!Run(spec_json, &spec, &analysis, &result)) return result;
  absl::StatusOr<std::string> tree =
      ExplainServingFigure(spec, analysis, figure);
  if (!tree.ok()) return FailureResult(tree.status());
  result.output = *std::move(tree);
  return result;
}

namespace {

// An engine's command-line import (vllm_import.h, sglang_import.h).
using EngineImporter = absl::StatusOr<ServingSpec> (*)(
    const std::vector<std::string>& args, const TransformerModel& model,
    const System& system, std::vector<std::string>* notes);

CommandResult ImportEngine(const char* engine, EngineImporter import,
                           const std::string& system_json,
                           const std::vector<std::string>& args,
                           const std::string* hf_config_json) {
  if (hf_config_json == nullptr) {
    CommandResult result;
    result.exit_code = kExitInvalidInput;
    result.errors.push_back(
        {"--hf-config",
         absl::StrCat("--hf-config is required: ", engine,
                      " reads the model from its config.json"),
         ErrorCode::kMissingField});
    return result;
  }
  if (auto oversized = OversizedInput(
          {{"system", &system_json}, {kHfConfigName, hf_config_json}})) {
    return *oversized;
  }
  absl::StatusOr<System> system = FromCalculonSystem(system_json);
  if (!system.ok()) return FailureResult(system.status());
  absl::StatusOr<TransformerModel> model =
      ModelFromHfConfig(*hf_config_json, *system);
  if (!model.ok()) return FailureResult(model.status());
  std::vector<std::string> notes;
  absl::StatusOr<ServingSpec> spec = import(args, *model, *system, &notes);
  CommandResult result =
      spec.ok() ? CommandResult{} : FailureResult(spec.status());
  if (spec.ok()) result.output = ServingSpecToJson(*spec);
  result.notes = std::move(notes);
  return result;
}

}  // namespace

CommandResult ImportVllm(const std::string& system_json,
                         const std::vector<std::string>& args,
                         const std::string* hf_config_json) {
  return ImportEngine("vLLM", &FromVllmArgs, system_json, args,
                      hf_config_json);
}

CommandResult ImportSglang(const std::string& system_json,
                           const std::vector<std::string>& args,
                           const std::string* hf_config_json) {
  return ImportEngine("SGLang", &FromSglangArgs, system_json, args,
                      hf_config_json);
}

}  // namespace blueprint
