// PortablePlanIR: a DistributedTaskIR planned against a System. Per task and
// stage: flop time (matrix or vector engine, efficiency looked up by size),
// memory time, processing time; per task, phase and block variant: network
// time and exposed time of its TP collectives. Per block: the aggregate
// figures of Calculon's `_compute_block_stats` (BlockFigures) and the
// forward and backward critical paths of the base and edge block.
#ifndef BLUEPRINTING_CORE_PLAN_PLAN_IR_H_
#define BLUEPRINTING_CORE_PLAN_PLAN_IR_H_

#include <array>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/figures/figure_table.h"
#include "core/taskir/task_ir.h"

namespace blueprint {

// Per-microbatch, per-block figures, named exactly as Calculon's stats JSON
// (core/figures/figure_table.h BP_BLOCK_FIGURES).
struct BlockFigures {
#define BP_DECLARE_FIELD(name, ...) double name = 0;
  BP_BLOCK_FIGURES(BP_DECLARE_FIELD)
#undef BP_DECLARE_FIELD
  // useful FLOPs of one block and microbatch (fw, + agrad, wgrad, optim when
  // training); recompute FLOPs excluded.
  double useful_flops = 0;
};

// Calls f(name, value) for every block figure, in the canonical order.
template <typename F>
void ForEachBlockFigure(const BlockFigures& b, F&& f) {
#define BP_VISIT_FIELD(name, ...) f(#name, b.name);
  BP_BLOCK_FIGURES(BP_VISIT_FIELD)
#undef BP_VISIT_FIELD
  f("useful_flops", b.useful_flops);
}

// The per-microbatch work of the first and the last pipeline stage beyond
// their blocks (PortablePlanIR first_stage / last_stage); all 0 (the
// default) for a model without a vocabulary.
struct StageExtras {
  BlockFigures first;
  BlockFigures last;
};

struct TaskPlan {
  int32_t task_id = 0;
  std::array<double, kNumStages> flop_time{};
  std::array<double, kNumStages> mem_time{};
  std::array<double, kNumStages> processing_time{};
  // The recipe's quantization kernels (core/spec/recipes.h), included in
  // processing_time: forward (the input), agrad (the output gradient),
  // optim (the weights, once per step); 0 without a recipe.
  std::array<double, kNumStages> quantize_time{};
  // net_time[phase][variant], exposed_time[phase][variant]
  std::array<std::array<double, kNumVariants>, kNumCommPhases> net_time{};
  std::array<std::array<double, kNumVariants>, kNumCommPhases> exposed_time{};
  double required_bandwidth = 0;  // TP overlap: bytes/s to hide a tile
  Lineage lineage;
};

// The critical path of one block for one microbatch (TP exposed time
// included, PP and offload excluded: they are composed by the iteration
// analysis).
struct BlockCriticalPath {
  double forward = 0;
  double backward = 0;  // recompute + re-communication + agrad + wgrad + TP
};

struct PortablePlanIR {
  static constexpr const char* kFormat = "blueprinting.portable_plan_ir/1";
  std::vector<TaskPlan> tasks;
  BlockFigures block;
  // The same sums over the tasks the first and the last pipeline stage run
  // once per microbatch besides their blocks (embedding; final norm, output
  // layer, loss); all 0 for a model without a vocabulary.
  bool has_stage_tasks = false;
  BlockFigures first_stage;
  BlockFigures last_stage;
  std::array<BlockCriticalPath, kNumVariants> critical_path{};
  // Where each block figure comes from: the tasks and system parameters.
  Lineage block_lineage;
};

std::string ToText(const PortablePlanIR& plan);

// Invariants: one plan per task, in order, with lineage; no negative or NaN
// time; critical paths at least the compute time they contain.
absl::Status VerifyPlanIR(const PortablePlanIR& plan,
                          const DistributedTaskIR& tasks);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_PLAN_PLAN_IR_H_
