#include "core/testing/extreme_values.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/api/analysis_commands.h"
#include "core/api/commands.h"
#include "core/base/sha256.h"
#include "nlohmann/json.hpp"

namespace blueprint::testing {
namespace {

using Json = nlohmann::json;

void CollectLeaves(const Json& node, const std::string& pointer,
                   std::vector<std::string>* out) {
  if (node.is_number()) {
    out->push_back(pointer);
  } else if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      CollectLeaves(it.value(), absl::StrCat(pointer, "/", it.key()), out);
    }
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) {
      CollectLeaves(node[i], absl::StrCat(pointer, "/", i), out);
    }
  }
}

// Every number under `node` must be finite and >= 0.
void CheckFigures(const Json& node, const std::string& where,
                  std::vector<std::string>* broken) {
  if (node.is_number()) {
    const double value = node.get<double>();
    if (!std::isfinite(value) || value < 0 || std::signbit(value)) {
      broken->push_back(absl::StrCat("figure ", where, " is ", node.dump()));
    }
  } else if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      CheckFigures(it.value(), absl::StrCat(where, ".", it.key()), broken);
    }
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) {
      CheckFigures(node[i], absl::StrCat(where, "[", i, "]"), broken);
    }
  }
}

// The top-level parts of a spec; an error names a field when it mentions one.
bool NamesField(const std::string& error) {
  for (const char* part : {"model", "system", "parallelism", "batch",
                           "options", "kind", "format", "spec"}) {
    const size_t at = error.find(part);
    if (at == std::string::npos) continue;
    const size_t end = at + std::string(part).size();
    if (end == error.size() || error[end] == '.' || error[end] == '[' ||
        error[end] == ':' || error[end] == ' ' || error[end] == '"') {
      return true;
    }
  }
  return false;
}

// "field: message" per error, one per line.
std::string ErrorLines(const CommandResult& result) {
  std::string out;
  for (const FieldError& error : result.errors) {
    absl::StrAppend(&out, error.field, ": ", error.message, "\n");
  }
  return out;
}

}  // namespace

PropertyOutcome CheckExtremeValueProperty(const std::string& spec_json) {
  PropertyOutcome outcome;
  const CommandResult check = Check(spec_json);
  std::string printed = check.output + ErrorLines(check);
  std::string analyze_code = "-";
  if (check.exit_code == kExitOk) {
    // What check derives (degrees, tiers, sizes, counts) is never negative.
    const Json program = Json::parse(check.output, nullptr,
                                     /*allow_exceptions=*/false);
    if (program.is_discarded() || !program.contains("derived")) {
      outcome.broken.push_back("check printed no program with derived values");
    } else {
      CheckFigures(program["derived"], "derived", &outcome.broken);
    }
    const CommandResult analyze = Analyze(spec_json);
    analyze_code = absl::StrCat(analyze.exit_code);
    absl::StrAppend(&printed, "\n", analyze.output, "\n",
                    ErrorLines(analyze));
    // Memory capacity is the one rule that needs the analysis: its report
    // is still printed, and its errors name a memory tier.
    bool capacity_only =
        analyze.exit_code == kExitInvalidInput && !analyze.output.empty();
    for (const FieldError& error : analyze.errors) {
      capacity_only &= error.field == "system.mem1.GiB" ||
                       error.field == "system.mem2.GiB";
    }
    if (analyze.exit_code != kExitOk && !capacity_only) {
      outcome.broken.push_back(absl::StrCat("check accepts but analyze exits ",
                                            analyze.exit_code, ": ",
                                            ErrorLines(analyze)));
    }
    if (!analyze.output.empty()) {
      const Json report = Json::parse(analyze.output, nullptr,
                                      /*allow_exceptions=*/false);
      if (report.is_discarded()) {
        outcome.broken.push_back("analyze printed a report that is not JSON");
      } else {
        for (const char* part : {"figures", "memory"}) {
          if (report.contains(part)) {
            CheckFigures(report[part], part, &outcome.broken);
          }
        }
      }
    }
  } else {
    if (check.exit_code != kExitInvalidInput) {
      outcome.broken.push_back(
          absl::StrCat("check exits ", check.exit_code, " (not 2)"));
    }
    if (check.errors.empty()) outcome.broken.push_back("check: no errors");
    for (const FieldError& error : check.errors) {
      if (error.field.empty() || !NamesField(error.message)) {
        outcome.broken.push_back(
            absl::StrCat("error names no field: ", error.message));
      }
    }
  }
  outcome.record = absl::StrCat("check=", check.exit_code,
                                " analyze=", analyze_code,
                                " sha256=", Sha256Hex(printed));
  return outcome;
}

std::vector<std::string> NumericLeaves(const std::string& json) {
  std::vector<std::string> out;
  const Json doc = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_discarded()) CollectLeaves(doc, "", &out);
  return out;
}

std::vector<std::string> IntegerLeaves(const std::string& json) {
  std::vector<std::string> out;
  const Json doc = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return out;
  for (const std::string& pointer : NumericLeaves(json)) {
    if (doc[Json::json_pointer(pointer)].is_number_integer()) {
      out.push_back(pointer);
    }
  }
  return out;
}

std::string WithLeaf(const std::string& json, const std::string& pointer,
                     const std::string& token) {
  Json doc = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  const Json value = Json::parse(token, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || value.is_discarded()) return json;
  doc[Json::json_pointer(pointer)] = value;
  return doc.dump(2);
}

const std::vector<std::string>& ExtremeTokens() {
  static const auto* tokens = new std::vector<std::string>{
      "0",       "-0.0",   "5e-324", "2.2250738585072014e-308",
      "1e-300",  "1e-7",   "0.5",    "3",
      "1e7",     "1e300",  "1.7976931348623157e308",
      "-1",      "-1e300", "4611686018427387904",
      "9223372036854775807"};
  return *tokens;
}

const std::vector<std::string>& PowerOfTwoTokens() {
  static const auto* tokens = [] {
    auto* out = new std::vector<std::string>;
    for (int k = 16; k <= 62; ++k) {
      out->push_back(absl::StrCat(int64_t{1} << k));
    }
    return out;
  }();
  return *tokens;
}

}  // namespace blueprint::testing
