// Pass PlanPortable: DistributedTaskIR + System -> PortablePlanIR.
// Prices every task of the block on the system (calculon/MODEL.md §4.1-4.4),
// reproducing Calculon's per-layer accounting and its quirks (§6), each named
// where it is applied.
#ifndef BLUEPRINTING_CORE_PLAN_PLAN_H_
#define BLUEPRINTING_CORE_PLAN_PLAN_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/plan/plan_ir.h"
#include "core/spec/program.h"
#include "core/spec/recipes.h"
#include "core/taskir/task_ir.h"

namespace blueprint {

// The footprint rules of PlanPortable's aggregation, shared with the
// strategy search's pricing (core/search/block_pricing.h), which sums the
// same footprints without planning: AddTaskFootprint adds one task's
// footprints, weighed by its share, to `b` (weights, activation working and
// stored space, and in training gradients and optimizer state);
// FinishBlockFootprint applies the rules after the sums (full recompute
// stores no activation but the checkpoint, MODEL.md §6.6).
void AddTaskFootprint(const Task& task, bool training, BlockFigures& b);
void FinishBlockFootprint(const TypedProgram& program, bool training,
                          BlockFigures& b);

// The expert-parallel peers of a rank whose share of the expert all-to-all
// on tier `expert_network` moves over the tier below (hardware.h
// ExpertLocalPeers), under correction kHierarchicalAllToAll; 1 without it.
int64_t ExpertLocalPeersOf(const TypedProgram& program,
                           int64_t expert_network);

// The bytes the recipe's quantization passes of `task` move (a linear
// layer whose GEMM runs in the recipe's datatype; zero otherwise, and
// without a recipe or correction kQuantizationPasses): the plan prices them
// (TaskPlan::quantize_time) and the report sums them.
QuantizationBytes TaskQuantizationBytes(const Task& task,
                                        const TypedProgram& program);

class PlanPortable {
 public:
  static constexpr const char* kName = "PlanPortable";
  const char* name() const { return kName; }
  // Verifies the input task IR before and the plan after.
  absl::StatusOr<PortablePlanIR> Run(const DistributedTaskIR& tasks,
                                     const TypedProgram& program) const;
};

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_PLAN_PLAN_H_
