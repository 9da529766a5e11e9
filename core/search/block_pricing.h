// Block pricing for the strategy search: the block figures PlanPortable
// gives a lowered block (core/plan/plan.cc), without its per-task plans,
// lineage and verification, which cost some 30 times the arithmetic. The
// search plans the same lowered block on many network tiers, and checks
// memory on many blocks it never times; these mirror PlanPortable's pricing
// (Calculon's layer getters and quirks, in its order of operations) for
// those uses, and block_table_test pins every figure bit for bit against
// the full pass.
//
// Example:
//   if (BlockPrices::Supports(tasks)) {
//     const StagedBlock footprint = FootprintFigures(tasks, program);
//     const BlockPrices prices(tasks, system, datatype);
//     StagedBlock b = prices.Plan(prices.PlanCompute(footprint), tp_net,
//                                 ep_net, cp_net, ep_net,
//                                 /*expert_local=*/1);
//   }
#ifndef BLUEPRINTING_CORE_SEARCH_BLOCK_PRICING_H_
#define BLUEPRINTING_CORE_SEARCH_BLOCK_PRICING_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/analysis/figures.h"
#include "core/plan/plan_ir.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "core/taskir/task_ir.h"

namespace blueprint {

// One block's figures and the first and last stage's extra work (plan IR
// first_stage / last_stage; 0 without a vocabulary), planned together.
struct StagedBlock {
  BlockFigures block;
  StageExtras extras;
};

// The figures a task of `placement` adds to (of a StagedBlock, const or
// not), as PlanPortable's Aggregate places them.
template <typename Staged>
auto& FiguresOf(Placement placement, Staged& staged) {
  switch (placement) {
    case Placement::kEveryBlock:
      return staged.block;
    case Placement::kFirstStage:
      return staged.extras.first;
    case Placement::kLastStage:
      return staged.extras.last;
  }
  return staged.block;
}

// The figures of PlanPortable's Aggregate that depend on the tasks'
// footprints alone (weights, activations, checkpoint, weight gradients,
// optimizer state: all ComputeMemory reads); every other figure is 0.
StagedBlock FootprintFigures(const DistributedTaskIR& tasks,
                             const TypedProgram& program);
// The same, given `prefix`: the sums AddFootprints(tasks, 0, prefix_end)
// gave, for these or the same tasks.
StagedBlock FootprintFigures(const DistributedTaskIR& tasks,
                             const TypedProgram& program,
                             const StagedBlock& prefix, size_t prefix_end);
// Adds the footprints of tasks [begin, end) to `out`, in task order, as
// FootprintFigures sums them (before the block's last terms).
void AddFootprints(const DistributedTaskIR& tasks, size_t begin, size_t end,
                   StagedBlock& out);

// Clears `v` and gives it room for `n` elements, and not for many more: an
// entry of the search's block table is reused for blocks lowered in full
// (some hundred tasks) and for variants (about ten), and keeping the larger
// room in every entry would make the table hold twice the memory it uses.
template <typename T>
void ClearForExactly(std::vector<T>& v, size_t n) {
  if (v.capacity() > 2 * n + 8) {
    std::vector<T>().swap(v);
  } else {
    v.clear();
  }
  v.reserve(n);
}

// A lowered block, kept for pricing: per task what PlanPortable reads of it
// and its tier-independent prices (no names, lineage or dependencies).
class BlockPrices {
 public:
  // Whether Plan prices every task of `tasks`: not a TP-overlapped linear,
  // whose tiling PlanPortable alone prices.
  static bool Supports(const DistributedTaskIR& tasks);

  BlockPrices(const DistributedTaskIR& tasks, const System& system,
              DataType datatype);
  // No prices: Reprice or RepriceFrom gives them.
  BlockPrices() = default;
  // Replaces these prices by those of `tasks`, keeping the storage (the
  // search's table reuses its entries from one tensor degree to the next).
  void Reprice(const DistributedTaskIR& tasks, const System& system,
               DataType datatype);
  // Replaces these prices by those of `tasks`, the block `base` prices but
  // for the tasks `ids` (increasing: Relower' rebuilt ones, the same
  // for every variant of `base`): only those are priced and kept here, the
  // others are read from `base` (from the prices it reads them from, if
  // it has any), which must outlive these unchanged. The (ep, etp)
  // variants of a block share one copy of their other tasks' prices.
  void RepriceFrom(const BlockPrices& base, const DistributedTaskIR& tasks,
                   const std::vector<int32_t>& ids, const System& system,
                   DataType datatype);

  // Plan's figures that do not depend on the tiers: the tasks' compute,
  // the recomputation and the footprint (from `footprint`,
  // FootprintFigures); every collective's size and time is 0.
  StagedBlock PlanCompute(const StagedBlock& footprint) const;
  // PlanPortable(tasks, program) with the TP collectives on `tensor_net`,
  // the expert all-to-all on `expert_net` (its share for `expert_local`
  // peers on `expert_fast_net`: plan.h ExpertLocalPeersOf, 1 for none) and
  // the context exchange on `context_net`: its block, first_stage and
  // last_stage figures, given `compute`, this block's PlanCompute (the
  // same on every tiers: only the collectives are priced here, and most
  // tasks have none).
  StagedBlock Plan(const StagedBlock& compute, const NetworkTier& tensor_net,
                   const NetworkTier& expert_net,
                   const NetworkTier& context_net,
                   const NetworkTier& expert_fast_net,
                   int64_t expert_local) const;

 private:
  enum class Kind : int8_t { kCompute, kTensorComm, kExchange };
  struct PricedTask {
    Kind kind = Kind::kCompute;
    Placement placement = Placement::kEveryBlock;
    bool recompute = false;
    bool recommunicate = false;
    int32_t overlapped_by = -1;  // an exchange's covering task
    int32_t first_collective = -1;  // into collectives_, kNumCommPhases *
                                    // kNumVariants of them; -1: none
    double share = 1;
    std::array<double, kNumStages> flops{};
    std::array<double, kNumStages> bytes{};
    std::array<double, kNumStages> flop_time{};
    std::array<double, kNumStages> mem_time{};
    // ProcessingTime of the two: the stage's time as compute.
    std::array<double, kNumStages> time{};
    // Bit s: stage s has some work (a nonzero flops, bytes or time; the
    // others would add +0 or -0 to sums that are +0 or positive).
    uint8_t working_stages = 0;
  };

  // The system's rates for one datatype, and the times of no work.
  struct Rates {
    const ProcessorRate* matrix;
    const ProcessorRate* vector;
    const MemoryTier* memory;
    ProcessingMode mode;
    double no_matrix_time, no_vector_time, no_memory_time;
  };
  static Rates RatesOf(const System& system, DataType datatype);
  // Appends the task's prices to tasks_, and its collectives to
  // collectives_ when it has any whose times or sizes count.
  void AddPrices(const Task& task, const Rates& rates);

  // Whether AddPrices keeps the collectives of `task`, and how many.
  static bool HasCollectives(const Task& task);
  static size_t CollectivesOf(const Task& task);
  // A task's processing time per stage as compute (0 for TPComm and
  // exchanges).
  static double Processing(const PricedTask& t, int stage) {
    return t.kind == Kind::kCompute ? t.time[stage] : 0.0;
  }
  // Calls f(task, its collectives' array) for the block's tasks [begin,
  // end) in order (end past the last: to the last).
  template <typename F>
  void ForEachTask(size_t begin, size_t end, F&& f) const;
  // The same for the tasks that have collectives (collectives_ holds
  // theirs), in task order.
  template <typename F>
  void ForEachCollectiveTask(F&& f) const;
  // Adds the compute of tasks [begin, end) to `out`, in task order.
  void AddCompute(size_t begin, size_t end, StagedBlock& out) const;
  // Adds the collectives' sizes and times on these tiers to `out`, in task
  // order.
  void AddCommunication(const NetworkTier& tensor_net,
                        const NetworkTier& expert_net,
                        const NetworkTier& context_net,
                        const NetworkTier& expert_fast_net,
                        int64_t expert_local, StagedBlock& out) const;

  // Task i's prices: one of the overrides, or base_'s.
  const PricedTask& TaskAt(size_t i) const;

  bool training_;
  // nullptr: tasks_ are every task's prices. Else base_ prices the block
  // and tasks_ are those of the tasks override_ids_ (increasing).
  const BlockPrices* base_ = nullptr;
  std::vector<int32_t> override_ids_;
  std::vector<PricedTask> tasks_;
  std::vector<Collective> collectives_;  // of tasks_
  // With base_ == nullptr: the tasks with collectives, increasing.
  std::vector<int32_t> collective_tasks_;
  // Of a block priced in full (base_ == nullptr), whose variants' overrides
  // start at task compute_prefix_end_: PlanCompute's sums over the tasks
  // before, which are the same in each variant and summed in the same
  // order (made by the first variant planned; SIZE_MAX: none). A cache of
  // these prices, which each search worker's table owns alone.
  mutable size_t compute_prefix_end_ = SIZE_MAX;
  // Made by a variant's PlanCompute in its root only: not inline, since
  // most BlockPrices are variants.
  mutable std::unique_ptr<StagedBlock> compute_prefix_;
};

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SEARCH_BLOCK_PRICING_H_
