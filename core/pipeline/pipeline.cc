#include "core/pipeline/pipeline.h"

#include <utility>
#include <variant>

#include "core/base/status_macros.h"
#include "core/plan/hardware.h"
#include "core/plan/plan.h"
#include "core/taskir/lower.h"

namespace blueprint {

absl::StatusOr<PipelineResult> RunPipeline(const TypedProgram& given) {
  PipelineResult result;
  result.program = given;
  // The system as the program's corrections price it (measured collective
  // rates only under the refined profile's correction).
  std::visit(
      [&](auto& spec) {
        spec.system = SystemUnderCorrections(std::move(spec.system),
                                             given.corrections);
      },
      result.program.spec);
  // The passes read the result's own copy: the step shape views parts of
  // the program (its system's tiers, its stage layout), so the result must
  // hold what it points into (a move keeps the vectors' storage).
  const TypedProgram& program = result.program;
  BP_ASSIGN_OR_RETURN(result.tasks, LowerTensorParallelBlock().Run(program));
  BP_ASSIGN_OR_RETURN(result.plan, PlanPortable().Run(result.tasks, program));
  BP_ASSIGN_OR_RETURN(result.iteration,
                      AnalyzeIteration().Run(result.tasks, result.plan, program));
  BP_ASSIGN_OR_RETURN(result.memory, AnalyzeMemory().Run(result.plan, program));
  BP_ASSIGN_OR_RETURN(result.schedule,
                      SimulatePipelineSchedule().Run(
                          program, result.plan.block, result.iteration));
  return result;
}

}  // namespace blueprint
