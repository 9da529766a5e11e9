// embind surface of the Blueprinting wasm module (see blueprinting.d.ts).
// Every method mirrors a CLI command and returns {ok, output, errors} where
// `output` is byte-identical to the CLI's stdout. Errors are values: the core
// never throws (wasm builds have no exceptions) and never aborts on input.
#include <string>
#include <utility>
#include <vector>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "core/api/analysis_commands.h"
#include "core/api/commands.h"
#include "core/api/search_command.h"
#include "core/golden/golden.h"
#include "wasm/demo.h"

namespace {

using emscripten::val;

val ToJs(const blueprint::CommandResult& result) {
  val out = val::object();
  out.set("ok", result.exit_code == blueprint::kExitOk);
  out.set("output", result.output);
  val errors = val::array();
  for (const std::string& e : result.errors) errors.call<void>("push", e);
  out.set("errors", errors);
  return out;
}

// A JS array of strings, or an error naming the argument.
bool StringsFromJs(const val& array, std::vector<std::string>* out) {
  if (!array.isArray()) return false;
  const int length = array["length"].as<int>();
  for (int i = 0; i < length; ++i) {
    const val item = array[i];
    if (!item.isString()) return false;
    out->push_back(item.as<std::string>());
  }
  return true;
}

val UsageError(const std::string& message) {
  blueprint::CommandResult result;
  result.exit_code = blueprint::kExitUsage;
  result.errors.push_back(message);
  return ToJs(result);
}

std::string Version() { return "blueprinting 0.1.0"; }

val Check(std::string spec) { return ToJs(blueprint::Check(spec)); }
val Analyze(std::string spec) { return ToJs(blueprint::Analyze(spec)); }
val Digest(std::string spec) { return ToJs(blueprint::Digest(spec)); }
val Explain(std::string spec, std::string figure) {
  return ToJs(blueprint::Explain(spec, figure));
}
val Calculon(std::string app, std::string exe, std::string sys) {
  return ToJs(blueprint::Calculon(app, exe, sys));
}
val ImportCalculon(std::string app, std::string exe, std::string sys) {
  return ToJs(blueprint::ImportCalculon(app, exe, sys));
}
val ImportMegatron(std::string sys, val args) {
  std::vector<std::string> words;
  if (!StringsFromJs(args, &words)) {
    return UsageError("importMegatron: args must be an array of strings");
  }
  return ToJs(blueprint::ImportMegatron(sys, words));
}

// `blueprint search`: `args` are the CLI's search flags; `progress`, when a
// function, is called with the fraction done (the search runs synchronously:
// call it from a Web Worker and terminate the worker to cancel).
val Search(std::string app, std::string sys, val args, val progress) {
  std::vector<std::string> words;
  if (!StringsFromJs(args, &words)) {
    return UsageError("search: args must be an array of strings");
  }
  blueprint::ProgressFn report = nullptr;
  if (progress.typeOf().as<std::string>() == "function") {
    report = [progress](double fraction) { progress(fraction); };
  }
  return ToJs(blueprint::Search(app, sys, words, report));
}
val SearchQuietly(std::string app, std::string sys, val args) {
  return Search(std::move(app), std::move(sys), std::move(args), val::undefined());
}

// The canonical text of every stage of a golden case (core/golden/golden.h):
// `files` maps input file names (spec.json, or app.json + exe.json +
// sys.json, or megatron.txt + sys.json) to their text. Returns
// [{stage, text}], for checking digests independently of the module.
val EvaluateCase(val files) {
  blueprint::CaseFiles inputs;
  for (const std::string& name : blueprint::CaseInputNames()) {
    const val text = files[name];
    if (text.isString()) inputs[name] = text.as<std::string>();
  }
  val out = val::array();
  for (const blueprint::StageText& stage : blueprint::EvaluateCase(inputs)) {
    val item = val::object();
    item.set("stage", stage.stage);
    item.set("text", stage.text);
    out.call<void>("push", item);
  }
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(blueprinting) {
  emscripten::function("version", &Version);
  emscripten::function("digestDemo", &blueprinting::DigestDemo);
  emscripten::function("check", &Check);
  emscripten::function("analyze", &Analyze);
  emscripten::function("digest", &Digest);
  emscripten::function("explain", &Explain);
  emscripten::function("calculon", &Calculon);
  emscripten::function("importCalculon", &ImportCalculon);
  emscripten::function("importMegatron", &ImportMegatron);
  emscripten::function("evaluateCase", &EvaluateCase);
  // embind overloads by argument count: progress is optional.
  emscripten::function("search", &Search);
  emscripten::function("search", &SearchQuietly);
}
