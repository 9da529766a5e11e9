// Passes AnalyzeIteration and AnalyzeMemory: PortablePlanIR + TypedProgram ->
// IterationAnalysis / MemoryAnalysis. They wrap the pure figure functions of
// figures.h with what a report needs: the schedule that was composed, a
// lineage record for every figure, canonical texts, and the memory-capacity
// check reported like the checker's violations.
#ifndef BLUEPRINTING_CORE_ANALYSIS_ANALYZE_H_
#define BLUEPRINTING_CORE_ANALYSIS_ANALYZE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/analysis/figures.h"
#include "core/analysis/lineage.h"
#include "core/analysis/schedule.h"
#include "core/base/field_errors.h"
#include "core/plan/plan_ir.h"
#include "core/spec/program.h"

namespace blueprint {

// A figure's lineage: the figure it explains, the formula it is computed by
// (core/analysis/lineage.h; empty for a derived value) and the nodes it came
// from ("iteration:chunk_time", "block:block_fw_time",
// "derived:microbatches", "spec:batch.global_batch_size",
// "system:networks[1]").
struct FigureLineage {
  std::string figure;
  std::string formula;
  Lineage lineage;
};

struct IterationAnalysis {
  static constexpr const char* kFormat = "blueprinting.iteration_analysis/2";
  std::string schedule;  // PipelineScheduleName of the composed schedule
  StepShape step;
  IterationFigures figures;
  std::vector<FigureLineage> lineage;  // one per figure, in figure order
};

struct MemoryAnalysis {
  static constexpr const char* kFormat = "blueprinting.memory_analysis/2";
  MemoryFigures figures;
  // Capacity violations, one line each (empty when the mapping fits).
  std::vector<FieldError> violations;
  std::vector<FigureLineage> lineage;
};

class AnalyzeIteration {
 public:
  static constexpr const char* kName = "AnalyzeIteration";
  const char* name() const { return kName; }
  absl::StatusOr<IterationAnalysis> Run(const PortablePlanIR& plan,
                                        const TypedProgram& program) const;
};

class AnalyzeMemory {
 public:
  static constexpr const char* kName = "AnalyzeMemory";
  const char* name() const { return kName; }
  // Over-capacity is not an error of the pass: it is reported in
  // `violations`, which callers turn into exit code 2.
  absl::StatusOr<MemoryAnalysis> Run(const PortablePlanIR& plan,
                                     const TypedProgram& program) const;
};

std::string ToText(const IterationAnalysis& analysis);
std::string ToText(const MemoryAnalysis& analysis);

// The lineage of the derived values ("derived:blocks_per_stage" and so on)
// back to spec fields.
std::vector<FigureLineage> DerivedLineage();

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ANALYSIS_ANALYZE_H_
