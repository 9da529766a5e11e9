// embind surface of the Blueprinting wasm module (see blueprinting.d.ts).
// Every method mirrors a CLI command and returns {ok, output, errors, notes}
// where `output` is byte-identical to the CLI's stdout and each error is
// {field, message, code} (code: ErrorCodeName, core/base/field_errors.h).
// Errors are values: the core never throws (wasm builds have no exceptions)
// and never aborts on input.
//
// Hostile input is refused here, before the core sees it, as a value:
//   * every argument is taken as an emscripten::val, never converted by
//     embind: its std::string conversion writes through an unchecked malloc
//     (a failed allocation would overwrite memory at address 0), and encodes a
//     lone surrogate by swallowing the next code unit;
//   * a string longer than kMaxInputBytes UTF-16 code units is refused with
//     the core's InputTooLargeMessage before any byte is copied (a UTF-8
//     encoding is never shorter than its UTF-16 length); shorter strings are
//     converted and the core applies the same limit to their UTF-8 bytes;
//   * a string that is not well-formed UTF-16 (a lone surrogate) is refused,
//     naming the argument;
//   * results are returned to JS through TextDecoder over the heap, without
//     the malloc'd copy embind would make.
// What is left (running out of memory inside the core, a bug that traps) is
// caught by wasm/guard.js, which wraps every method and turns it into
// {ok: false, errors: [{field: "", message: "internal error: ...",
// code: "internal"}]}.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/api/analysis_commands.h"
#include "core/api/commands.h"
#include "core/api/metadata.h"
#include "core/api/search_command.h"
#include "core/api/validate_command.h"
#include "core/base/format.h"
#include "core/base/input_limits.h"
#include "core/validation/corpus.h"
#include "wasm/js_values.h"

// Called by operator new when malloc fails (memory cannot grow any further):
// unwinds to wasm/guard.js with an error it reports as out of memory. The
// default (abort()) would report "Aborted(native code called abort())".
EM_JS(void, bp_throw_out_of_memory, (), {
  var error = new Error('out of memory');
  error.blueprintingOutOfMemory = true;
  throw error;
});

namespace {

using emscripten::val;
using blueprint_wasm::JsString;
using blueprint_wasm::StringFromJs;

val ToJs(const blueprint::CommandResult& result) {
  val out = val::object();
  out.set("ok", result.exit_code == blueprint::kExitOk);
  out.set("output", JsString(result.output));
  val errors = val::array();
  for (const blueprint::FieldError& e : result.errors) {
    val error = val::object();
    error.set("field", JsString(e.field));
    error.set("message", JsString(e.message));
    error.set("code", val(blueprint::ErrorCodeName(e.code)));
    errors.call<void>("push", error);
  }
  out.set("errors", errors);
  val notes = val::array();
  for (const std::string& note : result.notes) {
    notes.call<void>("push", JsString(note));
  }
  out.set("notes", notes);
  return out;
}

val Failure(int exit_code, const std::vector<blueprint::FieldError>& errors) {
  blueprint::CommandResult result;
  result.exit_code = exit_code;
  result.errors = errors;
  return ToJs(result);
}

// A JS array of strings (`name` in messages). The whole list is limited
// like the core limits Megatron-LM's arguments: the sum of the lengths plus
// one per string.
bool StringsFromJs(const val& array, const std::string& name,
                   const std::string& not_an_array,
                   std::vector<std::string>* out,
                   std::vector<blueprint::FieldError>* errors) {
  if (!array.isArray()) {
    errors->push_back({name, not_an_array, blueprint::ErrorCode::kWrongType});
    return false;
  }
  const double length = array["length"].as<double>();
  if (length > static_cast<double>(blueprint::kMaxInputBytes)) {
    errors->push_back({name, blueprint::InputTooLargeMessage(name),
                       blueprint::ErrorCode::kTooLarge});
    return false;
  }
  double total = 0;
  for (int i = 0; i < static_cast<int>(length); ++i) {
    const val item = array[i];
    if (!item.isString()) {
      errors->push_back({name, not_an_array, blueprint::ErrorCode::kWrongType});
      return false;
    }
    total += item["length"].as<double>() + 1;
    if (total > static_cast<double>(blueprint::kMaxInputBytes)) {
      errors->push_back({name, blueprint::InputTooLargeMessage(name),
                         blueprint::ErrorCode::kTooLarge});
      return false;
    }
  }
  bool ok = true;
  out->resize(static_cast<size_t>(length));
  for (int i = 0; i < static_cast<int>(length); ++i) {
    ok &= StringFromJs(array[i], absl::StrCat(name, "[", i, "]"), &(*out)[i],
                       errors);
  }
  return ok;
}

// The string arguments of one call, all checked before any is used.
class Arguments {
 public:
  Arguments& String(const val& value, const char* name, std::string* out) {
    StringFromJs(value, name, out, &errors_);
    return *this;
  }
  Arguments& Strings(const val& value, const char* name,
                     const std::string& not_an_array,
                     std::vector<std::string>* out) {
    StringsFromJs(value, name, not_an_array, out, &errors_);
    return *this;
  }
  Arguments& Error(blueprint::FieldError error) {
    errors_.push_back(std::move(error));
    return *this;
  }
  bool ok() const { return errors_.empty(); }
  val Refusal() const { return Failure(blueprint::kExitInvalidInput, errors_); }

 private:
  std::vector<blueprint::FieldError> errors_;
};

std::string Version() { return "blueprinting 0.1.0"; }

// The commands that take one spec: its argument checked, then `command`.
val WithSpec(const val& spec_arg,
             blueprint::CommandResult (*command)(const std::string&)) {
  std::string spec;
  Arguments args;
  if (!args.String(spec_arg, "spec", &spec).ok()) return args.Refusal();
  return ToJs(command(spec));
}
val Check(val spec_arg) { return WithSpec(spec_arg, &blueprint::Check); }
val Canonical(val spec_arg) {
  return WithSpec(spec_arg, &blueprint::Canonical);
}
val Analyze(val spec_arg) { return WithSpec(spec_arg, &blueprint::Analyze); }
val Digest(val spec_arg) { return WithSpec(spec_arg, &blueprint::Digest); }

// `blueprint schedule SPEC [--json]`: `json` is optional (undefined: the
// canonical text); otherwise a boolean.
val Schedule(val spec_arg, val json_arg) {
  std::string spec;
  Arguments args;
  args.String(spec_arg, "spec", &spec);
  const bool json_given = !json_arg.isUndefined();
  if (json_given && json_arg.typeOf().as<std::string>() != "boolean") {
    args.Error({"json",
                absl::StrCat("json: expected a boolean or undefined, got ",
                             json_arg.typeOf().as<std::string>()),
                blueprint::ErrorCode::kWrongType});
  }
  if (!args.ok()) return args.Refusal();
  return ToJs(blueprint::ScheduleTimeline(spec,
                                          json_given && json_arg.as<bool>()));
}

// `blueprint explain SPEC FIGURE [--depth N]`: `depth` is optional
// (undefined: every level); otherwise an integer >= 0.
val Explain(val spec_arg, val figure_arg, val depth_arg) {
  std::string spec, figure;
  Arguments args;
  args.String(spec_arg, "spec", &spec).String(figure_arg, "figure", &figure);
  std::optional<int64_t> depth;
  if (!depth_arg.isUndefined()) {
    // The CLI's --depth takes a decimal integer >= 0; a JS number is that
    // when it is finite, integral and exact (at most 2^53 - 1): Infinity,
    // NaN, 1.5 and 2^60 are refused.
    constexpr double kMaxSafeInteger = 9007199254740991;  // 2^53 - 1
    const bool number = depth_arg.isNumber();
    const double value = number ? depth_arg.as<double>() : 0;
    if (!number || !std::isfinite(value) || !(value >= 0) ||
        value > kMaxSafeInteger || std::floor(value) != value) {
      args.Error(
          {"depth",
           absl::StrCat("depth: expected an integer from 0 to ",
                        blueprint::FormatDouble(kMaxSafeInteger),
                        " or undefined, got ",
                        number ? blueprint::FormatDouble(value)
                               : depth_arg.typeOf().as<std::string>()),
           number ? blueprint::ErrorCode::kOutOfRange
                  : blueprint::ErrorCode::kWrongType});
    } else {
      depth = static_cast<int64_t>(value);
    }
  }
  if (!args.ok()) return args.Refusal();
  return ToJs(blueprint::Explain(spec, figure, depth));
}
// Calculon's three files, converted and checked, then passed to `command`.
val WithCalculonFiles(const val& app_arg, const val& exe_arg,
                      const val& sys_arg,
                      blueprint::CommandResult (*command)(
                          const std::string&, const std::string&,
                          const std::string&)) {
  std::string app, exe, sys;
  Arguments args;
  if (!args.String(app_arg, "app", &app)
           .String(exe_arg, "exe", &exe)
           .String(sys_arg, "system", &sys)
           .ok()) {
    return args.Refusal();
  }
  return ToJs(command(app, exe, sys));
}
val Calculon(val app_arg, val exe_arg, val sys_arg) {
  return WithCalculonFiles(app_arg, exe_arg, sys_arg, &blueprint::Calculon);
}
val ImportCalculon(val app_arg, val exe_arg, val sys_arg) {
  return WithCalculonFiles(app_arg, exe_arg, sys_arg,
                           &blueprint::ImportCalculon);
}
// `blueprint import megatron --system SYS [--hf-config CONFIG] -- ARGS...`:
// `config_arg` is optional (undefined: no config), else a string.
val ImportMegatron(val sys_arg, val words_arg, val config_arg) {
  std::string sys, config;
  std::vector<std::string> words;
  Arguments args;
  args.String(sys_arg, "system", &sys)
      .Strings(words_arg, "args",
               "importMegatron: args must be an array of strings", &words);
  const bool with_config = !config_arg.isUndefined();
  if (with_config) args.String(config_arg, "hf_config", &config);
  if (!args.ok()) return args.Refusal();
  return ToJs(
      blueprint::ImportMegatron(sys, words, with_config ? &config : nullptr));
}

// `blueprint presets`: the shipped model configs and systems as JSON.
val Presets() { return ToJs(blueprint::Presets()); }

// `blueprint metadata`: enums, report figures and spec fields as JSON.
val Metadata() { return ToJs(blueprint::Metadata()); }

// `blueprint search`: `args` are the CLI's search flags; `progress`, when a
// function, is called with the fraction done (the search runs synchronously:
// call it from a Web Worker and terminate the worker to cancel). guard.js
// wraps `progress` so that an exception it throws never unwinds through the
// module.
val Search(val app_arg, val sys_arg, val words_arg, val progress) {
  std::string app, sys;
  std::vector<std::string> words;
  Arguments args;
  if (!args.String(app_arg, "app", &app)
           .String(sys_arg, "system", &sys)
           .Strings(words_arg, "args", "search: args must be an array of strings",
                    &words)
           .ok()) {
    return args.Refusal();
  }
  blueprint::ProgressFn report = nullptr;
  if (progress.typeOf().as<std::string>() == "function") {
    report = [progress](double fraction) { progress(fraction); };
  }
  return ToJs(blueprint::Search(app, sys, words, report));
}

// The parts of a search run with --json --partition I/N (one output string
// per part, e.g. from N Web Workers) merged into the output of the whole
// search (core/search/search_json.h MergeSearchJson).
val MergeSearch(val parts_arg) {
  std::vector<std::string> parts;
  Arguments args;
  if (!args.Strings(parts_arg, "parts",
                    "mergeSearch: parts must be an array of strings", &parts)
           .ok()) {
    return args.Refusal();
  }
  return ToJs(blueprint::MergeSearch(parts));
}

// `blueprint validate`: `args` are the CLI's flags (--profile, --without,
// --json) over the built-in corpus (tests/validation/corpus.json).
val Validate(val words_arg) {
  std::vector<std::string> words;
  Arguments args;
  if (!args.Strings(words_arg, "args",
                    "validate: args must be an array of strings", &words)
           .ok()) {
    return args.Refusal();
  }
  return ToJs(blueprint::Validate(blueprint::ValidationCorpusText(), words));
}

void OutOfMemory() { bp_throw_out_of_memory(); }

}  // namespace

EMSCRIPTEN_BINDINGS(blueprinting) {
  std::set_new_handler(&OutOfMemory);
  emscripten::function("version", &Version);
  emscripten::function("check", &Check);
  emscripten::function("canonical", &Canonical);
  emscripten::function("analyze", &Analyze);
  emscripten::function("digest", &Digest);
  emscripten::function("explain", &Explain);
  emscripten::function("schedule", &Schedule);
  emscripten::function("calculon", &Calculon);
  emscripten::function("importCalculon", &ImportCalculon);
  emscripten::function("importMegatron", &ImportMegatron);
  emscripten::function("metadata", &Metadata);
  emscripten::function("presets", &Presets);
  emscripten::function("validate", &Validate);
  // guard.js always passes all four arguments (progress may be undefined),
  // all three of explain's (depth may be undefined) and of importMegatron's
  // (the config may be undefined).
  emscripten::function("search", &Search);
  emscripten::function("mergeSearch", &MergeSearch);
}
