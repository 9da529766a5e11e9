// The `blueprint` CLI's commands as pure functions on strings. The CLI
// (tools/blueprint.cc) only reads files and prints; the wasm module calls the
// same functions, so its output is byte-identical to the CLI's stdout.
//
// Example:
//   CommandResult result = Check(spec_text);
//   if (result.exit_code == kExitOk) std::cout << result.output;
//   for (const std::string& e : result.errors) std::cerr << "error: " << e <<
//   "\n";
#ifndef BLUEPRINTING_CORE_API_COMMANDS_H_
#define BLUEPRINTING_CORE_API_COMMANDS_H_

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/base/field_errors.h"
#include "core/spec/spec.h"

namespace blueprint {

// Exit codes shared by the CLI and the wasm module (DESIGN.md "Interfaces").
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 1;         // bad command line (CLI only)
inline constexpr int kExitInvalidInput = 2;  // the inputs break a rule
inline constexpr int kExitInternal = 3;      // a bug: a verifier failed
inline constexpr int kExitCancelled = 4;     // the caller cancelled (wasm)

// CommandResult: what a command prints. `output` is stdout (empty on
// failure); `errors` are one per violated rule: the field path it concerns
// ("" when none: malformed JSON, a file, a flag), the stderr line without
// the "error: " prefix the CLI adds, and its ErrorCode (core/base/
// field_errors.h: kInternal after exit 3, kCancelled after exit 4). `notes`
// are things worth knowing that are no error (e.g. the Megatron-LM flags an
// import ignored), one line each, without the "note: " prefix the CLI adds;
// they never change the exit code.
struct CommandResult {
  int exit_code = kExitOk;
  std::string output;
  std::vector<FieldError> errors;
  std::vector<std::string> notes;

  // Adds an error that concerns no one field.
  void AddError(std::string message,
                ErrorCode code = ErrorCode::kInvalidValue) {
    errors.push_back({"", std::move(message), code});
  }
};

// FailureResult: the one mapping from a failed status to an exit code, with
// one error per line of `status`'s message, with the field and code its
// payloads give (FieldErrorsOf). Input problems (InvalidArgument,
// FailedPrecondition, OutOfRange, NotFound, ResourceExhausted) exit 2; a
// cancellation exits 4 (code kCancelled); anything else is a bug (a verifier
// failure) and exits 3 with each line prefixed "internal error: " (code
// kInternal).
CommandResult FailureResult(const absl::Status& status);

// OversizedInput: exit 2 naming every input over kMaxInputBytes
// (core/base/input_limits.h, code kTooLarge), or nullopt when all fit. `inputs`
// pairs an argument name with its text.
std::optional<CommandResult> OversizedInput(
    std::initializer_list<std::pair<const char*, const std::string*>> inputs);

// ImportCalculon: `blueprint import calculon APP EXE SYS`. Output: the
// canonical spec JSON (core/spec/README.md). Only the adapter's errors are
// reported; run Check for the rules.
CommandResult ImportCalculon(const std::string& app_json,
                             const std::string& exe_json,
                             const std::string& sys_json);

// ImportMegatron: `blueprint import megatron --system SYS [--hf-config
// CONFIG] -- ARGS...`. `system_json` is a Calculon system file; `args` are
// Megatron-LM flags (core/adapters/megatron.h). With `hf_config_json` (a
// Hugging Face config.json, core/adapters/hf_config.h; nullptr: none), the
// config's model flags come first and every flag of `args` replaces the
// config's (MergeMegatronFlags), so the result is the import of the
// equivalent flags. An error about a flag that came from the config says so.
// Output: the canonical spec JSON. Notes: the adapter's (ignored flags, no
// vocabulary, ...), also with errors.
CommandResult ImportMegatron(const std::string& system_json,
                             const std::vector<std::string>& args,
                             const std::string* hf_config_json = nullptr);

// Presets: `blueprint presets`. Output: canonical JSON
//   {"format": "blueprinting.presets/1",
//    "models": {NAME: a Hugging Face config.json, ...},
//    "systems": {NAME: a Calculon system file, ...}}
// listing every preset shipped in presets/ (core/presets/presets.h), the
// names `--hf-config` and `--system` accept.
CommandResult Presets();

// The spec of a spec JSON document, unless it is over the input limit
// (kTooLarge on "spec") or has a document problem (syntax, keys, types,
// names); the rules are not judged. Every command that takes a spec reads
// it with this.
absl::StatusOr<MappingSpec> ParseSpecWithinLimit(const std::string& spec_json);

// Check: `blueprint check SPEC`. Output: the program JSON, i.e. the canonical
// spec with every default spelled out plus its derived values; errors: every
// problem of the document, or every violated rule.
CommandResult Check(const std::string& spec_json);

// Canonical: `blueprint canonical SPEC`. Output: the spec in canonical form,
// every default spelled out (the "spec" of what Check prints), without judging
// the rules, so that a spec that breaks one can still be shown and edited;
// errors: every problem of the document (syntax, unknown keys, wrong types,
// unknown names), each naming its field. The page loads share links with it.
CommandResult Canonical(const std::string& spec_json);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_API_COMMANDS_H_
