// Test-only bindings, compiled into //wasm:blueprinting_testing next to
// bindings.cc (never into //wasm:package): evaluateCase, the golden test's
// helper. wasm/guard.js wraps it like every other method.
#include <string>
#include <utility>
#include <vector>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "absl/strings/str_cat.h"
#include "core/base/field_errors.h"
#include "core/golden/golden.h"
#include "wasm/js_values.h"

namespace {

using blueprint_wasm::JsString;
using blueprint_wasm::StringFromJs;
using emscripten::val;

// The canonical text of every stage of a golden case (core/golden/golden.h):
// `files` maps input file names (spec.json, or app.json + exe.json +
// sys.json, or megatron.txt + sys.json, or serving.json) to their text. Returns
// [{stage, text}], for checking digests independently of the module. An
// input that is not a usable string yields one "errors" stage.
val EvaluateCase(val files) {
  blueprint::CaseFiles inputs;
  std::vector<blueprint::FieldError> errors;
  const bool is_object = files.typeOf().as<std::string>() == "object" &&
                         !files.isNull();
  for (const std::string& name : blueprint::CaseInputNames()) {
    if (!is_object) break;
    const val text = files[name];
    if (text.isUndefined()) continue;
    std::string converted;
    if (StringFromJs(text, name, &converted, &errors)) {
      inputs[name] = std::move(converted);
    }
  }
  std::vector<blueprint::StageText> stages;
  if (errors.empty()) {
    stages = blueprint::EvaluateCase(inputs);
  } else {
    std::string text = "blueprinting.errors/1\n";
    for (const blueprint::FieldError& e : errors) {
      absl::StrAppend(&text, e.message, "\n");
    }
    stages.push_back({"errors", text});
  }
  val out = val::array();
  for (const blueprint::StageText& stage : stages) {
    val item = val::object();
    item.set("stage", JsString(stage.stage));
    item.set("text", JsString(stage.text));
    out.call<void>("push", item);
  }
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(blueprinting_testing) {
  emscripten::function("evaluateCase", &EvaluateCase);
}
