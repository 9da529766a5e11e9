// The figure table: every figure of the report JSON (`blueprint analyze`'s
// "figures"), one row each, written once. A row is
//
//   X(name, unit, label, meaning)
//
//   name     the figure's key in the report, and the field of the struct
//            that holds it (BlockFigures, IterationFigures, MemoryFigures);
//   unit     a FigureUnit enumerator (kSeconds, kBytes, ...);
//   label    what the page's summary calls it ("" when the summary does not
//            show it: the full table shows every figure by name);
//   meaning  one line.
//
// The list a row sits in is its group (FigureGroup) and says which layer
// computes it: BP_BLOCK_FIGURES the plan (core/plan/plan_ir.h),
// BP_ITERATION_FIGURES and BP_SCHEDULE_TERMS the iteration analysis,
// BP_MEMORY_FIGURES and BP_MEMORY_TERMS the memory analysis
// (core/analysis/figures.h), BP_REPORT_FIGURES the per-rank figures of
// AnalyzeIteration (core/analysis/analyze.cc) and the simulated schedule's
// (core/pipeline/schedule_analysis.h). Within a list, the order is the order
// of the canonical texts (changing it changes the goldens).
//
// Everything else keys on these rows: the structs' fields and ForEach*
// visitors, the formulas and sources (core/analysis/lineage.cc, checked at
// compile time against BP_ITERATION_FIGURES..BP_MEMORY_TERMS), `blueprint
// metadata` (core/api/metadata.h) and through it the page's units, labels,
// groups and meanings (web/metadata.js). figure_table_test checks that the
// table holds exactly the report's figures.
//
// Adding a figure: see core/README.md "Adding a figure".
#ifndef BLUEPRINTING_CORE_FIGURES_FIGURE_TABLE_H_
#define BLUEPRINTING_CORE_FIGURES_FIGURE_TABLE_H_

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace blueprint {

// The units a figure can have; FigureUnitName spells them in the metadata.
enum class FigureUnit {
  kSeconds,           // "s"
  kBytes,             // "bytes"
  kFlop,              // "FLOP"
  kBytesPerSecond,    // "bytes/s"
  kFraction,          // "fraction": 0..1 (may exceed 1)
  kCount,             // "count"
  kSamplesPerSecond,  // "samples/s"
};
const char* FigureUnitName(FigureUnit unit);

// Where a figure is defined (the list its row sits in; memory terms are
// memory figures).
enum class FigureGroup { kBlock, kIteration, kSchedule, kMemory, kReport };
const char* FigureGroupName(FigureGroup group);  // "block", ...

// clang-format off

// One transformer block's figures for one microbatch on one rank
// (PortablePlanIR's block; the first and last stage's extra work has the
// same fields). BlockFigures also holds useful_flops, which the report
// shows as the step figure of the same name.
#define BP_BLOCK_FIGURES(X)                                                    \
  X(block_fw_flops, kFlop, "", "forward FLOPs of one block and microbatch")    \
  X(block_fw_flops_time, kSeconds, "", "forward compute time of one block")    \
  X(block_fw_mem_accessed, kBytes, "",                                         \
    "forward memory traffic of one block")                                     \
  X(block_fw_mem_time, kSeconds, "", "forward memory time of one block")       \
  X(block_fw_time, kSeconds, "", "forward processing time of one block")       \
  X(baseblock_fw_tp_time, kSeconds, "",                                        \
    "forward TP communication time of a base block")                           \
  X(edgeblock_fw_tp_time, kSeconds, "",                                        \
    "forward TP communication time of an edge block")                          \
  X(baseblock_fw_tp_time_exposed, kSeconds, "",                                \
    "forward TP communication time of a base block not hidden by "             \
    "overlap")                                                                 \
  X(edgeblock_fw_tp_time_exposed, kSeconds, "",                                \
    "forward TP communication time of an edge block not hidden by "            \
    "overlap")                                                                 \
  X(block_re_flops, kFlop, "",                                                 \
    "recompute FLOPs of one block and microbatch")                             \
  X(block_re_flops_time, kSeconds, "",                                         \
    "recompute compute time of one block")                                     \
  X(block_re_mem_accessed, kBytes, "",                                         \
    "recompute memory traffic of one block")                                   \
  X(block_re_mem_time, kSeconds, "", "recompute memory time of one block")     \
  X(block_re_time, kSeconds, "", "recompute processing time of one block")     \
  X(baseblock_recomm_time, kSeconds, "",                                       \
    "TP re-communication time of a base block (redone all-gathers)")           \
  X(edgeblock_recomm_time, kSeconds, "",                                       \
    "TP re-communication time of an edge block (redone all-gathers)")          \
  X(baseblock_recomm_time_exposed, kSeconds, "",                               \
    "TP re-communication time of a base block not hidden by overlap")          \
  X(edgeblock_recomm_time_exposed, kSeconds, "",                               \
    "TP re-communication time of an edge block not hidden by overlap")         \
  X(block_agrad_flops, kFlop, "", "activation-gradient FLOPs of one block")    \
  X(block_agrad_flops_time, kSeconds, "",                                      \
    "activation-gradient compute time of one block")                           \
  X(block_agrad_mem_accessed, kBytes, "",                                      \
    "activation-gradient memory traffic of one block")                         \
  X(block_agrad_mem_time, kSeconds, "",                                        \
    "activation-gradient memory time of one block")                            \
  X(block_agrad_time, kSeconds, "",                                            \
    "activation-gradient processing time of one block")                        \
  X(baseblock_agrad_tp_time, kSeconds, "",                                     \
    "backward TP communication time of a base block")                          \
  X(edgeblock_agrad_tp_time, kSeconds, "",                                     \
    "backward TP communication time of an edge block")                         \
  X(baseblock_agrad_tp_time_exposed, kSeconds, "",                             \
    "backward TP communication time of a base block not hidden by "            \
    "overlap")                                                                 \
  X(edgeblock_agrad_tp_time_exposed, kSeconds, "",                             \
    "backward TP communication time of an edge block not hidden by "           \
    "overlap")                                                                 \
  X(block_wgrad_flops, kFlop, "", "weight-gradient FLOPs of one block")        \
  X(block_wgrad_flops_time, kSeconds, "",                                      \
    "weight-gradient compute time of one block")                               \
  X(block_wgrad_mem_accessed, kBytes, "",                                      \
    "weight-gradient memory traffic of one block")                             \
  X(block_wgrad_mem_time, kSeconds, "",                                        \
    "weight-gradient memory time of one block")                                \
  X(block_wgrad_time, kSeconds, "",                                            \
    "weight-gradient processing time of one block")                            \
  X(block_optim_flops, kFlop, "", "optimizer-step FLOPs of one block")         \
  X(block_optim_flops_time, kSeconds, "",                                      \
    "optimizer-step compute time of one block")                                \
  X(block_optim_mem_accessed, kBytes, "",                                      \
    "optimizer-step memory traffic of one block")                              \
  X(block_optim_mem_time, kSeconds, "",                                        \
    "optimizer-step memory time of one block")                                 \
  X(block_optim_time, kSeconds, "",                                            \
    "optimizer-step processing time of one block")                             \
  X(baseblock_fw_tp_size, kBytes, "",                                          \
    "forward TP message bytes of a base block")                                \
  X(edgeblock_fw_tp_size, kBytes, "",                                          \
    "forward TP message bytes of an edge block")                               \
  X(baseblock_bw_tp_size, kBytes, "",                                          \
    "backward TP message bytes of a base block")                               \
  X(edgeblock_bw_tp_size, kBytes, "",                                          \
    "backward TP message bytes of an edge block")                              \
  X(baseblock_recomm_size, kBytes, "",                                         \
    "TP re-communication bytes of a base block")                               \
  X(edgeblock_recomm_size, kBytes, "",                                         \
    "TP re-communication bytes of an edge block")                              \
  X(tp_bw_overlap_req, kBytesPerSecond, "",                                    \
    "network bandwidth an overlapped TP linear needs to hide its tiles")       \
  X(block_weight_space, kBytes, "", "weights of one block")                    \
  X(block_act_working_space, kBytes, "",                                       \
    "activations one block works on at once")                                  \
  X(block_act_storage_space, kBytes, "",                                       \
    "activations one block stores for its backward pass (0 with full "         \
    "recompute)")                                                              \
  X(block_act_checkpoint_size, kBytes, "",                                     \
    "activation checkpoint of one block (full recompute)")                     \
  X(block_weight_grad_space, kBytes, "",                                       \
    "weight gradients of one block, sharded")                                  \
  X(block_weight_grad_space_no_sharding, kBytes, "",                           \
    "weight gradients of one block in 4-byte precision, unsharded")            \
  X(block_act_grad_space, kBytes, "", "activation gradients of one block")     \
  X(block_optimizer_space, kBytes, "", "optimizer state of one block")

// The step of pipeline stage 0, named as Calculon's stats JSON
// (calculon/MODEL.md §4.5-4.11).
#define BP_ITERATION_FIGURES(X)                                                \
  X(block_fw_pp_size, kBytes, "",                                              \
    "forward pipeline message bytes per chunk")                                \
  X(block_bw_pp_size, kBytes, "",                                              \
    "backward pipeline message bytes per chunk")                               \
  X(block_dp_size, kBytes, "", "DP communication bytes of one block")          \
  X(dp_bw_overlap_req_chunk, kBytesPerSecond, "",                              \
    "network bandwidth DP overlap needs to hide a chunk's "                    \
    "communication")                                                           \
  X(dp_bw_overlap_req_tail, kBytesPerSecond, "",                               \
    "network bandwidth DP overlap needs to hide the last chunk's "             \
    "communication")                                                           \
  X(fw_time, kSeconds, "Forward time", "forward time of the step")             \
  X(bw_time, kSeconds, "Backward time",                                        \
    "backward (activation and weight gradient) time of the step")              \
  X(optim_step_time, kSeconds, "Optimizer step",                               \
    "optimizer-step time, once per step")                                      \
  X(recompute_time, kSeconds, "Recompute time",                                \
    "activation recompute time of the step")                                   \
  X(recomm_link_time, kSeconds, "", "TP re-communication time on the link")    \
  X(recomm_exposed_time, kSeconds, "",                                         \
    "TP re-communication time not hidden")                                     \
  X(bubble_time, kSeconds, "Bubble time",                                      \
    "pipeline bubble: time stage 0 waits")                                     \
  X(tp_comm_link_time, kSeconds, "", "TP communication time on the link")      \
  X(pp_comm_link_time, kSeconds, "",                                           \
    "pipeline send/receive time on the link")                                  \
  X(dp_comm_link_time, kSeconds, "", "DP communication time on the link")      \
  X(tp_comm_exposed_time, kSeconds, "TP exposed",                              \
    "TP communication time not hidden by overlap")                             \
  X(pp_comm_exposed_time, kSeconds, "PP exposed",                              \
    "pipeline send/receive time not hidden")                                   \
  X(dp_comm_exposed_time, kSeconds, "DP exposed",                              \
    "DP communication time not hidden by overlap")                             \
  X(fw_offload_exposed_time, kSeconds, "",                                     \
    "forward offload time not hidden")                                         \
  X(bw_offload_exposed_time, kSeconds, "",                                     \
    "backward offload time not hidden")                                        \
  X(total_time, kSeconds, "Iteration time", "time of one step (iteration)")    \
  X(act_offload_bw_req, kBytesPerSecond, "",                                   \
    "second-tier bandwidth activation offload needs to stay hidden")           \
  X(weight_offload_bw_req, kBytesPerSecond, "",                                \
    "second-tier bandwidth weight offload needs to stay hidden")               \
  X(optim_offload_bw_req, kBytesPerSecond, "",                                 \
    "second-tier bandwidth optimizer offload needs to stay hidden")            \
  X(offload_mem_bw_req, kBytesPerSecond, "",                                   \
    "second-tier bandwidth all offload together needs")                        \
  X(useful_flops, kFlop, "",                                                   \
    "useful FLOPs of one block and microbatch (recompute excluded; "           \
    "optimizer counted per microbatch, Calculon's quirk)")                     \
  X(compute_efficiency, kFraction, "Compute efficiency",                       \
    "ideal compute time over forward + backward + optimizer time")             \
  X(system_efficiency, kFraction, "System efficiency",                         \
    "forward + backward + optimizer time over the step time")                  \
  X(total_efficiency, kFraction, "Total efficiency",                           \
    "ideal compute time over the step time (MFU-like)")                        \
  X(sample_rate, kSamplesPerSecond, "Sample rate",                             \
    "global batch size over the step time")

// Composition terms that are not Calculon outputs but that the report and
// the schedule chart show, then the first and last stage's own work (the
// vocabulary: 0 for Calculon's model, which has none) and Megatron-LM's
// model accounting.
#define BP_SCHEDULE_TERMS(X)                                                   \
  X(chunk_fw_time, kSeconds, "Chunk forward",                                  \
    "forward time of one chunk (blocks_per_chunk blocks)")                     \
  X(chunk_bw_time, kSeconds, "Chunk backward", "backward time of one chunk")   \
  X(chunk_time, kSeconds, "", "forward + backward time of one chunk")          \
  X(chunk_fw_pp_time, kSeconds, "",                                            \
    "forward pipeline send time of one chunk")                                 \
  X(chunk_bw_pp_time, kSeconds, "",                                            \
    "backward pipeline send time of one chunk")                                \
  X(baseblock_fw_time, kSeconds, "",                                           \
    "forward time of a base block in the schedule")                            \
  X(edgeblock_fw_time, kSeconds, "",                                           \
    "forward time of an edge block in the schedule (with its pipeline "        \
    "send)")                                                                   \
  X(baseblock_bw_time, kSeconds, "",                                           \
    "backward time of a base block in the schedule")                           \
  X(edgeblock_bw_time, kSeconds, "",                                           \
    "backward time of an edge block in the schedule (with its pipeline "       \
    "send)")                                                                   \
  X(bubble_reduction_time, kSeconds, "Bubble reduction (uneven)",              \
    "bubble time saved by an uneven stage layout")                             \
  X(extra_interleaving_bubbles, kCount, "Extra interleaving bubbles",          \
    "extra bubble chunks of interleaving when p does not divide the "          \
    "microbatches")                                                            \
  X(bubble_chunks, kCount, "Bubble chunks", "chunks the bubble lasts")         \
  X(chunk_bw_input_time, kSeconds, "",                                         \
    "backward time of one chunk without its weight-gradient GEMMs (T_B "       \
    "of the zero-bubble schedules)")                                           \
  X(chunk_bw_weight_time, kSeconds, "",                                        \
    "weight-gradient GEMM time of one chunk (T_W): chunk_bw_time = "           \
    "chunk_bw_input_time + chunk_bw_weight_time")                              \
  X(chunk_fb_time, kSeconds, "",                                               \
    "DualPipe's F&B: one chunk's forward beside another microbatch's "         \
    "backward, each one's exposed communication hidden under the "             \
    "other's compute (dualpipe, dualpipe_v; 0 for the other schedules)")       \
  X(fb_overlap_saving_time, kSeconds, "",                                      \
    "what the F&B overlap takes off the busiest stage's step "                 \
    "(subtracted in total_time)")                                              \
  X(peak_inflight_microbatches, kCount, "",                                    \
    "the most microbatches whose activations one stage holds at once, "        \
    "in whole-stage units (the memory analysis' factor)")                      \
  X(block_dp_time, kSeconds, "", "DP communication time of one block")         \
  X(block_dp_grad_size, kBytes, "",                                            \
    "bytes one block's DP gradient reduction moves (its gradients in "         \
    "options.grad_reduce_datatype or, null, in float32 with bfloat16 "         \
    "under the refined profile's fp32_gradient_reduction; else the "           \
    "weights' bytes)")                                                         \
  X(first_stage_microbatch_time, kSeconds, "",                                 \
    "the first stage's extra work per microbatch (input embedding)")           \
  X(last_stage_microbatch_time, kSeconds, "",                                  \
    "the last stage's extra work per microbatch (final norm, output "          \
    "layer, loss)")                                                            \
  X(first_stage_extra_time, kSeconds, "",                                      \
    "the first stage's extra work per step")                                   \
  X(last_stage_extra_time, kSeconds, "",                                       \
    "the last stage's extra work per step")                                    \
  X(stage_imbalance_time, kSeconds, "Stage imbalance (vocabulary)",            \
    "what the first and last stage's extra work adds to the step (the "        \
    "slowest stage sets the pace)")                                            \
  X(stage_extra_dp_time, kSeconds, "",                                         \
    "DP communication of the embedding and output layer's gradients")          \
  X(embedding_sync_time, kSeconds, "",                                         \
    "all-reduce of tied embedding gradients between first and last "           \
    "stage")                                                                   \
  X(twin_stage_sync_time, kSeconds, "",                                        \
    "dualpipe: all-reduce of each rank's gradients with its twin's "           \
    "(rank p - 1 - s holds the same two stages); 0 for the other "             \
    "schedules")                                                               \
  X(first_stage_time, kSeconds, "First stage busy",                            \
    "compute time of the first stage per step")                                \
  X(last_stage_time, kSeconds, "Last stage busy",                              \
    "compute time of the last stage per step")                                 \
  X(parameters_total, kCount, "Parameters",                                    \
    "parameters, as Megatron-LM counts them")                                  \
  X(parameters_active, kCount, "",                                             \
    "parameters a token passes through, as Megatron-LM counts them")           \
  X(model_flops_per_iteration, kFlop, "Model FLOP per iteration",              \
    "model FLOPs of one global batch (Megatron-LM's definition)")              \
  X(mfu, kFraction, "MFU",                                                     \
    "model FLOPs utilization: model FLOPs over step time x peak x "            \
    "ranks")

// Memory per rank, named as Calculon's stats JSON.
#define BP_MEMORY_FIGURES(X)                                                   \
  X(weight_space_with_offload, kBytes, "",                                     \
    "weights kept in tier 1 with offload")                                     \
  X(act_space_with_offload, kBytes, "",                                        \
    "activations kept in tier 1 with offload")                                 \
  X(act_checkpoint_size_with_offload, kBytes, "",                              \
    "activation checkpoints kept in tier 1 with offload (null for "            \
    "inference)")                                                              \
  X(act_grad_space_with_offload, kBytes, "",                                   \
    "activation gradients kept in tier 1 with offload")                        \
  X(weight_grad_space_with_offload, kBytes, "",                                \
    "weight gradients kept in tier 1 with offload")                            \
  X(optimizer_space_with_offload, kBytes, "",                                  \
    "optimizer state kept in tier 1 with offload")                             \
  X(weight_space, kBytes, "Weights", "weights of the stage")                   \
  X(act_space, kBytes, "Activations", "activations stored by the stage")       \
  X(act_checkpoint_size, kBytes, "Checkpoints",                                \
    "activation checkpoints (full recompute)")                                 \
  X(act_grad_space, kBytes, "Activation gradients",                            \
    "activation gradients (one block)")                                        \
  X(weight_grad_space, kBytes, "Weight gradients",                             \
    "weight gradients of the stage")                                           \
  X(optimizer_space, kBytes, "Optimizer", "optimizer state of the stage")      \
  X(proc_mem_tier1_cap_req, kBytes, "Tier 1 (HBM) needed",                     \
    "tier-1 (HBM) capacity needed per rank")                                   \
  X(proc_mem_tier2_cap_req, kBytes, "Tier 2 needed",                           \
    "tier-2 (offload) capacity needed per rank")

// Memory figures that are not Calculon outputs: the weights, gradients and
// optimizer state (Megatron-LM's weight_and_optimizer memory) and the tier-1
// requirement of the first and the last stage, whose vocabulary work the
// blocks' figures (stage 0's, Calculon's) leave out.
#define BP_MEMORY_TERMS(X)                                                     \
  X(first_stage_weight_and_optimizer_bytes, kBytes, "",                        \
    "weights, gradients and optimizer state on a first-stage rank")            \
  X(last_stage_weight_and_optimizer_bytes, kBytes, "",                         \
    "weights, gradients and optimizer state on a last-stage rank")             \
  X(weight_and_optimizer_bytes, kBytes, "Weights + gradients + optimizer",     \
    "weights, gradients and optimizer state on the most loaded rank")          \
  X(first_stage_mem_tier1_req, kBytes, "",                                     \
    "tier-1 capacity a first-stage rank needs")                                \
  X(last_stage_mem_tier1_req, kBytes, "",                                      \
    "tier-1 capacity a last-stage rank needs")                                 \
  X(max_stage_mem_tier1_req, kBytes, "Most loaded stage, tier 1",              \
    "tier-1 capacity the most loaded stage needs")

// The report's own figures: the per-rank figures AnalyzeIteration computes
// from the task IR (IterationAnalysis::rank_figures, in this order; some
// names are made from an enum's, e.g. tp_<op>_bytes), then the concrete
// scheduler's (SimulatePipelineSchedule), present when the shape is within
// its limits.
#define BP_REPORT_FIGURES(X)                                                   \
  X(tp_all_reduce_bytes, kBytes, "TP all-reduce",                              \
    "TP all-reduce bytes per rank per step")                                   \
  X(tp_reduce_scatter_bytes, kBytes, "TP reduce-scatter",                      \
    "TP reduce-scatter bytes per rank per step")                               \
  X(tp_all_gather_bytes, kBytes, "TP all-gather",                              \
    "TP all-gather bytes per rank per step")                                   \
  X(ep_all_to_all_bytes, kBytes, "Expert all-to-all",                          \
    "MoE dispatch and combine all-to-all bytes per rank per step")             \
  X(ep_all_to_all_exposed_time, kSeconds, "",                                  \
    "MoE all-to-all time per rank per step not hidden by compute")             \
  X(cp_kv_bytes, kBytes, "Context K/V exchange",                               \
    "context-parallel K/V exchange bytes per rank per step")                   \
  X(cp_kv_exposed_time, kSeconds, "",                                          \
    "K/V exchange time per rank per step not hidden by attention")             \
  X(pp_p2p_bytes, kBytes, "PP send/receive",                                   \
    "pipeline send/receive bytes per rank per step")                           \
  X(dp_all_reduce_bytes, kBytes, "DP all-reduce",                              \
    "DP all-reduce bytes per rank per step")                                   \
  X(dp_reduce_scatter_bytes, kBytes, "DP reduce-scatter",                      \
    "DP reduce-scatter bytes per rank per step (optimizer sharding)")          \
  X(dp_all_gather_bytes, kBytes, "DP all-gather",                              \
    "DP all-gather bytes per rank per step (optimizer sharding)")              \
  X(dp_param_all_gather_bytes, kBytes, "ZeRO-3 parameter all-gather",          \
    "ZeRO-3 parameter all-gather bytes per rank per step")                     \
  X(tp_comm_bytes, kBytes, "",                                                 \
    "TP bytes per rank per step, all collectives")                             \
  X(dp_comm_bytes, kBytes, "",                                                 \
    "DP bytes per rank per step, all collectives")                             \
  X(tp_collectives_exposed_time, kSeconds, "",                                 \
    "TP collectives' exposed time per step, without the expert and "           \
    "context exchanges")                                                       \
  X(gemm_flops_per_rank, kFlop, "GEMM FLOP", "GEMM FLOPs per rank per step")   \
  X(expert_parameters_per_rank, kCount, "Expert parameters per rank",          \
    "routed-expert parameters a rank holds (most-MoE stage)")                  \
  X(recompute_gemm_flops_per_rank, kFlop, "Recompute GEMM FLOP",               \
    "recomputed GEMM FLOPs per rank per step")                                 \
  X(flops_per_rank, kFlop, "All FLOP",                                         \
    "all FLOPs per rank per step, recompute included")                         \
  X(bubble_fraction, kFraction, "Bubble fraction",                             \
    "bubble time over the step time")                                          \
  X(critical_path_base_forward, kSeconds, "Base block forward",                \
    "forward critical path of a base block (TP exposed time included)")        \
  X(critical_path_base_backward, kSeconds, "Base block backward",              \
    "backward critical path of a base block")                                  \
  X(critical_path_edge_forward, kSeconds, "Edge block forward",                \
    "forward critical path of an edge block")                                  \
  X(critical_path_edge_backward, kSeconds, "Edge block backward",              \
    "backward critical path of an edge block")                                 \
  X(simulated_bubble_time, kSeconds, "Bubble, simulated timeline",             \
    "pipeline bubble of the simulated command timeline")                       \
  X(simulated_total_time, kSeconds, "Iteration, simulated timeline",           \
    "total_time with the simulated bubble in place of bubble_time")

// clang-format on

// One row of the table, with its group.
struct FigureRow {
  const char* name;
  FigureUnit unit;
  FigureGroup group;
  const char* label;  // "" when the page's summary does not show it
  const char* meaning;
};

// Every row, list by list in the order above.
absl::Span<const FigureRow> FigureTable();

// The row of `name`, or nullptr.
const FigureRow* FindFigureRow(absl::string_view name);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_FIGURES_FIGURE_TABLE_H_
