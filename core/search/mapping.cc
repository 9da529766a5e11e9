#include "core/search/mapping.h"

#include "core/spec/spec_schedule.h"

namespace blueprint {

TypedProgram MappingProgram(const TransformerModel& model, const System& system,
                            const TrainingMapping& mapping) {
  return AcceptedProgram(TrainingSpecOf(model, system, mapping));
}

StepShape MappingStepShapeWith(DerivedValues derived,
                               const TransformerModel& model,
                               const System& system,
                               const TrainingMapping& mapping,
                               const AccountedModel& accounted) {
  SetMicrobatchSize(derived, mapping.batch.microbatch_size);
  StepShape step = MakeStepShape(derived, model, system, mapping.batch,
                                 mapping.options, accounted);
  step.simulated_schedule =
      SimulatedScheduleKind(mapping.parallelism.pipeline.schedule);
  SetStepLayout(step, mapping.parallelism.pipeline.stage_blocks);
  return step;
}

StepShape MappingStepShape(const TransformerModel& model, const System& system,
                           const TrainingMapping& mapping) {
  return MappingStepShapeWith(
      DeriveTrainingValues(model, mapping.parallelism, mapping.batch,
                           mapping.options),
      model, system, mapping, AccountedModelOf(model));
}

}  // namespace blueprint
