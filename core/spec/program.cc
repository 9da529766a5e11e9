#include "core/spec/program.h"

#include <variant>

#include "core/base/status_macros.h"

namespace blueprint {

const char* ShardingStageName(ShardingStage s) {
  switch (s) {
    case ShardingStage::kNone:
      return "none";
    case ShardingStage::kOptimizer:
      return "optimizer";
    case ShardingStage::kGradients:
      return "gradients";
    case ShardingStage::kParameters:
      return "parameters";
  }
  return "none";
}

// Both spec kinds have these fields; each kind is named explicitly so that a
// third kind fails to compile here until it is handled.

const TransformerModel& TypedProgram::model() const {
  return std::visit(
      Overloaded{[](const TransformerTrainingMappingSpec& s)
                     -> const TransformerModel& { return s.model; },
                 [](const TransformerInferenceMappingSpec& s)
                     -> const TransformerModel& { return s.model; }},
      spec);
}

const System& TypedProgram::system() const {
  return std::visit(
      Overloaded{[](const TransformerTrainingMappingSpec& s) -> const System& {
                   return s.system;
                 },
                 [](const TransformerInferenceMappingSpec& s) -> const System& {
                   return s.system;
                 }},
      spec);
}

const Batch& TypedProgram::batch() const {
  return std::visit(
      Overloaded{[](const TransformerTrainingMappingSpec& s) -> const Batch& {
                   return s.batch;
                 },
                 [](const TransformerInferenceMappingSpec& s) -> const Batch& {
                   return s.batch;
                 }},
      spec);
}

const ExecutionOptions& TypedProgram::options() const {
  return std::visit(
      Overloaded{[](const TransformerTrainingMappingSpec& s)
                     -> const ExecutionOptions& { return s.options; },
                 [](const TransformerInferenceMappingSpec& s)
                     -> const ExecutionOptions& { return s.options; }},
      spec);
}

const TensorParallel& TypedProgram::tensor() const {
  return std::visit(
      Overloaded{[](const TransformerTrainingMappingSpec& s)
                     -> const TensorParallel& { return s.parallelism.tensor; },
                 [](const TransformerInferenceMappingSpec& s)
                     -> const TensorParallel& { return s.parallelism.tensor; }},
      spec);
}

const PipelineParallel& TypedProgram::pipeline() const {
  return std::visit(
      Overloaded{
          [](const TransformerTrainingMappingSpec& s)
              -> const PipelineParallel& { return s.parallelism.pipeline; },
          [](const TransformerInferenceMappingSpec& s)
              -> const PipelineParallel& { return s.parallelism.pipeline; }},
      spec);
}

}  // namespace blueprint
