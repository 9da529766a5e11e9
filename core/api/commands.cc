#include "core/api/commands.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "core/adapters/calculon.h"
#include "core/adapters/megatron.h"
#include "core/spec/check.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "core/spec/spec_json.h"

namespace blueprint {

CommandResult InvalidInputResult(const absl::Status& status) {
  CommandResult result;
  result.exit_code = kExitInvalidInput;
  for (absl::string_view line :
       absl::StrSplit(status.message(), '\n', absl::SkipEmpty())) {
    result.errors.emplace_back(line);
  }
  if (result.errors.empty()) result.errors.emplace_back(status.ToString());
  return result;
}

CommandResult ImportCalculon(const std::string& app_json,
                             const std::string& exe_json,
                             const std::string& sys_json) {
  absl::StatusOr<MappingSpec> spec = FromCalculon(app_json, exe_json, sys_json);
  if (!spec.ok()) return InvalidInputResult(spec.status());
  CommandResult result;
  result.output = SpecToJson(*spec);
  return result;
}

CommandResult ImportMegatron(const std::string& system_json,
                             const std::vector<std::string>& args) {
  absl::StatusOr<System> system = FromCalculonSystem(system_json);
  if (!system.ok()) return InvalidInputResult(system.status());
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(args, *system);
  if (!spec.ok()) return InvalidInputResult(spec.status());
  CommandResult result;
  result.output = SpecToJson(*spec);
  return result;
}

CommandResult Check(const std::string& spec_json) {
  absl::StatusOr<MappingSpec> spec = ParseSpecJson(spec_json);
  if (!spec.ok()) return InvalidInputResult(spec.status());
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  if (!program.ok()) return InvalidInputResult(program.status());
  CommandResult result;
  result.output = ProgramToJson(*program);
  return result;
}

}  // namespace blueprint
