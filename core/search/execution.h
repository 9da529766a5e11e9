// A ranked mapping of the strategy search as the rest of the project reads
// it: Calculon's 23-key execution (calculon.h CalculonExecution) plus
// ExecutionExtras, the dimensions Calculon's execution cannot say, turned
// into the mapping's spec, spec parts, checked program or step shape.
//
// Its own small header so that the block table (block_table.h), which
// lowers blocks through these specs, does not depend on the search that
// uses it (search.h).
//
// Example:
//   ExecutionExtras extras;
//   extras.context = 2;
//   const TypedProgram program =
//       ExecutionProgram(model, system, execution, extras);
#ifndef BLUEPRINTING_CORE_SEARCH_EXECUTION_H_
#define BLUEPRINTING_CORE_SEARCH_EXECUTION_H_

#include <cstdint>
#include <optional>

#include "core/adapters/calculon.h"
#include "core/analysis/figures.h"
#include "core/analysis/schedule.h"
#include "core/schedule/schedule_ir.h"
#include "core/spec/accounting.h"
#include "core/spec/derive.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"

namespace blueprint {

// The parts of a ranked mapping's spec that Calculon's execution cannot
// say: context and expert parallelism, the ZeRO stage, the precision
// accounting and the model profile. The defaults are Calculon's mapping.
struct ExecutionExtras {
  int64_t context = 1;  // cp
  int64_t context_net = 0;
  ContextExchange context_exchange = ContextExchange::kRing;
  int64_t expert = 1;         // ep
  int64_t expert_tensor = 0;  // etp; 0: the tensor degree
  int64_t expert_net = 0;
  // The ZeRO stage over all d ranks; kNone: the execution's
  // optimizer_sharding says (kOptimizer or kNone, Calculon's boolean).
  ShardingStage sharding = ShardingStage::kNone;
  PrecisionAccounting precision = PrecisionAccounting::kCalculon;
  ModelProfile profile = ModelProfile::kCalculon;
  // A simulated schedule (gpipe, zb_h1, zb_h2, dualpipe_v, zb_v) in place of
  // Calculon's 1f1b or interleaved_1f1b; nullopt: Calculon's.
  std::optional<ScheduleKind> schedule;
};

// ExecutionSpec: the spec of a mapping, calculon.h SpecOf with the extras
// applied (a training execution's context, expert, sharding, precision and
// profile).
MappingSpec ExecutionSpec(const TransformerModel& model, const System& system,
                          const CalculonExecution& execution,
                          const ExecutionExtras& extras = {});

// ExecutionParts: the parts of a training mapping's spec besides the model
// and the system (calculon.h TrainingPartsOf with the extras applied).
// Allocation-free.
CalculonTrainingParts ExecutionParts(const CalculonExecution& execution,
                                     const ExecutionExtras& extras,
                                     const TransformerModel& model);

// ExecutionProgram: the mapping as the checked program the checker derives
// from its spec (ExecutionSpec), for loading it into the calculator or
// running the full passes on it.
TypedProgram ExecutionProgram(const TransformerModel& model,
                              const System& system,
                              const CalculonExecution& execution,
                              const ExecutionExtras& extras = {});

// ExecutionStepShape: MakeStepShape(ExecutionProgram(model, system,
// execution, extras)) without building the program (no allocation); it
// points into `system`.
StepShape ExecutionStepShape(const TransformerModel& model,
                             const System& system,
                             const CalculonExecution& execution,
                             const ExecutionExtras& extras = {});

// PartsStepShape: MakeStepShape of the training spec with these parts
// (ExecutionParts), given `derived`, their values derived as the checker
// derives them at any microbatch size (so the search derives them once per
// choice: only the microbatch count depends on it, set here), and the
// simulated schedule they hold (`schedule`: the spec's pipeline.schedule is
// made from it, so it is not derived again per mapping).
StepShape PartsStepShape(DerivedValues derived, const TransformerModel& model,
                         const System& system,
                         const CalculonTrainingParts& parts,
                         const AccountedModel& accounted,
                         std::optional<ScheduleKind> schedule);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SEARCH_EXECUTION_H_
