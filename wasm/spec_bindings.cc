// embind surface shared by the full module (//wasm:blueprinting) and the slim
// one for embedding (//wasm:blueprinting_slim): version, metadata and the
// commands on one spec that docs pages show (check, canonical, analyze,
// explain, schedule). import_bindings.cc has importMegatron, bindings.cc the
// rest of the full module; see it for the conventions every binding follows
// (errors as values, hostile input refused here).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/api/analysis_commands.h"
#include "core/api/commands.h"
#include "core/api/metadata.h"
#include "core/base/format.h"
#include "wasm/js_values.h"

namespace {

using blueprint_wasm::Arguments;
using blueprint_wasm::ToJs;
using blueprint_wasm::WithSpec;
using emscripten::val;

std::string Version() { return "blueprinting 0.1.0"; }

val Check(val spec_arg) { return WithSpec(spec_arg, &blueprint::Check); }
val Canonical(val spec_arg) {
  return WithSpec(spec_arg, &blueprint::Canonical);
}
val Analyze(val spec_arg) { return WithSpec(spec_arg, &blueprint::Analyze); }

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
// `blueprint metadata`: enums, report figures and spec fields as JSON.
val Metadata() { return ToJs(blueprint::Metadata()); }

}  // namespace

EMSCRIPTEN_BINDINGS(blueprinting_spec) {
  emscripten::function("version", &Version);
  emscripten::function("check", &Check);
  emscripten::function("canonical", &Canonical);
  emscripten::function("analyze", &Analyze);
  // guard.js always passes all three of explain's arguments (depth may be
  // undefined) and both of schedule's.
  emscripten::function("explain", &Explain);
  emscripten::function("schedule", &Schedule);
  emscripten::function("metadata", &Metadata);
}
