#include "core/report/figure_info.h"

#include <map>

#include "core/analysis/figures.h"
#include "core/plan/plan_ir.h"

namespace blueprint {
namespace {

// A figure's unit and meaning, written once. "Block" figures are one
// transformer block's for one microbatch on one rank; step figures are one
// training (or inference) step of pipeline stage 0 (calculon/MODEL.md §4).
struct Row {
  const char* name;
  const char* unit;
  const char* meaning;
};

constexpr const char* s = kUnitSeconds;
constexpr const char* B = kUnitBytes;
constexpr const char* F = kUnitFlop;
constexpr const char* Bps = kUnitBytesPerSecond;
constexpr const char* frac = kUnitFraction;
constexpr const char* n = kUnitCount;

constexpr Row kRows[] = {
    // Block figures (core/plan/plan_ir.h).
    {"block_fw_flops", F, "forward FLOPs of one block and microbatch"},
    {"block_fw_flops_time", s, "forward compute time of one block"},
    {"block_fw_mem_accessed", B, "forward memory traffic of one block"},
    {"block_fw_mem_time", s, "forward memory time of one block"},
    {"block_fw_time", s, "forward processing time of one block"},
    {"baseblock_fw_tp_time", s, "forward TP communication time of a base block"},
    {"edgeblock_fw_tp_time", s, "forward TP communication time of an edge block"},
    {"baseblock_fw_tp_time_exposed", s,
     "forward TP communication time of a base block not hidden by overlap"},
    {"edgeblock_fw_tp_time_exposed", s,
     "forward TP communication time of an edge block not hidden by overlap"},
    {"block_re_flops", F, "recompute FLOPs of one block and microbatch"},
    {"block_re_flops_time", s, "recompute compute time of one block"},
    {"block_re_mem_accessed", B, "recompute memory traffic of one block"},
    {"block_re_mem_time", s, "recompute memory time of one block"},
    {"block_re_time", s, "recompute processing time of one block"},
    {"baseblock_recomm_time", s,
     "TP re-communication time of a base block (redone all-gathers)"},
    {"edgeblock_recomm_time", s,
     "TP re-communication time of an edge block (redone all-gathers)"},
    {"baseblock_recomm_time_exposed", s,
     "TP re-communication time of a base block not hidden by overlap"},
    {"edgeblock_recomm_time_exposed", s,
     "TP re-communication time of an edge block not hidden by overlap"},
    {"block_agrad_flops", F, "activation-gradient FLOPs of one block"},
    {"block_agrad_flops_time", s, "activation-gradient compute time of one block"},
    {"block_agrad_mem_accessed", B,
     "activation-gradient memory traffic of one block"},
    {"block_agrad_mem_time", s, "activation-gradient memory time of one block"},
    {"block_agrad_time", s, "activation-gradient processing time of one block"},
    {"baseblock_agrad_tp_time", s,
     "backward TP communication time of a base block"},
    {"edgeblock_agrad_tp_time", s,
     "backward TP communication time of an edge block"},
    {"baseblock_agrad_tp_time_exposed", s,
     "backward TP communication time of a base block not hidden by overlap"},
    {"edgeblock_agrad_tp_time_exposed", s,
     "backward TP communication time of an edge block not hidden by overlap"},
    {"block_wgrad_flops", F, "weight-gradient FLOPs of one block"},
    {"block_wgrad_flops_time", s, "weight-gradient compute time of one block"},
    {"block_wgrad_mem_accessed", B, "weight-gradient memory traffic of one block"},
    {"block_wgrad_mem_time", s, "weight-gradient memory time of one block"},
    {"block_wgrad_time", s, "weight-gradient processing time of one block"},
    {"block_optim_flops", F, "optimizer-step FLOPs of one block"},
    {"block_optim_flops_time", s, "optimizer-step compute time of one block"},
    {"block_optim_mem_accessed", B, "optimizer-step memory traffic of one block"},
    {"block_optim_mem_time", s, "optimizer-step memory time of one block"},
    {"block_optim_time", s, "optimizer-step processing time of one block"},
    {"baseblock_fw_tp_size", B, "forward TP message bytes of a base block"},
    {"edgeblock_fw_tp_size", B, "forward TP message bytes of an edge block"},
    {"baseblock_bw_tp_size", B, "backward TP message bytes of a base block"},
    {"edgeblock_bw_tp_size", B, "backward TP message bytes of an edge block"},
    {"baseblock_recomm_size", B, "TP re-communication bytes of a base block"},
    {"edgeblock_recomm_size", B, "TP re-communication bytes of an edge block"},
    {"tp_bw_overlap_req", Bps,
     "network bandwidth an overlapped TP linear needs to hide its tiles"},
    {"block_weight_space", B, "weights of one block"},
    {"block_act_working_space", B, "activations one block works on at once"},
    {"block_act_storage_space", B,
     "activations one block stores for its backward pass (0 with full "
     "recompute)"},
    {"block_act_checkpoint_size", B,
     "activation checkpoint of one block (full recompute)"},
    {"block_weight_grad_space", B, "weight gradients of one block, sharded"},
    {"block_weight_grad_space_no_sharding", B,
     "weight gradients of one block in 4-byte precision, unsharded"},
    {"block_act_grad_space", B, "activation gradients of one block"},
    {"block_optimizer_space", B, "optimizer state of one block"},

    // Step figures (core/analysis/figures.h BP_ITERATION_FIGURES).
    {"block_fw_pp_size", B, "forward pipeline message bytes per chunk"},
    {"block_bw_pp_size", B, "backward pipeline message bytes per chunk"},
    {"block_dp_size", B, "DP communication bytes of one block"},
    {"dp_bw_overlap_req_chunk", Bps,
     "network bandwidth DP overlap needs to hide a chunk's communication"},
    {"dp_bw_overlap_req_tail", Bps,
     "network bandwidth DP overlap needs to hide the last chunk's "
     "communication"},
    {"fw_time", s, "forward time of the step"},
    {"bw_time", s, "backward (activation and weight gradient) time of the step"},
    {"optim_step_time", s, "optimizer-step time, once per step"},
    {"recompute_time", s, "activation recompute time of the step"},
    {"recomm_link_time", s, "TP re-communication time on the link"},
    {"recomm_exposed_time", s, "TP re-communication time not hidden"},
    {"bubble_time", s, "pipeline bubble: time stage 0 waits"},
    {"tp_comm_link_time", s, "TP communication time on the link"},
    {"pp_comm_link_time", s, "pipeline send/receive time on the link"},
    {"dp_comm_link_time", s, "DP communication time on the link"},
    {"tp_comm_exposed_time", s, "TP communication time not hidden by overlap"},
    {"pp_comm_exposed_time", s, "pipeline send/receive time not hidden"},
    {"dp_comm_exposed_time", s, "DP communication time not hidden by overlap"},
    {"fw_offload_exposed_time", s, "forward offload time not hidden"},
    {"bw_offload_exposed_time", s, "backward offload time not hidden"},
    {"total_time", s, "time of one step (iteration)"},
    {"act_offload_bw_req", Bps,
     "second-tier bandwidth activation offload needs to stay hidden"},
    {"weight_offload_bw_req", Bps,
     "second-tier bandwidth weight offload needs to stay hidden"},
    {"optim_offload_bw_req", Bps,
     "second-tier bandwidth optimizer offload needs to stay hidden"},
    {"offload_mem_bw_req", Bps,
     "second-tier bandwidth all offload together needs"},
    {"useful_flops", F,
     "useful FLOPs of one block and microbatch (recompute excluded; "
     "optimizer counted per microbatch, Calculon's quirk)"},
    {"compute_efficiency", frac,
     "ideal compute time over forward + backward + optimizer time"},
    {"system_efficiency", frac,
     "forward + backward + optimizer time over the step time"},
    {"total_efficiency", frac,
     "ideal compute time over the step time (MFU-like)"},
    {"sample_rate", kUnitSamplesPerSecond,
     "global batch size over the step time"},

    // Schedule terms (core/analysis/figures.h BP_SCHEDULE_TERMS).
    {"chunk_fw_time", s, "forward time of one chunk (blocks_per_chunk blocks)"},
    {"chunk_bw_time", s, "backward time of one chunk"},
    {"chunk_time", s, "forward + backward time of one chunk"},
    {"chunk_fw_pp_time", s, "forward pipeline send time of one chunk"},
    {"chunk_bw_pp_time", s, "backward pipeline send time of one chunk"},
    {"baseblock_fw_time", s, "forward time of a base block in the schedule"},
    {"edgeblock_fw_time", s,
     "forward time of an edge block in the schedule (with its pipeline send)"},
    {"baseblock_bw_time", s, "backward time of a base block in the schedule"},
    {"edgeblock_bw_time", s,
     "backward time of an edge block in the schedule (with its pipeline "
     "send)"},
    {"bubble_reduction_time", s,
     "bubble time saved by an uneven stage layout"},
    {"extra_interleaving_bubbles", n,
     "extra bubble chunks of interleaving when p does not divide the "
     "microbatches"},
    {"bubble_chunks", n, "chunks the bubble lasts"},
    {"chunk_bw_input_time", s,
     "backward time of one chunk without its weight-gradient GEMMs (T_B of "
     "the zero-bubble schedules)"},
    {"chunk_bw_weight_time", s,
     "weight-gradient GEMM time of one chunk (T_W): chunk_bw_time = "
     "chunk_bw_input_time + chunk_bw_weight_time"},
    {"chunk_fb_time", s,
     "DualPipe's F&B: one chunk's forward beside another microbatch's "
     "backward, each one's exposed communication hidden under the other's "
     "compute (dualpipe, dualpipe_v; 0 for the other schedules)"},
    {"fb_overlap_saving_time", s,
     "what the F&B overlap takes off the busiest stage's step (subtracted "
     "in total_time)"},
    {"peak_inflight_microbatches", n,
     "the most microbatches whose activations one stage holds at once, in "
     "whole-stage units (the memory analysis' factor)"},
    {"block_dp_time", s, "DP communication time of one block"},
    {"block_dp_grad_size", B,
     "bytes one block's DP gradient reduction moves (its gradients in "
     "options.grad_reduce_datatype or, null, in float32 with bfloat16 under "
     "the refined profile's fp32_gradient_reduction; else the weights' "
     "bytes)"},
    {"first_stage_microbatch_time", s,
     "the first stage's extra work per microbatch (input embedding)"},
    {"last_stage_microbatch_time", s,
     "the last stage's extra work per microbatch (final norm, output layer, "
     "loss)"},
    {"first_stage_extra_time", s, "the first stage's extra work per step"},
    {"last_stage_extra_time", s, "the last stage's extra work per step"},
    {"stage_imbalance_time", s,
     "what the first and last stage's extra work adds to the step (the "
     "slowest stage sets the pace)"},
    {"stage_extra_dp_time", s,
     "DP communication of the embedding and output layer's gradients"},
    {"embedding_sync_time", s,
     "all-reduce of tied embedding gradients between first and last stage"},
    {"twin_stage_sync_time", s,
     "dualpipe: all-reduce of each rank's gradients with its twin's (rank "
     "p - 1 - s holds the same two stages); 0 for the other schedules"},
    {"first_stage_time", s, "compute time of the first stage per step"},
    {"last_stage_time", s, "compute time of the last stage per step"},
    {"parameters_total", n, "parameters, as Megatron-LM counts them"},
    {"parameters_active", n,
     "parameters a token passes through, as Megatron-LM counts them"},
    {"model_flops_per_iteration", F,
     "model FLOPs of one global batch (Megatron-LM's definition)"},
    {"mfu", frac,
     "model FLOPs utilization: model FLOPs over step time x peak x ranks"},

    // Memory per rank (core/analysis/figures.h BP_MEMORY_FIGURES).
    {"weight_space_with_offload", B, "weights kept in tier 1 with offload"},
    {"act_space_with_offload", B, "activations kept in tier 1 with offload"},
    {"act_checkpoint_size_with_offload", B,
     "activation checkpoints kept in tier 1 with offload (null for "
     "inference)"},
    {"act_grad_space_with_offload", B,
     "activation gradients kept in tier 1 with offload"},
    {"weight_grad_space_with_offload", B,
     "weight gradients kept in tier 1 with offload"},
    {"optimizer_space_with_offload", B,
     "optimizer state kept in tier 1 with offload"},
    {"weight_space", B, "weights of the stage"},
    {"act_space", B, "activations stored by the stage"},
    {"act_checkpoint_size", B, "activation checkpoints (full recompute)"},
    {"act_grad_space", B, "activation gradients (one block)"},
    {"weight_grad_space", B, "weight gradients of the stage"},
    {"optimizer_space", B, "optimizer state of the stage"},
    {"proc_mem_tier1_cap_req", B, "tier-1 (HBM) capacity needed per rank"},
    {"proc_mem_tier2_cap_req", B, "tier-2 (offload) capacity needed per rank"},

    // Memory per stage (core/analysis/figures.h BP_MEMORY_TERMS).
    {"first_stage_weight_and_optimizer_bytes", B,
     "weights, gradients and optimizer state on a first-stage rank"},
    {"last_stage_weight_and_optimizer_bytes", B,
     "weights, gradients and optimizer state on a last-stage rank"},
    {"weight_and_optimizer_bytes", B,
     "weights, gradients and optimizer state on the most loaded rank"},
    {"first_stage_mem_tier1_req", B, "tier-1 capacity a first-stage rank needs"},
    {"last_stage_mem_tier1_req", B, "tier-1 capacity a last-stage rank needs"},
    {"max_stage_mem_tier1_req", B,
     "tier-1 capacity the most loaded stage needs"},

    // The report's own figures (core/report/report.cc).
    {"tp_all_reduce_bytes", B, "TP all-reduce bytes per rank per step"},
    {"tp_reduce_scatter_bytes", B, "TP reduce-scatter bytes per rank per step"},
    {"tp_all_gather_bytes", B, "TP all-gather bytes per rank per step"},
    {"ep_all_to_all_bytes", B,
     "MoE dispatch and combine all-to-all bytes per rank per step"},
    {"ep_all_to_all_exposed_time", s,
     "MoE all-to-all time per rank per step not hidden by compute"},
    {"cp_kv_bytes", B,
     "context-parallel K/V exchange bytes per rank per step"},
    {"cp_kv_exposed_time", s,
     "K/V exchange time per rank per step not hidden by attention"},
    {"pp_p2p_bytes", B, "pipeline send/receive bytes per rank per step"},
    {"dp_all_reduce_bytes", B, "DP all-reduce bytes per rank per step"},
    {"dp_reduce_scatter_bytes", B,
     "DP reduce-scatter bytes per rank per step (optimizer sharding)"},
    {"dp_all_gather_bytes", B,
     "DP all-gather bytes per rank per step (optimizer sharding)"},
    {"dp_param_all_gather_bytes", B,
     "ZeRO-3 parameter all-gather bytes per rank per step"},
    {"tp_comm_bytes", B, "TP bytes per rank per step, all collectives"},
    {"dp_comm_bytes", B, "DP bytes per rank per step, all collectives"},
    {"tp_collectives_exposed_time", s,
     "TP collectives' exposed time per step, without the expert and context "
     "exchanges"},
    {"gemm_flops_per_rank", F, "GEMM FLOPs per rank per step"},
    {"expert_parameters_per_rank", n,
     "routed-expert parameters a rank holds (most-MoE stage)"},
    {"recompute_gemm_flops_per_rank", F,
     "recomputed GEMM FLOPs per rank per step"},
    {"flops_per_rank", F, "all FLOPs per rank per step, recompute included"},
    {"bubble_fraction", frac, "bubble time over the step time"},
    {"critical_path_base_forward", s,
     "forward critical path of a base block (TP exposed time included)"},
    {"critical_path_base_backward", s,
     "backward critical path of a base block"},
    {"critical_path_edge_forward", s,
     "forward critical path of an edge block"},
    {"critical_path_edge_backward", s,
     "backward critical path of an edge block"},
    // The concrete scheduler's (core/pipeline/schedule_analysis.h
    // SimulatePipelineSchedule), when the shape is within its limits.
    {"simulated_bubble_time", s,
     "pipeline bubble of the simulated command timeline"},
    {"simulated_total_time", s,
     "total_time with the simulated bubble in place of bubble_time"},
};

// The group of every figure the core lists, in the order the report writes
// them (a later list wins: useful_flops is both a block and a step figure,
// and the report shows the step's).
std::map<std::string, std::string> DefinedGroups() {
  std::map<std::string, std::string> groups;
  ForEachBlockFigure(BlockFigures{}, [&](const char* name, double) {
    groups[name] = "block";
  });
  const IterationFigures iteration;
  ForEachIterationFigure(iteration, [&](const char* name, double) {
    groups[name] = "iteration";
  });
  ForEachMemoryFigure(MemoryFigures{}, [&](const char* name, double) {
    groups[name] = "memory";
  });
  ForEachMemoryTerm(MemoryFigures{}, [&](const char* name, double) {
    groups[name] = "memory";
  });
  ForEachScheduleTerm(iteration, [&](const char* name, double) {
    groups[name] = "schedule";
  });
  return groups;
}

}  // namespace

const std::vector<FigureInfo>& ReportFigureInfo() {
  static const auto* info = [] {
    const std::map<std::string, std::string> groups = DefinedGroups();
    auto* out = new std::vector<FigureInfo>;
    for (const Row& row : kRows) {
      const auto group = groups.find(row.name);
      // Figures no core list defines are the report's own (report.cc).
      out->push_back({row.name, row.unit,
                      group == groups.end() ? "report" : group->second,
                      row.meaning});
    }
    return out;
  }();
  return *info;
}

}  // namespace blueprint
