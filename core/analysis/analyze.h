// Passes AnalyzeIteration (DistributedTaskIR + PortablePlanIR + TypedProgram
// -> IterationAnalysis) and AnalyzeMemory (PortablePlanIR + TypedProgram ->
// MemoryAnalysis). They wrap the pure figure functions of figures.h with what
// a report needs: the schedule that was composed, the per-rank figures
// Calculon does not report (traffic by collective, work, bubble fraction,
// critical paths), a lineage record for every figure, canonical texts, and the
// memory-capacity check reported like the checker's violations.
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
#include "core/taskir/task_ir.h"

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

// A figure with a computed name (e.g. "tp_all_reduce_bytes").
struct NamedFigure {
  std::string name;
  double value = 0;
};

struct IterationAnalysis {
  static constexpr const char* kFormat = "blueprinting.iteration_analysis/2";
  std::string schedule;  // PipelineScheduleName of the composed schedule
  StepShape step;
  IterationFigures figures;
  // Per rank and step, beyond Calculon's figures: TP traffic by collective
  // (tp_<op>_bytes), pp_p2p_bytes, dp_<op>_bytes, gemm_flops_per_rank,
  // recompute_gemm_flops_per_rank, flops_per_rank, bubble_fraction and
  // critical_path_<base|edge>_<forward|backward>; in that order.
  std::vector<NamedFigure> rank_figures;
  // One per figure: iteration figures, schedule terms, then rank figures.
  std::vector<FigureLineage> lineage;
};

// The value of an iteration figure, schedule term or rank figure by name;
// false when `name` is none of them.
bool FindIterationFigure(const IterationAnalysis& analysis,
                         const std::string& name, double* value);

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
  absl::StatusOr<IterationAnalysis> Run(const DistributedTaskIR& tasks,
                                        const PortablePlanIR& plan,
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

// The values a formula of either analysis reads (lineage.h ValueOf): the
// step and figures of `iteration` and `memory`, the block and stage figures
// of `plan`. Every argument must outlive the result.
FormulaValues FormulaValuesOf(const PortablePlanIR& plan,
                              const IterationAnalysis& iteration,
                              const MemoryAnalysis& memory);

// The lineage of the derived values ("derived:blocks_per_stage" and so on)
// back to spec fields.
std::vector<FigureLineage> DerivedLineage();

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ANALYSIS_ANALYZE_H_
