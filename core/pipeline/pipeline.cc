#include "core/pipeline/pipeline.h"

#include <utility>

#include "core/base/status_macros.h"
#include "core/plan/plan.h"
#include "core/taskir/lower.h"

namespace blueprint {

absl::StatusOr<PipelineResult> RunPipeline(const TypedProgram& program) {
  PipelineResult result;
  result.program = program;
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
