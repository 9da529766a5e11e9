#include "core/api/commands.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/adapters/calculon.h"
#include "core/adapters/hf_config.h"
#include "core/adapters/megatron.h"
#include "core/base/input_limits.h"
#include "core/base/json.h"
#include "core/base/parse_int.h"
#include "core/presets/presets.h"
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
  const bool internal = result.exit_code == kExitInternal;
  const bool cancelled = result.exit_code == kExitCancelled;
  const absl::string_view prefix = internal ? "internal error: " : "";
  for (FieldError& error : FieldErrorsOf(status)) {
    error.message = absl::StrCat(prefix, error.message);
    if (internal) error.code = ErrorCode::kInternal;
    if (cancelled) error.code = ErrorCode::kCancelled;
    result.errors.push_back(std::move(error));
  }
  if (result.errors.empty()) {
    result.AddError(absl::StrCat(prefix, status.ToString()),
                    internal    ? ErrorCode::kInternal
                    : cancelled ? ErrorCode::kCancelled
                                : ErrorCode::kInvalidValue);
  }
  return result;
}

std::optional<CommandResult> OversizedInput(
    std::initializer_list<std::pair<const char*, const std::string*>> inputs) {
  CommandResult result;
  result.exit_code = kExitInvalidInput;
  for (const auto& [name, text] : inputs) {
    if (text->size() > kMaxInputBytes) {
      result.errors.push_back(
          {name, InputTooLargeMessage(name), ErrorCode::kTooLarge});
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

namespace {

// The user's --num-layers when it is a valid count (a proxy that truncates
// the config's model; an invalid one is FromMegatronArgs' to report): the
// config's dense and MoE blocks follow it.
std::optional<int64_t> UserNumLayers(const std::vector<std::string>& args) {
  constexpr absl::string_view kFlag = "--num-layers";
  std::optional<int64_t> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const absl::string_view arg = args[i];
    if (arg == kFlag && i + 1 < args.size()) {
      out = ParsePositiveInteger(args[i + 1]);
    } else if (absl::StartsWith(arg, absl::StrCat(kFlag, "="))) {
      out = ParsePositiveInteger(arg.substr(kFlag.size() + 1));
    }
  }
  return out;
}

}  // namespace

CommandResult ImportMegatron(const std::string& system_json,
                             const std::vector<std::string>& args,
                             const std::string* hf_config_json) {
  const std::string no_config;
  if (auto oversized = OversizedInput(
          {{"system", &system_json},
           {kHfConfigName,
            hf_config_json != nullptr ? hf_config_json : &no_config}})) {
    return *oversized;
  }
  size_t args_bytes = 0;
  for (const std::string& arg : args) args_bytes += arg.size() + 1;
  if (args_bytes > kMaxInputBytes) {
    CommandResult result;
    result.exit_code = kExitInvalidInput;
    result.errors.push_back(
        {"args", InputTooLargeMessage("args"), ErrorCode::kTooLarge});
    return result;
  }
  absl::StatusOr<System> system = FromCalculonSystem(system_json);
  std::vector<std::string> flags = args;
  // The config's flags the user did not replace, to say where an error about
  // one of them comes from.
  std::set<std::string> from_config;
  CommandResult failed;
  if (!system.ok()) failed = FailureResult(system.status());
  if (hf_config_json != nullptr) {
    absl::StatusOr<std::vector<std::string>> config_flags =
        MegatronFlagsFromHfConfig(*hf_config_json, UserNumLayers(args));
    if (!config_flags.ok()) {
      const CommandResult config_failed = FailureResult(config_flags.status());
      failed.exit_code = config_failed.exit_code;
      failed.errors.insert(failed.errors.end(), config_failed.errors.begin(),
                           config_failed.errors.end());
    } else {
      flags = MergeMegatronFlags(*config_flags, args);
      for (const std::string& word : *config_flags) {
        std::string name = MegatronFlagName(word);
        if (!name.empty()) from_config.insert(std::move(name));
      }
      for (const std::string& word : args) {
        from_config.erase(MegatronFlagName(word));
      }
    }
  }
  if (!failed.errors.empty()) return failed;
  std::vector<std::string> notes;
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(flags, *system, &notes);
  CommandResult result =
      spec.ok() ? CommandResult{} : FailureResult(spec.status());
  if (spec.ok()) result.output = SpecToJson(*spec);
  for (FieldError& error : result.errors) {
    if (from_config.count(error.field) > 0) {
      absl::StrAppend(&error.message, " (", error.field,
                      " comes from the Hugging Face config)");
    }
  }
  result.notes = std::move(notes);
  return result;
}

CommandResult Presets() {
  nlohmann::json presets = nlohmann::json::object();
  presets["format"] = "blueprinting.presets/1";
  for (const PresetKind kind : {PresetKind::kModel, PresetKind::kSystem}) {
    nlohmann::json& group = presets[PresetDirectory(kind)];
    group = nlohmann::json::object();
    for (const std::string& name : PresetNames(kind)) {
      absl::StatusOr<nlohmann::json> value = ParseJson(FindPreset(kind, name));
      if (!value.ok()) {
        // The presets are the repository's files, tested to parse.
        return FailureResult(absl::InternalError(
            absl::StrCat("preset ", PresetDirectory(kind), "/", name, ": ",
                         value.status().message())));
      }
      group[name] = *std::move(value);
    }
  }
  CommandResult result;
  result.output = CanonicalJson(presets) + "\n";
  return result;
}

absl::StatusOr<MappingSpec> ParseSpecWithinLimit(const std::string& spec_json) {
  if (spec_json.size() > kMaxInputBytes) {
    return InvalidInputError(
        {{"spec", InputTooLargeMessage("spec"), ErrorCode::kTooLarge}});
  }
  return ParseSpecJson(spec_json);
}

CommandResult Check(const std::string& spec_json) {
  absl::StatusOr<MappingSpec> spec = ParseSpecWithinLimit(spec_json);
  if (!spec.ok()) return FailureResult(spec.status());
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  if (!program.ok()) return FailureResult(program.status());
  CommandResult result;
  result.output = ProgramToJson(*program);
  return result;
}

CommandResult Canonical(const std::string& spec_json) {
  absl::StatusOr<MappingSpec> spec = ParseSpecWithinLimit(spec_json);
  if (!spec.ok()) return FailureResult(spec.status());
  CommandResult result;
  result.output = SpecToJson(*spec);
  return result;
}

}  // namespace blueprint
