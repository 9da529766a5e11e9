#include "core/search/execution.h"

#include <optional>
#include <variant>

#include "core/spec/corrections.h"
#include "core/spec/spec_schedule.h"

namespace blueprint {
namespace {

// The extras' spelling of a ZeRO stage (group 0: all d ranks).
DataSharding ShardingOf(ShardingStage stage) {
  switch (stage) {
    case ShardingStage::kNone:
      return NoSharding{};
    case ShardingStage::kOptimizer:
      return ShardOptimizer{};
    case ShardingStage::kGradients:
      return ShardGradients{};
    case ShardingStage::kParameters:
      return ShardParameters{};
  }
  return NoSharding{};
}

// Applies the extras to the parts of a training spec.
void ApplyExtras(const ExecutionExtras& x,
                 TransformerTrainingParallelism& parallelism,
                 ExecutionOptions& options) {
  parallelism.context.degree = x.context;
  parallelism.context.exchange = x.context_exchange;
  parallelism.context.network_tier = x.context_net;
  parallelism.expert.degree = x.expert;
  parallelism.expert.tensor_degree = x.expert_tensor;
  parallelism.expert.network_tier = x.expert_net;
  if (x.sharding != ShardingStage::kNone) {
    parallelism.data.sharding = ShardingOf(x.sharding);
  }
  if (x.schedule.has_value()) {
    if (std::optional<PipelineSchedule> schedule =
            SimulatedSpecSchedule(*x.schedule)) {
      parallelism.pipeline.schedule = *schedule;
    }
  }
  options.precision = x.precision;
  options.profile = x.profile;
}

}  // namespace

CalculonTrainingParts ExecutionParts(const CalculonExecution& e,
                                     const ExecutionExtras& x,
                                     const TransformerModel& model) {
  CalculonTrainingParts parts = TrainingPartsOf(e, model);
  ApplyExtras(x, parts.parallelism, parts.options);
  return parts;
}

MappingSpec ExecutionSpec(const TransformerModel& model, const System& system,
                          const CalculonExecution& e,
                          const ExecutionExtras& extras) {
  MappingSpec spec = SpecOf(e, model, system);
  if (auto* training = std::get_if<TransformerTrainingMappingSpec>(&spec)) {
    ApplyExtras(extras, training->parallelism, training->options);
  }
  return spec;
}

TypedProgram ExecutionProgram(const TransformerModel& model,
                              const System& system, const CalculonExecution& e,
                              const ExecutionExtras& extras) {
  TypedProgram program;
  program.spec = ExecutionSpec(model, system, e, extras);
  program.derived = DeriveValues(program.spec);
  // As CheckSpec: the corrections of the spec's profile.
  program.corrections = CorrectionsFor(program.options().profile);
  return program;
}

StepShape PartsStepShape(DerivedValues derived, const TransformerModel& model,
                         const System& system,
                         const CalculonTrainingParts& parts,
                         const AccountedModel& accounted,
                         std::optional<ScheduleKind> schedule) {
  SetMicrobatchSize(derived, parts.batch.microbatch_size);
  StepShape step = MakeStepShape(derived, model, system, parts.batch,
                                 parts.options, accounted);
  step.simulated_schedule = schedule;
  return step;
}

StepShape ExecutionStepShape(const TransformerModel& model,
                             const System& system, const CalculonExecution& e,
                             const ExecutionExtras& extras) {
  const CalculonTrainingParts parts = ExecutionParts(e, extras, model);
  return PartsStepShape(DeriveTrainingValues(model, parts.parallelism,
                                             parts.batch, parts.options),
                        model, system, parts, AccountedModelOf(model),
                        extras.schedule);
}

}  // namespace blueprint
