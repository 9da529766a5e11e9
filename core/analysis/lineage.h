// The lineage of every iteration and memory figure: its formula, the figure
// table's (core/figures/figure_table.h), and its sources, one table
// (lineage.cc) with one row per name of the figure table's lists
// (BP_ITERATION_FIGURES, BP_SCHEDULE_TERMS, BP_MEMORY_FIGURES,
// BP_MEMORY_TERMS), in their order. lineage.cc checks at compile time that
// the rows and the lists name the same figures in the same order and that
// every one has a formula, so a figure cannot be added without its formula
// and sources; lineage_test checks that every formula's names resolve and
// appear among its sources.
//
// A formula is C-like text over named terms, e.g.
//   bubble_time: "bubble_chunks * chunk_time - bubble_reduction_time"
// A name is, in this order of lookup:
//   * a figure of the formula's own analysis (an iteration figure or schedule
//     term for an iteration formula, a memory figure for a memory formula);
//   * a step term (StepTerms: p, v, m, d, blocks_per_stage, training, ...);
//   * a block figure (core/figures/figure_table.h BP_BLOCK_FIGURES);
//   * qualified, when a name is ambiguous: "block.useful_flops";
//   * followed by "(": a function (FormulaFunctions: max, min, p2p_time,
//     dp_time, mem2_time, rate, the DP-overlap helpers of figures.cc).
// Booleans are 1 or 0. The formula describes the computation of figures.cc;
// the figure's value is what figures.cc computed (its order of operations
// may differ in the last bits from the formula read literally).
//
// Sources are lineage node ids ("iteration:chunk_time", "block:block_fw_time",
// "derived:microbatches", "spec:parallelism.pipeline.degree",
// "system:networks[$dp]"): "$pp", "$dp" and "$dtype" stand for the pipeline
// and data network tiers and the datatype of the program.
#ifndef BLUEPRINTING_CORE_ANALYSIS_LINEAGE_H_
#define BLUEPRINTING_CORE_ANALYSIS_LINEAGE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/analysis/figures.h"
#include "core/analysis/schedule.h"
#include "core/plan/plan_ir.h"

namespace blueprint {

inline constexpr size_t kMaxFormulaSources = 32;

// One figure's lineage row.
struct FigureFormula {
  const char* figure;
  const char* formula;
  // Source node ids (with "$pp", "$dp", "$dtype"), nullptr after the last.
  const char* sources[kMaxFormulaSources];
};

// The source templates of a row, in order.
std::vector<std::string> SourcesOf(const FigureFormula& row);

// Every iteration figure then every schedule term, in the table's order.
absl::Span<const FigureFormula> IterationFormulas();
// The same for a spec with (explicit_layout) or without an explicit stage
// layout: with one, BP_LAYOUT_FORMULAS' rows replace theirs.
absl::Span<const FigureFormula> IterationFormulas(bool explicit_layout);
// Every memory figure then every memory term, in the table's order.
absl::Span<const FigureFormula> MemoryFormulas();
// The same with (explicit_layout) BP_LAYOUT_MEMORY_FORMULAS' rows.
absl::Span<const FigureFormula> MemoryFormulas(bool explicit_layout);

// Which analysis a formula belongs to: its unqualified names look there first.
enum class FormulaScope { kIteration, kMemory };

// BP_LAYOUT_FORMULAS' (kIteration) or BP_LAYOUT_MEMORY_FORMULAS' (kMemory)
// rows alone (lineage_test checks them).
absl::Span<const FigureFormula> LayoutFormulas(FormulaScope scope);

// The row of `figure` in `scope`'s table (IterationFormulas(explicit_layout)
// for the iteration), or nullptr.
const FigureFormula* FindFormula(FormulaScope scope, absl::string_view figure,
                                 bool explicit_layout = false);

// A value of the step shape that formulas use by name (p, v, m, ...), and
// the source templates it comes from.
struct StepTerm {
  std::string name;
  double value = 0;
  std::vector<std::string> sources;
};
std::vector<StepTerm> StepTerms(const StepShape& step);

// A function a formula may call, and the sources it reads besides its
// arguments (e.g. p2p_time: "system:networks[$pp]").
struct FormulaFunction {
  const char* name;
  const char* meaning;
  std::vector<const char*> sources;
};
const std::vector<FormulaFunction>& FormulaFunctions();

// One name in a formula: [begin, end) in the text; `function` when "(" follows.
struct FormulaName {
  size_t begin = 0;
  size_t end = 0;
  std::string name;
  bool function = false;
};
std::vector<FormulaName> NamesOf(absl::string_view formula);

// What a name of a formula stands for: the lineage node it is read from
// ("iteration:chunk_time", "block:block_fw_time", or "step:p" for a step
// term, whose sources are then `step_sources`), or nullopt when it is unknown.
struct ResolvedName {
  std::string node;
  std::vector<std::string> step_sources;
};
std::optional<ResolvedName> ResolveName(FormulaScope scope,
                                        absl::string_view name);

// The values a formula's names stand for.
struct FormulaValues {
  const IterationFigures* iteration = nullptr;
  const MemoryFigures* memory = nullptr;
  const BlockFigures* block = nullptr;
  const BlockFigures* first_stage = nullptr;  // plan IR stage figures
  const BlockFigures* last_stage = nullptr;
  const StepShape* step = nullptr;
};

// The value of `name` in a formula of `scope`, or nullopt (unknown name, or
// its figures not given).
std::optional<double> ValueOf(FormulaScope scope, absl::string_view name,
                              const FormulaValues& values);

// The formula with every name that has a value replaced by that value
// (FormatDouble); functions and unknown names are kept.
std::string SubstituteValues(FormulaScope scope, absl::string_view formula,
                             const FormulaValues& values);

// The problems of a row: a name that is unknown, or whose node (or, for a
// step term or function, whose sources) is missing from the row's sources;
// no formula; no sources. Empty when the row is consistent.
std::vector<std::string> FormulaProblems(FormulaScope scope,
                                         const FigureFormula& row);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ANALYSIS_LINEAGE_H_
