// Pass LowerTensorParallelBlock: TypedProgram -> DistributedTaskIR.
// Materializes one local TP block (attention then MLP) with Calculon's layer
// algebra (calculon/MODEL.md §3, §4.2-4.3): column-parallel QKV and first MLP
// linear, row-parallel attention output and second MLP linear, the f/g TP
// collectives (or their overlapped-linear forms), with every task's lineage.
#ifndef BLUEPRINTING_CORE_TASKIR_LOWER_H_
#define BLUEPRINTING_CORE_TASKIR_LOWER_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/spec/program.h"
#include "core/taskir/task_ir.h"

namespace blueprint {

// Where a lowering put the tasks that depend on the expert degrees (ep,
// etp) and on the context K/V exchange: each MoE block's routed experts
// (the dispatch, the experts' GEMMs and activation, the combine) and each
// attention's exchange, which Relower rebuilds. Filled by
// RunWithoutLineage; its callers only hand it to Relower.
struct RelowerSections {
  enum class Kind { kRoutedExperts, kContextExchange };
  struct Section {
    Kind kind = Kind::kRoutedExperts;
    int32_t first = 0;  // the section's tasks: [first, end)
    int32_t end = 0;
    // The tasks it reads: the router and the normed input, or the keys
    // and the values.
    std::array<int32_t, 2> inputs{};
    Placement placement = Placement::kEveryBlock;
    double share = 1;  // Task::share of its tasks
  };
  std::vector<Section> sections;
  // The GEMM work of the tasks outside the sections, which a relowering
  // keeps: its verification sums only the rebuilt tasks' own.
  GemmWork others;
};

class LowerTensorParallelBlock {
 public:
  static constexpr const char* kName = "LowerTensorParallelBlock";
  const char* name() const { return kName; }
  // Verifies the result before returning it.
  absl::StatusOr<DistributedTaskIR> Run(const TypedProgram& program) const;
  // The same tasks, names and numbers without their lineage, verified in
  // everything else: for the strategy search, which prices thousands of
  // blocks and prints none (recording lineage is half of a lowering's
  // cost). Never printed or planned: PlanPortable and the canonical text
  // need the lineage.
  absl::StatusOr<DistributedTaskIR> RunWithoutLineage(
      const TypedProgram& program) const;
  // The same into `ir`, replacing its contents and reusing its storage: the
  // search lowers every block into one IR, so that thousands of lowerings
  // do not each allocate (and the allocator return to the system) the
  // memory of a block's tasks. `sections`, when given, is where the tasks
  // Relower rebuilds are.
  absl::Status RunWithoutLineage(const TypedProgram& program,
                                 DistributedTaskIR& ir,
                                 RelowerSections* sections = nullptr) const;
  // RunWithoutLineage(program, ir) where `ir` already holds that of a
  // program that differs from `program` at most in its expert degrees (ep,
  // etp) and its context K/V exchange, with ep > 1 exactly when
  // `program`'s is, lowered with `sections` (the caller's promise; only ep,
  // tp, cp, the datatype, the MoE share and the rebuilt tasks' names and
  // count are checked): only the tasks that depend on them (the routed
  // experts' dispatch, GEMMs, activation and combine; the exchange) are
  // rebuilt and verified (the others were, with `ir`), and their ids are
  // put in `rebuilt`; nothing else of the block is built again. The search
  // lowers each block configuration for some 18 (ep, etp) pairs and both
  // exchanges; the result is the full lowering's, field for field
  // (block_table_test).
  absl::Status Relower(const TypedProgram& program,
                       const RelowerSections& sections, DistributedTaskIR& ir,
                       std::vector<int32_t>& rebuilt) const;
};

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_TASKIR_LOWER_H_
