#include "core/golden/golden.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/adapters/calculon.h"
#include "core/adapters/megatron.h"
#include "core/base/sha256.h"
#include "core/pipeline/pipeline.h"
#include "core/pipeline/schedule_analysis.h"
#include "core/serving/serving_model.h"
#include "core/serving/serving_report.h"
#include "core/serving/serving_spec.h"
#include "core/spec/check.h"
#include "core/spec/spec_json.h"

namespace blueprint {
namespace {

constexpr char kErrorsFormat[] = "blueprinting.errors/1\n";

std::vector<StageText> Rejected(const absl::Status& status) {
  return {{"errors", absl::StrCat(kErrorsFormat, status.message(), "\n")}};
}

const std::string* Find(const CaseFiles& files, const std::string& name) {
  auto it = files.find(name);
  return it == files.end() ? nullptr : &it->second;
}

absl::StatusOr<MappingSpec> SpecOf(const CaseFiles& files) {
  if (const std::string* spec = Find(files, "spec.json")) {
    return ParseSpecJson(*spec);
  }
  const std::string* sys = Find(files, "sys.json");
  if (const std::string* args = Find(files, "megatron.txt")) {
    if (sys == nullptr) {
      return absl::InvalidArgumentError("megatron.txt needs a sys.json");
    }
    absl::StatusOr<System> system = FromCalculonSystem(*sys);
    if (!system.ok()) return system.status();
    std::vector<std::string> words =
        absl::StrSplit(*args, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
    return FromMegatronArgs(words, *system);
  }
  const std::string* app = Find(files, "app.json");
  const std::string* exe = Find(files, "exe.json");
  if (app && exe && sys) return FromCalculon(*app, *exe, *sys);
  return absl::InvalidArgumentError(
      "a golden case needs spec.json, app.json+exe.json+sys.json, or "
      "megatron.txt+sys.json");
}

// The concrete schedule's summary (core/pipeline/schedule_analysis.h), or
// why it could not be built (a shape the constructors reject is no error of
// the case).
std::string ScheduleStageText(const PipelineResult& result) {
  absl::StatusOr<SimulatedIteration> simulated =
      SimulateIteration(result.program.pipeline().schedule, result.plan.block,
                        result.iteration);
  if (!simulated.ok()) {
    return absl::StrCat("pipeline_timeline/1\nnot simulated: ",
                        simulated.status().message(), "\n");
  }
  return TimelineSummaryText(*simulated);
}

// A serving case: the canonical spec and the analysis, or the errors.
std::vector<StageText> EvaluateServingCase(const std::string& text) {
  absl::StatusOr<ServingSpec> spec = ParseServingSpecJson(text);
  if (!spec.ok()) return Rejected(spec.status());
  absl::StatusOr<ServingAnalysis> analysis = AnalyzeServing(*spec);
  if (!analysis.ok()) return Rejected(analysis.status());
  return {{"serving_spec", ServingSpecToJson(*spec)},
          {"serving", ServingAnalysisText(*spec, *analysis)}};
}

}  // namespace

const std::vector<std::string>& CaseInputNames() {
  static const auto* names =
      new std::vector<std::string>{"spec.json", "app.json",     "exe.json",
                                   "sys.json",  "megatron.txt", "serving.json"};
  return *names;
}

std::vector<StageText> EvaluateCase(const CaseFiles& files) {
  if (const std::string* serving = Find(files, "serving.json")) {
    return EvaluateServingCase(*serving);
  }
  absl::StatusOr<MappingSpec> spec = SpecOf(files);
  if (!spec.ok()) return Rejected(spec.status());
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  if (!program.ok()) return Rejected(program.status());
  absl::StatusOr<PipelineResult> result = RunPipeline(*program);
  if (!result.ok()) return Rejected(result.status());
  std::vector<StageText> stages = StageTexts(*result);
  stages.push_back({"schedule", ScheduleStageText(*result)});
  if (!result->memory.violations.empty()) {
    std::string errors = kErrorsFormat;
    for (const FieldError& v : result->memory.violations) {
      absl::StrAppend(&errors, v.message, "\n");
    }
    stages.push_back({"errors", errors});
  }
  return stages;
}

std::string ManifestLines(const std::string& case_name,
                          const std::vector<StageText>& stages) {
  std::string out;
  for (const StageText& stage : stages) {
    absl::StrAppend(&out, case_name, " ", stage.stage, " ",
                    Sha256Hex(stage.text), "\n");
  }
  return out;
}

std::string LineDiff(const std::string& want, const std::string& got) {
  const std::vector<std::string> a = absl::StrSplit(want, '\n');
  const std::vector<std::string> b = absl::StrSplit(got, '\n');
  // Longest common subsequence table; canonical texts are a few thousand
  // lines at most.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1
                               : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  struct Line { char tag; const std::string* text; };
  std::vector<Line> script;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      script.push_back({' ', &a[i]}); ++i; ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      script.push_back({'-', &a[i]}); ++i;
    } else {
      script.push_back({'+', &b[j]}); ++j;
    }
  }
  std::string out = "--- golden\n+++ computed\n";
  const int kContext = 2;
  for (size_t k = 0; k < script.size(); ++k) {
    bool near_change = false;
    for (int d = -kContext; d <= kContext && !near_change; ++d) {
      const long idx = static_cast<long>(k) + d;
      if (idx >= 0 && idx < static_cast<long>(script.size())) {
        near_change = script[static_cast<size_t>(idx)].tag != ' ';
      }
    }
    if (near_change) absl::StrAppend(&out, std::string(1, script[k].tag),
                                     *script[k].text, "\n");
  }
  return out;
}

}  // namespace blueprint
