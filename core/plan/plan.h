// Pass PlanPortable: DistributedTaskIR + System -> PortablePlanIR.
// Prices every task of the block on the system (calculon/MODEL.md §4.1-4.4)
// through the pricing kernel the strategy search prices with too
// (block_pricing.h: Calculon's per-layer accounting and its quirks, §6,
// each named where it is applied), and records each task's plan and
// lineage.
#ifndef BLUEPRINTING_CORE_PLAN_PLAN_H_
#define BLUEPRINTING_CORE_PLAN_PLAN_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/plan/block_pricing.h"
#include "core/plan/plan_ir.h"
#include "core/spec/program.h"
#include "core/taskir/task_ir.h"

namespace blueprint {

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
