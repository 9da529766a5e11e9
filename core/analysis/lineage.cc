#include "core/analysis/lineage.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/base/format.h"
#include "core/schedule/schedule_ir.h"
#include "core/spec/accounting.h"

namespace blueprint {
namespace {

// The table, hand-laid: one row per figure, the formula then its sources.
// clang-format off

// Formula fragments shared by several rows (string literal concatenation).

// A block's forward and backward times before offload (figures.cc
// ForwardBlockTimes, BackwardBlockTimes).
#define BP_FW_BASE "(block_fw_time + baseblock_fw_tp_time_exposed)"
#define BP_FW_EDGE \
  "(block_fw_time + edgeblock_fw_tp_time_exposed + chunk_fw_pp_time)"
#define BP_BW_BASE                                                      \
  "(block_re_time + baseblock_recomm_time_exposed + block_agrad_time + " \
  "block_wgrad_time + baseblock_agrad_tp_time_exposed)"
#define BP_BW_EDGE                                                      \
  "(block_re_time + edgeblock_recomm_time_exposed + block_agrad_time + " \
  "block_wgrad_time + edgeblock_agrad_tp_time_exposed + chunk_bw_pp_time)"
#define BP_BW_MEM "(block_agrad_mem_time + block_wgrad_mem_time)"
// Offloaded activations (ActivationOffloadBytes).
#define BP_ACT_OFFLOAD \
  "(full_recompute ? block_act_checkpoint_size : block_act_storage_space)"
// The bytes one block moves to or from tier 2 (ForwardOffloadBytes,
// BackwardOffloadBytes).
#define BP_FW_OFFLOAD                                  \
  "max(offload_weights * block_weight_space, "         \
  "offload_activations * " BP_ACT_OFFLOAD ")"
#define BP_BW_OFFLOAD                                                    \
  "(offload_weights * block_weight_space + offload_activations * "        \
  BP_ACT_OFFLOAD " + offload_optimizer * block_optimizer_space)"
// The time offload can hide in (OffloadRequirementTerms).
#define BP_FW_WINDOW \
  "(min(" BP_FW_BASE ", " BP_FW_EDGE ") - block_fw_mem_time)"
#define BP_BW_WINDOW "(min(" BP_BW_BASE ", " BP_BW_EDGE ") - " BP_BW_MEM ")"
// A per-block quantity over the step: bpc - 1 base blocks and one edge block
// per chunk, m * v chunks (PerStep).
#define BP_PER_STEP(base, edge) \
  "m * v * ((blocks_per_chunk - 1) * " base " + " edge ")"
// Microbatches in flight on stage 0 (ComputeMemory).
#define BP_IN_FLIGHT                                                 \
  "(simulated_schedule ? simulated_in_flight(p, v, m) : " \
  "scheduled_in_flight && training ? order_in_flight(p, v, m) : " \
  "v > 1 ? min(m, p) * (1 + (p - 1) / (v * p)) : min(m, p))"

// The exposed communication of one chunk's forward and backward, which
// DualPipe's F&B hides under compute (figures.cc
// OverlappedForwardBackwardTime).
#define BP_CHUNK_COMM                                                        \
  "((blocks_per_chunk - 1) * (baseblock_fw_tp_time_exposed + "              \
  "baseblock_recomm_time_exposed + baseblock_agrad_tp_time_exposed) + "     \
  "edgeblock_fw_tp_time_exposed + edgeblock_recomm_time_exposed + "         \
  "edgeblock_agrad_tp_time_exposed + chunk_fw_pp_time + chunk_bw_pp_time)"

// Sources shared by several rows.
#define BP_FW_BLOCK_SOURCES                                           \
  "block:block_fw_time", "block:baseblock_fw_tp_time_exposed",        \
      "block:edgeblock_fw_tp_time_exposed", "iteration:chunk_fw_pp_time"
#define BP_BW_BLOCK_SOURCES                                               \
  "block:block_re_time", "block:baseblock_recomm_time_exposed",           \
      "block:edgeblock_recomm_time_exposed", "block:block_agrad_time",    \
      "block:block_wgrad_time", "block:baseblock_agrad_tp_time_exposed",  \
      "block:edgeblock_agrad_tp_time_exposed", "iteration:chunk_bw_pp_time"
#define BP_OFFLOAD_SOURCES                                          \
  "block:block_weight_space", "block:block_act_storage_space",      \
      "block:block_act_checkpoint_size", "spec:parallelism.recompute", \
      "spec:options.offload", "system:mem2"

constexpr FigureFormula kIterationRows[] = {
    {"block_fw_pp_size",
     "p > 1 ? pipeline_message_bytes : 0",
     {"spec:batch.microbatch_size", "spec:model.seq_size", "spec:model.hidden",
      "spec:parallelism.tensor.communication", "spec:parallelism.tensor.degree",
      "spec:parallelism.pipeline.degree", "spec:options.datatype"}},
    {"block_bw_pp_size",
     "training ? block_fw_pp_size : 0",
     {"iteration:block_fw_pp_size", "derived:training"}},
    {"block_dp_size",
     "training && d > 1 ? (shard_parameters ? "
     "block_weight_grad_space_no_sharding / 4 * weight_bytes_per_element : "
     "block_weight_space) : 0",
     {"block:block_weight_space", "block:block_weight_grad_space_no_sharding",
      "derived:training", "spec:parallelism.data.degree",
      "spec:parallelism.data.sharding", "spec:options.weight_datatype",
      "spec:options.datatype"}},
    {"dp_bw_overlap_req_chunk",
     "training && d > 1 && data_overlap ? overlapped_chunks_bw_req("
     "block_dp_size, block_dp_time, chunk_bw_time, chunk_bw_pp_time, "
     "block_agrad_flops_time, block_wgrad_flops_time, block_re_flops_time, "
     "blocks_per_chunk, p, v) : 0",
     {"iteration:block_dp_size", "iteration:block_dp_grad_size",
      "iteration:block_dp_time",
      "iteration:chunk_bw_time", "iteration:chunk_bw_pp_time",
      "block:block_agrad_flops_time", "block:block_wgrad_flops_time",
      "block:block_re_flops_time", "derived:blocks_per_chunk",
      "derived:virtual_stages", "derived:training",
      "spec:parallelism.pipeline.degree", "spec:parallelism.data.degree",
      "spec:parallelism.data.overlap", "system:networks[$dp]"}},
    {"dp_bw_overlap_req_tail",
     "training && d > 1 && data_overlap ? last_chunk_bw_req(block_dp_size, "
     "block_dp_time, baseblock_bw_time, edgeblock_bw_time, chunk_bw_pp_time, "
     "blocks_per_chunk) : 0",
     {"iteration:block_dp_size", "iteration:block_dp_grad_size",
      "iteration:block_dp_time",
      "iteration:baseblock_bw_time", "iteration:edgeblock_bw_time",
      "iteration:chunk_bw_pp_time", "iteration:chunk_bw_time",
      "derived:blocks_per_chunk", "derived:training",
      "spec:parallelism.data.degree", "spec:parallelism.data.overlap",
      "system:networks[$dp]"}},
    {"fw_time",
     "blocks_per_stage * m * block_fw_time",
     {"block:block_fw_time", "derived:blocks_per_stage",
      "derived:microbatches"}},
    {"bw_time",
     "blocks_per_stage * m * block_agrad_time + "
     "blocks_per_stage * m * block_wgrad_time",
     {"block:block_agrad_time", "block:block_wgrad_time",
      "derived:blocks_per_stage", "derived:microbatches"}},
    {"optim_step_time",
     "rank_blocks * block_optim_time",
     {"block:block_optim_time", "derived:blocks_per_stage", "derived:stages_per_rank"}},
    {"recompute_time",
     "blocks_per_stage * m * block_re_time",
     {"block:block_re_time", "derived:blocks_per_stage",
      "derived:microbatches"}},
    {"recomm_link_time",
     "training ? " BP_PER_STEP("baseblock_recomm_time",
                               "edgeblock_recomm_time") " : 0",
     {"block:baseblock_recomm_time", "block:edgeblock_recomm_time",
      "derived:blocks_per_chunk", "derived:virtual_stages",
      "derived:microbatches", "derived:training"}},
    {"recomm_exposed_time",
     "training ? " BP_PER_STEP("baseblock_recomm_time_exposed",
                               "edgeblock_recomm_time_exposed") " : 0",
     {"block:baseblock_recomm_time_exposed",
      "block:edgeblock_recomm_time_exposed", "derived:blocks_per_chunk",
      "derived:virtual_stages", "derived:microbatches", "derived:training"}},
    {"bubble_time",
     "simulated_schedule ? simulated_bubble(p, v, m, "
     "chunk_fw_time, chunk_bw_time, blocks_per_chunk * block_wgrad_time, "
     "chunk_fb_time) : "
     "bubble_chunks * chunk_time - bubble_reduction_time",
     {"iteration:bubble_chunks", "iteration:chunk_time",
      "iteration:bubble_reduction_time", "spec:parallelism.pipeline.schedule",
      "iteration:chunk_fw_time",
      "iteration:chunk_bw_time", "iteration:chunk_fb_time",
      "block:block_wgrad_time",
      "derived:blocks_per_chunk", "derived:virtual_stages",
      "derived:microbatches", "spec:parallelism.pipeline.degree"}},
    {"tp_comm_link_time",
     BP_PER_STEP("baseblock_fw_tp_time", "edgeblock_fw_tp_time")
     " + " BP_PER_STEP("baseblock_agrad_tp_time", "edgeblock_agrad_tp_time"),
     {"block:baseblock_fw_tp_time", "block:edgeblock_fw_tp_time",
      "block:baseblock_agrad_tp_time", "block:edgeblock_agrad_tp_time",
      "derived:blocks_per_chunk", "derived:virtual_stages",
      "derived:microbatches"}},
    {"pp_comm_link_time",
     "p > 1 ? m * v * chunk_fw_pp_time + "
     "(training ? m * v * chunk_bw_pp_time : 0) : 0",
     {"iteration:chunk_fw_pp_time", "iteration:chunk_bw_pp_time",
      "derived:virtual_stages", "derived:microbatches", "derived:training",
      "spec:parallelism.pipeline.degree"}},
    {"dp_comm_link_time",
     "training && d > 1 ? rank_blocks * block_dp_time : 0",
     {"iteration:block_dp_time", "derived:blocks_per_stage", "derived:stages_per_rank",
      "derived:training", "spec:parallelism.data.degree"}},
    {"tp_comm_exposed_time",
     BP_PER_STEP("baseblock_fw_tp_time_exposed",
                 "edgeblock_fw_tp_time_exposed")
     " + " BP_PER_STEP("baseblock_agrad_tp_time_exposed",
                       "edgeblock_agrad_tp_time_exposed"),
     {"block:baseblock_fw_tp_time_exposed",
      "block:edgeblock_fw_tp_time_exposed",
      "block:baseblock_agrad_tp_time_exposed",
      "block:edgeblock_agrad_tp_time_exposed", "derived:blocks_per_chunk",
      "derived:virtual_stages", "derived:microbatches"}},
    {"pp_comm_exposed_time",
     "pp_comm_link_time",
     {"iteration:pp_comm_link_time"}},
    {"dp_comm_exposed_time",
     "training && d > 1 ? (data_overlap ? block_dp_time + "
     "overlapped_chunks_exposed(block_dp_time, chunk_bw_time, "
     "chunk_bw_pp_time, block_agrad_flops_time, block_wgrad_flops_time, "
     "block_re_flops_time, block_optim_time, optimizer_sharding, "
     "blocks_per_chunk, p, v) + last_chunk_exposed(block_dp_time, "
     "baseblock_bw_time, edgeblock_bw_time, chunk_bw_pp_time, "
     "blocks_per_chunk) : rank_blocks * block_dp_time) : 0",
     {"iteration:block_dp_time", "iteration:chunk_bw_time",
      "iteration:chunk_bw_pp_time", "iteration:baseblock_bw_time",
      "iteration:edgeblock_bw_time", "block:block_agrad_flops_time",
      "block:block_wgrad_flops_time", "block:block_re_flops_time",
      "block:block_optim_time", "derived:blocks_per_stage", "derived:stages_per_rank",
      "derived:blocks_per_chunk", "derived:virtual_stages",
      "derived:training", "spec:parallelism.data.degree",
      "spec:parallelism.data.overlap",
      "spec:parallelism.data.sharding",
      "spec:parallelism.pipeline.degree", "system:networks[$dp]"}},
    {"fw_offload_exposed_time",
     BP_PER_STEP("(baseblock_fw_time - " BP_FW_BASE ")",
                 "(edgeblock_fw_time - " BP_FW_EDGE ")"),
     {"iteration:baseblock_fw_time", "iteration:edgeblock_fw_time",
      BP_FW_BLOCK_SOURCES, "derived:blocks_per_chunk",
      "derived:virtual_stages", "derived:microbatches"}},
    {"bw_offload_exposed_time",
     "training ? " BP_PER_STEP("(baseblock_bw_time - " BP_BW_BASE ")",
                               "(edgeblock_bw_time - " BP_BW_EDGE ")") " : 0",
     {"iteration:baseblock_bw_time", "iteration:edgeblock_bw_time",
      BP_BW_BLOCK_SOURCES, "derived:blocks_per_chunk",
      "derived:virtual_stages", "derived:microbatches", "derived:training"}},
    {"total_time",
     "fw_time + bw_time + optim_step_time + fw_offload_exposed_time + "
     "bw_offload_exposed_time + recompute_time + recomm_exposed_time + "
     "bubble_time + tp_comm_exposed_time + pp_comm_exposed_time + "
     "dp_comm_exposed_time - fb_overlap_saving_time + stage_imbalance_time + "
     "stage_extra_dp_time + embedding_sync_time + twin_stage_sync_time",
     {"iteration:fw_time", "iteration:bw_time", "iteration:optim_step_time",
      "iteration:fw_offload_exposed_time",
      "iteration:bw_offload_exposed_time", "iteration:recompute_time",
      "iteration:recomm_exposed_time", "iteration:bubble_time",
      "iteration:tp_comm_exposed_time", "iteration:pp_comm_exposed_time",
      "iteration:dp_comm_exposed_time", "iteration:fb_overlap_saving_time",
      "iteration:stage_imbalance_time", "iteration:stage_extra_dp_time",
      "iteration:embedding_sync_time", "iteration:twin_stage_sync_time"}},
    {"act_offload_bw_req",
     "rate(" BP_ACT_OFFLOAD ", " BP_FW_WINDOW ")",
     {"block:block_act_storage_space", "block:block_act_checkpoint_size",
      "spec:parallelism.recompute", BP_FW_BLOCK_SOURCES,
      "block:block_fw_mem_time"}},
    {"weight_offload_bw_req",
     "rate(block_weight_space, " BP_FW_WINDOW ")",
     {"block:block_weight_space", BP_FW_BLOCK_SOURCES,
      "block:block_fw_mem_time"}},
    {"optim_offload_bw_req",
     "training ? rate(block_weight_grad_space + block_optimizer_space, "
     BP_BW_WINDOW ") : 0",
     {"block:block_weight_grad_space", "block:block_optimizer_space",
      BP_BW_BLOCK_SOURCES, "block:block_agrad_mem_time",
      "block:block_wgrad_mem_time", "derived:training"}},
    {"offload_mem_bw_req",
     "training ? max(rate(" BP_FW_OFFLOAD ", " BP_FW_WINDOW "), rate("
     BP_BW_OFFLOAD ", " BP_BW_WINDOW ")) : rate(" BP_FW_OFFLOAD ", "
     BP_FW_WINDOW ")",
     {BP_OFFLOAD_SOURCES, "block:block_optimizer_space", BP_FW_BLOCK_SOURCES,
      "block:block_fw_mem_time", BP_BW_BLOCK_SOURCES,
      "block:block_agrad_mem_time", "block:block_wgrad_mem_time",
      "derived:training"}},
    {"useful_flops",
     // Quirk (MODEL.md §6.7): the optimizer FLOPs counted per microbatch.
     "block.useful_flops",
     {"block:useful_flops"}},
    {"compute_efficiency",
     "blocks_per_stage * m * useful_flops / matrix_peak_flops / "
     "(fw_time + bw_time + optim_step_time)",
     {"iteration:useful_flops", "iteration:fw_time", "iteration:bw_time",
      "iteration:optim_step_time", "derived:blocks_per_stage",
      "derived:microbatches", "system:matrix.$dtype.tflops"}},
    {"system_efficiency",
     "(fw_time + bw_time + optim_step_time) / total_time",
     {"iteration:fw_time", "iteration:bw_time", "iteration:optim_step_time",
      "iteration:total_time"}},
    {"total_efficiency",
     "blocks_per_stage * m * useful_flops / matrix_peak_flops / total_time",
     {"iteration:useful_flops", "iteration:total_time",
      "derived:blocks_per_stage", "derived:microbatches",
      "system:matrix.$dtype.tflops"}},
    {"sample_rate",
     "global_batch_size / total_time",
     {"iteration:total_time", "spec:batch.global_batch_size"}},
    // BP_SCHEDULE_TERMS
    {"chunk_fw_time",
     "(blocks_per_chunk - 1) * baseblock_fw_time + edgeblock_fw_time",
     {"iteration:baseblock_fw_time", "iteration:edgeblock_fw_time",
      "derived:blocks_per_chunk"}},
    {"chunk_bw_time",
     "(blocks_per_chunk - 1) * baseblock_bw_time + edgeblock_bw_time",
     {"iteration:baseblock_bw_time", "iteration:edgeblock_bw_time",
      "derived:blocks_per_chunk"}},
    {"chunk_time",
     "chunk_fw_time + chunk_bw_time",
     {"iteration:chunk_fw_time", "iteration:chunk_bw_time"}},
    {"chunk_fw_pp_time",
     // Quirk (MODEL.md §6.4): the p2p latency is paid for a 0-byte message.
     "p2p_time(block_fw_pp_size)",
     {"iteration:block_fw_pp_size", "system:networks[$pp]"}},
    {"chunk_bw_pp_time",
     "p2p_time(block_bw_pp_size)",
     {"iteration:block_bw_pp_size", "system:networks[$pp]"}},
    {"baseblock_fw_time",
     BP_FW_BASE " + max(0, mem2_time(" BP_FW_OFFLOAD
     ") + block_fw_mem_time - " BP_FW_BASE ")",
     {"block:block_fw_time", "block:baseblock_fw_tp_time_exposed",
      "block:block_fw_mem_time", BP_OFFLOAD_SOURCES}},
    {"edgeblock_fw_time",
     BP_FW_EDGE " + max(0, mem2_time(" BP_FW_OFFLOAD
     ") + block_fw_mem_time - " BP_FW_EDGE ")",
     {"block:block_fw_time", "block:edgeblock_fw_tp_time_exposed",
      "iteration:chunk_fw_pp_time", "block:block_fw_mem_time",
      BP_OFFLOAD_SOURCES}},
    {"baseblock_bw_time",
     BP_BW_BASE " + max(0, (training ? mem2_time(" BP_BW_OFFLOAD
     ") : 0) + " BP_BW_MEM " - " BP_BW_BASE ")",
     {"block:block_re_time", "block:baseblock_recomm_time_exposed",
      "block:block_agrad_time", "block:block_wgrad_time",
      "block:baseblock_agrad_tp_time_exposed", "block:block_agrad_mem_time",
      "block:block_wgrad_mem_time", "block:block_optimizer_space",
      "derived:training", BP_OFFLOAD_SOURCES}},
    {"edgeblock_bw_time",
     BP_BW_EDGE " + max(0, (training ? mem2_time(" BP_BW_OFFLOAD
     ") : 0) + " BP_BW_MEM " - " BP_BW_EDGE ")",
     {"block:block_re_time", "block:edgeblock_recomm_time_exposed",
      "block:block_agrad_time", "block:block_wgrad_time",
      "block:edgeblock_agrad_tp_time_exposed", "iteration:chunk_bw_pp_time",
      "block:block_agrad_mem_time", "block:block_wgrad_mem_time",
      "block:block_optimizer_space", "derived:training", BP_OFFLOAD_SOURCES}},
    {"bubble_reduction_time",
     "blocks_per_chunk > 1 ? bubble_reduction_blocks * (baseblock_fw_time + "
     "edgeblock_fw_time + baseblock_bw_time + edgeblock_bw_time) / 2 : "
     "bubble_reduction_blocks * (edgeblock_fw_time + edgeblock_bw_time)",
     {"derived:bubble_reduction_blocks", "derived:blocks_per_chunk",
      "iteration:baseblock_fw_time", "iteration:edgeblock_fw_time",
      "iteration:baseblock_bw_time", "iteration:edgeblock_bw_time"}},
    {"extra_interleaving_bubbles",
     "!simulated_schedule && m % p != 0 ? (v - 1) * (p - m % p) : 0",
     {"derived:virtual_stages", "derived:microbatches",
      "spec:parallelism.pipeline.degree",
      "spec:parallelism.pipeline.schedule"}},
    {"bubble_chunks",
     "simulated_schedule ? (chunk_time > 0 ? bubble_time / chunk_time : 0) "
     ": p - 1 + extra_interleaving_bubbles",
     {"iteration:extra_interleaving_bubbles",
      "spec:parallelism.pipeline.degree", "spec:parallelism.pipeline.schedule",
      "iteration:bubble_time", "iteration:chunk_time"}},
    {"chunk_bw_input_time",
     "training ? chunk_bw_time - chunk_bw_weight_time : 0",
     {"iteration:chunk_bw_time", "iteration:chunk_bw_weight_time",
      "derived:training"}},
    {"chunk_bw_weight_time",
     "training ? min(chunk_bw_time, blocks_per_chunk * block_wgrad_time) : 0",
     {"iteration:chunk_bw_time", "derived:blocks_per_chunk",
      "block:block_wgrad_time", "derived:training"}},
    {"chunk_fb_time",
     "overlapped_forward_backward && training ? max(chunk_fw_time + "
     "chunk_bw_input_time + chunk_bw_weight_time - " BP_CHUNK_COMM ", "
     BP_CHUNK_COMM ") : 0",
     {"iteration:chunk_fw_time", "iteration:chunk_bw_input_time",
      "iteration:chunk_bw_weight_time",
      "block:baseblock_fw_tp_time_exposed",
      "block:baseblock_recomm_time_exposed",
      "block:baseblock_agrad_tp_time_exposed",
      "block:edgeblock_fw_tp_time_exposed",
      "block:edgeblock_recomm_time_exposed",
      "block:edgeblock_agrad_tp_time_exposed", "iteration:chunk_fw_pp_time",
      "iteration:chunk_bw_pp_time", "derived:blocks_per_chunk",
      "derived:training", "spec:parallelism.pipeline.schedule"}},
    {"fb_overlap_saving_time",
     "overlapped_forward_backward && training ? "
     "simulated_fewest_fb_pairs(p, v, m) * "
     "max(0, chunk_fw_time + chunk_bw_input_time + chunk_bw_weight_time - "
     "chunk_fb_time) : 0",
     {"iteration:chunk_fw_time", "iteration:chunk_bw_input_time",
      "iteration:chunk_bw_weight_time", "iteration:chunk_fb_time",
      "derived:virtual_stages", "derived:microbatches", "derived:training",
      "spec:parallelism.pipeline.degree",
      "spec:parallelism.pipeline.schedule"}},
    {"peak_inflight_microbatches",
     BP_IN_FLIGHT,
     {"derived:microbatches", "derived:virtual_stages", "derived:training",
      "spec:parallelism.pipeline.degree",
      "spec:parallelism.pipeline.schedule", "spec:options.profile"}},
    {"block_dp_time",
     "training && d > 1 ? dp_time(block_dp_size, block_dp_grad_size, d, "
     "optimizer_sharding) : 0",
     {"iteration:block_dp_size", "iteration:block_dp_grad_size",
      "derived:training", "spec:parallelism.data.degree",
      "spec:parallelism.data.sharding", "system:networks[$dp]"}},
    {"block_dp_grad_size",
     "grad_reduce_bytes > 0 ? block_weight_grad_space_no_sharding / 4 * "
     "grad_reduce_bytes : block_dp_size",
     {"iteration:block_dp_size", "block:block_weight_grad_space_no_sharding",
      "spec:options.grad_reduce_datatype", "spec:options.profile",
      "spec:options.precision", "spec:options.datatype"}},
    // The first and last stage's own work (0 without a vocabulary).
    {"first_stage_microbatch_time",
     "first_stage.block_fw_time + first_stage.baseblock_fw_tp_time_exposed + "
     "(training ? first_stage.block_agrad_time + first_stage.block_wgrad_time "
     "+ first_stage.baseblock_agrad_tp_time_exposed : 0)",
     {"first_stage:block_fw_time", "first_stage:baseblock_fw_tp_time_exposed", "first_stage:block_agrad_time", "first_stage:block_wgrad_time", "first_stage:baseblock_agrad_tp_time_exposed",
      "derived:training"}},
    {"last_stage_microbatch_time",
     "last_stage.block_fw_time + last_stage.baseblock_fw_tp_time_exposed + "
     "(training ? last_stage.block_agrad_time + last_stage.block_wgrad_time + "
     "last_stage.baseblock_agrad_tp_time_exposed : 0)",
     {"last_stage:block_fw_time", "last_stage:baseblock_fw_tp_time_exposed", "last_stage:block_agrad_time", "last_stage:block_wgrad_time", "last_stage:baseblock_agrad_tp_time_exposed",
      "derived:training"}},
    {"first_stage_extra_time",
     "twin_stages ? m / 2 * (first_stage_microbatch_time + "
     "last_stage_microbatch_time) + (training ? first_stage.block_optim_time "
     "+ last_stage.block_optim_time : 0) : m * first_stage_microbatch_time + "
     "(training ? first_stage.block_optim_time : 0)",
     {"iteration:first_stage_microbatch_time",
      "iteration:last_stage_microbatch_time", "first_stage:block_optim_time",
      "last_stage:block_optim_time", "derived:microbatches",
      "derived:training", "spec:parallelism.pipeline.schedule",
      "spec:parallelism.pipeline.degree"}},
    {"last_stage_extra_time",
     "twin_stages ? first_stage_extra_time : m * last_stage_microbatch_time + "
     "(training ? last_stage.block_optim_time + (embedding_copy ? "
     "first_stage.block_optim_time : 0) : 0)",
     {"iteration:last_stage_microbatch_time", "last_stage:block_optim_time",
      "iteration:first_stage_extra_time",
      "derived:microbatches", "derived:training", "first_stage:block_optim_time",
      "spec:model.vocabulary.tied", "derived:padded_vocabulary",
      "spec:parallelism.pipeline.degree", "spec:parallelism.pipeline.schedule"}},
    {"stage_imbalance_time",
     "twin_stages ? first_stage_extra_time : (p == 1 ? "
     "first_stage_extra_time + last_stage_extra_time : m * "
     "max(first_stage_microbatch_time, last_stage_microbatch_time) + "
     "min(first_stage_microbatch_time, last_stage_microbatch_time) + "
     "(training ? max(first_stage.block_optim_time, "
     "last_stage.block_optim_time + (embedding_copy ? "
     "first_stage.block_optim_time : 0)) : 0))",
     {"iteration:first_stage_microbatch_time",
      "iteration:last_stage_microbatch_time",
      "iteration:first_stage_extra_time", "iteration:last_stage_extra_time",
      "first_stage:block_optim_time", "last_stage:block_optim_time",
      "derived:microbatches", "derived:training",
      "spec:model.vocabulary.tied", "derived:padded_vocabulary",
      "spec:parallelism.pipeline.degree",
      "spec:parallelism.pipeline.schedule"}},
    {"stage_extra_dp_time",
     "training && d > 1 ? (holds_both_ends ? "
     "dp_time(first_stage.block_weight_space) "
     "+ dp_time(last_stage.block_weight_space) : "
     "max(dp_time(first_stage.block_weight_space), "
     "dp_time(last_stage.block_weight_space) + (embedding_copy ? "
     "dp_time(first_stage.block_weight_space) : 0))) : 0",
     {"first_stage:block_weight_space", "last_stage:block_weight_space",
      "spec:parallelism.data.degree", "spec:model.vocabulary.tied",
      "derived:padded_vocabulary", "derived:training",
      "spec:parallelism.pipeline.degree", "spec:parallelism.pipeline.schedule",
      "system:networks[$dp]"}},
    {"embedding_sync_time",
     "embedding_sync ? "
     "pp_all_reduce_time(first_stage.block_weight_grad_space_no_sharding) : "
     "0",
     {"first_stage:block_weight_grad_space_no_sharding",
      "spec:model.vocabulary.tied", "derived:padded_vocabulary",
      "derived:training", "spec:parallelism.pipeline.degree",
      "spec:parallelism.pipeline.schedule", "system:networks[$pp]"}},
    {"twin_stage_sync_time",
     "training && twin_stages ? pp_all_reduce_time(rank_blocks * "
     "block_weight_grad_space_no_sharding + "
     "first_stage.block_weight_grad_space_no_sharding + "
     "last_stage.block_weight_grad_space_no_sharding) : 0",
     {"block:block_weight_grad_space_no_sharding",
      "first_stage:block_weight_grad_space_no_sharding",
      "last_stage:block_weight_grad_space_no_sharding",
      "derived:blocks_per_stage", "derived:stages_per_rank",
      "derived:training", "spec:parallelism.pipeline.schedule",
      "spec:parallelism.pipeline.degree", "system:networks[$pp]"}},
    {"first_stage_time",
     "fw_time + bw_time + recompute_time + optim_step_time + "
     "first_stage_extra_time + (p == 1 ? last_stage_extra_time : 0)",
     {"iteration:fw_time", "iteration:bw_time", "iteration:recompute_time",
      "iteration:optim_step_time", "iteration:first_stage_extra_time",
      "iteration:last_stage_extra_time", "spec:parallelism.pipeline.degree"}},
    {"last_stage_time",
     "p == 1 ? first_stage_time : fw_time + bw_time + recompute_time + "
     "optim_step_time + last_stage_extra_time",
     {"iteration:fw_time", "iteration:bw_time", "iteration:recompute_time",
      "iteration:optim_step_time", "iteration:last_stage_extra_time",
      "iteration:first_stage_time", "spec:parallelism.pipeline.degree"}},
    {"parameters_total",
     "megatron_parameters",
     {"spec:model", "derived:padded_vocabulary"}},
    {"parameters_active",
     "megatron_active_parameters",
     {"spec:model", "derived:padded_vocabulary"}},
    {"model_flops_per_iteration",
     "megatron_model_flops",
     {"spec:model", "derived:padded_vocabulary",
      "spec:batch.global_batch_size", "derived:training"}},
    {"mfu",
     "model_flops_per_iteration / (total_time * matrix_peak_flops * t * p * "
     "d)",
     {"iteration:model_flops_per_iteration", "iteration:total_time",
      "system:matrix.$dtype.tflops", "spec:parallelism.tensor.degree",
      "spec:parallelism.pipeline.degree", "spec:parallelism.data.degree"}},
};

constexpr FigureFormula kMemoryRows[] = {
    {"weight_space_with_offload",
     "block_weight_space * 2",
     {"block:block_weight_space"}},
    {"act_space_with_offload",
     "full_recompute ? block_act_working_space : "
     "block_act_working_space + block_act_storage_space",
     {"block:block_act_working_space", "block:block_act_storage_space",
      "spec:parallelism.recompute"}},
    {"act_checkpoint_size_with_offload",
     // null in Calculon's stats for inference.
     "training && full_recompute ? block_act_checkpoint_size * 2 : 0",
     {"block:block_act_checkpoint_size", "derived:training",
      "spec:parallelism.recompute"}},
    {"act_grad_space_with_offload",
     "act_grad_space",
     {"memory:act_grad_space"}},
    {"weight_grad_space_with_offload",
     "training ? block_weight_grad_space_no_sharding + "
     "block_weight_grad_space : 0",
     {"block:block_weight_grad_space",
      "block:block_weight_grad_space_no_sharding", "derived:training"}},
    {"optimizer_space_with_offload",
     "training ? block_optimizer_space * 2 : 0",
     {"block:block_optimizer_space", "derived:training"}},
    {"weight_space",
     "block_weight_space * rank_blocks",
     {"block:block_weight_space", "derived:blocks_per_stage", "derived:stages_per_rank"}},
    {"act_space",
     "training && !full_recompute ? block_act_working_space + "
     "block_act_storage_space * (rank_blocks * " BP_IN_FLIGHT
     " - 1) : block_act_working_space",
     {"block:block_act_working_space", "block:block_act_storage_space",
      "derived:blocks_per_stage", "derived:stages_per_rank", "derived:microbatches",
      "derived:virtual_stages", "derived:training",
      "spec:parallelism.pipeline.degree", "spec:parallelism.recompute",
      "spec:parallelism.pipeline.schedule", "spec:options.profile"}},
    {"act_checkpoint_size",
     "training && full_recompute ? rank_blocks * "
     "block_act_checkpoint_size * " BP_IN_FLIGHT " : 0",
     {"block:block_act_checkpoint_size", "derived:blocks_per_stage", "derived:stages_per_rank",
      "derived:microbatches", "derived:virtual_stages", "derived:training",
      "spec:parallelism.pipeline.degree", "spec:parallelism.recompute",
      "spec:parallelism.pipeline.schedule", "spec:options.profile"}},
    {"act_grad_space",
     "training ? block_act_grad_space : 0",
     {"block:block_act_grad_space", "derived:training"}},
    {"weight_grad_space",
     "training ? (rank_blocks == 1 ? "
     "block_weight_grad_space_no_sharding : "
     "block_weight_grad_space_no_sharding + block_weight_grad_space * "
     "(rank_blocks - 1)) : 0",
     {"block:block_weight_grad_space",
      "block:block_weight_grad_space_no_sharding", "derived:blocks_per_stage", "derived:stages_per_rank",
      "derived:training"}},
    {"optimizer_space",
     "training ? block_optimizer_space * rank_blocks : 0",
     {"block:block_optimizer_space", "derived:blocks_per_stage", "derived:stages_per_rank",
      "derived:training"}},
    {"proc_mem_tier1_cap_req",
     "(offload_weights ? weight_space_with_offload : weight_space) + "
     "(offload_activations ? act_space_with_offload + (full_recompute ? "
     "act_checkpoint_size_with_offload : 0) : act_space + "
     "act_checkpoint_size) + (offload_optimizer ? "
     "weight_grad_space_with_offload + optimizer_space_with_offload : "
     "weight_grad_space + optimizer_space) + act_grad_space",
     {"memory:weight_space", "memory:act_space", "memory:act_checkpoint_size",
      "memory:act_grad_space", "memory:weight_grad_space",
      "memory:optimizer_space", "memory:weight_space_with_offload",
      "memory:act_space_with_offload",
      "memory:act_checkpoint_size_with_offload",
      "memory:weight_grad_space_with_offload",
      "memory:optimizer_space_with_offload", "spec:parallelism.recompute",
      "spec:options.offload"}},
    {"proc_mem_tier2_cap_req",
     "(offload_weights ? weight_space : 0) + (offload_activations ? "
     "(full_recompute ? act_checkpoint_size : act_space) : 0) + "
     "(offload_optimizer ? block_weight_grad_space * rank_blocks + "
     "optimizer_space : 0)",
     {"memory:weight_space", "memory:act_space", "memory:act_checkpoint_size",
      "memory:optimizer_space", "block:block_weight_grad_space",
      "derived:blocks_per_stage", "derived:stages_per_rank", "spec:parallelism.recompute",
      "spec:options.offload"}},
    // BP_MEMORY_TERMS
    {"first_stage_weight_and_optimizer_bytes",
     "weight_space + weight_grad_space + optimizer_space + "
     "first_stage.block_weight_space + (training ? "
     "first_stage.block_weight_grad_space + first_stage.block_optimizer_space "
     ": 0) + (holds_both_ends ? last_stage.block_weight_space + (training ? "
     "last_stage.block_weight_grad_space + last_stage.block_optimizer_space : "
     "0) : 0)",
     {"memory:weight_space", "memory:weight_grad_space",
      "memory:optimizer_space", "first_stage:block_weight_space",
      "first_stage:block_weight_grad_space",
      "first_stage:block_optimizer_space", "last_stage:block_weight_space",
      "last_stage:block_weight_grad_space", "last_stage:block_optimizer_space",
      "derived:training", "spec:parallelism.pipeline.degree",
      "spec:parallelism.pipeline.schedule"}},
    {"last_stage_weight_and_optimizer_bytes",
     "weight_space + weight_grad_space + optimizer_space + "
     "last_stage.block_weight_space + (training ? "
     "last_stage.block_weight_grad_space + last_stage.block_optimizer_space : "
     "0) + (holds_both_ends ? first_stage.block_weight_space + (training ? "
     "first_stage.block_weight_grad_space + first_stage.block_optimizer_space "
     ": 0) : 0) + (embedding_copy ? "
     "first_stage.block_weight_space + (training ? "
     "first_stage.block_weight_grad_space + first_stage.block_optimizer_space "
     ": 0) : 0)",
     {"memory:weight_space", "memory:weight_grad_space",
      "memory:optimizer_space", "first_stage:block_weight_space",
      "first_stage:block_weight_grad_space",
      "first_stage:block_optimizer_space", "last_stage:block_weight_space",
      "last_stage:block_weight_grad_space", "last_stage:block_optimizer_space",
      "derived:training", "spec:model.vocabulary.tied",
      "derived:padded_vocabulary", "spec:parallelism.pipeline.degree",
      "spec:parallelism.pipeline.schedule"}},
    {"weight_and_optimizer_bytes",
     "max(first_stage_weight_and_optimizer_bytes, "
     "last_stage_weight_and_optimizer_bytes)",
     {"memory:first_stage_weight_and_optimizer_bytes",
      "memory:last_stage_weight_and_optimizer_bytes"}},
    {"first_stage_mem_tier1_req",
     "proc_mem_tier1_cap_req + first_stage.block_weight_space + "
     "first_stage.block_act_working_space + (training ? "
     "first_stage.block_weight_grad_space + first_stage.block_optimizer_space "
     "+ first_stage.block_act_storage_space + first_stage.block_act_grad_space "
     ": 0) + (holds_both_ends ? last_stage.block_weight_space + "
     "last_stage.block_act_working_space + (training ? "
     "last_stage.block_weight_grad_space + last_stage.block_optimizer_space + "
     "last_stage.block_act_storage_space + last_stage.block_act_grad_space : "
     "0) : 0)",
     {"memory:proc_mem_tier1_cap_req", "first_stage:block_weight_space",
      "first_stage:block_act_working_space",
      "first_stage:block_act_storage_space", "last_stage:block_weight_space",
      "last_stage:block_act_working_space",
      "last_stage:block_act_storage_space", "first_stage:block_weight_grad_space",
      "first_stage:block_optimizer_space", "first_stage:block_act_grad_space",
      "last_stage:block_weight_grad_space", "last_stage:block_optimizer_space",
      "last_stage:block_act_grad_space", "derived:training",
      "spec:parallelism.pipeline.degree",
      "spec:parallelism.pipeline.schedule"}},
    {"last_stage_mem_tier1_req",
     "proc_mem_tier1_cap_req + last_stage.block_weight_space + "
     "last_stage.block_act_working_space + (training ? "
     "last_stage.block_weight_grad_space + last_stage.block_optimizer_space + "
     "last_stage.block_act_storage_space + last_stage.block_act_grad_space : "
     "0) + (holds_both_ends ? first_stage.block_weight_space + "
     "first_stage.block_act_working_space + (training ? "
     "first_stage.block_weight_grad_space + first_stage.block_optimizer_space "
     "+ first_stage.block_act_storage_space + first_stage.block_act_grad_space "
     ": 0) : 0) + (embedding_copy ? "
     "first_stage.block_weight_space + (training ? "
     "first_stage.block_weight_grad_space + first_stage.block_optimizer_space "
     ": 0) : 0)",
     {"memory:proc_mem_tier1_cap_req", "first_stage:block_weight_space",
      "first_stage:block_act_working_space",
      "first_stage:block_act_storage_space", "last_stage:block_weight_space",
      "last_stage:block_act_working_space",
      "last_stage:block_act_storage_space", "first_stage:block_weight_grad_space",
      "first_stage:block_optimizer_space", "first_stage:block_act_grad_space",
      "last_stage:block_weight_grad_space", "last_stage:block_optimizer_space",
      "last_stage:block_act_grad_space", "derived:training", "spec:model.vocabulary.tied",
      "derived:padded_vocabulary",
      "spec:parallelism.pipeline.degree",
      "spec:parallelism.pipeline.schedule"}},
    {"max_stage_mem_tier1_req",
     "max(first_stage_mem_tier1_req, last_stage_mem_tier1_req)",
     {"memory:first_stage_mem_tier1_req", "memory:last_stage_mem_tier1_req"}},
};

#undef BP_FW_BASE
#undef BP_FW_EDGE
#undef BP_BW_BASE
#undef BP_BW_EDGE
#undef BP_BW_MEM
#undef BP_ACT_OFFLOAD
#undef BP_FW_OFFLOAD
#undef BP_BW_OFFLOAD
#undef BP_FW_WINDOW
#undef BP_BW_WINDOW
#undef BP_PER_STEP
#undef BP_IN_FLIGHT
#undef BP_CHUNK_COMM
#undef BP_FW_BLOCK_SOURCES
#undef BP_BW_BLOCK_SOURCES
#undef BP_OFFLOAD_SOURCES
// clang-format on

// The figure lists of the figure table, for the compile-time check below.
#define BP_NAME(name, ...) #name,
constexpr const char* kIterationNames[] = {BP_ITERATION_FIGURES(BP_NAME)
                                               BP_SCHEDULE_TERMS(BP_NAME)};
constexpr const char* kMemoryNames[] = {BP_MEMORY_FIGURES(BP_NAME)
                                            BP_MEMORY_TERMS(BP_NAME)};
#undef BP_NAME

constexpr bool SameText(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

// True when row i is the lineage of figure i, for every figure, and every
// row has a formula and at least one source.
template <size_t N, size_t M>
constexpr bool RowsMatch(const FigureFormula (&rows)[N],
                         const char* const (&names)[M]) {
  if (N != M) return false;
  for (size_t i = 0; i < N; ++i) {
    if (!SameText(rows[i].figure, names[i])) return false;
    if (rows[i].formula[0] == '\0' || rows[i].sources[0] == nullptr) {
      return false;
    }
  }
  return true;
}

static_assert(RowsMatch(kIterationRows, kIterationNames),
              "kIterationRows must hold one row per name of "
              "BP_ITERATION_FIGURES then BP_SCHEDULE_TERMS (figure_table.h), in "
              "their order, each with a formula and sources");
static_assert(RowsMatch(kMemoryRows, kMemoryNames),
              "kMemoryRows must hold one row per name of BP_MEMORY_FIGURES "
              "then BP_MEMORY_TERMS (figure_table.h), in their order, each with a "
              "formula and sources");

bool IsNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

bool IsIterationFigure(absl::string_view name) {
  for (const char* n : kIterationNames) {
    if (name == n) return true;
  }
  return false;
}
bool IsMemoryFigure(absl::string_view name) {
  for (const char* n : kMemoryNames) {
    if (name == n) return true;
  }
  return false;
}
bool IsBlockFigure(absl::string_view name) {
  bool found = false;
  ForEachBlockFigure(BlockFigures(), [&](const char* n, double) {
    found = found || name == n;
  });
  return found;
}

std::optional<double> StepValue(const StepShape& step, absl::string_view name) {
  for (const StepTerm& term : StepTerms(step)) {
    if (term.name == name) return term.value;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> SourcesOf(const FigureFormula& row) {
  std::vector<std::string> out;
  for (const char* source : row.sources) {
    if (source == nullptr) break;
    out.push_back(source);
  }
  return out;
}

absl::Span<const FigureFormula> IterationFormulas() { return kIterationRows; }
absl::Span<const FigureFormula> MemoryFormulas() { return kMemoryRows; }

const FigureFormula* FindFormula(FormulaScope scope, absl::string_view figure) {
  for (const FigureFormula& row : scope == FormulaScope::kIteration
                                      ? IterationFormulas()
                                      : MemoryFormulas()) {
    if (figure == row.figure) return &row;
  }
  return nullptr;
}

std::vector<StepTerm> StepTerms(const StepShape& s) {
  auto flag = [](bool b) { return b ? 1.0 : 0.0; };
  auto count = [](int64_t n) { return static_cast<double>(n); };
  const ParameterCounts parameters =
      CountParameters(s.accounted, s.padded_vocabulary);
  const double model_flops = ModelFlopsPerIteration(
      s.accounted, s.padded_vocabulary, s.global_batch, s.training);
  return {
      {"p", count(s.p), {"spec:parallelism.pipeline.degree"}},
      {"v", count(s.v), {"derived:virtual_stages"}},
      {"m", count(s.m), {"derived:microbatches"}},
      {"d", count(s.d), {"spec:parallelism.data.degree"}},
      {"blocks_per_stage",
       count(s.blocks_per_stage),
       {"derived:blocks_per_stage"}},
      {"blocks_per_chunk",
       count(s.blocks_per_chunk),
       {"derived:blocks_per_chunk"}},
      {"rank_blocks",
       count(s.stages_per_rank) * count(s.blocks_per_stage),
       {"derived:blocks_per_stage", "derived:stages_per_rank"}},
      {"twin_stages",
       flag(HasTwinStages(s)),
       {"spec:parallelism.pipeline.schedule",
        "spec:parallelism.pipeline.degree"}},
      {"holds_both_ends",
       flag(HoldsBothEnds(s)),
       {"spec:parallelism.pipeline.schedule",
        "spec:parallelism.pipeline.degree"}},
      {"bubble_reduction_blocks",
       count(s.bubble_reduction_blocks),
       {"derived:bubble_reduction_blocks"}},
      {"training", flag(s.training), {"derived:training"}},
      {"simulated_schedule",
       flag(s.simulated_schedule.has_value()),
       {"spec:parallelism.pipeline.schedule"}},
      {"overlapped_forward_backward",
       flag(s.simulated_schedule.has_value() &&
            OverlapsForwardBackward(*s.simulated_schedule)),
       {"spec:parallelism.pipeline.schedule"}},
      {"scheduled_in_flight",
       flag(s.scheduled_in_flight),
       {"spec:options.profile"}},
      {"grad_reduce_bytes",
       s.grad_reduce_bytes,
       {"spec:options.grad_reduce_datatype", "spec:options.profile",
        "spec:options.precision", "spec:options.datatype"}},
      {"global_batch_size",
       count(s.global_batch),
       {"spec:batch.global_batch_size"}},
      {"shard_parameters",
       flag(s.shard_parameters),
       {"spec:parallelism.data.sharding"}},
      {"weight_bytes_per_element",
       count(s.weight_bytes_per_element),
       {"spec:options.weight_datatype", "spec:options.datatype"}},
      {"optimizer_sharding",
       flag(s.optimizer_sharding),
       {"spec:parallelism.data.sharding"}},
      {"data_overlap", flag(s.data_overlap), {"spec:parallelism.data.overlap"}},
      {"full_recompute",
       flag(s.recompute == RecomputePolicy::kFull),
       {"spec:parallelism.recompute"}},
      {"offload_weights", flag(s.offload.weights), {"spec:options.offload"}},
      {"offload_activations",
       flag(s.offload.activations),
       {"spec:options.offload"}},
      {"offload_optimizer",
       flag(s.offload.optimizer),
       {"spec:options.offload"}},
      {"matrix_peak_flops",
       s.matrix_peak_flops,
       {"system:matrix.$dtype.tflops"}},
      {"t", count(s.t), {"spec:parallelism.tensor.degree"}},
      {"embedding_copy",
       flag(s.embedding_copy),
       {"spec:model.vocabulary.tied", "spec:parallelism.pipeline.degree",
        "derived:padded_vocabulary", "spec:parallelism.pipeline.schedule"}},
      {"embedding_sync",
       flag(s.training && s.embedding_copy),
       {"spec:model.vocabulary.tied", "spec:parallelism.pipeline.degree",
        "derived:padded_vocabulary", "derived:training",
        "spec:parallelism.pipeline.schedule"}},
      {"megatron_parameters",
       parameters.total,
       {"spec:model", "derived:padded_vocabulary"}},
      {"megatron_active_parameters",
       parameters.active,
       {"spec:model", "derived:padded_vocabulary"}},
      {"megatron_model_flops",
       model_flops,
       {"spec:model", "derived:padded_vocabulary",
        "spec:batch.global_batch_size", "derived:training"}},
      {"pipeline_message_bytes",
       s.pipeline_message_bytes,
       {"spec:batch.microbatch_size", "spec:model.seq_size",
        "spec:model.hidden", "spec:parallelism.tensor.communication",
        "spec:parallelism.tensor.degree", "spec:options.datatype"}},
  };
}

const std::vector<FormulaFunction>& FormulaFunctions() {
  static const auto* functions = new std::vector<FormulaFunction>{
      {"max", "the larger argument", {}},
      {"min", "the smaller argument", {}},
      {"simulated_bubble",
       "the concrete scheduler's bubble (core/schedule): the schedule's "
       "commands built for p, v and m and simulated with each chunk's "
       "forward, backward input-gradient (chunk_bw_time less W) and "
       "weight-gradient (W) times, and its F&B time (chunk_fb_time) where "
       "the schedule overlaps a forward with a backward (dualpipe, "
       "dualpipe_v); the makespan less the busiest stage's compute",
       {"spec:parallelism.pipeline.schedule"}},
      {"simulated_fewest_fb_pairs",
       "the fewest overlapped F&B commands on one stage of the simulated "
       "schedule (dualpipe, dualpipe_v), the busiest stage's: each saves F + "
       "B - chunk_fb_time of its compute",
       {"spec:parallelism.pipeline.schedule"}},
      {"simulated_in_flight",
       "the most microbatches one stage of the simulated schedule keeps "
       "live (an F's activations until its W or whole backward ends), at "
       "equal F, B and W times",
       {"spec:parallelism.pipeline.schedule"}},
      {"order_in_flight",
       "the most microbatches the schedule's command order keeps live on "
       "one stage whatever the durations (core/schedule memo.h "
       "OrderPeakLiveMicrobatches): 1 for one stage, min(m, p) for 1f1b, "
       "(2(p - 1) + (v - 1) N + 1) / v capped at m for interleaved (N its "
       "group size)",
       {"spec:parallelism.pipeline.schedule"}},
      {"rate", "rate(bytes, window): bytes / window, 0 when window <= 0", {}},
      {"p2p_time",
       "a point-to-point send of the bytes on the pipeline network",
       {"system:networks[$pp]"}},
      {"dp_time",
       "one block's DP collective: reduce-scatter + all-gather with a sharded "
       "optimizer, else all-reduce",
       {"system:networks[$dp]"}},
      {"pp_all_reduce_time",
       "an all-reduce of the bytes between the first and the last stage on "
       "the pipeline network",
       {"system:networks[$pp]"}},
      {"mem2_time",
       "moving the bytes to or from memory tier 2",
       {"system:mem2"}},
      {"overlapped_chunks_exposed",
       "DP time of the first v - 1 chunks that their backward passes do not "
       "hide (figures.cc OverlappedChunks)",
       {"system:networks[$dp]"}},
      {"overlapped_chunks_bw_req",
       "the DP bandwidth that would hide the first v - 1 chunks' traffic "
       "(figures.cc OverlappedChunks)",
       {"system:networks[$dp]"}},
      {"last_chunk_exposed",
       "DP time of the last chunk that its backward pass does not hide "
       "(figures.cc LastChunk)",
       {"system:networks[$dp]"}},
      {"last_chunk_bw_req",
       "the DP bandwidth that would hide the last chunk's traffic (figures.cc "
       "LastChunk)",
       {"system:networks[$dp]"}},
  };
  return *functions;
}

std::vector<FormulaName> NamesOf(absl::string_view formula) {
  std::vector<FormulaName> out;
  size_t i = 0;
  while (i < formula.size()) {
    const char c = formula[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      // A number literal, exponent included ("1e9").
      while (i < formula.size() && IsNameChar(formula[i])) ++i;
      continue;
    }
    if (!IsNameStart(c)) {
      ++i;
      continue;
    }
    FormulaName name;
    name.begin = i;
    while (i < formula.size() && IsNameChar(formula[i])) ++i;
    name.end = i;
    name.name = std::string(formula.substr(name.begin, name.end - name.begin));
    size_t next = i;
    while (next < formula.size() && formula[next] == ' ') ++next;
    name.function = next < formula.size() && formula[next] == '(';
    out.push_back(std::move(name));
  }
  return out;
}

std::optional<ResolvedName> ResolveName(FormulaScope scope,
                                        absl::string_view name) {
  const size_t dot = name.find('.');
  if (dot != absl::string_view::npos) {
    const absl::string_view qualifier = name.substr(0, dot);
    const absl::string_view figure = name.substr(dot + 1);
    if ((qualifier == "block" && IsBlockFigure(figure)) ||
        (qualifier == "first_stage" && IsBlockFigure(figure)) ||
        (qualifier == "last_stage" && IsBlockFigure(figure)) ||
        (qualifier == "iteration" && IsIterationFigure(figure)) ||
        (qualifier == "memory" && IsMemoryFigure(figure))) {
      return ResolvedName{absl::StrCat(qualifier, ":", figure), {}};
    }
    return std::nullopt;
  }
  if (scope == FormulaScope::kIteration && IsIterationFigure(name)) {
    return ResolvedName{absl::StrCat("iteration:", name), {}};
  }
  if (scope == FormulaScope::kMemory && IsMemoryFigure(name)) {
    return ResolvedName{absl::StrCat("memory:", name), {}};
  }
  for (StepTerm& term : StepTerms(StepShape())) {
    if (term.name == name) {
      return ResolvedName{absl::StrCat("step:", name), std::move(term.sources)};
    }
  }
  if (IsBlockFigure(name))
    return ResolvedName{absl::StrCat("block:", name), {}};
  return std::nullopt;
}

std::optional<double> ValueOf(FormulaScope scope, absl::string_view name,
                              const FormulaValues& values) {
  const std::optional<ResolvedName> resolved = ResolveName(scope, name);
  if (!resolved) return std::nullopt;
  const std::string& node = resolved->node;
  const size_t colon = node.find(':');
  const absl::string_view kind = absl::string_view(node).substr(0, colon);
  const absl::string_view figure = absl::string_view(node).substr(colon + 1);
  std::optional<double> value;
  auto find = [&](const char* n, double x) {
    if (figure == n) value = x;
  };
  if (kind == "iteration" && values.iteration != nullptr) {
    ForEachIterationFigure(*values.iteration, find);
    ForEachScheduleTerm(*values.iteration, find);
  } else if (kind == "memory" && values.memory != nullptr) {
    ForEachMemoryFigure(*values.memory, find);
    ForEachMemoryTerm(*values.memory, find);
  } else if (kind == "block" && values.block != nullptr) {
    ForEachBlockFigure(*values.block, find);
  } else if (kind == "first_stage" && values.first_stage != nullptr) {
    ForEachBlockFigure(*values.first_stage, find);
  } else if (kind == "last_stage" && values.last_stage != nullptr) {
    ForEachBlockFigure(*values.last_stage, find);
  } else if (kind == "step" && values.step != nullptr) {
    value = StepValue(*values.step, figure);
  }
  return value;
}

std::string SubstituteValues(FormulaScope scope, absl::string_view formula,
                             const FormulaValues& values) {
  std::string out;
  size_t done = 0;
  for (const FormulaName& name : NamesOf(formula)) {
    if (name.function) continue;
    const std::optional<double> value = ValueOf(scope, name.name, values);
    if (!value) continue;
    absl::StrAppend(&out, formula.substr(done, name.begin - done),
                    FormatDouble(*value));
    done = name.end;
  }
  absl::StrAppend(&out, formula.substr(done));
  return out;
}

std::vector<std::string> FormulaProblems(FormulaScope scope,
                                         const FigureFormula& row) {
  std::vector<std::string> problems;
  const std::vector<std::string> sources = SourcesOf(row);
  auto has = [&](const std::string& source) {
    return std::find(sources.begin(), sources.end(), source) != sources.end();
  };
  if (row.formula == nullptr || row.formula[0] == '\0') {
    problems.push_back(absl::StrCat(row.figure, ": no formula"));
  }
  if (sources.empty()) {
    problems.push_back(absl::StrCat(row.figure, ": no sources"));
  }
  if (row.formula == nullptr) return problems;
  for (const FormulaName& name : NamesOf(row.formula)) {
    std::vector<std::string> needed;
    if (name.function) {
      const FormulaFunction* function = nullptr;
      for (const FormulaFunction& f : FormulaFunctions()) {
        if (name.name == f.name) function = &f;
      }
      if (function == nullptr) {
        problems.push_back(
            absl::StrCat(row.figure, ": unknown function ", name.name));
        continue;
      }
      for (const char* s : function->sources) needed.push_back(s);
    } else {
      const std::optional<ResolvedName> resolved =
          ResolveName(scope, name.name);
      if (!resolved) {
        problems.push_back(
            absl::StrCat(row.figure, ": unknown name ", name.name));
        continue;
      }
      if (resolved->node ==
          absl::StrCat(
              scope == FormulaScope::kIteration ? "iteration:" : "memory:",
              row.figure)) {
        problems.push_back(
            absl::StrCat(row.figure, ": the formula uses the figure itself"));
      }
      if (resolved->node.rfind("step:", 0) == 0) {
        needed = resolved->step_sources;
      } else {
        needed.push_back(resolved->node);
      }
    }
    for (const std::string& source : needed) {
      if (!has(source)) {
        problems.push_back(absl::StrCat(row.figure, ": ", name.name,
                                        " needs the source ", source));
      }
    }
  }
  return problems;
}

}  // namespace blueprint
