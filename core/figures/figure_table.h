// The figure table: every figure of the report JSON (`blueprint analyze`'s
// "figures"), one row each, written once. A row is
//
//   X(name, unit, label, meaning, formula)
//
//   name     the figure's key in the report, and the field of the struct
//            that holds it (BlockFigures, IterationFigures, MemoryFigures);
//   unit     a FigureUnit enumerator (kSeconds, kBytes, ...);
//   label    what the page's summary calls it ("" when the summary does not
//            show it: the full table shows every figure by name);
//   meaning  one line;
//   formula  how it is computed, over the names of other figures and of the
//            step's terms (core/analysis/lineage.h says how a name resolves;
//            explain substitutes the values), or prose where the figure is a
//            sum over the task IR; "" for a block figure (the plan's sums
//            over the tasks, whose lineage lists them).
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
// visitors, the sources of the iteration and memory formulas
// (core/analysis/lineage.cc, checked at compile time against
// BP_ITERATION_FIGURES..BP_MEMORY_TERMS), the lineage of the per-rank and
// simulated figures, `blueprint metadata` (core/api/metadata.h) and through
// it the page's units, labels, groups and meanings (web/metadata.js).
// figure_table_test checks that the table holds exactly the report's
// figures.
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

// Formula fragments shared by several rows (string literal concatenation).
// They are expanded only where a row's formula is read (figure_table.cc,
// core/analysis/lineage.cc); every other X drops the formula unexpanded.

// A block's forward and backward times before offload (figures.cc
// ForwardBlockTimes, BackwardBlockTimes).
#define BP_FORMULA_FW_BASE "(block_fw_time + baseblock_fw_tp_time_exposed)"
#define BP_FORMULA_FW_EDGE \
  "(block_fw_time + edgeblock_fw_tp_time_exposed + chunk_fw_pp_time)"
#define BP_FORMULA_BW_BASE                                               \
  "(block_re_time + baseblock_recomm_time_exposed + block_agrad_time + " \
  "block_wgrad_time + baseblock_agrad_tp_time_exposed)"
#define BP_FORMULA_BW_EDGE                                               \
  "(block_re_time + edgeblock_recomm_time_exposed + block_agrad_time + " \
  "block_wgrad_time + edgeblock_agrad_tp_time_exposed + chunk_bw_pp_time)"
#define BP_FORMULA_BW_MEM "(block_agrad_mem_time + block_wgrad_mem_time)"
// The vocabulary's share of the end stages' memory terms (StageMemoryTerms
// in core/analysis/figures_memory.cc), beside their blocks'.
#define BP_FORMULA_FIRST_STAGE_STATE \
  "first_stage.block_weight_space + (training ? " \
  "first_stage.block_weight_grad_space + " \
  "first_stage.block_optimizer_space : 0) + (holds_both_ends ? " \
  "last_stage.block_weight_space + (training ? " \
  "last_stage.block_weight_grad_space + " \
  "last_stage.block_optimizer_space : 0) : 0)"
#define BP_FORMULA_LAST_STAGE_STATE \
  "last_stage.block_weight_space + (training ? " \
  "last_stage.block_weight_grad_space + " \
  "last_stage.block_optimizer_space : 0) + (holds_both_ends ? " \
  "first_stage.block_weight_space + (training ? " \
  "first_stage.block_weight_grad_space + " \
  "first_stage.block_optimizer_space : 0) : 0) + (embedding_copy ? " \
  "first_stage.block_weight_space + (training ? " \
  "first_stage.block_weight_grad_space + " \
  "first_stage.block_optimizer_space : 0) : 0)"
#define BP_FORMULA_FIRST_STAGE_TIER1 \
  "first_stage.block_weight_space + " \
  "first_stage.block_act_working_space + (training ? " \
  "first_stage.block_weight_grad_space + " \
  "first_stage.block_optimizer_space + " \
  "first_stage.block_act_storage_space + " \
  "first_stage.block_act_grad_space : 0) + (holds_both_ends ? " \
  "last_stage.block_weight_space + " \
  "last_stage.block_act_working_space + (training ? " \
  "last_stage.block_weight_grad_space + " \
  "last_stage.block_optimizer_space + " \
  "last_stage.block_act_storage_space + " \
  "last_stage.block_act_grad_space : 0) : 0)"
#define BP_FORMULA_LAST_STAGE_TIER1 \
  "last_stage.block_weight_space + " \
  "last_stage.block_act_working_space + (training ? " \
  "last_stage.block_weight_grad_space + " \
  "last_stage.block_optimizer_space + " \
  "last_stage.block_act_storage_space + " \
  "last_stage.block_act_grad_space : 0) + (holds_both_ends ? " \
  "first_stage.block_weight_space + " \
  "first_stage.block_act_working_space + (training ? " \
  "first_stage.block_weight_grad_space + " \
  "first_stage.block_optimizer_space + " \
  "first_stage.block_act_storage_space + " \
  "first_stage.block_act_grad_space : 0) : 0) + (embedding_copy ? " \
  "first_stage.block_weight_space + (training ? " \
  "first_stage.block_weight_grad_space + " \
  "first_stage.block_optimizer_space : 0) : 0)"

// Offloaded activations (ActivationOffloadBytes).
#define BP_FORMULA_ACT_OFFLOAD \
  "(full_recompute ? block_act_checkpoint_size : block_act_storage_space)"
// The bytes one block moves to or from tier 2 (ForwardOffloadBytes,
// BackwardOffloadBytes).
#define BP_FORMULA_FW_OFFLOAD                  \
  "max(offload_weights * block_weight_space, " \
  "offload_activations * " BP_FORMULA_ACT_OFFLOAD ")"
#define BP_FORMULA_BW_OFFLOAD                                    \
  "(offload_weights * block_weight_space + offload_activations " \
  "* " BP_FORMULA_ACT_OFFLOAD " + offload_optimizer * block_optimizer_space)"
// The time offload can hide in (OffloadRequirementTerms).
#define BP_FORMULA_FW_WINDOW \
  "(min(" BP_FORMULA_FW_BASE ", " BP_FORMULA_FW_EDGE ") - block_fw_mem_time)"
#define BP_FORMULA_BW_WINDOW                                                  \
  "(min(" BP_FORMULA_BW_BASE ", " BP_FORMULA_BW_EDGE ") - " BP_FORMULA_BW_MEM \
  ")"
// A per-block quantity over the step: bpc - 1 base blocks and one edge block
// per chunk, m * v chunks (PerStep).
#define BP_FORMULA_PER_STEP(base, edge) \
  "m * v * ((blocks_per_chunk - 1) * " base " + " edge ")"
// Microbatches in flight on stage 0 (ComputeMemory).
#define BP_FORMULA_IN_FLIGHT                                      \
  "(simulated_schedule ? simulated_in_flight(p, v, m) : "         \
  "scheduled_in_flight && training ? order_in_flight(p, v, m) : " \
  "v > 1 ? min(m, p) * (1 + (p - 1) / (v * p)) : min(m, p))"

// The TP bytes of one collective op per rank and step (tp_<op>_bytes).
#define BP_FORMULA_TP_OP_BYTES                                             \
  "sum over the block tasks' collectives of this op: (blocks_per_chunk - " \
  "1) * virtual_stages * microbatches * base bytes + virtual_stages * "    \
  "microbatches * edge bytes; plus microbatches (dualpipe: half) * bytes " \
  "of stage 0's own tasks (embedding; output layer when p = 1 or "         \
  "dualpipe)"

// A block's critical paths (critical_path_<base|edge>_<direction>).
#define BP_FORMULA_FORWARD_PATH \
  "the longest dependency path through the block's forward tasks (plan IR)"
#define BP_FORMULA_BACKWARD_PATH \
  "the longest dependency path through the block's backward tasks (plan IR)"

// The exposed communication of one chunk's forward and backward, which
// DualPipe's F&B hides under compute (figures.cc
// OverlappedForwardBackwardTime).
#define BP_FORMULA_CHUNK_COMM                                           \
  "((blocks_per_chunk - 1) * (baseblock_fw_tp_time_exposed + "          \
  "baseblock_recomm_time_exposed + baseblock_agrad_tp_time_exposed) + " \
  "edgeblock_fw_tp_time_exposed + edgeblock_recomm_time_exposed + "     \
  "edgeblock_agrad_tp_time_exposed + chunk_fw_pp_time + chunk_bw_pp_time)"

// One MoE block's time by part (moe_block_<part>_*; core/analysis/analyze.cc
// AddMoeBlockFigures): the tasks the lowering tags with the part
// (Task::moe_part), of the priced stage's base block, for one microbatch,
// each task once (a stage of dense and MoE blocks weighs its MoE tasks by
// their share in the block figures; these are one MoE block's).
#define BP_FORMULA_MOE_SCOPE                                                \
  " of one MoE block (the base block of the priced stage, one microbatch; " \
  "each task once, not weighed by share)"
#define BP_FORMULA_MOE_FW(tasks)                                         \
  "sum over " tasks " of the plan's fw processing_time + exposed_time of " \
  "their fw collectives" BP_FORMULA_MOE_SCOPE "; 0 without experts"
#define BP_FORMULA_MOE_BW(tasks)                                        \
  "training ? sum over " tasks " of the plan's agrad + wgrad "          \
  "processing_time + exposed_time of their bw collectives (backward = " \
  "activation gradient + weight gradient; recompute and "               \
  "re-communication excluded)" BP_FORMULA_MOE_SCOPE " : 0; 0 without "  \
  "experts"
// An exchange's time in the plan: `what` (BP_FORMULA_MOE_NET or _EXPOSED)
// of `pass` (fw, or bw: the all-to-all of the activation gradients).
#define BP_FORMULA_MOE_EXCHANGE(task, pass, what) \
  pass " " what " time of " task BP_FORMULA_MOE_SCOPE
#define BP_FORMULA_MOE_NET "net (the all-to-all on the expert tiers)"
#define BP_FORMULA_MOE_EXPOSED                                           \
  "exposed (the net time less what covering compute hides: the shared " \
  "experts beside it, combined 1F1B)"
#define BP_FORMULA_MOE_NO_EXCHANGE "; 0 without experts or with ep = 1"
#define BP_FORMULA_MOE_ROUTER \
  "the router tasks (MoeBlock_Router, _RouterKernels)"
#define BP_FORMULA_MOE_PERMUTATION                                   \
  "the permutation tasks (MoeBlock_PermuteTokens, _PermuteExperts, " \
  "_UnpermuteExperts, _UnpermuteTokens)"
#define BP_FORMULA_MOE_EXPERTS                                      \
  "the routed experts' tasks (MoeBlock_Experts_Up, the activation " \
  "MoeBlock_Experts_GatedActivation or _GeLU, MoeBlock_Experts_Down)"
#define BP_FORMULA_MOE_SHARED                                                 \
  "the shared experts' tasks (MoeBlock_Shared_F, _Mlp1, the activation, " \
  "_Mlp2, _G)"

// One transformer block's figures for one microbatch on one rank
// (PortablePlanIR's block; the first and last stage's extra work has the
// same fields). BlockFigures also holds useful_flops, which the report
// shows as the step figure of the same name.
#define BP_BLOCK_FIGURES(X)                                                   \
  X(block_fw_flops, kFlop, "", "forward FLOPs of one block and microbatch",   \
    "")                                                                       \
  X(block_fw_flops_time, kSeconds, "", "forward compute time of one block",   \
    "")                                                                       \
  X(block_fw_mem_accessed, kBytes, "",                                        \
    "forward memory traffic of one block", "")                                \
  X(block_fw_mem_time, kSeconds, "", "forward memory time of one block", "")  \
  X(block_fw_time, kSeconds, "", "forward processing time of one block", "")  \
  X(baseblock_fw_tp_time, kSeconds, "",                                       \
    "forward TP communication time of a base block", "")                      \
  X(edgeblock_fw_tp_time, kSeconds, "",                                       \
    "forward TP communication time of an edge block", "")                     \
  X(baseblock_fw_tp_time_exposed, kSeconds, "",                               \
    "forward TP communication time of a base block not hidden by overlap",    \
    "")                                                                       \
  X(edgeblock_fw_tp_time_exposed, kSeconds, "",                               \
    "forward TP communication time of an edge block not hidden by overlap",   \
    "")                                                                       \
  X(block_re_flops, kFlop, "",                                                \
    "recompute FLOPs of one block and microbatch", "")                        \
  X(block_re_flops_time, kSeconds, "",                                        \
    "recompute compute time of one block", "")                                \
  X(block_re_mem_accessed, kBytes, "",                                        \
    "recompute memory traffic of one block", "")                              \
  X(block_re_mem_time, kSeconds, "", "recompute memory time of one block",    \
    "")                                                                       \
  X(block_re_time, kSeconds, "", "recompute processing time of one block",    \
    "")                                                                       \
  X(baseblock_recomm_time, kSeconds, "",                                      \
    "TP re-communication time of a base block (redone all-gathers)", "")      \
  X(edgeblock_recomm_time, kSeconds, "",                                      \
    "TP re-communication time of an edge block (redone all-gathers)", "")     \
  X(baseblock_recomm_time_exposed, kSeconds, "",                              \
    "TP re-communication time of a base block not hidden by overlap", "")     \
  X(edgeblock_recomm_time_exposed, kSeconds, "",                              \
    "TP re-communication time of an edge block not hidden by overlap", "")    \
  X(block_agrad_flops, kFlop, "", "activation-gradient FLOPs of one block",   \
    "")                                                                       \
  X(block_agrad_flops_time, kSeconds, "",                                     \
    "activation-gradient compute time of one block", "")                      \
  X(block_agrad_mem_accessed, kBytes, "",                                     \
    "activation-gradient memory traffic of one block", "")                    \
  X(block_agrad_mem_time, kSeconds, "",                                       \
    "activation-gradient memory time of one block", "")                       \
  X(block_agrad_time, kSeconds, "",                                           \
    "activation-gradient processing time of one block", "")                   \
  X(baseblock_agrad_tp_time, kSeconds, "",                                    \
    "backward TP communication time of a base block", "")                     \
  X(edgeblock_agrad_tp_time, kSeconds, "",                                    \
    "backward TP communication time of an edge block", "")                    \
  X(baseblock_agrad_tp_time_exposed, kSeconds, "",                            \
    "backward TP communication time of a base block not hidden by overlap",   \
    "")                                                                       \
  X(edgeblock_agrad_tp_time_exposed, kSeconds, "",                            \
    "backward TP communication time of an edge block not hidden by overlap",  \
    "")                                                                       \
  X(block_wgrad_flops, kFlop, "", "weight-gradient FLOPs of one block", "")   \
  X(block_wgrad_flops_time, kSeconds, "",                                     \
    "weight-gradient compute time of one block", "")                          \
  X(block_wgrad_mem_accessed, kBytes, "",                                     \
    "weight-gradient memory traffic of one block", "")                        \
  X(block_wgrad_mem_time, kSeconds, "",                                       \
    "weight-gradient memory time of one block", "")                           \
  X(block_wgrad_time, kSeconds, "",                                           \
    "weight-gradient processing time of one block", "")                       \
  X(block_optim_flops, kFlop, "", "optimizer-step FLOPs of one block", "")    \
  X(block_optim_flops_time, kSeconds, "",                                     \
    "optimizer-step compute time of one block", "")                           \
  X(block_optim_mem_accessed, kBytes, "",                                     \
    "optimizer-step memory traffic of one block", "")                         \
  X(block_optim_mem_time, kSeconds, "",                                       \
    "optimizer-step memory time of one block", "")                            \
  X(block_optim_time, kSeconds, "",                                           \
    "optimizer-step processing time of one block", "")                        \
  X(baseblock_fw_tp_size, kBytes, "",                                         \
    "forward TP message bytes of a base block", "")                           \
  X(edgeblock_fw_tp_size, kBytes, "",                                         \
    "forward TP message bytes of an edge block", "")                          \
  X(baseblock_bw_tp_size, kBytes, "",                                         \
    "backward TP message bytes of a base block", "")                          \
  X(edgeblock_bw_tp_size, kBytes, "",                                         \
    "backward TP message bytes of an edge block", "")                         \
  X(baseblock_recomm_size, kBytes, "",                                        \
    "TP re-communication bytes of a base block", "")                          \
  X(edgeblock_recomm_size, kBytes, "",                                        \
    "TP re-communication bytes of an edge block", "")                         \
  X(tp_bw_overlap_req, kBytesPerSecond, "",                                   \
    "network bandwidth an overlapped TP linear needs to hide its tiles", "")  \
  X(block_weight_space, kBytes, "", "weights of one block", "")               \
  X(block_act_working_space, kBytes, "",                                      \
    "activations one block works on at once", "")                             \
  X(block_act_storage_space, kBytes, "",                                      \
    "activations one block stores for its backward pass (0 with full "        \
    "recompute)", "")                                                         \
  X(block_act_checkpoint_size, kBytes, "",                                    \
    "activation checkpoint of one block (full recompute)", "")                \
  X(block_weight_grad_space, kBytes, "",                                      \
    "weight gradients of one block, sharded", "")                             \
  X(block_weight_grad_space_no_sharding, kBytes, "",                          \
    "weight gradients of one block in 4-byte precision, unsharded", "")       \
  X(block_act_grad_space, kBytes, "", "activation gradients of one block",    \
    "")                                                                       \
  X(block_optimizer_space, kBytes, "", "optimizer state of one block", "")

// The step of pipeline stage 0, named as Calculon's stats JSON
// (calculon/MODEL.md §4.5-4.11).
#define BP_ITERATION_FIGURES(X)                                               \
  X(block_fw_pp_size, kBytes, "",                                             \
    "forward pipeline message bytes per chunk",                               \
    "p > 1 ? pipeline_message_bytes : 0")                                     \
  X(block_bw_pp_size, kBytes, "",                                             \
    "backward pipeline message bytes per chunk",                              \
    "training ? block_fw_pp_size : 0")                                        \
  X(block_dp_size, kBytes, "", "DP communication bytes of one block",         \
    "training && d > 1 ? (shard_parameters ? "                                \
    "block_weight_grad_space_no_sharding / 4 * weight_bytes_per_element "     \
    ": block_weight_space) : 0")                                              \
  X(dp_bw_overlap_req_chunk, kBytesPerSecond, "",                             \
    "network bandwidth DP overlap needs to hide a chunk's communication",     \
    "training && d > 1 && data_overlap ? "                                    \
    "overlapped_chunks_bw_req(block_dp_size, block_dp_time, "                 \
    "chunk_bw_time, chunk_bw_pp_time, block_agrad_flops_time, "               \
    "block_wgrad_flops_time, block_re_flops_time, blocks_per_chunk, p, "      \
    "v) : 0")                                                                 \
  X(dp_bw_overlap_req_tail, kBytesPerSecond, "",                              \
    "network bandwidth DP overlap needs to hide the last chunk's "            \
    "communication",                                                          \
    "training && d > 1 && data_overlap ? last_chunk_bw_req(block_dp_size, "   \
    "block_dp_time, baseblock_bw_time, edgeblock_bw_time, "                   \
    "chunk_bw_pp_time, blocks_per_chunk) : 0")                                \
  X(fw_time, kSeconds, "Forward time", "forward time of the step",            \
    "blocks_per_stage * m * block_fw_time")                                   \
  X(bw_time, kSeconds, "Backward time",                                       \
    "backward (activation and weight gradient) time of the step",             \
    "blocks_per_stage * m * block_agrad_time + blocks_per_stage * m * "       \
    "block_wgrad_time")                                                       \
  X(optim_step_time, kSeconds, "Optimizer step",                              \
    "optimizer-step time, once per step",                                     \
    "rank_blocks * block_optim_time")                                         \
  X(recompute_time, kSeconds, "Recompute time",                               \
    "activation recompute time of the step",                                  \
    "blocks_per_stage * m * block_re_time")                                   \
  X(recomm_link_time, kSeconds, "", "TP re-communication time on the link",   \
    "training ? " BP_FORMULA_PER_STEP("baseblock_recomm_time",                \
    "edgeblock_recomm_time") " : 0")                                          \
  X(recomm_exposed_time, kSeconds, "",                                        \
    "TP re-communication time not hidden",                                    \
    "training ? " BP_FORMULA_PER_STEP("baseblock_recomm_time_exposed",        \
    "edgeblock_recomm_time_exposed") " : 0")                                  \
  X(bubble_time, kSeconds, "Bubble time",                                     \
    "pipeline bubble: time stage 0 waits",                                    \
    "simulated_schedule ? simulated_bubble(p, v, m, chunk_fw_time, "          \
    "chunk_bw_time, blocks_per_chunk * block_wgrad_time, chunk_fb_time) "     \
    ": bubble_chunks * chunk_time - bubble_reduction_time")                   \
  X(tp_comm_link_time, kSeconds, "", "TP communication time on the link",     \
    BP_FORMULA_PER_STEP("baseblock_fw_tp_time", "edgeblock_fw_tp_time")       \
    " + " BP_FORMULA_PER_STEP("baseblock_agrad_tp_time",                      \
    "edgeblock_agrad_tp_time"))                                               \
  X(pp_comm_link_time, kSeconds, "",                                          \
    "pipeline send/receive time on the link",                                 \
    "p > 1 ? m * v * chunk_fw_pp_time + (training ? m * v * "                 \
    "chunk_bw_pp_time : 0) : 0")                                              \
  X(dp_comm_link_time, kSeconds, "", "DP communication time on the link",     \
    "training && d > 1 ? rank_blocks * block_dp_time : 0")                    \
  X(tp_comm_exposed_time, kSeconds, "TP exposed",                             \
    "TP communication time not hidden by overlap",                            \
    BP_FORMULA_PER_STEP("baseblock_fw_tp_time_exposed",                       \
    "edgeblock_fw_tp_time_exposed") " + " BP_FORMULA_PER_STEP(                \
    "baseblock_agrad_tp_time_exposed", "edgeblock_agrad_tp_time_exposed"))    \
  X(pp_comm_exposed_time, kSeconds, "PP exposed",                             \
    "pipeline send/receive time not hidden",                                  \
    "pp_comm_link_time")                                                      \
  X(dp_comm_exposed_time, kSeconds, "DP exposed",                             \
    "DP communication time not hidden by overlap",                            \
    "training && d > 1 ? (data_overlap ? block_dp_time + "                    \
    "overlapped_chunks_exposed(block_dp_time, chunk_bw_time, "                \
    "chunk_bw_pp_time, block_agrad_flops_time, block_wgrad_flops_time, "      \
    "block_re_flops_time, block_optim_time, optimizer_sharding, "             \
    "blocks_per_chunk, p, v) + last_chunk_exposed(block_dp_time, "            \
    "baseblock_bw_time, edgeblock_bw_time, chunk_bw_pp_time, "                \
    "blocks_per_chunk) : rank_blocks * block_dp_time) : 0")                   \
  X(fw_offload_exposed_time, kSeconds, "",                                    \
    "forward offload time not hidden",                                        \
    BP_FORMULA_PER_STEP("(baseblock_fw_time - " BP_FORMULA_FW_BASE ")",       \
    "(edgeblock_fw_time - " BP_FORMULA_FW_EDGE ")"))                          \
  X(bw_offload_exposed_time, kSeconds, "",                                    \
    "backward offload time not hidden",                                       \
    "training ? " BP_FORMULA_PER_STEP("(baseblock_bw_time - "                 \
    BP_FORMULA_BW_BASE ")", "(edgeblock_bw_time - " BP_FORMULA_BW_EDGE ")")   \
    " : 0")                                                                   \
  X(total_time, kSeconds, "Iteration time", "time of one step (iteration)",   \
    "fw_time + bw_time + optim_step_time + fw_offload_exposed_time + "        \
    "bw_offload_exposed_time + recompute_time + recomm_exposed_time + "       \
    "bubble_time + tp_comm_exposed_time + pp_comm_exposed_time + "            \
    "dp_comm_exposed_time - fb_overlap_saving_time + "                        \
    "stage_imbalance_time + stage_extra_dp_time + embedding_sync_time + "     \
    "twin_stage_sync_time")                                                   \
  X(act_offload_bw_req, kBytesPerSecond, "",                                  \
    "second-tier bandwidth activation offload needs to stay hidden",          \
    "rate(" BP_FORMULA_ACT_OFFLOAD ", " BP_FORMULA_FW_WINDOW ")")             \
  X(weight_offload_bw_req, kBytesPerSecond, "",                               \
    "second-tier bandwidth weight offload needs to stay hidden",              \
    "rate(block_weight_space, " BP_FORMULA_FW_WINDOW ")")                     \
  X(optim_offload_bw_req, kBytesPerSecond, "",                                \
    "second-tier bandwidth optimizer offload needs to stay hidden",           \
    "training ? rate(block_weight_grad_space + block_optimizer_space, "       \
    BP_FORMULA_BW_WINDOW ") : 0")                                             \
  X(offload_mem_bw_req, kBytesPerSecond, "",                                  \
    "second-tier bandwidth all offload together needs",                       \
    "training ? max(rate(" BP_FORMULA_FW_OFFLOAD ", " BP_FORMULA_FW_WINDOW    \
    "), rate(" BP_FORMULA_BW_OFFLOAD ", " BP_FORMULA_BW_WINDOW ")) : rate("   \
    BP_FORMULA_FW_OFFLOAD ", " BP_FORMULA_FW_WINDOW ")")                      \
  X(useful_flops, kFlop, "",                                                  \
    "useful FLOPs of one block and microbatch (recompute excluded; "          \
    "optimizer counted per microbatch, Calculon's quirk)",                    \
    /* Quirk (MODEL.md §6.7): the optimizer FLOPs counted per microbatch. */  \
    "block.useful_flops")                                                     \
  X(compute_efficiency, kFraction, "Compute efficiency",                      \
    "ideal compute time over forward + backward + optimizer time",            \
    "blocks_per_stage * m * useful_flops / matrix_peak_flops / (fw_time + "   \
    "bw_time + optim_step_time)")                                             \
  X(system_efficiency, kFraction, "System efficiency",                        \
    "forward + backward + optimizer time over the step time",                 \
    "(fw_time + bw_time + optim_step_time) / total_time")                     \
  X(total_efficiency, kFraction, "Total efficiency",                          \
    "ideal compute time over the step time (MFU-like)",                       \
    "blocks_per_stage * m * useful_flops / matrix_peak_flops / total_time")   \
  X(sample_rate, kSamplesPerSecond, "Sample rate",                            \
    "global batch size over the step time",                                   \
    "global_batch_size / total_time")

// Composition terms that are not Calculon outputs but that the report and
// the schedule chart show, then the first and last stage's own work (the
// vocabulary: 0 for Calculon's model, which has none) and Megatron-LM's
// model accounting.
#define BP_SCHEDULE_TERMS(X)                                                  \
  X(chunk_fw_time, kSeconds, "Chunk forward",                                 \
    "forward time of one chunk (blocks_per_chunk blocks)",                    \
    "(blocks_per_chunk - 1) * baseblock_fw_time + edgeblock_fw_time")         \
  X(chunk_bw_time, kSeconds, "Chunk backward", "backward time of one chunk",  \
    "(blocks_per_chunk - 1) * baseblock_bw_time + edgeblock_bw_time")         \
  X(chunk_time, kSeconds, "", "forward + backward time of one chunk",         \
    "chunk_fw_time + chunk_bw_time")                                          \
  X(chunk_fw_pp_time, kSeconds, "",                                           \
    "forward pipeline send time of one chunk",                                \
    /* Quirk (MODEL.md §6.4): the p2p latency is paid for a 0-byte */         \
    /* message. */                                                            \
    "p2p_time(block_fw_pp_size)")                                             \
  X(chunk_bw_pp_time, kSeconds, "",                                           \
    "backward pipeline send time of one chunk",                               \
    "p2p_time(block_bw_pp_size)")                                             \
  X(baseblock_fw_time, kSeconds, "",                                          \
    "forward time of a base block in the schedule",                           \
    BP_FORMULA_FW_BASE " + max(0, mem2_time(" BP_FORMULA_FW_OFFLOAD           \
    ") + block_fw_mem_time - " BP_FORMULA_FW_BASE ")")                        \
  X(edgeblock_fw_time, kSeconds, "",                                          \
    "forward time of an edge block in the schedule (with its pipeline send)", \
    BP_FORMULA_FW_EDGE " + max(0, mem2_time(" BP_FORMULA_FW_OFFLOAD           \
    ") + block_fw_mem_time - " BP_FORMULA_FW_EDGE ")")                        \
  X(baseblock_bw_time, kSeconds, "",                                          \
    "backward time of a base block in the schedule",                          \
    BP_FORMULA_BW_BASE " + max(0, (training ? mem2_time("                     \
    BP_FORMULA_BW_OFFLOAD ") : 0) + " BP_FORMULA_BW_MEM " - "                 \
    BP_FORMULA_BW_BASE ")")                                                   \
  X(edgeblock_bw_time, kSeconds, "",                                          \
    "backward time of an edge block in the schedule (with its pipeline "      \
    "send)",                                                                  \
    BP_FORMULA_BW_EDGE " + max(0, (training ? mem2_time("                     \
    BP_FORMULA_BW_OFFLOAD ") : 0) + " BP_FORMULA_BW_MEM " - "                 \
    BP_FORMULA_BW_EDGE ")")                                                   \
  X(bubble_reduction_time, kSeconds, "Bubble reduction (uneven)",             \
    "bubble time saved by an uneven stage layout",                            \
    "blocks_per_chunk > 1 ? bubble_reduction_blocks * (baseblock_fw_time + "  \
    "edgeblock_fw_time + baseblock_bw_time + edgeblock_bw_time) / 2 : "       \
    "bubble_reduction_blocks * (edgeblock_fw_time + edgeblock_bw_time)")      \
  X(extra_interleaving_bubbles, kCount, "Extra interleaving bubbles",         \
    "extra bubble chunks of interleaving when p does not divide the "         \
    "microbatches",                                                           \
    "!simulated_schedule && m % p != 0 ? (v - 1) * (p - m % p) : 0")          \
  X(bubble_chunks, kCount, "Bubble chunks", "chunks the bubble lasts",        \
    "simulated_schedule ? (chunk_time > 0 ? bubble_time / chunk_time : 0) "   \
    ": p - 1 + extra_interleaving_bubbles")                                   \
  X(chunk_bw_input_time, kSeconds, "",                                        \
    "backward time of one chunk without its weight-gradient GEMMs (T_B of "   \
    "the zero-bubble schedules)",                                             \
    "training ? chunk_bw_time - chunk_bw_weight_time : 0")                    \
  X(chunk_bw_weight_time, kSeconds, "",                                       \
    "weight-gradient GEMM time of one chunk (T_W): chunk_bw_time = "          \
    "chunk_bw_input_time + chunk_bw_weight_time",                             \
    "training ? min(chunk_bw_time, blocks_per_chunk * block_wgrad_time) : 0") \
  X(chunk_fb_time, kSeconds, "",                                              \
    "DualPipe's F&B: one chunk's forward beside another microbatch's "        \
    "backward, each one's exposed communication hidden under the other's "    \
    "compute (dualpipe, dualpipe_v; 0 for the other schedules)",              \
    "overlapped_forward_backward && training ? max(chunk_fw_time + "          \
    "chunk_bw_input_time + chunk_bw_weight_time - " BP_FORMULA_CHUNK_COMM     \
    ", " BP_FORMULA_CHUNK_COMM ") : 0")                                       \
  X(fb_overlap_saving_time, kSeconds, "",                                     \
    "what the F&B overlap takes off the busiest stage's step (subtracted "    \
    "in total_time)",                                                         \
    "overlapped_forward_backward && training ? "                              \
    "simulated_fewest_fb_pairs(p, v, m) * max(0, chunk_fw_time + "            \
    "chunk_bw_input_time + chunk_bw_weight_time - chunk_fb_time) : 0")        \
  X(peak_inflight_microbatches, kCount, "",                                   \
    "the most microbatches whose activations one stage holds at once, in "    \
    "whole-stage units (the memory analysis' factor)",                        \
    BP_FORMULA_IN_FLIGHT)                                                     \
  X(block_dp_time, kSeconds, "", "DP communication time of one block",        \
    "training && d > 1 ? dp_time(block_dp_size, block_dp_grad_size, d, "      \
    "optimizer_sharding) : 0")                                                \
  X(block_dp_grad_size, kBytes, "",                                           \
    "bytes one block's DP gradient reduction moves (its gradients in "        \
    "options.grad_reduce_datatype or, null, in float32 with bfloat16 "        \
    "under the refined profile's fp32_gradient_reduction; else the "          \
    "weights' bytes)",                                                        \
    "grad_reduce_bytes > 0 ? block_weight_grad_space_no_sharding / 4 * "      \
    "grad_reduce_bytes : block_dp_size")                                      \
  X(first_stage_microbatch_time, kSeconds, "",                                \
    "the first stage's extra work per microbatch (input embedding)",          \
    "first_stage.block_fw_time + first_stage.baseblock_fw_tp_time_exposed "   \
    "+ (training ? first_stage.block_agrad_time + "                           \
    "first_stage.block_wgrad_time + "                                         \
    "first_stage.baseblock_agrad_tp_time_exposed : 0)")                       \
  X(last_stage_microbatch_time, kSeconds, "",                                 \
    "the last stage's extra work per microbatch (final norm, output layer, "  \
    "loss)",                                                                  \
    "last_stage.block_fw_time + last_stage.baseblock_fw_tp_time_exposed + "   \
    "(training ? last_stage.block_agrad_time + "                              \
    "last_stage.block_wgrad_time + "                                          \
    "last_stage.baseblock_agrad_tp_time_exposed : 0)")                        \
  X(first_stage_extra_time, kSeconds, "",                                     \
    "the first stage's extra work per step",                                  \
    "twin_stages ? m / 2 * (first_stage_microbatch_time + "                   \
    "last_stage_microbatch_time) + (training ? "                              \
    "first_stage.block_optim_time + last_stage.block_optim_time : 0) : m "    \
    "* first_stage_microbatch_time + (training ? "                            \
    "first_stage.block_optim_time : 0)")                                      \
  X(last_stage_extra_time, kSeconds, "",                                      \
    "the last stage's extra work per step",                                   \
    "twin_stages ? first_stage_extra_time : m * last_stage_microbatch_time "  \
    "+ (training ? last_stage.block_optim_time + (embedding_copy ? "          \
    "first_stage.block_optim_time : 0) : 0)")                                 \
  X(stage_imbalance_time, kSeconds, "Stage imbalance (vocabulary)",           \
    "what the first and last stage's extra work adds to the step (the "       \
    "slowest stage sets the pace)",                                           \
    "twin_stages ? first_stage_extra_time : (p == 1 ? "                       \
    "first_stage_extra_time + last_stage_extra_time : m * "                   \
    "max(first_stage_microbatch_time, last_stage_microbatch_time) + "         \
    "min(first_stage_microbatch_time, last_stage_microbatch_time) + "         \
    "(training ? max(first_stage.block_optim_time, "                          \
    "last_stage.block_optim_time + (embedding_copy ? "                        \
    "first_stage.block_optim_time : 0)) : 0))")                               \
  X(stage_extra_dp_time, kSeconds, "",                                        \
    "DP communication of the embedding and output layer's gradients",         \
    "training && d > 1 ? (holds_both_ends ? "                                 \
    "dp_time(first_stage.block_weight_space) + "                              \
    "dp_time(last_stage.block_weight_space) : "                               \
    "max(dp_time(first_stage.block_weight_space), "                           \
    "dp_time(last_stage.block_weight_space) + (embedding_copy ? "             \
    "dp_time(first_stage.block_weight_space) : 0))) : 0")                     \
  X(embedding_sync_time, kSeconds, "",                                        \
    "all-reduce of tied embedding gradients between first and last stage",    \
    "embedding_sync ? "                                                       \
    "pp_all_reduce_time(first_stage.block_weight_grad_space_no_sharding) "    \
    ": 0")                                                                    \
  X(twin_stage_sync_time, kSeconds, "",                                       \
    "dualpipe: all-reduce of each rank's gradients with its twin's (rank p "  \
    "- 1 - s holds the same two stages); 0 for the other schedules",          \
    "training && twin_stages ? pp_all_reduce_time(rank_blocks * "             \
    "block_weight_grad_space_no_sharding + "                                  \
    "first_stage.block_weight_grad_space_no_sharding + "                      \
    "last_stage.block_weight_grad_space_no_sharding) : 0")                    \
  X(first_stage_time, kSeconds, "First stage busy",                           \
    "compute time of the first stage per step",                               \
    "fw_time + bw_time + recompute_time + optim_step_time + "                 \
    "first_stage_extra_time + (p == 1 ? last_stage_extra_time : 0)")          \
  X(last_stage_time, kSeconds, "Last stage busy",                             \
    "compute time of the last stage per step",                                \
    "p == 1 ? first_stage_time : fw_time + bw_time + recompute_time + "       \
    "optim_step_time + last_stage_extra_time")                                \
  X(parameters_total, kCount, "Parameters",                                   \
    "parameters, as Megatron-LM counts them",                                 \
    "megatron_parameters")                                                    \
  X(parameters_active, kCount, "",                                            \
    "parameters a token passes through, as Megatron-LM counts them",          \
    "megatron_active_parameters")                                             \
  X(model_flops_per_iteration, kFlop, "Model FLOP per iteration",             \
    "model FLOPs of one global batch (Megatron-LM's definition)",             \
    "megatron_model_flops")                                                   \
  X(mfu, kFraction, "MFU",                                                    \
    "model FLOPs utilization: model FLOPs over step time x peak x ranks",     \
    "model_flops_per_iteration / (total_time * matrix_peak_flops * t * p * "  \
    "d)")

// Memory per rank, named as Calculon's stats JSON.
#define BP_MEMORY_FIGURES(X)                                                  \
  X(weight_space_with_offload, kBytes, "",                                    \
    "weights kept in tier 1 with offload",                                    \
    "block_weight_space * 2")                                                 \
  X(act_space_with_offload, kBytes, "",                                       \
    "activations kept in tier 1 with offload",                                \
    "full_recompute ? block_act_working_space : block_act_working_space + "   \
    "block_act_storage_space")                                                \
  X(act_checkpoint_size_with_offload, kBytes, "",                             \
    "activation checkpoints kept in tier 1 with offload (null for "           \
    "inference)",                                                             \
    /* null in Calculon's stats for inference. */                             \
    "training && full_recompute ? block_act_checkpoint_size * 2 : 0")         \
  X(act_grad_space_with_offload, kBytes, "",                                  \
    "activation gradients kept in tier 1 with offload",                       \
    "act_grad_space")                                                         \
  X(weight_grad_space_with_offload, kBytes, "",                               \
    "weight gradients kept in tier 1 with offload",                           \
    "training ? block_weight_grad_space_no_sharding + "                       \
    "block_weight_grad_space : 0")                                            \
  X(optimizer_space_with_offload, kBytes, "",                                 \
    "optimizer state kept in tier 1 with offload",                            \
    "training ? block_optimizer_space * 2 : 0")                               \
  X(weight_space, kBytes, "Weights", "weights of the stage",                  \
    "block_weight_space * rank_blocks")                                       \
  X(act_space, kBytes, "Activations", "activations stored by the stage",      \
    "training && !full_recompute ? block_act_working_space + "                \
    "block_act_storage_space * (rank_blocks * " BP_FORMULA_IN_FLIGHT          \
    " - 1) : block_act_working_space")                                        \
  X(act_checkpoint_size, kBytes, "Checkpoints",                               \
    "activation checkpoints (full recompute)",                                \
    "training && full_recompute ? rank_blocks * block_act_checkpoint_size "   \
    "* " BP_FORMULA_IN_FLIGHT " : 0")                                         \
  X(act_grad_space, kBytes, "Activation gradients",                           \
    "activation gradients (one block)",                                       \
    "training ? block_act_grad_space : 0")                                    \
  X(weight_grad_space, kBytes, "Weight gradients",                            \
    "weight gradients of the stage",                                          \
    "training ? (rank_blocks == 1 ? block_weight_grad_space_no_sharding : "   \
    "block_weight_grad_space_no_sharding + block_weight_grad_space * "        \
    "(rank_blocks - 1)) : 0")                                                 \
  X(optimizer_space, kBytes, "Optimizer", "optimizer state of the stage",     \
    "training ? block_optimizer_space * rank_blocks : 0")                     \
  X(proc_mem_tier1_cap_req, kBytes, "Tier 1 (HBM) needed",                    \
    "tier-1 (HBM) capacity needed per rank",                                  \
    "(offload_weights ? weight_space_with_offload : weight_space) + "         \
    "(offload_activations ? act_space_with_offload + (full_recompute ? "      \
    "act_checkpoint_size_with_offload : 0) : act_space + "                    \
    "act_checkpoint_size) + (offload_optimizer ? "                            \
    "weight_grad_space_with_offload + optimizer_space_with_offload : "        \
    "weight_grad_space + optimizer_space) + act_grad_space")                  \
  X(proc_mem_tier2_cap_req, kBytes, "Tier 2 needed",                          \
    "tier-2 (offload) capacity needed per rank",                              \
    "(offload_weights ? weight_space : 0) + (offload_activations ? "          \
    "(full_recompute ? act_checkpoint_size : act_space) : 0) + "              \
    "(offload_optimizer ? block_weight_grad_space * rank_blocks + "           \
    "optimizer_space : 0)")

// Memory figures that are not Calculon outputs: the weights, gradients and
// optimizer state (Megatron-LM's weight_and_optimizer memory) and the tier-1
// requirement of the first and the last stage, whose vocabulary work the
// blocks' figures (stage 0's, Calculon's) leave out.
#define BP_MEMORY_TERMS(X)                                                    \
  X(first_stage_weight_and_optimizer_bytes, kBytes, "",                       \
    "weights, gradients and optimizer state on a first-stage rank",           \
    "weight_space + weight_grad_space + optimizer_space + "                   \
    BP_FORMULA_FIRST_STAGE_STATE)                                             \
  X(last_stage_weight_and_optimizer_bytes, kBytes, "",                        \
    "weights, gradients and optimizer state on a last-stage rank",            \
    "weight_space + weight_grad_space + optimizer_space + "                   \
    BP_FORMULA_LAST_STAGE_STATE)                                              \
  X(weight_and_optimizer_bytes, kBytes, "Weights + gradients + optimizer",    \
    "weights, gradients and optimizer state on the most loaded rank",         \
    "max(first_stage_weight_and_optimizer_bytes, "                            \
    "last_stage_weight_and_optimizer_bytes)")                                 \
  X(first_stage_mem_tier1_req, kBytes, "",                                    \
    "tier-1 capacity a first-stage rank needs",                               \
    "proc_mem_tier1_cap_req + " BP_FORMULA_FIRST_STAGE_TIER1)                 \
  X(last_stage_mem_tier1_req, kBytes, "",                                     \
    "tier-1 capacity a last-stage rank needs",                                \
    "proc_mem_tier1_cap_req + " BP_FORMULA_LAST_STAGE_TIER1)                  \
  X(max_stage_mem_tier1_req, kBytes, "Most loaded stage, tier 1",             \
    "tier-1 capacity the most loaded stage needs",                            \
    "max(first_stage_mem_tier1_req, last_stage_mem_tier1_req)")

// The report's own figures: the per-rank figures AnalyzeIteration computes
// from the task IR (IterationAnalysis::rank_figures, in this order; some
// names are made from an enum's, e.g. tp_<op>_bytes), then the concrete
// scheduler's (SimulatePipelineSchedule), present when the shape is within
// its limits.
#define BP_REPORT_FIGURES(X)                                                  \
  X(tp_all_reduce_bytes, kBytes, "TP all-reduce",                             \
    "TP all-reduce bytes per rank per step",                                  \
    BP_FORMULA_TP_OP_BYTES)                                                   \
  X(tp_reduce_scatter_bytes, kBytes, "TP reduce-scatter",                     \
    "TP reduce-scatter bytes per rank per step",                              \
    BP_FORMULA_TP_OP_BYTES)                                                   \
  X(tp_all_gather_bytes, kBytes, "TP all-gather",                             \
    "TP all-gather bytes per rank per step",                                  \
    BP_FORMULA_TP_OP_BYTES)                                                   \
  X(ep_all_to_all_bytes, kBytes, "Expert all-to-all",                         \
    "MoE dispatch and combine all-to-all bytes per rank per step",            \
    "sum over the block tasks of the MoE dispatch and combine all-to-alls: "  \
    "blocks_per_stage * microbatches * share * bytes (forward and, "          \
    "training, backward)")                                                    \
  X(ep_all_to_all_exposed_time, kSeconds, "",                                 \
    "MoE all-to-all time per rank per step not hidden by compute",            \
    "the same sum over the exposed time of the MoE dispatch and combine "     \
    "all-to-alls (plan IR; inside the block times); under combined 1F1B "     \
    "the part its cover does not hide and the tier's processor_usage of "     \
    "the part it hides")                                                      \
  X(ep_all_to_all_hidden_time, kSeconds, "",                                  \
    "MoE all-to-all time per rank per step hidden under compute",             \
    "the same sum over the MoE dispatch and combine all-to-alls' network "    \
    "time less their exposed time (shared experts beside them, combined "     \
    "1F1B)")                                                                  \
  X(tokens_per_local_expert, kCount, "Tokens per local expert",               \
    "routed tokens one of a rank's experts computes per microbatch",          \
    "microbatch_size * seq_size / cp * topk * capacity_factor * etp / t / "   \
    "(experts / ep), 0 without experts")                                      \
  X(cp_kv_bytes, kBytes, "Context K/V exchange",                              \
    "context-parallel K/V exchange bytes per rank per step",                  \
    "sum over the block tasks of the context-parallel K/V exchange: "         \
    "blocks_per_stage * microbatches * share * bytes (forward and, "          \
    "training, backward)")                                                    \
  X(cp_kv_exposed_time, kSeconds, "",                                         \
    "K/V exchange time per rank per step not hidden by attention",            \
    "the same sum over the exposed time of the context-parallel K/V "         \
    "exchange (plan IR; inside the block times)")                             \
  X(pp_p2p_bytes, kBytes, "PP send/receive",                                  \
    "pipeline send/receive bytes per rank per step",                          \
    "p > 1 ? microbatches * virtual_stages * (block_fw_pp_size + "            \
    "block_bw_pp_size) : 0")                                                  \
  X(dp_all_reduce_bytes, kBytes, "DP all-reduce",                             \
    "DP all-reduce bytes per rank per step",                                  \
    "training && d > 1 && !optimizer_sharding ? rank_blocks * "               \
    "block_dp_grad_size : 0")                                                 \
  X(dp_reduce_scatter_bytes, kBytes, "DP reduce-scatter",                     \
    "DP reduce-scatter bytes per rank per step (optimizer sharding)",         \
    "training && d > 1 && optimizer_sharding ? rank_blocks * "                \
    "block_dp_grad_size : 0")                                                 \
  X(dp_all_gather_bytes, kBytes, "DP all-gather",                             \
    "DP all-gather bytes per rank per step (optimizer sharding)",             \
    "training && d > 1 && optimizer_sharding and not ZeRO-3 ? rank_blocks "   \
    "* block_dp_size : 0")                                                    \
  X(dp_param_all_gather_bytes, kBytes, "ZeRO-3 parameter all-gather",         \
    "ZeRO-3 parameter all-gather bytes per rank per step",                    \
    "training && d > 1 && sharding parameters (ZeRO-3) ? 2 * rank_blocks * "  \
    "block_dp_size (before the forward and the backward pass) : 0")           \
  X(tp_comm_bytes, kBytes, "",                                                \
    "TP bytes per rank per step, all collectives",                            \
    "tp_all_reduce_bytes + tp_reduce_scatter_bytes + tp_all_gather_bytes")    \
  X(dp_comm_bytes, kBytes, "",                                                \
    "DP bytes per rank per step, all collectives",                            \
    "dp_all_reduce_bytes + dp_reduce_scatter_bytes + dp_all_gather_bytes + "  \
    "dp_param_all_gather_bytes")                                              \
  X(tp_collectives_exposed_time, kSeconds, "",                                \
    "TP collectives' exposed time per step, without the expert and context "  \
    "exchanges",                                                              \
    "max(0, tp_comm_exposed_time - ep_all_to_all_exposed_time - "             \
    "cp_kv_exposed_time)")                                                    \
  X(gemm_flops_per_rank, kFlop, "GEMM FLOP", "GEMM FLOPs per rank per step",  \
    "blocks_per_stage * microbatches * sum over the block's GEMM tasks of "   \
    "(fw + agrad + wgrad) flops + microbatches (dualpipe: half) * the "       \
    "same over stage 0's own GEMM tasks (output layer when p = 1 or "         \
    "dualpipe)")                                                              \
  X(expert_parameters_per_rank, kCount, "Expert parameters per rank",         \
    "routed-expert parameters a rank holds (most-MoE stage)",                 \
    "rank_blocks * sum over the routed experts' tasks of share * weight "     \
    "bytes / the weights' bytes per element (the stage with most MoE "        \
    "blocks; ZeRO-3 keeps 1/shard of them)")                                  \
  X(recompute_gemm_flops_per_rank, kFlop, "Recompute GEMM FLOP",              \
    "recomputed GEMM FLOPs per rank per step",                                \
    "blocks_per_stage * microbatches * sum over recomputed GEMM tasks of "    \
    "fw flops")                                                               \
  X(flops_per_rank, kFlop, "All FLOP",                                        \
    "all FLOPs per rank per step, recompute included",                        \
    "blocks_per_stage * microbatches * (block_fw_flops + block_agrad_flops "  \
    "+ block_wgrad_flops + recomputed fw flops) + rank_blocks * "             \
    "block_optim_flops + stage 0's own tasks' (microbatches (dualpipe: "      \
    "half) * (fw + agrad + wgrad) + optim) flops")                            \
  X(quantization_time_per_rank, kSeconds, "Quantization casts",               \
    "time per rank per step of the recipe's quantization kernels (inside "    \
    "the block times)",                                                       \
    "blocks_per_stage * microbatches * sum over the block tasks of share * "  \
    "(quantize fw (recomputed: twice) + quantize agrad) + rank_blocks * "     \
    "sum of share * quantize optim (the weights, once per step) + stage "     \
    "0's own tasks' likewise; a cast of E elements read at b bytes: "         \
    "(amax pass ? 2 : 1) * E * b + 2 * (E * bits / 8 + E / block * "          \
    "scale_bytes) at mem1's bandwidth (core/spec/recipes.h)")                 \
  X(bubble_fraction, kFraction, "Bubble fraction",                            \
    "bubble time over the step time",                                         \
    "total_time > 0 ? bubble_time / total_time : 0")                          \
  X(critical_path_base_forward, kSeconds, "Base block forward",               \
    "forward critical path of a base block (TP exposed time included)",       \
    BP_FORMULA_FORWARD_PATH)                                                  \
  X(critical_path_base_backward, kSeconds, "Base block backward",             \
    "backward critical path of a base block",                                 \
    BP_FORMULA_BACKWARD_PATH)                                                 \
  X(critical_path_edge_forward, kSeconds, "Edge block forward",               \
    "forward critical path of an edge block",                                 \
    BP_FORMULA_FORWARD_PATH)                                                  \
  X(critical_path_edge_backward, kSeconds, "Edge block backward",             \
    "backward critical path of an edge block",                                \
    BP_FORMULA_BACKWARD_PATH)                                                 \
  X(moe_blocks_per_stage, kCount, "",                                         \
    "MoE blocks of the priced stage (the stage with most of them)",           \
    "stage_moe_blocks: blocks_per_stage when every block is MoE, else the "   \
    "most MoE blocks of a stage by the layer pattern (and the stage layout); " \
    "0 without experts")                                                      \
  X(moe_block_router_fw_time, kSeconds, "",                                   \
    "forward time of one MoE block's router, one microbatch",                 \
    BP_FORMULA_MOE_FW(BP_FORMULA_MOE_ROUTER))                                 \
  X(moe_block_router_bw_time, kSeconds, "",                                   \
    "backward time of one MoE block's router, one microbatch",                \
    BP_FORMULA_MOE_BW(BP_FORMULA_MOE_ROUTER))                                 \
  X(moe_block_permutation_fw_time, kSeconds, "",                              \
    "forward time of one MoE block's token permutations, one microbatch",     \
    BP_FORMULA_MOE_FW(BP_FORMULA_MOE_PERMUTATION))                            \
  X(moe_block_permutation_bw_time, kSeconds, "",                              \
    "backward time of one MoE block's token permutations, one microbatch",    \
    BP_FORMULA_MOE_BW(BP_FORMULA_MOE_PERMUTATION))                            \
  X(moe_block_dispatch_fw_net_time, kSeconds, "",                             \
    "network time of one MoE block's forward dispatch, one microbatch",       \
    BP_FORMULA_MOE_EXCHANGE("MoeBlock_Dispatch", "fw", BP_FORMULA_MOE_NET)    \
        BP_FORMULA_MOE_NO_EXCHANGE)                                           \
  X(moe_block_dispatch_fw_exposed_time, kSeconds, "",                         \
    "exposed time of one MoE block's forward dispatch, one microbatch",       \
    BP_FORMULA_MOE_EXCHANGE("MoeBlock_Dispatch", "fw",                        \
                            BP_FORMULA_MOE_EXPOSED)                           \
        BP_FORMULA_MOE_NO_EXCHANGE)                                           \
  X(moe_block_dispatch_bw_net_time, kSeconds, "",                             \
    "network time of one MoE block's backward dispatch, one microbatch",      \
    "training ? " BP_FORMULA_MOE_EXCHANGE("MoeBlock_Dispatch", "bw",          \
                                          BP_FORMULA_MOE_NET)                 \
        " : 0" BP_FORMULA_MOE_NO_EXCHANGE)                                    \
  X(moe_block_dispatch_bw_exposed_time, kSeconds, "",                         \
    "exposed time of one MoE block's backward dispatch, one microbatch",      \
    "training ? " BP_FORMULA_MOE_EXCHANGE("MoeBlock_Dispatch", "bw",          \
                                          BP_FORMULA_MOE_EXPOSED)             \
        " : 0" BP_FORMULA_MOE_NO_EXCHANGE)                                    \
  X(moe_block_experts_fw_time, kSeconds, "",                                  \
    "forward time of one MoE block's routed experts, one microbatch",         \
    BP_FORMULA_MOE_FW(BP_FORMULA_MOE_EXPERTS))                                \
  X(moe_block_experts_bw_time, kSeconds, "",                                  \
    "backward time of one MoE block's routed experts, one microbatch",        \
    BP_FORMULA_MOE_BW(BP_FORMULA_MOE_EXPERTS))                                \
  X(moe_block_combine_fw_net_time, kSeconds, "",                              \
    "network time of one MoE block's forward combine, one microbatch",        \
    BP_FORMULA_MOE_EXCHANGE("MoeBlock_Combine", "fw", BP_FORMULA_MOE_NET)     \
        BP_FORMULA_MOE_NO_EXCHANGE)                                           \
  X(moe_block_combine_fw_exposed_time, kSeconds, "",                          \
    "exposed time of one MoE block's forward combine, one microbatch",        \
    BP_FORMULA_MOE_EXCHANGE("MoeBlock_Combine", "fw",                         \
                            BP_FORMULA_MOE_EXPOSED)                           \
        BP_FORMULA_MOE_NO_EXCHANGE)                                           \
  X(moe_block_combine_bw_net_time, kSeconds, "",                              \
    "network time of one MoE block's backward combine, one microbatch",       \
    "training ? " BP_FORMULA_MOE_EXCHANGE("MoeBlock_Combine", "bw",           \
                                          BP_FORMULA_MOE_NET)                 \
        " : 0" BP_FORMULA_MOE_NO_EXCHANGE)                                    \
  X(moe_block_combine_bw_exposed_time, kSeconds, "",                          \
    "exposed time of one MoE block's backward combine, one microbatch",       \
    "training ? " BP_FORMULA_MOE_EXCHANGE("MoeBlock_Combine", "bw",           \
                                          BP_FORMULA_MOE_EXPOSED)             \
        " : 0" BP_FORMULA_MOE_NO_EXCHANGE)                                    \
  X(moe_block_shared_experts_fw_time, kSeconds, "",                           \
    "forward time of one MoE block's shared experts, one microbatch",         \
    BP_FORMULA_MOE_FW(BP_FORMULA_MOE_SHARED))                                 \
  X(moe_block_shared_experts_bw_time, kSeconds, "",                           \
    "backward time of one MoE block's shared experts, one microbatch",        \
    BP_FORMULA_MOE_BW(BP_FORMULA_MOE_SHARED))                                 \
  X(simulated_bubble_time, kSeconds, "Bubble, simulated timeline",            \
    "pipeline bubble of the simulated command timeline",                      \
    "max(0, makespan - max(stage busy) - (stage_blocks ? 0 : "                 \
    "bubble_reduction_time))")                                                \
  X(simulated_total_time, kSeconds, "Iteration, simulated timeline",          \
    "total_time with the simulated bubble in place of bubble_time (and, "     \
    "under an explicit layout, the simulated busiest stage's compute in "     \
    "place of the analysis')",                                                \
    "total_time + simulated_bubble_time - bubble_time + (stage_blocks ? "     \
    "max(stage busy) - m * v * chunk_time : 0)")

// The formulas of iteration figures that an explicit stage layout
// (parallelism.pipeline.stage_blocks) computes otherwise, as X(name,
// formula): each end stage is priced on its own blocks (first_rank_blocks,
// last_rank_blocks), so the slowest stage, blocks and vocabulary together,
// paces the pipeline (core/analysis/figures.cc LayoutStageImbalance); the
// blocks the layout leaves out shorten the bubble by at most a whole block
// each (figures.cc BubbleReductionTime): a layout may leave an end stage
// empty (Megatron-LM's layout strings do), where Calculon's half-edge
// pricing of up to p - 1 missing blocks could take more than the bubble.
// The lineage of a spec with a layout shows these in place of the rows
// above.
#define BP_LAYOUT_FORMULAS(X)                                                 \
  X(stage_imbalance_time,                                                     \
    "twin_stages ? first_stage_extra_time : (p == 1 ? "                       \
    "first_stage_extra_time + last_stage_extra_time : (m - 1) * max(0, "      \
    "first_stage_microbatch_time - layout_gap_time(blocks_per_stage - "       \
    "first_rank_blocks), last_stage_microbatch_time - "                       \
    "layout_gap_time(blocks_per_stage - last_rank_blocks)) + "                \
    "(first_stage_microbatch_time + last_stage_microbatch_time) + "           \
    "(training ? max(first_stage.block_optim_time, "                          \
    "last_stage.block_optim_time + (embedding_copy ? "                        \
    "first_stage.block_optim_time : 0)) : 0))")                               \
  X(first_stage_time,                                                         \
    "p > 1 && !twin_stages ? (fw_time + bw_time + recompute_time + "          \
    "optim_step_time) * first_rank_blocks / blocks_per_stage + "              \
    "first_stage_extra_time : fw_time + bw_time + recompute_time + "          \
    "optim_step_time + first_stage_extra_time + (p == 1 ? "                   \
    "last_stage_extra_time : 0)")                                             \
  X(last_stage_time,                                                          \
    "p == 1 ? first_stage_time : (fw_time + bw_time + recompute_time + "      \
    "optim_step_time) * (!twin_stages ? last_rank_blocks / "                  \
    "blocks_per_stage : 1) + last_stage_extra_time")                          \
  X(bubble_reduction_time,                                                    \
    "bubble_reduction_blocks * min(baseblock_fw_time + baseblock_bw_time, "   \
    "edgeblock_fw_time + edgeblock_bw_time)")

// The memory terms an explicit stage layout computes otherwise, as X(name,
// formula): each end stage holds its own blocks (rank_state_bytes,
// rank_tier1_req at first_rank_blocks, last_rank_blocks) beside its
// vocabulary, and the most loaded rank may be a middle one
// (core/analysis/figures_memory.cc StageMemoryTerms).
#define BP_LAYOUT_MEMORY_FORMULAS(X)                                          \
  X(first_stage_weight_and_optimizer_bytes,                                   \
    "rank_state_bytes(first_rank_blocks) + " BP_FORMULA_FIRST_STAGE_STATE)    \
  X(last_stage_weight_and_optimizer_bytes,                                    \
    "rank_state_bytes(last_rank_blocks) + " BP_FORMULA_LAST_STAGE_STATE)      \
  X(weight_and_optimizer_bytes,                                               \
    "max(max(first_stage_weight_and_optimizer_bytes, "                        \
    "last_stage_weight_and_optimizer_bytes), p > 1 && !twin_stages ? "        \
    "weight_space + weight_grad_space + optimizer_space : 0)")                \
  X(first_stage_mem_tier1_req,                                                \
    "rank_tier1_req(first_rank_blocks) + " BP_FORMULA_FIRST_STAGE_TIER1)      \
  X(last_stage_mem_tier1_req,                                                 \
    "rank_tier1_req(last_rank_blocks) + " BP_FORMULA_LAST_STAGE_TIER1)        \
  X(max_stage_mem_tier1_req,                                                  \
    "max(max(first_stage_mem_tier1_req, last_stage_mem_tier1_req), p > 1 "    \
    "&& !twin_stages ? proc_mem_tier1_cap_req : 0)")

// clang-format on

// One row of the table, with its group.
struct FigureRow {
  const char* name;
  FigureUnit unit;
  FigureGroup group;
  const char* label;  // "" when the page's summary does not show it
  const char* meaning;
  const char* formula;  // "" for a block figure
};

// Every row, list by list in the order above.
absl::Span<const FigureRow> FigureTable();

// The row of `name`, or nullptr.
const FigureRow* FindFigureRow(absl::string_view name);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_FIGURES_FIGURE_TABLE_H_
