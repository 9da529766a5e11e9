#include "core/analysis/analyze.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/base/format.h"
#include "core/base/status_macros.h"

namespace blueprint {
namespace {

// Lineage tables: which nodes each figure is computed from. "$pp", "$dp",
// "$dtype" are replaced by the pipeline and data network tiers and the
// datatype of the program.
struct LineageRow {
  const char* figure;
  std::vector<const char*> sources;
};

const std::vector<LineageRow>& IterationLineageTable() {
  static const auto* table = new std::vector<LineageRow>{
      {"block_fw_pp_size",
       {"spec:batch.microbatch_size", "spec:model.seq_size",
        "spec:model.hidden", "spec:parallelism.tensor.communication",
        "spec:parallelism.pipeline.degree", "spec:options.datatype"}},
      {"block_bw_pp_size", {"iteration:block_fw_pp_size", "derived:training"}},
      {"block_dp_size", {"block:block_weight_space", "derived:training"}},
      {"dp_bw_overlap_req_chunk",
       {"iteration:block_dp_size", "iteration:chunk_bw_time",
        "block:block_agrad_flops_time", "system:networks[$dp]"}},
      {"dp_bw_overlap_req_tail",
       {"iteration:block_dp_size", "iteration:chunk_bw_time",
        "system:networks[$dp]"}},
      {"fw_time",
       {"block:block_fw_time", "derived:blocks_per_stage",
        "derived:microbatches"}},
      {"bw_time",
       {"block:block_agrad_time", "block:block_wgrad_time",
        "derived:blocks_per_stage", "derived:microbatches"}},
      {"optim_step_time",
       {"block:block_optim_time", "derived:blocks_per_stage"}},
      {"recompute_time",
       {"block:block_re_time", "derived:blocks_per_stage",
        "derived:microbatches"}},
      {"recomm_link_time",
       {"block:baseblock_recomm_time", "block:edgeblock_recomm_time",
        "derived:blocks_per_chunk", "derived:virtual_stages",
        "derived:microbatches"}},
      {"recomm_exposed_time",
       {"block:baseblock_recomm_time_exposed",
        "block:edgeblock_recomm_time_exposed", "derived:blocks_per_chunk",
        "derived:virtual_stages", "derived:microbatches"}},
      {"bubble_time",
       {"iteration:chunk_time", "iteration:extra_interleaving_bubbles",
        "iteration:bubble_reduction_time", "spec:parallelism.pipeline.degree",
        "spec:parallelism.pipeline.schedule"}},
      {"tp_comm_link_time",
       {"block:baseblock_fw_tp_time", "block:edgeblock_fw_tp_time",
        "block:baseblock_agrad_tp_time", "block:edgeblock_agrad_tp_time",
        "derived:blocks_per_chunk", "derived:virtual_stages",
        "derived:microbatches"}},
      {"pp_comm_link_time",
       {"iteration:chunk_fw_pp_time", "iteration:chunk_bw_pp_time",
        "derived:virtual_stages", "derived:microbatches"}},
      {"dp_comm_link_time",
       {"iteration:block_dp_time", "derived:blocks_per_stage"}},
      {"tp_comm_exposed_time",
       {"block:baseblock_fw_tp_time_exposed",
        "block:edgeblock_fw_tp_time_exposed",
        "block:baseblock_agrad_tp_time_exposed",
        "block:edgeblock_agrad_tp_time_exposed", "derived:blocks_per_chunk",
        "derived:virtual_stages", "derived:microbatches"}},
      {"pp_comm_exposed_time", {"iteration:pp_comm_link_time"}},
      {"dp_comm_exposed_time",
       {"iteration:block_dp_time", "iteration:chunk_bw_time",
        "iteration:chunk_bw_pp_time", "block:block_agrad_flops_time",
        "block:block_wgrad_flops_time", "block:block_re_flops_time",
        "block:block_optim_time", "spec:parallelism.data.overlap",
        "spec:parallelism.data.optimizer_sharding",
        "spec:parallelism.pipeline.degree", "system:networks[$dp]"}},
      {"fw_offload_exposed_time",
       {"iteration:baseblock_fw_time", "iteration:edgeblock_fw_time",
        "block:block_fw_mem_time", "block:block_weight_space",
        "block:block_act_storage_space", "spec:options.offload",
        "system:mem2"}},
      {"bw_offload_exposed_time",
       {"iteration:baseblock_bw_time", "iteration:edgeblock_bw_time",
        "block:block_agrad_mem_time", "block:block_wgrad_mem_time",
        "block:block_optimizer_space", "spec:options.offload",
        "system:mem2"}},
      {"total_time",
       {"iteration:fw_time", "iteration:bw_time", "iteration:optim_step_time",
        "iteration:fw_offload_exposed_time",
        "iteration:bw_offload_exposed_time", "iteration:recompute_time",
        "iteration:recomm_exposed_time", "iteration:bubble_time",
        "iteration:tp_comm_exposed_time", "iteration:pp_comm_exposed_time",
        "iteration:dp_comm_exposed_time"}},
      {"act_offload_bw_req",
       {"block:block_act_storage_space", "block:block_act_checkpoint_size",
        "iteration:baseblock_fw_time", "iteration:edgeblock_fw_time"}},
      {"weight_offload_bw_req",
       {"block:block_weight_space", "iteration:baseblock_fw_time",
        "iteration:edgeblock_fw_time"}},
      {"optim_offload_bw_req",
       {"block:block_weight_grad_space", "block:block_optimizer_space",
        "iteration:baseblock_bw_time", "iteration:edgeblock_bw_time"}},
      {"offload_mem_bw_req",
       {"iteration:act_offload_bw_req", "iteration:weight_offload_bw_req",
        "iteration:optim_offload_bw_req", "spec:options.offload"}},
      {"useful_flops", {"block:useful_flops"}},
      {"compute_efficiency",
       {"iteration:useful_flops", "iteration:fw_time", "iteration:bw_time",
        "iteration:optim_step_time", "derived:blocks_per_stage",
        "derived:microbatches", "system:matrix.$dtype.tflops"}},
      {"system_efficiency",
       {"iteration:fw_time", "iteration:bw_time", "iteration:optim_step_time",
        "iteration:total_time"}},
      {"total_efficiency",
       {"iteration:useful_flops", "iteration:total_time",
        "derived:blocks_per_stage", "derived:microbatches",
        "system:matrix.$dtype.tflops"}},
      {"sample_rate",
       {"iteration:total_time", "spec:batch.global_batch_size"}},
      {"chunk_fw_time",
       {"iteration:baseblock_fw_time", "iteration:edgeblock_fw_time",
        "derived:blocks_per_chunk"}},
      {"chunk_bw_time",
       {"iteration:baseblock_bw_time", "iteration:edgeblock_bw_time",
        "derived:blocks_per_chunk"}},
      {"chunk_time", {"iteration:chunk_fw_time", "iteration:chunk_bw_time"}},
      {"chunk_fw_pp_time",
       {"iteration:block_fw_pp_size", "system:networks[$pp]"}},
      {"chunk_bw_pp_time",
       {"iteration:block_bw_pp_size", "system:networks[$pp]"}},
      {"baseblock_fw_time",
       {"block:block_fw_time", "block:baseblock_fw_tp_time_exposed",
        "block:block_fw_mem_time", "spec:options.offload", "system:mem2"}},
      {"edgeblock_fw_time",
       {"block:block_fw_time", "block:edgeblock_fw_tp_time_exposed",
        "iteration:chunk_fw_pp_time", "block:block_fw_mem_time",
        "spec:options.offload", "system:mem2"}},
      {"baseblock_bw_time",
       {"block:block_re_time", "block:baseblock_recomm_time_exposed",
        "block:block_agrad_time", "block:block_wgrad_time",
        "block:baseblock_agrad_tp_time_exposed", "spec:options.offload",
        "system:mem2"}},
      {"edgeblock_bw_time",
       {"block:block_re_time", "block:edgeblock_recomm_time_exposed",
        "block:block_agrad_time", "block:block_wgrad_time",
        "block:edgeblock_agrad_tp_time_exposed", "iteration:chunk_bw_pp_time",
        "spec:options.offload", "system:mem2"}},
      {"bubble_reduction_time",
       {"derived:bubble_reduction_blocks", "iteration:baseblock_fw_time",
        "iteration:edgeblock_fw_time", "iteration:baseblock_bw_time",
        "iteration:edgeblock_bw_time"}},
      {"extra_interleaving_bubbles",
       {"derived:virtual_stages", "derived:microbatches",
        "spec:parallelism.pipeline.degree"}},
      {"bubble_chunks",
       {"iteration:extra_interleaving_bubbles",
        "spec:parallelism.pipeline.degree"}},
      {"block_dp_time",
       {"iteration:block_dp_size", "spec:parallelism.data.degree",
        "spec:parallelism.data.optimizer_sharding", "system:networks[$dp]"}},
  };
  return *table;
}

const std::vector<LineageRow>& MemoryLineageTable() {
  static const auto* table = new std::vector<LineageRow>{
      {"weight_space_with_offload", {"block:block_weight_space"}},
      {"act_space_with_offload",
       {"block:block_act_working_space", "block:block_act_storage_space",
        "spec:parallelism.recompute"}},
      {"act_checkpoint_size_with_offload",
       {"block:block_act_checkpoint_size", "derived:training"}},
      {"act_grad_space_with_offload", {"memory:act_grad_space"}},
      {"weight_grad_space_with_offload",
       {"block:block_weight_grad_space",
        "block:block_weight_grad_space_no_sharding"}},
      {"optimizer_space_with_offload", {"block:block_optimizer_space"}},
      {"weight_space", {"block:block_weight_space", "derived:blocks_per_stage"}},
      {"act_space",
       {"block:block_act_working_space", "block:block_act_storage_space",
        "derived:blocks_per_stage", "derived:microbatches",
        "derived:virtual_stages", "spec:parallelism.pipeline.degree",
        "spec:parallelism.recompute"}},
      {"act_checkpoint_size",
       {"block:block_act_checkpoint_size", "derived:blocks_per_stage",
        "derived:microbatches", "derived:virtual_stages",
        "spec:parallelism.pipeline.degree"}},
      {"act_grad_space", {"block:block_act_grad_space", "derived:training"}},
      {"weight_grad_space",
       {"block:block_weight_grad_space",
        "block:block_weight_grad_space_no_sharding",
        "derived:blocks_per_stage"}},
      {"optimizer_space",
       {"block:block_optimizer_space", "derived:blocks_per_stage"}},
      {"proc_mem_tier1_cap_req",
       {"memory:weight_space", "memory:act_space", "memory:act_checkpoint_size",
        "memory:act_grad_space", "memory:weight_grad_space",
        "memory:optimizer_space", "memory:weight_space_with_offload",
        "memory:act_space_with_offload",
        "memory:act_checkpoint_size_with_offload",
        "memory:weight_grad_space_with_offload",
        "memory:optimizer_space_with_offload", "spec:options.offload"}},
      {"proc_mem_tier2_cap_req",
       {"memory:weight_space", "memory:act_space", "memory:act_checkpoint_size",
        "memory:optimizer_space", "block:block_weight_grad_space",
        "spec:options.offload"}},
  };
  return *table;
}

std::vector<FigureLineage> Resolve(const std::vector<LineageRow>& table,
                                   const char* pass,
                                   const TypedProgram& program) {
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"$pp", absl::StrCat(program.derived.pipeline_network)},
      {"$dp", absl::StrCat(program.derived.data_network)},
      {"$dtype", DataTypeName(program.options().datatype)}};
  std::vector<FigureLineage> out;
  out.reserve(table.size());
  for (const LineageRow& row : table) {
    FigureLineage f;
    f.figure = row.figure;
    f.lineage.pass = pass;
    for (const char* source : row.sources) {
      f.lineage.sources.push_back(absl::StrReplaceAll(source, vars));
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string LineageText(const std::vector<FigureLineage>& lineage) {
  std::string out;
  for (const FigureLineage& f : lineage) {
    absl::StrAppend(&out, "lineage ", f.figure, " pass=", f.lineage.pass,
                    " from [", absl::StrJoin(f.lineage.sources, ","), "]\n");
  }
  return out;
}

// Every figure is a finite number >= 0: the checker's bounds guarantee it,
// so a violation is a bug (an internal error), never bad input.
absl::Status VerifyFinite(const char* what, const char* name, double value) {
  if (!std::isfinite(value) || value < 0) {
    return absl::InternalError(absl::StrCat(what, ": figure ", name, " is ",
                                            FormatDouble(value),
                                            ", not a finite number >= 0"));
  }
  return absl::OkStatus();
}

std::string GiB(double bytes) {
  return absl::StrFormat("%.3f GiB", bytes / 1073741824.0);
}

}  // namespace

std::vector<FigureLineage> DerivedLineage() {
  static const auto* table = new std::vector<LineageRow>{
      {"training", {"spec:kind"}},
      {"blocks_per_stage",
       {"spec:model.num_blocks", "spec:parallelism.pipeline.degree",
        "spec:parallelism.pipeline.stage_layout"}},
      {"blocks_per_chunk",
       {"derived:blocks_per_stage", "derived:virtual_stages"}},
      {"virtual_stages", {"spec:parallelism.pipeline.schedule"}},
      {"microbatches",
       {"spec:batch.global_batch_size", "spec:parallelism.data.degree",
        "spec:batch.microbatch_size"}},
      {"bubble_reduction_blocks",
       {"spec:model.num_blocks", "spec:parallelism.pipeline.degree",
        "spec:parallelism.pipeline.stage_layout"}},
  };
  std::vector<FigureLineage> out;
  for (const LineageRow& row : *table) {
    FigureLineage f;
    f.figure = row.figure;
    f.lineage.pass = "CheckSpec";
    for (const char* s : row.sources) f.lineage.sources.push_back(s);
    out.push_back(std::move(f));
  }
  return out;
}

absl::StatusOr<IterationAnalysis> AnalyzeIteration::Run(
    const PortablePlanIR& plan, const TypedProgram& program) const {
  IterationAnalysis analysis;
  analysis.schedule = PipelineScheduleName(program.pipeline().schedule);
  analysis.step = MakeStepShape(program);
  ComputeIteration(plan.block, analysis.step, analysis.figures);
  analysis.lineage = Resolve(IterationLineageTable(), kName, program);
  absl::Status status;
  auto check = [&](const char* name, double value) {
    if (status.ok()) status = VerifyFinite("iteration analysis", name, value);
  };
  ForEachIterationFigure(analysis.figures, check);
  ForEachScheduleTerm(analysis.figures, check);
  BP_RETURN_IF_ERROR(status);
  return analysis;
}

absl::StatusOr<MemoryAnalysis> AnalyzeMemory::Run(
    const PortablePlanIR& plan, const TypedProgram& program) const {
  MemoryAnalysis analysis;
  const StepShape step = MakeStepShape(program);
  ComputeMemory(plan.block, step, analysis.figures);
  analysis.lineage = Resolve(MemoryLineageTable(), kName, program);
  const MemoryFigures& m = analysis.figures;
  if (!MemoryTier1Fits(m)) {
    analysis.violations.push_back({"system.mem1.GiB", absl::StrCat(
        "system.mem1.GiB (", FormatDouble(program.system().mem1.gib),
        ") is less than proc_mem_tier1_cap_req (", GiB(m.proc_mem_tier1_cap_req),
        "): one rank needs weights ", GiB(m.weight_space), ", activations ",
        GiB(m.act_space), ", checkpoints ", GiB(m.act_checkpoint_size),
        ", weight gradients ", GiB(m.weight_grad_space), ", optimizer ",
        GiB(m.optimizer_space), ", activation gradients ",
        GiB(m.act_grad_space), " (before offload)")});
  }
  if (!MemoryTier2Fits(m)) {
    analysis.violations.push_back({"system.mem2.GiB", absl::StrCat(
        "system.mem2.GiB (", FormatDouble(program.system().mem2.gib),
        ") is less than proc_mem_tier2_cap_req (",
        GiB(m.proc_mem_tier2_cap_req), ") needed by options.offload")});
  }
  absl::Status status;
  ForEachMemoryFigure(m, [&](const char* name, double value) {
    if (status.ok()) status = VerifyFinite("memory analysis", name, value);
  });
  BP_RETURN_IF_ERROR(status);
  return analysis;
}

std::string ToText(const IterationAnalysis& a) {
  std::string out = absl::StrCat(IterationAnalysis::kFormat, "\n");
  const StepShape& s = a.step;
  absl::StrAppend(&out, "schedule ", a.schedule, " p=", s.p, " v=", s.v,
                  " microbatches=", s.m, " d=", s.d,
                  " blocks_per_stage=", s.blocks_per_stage,
                  " blocks_per_chunk=", s.blocks_per_chunk,
                  " bubble_reduction_blocks=", s.bubble_reduction_blocks,
                  " training=", s.training ? 1 : 0, "\n");
  ForEachIterationFigure(a.figures, [&](const char* name, double value) {
    absl::StrAppend(&out, name, "=", FormatDouble(value), "\n");
  });
  ForEachScheduleTerm(a.figures, [&](const char* name, double value) {
    absl::StrAppend(&out, name, "=", FormatDouble(value), "\n");
  });
  absl::StrAppend(&out, LineageText(a.lineage));
  return out;
}

std::string ToText(const MemoryAnalysis& a) {
  std::string out = absl::StrCat(MemoryAnalysis::kFormat, "\n");
  ForEachMemoryFigure(a.figures, [&](const char* name, double value) {
    if (std::string(name) == "act_checkpoint_size_with_offload" &&
        !a.figures.checkpoint_min_defined) {
      absl::StrAppend(&out, name, "=null\n");
      return;
    }
    absl::StrAppend(&out, name, "=", FormatDouble(value), "\n");
  });
  absl::StrAppend(&out, "tier1_capacity=", FormatDouble(a.figures.tier1_capacity),
                  "\ntier2_capacity=", FormatDouble(a.figures.tier2_capacity),
                  "\n");
  for (const FieldError& v : a.violations) {
    absl::StrAppend(&out, "violation ", v.message, "\n");
  }
  absl::StrAppend(&out, LineageText(a.lineage));
  return out;
}

}  // namespace blueprint
