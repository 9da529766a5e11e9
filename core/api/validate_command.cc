#include "core/api/validate_command.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/input_limits.h"
#include "core/base/json.h"
#include "core/validation/validation.h"

namespace blueprint {
namespace {

CommandResult Usage(std::string message) {
  CommandResult result;
  result.exit_code = kExitUsage;
  result.AddError(std::move(message));
  return result;
}

}  // namespace

CommandResult Validate(const std::string& corpus_json,
                       const std::vector<std::string>& args) {
  if (auto oversized = OversizedInput({{"corpus", &corpus_json}})) {
    return *oversized;
  }
  std::optional<ModelProfile> profile;
  bool json = false;
  std::vector<Correction> without;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") {
      if (json) return Usage("--json given twice");
      json = true;
    } else if (args[i] == "--without") {
      if (i + 1 == args.size()) {
        return Usage("--without needs the name of a correction");
      }
      const std::string& value = args[++i];
      const std::optional<Correction> c = ParseCorrection(value);
      if (!c.has_value()) {
        std::string names;
        for (const CorrectionInfo& info : kCorrectionInfos) {
          absl::StrAppend(&names, names.empty() ? "" : ", ", info.name);
        }
        return Usage(absl::StrCat("--without: expected one of ", names,
                                  ", got \"", value, "\""));
      }
      if (std::find(without.begin(), without.end(), *c) != without.end()) {
        return Usage(absl::StrCat("--without ", value, " given twice"));
      }
      without.push_back(*c);
    } else if (args[i] == "--profile") {
      if (profile.has_value()) return Usage("--profile given twice");
      if (i + 1 == args.size()) {
        return Usage("--profile needs a value: calculon or refined");
      }
      const std::string& value = args[++i];
      if (value == ModelProfileName(ModelProfile::kCalculon)) {
        profile = ModelProfile::kCalculon;
      } else if (value == ModelProfileName(ModelProfile::kRefined)) {
        profile = ModelProfile::kRefined;
      } else {
        return Usage(absl::StrCat(
            "--profile: expected calculon or refined, got \"", value, "\""));
      }
    } else {
      return Usage(absl::StrCat("validate: unknown argument \"", args[i],
                                "\"; expected --profile calculon|refined, "
                                "--without CORRECTION or --json"));
    }
  }
  absl::StatusOr<std::vector<ValidationRow>> rows = ParseCorpus(corpus_json);
  if (!rows.ok()) return FailureResult(rows.status());
  const ModelProfile chosen = profile.value_or(ModelProfile::kCalculon);
  if (!without.empty() && chosen != ModelProfile::kRefined) {
    return Usage("--without needs --profile refined (calculon has no "
                 "corrections)");
  }
  const ValidationReport report = Validate(*rows, chosen, without);
  CommandResult out;
  out.output = json ? CanonicalJson(ValidationJson(report)) + "\n"
                    : ValidationText(report);
  return out;
}

}  // namespace blueprint
