// embind surface of the Blueprinting wasm module (see blueprinting.d.ts):
// with spec_bindings.cc (what the slim module has too), import_bindings.cc
// and out_of_memory.cc, the full module.
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
#include <emscripten/val.h>

#include <string>
#include <vector>

#include "core/api/analysis_commands.h"
#include "core/api/commands.h"
#include "core/api/search_command.h"
#include "core/api/serving_commands.h"
#include "core/api/validate_command.h"
#include "core/validation/corpus.h"
#include "wasm/js_values.h"

namespace {

using blueprint_wasm::Arguments;
using blueprint_wasm::ToJs;
using blueprint_wasm::WithSpec;
using emscripten::val;

val Digest(val spec_arg) { return WithSpec(spec_arg, &blueprint::Digest); }


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
// `blueprint presets`: the shipped model configs and systems as JSON.
val Presets() { return ToJs(blueprint::Presets()); }

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

// `blueprint serve SPEC`, `serve check SPEC` and `serve explain SPEC
// FIGURE` on a serving spec (core/serving/README.md).
val Serve(val spec_arg) { return WithSpec(spec_arg, &blueprint::Serve); }
val ServeCheck(val spec_arg) {
  return WithSpec(spec_arg, &blueprint::ServeCheck);
}
val ServeExplain(val spec_arg, val figure_arg) {
  std::string spec, figure;
  Arguments args;
  if (!args.String(spec_arg, "spec", &spec)
           .String(figure_arg, "figure", &figure)
           .ok()) {
    return args.Refusal();
  }
  return ToJs(blueprint::ServeExplain(spec, figure));
}

// `blueprint search --serving --system SYS --hf-config CONFIG ARGS...`:
// the system and the config are texts (a preset's text: presets());
// `args` are the serving search flags (core/serving/serving_search_flags.h).
val SearchServing(val sys_arg, val config_arg, val words_arg) {
  std::string sys, config;
  std::vector<std::string> words;
  Arguments args;
  if (!args.String(sys_arg, "system", &sys)
           .String(config_arg, "hf_config", &config)
           .Strings(words_arg, "args",
                    "searchServing: args must be an array of strings", &words)
           .ok()) {
    return args.Refusal();
  }
  return ToJs(blueprint::ServeSearch(sys, config, words));
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

}  // namespace

// spec_bindings.cc and import_bindings.cc register the rest,
// out_of_memory.cc the new handler.
EMSCRIPTEN_BINDINGS(blueprinting) {
  emscripten::function("digest", &Digest);
  emscripten::function("calculon", &Calculon);
  emscripten::function("importCalculon", &ImportCalculon);
  emscripten::function("presets", &Presets);
  emscripten::function("validate", &Validate);
  // guard.js always passes all four arguments (progress may be undefined).
  emscripten::function("search", &Search);
  emscripten::function("mergeSearch", &MergeSearch);
  emscripten::function("serve", &Serve);
  emscripten::function("serveCheck", &ServeCheck);
  emscripten::function("serveExplain", &ServeExplain);
  emscripten::function("searchServing", &SearchServing);
}
