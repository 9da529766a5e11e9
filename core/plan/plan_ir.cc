#include "core/plan/plan_ir.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/format.h"

namespace blueprint {

std::string ToText(const PortablePlanIR& plan) {
  std::string out = absl::StrCat(PortablePlanIR::kFormat, "\n");
  for (const TaskPlan& tp : plan.tasks) {
    absl::StrAppend(&out, "plan ", tp.task_id, "\n");
    for (int s = 0; s < kNumStages; ++s) {
      absl::StrAppend(&out, "  stage ", StageName(static_cast<Stage>(s)),
                      " flop_time=", FormatDouble(tp.flop_time[s]),
                      " mem_time=", FormatDouble(tp.mem_time[s]),
                      " processing_time=", FormatDouble(tp.processing_time[s]),
                      "\n");
    }
    for (int s = 0; s < kNumStages; ++s) {
      if (tp.quantize_time[s] == 0) continue;
      absl::StrAppend(&out, "  quantize ", StageName(static_cast<Stage>(s)),
                      " time=", FormatDouble(tp.quantize_time[s]), "\n");
    }
    for (int p = 0; p < kNumCommPhases; ++p) {
      for (int v = 0; v < kNumVariants; ++v) {
        if (tp.net_time[p][v] == 0 && tp.exposed_time[p][v] == 0) continue;
        absl::StrAppend(&out, "  net ", CommPhaseName(static_cast<CommPhase>(p)),
                        " ", BlockVariantName(static_cast<BlockVariant>(v)),
                        " time=", FormatDouble(tp.net_time[p][v]),
                        " exposed=", FormatDouble(tp.exposed_time[p][v]), "\n");
      }
    }
    if (tp.required_bandwidth != 0) {
      absl::StrAppend(&out, "  required_bandwidth=",
                      FormatDouble(tp.required_bandwidth), "\n");
    }
    absl::StrAppend(&out, "  lineage pass=", tp.lineage.pass, " from [",
                    absl::StrJoin(tp.lineage.sources, ","), "]\n");
  }
  absl::StrAppend(&out, "block\n");
  ForEachBlockFigure(plan.block, [&](const char* name, double value) {
    absl::StrAppend(&out, "  ", name, "=", FormatDouble(value), "\n");
  });
  for (int v = 0; v < kNumVariants; ++v) {
    absl::StrAppend(&out, "  critical_path ",
                    BlockVariantName(static_cast<BlockVariant>(v)),
                    " forward=", FormatDouble(plan.critical_path[v].forward),
                    " backward=", FormatDouble(plan.critical_path[v].backward),
                    "\n");
  }
  absl::StrAppend(&out, "  lineage pass=", plan.block_lineage.pass, " from [",
                  absl::StrJoin(plan.block_lineage.sources, ","), "]\n");
  // Printed only for a model with a vocabulary (Calculon's has none).
  if (plan.has_stage_tasks) {
    for (const auto& [name, figures] :
         {std::pair<const char*, const BlockFigures*>{"first_stage",
                                                      &plan.first_stage},
          {"last_stage", &plan.last_stage}}) {
      absl::StrAppend(&out, "stage ", name, "\n");
      ForEachBlockFigure(*figures, [&](const char* figure, double value) {
        if (value != 0) {
          absl::StrAppend(&out, "  ", figure, "=", FormatDouble(value), "\n");
        }
      });
    }
  }
  return out;
}

absl::Status VerifyPlanIR(const PortablePlanIR& plan,
                          const DistributedTaskIR& tasks) {
  if (plan.tasks.size() != tasks.tasks.size()) {
    return absl::InternalError(absl::StrCat(
        "plan IR: ", plan.tasks.size(), " task plans for ",
        tasks.tasks.size(), " tasks"));
  }
  auto bad = [](double x) { return std::isnan(x) || std::isinf(x) || x < 0; };
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const TaskPlan& tp = plan.tasks[i];
    const std::string where = absl::StrCat("plan IR: task ", i);
    if (tp.task_id != static_cast<int32_t>(i)) {
      return absl::InternalError(absl::StrCat(where, ": id ", tp.task_id,
                                              " must equal its index"));
    }
    if (tp.lineage.pass.empty() || tp.lineage.sources.empty()) {
      return absl::InternalError(absl::StrCat(where, ": missing lineage"));
    }
    for (int s = 0; s < kNumStages; ++s) {
      if (bad(tp.flop_time[s]) || bad(tp.mem_time[s]) ||
          bad(tp.processing_time[s]) || bad(tp.quantize_time[s])) {
        return absl::InternalError(absl::StrCat(
            where, ": negative or non-finite time in stage ",
            StageName(static_cast<Stage>(s))));
      }
    }
    for (int p = 0; p < kNumCommPhases; ++p) {
      for (int v = 0; v < kNumVariants; ++v) {
        if (bad(tp.net_time[p][v]) || bad(tp.exposed_time[p][v])) {
          return absl::InternalError(
              absl::StrCat(where, ": negative or non-finite network time"));
        }
      }
    }
  }
  bool bad_figure = false;
  std::string which;
  for (const BlockFigures* figures :
       {&plan.block, &plan.first_stage, &plan.last_stage}) {
    ForEachBlockFigure(*figures, [&](const char* name, double value) {
      // Storage may legitimately be negative in no case; flag NaN/inf only
      // for figures that can be negative by Calculon's subtraction.
      if (std::isnan(value) || std::isinf(value)) {
        bad_figure = true;
        which = name;
      }
    });
  }
  if (bad_figure) {
    return absl::InternalError(
        absl::StrCat("plan IR: block figure ", which, " is NaN or infinite"));
  }
  for (int v = 0; v < kNumVariants; ++v) {
    const BlockCriticalPath& path = plan.critical_path[v];
    if (path.forward < plan.block.block_fw_time || bad(path.forward) ||
        bad(path.backward)) {
      return absl::InternalError(absl::StrCat(
          "plan IR: critical path of the ",
          BlockVariantName(static_cast<BlockVariant>(v)),
          " block is shorter than its compute or not finite"));
    }
  }
  if (plan.block_lineage.pass.empty()) {
    return absl::InternalError("plan IR: block figures lack lineage");
  }
  return absl::OkStatus();
}

}  // namespace blueprint
