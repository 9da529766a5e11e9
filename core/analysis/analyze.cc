#include "core/analysis/analyze.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "core/base/format.h"
#include "core/base/status_macros.h"
#include "core/base/units.h"
#include "core/figures/figure_table.h"

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
      {"spec:parallelism.data.sharding", "derived:training"},
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

// A figure table row's formula ("" for a name the table lacks, which
// figure_table_test rules out).
const char* FormulaOfRow(const FigureRow* row) {
  return row != nullptr ? row->formula : "";
}

// The routed tokens one local expert computes per microbatch (the rows of
// the lowering's MoeBlock_Experts_Up over the rank's experts/ep experts).
double TokensPerLocalExpert(const TypedProgram& program) {
  const TransformerModel& model = program.model();
  if (!model.moe.has_value() || model.moe->experts == 0) return 0;
  const DerivedValues& d = program.derived;
  const double tokens = static_cast<double>(program.batch().microbatch_size) *
                        static_cast<double>(model.seq_size) /
                        static_cast<double>(d.context) *
                        static_cast<double>(model.moe->topk) *
                        model.moe->capacity_factor *
                        static_cast<double>(d.expert_tensor) /
                        static_cast<double>(d.tensor);
  return tokens * static_cast<double>(d.expert) /
         static_cast<double>(model.moe->experts);
}

// The recipe's quantization kernels per rank per step (the plan's quantize
// times): the forward and backward casts per microbatch (the forward again
// when the task is recomputed), the weights once per step; stage 0's own
// tasks `own_runs` times. Inference runs the forward casts alone.
struct QuantizationSum {
  double time = 0;
  std::vector<std::string> sources;
};
template <typename OnStage0>
QuantizationSum SumQuantization(const DistributedTaskIR& tasks,
                                const PortablePlanIR& plan, double block_runs,
                                double rank_blocks, double own_runs,
                                const OnStage0& on_stage0) {
  const bool training = tasks.training;
  QuantizationSum out;
  for (const Task& task : tasks.tasks) {
    const TaskPlan& tp = plan.tasks[static_cast<size_t>(task.id)];
    const double forward =
        tp.quantize_time[kFw] *
        (training && task.flags.recompute ? 2 : 1);
    const double per_microbatch =
        forward + (training ? tp.quantize_time[kAgrad] : 0);
    const double per_step = training ? tp.quantize_time[kOptim] : 0;
    if (per_microbatch == 0 && per_step == 0) continue;
    if (task.placement == Placement::kEveryBlock) {
      out.time += task.share * (block_runs * per_microbatch +
                                rank_blocks * per_step);
    } else if (on_stage0(task)) {
      out.time += own_runs * per_microbatch + per_step;
    } else {
      continue;
    }
    out.sources.push_back(absl::StrCat("plan:", task.id));
  }
  out.sources.insert(out.sources.end(),
                     {"spec:options.recipe", "derived:blocks_per_stage",
                      "derived:stages_per_rank", "derived:microbatches"});
  return out;
}

// What the per-rank figures read of a step, converted once.
struct RankShape {
  const StepShape& s;
  double m, v, bpp;
  // The blocks whose state the rank holds (dualpipe: two stages').
  double rank_blocks;
  // A dualpipe end rank holds the first and the last stage (of the two
  // model copies) and runs each for the m / 2 microbatches of one direction.
  bool holds_both_ends;
  double own_runs;
  double base_blocks, edge_blocks;

  // Stage 0's figures: its blocks and its own tasks (the embedding; the
  // output layer too when p = 1 or with dualpipe), which run once per
  // microbatch (dualpipe: per microbatch of their direction, own_runs).
  bool OnStage0(const Task& task) const {
    return task.placement == Placement::kFirstStage ||
           (task.placement == Placement::kLastStage && holds_both_ends);
  }
};

RankShape RankShapeOf(const StepShape& s) {
  const double m = static_cast<double>(s.m);
  const double v = static_cast<double>(s.v);
  const double bpp = static_cast<double>(s.blocks_per_stage);
  return {s,
          m,
          v,
          bpp,
          static_cast<double>(s.stages_per_rank) * bpp,
          HoldsBothEnds(s),
          HasTwinStages(s) ? m / 2 : m,
          (static_cast<double>(s.blocks_per_chunk) - 1) * v * m,
          v * m};
}

// Appends each per-rank figure, in the order of BP_REPORT_FIGURES, with the
// figure table's formula and its lineage (pass `pass`).
class RankFigureSink {
 public:
  RankFigureSink(const char* pass, std::vector<NamedFigure>* figures,
                 std::vector<FigureLineage>* lineage)
      : pass_(pass), figures_(figures), lineage_(lineage) {}

  void Add(std::string name, double value, std::vector<std::string> sources) {
    FigureLineage f;
    f.figure = name;
    f.formula = FormulaOfRow(FindFigureRow(name));
    f.lineage.pass = pass_;
    f.lineage.sources = std::move(sources);
    lineage_->push_back(std::move(f));
    figures_->push_back({std::move(name), value});
  }

 private:
  const char* pass_;
  std::vector<NamedFigure>* figures_;
  std::vector<FigureLineage>* lineage_;
};

// TP traffic per rank per step, by collective; the expert all-to-all and
// the context K/V exchange per axis.
struct Traffic {
  std::map<CollectiveOp, double> tp_bytes;
  std::map<CollectiveOp, std::vector<std::string>> tp_sources;
  std::map<MeshAxis, double> axis_bytes;
  std::map<MeshAxis, double> axis_exposed;
  std::map<MeshAxis, double> axis_hidden;
  std::map<MeshAxis, std::vector<std::string>> axis_sources;
};

Traffic TrafficOf(const DistributedTaskIR& tasks, const PortablePlanIR& plan,
                  const RankShape& r) {
  Traffic t;
  for (const Task& task : tasks.tasks) {
    for (int phase = 0; phase < kNumCommPhases; ++phase) {
      if (!r.s.training && phase != kFwPhase) continue;
      if (phase == kRecommPhase && !task.flags.recommunicate) continue;
      const auto& base = task.collectives[phase][0];
      const auto& edge = task.collectives[phase][1];
      if (base.op != CollectiveOp::kNone && base.axis != MeshAxis::kTensor) {
        // Exchanges are alike in base and edge blocks.
        const double runs = task.placement == Placement::kEveryBlock
                                ? r.bpp * r.m * task.share
                                : (r.OnStage0(task) ? r.own_runs : 0);
        t.axis_bytes[base.axis] += runs * base.bytes;
        const TaskPlan& priced = plan.tasks[static_cast<size_t>(task.id)];
        t.axis_exposed[base.axis] += runs * priced.exposed_time[phase][0];
        t.axis_hidden[base.axis] +=
            runs * (priced.net_time[phase][0] - priced.exposed_time[phase][0]);
        auto& src = t.axis_sources[base.axis];
        std::string id = absl::StrCat("task:", task.id);
        if (src.empty() || src.back() != id) src.push_back(id);
        continue;
      }
      if (task.placement != Placement::kEveryBlock) {
        if (!r.OnStage0(task) || base.op == CollectiveOp::kNone) continue;
        t.tp_bytes[base.op] += r.own_runs * base.bytes;
      } else {
        if (base.op != CollectiveOp::kNone) {
          t.tp_bytes[base.op] += r.base_blocks * task.share * base.bytes;
        }
        if (edge.op != CollectiveOp::kNone) {
          t.tp_bytes[edge.op] += r.edge_blocks * task.share * edge.bytes;
        }
      }
      for (CollectiveOp op : {base.op, edge.op}) {
        if (op == CollectiveOp::kNone) continue;
        auto& src = t.tp_sources[op];
        std::string id = absl::StrCat("task:", task.id);
        if (src.empty() || src.back() != id) src.push_back(id);
      }
    }
  }
  return t;
}

// The TP collectives' bytes, and the expert and context exchanges' bytes
// and times.
void AddTensorAndExchangeFigures(Traffic& t, const TypedProgram& program,
                                 RankFigureSink& out) {
  for (CollectiveOp op : {CollectiveOp::kAllReduce,
                          CollectiveOp::kReduceScatter,
                          CollectiveOp::kAllGather}) {
    std::vector<std::string> sources = t.tp_sources[op];
    sources.insert(sources.end(), {"derived:blocks_per_chunk",
                                   "derived:virtual_stages",
                                   "derived:microbatches"});
    out.Add(absl::StrCat("tp_", CollectiveOpName(op), "_bytes"),
            t.tp_bytes[op], sources);
  }
  for (const auto& [axis, name] :
       {std::pair<MeshAxis, const char*>{MeshAxis::kExpert,
                                         "ep_all_to_all_bytes"},
        {MeshAxis::kContext, "cp_kv_bytes"}}) {
    std::vector<std::string> sources = t.axis_sources[axis];
    sources.insert(sources.end(),
                   {"derived:blocks_per_stage", "derived:microbatches"});
    out.Add(name, t.axis_bytes[axis], sources);
    const std::string exposed_name =
        absl::StrCat(absl::StripSuffix(name, "_bytes"), "_exposed_time");
    std::vector<std::string> exposed_sources = sources;
    for (std::string& source : exposed_sources) {
      if (absl::StartsWith(source, "task:")) source.replace(0, 4, "plan");
    }
    out.Add(exposed_name, t.axis_exposed[axis], exposed_sources);
    if (axis == MeshAxis::kExpert) {
      out.Add("ep_all_to_all_hidden_time", t.axis_hidden[axis],
              exposed_sources);
      out.Add("tokens_per_local_expert", TokensPerLocalExpert(program),
              {"spec:batch.microbatch_size", "spec:model.seq_size",
               "spec:parallelism.context.degree", "spec:model.moe.topk",
               "spec:model.moe.capacity_factor",
               "spec:parallelism.expert.tensor_degree",
               "spec:parallelism.tensor.degree", "spec:model.moe.experts",
               "spec:parallelism.expert.degree"});
    }
  }
}

// The pipeline's and the data-parallel collectives' bytes, then the
// breakdown by dimension (the page's communication table).
void AddPipelineAndDataFigures(Traffic& t, const IterationFigures& it,
                               const RankShape& r, RankFigureSink& out) {
  const StepShape& s = r.s;
  out.Add("pp_p2p_bytes",
          s.p > 1 ? r.m * r.v * (it.block_fw_pp_size + it.block_bw_pp_size)
                  : 0,
          {"iteration:block_fw_pp_size", "iteration:block_bw_pp_size",
           "derived:microbatches", "derived:virtual_stages"});
  const bool dp = s.training && s.d > 1;
  const std::vector<std::string> dp_sources = {
      "iteration:block_dp_size", "derived:blocks_per_stage",
      "derived:stages_per_rank", "spec:parallelism.data.sharding"};
  // The gradients' collectives move block_dp_grad_size (in
  // options.grad_reduce_datatype, or float32 under correction
  // fp32_gradient_reduction), the weights' block_dp_size.
  const std::vector<std::string> dp_grad_sources = {
      "iteration:block_dp_grad_size", "derived:blocks_per_stage",
      "derived:stages_per_rank", "spec:parallelism.data.sharding"};
  const double dp_all_reduce =
      dp && !s.optimizer_sharding ? r.rank_blocks * it.block_dp_grad_size : 0;
  const double dp_reduce_scatter =
      dp && s.optimizer_sharding ? r.rank_blocks * it.block_dp_grad_size : 0;
  out.Add("dp_all_reduce_bytes", dp_all_reduce, dp_grad_sources);
  out.Add("dp_reduce_scatter_bytes", dp_reduce_scatter, dp_grad_sources);
  // ZeRO-3 gathers the weights before each pass instead of after the step.
  const double after_step_gather =
      dp && s.optimizer_sharding && !s.shard_parameters
          ? r.rank_blocks * it.block_dp_size
          : 0;
  out.Add("dp_all_gather_bytes", after_step_gather, dp_sources);
  const double param_gather =
      dp && s.shard_parameters ? 2 * r.rank_blocks * it.block_dp_size : 0;
  out.Add("dp_param_all_gather_bytes", param_gather, dp_sources);
  // The breakdown by dimension (the page's communication table).
  out.Add("tp_comm_bytes",
          t.tp_bytes[CollectiveOp::kAllReduce] +
              t.tp_bytes[CollectiveOp::kReduceScatter] +
              t.tp_bytes[CollectiveOp::kAllGather],
          {"iteration:tp_all_reduce_bytes", "iteration:tp_reduce_scatter_bytes",
           "iteration:tp_all_gather_bytes"});
  out.Add("dp_comm_bytes",
          dp_all_reduce + dp_reduce_scatter + after_step_gather + param_gather,
          {"iteration:dp_all_reduce_bytes", "iteration:dp_reduce_scatter_bytes",
           "iteration:dp_all_gather_bytes",
           "iteration:dp_param_all_gather_bytes"});
  // tp_comm_exposed_time holds every collective of the blocks, the expert
  // and context exchanges included.
  out.Add("tp_collectives_exposed_time",
          std::max(0.0, it.tp_comm_exposed_time -
                            t.axis_exposed[MeshAxis::kExpert] -
                            t.axis_exposed[MeshAxis::kContext]),
          {"iteration:tp_comm_exposed_time",
           "iteration:ep_all_to_all_exposed_time",
           "iteration:cp_kv_exposed_time"});
}

// Work per rank per step: GEMM FLOPs (recomputed ones apart), the routed
// experts' parameters, all FLOPs.
void AddWorkFigures(const DistributedTaskIR& tasks, const PortablePlanIR& plan,
                    const RankShape& r, RankFigureSink& out) {
  const StepShape& s = r.s;
  double gemm = 0, recompute_gemm = 0, recompute_all = 0, stage_gemm = 0;
  std::vector<std::string> gemm_sources;
  double expert_weights = 0;
  std::vector<std::string> expert_sources;
  for (const Task& task : tasks.tasks) {
    const double fw = task.share * task.work[0].flops;
    const double bw =
        s.training ? task.share * (task.work[1].flops + task.work[2].flops)
                   : 0;
    if (task.expert_state && task.placement == Placement::kEveryBlock) {
      // Weight bytes per block (shared by the share of MoE blocks).
      expert_weights += task.share * task.footprint.weight;
      expert_sources.push_back(absl::StrCat("task:", task.id));
    }
    if (task.placement != Placement::kEveryBlock) {
      if (r.OnStage0(task) && IsGemm(task.kind)) {
        stage_gemm += fw + bw;
        gemm_sources.push_back(absl::StrCat("task:", task.id));
      }
      continue;
    }
    if (IsGemm(task.kind)) {
      gemm += fw + bw;
      gemm_sources.push_back(absl::StrCat("task:", task.id));
      if (s.training && task.flags.recompute) recompute_gemm += fw;
    }
    if (s.training && task.flags.recompute) recompute_all += fw;
  }
  gemm_sources.insert(gemm_sources.end(),
                      {"derived:blocks_per_stage", "derived:microbatches"});
  out.Add("gemm_flops_per_rank",
          r.bpp * r.m * gemm + r.own_runs * stage_gemm, gemm_sources);
  expert_sources.push_back("derived:blocks_per_stage");
  expert_sources.push_back("derived:stages_per_rank");
  out.Add("expert_parameters_per_rank",
          r.rank_blocks * expert_weights /
              static_cast<double>(s.weight_bytes_per_element),
          expert_sources);
  out.Add("recompute_gemm_flops_per_rank", r.bpp * r.m * recompute_gemm,
          gemm_sources);
  const BlockFigures& b = plan.block;
  // Stage 0's own work: the first stage's, and the last stage's when p = 1
  // or with dualpipe (each for the microbatches of one direction).
  double stage_flops = 0;
  for (const BlockFigures* x : {&plan.first_stage, &plan.last_stage}) {
    if (x == &plan.last_stage && !r.holds_both_ends) continue;
    stage_flops += r.own_runs * (x->block_fw_flops + x->block_agrad_flops +
                                 x->block_wgrad_flops) +
                   x->block_optim_flops;
  }
  out.Add("flops_per_rank",
          r.bpp * r.m *
                  (b.block_fw_flops + b.block_agrad_flops +
                   b.block_wgrad_flops + recompute_all) +
              r.rank_blocks * b.block_optim_flops + stage_flops,
          {"block:block_fw_flops", "block:block_agrad_flops",
           "block:block_wgrad_flops", "block:block_optim_flops",
           "derived:blocks_per_stage", "derived:stages_per_rank",
           "derived:microbatches"});
}

// Time per rank per step: the quantization kernels, the bubble's share, and
// the block's critical paths.
void AddTimeFigures(const DistributedTaskIR& tasks, const PortablePlanIR& plan,
                    const IterationFigures& it, const RankShape& r,
                    RankFigureSink& out) {
  const QuantizationSum quantization =
      SumQuantization(tasks, plan, r.bpp * r.m, r.rank_blocks, r.own_runs,
                      [&r](const Task& task) { return r.OnStage0(task); });
  out.Add("quantization_time_per_rank", quantization.time,
          quantization.sources);
  out.Add("bubble_fraction",
          it.total_time > 0 ? it.bubble_time / it.total_time : 0,
          {"iteration:bubble_time", "iteration:total_time"});
  for (int v_i = 0; v_i < kNumVariants; ++v_i) {
    const char* variant = BlockVariantName(static_cast<BlockVariant>(v_i));
    const std::vector<std::string> sources = {
        "block:block_fw_time", "block:block_re_time", "block:block_agrad_time",
        "block:block_wgrad_time",
        absl::StrCat("block:", variant, "block_fw_tp_time_exposed"),
        absl::StrCat("block:", variant, "block_agrad_tp_time_exposed"),
        absl::StrCat("block:", variant, "block_recomm_time_exposed")};
    out.Add(absl::StrCat("critical_path_", variant, "_forward"),
            plan.critical_path[v_i].forward, sources);
    out.Add(absl::StrCat("critical_path_", variant, "_backward"),
            plan.critical_path[v_i].backward, sources);
  }
}

// Whether the tasks of an MoE part are an exchange (whose network and
// exposed times are figures of their own) or compute (whose time is the
// tasks' processing time and their collectives' exposed time).
bool IsExchangePart(MoePart part) {
  switch (part) {
    case MoePart::kDispatch:
    case MoePart::kCombine:
      return true;
    case MoePart::kNone:
    case MoePart::kRouter:
    case MoePart::kPermutation:
    case MoePart::kExperts:
    case MoePart::kSharedExperts:
      return false;
  }
  return false;
}

// One MoE block's times of one part for one microbatch (the base block):
// forward and backward (activation + weight gradient, recompute excluded),
// each its tasks' processing time plus their collectives' exposed time, and
// the collectives' network and exposed times apart.
struct MoePartTimes {
  double fw = 0, bw = 0;
  double fw_net = 0, bw_net = 0;
  double fw_exposed = 0, bw_exposed = 0;
  std::vector<std::string> sources;  // the plans of its tasks
};

// The MoE blocks of the priced stage, and one MoE block's times by part
// (the tasks the lowering tagged with Task::moe_part), from the plan's
// per-task times; each task once, not weighed by its share of the stage's
// blocks. Only the full analysis computes them: the search never calls it.
void AddMoeBlockFigures(const DistributedTaskIR& tasks,
                        const PortablePlanIR& plan,
                        const TypedProgram& program, RankFigureSink& out) {
  out.Add("moe_blocks_per_stage",
          static_cast<double>(program.derived.stage_moe_blocks),
          {"derived:blocks_per_stage", "spec:model.moe.layer_pattern",
           "spec:parallelism.pipeline.stage_blocks"});
  std::array<MoePartTimes, kNumMoeParts> parts;
  for (const Task& task : tasks.tasks) {
    // MTP's MoE block runs on the last stage: not a block of the stage.
    if (task.placement != Placement::kEveryBlock ||
        task.moe_part == MoePart::kNone) {
      continue;
    }
    const TaskPlan& priced = plan.tasks[static_cast<size_t>(task.id)];
    MoePartTimes& part = parts[static_cast<size_t>(task.moe_part)];
    part.fw_net += priced.net_time[kFwPhase][kBase];
    part.fw_exposed += priced.exposed_time[kFwPhase][kBase];
    part.fw +=
        priced.processing_time[kFw] + priced.exposed_time[kFwPhase][kBase];
    if (tasks.training) {
      part.bw_net += priced.net_time[kBwPhase][kBase];
      part.bw_exposed += priced.exposed_time[kBwPhase][kBase];
      part.bw += priced.processing_time[kAgrad] +
                 priced.processing_time[kWgrad] +
                 priced.exposed_time[kBwPhase][kBase];
    }
    part.sources.push_back(absl::StrCat("plan:", task.id));
  }
  for (int i = 0; i < kNumMoeParts; ++i) {
    const auto kind = static_cast<MoePart>(i);
    if (kind == MoePart::kNone) continue;
    const MoePartTimes& part = parts[static_cast<size_t>(i)];
    // Which tasks a part has: the model's experts, the expert degree (no
    // exchange at ep = 1) and the profile (the permutations and the router
    // kernels are the refined profile's).
    std::vector<std::string> fw_sources = part.sources;
    fw_sources.insert(fw_sources.end(),
                      {"spec:model.moe", "spec:parallelism.expert",
                       "spec:options.profile"});
    std::vector<std::string> bw_sources = fw_sources;
    bw_sources.push_back("derived:training");
    const std::string name = absl::StrCat("moe_block_", MoePartName(kind));
    if (IsExchangePart(kind)) {
      out.Add(absl::StrCat(name, "_fw_net_time"), part.fw_net, fw_sources);
      out.Add(absl::StrCat(name, "_fw_exposed_time"), part.fw_exposed,
              fw_sources);
      out.Add(absl::StrCat(name, "_bw_net_time"), part.bw_net, bw_sources);
      out.Add(absl::StrCat(name, "_bw_exposed_time"), part.bw_exposed,
              bw_sources);
    } else {
      out.Add(absl::StrCat(name, "_fw_time"), part.fw, fw_sources);
      out.Add(absl::StrCat(name, "_bw_time"), part.bw, bw_sources);
    }
  }
}

// Under an explicit layout, which stage needs max_stage_mem_tier1_req
// (" (the first stage, 3 blocks)"): the first (the embedding's) or the
// last (the output layer's), each on its own blocks; "" for the even split,
// whose end stages hold the same blocks. (A middle stage, the busiest
// blocks alone, needs proc_mem_tier1_cap_req, named before.)
std::string MostLoadedStage(const MemoryFigures& m, const StepShape& s) {
  if (!HasExplicitLayout(s)) return "";
  if (m.max_stage_mem_tier1_req == m.first_stage_mem_tier1_req) {
    return absl::StrCat(" (the first stage, ", s.first_rank_blocks,
                        " blocks)");
  }
  return absl::StrCat(" (the last stage, ", s.last_rank_blocks, " blocks)");
}

// The per-rank figures of one step that Calculon does not report, computed
// from the task IR (traffic by collective, GEMM work), the block figures and
// the composed step; each with its lineage (pass `pass`).
void ComputeRankFigures(const DistributedTaskIR& tasks,
                        const PortablePlanIR& plan, const TypedProgram& program,
                        const StepShape& s,
                        const IterationFigures& it, const char* pass,
                        std::vector<NamedFigure>& figures,
                        std::vector<FigureLineage>& lineage) {
  RankFigureSink out(pass, &figures, &lineage);
  const RankShape r = RankShapeOf(s);
  Traffic traffic = TrafficOf(tasks, plan, r);
  AddTensorAndExchangeFigures(traffic, program, out);
  AddPipelineAndDataFigures(traffic, it, r, out);
  AddWorkFigures(tasks, plan, r, out);
  AddTimeFigures(tasks, plan, it, r, out);
  AddMoeBlockFigures(tasks, plan, program, out);
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
      {"stages_per_rank", {"spec:parallelism.pipeline.schedule"}},
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

bool FindIterationFigure(const IterationAnalysis& analysis,
                         const std::string& name, double* value) {
  bool found = false;
  auto find = [&](const char* n, double x) {
    if (!found && name == n) {
      *value = x;
      found = true;
    }
  };
  ForEachIterationFigure(analysis.figures, find);
  ForEachScheduleTerm(analysis.figures, find);
  for (const NamedFigure& f : analysis.rank_figures) {
    find(f.name.c_str(), f.value);
  }
  return found;
}

absl::StatusOr<IterationAnalysis> AnalyzeIteration::Run(
    const DistributedTaskIR& tasks, const PortablePlanIR& plan,
    const TypedProgram& program) const {
  IterationAnalysis analysis;
  analysis.schedule = PipelineScheduleName(program.pipeline().schedule);
  analysis.step = MakeStepShape(program);
  ComputeIteration(plan.block, StageExtras{plan.first_stage, plan.last_stage},
                   analysis.step, analysis.figures);
  analysis.lineage =
      Resolve(IterationFormulas(HasExplicitLayout(analysis.step)), kName, program);
  ComputeRankFigures(tasks, plan, program, analysis.step, analysis.figures,
                     kName,
                     analysis.rank_figures, analysis.lineage);
  absl::Status status;
  auto check = [&](const char* name, double value) {
    if (status.ok()) status = VerifyFinite("iteration analysis", name, value);
  };
  ForEachIterationFigure(analysis.figures, check);
  ForEachScheduleTerm(analysis.figures, check);
  for (const NamedFigure& f : analysis.rank_figures) {
    check(f.name.c_str(), f.value);
  }
  BP_RETURN_IF_ERROR(status);
  return analysis;
}

absl::StatusOr<MemoryAnalysis> AnalyzeMemory::Run(
    const PortablePlanIR& plan, const TypedProgram& program) const {
  MemoryAnalysis analysis;
  const StepShape step = MakeStepShape(program);
  ComputeMemory(plan.block, StageExtras{plan.first_stage, plan.last_stage}, step,
                analysis.figures);
  analysis.lineage =
      Resolve(MemoryFormulas(HasExplicitLayout(step)), kName, program);
  const MemoryFigures& m = analysis.figures;
  if (!MemoryTier1Fits(m)) {
    analysis.violations.push_back({"system.mem1.GiB", absl::StrCat(
        "system.mem1.GiB (", FormatDouble(program.system().mem1.gib),
        ") is less than proc_mem_tier1_cap_req (", GiB(m.proc_mem_tier1_cap_req),
        "): one rank needs weights ", GiB(m.weight_space), ", activations ",
        GiB(m.act_space), ", checkpoints ", GiB(m.act_checkpoint_size),
        ", weight gradients ", GiB(m.weight_grad_space), ", optimizer ",
        GiB(m.optimizer_space), ", activation gradients ",
        GiB(m.act_grad_space), " (before offload)",
        // The vocabulary's stage can be the most loaded (0 without one).
        m.max_stage_mem_tier1_req > m.proc_mem_tier1_cap_req
            ? absl::StrCat("; with the embedding and output layer the most "
                           "loaded stage", MostLoadedStage(m, step),
                           " needs max_stage_mem_tier1_req (",
                           GiB(m.max_stage_mem_tier1_req), ")")
            : "")});
  }
  if (!MemoryTier2Fits(m)) {
    analysis.violations.push_back({"system.mem2.GiB", absl::StrCat(
        "system.mem2.GiB (", FormatDouble(program.system().mem2.gib),
        ") is less than proc_mem_tier2_cap_req (",
        GiB(m.proc_mem_tier2_cap_req), ") needed by options.offload")});
  }
  absl::Status status;
  auto verify = [&](const char* name, double value) {
    if (status.ok()) status = VerifyFinite("memory analysis", name, value);
  };
  ForEachMemoryFigure(m, verify);
  ForEachMemoryTerm(m, verify);
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
                  " stages_per_rank=", s.stages_per_rank,
                  " bubble_reduction_blocks=", s.bubble_reduction_blocks,
                  " training=", s.training ? 1 : 0, "\n");
  ForEachIterationFigure(a.figures, [&](const char* name, double value) {
    absl::StrAppend(&out, name, "=", FormatDouble(value), "\n");
  });
  ForEachScheduleTerm(a.figures, [&](const char* name, double value) {
    absl::StrAppend(&out, name, "=", FormatDouble(value), "\n");
  });
  for (const NamedFigure& f : a.rank_figures) {
    absl::StrAppend(&out, f.name, "=", FormatDouble(f.value), "\n");
  }
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
  ForEachMemoryTerm(a.figures, [&](const char* name, double value) {
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

FormulaValues FormulaValuesOf(const PortablePlanIR& plan,
                              const IterationAnalysis& iteration,
                              const MemoryAnalysis& memory) {
  FormulaValues values;
  values.iteration = &iteration.figures;
  values.memory = &memory.figures;
  values.block = &plan.block;
  values.first_stage = &plan.first_stage;
  values.last_stage = &plan.last_stage;
  values.step = &iteration.step;
  return values;
}

}  // namespace blueprint
