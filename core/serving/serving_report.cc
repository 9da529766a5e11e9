#include "core/serving/serving_report.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/base/field_errors.h"
#include "core/base/format.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

using Json = nlohmann::json;

constexpr char kFigurePrefix[] = "serving:";

std::string PoolLine(const char* name, const ServingPool& pool) {
  std::string out = absl::StrCat("pool ", name);
  for (const ServingPoolKey& key : kServingPoolKeys) {
    absl::StrAppend(&out, " ", key.key, "=", pool.*key.field);
  }
  return out + "\n";
}

// The value at a dotted JSON path with [index] parts ("mem1.GiB",
// "networks[0]"), or nullptr.
const Json* Lookup(const Json& root, const std::string& path) {
  const Json* at = &root;
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    std::vector<absl::string_view> pieces = absl::StrSplit(part, '[');
    if (!at->is_object()) return nullptr;
    auto it = at->find(std::string(pieces[0]));
    if (it == at->end()) return nullptr;
    at = &*it;
    for (size_t i = 1; i < pieces.size(); ++i) {
      absl::string_view index = pieces[i];
      if (!absl::ConsumeSuffix(&index, "]")) return nullptr;
      size_t n = 0;
      if (!absl::SimpleAtoi(index, &n) || !at->is_array() ||
          n >= at->size()) {
        return nullptr;
      }
      at = &(*at)[n];
    }
  }
  return at;
}

class Explainer {
 public:
  Explainer(const ServingSpec& spec, const ServingAnalysis& analysis)
      : analysis_(analysis),
        spec_json_(Json::parse(ServingSpecToJson(spec), nullptr, false)) {}

  void Figure(const ServingFigureRow& row, int depth) {
    const std::string indent(static_cast<size_t>(2 * depth), ' ');
    absl::StrAppend(&out_, indent, row.name, " = ",
                    FormatDouble(analysis_.figures.*row.field), " ", row.unit,
                    "\n");
    if (!seen_.insert(row.name).second) {
      absl::StrAppend(&out_, indent, "  (above)\n");
      return;
    }
    absl::StrAppend(&out_, indent, "  formula: ", row.formula, "\n");
    auto it = analysis_.sources.find(row.name);
    if (it == analysis_.sources.end()) return;
    for (const std::string& source : it->second) Source(source, depth + 1);
  }

  std::string Take() { return std::move(out_); }

 private:
  void Source(const std::string& source, int depth) {
    const std::string indent(static_cast<size_t>(2 * depth), ' ');
    absl::string_view rest = source;
    if (absl::ConsumePrefix(&rest, kFigurePrefix)) {
      if (const ServingFigureRow* row = FindServingFigure(std::string(rest))) {
        Figure(*row, depth);
        return;
      }
    }
    const Json* value = nullptr;
    if (absl::ConsumePrefix(&rest, "spec:")) {
      value = Lookup(spec_json_, std::string(rest));
    } else if (absl::ConsumePrefix(&rest, "system:")) {
      value = Lookup(spec_json_, absl::StrCat("system.", rest));
    }
    absl::StrAppend(&out_, indent, source);
    if (value != nullptr && value->is_primitive()) {
      absl::StrAppend(&out_, " = ", CanonicalJson(*value, -1));
    }
    absl::StrAppend(&out_, "\n");
  }

  const ServingAnalysis& analysis_;
  const Json spec_json_;
  std::set<std::string> seen_;
  std::string out_;
};

}  // namespace

std::string ServingAnalysisText(const ServingSpec& spec,
                                const ServingAnalysis& analysis) {
  std::string out = absl::StrCat(kServingAnalysisFormat, "\n");
  std::visit(Overloaded{[&](const AggregatedPools& a) {
                          absl::StrAppend(&out, "pools aggregated\n",
                                          PoolLine("pool", a.pool));
                        },
                        [&](const DisaggregatedPools& d) {
                          absl::StrAppend(&out, "pools disaggregated\n",
                                          PoolLine("prefill", d.prefill),
                                          PoolLine("decode", d.decode));
                        }},
             spec.pools);
  for (const ServingFigureRow& row : ServingFigureTable()) {
    absl::StrAppend(&out, row.name, " ",
                    FormatDouble(analysis.figures.*row.field), "\n");
  }
  for (const ServingFigureRow& row : ServingFigureTable()) {
    auto it = analysis.sources.find(row.name);
    const std::vector<std::string> none;
    absl::StrAppend(&out, "lineage ", row.name, " = ", row.formula, " pass=",
                    kServingPassName, " from [",
                    absl::StrJoin(it == analysis.sources.end() ? none
                                                               : it->second,
                                  ","),
                    "]\n");
  }
  return out;
}

absl::StatusOr<std::string> ExplainServingFigure(
    const ServingSpec& spec, const ServingAnalysis& analysis,
    const std::string& figure) {
  const ServingFigureRow* row = FindServingFigure(figure);
  if (row == nullptr) {
    std::vector<std::string> names;
    for (const ServingFigureRow& r : ServingFigureTable()) {
      names.push_back(r.name);
    }
    return InvalidInputError(
        {{"figure",
          absl::StrCat("figure \"", figure,
                       "\" is not a serving figure (expected one of ",
                       absl::StrJoin(names, ", "), ")"),
          ErrorCode::kUnknownChoice}});
  }
  Explainer explainer(spec, analysis);
  explainer.Figure(*row, 0);
  return explainer.Take();
}

}  // namespace blueprint
