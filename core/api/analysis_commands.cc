#include "core/api/analysis_commands.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/adapters/calculon.h"
#include "core/base/field_errors.h"
#include "core/base/json.h"
#include "core/pipeline/pipeline.h"
#include "core/pipeline/schedule_analysis.h"
#include "core/schedule/timeline.h"
#include "core/spec/check.h"
#include "core/spec/spec_json.h"

namespace blueprint {
namespace {

// Parses, checks and runs the pipeline, or fills `failure`.
bool RunSpec(const absl::StatusOr<MappingSpec>& spec, PipelineResult* result,
             CommandResult* failure) {
  if (!spec.ok()) {
    *failure = FailureResult(spec.status());
    return false;
  }
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  if (!program.ok()) {
    *failure = FailureResult(program.status());
    return false;
  }
  absl::StatusOr<PipelineResult> run = RunPipeline(*program);
  if (!run.ok()) {
    // A verifier failure is a bug, not bad input: FailureResult exits 3.
    *failure = FailureResult(run.status());
    return false;
  }
  *result = std::move(*run);
  return true;
}

void AddCapacityViolations(const PipelineResult& r, CommandResult* out) {
  if (r.memory.violations.empty()) return;
  out->exit_code = kExitInvalidInput;
  out->errors = r.memory.violations;  // FieldErrors naming mem1/mem2.GiB
  // The analysis reports nothing but capacity violations (analyze.h).
  for (FieldError& error : out->errors) error.code = ErrorCode::kOverCapacity;
}

}  // namespace

CommandResult Analyze(const std::string& spec_json) {
  CommandResult out;
  PipelineResult result;
  if (!RunSpec(ParseSpecWithinLimit(spec_json), &result, &out)) return out;
  out.output = ReportText(result);
  AddCapacityViolations(result, &out);
  return out;
}

CommandResult AnalyzeStages(const std::string& spec_json,
                            std::vector<StageText>* stages) {
  CommandResult out;
  PipelineResult result;
  if (!RunSpec(ParseSpecWithinLimit(spec_json), &result, &out)) return out;
  *stages = StageTexts(result);
  out.output = ReportText(result);
  AddCapacityViolations(result, &out);
  return out;
}

CommandResult ScheduleTimeline(const std::string& spec_json, bool json) {
  CommandResult out;
  PipelineResult result;
  if (!RunSpec(ParseSpecWithinLimit(spec_json), &result, &out)) return out;
  absl::StatusOr<SimulatedIteration> simulated =
      SimulateIteration(result.program.pipeline().schedule, result.plan.block,
                        result.iteration);
  if (!simulated.ok()) return FailureResult(simulated.status());
  out.output =
      json ? CanonicalJson(TimelineJson(simulated->ir, simulated->result,
                                        simulated->inputs)) +
                 "\n"
           : PrintTimeline(simulated->ir, simulated->result,
                           simulated->inputs);
  AddCapacityViolations(result, &out);
  return out;
}

CommandResult Calculon(const std::string& app_json, const std::string& exe_json,
                       const std::string& sys_json) {
  CommandResult out;
  if (auto oversized = OversizedInput(
          {{"app", &app_json}, {"exe", &exe_json}, {"system", &sys_json}})) {
    return *oversized;
  }
  PipelineResult result;
  if (!RunSpec(FromCalculon(app_json, exe_json, sys_json), &result, &out)) {
    return out;
  }
  if (!result.memory.violations.empty()) {
    AddCapacityViolations(result, &out);
    return out;  // Calculon prints no stats for a rejected mapping.
  }
  out.output = CalculonStatsText(result);
  return out;
}

CommandResult Digest(const std::string& spec_json) {
  CommandResult out;
  PipelineResult result;
  if (!RunSpec(ParseSpecWithinLimit(spec_json), &result, &out)) return out;
  out.output = DigestText(result);
  return out;
}

CommandResult Explain(const std::string& spec_json, const std::string& figure,
                      std::optional<int64_t> depth) {
  CommandResult out;
  if (depth.has_value() && *depth < 0) {
    out.exit_code = kExitInvalidInput;
    out.errors.push_back(
        {"depth", absl::StrCat("depth: expected an integer >= 0, got ", *depth),
         ErrorCode::kOutOfRange});
    return out;
  }
  PipelineResult result;
  if (!RunSpec(ParseSpecWithinLimit(spec_json), &result, &out)) return out;
  absl::StatusOr<std::string> chain = ExplainFigure(result, figure, depth);
  if (!chain.ok()) {
    out = FailureResult(chain.status());
    // kNotFound is ExplainFigure's one answer to an unknown figure.
    if (chain.status().code() == absl::StatusCode::kNotFound) {
      for (FieldError& error : out.errors) {
        error.field = "figure";
        error.code = ErrorCode::kUnknownChoice;
      }
    }
    return out;
  }
  out.output = *chain;
  return out;
}

}  // namespace blueprint
