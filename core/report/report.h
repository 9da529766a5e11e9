// The outputs of one analysed mapping: the project's report JSON (Calculon's
// figures plus work per rank, communication volume per collective, bubble
// fraction, critical paths and schedule terms), Calculon's stats JSON, the
// canonical text of every stage with its digest, and the lineage chain of any
// figure ("why this number").
#ifndef BLUEPRINTING_CORE_REPORT_REPORT_H_
#define BLUEPRINTING_CORE_REPORT_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/pipeline/pipeline.h"
#include "nlohmann/json.hpp"

namespace blueprint {

inline constexpr char kReportFormat[] = "blueprinting.report/1";

// {"format", "kind", "mapping": {...}, "figures": {flat map of every figure},
//  "memory": {"fits", "violations"}}; every figure name is unique, so a page
// can address one as figures.<name>.
nlohmann::json ReportJson(const PipelineResult& result);
// Canonical text of ReportJson, ending in "\n".
std::string ReportText(const PipelineResult& result);

// Calculon's stats JSON as canonical text, ending in "\n".
std::string CalculonStatsText(const PipelineResult& result);

// One stage's canonical text (format-versioned first line, lineage inside).
struct StageText {
  std::string stage;  // "spec", "task_ir", "plan_ir", "iteration", "memory",
                      // "report"
  std::string text;
};
std::vector<StageText> StageTexts(const PipelineResult& result);

// "<stage> <sha256>\n" per stage, in StageTexts order.
std::string DigestText(const PipelineResult& result);

// The lineage chain of one report figure back to spec fields and system
// parameters. For an iteration or memory figure, the first line is
// "name = formula = formula with values = value" (core/analysis/lineage.h,
// values by FormatDouble), e.g. for core/spec/testdata/175b_t8p8_v3.json
//   bubble_time = bubble_chunks * chunk_time - bubble_reduction_time =
//       7 * 0.09048864084527214 - 0 = 0.633420485916905
// (one line).
// Then one node per line, indented by its depth (the figure at depth 0), its
// sources below it down to `max_depth` (nullopt: every level); a node at
// max_depth with sources ends in "(N sources not shown)", one expanded
// earlier in "(expanded above)". kNotFound for an unknown figure,
// kInvalidArgument for a max_depth < 0.
absl::StatusOr<std::string> ExplainFigure(
    const PipelineResult& result, const std::string& figure,
    std::optional<int64_t> max_depth = std::nullopt);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_REPORT_REPORT_H_
