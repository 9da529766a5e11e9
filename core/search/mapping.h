// A mapping of the strategy search as the rest of the project reads it: the
// spec's training mapping (core/spec/spec.h TrainingMapping, the one mapping
// type from the checker to the search's output) on the search's model and
// system, turned into its checked program or its step shape. Calculon's
// execution keys are only the search's output (search_json.h, through the
// Calculon adapter).
//
// Its own small header so that the block table (block_table.h), which
// lowers blocks through these programs, does not depend on the search that
// uses it (search.h).
//
// Example:
//   TrainingMapping mapping;
//   mapping.parallelism.context.degree = 2;
//   ...
//   const TypedProgram program = MappingProgram(model, system, mapping);
#ifndef BLUEPRINTING_CORE_SEARCH_MAPPING_H_
#define BLUEPRINTING_CORE_SEARCH_MAPPING_H_

#include "core/analysis/schedule.h"
#include "core/spec/accounting.h"
#include "core/spec/derive.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"

namespace blueprint {

// The options the search varies outside its space of groups: each value is
// searched as a space of its own, with a block table of its own (its
// blocks' lowering and prices depend on it), and the rankings merged
// (search.cc). The default is Calculon's mapping: no recipe, the
// all_to_all dispatcher, no expert overlap.
struct ExecutionVariant {
  // options.recipe, with the recipe's GEMM datatype and, for the recipes
  // Megatron-Bridge runs with FP8 parameter gathers (RecipeInfo::
  // fp8_param_gather), FP8 weights: a ranked mapping is the recipe as its
  // published configurations run it.
  QuantizationRecipe recipe = QuantizationRecipe::kNone;
  ExpertDispatcher dispatcher = ExpertDispatcher::kAllToAll;
  // parallelism.expert.overlap with delay_wgrad (Megatron-LM's
  // --overlap-moe-expert-parallel-comm --delay-wgrad-compute, which its
  // published MoE configurations pair).
  bool expert_overlap = false;
};

// ApplyExecutionVariant: sets the variant's fields of `mapping` (its
// recipe, GEMM and weight datatypes, its expert dispatcher and overlap).
void ApplyExecutionVariant(const ExecutionVariant& variant,
                           TrainingMapping& mapping);

// MappingProgram: the checked program the checker makes of the mapping's
// spec (TrainingSpecOf), for printing it, loading it into the calculator or
// running the full passes on it. The mapping must be one the checker
// accepts (the search's are, by construction: search_test).
TypedProgram MappingProgram(const TransformerModel& model, const System& system,
                            const TrainingMapping& mapping);

// MappingStepShape: MakeStepShape(MappingProgram(model, system, mapping))
// without building the program (no allocation); it points into `system`.
StepShape MappingStepShape(const TransformerModel& model, const System& system,
                           const TrainingMapping& mapping);

// MappingStepShapeWith: the same given `derived`, the mapping's values
// derived as the checker derives them at any microbatch size (so the search
// derives them once per choice: only the microbatch count depends on it,
// set here), and the model's accounting.
StepShape MappingStepShapeWith(DerivedValues derived,
                               const TransformerModel& model,
                               const System& system,
                               const TrainingMapping& mapping,
                               const AccountedModel& accounted);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SEARCH_MAPPING_H_
