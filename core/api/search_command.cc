#include "core/api/search_command.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/adapters/calculon.h"
#include "core/search/search_json.h"

namespace blueprint {

const char* SearchSynopsis() {
  static const std::string* synopsis = new std::string(SearchFlagsSynopsis());
  return synopsis->c_str();
}

CommandResult Search(const std::string& app_json, const std::string& sys_json,
                     const std::vector<std::string>& args, ProgressFn progress,
                     CancelFn cancel) {
  if (auto oversized =
          OversizedInput({{"app", &app_json}, {"system", &sys_json}})) {
    return *oversized;
  }
  absl::StatusOr<SearchOptions> options = ParseSearchFlags(args);
  if (!options.ok()) return FailureResult(options.status());
  absl::StatusOr<TransformerModel> model = FromCalculonApplication(app_json);
  absl::StatusOr<System> system = FromCalculonSystem(sys_json);
  if (!model.ok() || !system.ok()) {
    CommandResult out = FailureResult(!model.ok() ? model.status()
                                                       : system.status());
    if (!model.ok() && !system.ok()) {
      for (FieldError& error : FailureResult(system.status()).errors) {
        out.errors.push_back(std::move(error));
      }
    }
    return out;
  }
  absl::StatusOr<SearchResult> result =
      RunSearch(*model, *system, *options, std::move(progress),
                std::move(cancel));
  if (!result.ok()) return FailureResult(result.status());
  CommandResult out;
  out.output = FormatSearchResult(*result, *options);
  return out;
}

CommandResult MergeSearch(const std::vector<std::string>& parts) {
  std::optional<CommandResult> refused;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string name = absl::StrCat("parts[", i, "]");
    if (auto oversized = OversizedInput({{name.c_str(), &parts[i]}})) {
      if (!refused) {
        refused = std::move(*oversized);
      } else {
        for (FieldError& e : oversized->errors) {
          refused->errors.push_back(std::move(e));
        }
      }
    }
  }
  if (refused) return *refused;
  absl::StatusOr<std::string> merged = MergeSearchJson(parts);
  if (!merged.ok()) return FailureResult(merged.status());
  CommandResult out;
  out.output = std::move(*merged);
  return out;
}

}  // namespace blueprint
