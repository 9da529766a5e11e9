#include "core/search/mapping.h"

#include "core/spec/recipes.h"
#include "core/spec/spec_schedule.h"

namespace blueprint {

void ApplyExecutionVariant(const ExecutionVariant& variant,
                           TrainingMapping& mapping) {
  ExecutionOptions& options = mapping.options;
  options.recipe = variant.recipe;
  options.gemm_datatype.reset();
  options.weight_datatype.reset();
  if (variant.recipe != QuantizationRecipe::kNone) {
    const RecipeInfo& recipe = RecipeOf(variant.recipe);
    options.gemm_datatype = recipe.gemm_datatype;
    if (recipe.fp8_param_gather) options.weight_datatype = DataType::kFloat8;
  }
  ExpertParallel& expert = mapping.parallelism.expert;
  expert.dispatcher = variant.dispatcher;
  expert.overlap = variant.expert_overlap;
  expert.delay_wgrad = variant.expert_overlap;
}

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
