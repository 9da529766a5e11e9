// The serving analysis' outputs: its canonical text
// ("blueprinting.serving_analysis/1": the pools, every figure of the table in
// serving_model.h in its order, then one lineage line per figure with its
// formula and sources, as the training stages print theirs) and the explain
// tree of one figure (its value, formula and sources, recursively down to the
// spec's and the system's values). Formats only: the figures are
// AnalyzeServing's.
//
// Example:
//   std::string text = ServingAnalysisText(spec, *analysis);
//   absl::StatusOr<std::string> tree =
//       ExplainServingFigure(spec, *analysis, "ttft");
#ifndef BLUEPRINTING_CORE_SERVING_SERVING_REPORT_H_
#define BLUEPRINTING_CORE_SERVING_SERVING_REPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/serving/serving_model.h"
#include "core/serving/serving_spec.h"

namespace blueprint {

inline constexpr char kServingAnalysisFormat[] =
    "blueprinting.serving_analysis/1";
// The pass name lineage records for every serving figure.
inline constexpr char kServingPassName[] = "AnalyzeServing";

// The canonical text, ending in "\n". Doubles print by FormatDouble.
std::string ServingAnalysisText(const ServingSpec& spec,
                                const ServingAnalysis& analysis);

// The explain tree of `figure` (a name of the figure table): a line
// "NAME = VALUE UNIT", its formula, then each source indented: a figure's
// own tree, or "spec:PATH = VALUE" / "system:PATH = VALUE" (the value
// when it is a number or a string; the path alone for an object). A figure
// met again prints "(above)" instead of its tree. kInvalidArgument
// (kUnknownChoice, listing the figures) for an unknown name.
absl::StatusOr<std::string> ExplainServingFigure(
    const ServingSpec& spec, const ServingAnalysis& analysis,
    const std::string& figure);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SERVING_SERVING_REPORT_H_
