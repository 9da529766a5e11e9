#include "core/analysis/analyze.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/base/format.h"
#include "core/base/status_macros.h"
#include "core/base/units.h"

namespace blueprint {
namespace {

// The lineage rows of the derived values: which nodes each is computed from.
struct LineageRow {
  const char* figure;
  std::vector<const char*> sources;
};

// The lineage of every row of a formula table (lineage.h), with "$pp",
// "$dp" and "$dtype" replaced by the pipeline and data network tiers and the
// datatype of the program, and each source once.
std::vector<FigureLineage> Resolve(absl::Span<const FigureFormula> table,
                                   const char* pass,
                                   const TypedProgram& program) {
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"$pp", absl::StrCat(program.derived.pipeline_network)},
      {"$dp", absl::StrCat(program.derived.data_network)},
      {"$dtype", DataTypeName(program.options().datatype)}};
  // An inference spec has parallelism.replica instead of parallelism.data
  // and no recompute policy: the training-only knobs are off because the
  // spec is inference (derived:training).
  const std::vector<std::pair<std::string, std::string>> inference = {
      {"spec:parallelism.data.degree", "spec:parallelism.replica.degree"},
      {"spec:parallelism.data.optimizer_sharding", "derived:training"},
      {"spec:parallelism.data.overlap", "derived:training"},
      {"spec:parallelism.recompute", "derived:training"}};
  std::vector<FigureLineage> out;
  out.reserve(table.size());
  for (const FigureFormula& row : table) {
    FigureLineage f;
    f.figure = row.figure;
    f.formula = row.formula;
    f.lineage.pass = pass;
    for (const std::string& source : SourcesOf(row)) {
      std::string resolved = absl::StrReplaceAll(source, vars);
      if (!program.derived.training) {
        for (const auto& [from, to] : inference) {
          if (resolved == from) resolved = to;
        }
      }
      std::vector<std::string>& sources = f.lineage.sources;
      if (std::find(sources.begin(), sources.end(), resolved) ==
          sources.end()) {
        sources.push_back(std::move(resolved));
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string LineageText(const std::vector<FigureLineage>& lineage) {
  std::string out;
  for (const FigureLineage& f : lineage) {
    absl::StrAppend(&out, "lineage ", f.figure, " = ", f.formula,
                    " pass=", f.lineage.pass, " from [",
                    absl::StrJoin(f.lineage.sources, ","), "]\n");
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
  return absl::StrFormat("%.3f GiB", bytes / kGiB);
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
  analysis.lineage = Resolve(IterationFormulas(), kName, program);
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
  analysis.lineage = Resolve(MemoryFormulas(), kName, program);
  const MemoryFigures& m = analysis.figures;
  if (m.proc_mem_tier1_cap_req > m.tier1_capacity) {
    analysis.violations.push_back({"system.mem1.GiB", absl::StrCat(
        "system.mem1.GiB (", FormatDouble(program.system().mem1.gib),
        ") is less than proc_mem_tier1_cap_req (", GiB(m.proc_mem_tier1_cap_req),
        "): one rank needs weights ", GiB(m.weight_space), ", activations ",
        GiB(m.act_space), ", checkpoints ", GiB(m.act_checkpoint_size),
        ", weight gradients ", GiB(m.weight_grad_space), ", optimizer ",
        GiB(m.optimizer_space), ", activation gradients ",
        GiB(m.act_grad_space), " (before offload)")});
  }
  if (m.proc_mem_tier2_cap_req > m.tier2_capacity) {
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
