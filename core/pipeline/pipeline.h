// The pipeline of passes for one mapping: TypedProgram ->
// LowerTensorParallelBlock -> PlanPortable -> AnalyzeIteration and
// AnalyzeMemory -> SimulatePipelineSchedule (the concrete scheduler's
// figures), each verified before and after. Keeps every IR so reports,
// digests and lineage can read them.
#ifndef BLUEPRINTING_CORE_PIPELINE_PIPELINE_H_
#define BLUEPRINTING_CORE_PIPELINE_PIPELINE_H_

#include "absl/status/statusor.h"
#include "core/analysis/analyze.h"
#include "core/plan/plan_ir.h"
#include "core/pipeline/schedule_analysis.h"
#include "core/spec/program.h"
#include "core/taskir/task_ir.h"

namespace blueprint {

struct PipelineResult {
  TypedProgram program;
  DistributedTaskIR tasks;
  PortablePlanIR plan;
  IterationAnalysis iteration;
  MemoryAnalysis memory;
  ScheduleAnalysis schedule;
};

// RunPipeline: every pass on a copy of `program` that the result keeps, so
// that the analyses' views of it (the step shape's network tiers and stage
// layout) stay valid for as long as the result, moves included.
absl::StatusOr<PipelineResult> RunPipeline(const TypedProgram& program);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_PIPELINE_PIPELINE_H_
