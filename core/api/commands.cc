#include "core/api/commands.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/adapters/calculon.h"
#include "core/adapters/megatron.h"
#include "core/base/input_limits.h"
#include "core/spec/check.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "core/spec/spec_json.h"

namespace blueprint {

namespace {

int ExitCodeOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kResourceExhausted:
      return kExitInvalidInput;
    case absl::StatusCode::kCancelled:
      return kExitCancelled;
    case absl::StatusCode::kOk:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kUnauthenticated:
      return kExitInternal;
    case absl::StatusCode::
        kDoNotUseReservedForFutureExpansionUseDefaultInSwitchInstead_:
      return kExitInternal;
  }
  return kExitInternal;
}

}  // namespace

CommandResult FailureResult(const absl::Status& status) {
  CommandResult result;
  result.exit_code = ExitCodeOf(status.code());
  const absl::string_view prefix =
      result.exit_code == kExitInternal ? "internal error: " : "";
  for (FieldError& error : FieldErrorsOf(status)) {
    error.message = absl::StrCat(prefix, error.message);
    result.errors.push_back(std::move(error));
  }
  if (result.errors.empty()) {
    result.AddError(absl::StrCat(prefix, status.ToString()));
  }
  return result;
}

std::optional<CommandResult> OversizedInput(
    std::initializer_list<std::pair<const char*, const std::string*>> inputs) {
  CommandResult result;
  result.exit_code = kExitInvalidInput;
  for (const auto& [name, text] : inputs) {
    if (text->size() > kMaxInputBytes) {
      result.errors.push_back({name, InputTooLargeMessage(name)});
    }
  }
  if (result.errors.empty()) return std::nullopt;
  return result;
}

CommandResult ImportCalculon(const std::string& app_json,
                             const std::string& exe_json,
                             const std::string& sys_json) {
  if (auto oversized = OversizedInput(
          {{"app", &app_json}, {"exe", &exe_json}, {"system", &sys_json}})) {
    return *oversized;
  }
  absl::StatusOr<MappingSpec> spec = FromCalculon(app_json, exe_json, sys_json);
  if (!spec.ok()) return FailureResult(spec.status());
  CommandResult result;
  result.output = SpecToJson(*spec);
  return result;
}

CommandResult ImportMegatron(const std::string& system_json,
                             const std::vector<std::string>& args) {
  if (auto oversized = OversizedInput({{"system", &system_json}})) {
    return *oversized;
  }
  size_t args_bytes = 0;
  for (const std::string& arg : args) args_bytes += arg.size() + 1;
  if (args_bytes > kMaxInputBytes) {
    CommandResult result;
    result.exit_code = kExitInvalidInput;
    result.errors.push_back({"args", InputTooLargeMessage("args")});
    return result;
  }
  absl::StatusOr<System> system = FromCalculonSystem(system_json);
  if (!system.ok()) return FailureResult(system.status());
  std::vector<std::string> notes;
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(args, *system, &notes);
  CommandResult result =
      spec.ok() ? CommandResult{} : FailureResult(spec.status());
  if (spec.ok()) result.output = SpecToJson(*spec);
  result.notes = std::move(notes);
  return result;
}

CommandResult Check(const std::string& spec_json) {
  if (auto oversized = OversizedInput({{"spec", &spec_json}})) {
    return *oversized;
  }
  absl::StatusOr<MappingSpec> spec = ParseSpecJson(spec_json);
  if (!spec.ok()) return FailureResult(spec.status());
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  if (!program.ok()) return FailureResult(program.status());
  CommandResult result;
  result.output = ProgramToJson(*program);
  return result;
}

}  // namespace blueprint
