#include "core/plan/plan.h"

#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/base/units.h"
#include "core/plan/block_pricing.h"
#include "core/plan/hardware.h"

namespace blueprint {
namespace {

// The backward TP time on a block's critical path: the exposed time.
double BackwardTensorTime(const BlockFigures& b, bool edge) {
  return edge ? b.edgeblock_agrad_tp_time_exposed
              : b.baseblock_agrad_tp_time_exposed;
}

}  // namespace

namespace {

// The critical paths of the base and the edge block, from the block's
// figures.
void CriticalPaths(PortablePlanIR& plan) {
  const BlockFigures& b = plan.block;
  for (int v = 0; v < kNumVariants; ++v) {
    const bool edge = v == 1;
    BlockCriticalPath& path = plan.critical_path[v];
    path.forward = b.block_fw_time + (edge ? b.edgeblock_fw_tp_time_exposed
                                           : b.baseblock_fw_tp_time_exposed);
    path.backward = b.block_re_time +
                    (edge ? b.edgeblock_recomm_time_exposed
                          : b.baseblock_recomm_time_exposed) +
                    b.block_agrad_time + b.block_wgrad_time +
                    BackwardTensorTime(b, edge);
  }
}

Lineage TaskPlanLineage(const Task& task, const TypedProgram& program,
                        const TaskPlan& plan, const System& system) {
  Lineage lineage;
  lineage.pass = PlanPortable::kName;
  lineage.sources.push_back(absl::StrCat("task:", task.id));
  const ExecutionOptions& options = program.options();
  const DataType gemm = MatrixDatatype(task, program);
  // The blocks outside the recipe run its GEMMs at the datatype's rate too.
  const bool unquantized =
      UnquantizedBlockShare(program) != 0 && RunsInRecipe(task, program);
  for (int s = 0; s < kNumStages; ++s) {
    const StageWork& w = task.work[s];
    if (w.flops == 0 && w.bytes == 0) continue;
    const Processor& engine = w.matrix_engine ? system.matrix : system.vector;
    const DataType datatype = w.matrix_engine ? gemm : options.datatype;
    std::vector<DataType> datatypes = {datatype};
    if (unquantized && w.matrix_engine) datatypes.push_back(options.datatype);
    for (DataType used : datatypes) {
      auto rate = engine.rates.find(used);
      if (rate == engine.rates.end() || w.flops == 0) continue;
      lineage.sources.push_back(absl::StrCat(
          "system:", w.matrix_engine ? "matrix." : "vector.",
          DataTypeName(used), ".gflops_efficiency[",
          EfficiencyRowIndex(rate->second.gflops_efficiency, w.flops, kGFLOP),
          "]@", StageName(static_cast<Stage>(s))));
    }
    if (w.bytes != 0) {
      lineage.sources.push_back(absl::StrCat(
          "system:mem1.MB_efficiency[",
          EfficiencyRowIndex(system.mem1.mb_efficiency, w.bytes, kMB), "]@",
          StageName(static_cast<Stage>(s))));
    }
  }
  for (double q : plan.quantize_time) {
    if (q == 0) continue;
    lineage.sources.push_back("spec:options.recipe");
    break;
  }
  bool matrix_work = false;
  for (const StageWork& w : task.work) {
    matrix_work = matrix_work || (w.matrix_engine && w.flops != 0);
  }
  if (matrix_work && unquantized) {
    lineage.sources.push_back("spec:options.unquantized_first_blocks");
    lineage.sources.push_back("spec:options.unquantized_last_blocks");
  }
  bool networked = false;
  for (const auto& phase : plan.net_time) {
    for (double x : phase) networked = networked || x != 0;
  }
  if (networked) {
    const auto* exchange = std::get_if<ExchangeTask>(&task.kind);
    const int64_t tier =
        exchange == nullptr                       ? program.derived.tensor_network
        : exchange->axis == MeshAxis::kExpert     ? program.derived.expert_network
        : exchange->axis == MeshAxis::kContext    ? program.derived.context_network
                                                  : program.derived.tensor_network;
    lineage.sources.push_back(absl::StrCat("system:networks[", tier, "]"));
    if (exchange != nullptr && exchange->axis == MeshAxis::kExpert &&
        ExpertLocalPeersOf(program, tier) > 1) {
      lineage.sources.push_back(
          absl::StrCat("system:networks[", tier - 1, "]"));
    }
  }
  lineage.sources.push_back("system:processing_mode");
  return lineage;
}

}  // namespace

absl::StatusOr<PortablePlanIR> PlanPortable::Run(
    const DistributedTaskIR& tasks, const TypedProgram& program) const {
  BP_RETURN_IF_ERROR(VerifyTaskIR(tasks));
  const System& system = program.system();
  PortablePlanIR plan;
  plan.tasks.resize(tasks.tasks.size());
  // The pricing kernel (block_pricing.h), which the strategy search prices
  // its blocks with too, recording each task's times here.
  const StagedBlock staged =
      BlockPrices(tasks, program)
          .PlanTasks(FootprintFigures(tasks, program), BlockTiersOf(program),
                     &plan.tasks);
  plan.block = staged.block;
  plan.first_stage = staged.extras.first;
  plan.last_stage = staged.extras.last;
  for (size_t i = 0; i < tasks.tasks.size(); ++i) {
    const Task& task = tasks.tasks[i];
    plan.tasks[i].task_id = task.id;
    plan.tasks[i].lineage =
        TaskPlanLineage(task, program, plan.tasks[i], system);
    plan.has_stage_tasks =
        plan.has_stage_tasks || task.placement != Placement::kEveryBlock;
  }
  CriticalPaths(plan);
  plan.block_lineage.pass = kName;
  for (const Task& task : tasks.tasks) {
    if (task.placement != Placement::kEveryBlock) continue;
    plan.block_lineage.sources.push_back(absl::StrCat("plan:", task.id));
  }
  BP_RETURN_IF_ERROR(VerifyPlanIR(plan, tasks));
  return plan;
}

}  // namespace blueprint
