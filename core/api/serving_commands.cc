#include "core/api/serving_commands.h"

#include <utility>

#include "core/serving/serving_check.h"
#include "core/serving/serving_model.h"
#include "core/serving/serving_report.h"
#include "core/serving/serving_spec.h"

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

}  // namespace

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

}  // namespace blueprint
