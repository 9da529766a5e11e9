// The pricing kernel: a lowered block's figures on a system and network
// tiers (calculon/MODEL.md §4.1-4.4: Calculon's layer getters and quirks,
// in its order of operations), for PlanPortable (plan.h), which records
// each task's plan through a sink for its lineage, and for the strategy
// search, which records none and plans the same lowered block on many
// tiers: it prices each task once (BlockPrices, tier-independent), sums the
// compute once (PlanCompute), and per tiers adds the collectives alone
// (Plan). The footprints are summed apart (FootprintFigures), since the
// search checks memory on many blocks it never times.
//
// Example:
//   const BlockPrices prices(tasks, program);
//   std::vector<TaskPlan> plans(tasks.tasks.size());
//   StagedBlock b = prices.PlanTasks(FootprintFigures(tasks, program),
//                                    BlockTiersOf(program), &plans);
//   // The search, for a block Supports accepts: no plans recorded.
//   const BlockPrices priced(tasks, system, datatype);
//   StagedBlock c = priced.Plan(priced.PlanCompute(footprint), tp_net,
//                               ep_net, cp_net, ep_net, /*expert_local=*/1);
#ifndef BLUEPRINTING_CORE_PLAN_BLOCK_PRICING_H_
#define BLUEPRINTING_CORE_PLAN_BLOCK_PRICING_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/plan/plan_ir.h"
#include "core/plan/program_rules.h"
#include "core/spec/program.h"
#include "core/spec/recipes.h"
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
// not).
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

// The block's figures that depend on the tasks' footprints alone (weights, activations, checkpoint, weight gradients,
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

// The network tiers a block's collectives run on: the TP collectives on
// `tensor`, the expert all-to-all on `expert` (its share for
// `expert_local` peers on `expert_fast`: program_rules.h ExpertLocalPeersOf, 1 for
// none), the context exchange on `context`.
struct BlockTiers {
  const NetworkTier* tensor;
  const NetworkTier* expert;
  const NetworkTier* context;
  const NetworkTier* expert_fast;
  int64_t expert_local;
  // A node-deduplicating dispatcher (NodeDeduplicatedDispatch): the expert
  // all-to-all is DeduplicatedAllToAllTime of the routing's top-k of
  // `dedup_experts` experts; 0: a plain (or hierarchical) all-to-all.
  int64_t dedup_topk = 0;
  int64_t dedup_experts = 0;
  // Correction kRankDeduplicatedDispatch: the dispatcher sends a token to
  // each destination rank once (DeduplicatedAllToAllTime's per_rank).
  bool dedup_ranks = false;
  // Correction kExpertOverlap with parallelism.expert.overlap (combined
  // 1F1B): each pass's expert exchanges hide under the adjacent
  // microbatch's other pass (ExpertOverlapHidden); with delay_wgrad the
  // backward's weight gradients count as cover too.
  bool expert_overlap = false;
  bool delay_wgrad = false;
  // Correction kExpertOverlapProcessorUsage: the share of the processor the
  // hidden exchanges take from the compute that covers them (0: none).
  double expert_overlap_usage = 0;
};

// The tiers the program's derived values name (PlanPortable's).
BlockTiers BlockTiersOf(const TypedProgram& program);
// Sets the fields of `tiers` after its tiers (the dispatcher's
// deduplication, the expert overlap) as the program's expert parallelism
// and corrections say; its tiers must be set (the overlap's processor
// share reads the expert tiers). BlockTiersOf's, for the search's tables,
// which price one program's blocks on many tiers.
void SetExpertRules(const TypedProgram& program, BlockTiers& tiers);

// A lowered block, kept for pricing: per task what the pricing reads of it
// and its tier-independent prices (no names, lineage or dependencies).
class BlockPrices {
 public:
  // Whether PlanCompute and Plan price every task of `tasks`: not a
  // TP-overlapped linear, whose tiling depends on the tensor tier (PlanTasks
  // prices it).
  static bool Supports(const DistributedTaskIR& tasks);

  // Prices in the program's datatypes: GEMMs in its GEMM datatype, the
  // attention's batched matmuls as correction kAttentionInDatatype says.
  BlockPrices(const DistributedTaskIR& tasks, const TypedProgram& program);
  // Prices every matrix-engine task in `datatype` (the search's programs,
  // which have no separate GEMM datatype); `achievable_matmul`: whether
  // correction kAchievableMatmulRate is on.
  BlockPrices(const DistributedTaskIR& tasks, const System& system,
              DataType datatype, bool achievable_matmul);
  // No prices: Reprice or RepriceFrom gives them.
  BlockPrices() = default;
  // Replaces these prices by those of `tasks`, keeping the storage (the
  // search's table reuses its entries from one tensor degree to the next).
  void Reprice(const DistributedTaskIR& tasks, const System& system,
               DataType datatype, bool achievable_matmul);
  // The same in the program's datatypes and recipe, as the constructor of
  // a program prices (the search's blocks of a recipe).
  void Reprice(const DistributedTaskIR& tasks, const TypedProgram& program);
  // Replaces these prices by those of `tasks`, the block `base` prices but
  // for the tasks `ids` (increasing: Relower' rebuilt ones, the same
  // for every variant of `base`): only those are priced and kept here, the
  // others are read from `base` (from the prices it reads them from, if
  // it has any), which must outlive these unchanged. The (ep, etp)
  // variants of a block share one copy of their other tasks' prices.
  void RepriceFrom(const BlockPrices& base, const DistributedTaskIR& tasks,
                   const std::vector<int32_t>& ids, const System& system,
                   DataType datatype, bool achievable_matmul);
  // The same in the program's datatypes and recipe.
  void RepriceFrom(const BlockPrices& base, const DistributedTaskIR& tasks,
                   const std::vector<int32_t>& ids,
                   const TypedProgram& program);

  // The figures that do not depend on the tiers: the tasks' compute, the
  // recomputation and the footprint (from `footprint`, FootprintFigures);
  // every collective's size and time is 0. For a block Supports accepts.
  StagedBlock PlanCompute(const StagedBlock& footprint) const;
  // The block, first_stage and last_stage figures on these tiers, given
  // `compute`, this block's PlanCompute (the same on every tiers: only the
  // collectives are priced here, and most tasks have none). For a block
  // Supports accepts.
  StagedBlock Plan(const StagedBlock& compute, const NetworkTier& tensor_net,
                   const NetworkTier& expert_net,
                   const NetworkTier& context_net,
                   const NetworkTier& expert_fast_net,
                   int64_t expert_local) const;
  // The same on `tiers`, with its expert rules (SetExpertRules).
  StagedBlock Plan(const StagedBlock& compute, const BlockTiers& tiers) const;
  // Every figure on `tiers` at once, of any block (TP-overlapped linears
  // tiled on the tensor tier), given `footprint` (FootprintFigures); with
  // `plans` (one per task), each task's times are recorded there too
  // (TaskPlan but its task id and lineage). Plan(PlanCompute(footprint),
  // ...) bit for bit where both apply.
  StagedBlock PlanTasks(const StagedBlock& footprint, const BlockTiers& tiers,
                        std::vector<TaskPlan>* plans = nullptr) const;

 private:
  // The kinds with a compute time first (Processing reads one compare).
  enum class Kind : int8_t {
    kCompute,
    kOverlappedLinear,
    kTensorComm,
    kExchange
  };
  struct PricedTask {
    Kind kind = Kind::kCompute;
    Placement placement = Placement::kEveryBlock;
    bool recompute = false;
    bool recommunicate = false;
    bool pipe_overlap = false;  // an overlapped linear's TensorOverlap::kPipe
    bool expert_exchange = false;  // an exchange on the expert axis
    int32_t overlapped_by = -1;  // an exchange's covering task
    int32_t tiles = 0;           // an overlapped linear's
    int32_t first_collective = -1;  // into collectives_, kNumCommPhases *
                                    // kNumVariants of them; -1: none
    double share = 1;
    std::array<double, kNumStages> flops{};
    std::array<double, kNumStages> bytes{};
    std::array<double, kNumStages> flop_time{};
    std::array<double, kNumStages> mem_time{};
    // ProcessingTime of the two: the stage's time as compute.
    std::array<double, kNumStages> time{};
    // The recipe's casts (TaskPlan::quantize_time), included in `time`.
    std::array<double, kNumStages> quantize_time{};
    // Bit s: stage s has some work (a nonzero flops, bytes or time; the
    // others would add +0 or -0 to sums that are +0 or positive).
    uint8_t working_stages = 0;
  };
  // Per phase and variant, as TaskPlan's net_time and exposed_time.
  using PhaseTimes =
      std::array<std::array<double, kNumVariants>, kNumCommPhases>;
  using StageTimes = std::array<double, kNumStages>;
  // An overlapped linear's times on the tensor tier (MODEL.md §6.2-6.3).
  struct Tiling {
    StageTimes time{};
    StageTimes exposed{};
    double required_bandwidth = 0;
  };

  // The system's rates for the datatypes, and the times of no work.
  struct Rates {
    const ProcessorRate* matrix;
    const ProcessorRate* attention_matrix;  // a BatchMatMulTask's
    const ProcessorRate* vector;
    const MemoryTier* memory;
    ProcessingMode mode;
    double no_matrix_time, no_attention_time, no_vector_time, no_memory_time;
    // Correction kAchievableMatmulRate: the GEMM rate's bound in FLOP/s of
    // `matrix` and `attention_matrix` (AchievableThroughput; 0: none).
    double matrix_bound = 0, attention_bound = 0;
    // A program's (the plan's): its per-task datatype rules and recipe
    // (MatrixDatatype, TaskQuantizationBytes), priced at `program_matrix`
    // for a GEMM outside the recipe; null for the search's programs, whose
    // GEMMs all run in one datatype without a recipe.
    const TypedProgram* program = nullptr;
    const ProcessorRate* datatype_matrix = nullptr;
    double no_datatype_matrix_time = 0;
    // The program's UnquantizedBlockShare: that share of a recipe GEMM's
    // work runs at `datatype_matrix`.
    double unquantized_share = 0;
    double datatype_bound = 0;
  };
  static Rates RatesOf(const System& system, DataType matrix,
                       DataType attention, DataType vector,
                       bool achievable_matmul);
  static Rates RatesOf(const System& system, DataType datatype,
                       bool achievable_matmul) {
    return RatesOf(system, datatype, datatype, datatype, achievable_matmul);
  }
  // The program's rates (its GEMM datatype, recipe and blocks outside it).
  static Rates ProgramRates(const TypedProgram& program);
  // Reprice with these rates.
  void Reprice(const DistributedTaskIR& tasks, const Rates& rates);
  void RepriceFrom(const BlockPrices& base, const DistributedTaskIR& tasks,
                   const std::vector<int32_t>& ids, const Rates& rates);
  // Appends the task's prices to tasks_, and its collectives to
  // collectives_ when it has any whose times or sizes count.
  void AddPrices(const Task& task, const Rates& rates);

  // Whether AddPrices keeps the collectives of `task`, and how many.
  static bool HasCollectives(const Task& task);
  static size_t CollectivesOf(const Task& task);
  // A task's processing time per stage as compute (0 for TPComm and
  // exchanges; an overlapped linear's untiled).
  static double Processing(const PricedTask& t, int stage) {
    return t.kind <= Kind::kOverlappedLinear ? t.time[stage] : 0.0;
  }
  // Calls f(index, task, its collectives' array) for the block's tasks
  // [begin, end) in order (end past the last: to the last).
  template <typename F>
  void ForEachTask(size_t begin, size_t end, F&& f) const;
  // The same for the tasks that have collectives (collectives_ holds
  // theirs), in task order.
  template <typename F>
  void ForEachCollectiveTask(F&& f) const;
  // Adds the compute of tasks [begin, end) to `out`, in task order, each
  // task's times given to `sink`; `tiers` tile the overlapped linears
  // (nullptr: the block has none).
  template <typename Sink>
  void AddCompute(size_t begin, size_t end, const BlockTiers* tiers,
                  StagedBlock& out, Sink& sink) const;
  // Adds the collectives' sizes and times on these tiers to `out`, in task
  // order, each task's network and exposed times given to `sink`.
  template <typename Sink>
  void AddCommunication(const BlockTiers& tiers, StagedBlock& out,
                        Sink& sink) const;
  // A task's network times on these tiers.
  void NetTimes(const PricedTask& t, const Collective* collectives,
                const BlockTiers& tiers, PhaseTimes& net) const;
  // An overlapped linear's tiling, given its network times `net`.
  Tiling Tile(const PricedTask& t, const Collective* collectives,
              const BlockTiers& tiers, const PhaseTimes& net) const;
  // Task i's processing time at `stage` on these tiers (a covering task's:
  // tiled for an overlapped linear).
  double CoverTime(size_t i, int stage, const BlockTiers& tiers) const;
  // A task's exposed network times, given `net`: all of them, less what a
  // covering task hides, or as an overlapped linear's tiling says.
  PhaseTimes ExposedTimes(const PricedTask& t, const Collective* collectives,
                          const BlockTiers& tiers, const PhaseTimes& net) const;
  // Per pass and variant, the share of an expert exchange's exposed time
  // that correction kExpertOverlap leaves (tiers.expert_overlap), given the
  // block's compute sums; all 1 without it.
  PhaseTimes ExpertOverlapKept(const BlockTiers& tiers,
                               const BlockFigures& compute) const;

  // Task i's prices (one of the overrides, or base_'s), and its
  // collectives' array.
  const PricedTask& TaskAt(size_t i, const Collective** collectives) const;

  bool training_;
  // The vector engine's rate (an overlapped linear's reduction) and the
  // processing mode, for the tier-dependent times.
  const ProcessorRate* vector_rate_ = nullptr;
  ProcessingMode mode_ = ProcessingMode::kNoOverlap;
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

#endif  // BLUEPRINTING_CORE_PLAN_BLOCK_PRICING_H_
