#include "core/analysis/analyze_test_util.h"

#include <optional>

#include "core/plan/plan.h"
#include "core/taskir/lower.h"

namespace blueprint {
namespace analyze_test {

absl::StatusOr<Analysed> AnalyseProgram(
    absl::StatusOr<TypedProgram> program,
    std::optional<Corrections> corrections) {
  Analysed a;
  if (!program.ok()) return program.status();
  a.program = *program;
  if (corrections.has_value()) a.program.corrections = *corrections;
  absl::StatusOr<DistributedTaskIR> ir =
      LowerTensorParallelBlock().Run(a.program);
  if (!ir.ok()) return ir.status();
  a.tasks = *ir;
  absl::StatusOr<PortablePlanIR> plan = PlanPortable().Run(*ir, a.program);
  if (!plan.ok()) return plan.status();
  a.plan = *plan;
  absl::StatusOr<IterationAnalysis> it =
      AnalyzeIteration().Run(*ir, a.plan, a.program);
  if (!it.ok()) return it.status();
  a.iteration = *it;
  absl::StatusOr<MemoryAnalysis> mem = AnalyzeMemory().Run(a.plan, a.program);
  if (!mem.ok()) return mem.status();
  a.memory = *mem;
  return a;
}

absl::StatusOr<Analysed> Analyse(const test_programs::TestMapping& m,
                                 std::optional<Corrections> corrections) {
  return AnalyseProgram(test_programs::TestProgram(m), corrections);
}

}  // namespace analyze_test
}  // namespace blueprint
