#include "core/analysis/figures.h"

#include <algorithm>
#include <cmath>

#include "core/plan/hardware.h"
#include "core/plan/quirks.h"

namespace blueprint {
namespace {

double OffloadTime(const MemoryTier& mem2, double bytes) {
  return MemoryTime(mem2, bytes);
}

// Calculon's _get_fw_offload_size.
double ForwardOffloadBytes(const BlockFigures& b, const StepShape& s) {
  const double weights = s.offload.weights ? b.block_weight_space : 0;
  double activations = 0;
  if (s.offload.activations) {
    activations = s.recompute != RecomputePolicy::kFull
                      ? b.block_act_storage_space
                      : b.block_act_checkpoint_size;
  }
  return std::max(weights, activations);
}

// Calculon's _get_bw_offload_size.
double BackwardOffloadBytes(const BlockFigures& b, const StepShape& s) {
  if (!s.training) return 0;
  double bytes = 0;
  if (s.offload.weights) bytes += b.block_weight_space;
  if (s.offload.activations) {
    bytes += s.recompute != RecomputePolicy::kFull
                 ? b.block_act_storage_space
                 : b.block_act_checkpoint_size;
  }
  if (s.offload.optimizer) bytes += b.block_optimizer_space;
  return bytes;
}

}  // namespace

void ComputeIteration(const BlockFigures& b, const StepShape& s,
                      IterationFigures& it) {
  const double p = static_cast<double>(s.p);
  const double v = static_cast<double>(s.v);
  const double m = static_cast<double>(s.m);
  const double bpp = static_cast<double>(s.blocks_per_stage);
  const double bpc = static_cast<double>(s.blocks_per_chunk);
  const double base_per_chunk = bpc - 1;  // the edge block is the last one
  const double mult = bpp * m;
  it = IterationFigures();

  it.fw_time = mult * b.block_fw_time;
  it.recompute_time = mult * b.block_re_time;
  it.bw_time = mult * b.block_agrad_time + mult * b.block_wgrad_time;
  it.optim_step_time = bpp * b.block_optim_time;

  const double per_step = m * v;
  const double tp_fw = per_step * (base_per_chunk * b.baseblock_fw_tp_time +
                                   b.edgeblock_fw_tp_time);
  const double tp_fw_exposed =
      per_step * (base_per_chunk * b.baseblock_fw_tp_time_exposed +
                  b.edgeblock_fw_tp_time_exposed);
  const double tp_bw = per_step * (base_per_chunk * b.baseblock_agrad_tp_time +
                                   b.edgeblock_agrad_tp_time);
  const double tp_bw_exposed =
      per_step * (base_per_chunk * b.baseblock_agrad_tp_time_exposed +
                  b.edgeblock_agrad_tp_time_exposed);
  const double recomm = per_step * (base_per_chunk * b.baseblock_recomm_time +
                                    b.edgeblock_recomm_time);
  const double recomm_exposed =
      per_step * (base_per_chunk * b.baseblock_recomm_time_exposed +
                  b.edgeblock_recomm_time_exposed);

  // Pipeline p2p: one send per chunk and microbatch in each direction.
  it.block_fw_pp_size = s.p > 1 ? s.pipeline_message_bytes : 0;
  it.block_bw_pp_size = s.training ? it.block_fw_pp_size : 0;
  // Quirk (MODEL.md §6.4): the p2p latency is paid even for a 0-byte message
  // (p = 1), inside the edge-block times.
  const bool sends = s.p > 1 || quirks::kPointToPointLatencyWithoutPipeline;
  it.chunk_fw_pp_time =
      sends ? CollectiveTime(*s.pipeline_net, CollectiveOp::kPointToPoint,
                             it.block_fw_pp_size, 2)
            : 0;
  it.chunk_bw_pp_time =
      sends ? CollectiveTime(*s.pipeline_net, CollectiveOp::kPointToPoint,
                             it.block_bw_pp_size, 2)
            : 0;
  const double fw_p2ps = s.p > 1 ? v : 0;
  const double bw_p2ps = s.p > 1 && s.training ? v : 0;
  const double pp_fw = m * fw_p2ps * it.chunk_fw_pp_time;
  const double pp_bw = m * bw_p2ps * it.chunk_bw_pp_time;

  it.tp_comm_link_time = tp_fw + tp_bw;
  it.tp_comm_exposed_time = tp_fw_exposed + tp_bw_exposed;
  it.recomm_link_time = s.training ? recomm : 0;
  it.recomm_exposed_time = s.training ? recomm_exposed : 0;
  it.pp_comm_link_time = pp_fw + pp_bw;
  it.pp_comm_exposed_time = it.pp_comm_link_time;

  // Block times on the critical path, with offload overheads.
  const double base_fw_no_offload =
      b.block_fw_time + b.baseblock_fw_tp_time_exposed;
  const double edge_fw_no_offload = b.block_fw_time +
                                    b.edgeblock_fw_tp_time_exposed +
                                    it.chunk_fw_pp_time;
  const double fw_offload_bytes = ForwardOffloadBytes(b, s);
  const double bw_offload_bytes = BackwardOffloadBytes(b, s);
  const double fw_offload_time = OffloadTime(*s.mem2, fw_offload_bytes);
  const double base_fw_ovh = std::max(
      0.0, fw_offload_time + b.block_fw_mem_time - base_fw_no_offload);
  const double edge_fw_ovh = std::max(
      0.0, fw_offload_time + b.block_fw_mem_time - edge_fw_no_offload);
  it.baseblock_fw_time = base_fw_no_offload + base_fw_ovh;
  it.edgeblock_fw_time = edge_fw_no_offload + edge_fw_ovh;
  const double base_bw_no_offload =
      b.block_re_time + b.baseblock_recomm_time_exposed + b.block_agrad_time +
      b.block_wgrad_time + b.baseblock_agrad_tp_time_exposed;
  const double edge_bw_no_offload =
      b.block_re_time + b.edgeblock_recomm_time_exposed + b.block_agrad_time +
      b.block_wgrad_time + b.edgeblock_agrad_tp_time_exposed +
      it.chunk_bw_pp_time;
  const double bw_offload_time =
      s.training ? OffloadTime(*s.mem2, bw_offload_bytes) : 0;
  const double bw_mem = b.block_agrad_mem_time + b.block_wgrad_mem_time;
  const double base_bw_ovh =
      std::max(0.0, bw_offload_time + bw_mem - base_bw_no_offload);
  const double edge_bw_ovh =
      std::max(0.0, bw_offload_time + bw_mem - edge_bw_no_offload);
  it.baseblock_bw_time = base_bw_no_offload + base_bw_ovh;
  it.edgeblock_bw_time = edge_bw_no_offload + edge_bw_ovh;
  it.chunk_fw_time = base_per_chunk * it.baseblock_fw_time + it.edgeblock_fw_time;
  it.chunk_bw_time = base_per_chunk * it.baseblock_bw_time + it.edgeblock_bw_time;
  it.chunk_time = it.chunk_fw_time + it.chunk_bw_time;
  it.fw_offload_exposed_time =
      per_step * (base_per_chunk * base_fw_ovh + edge_fw_ovh);
  it.bw_offload_exposed_time =
      s.training ? per_step * (base_per_chunk * base_bw_ovh + edge_bw_ovh) : 0;

  // DP overlap windows: DP traffic cannot overlap memory accesses.
  double base_dp_window = it.baseblock_bw_time -
                          (b.block_agrad_mem_time + b.block_wgrad_mem_time +
                           b.block_re_mem_time);
  double edge_dp_window = it.edgeblock_bw_time -
                          (b.block_agrad_mem_time + b.block_wgrad_mem_time +
                           b.block_re_mem_time);
  // Compute that DP traffic slows down (block_re_flops_time carries the
  // recompute quirk, MODEL.md §6.1).
  double block_dp_compute = b.block_agrad_flops_time +
                            b.block_wgrad_flops_time + b.block_re_flops_time;
  if (!s.optimizer_sharding) {
    base_dp_window += b.block_optim_time - b.block_optim_mem_time;
    edge_dp_window += b.block_optim_time - b.block_optim_mem_time;
    block_dp_compute += b.block_optim_flops_time;
  }
  if (s.data_net_is_tensor_net) {
    base_dp_window -= b.baseblock_recomm_time + b.baseblock_agrad_tp_time;
    edge_dp_window -= b.edgeblock_recomm_time + b.edgeblock_agrad_tp_time;
  }
  const double chunk_dp_window =
      base_per_chunk * base_dp_window + edge_dp_window;
  const double chunk_dp_compute = bpc * block_dp_compute;

  // Pipeline bubble (the seed's contract).
  const double reduction_blocks = static_cast<double>(s.bubble_reduction_blocks);
  if (s.blocks_per_chunk > 1) {
    it.bubble_reduction_time =
        reduction_blocks * (it.baseblock_fw_time + it.edgeblock_fw_time +
                            it.baseblock_bw_time + it.edgeblock_bw_time) / 2;
  } else {
    it.bubble_reduction_time =
        reduction_blocks * (it.edgeblock_fw_time + it.edgeblock_bw_time);
  }
  const int64_t leftover = s.m % s.p;
  it.extra_interleaving_bubbles =
      leftover != 0 ? (v - 1) * static_cast<double>(s.p - leftover) : 0;
  it.bubble_chunks = (p - 1) + it.extra_interleaving_bubbles;
  it.bubble_time = (p - 1) * it.chunk_time +
                   (it.extra_interleaving_bubbles * it.chunk_time -
                    it.bubble_reduction_time);

  // Data parallelism.
  const bool dp_active = s.d > 1 && s.training;
  const NetworkTier& dp_net = *s.data_net;
  if (dp_active) {
    it.block_dp_size = b.block_weight_space;
    if (s.optimizer_sharding) {
      it.block_dp_time = CollectiveTime(dp_net, CollectiveOp::kReduceScatter,
                                        it.block_dp_size, s.d) +
                         CollectiveTime(dp_net, CollectiveOp::kAllGather,
                                        it.block_dp_size, s.d);
    } else {
      it.block_dp_time = CollectiveTime(dp_net, CollectiveOp::kAllReduce,
                                        it.block_dp_size, s.d);
    }
  }
  if (dp_active && s.data_overlap) {
    const double pu = dp_net.processor_usage;
    const double overlappable_chunks = v - 1;
    const double last_chunk_blocks = bpc - 1;
    // Quirk (MODEL.md §6.5): the model assumes p microbatches per chunk.
    const double window = p * chunk_dp_window;
    const double overlap_compute = p * chunk_dp_compute;
    const double chunk_dp_time = bpc * it.block_dp_time;
    double overlapped_pp = 0;
    if (s.data_net_is_pipeline_net) {
      const double cap = leftover != 0 ? static_cast<double>(leftover) : p;
      overlapped_pp = std::min(std::floor(chunk_dp_time / it.chunk_bw_time), cap);
    }
    const double inflection =
        chunk_dp_time - (window - overlapped_pp * it.chunk_bw_pp_time) +
        overlap_compute * pu;
    const double chunks_exposed =
        inflection > 0 ? overlappable_chunks * inflection
                       : overlappable_chunks * chunk_dp_time * pu;
    const double ar_scalar = s.optimizer_sharding
                                 ? dp_net.reduce_scatter.scalar +
                                       dp_net.all_gather.scalar
                                 : dp_net.all_reduce.scalar;
    double chunk_overlap_time = window + overlap_compute * pu;
    if (s.data_net_is_pipeline_net) chunk_overlap_time -= it.chunk_bw_pp_time;
    chunk_overlap_time *= overlappable_chunks;
    it.dp_bw_overlap_req_chunk =
        chunk_overlap_time > 0
            ? bpc * it.block_dp_size / chunk_overlap_time * ar_scalar
            : 0;
    double last_window = 0;
    if (s.blocks_per_chunk > 1) {
      last_window = chunk_dp_window - it.chunk_bw_pp_time -
                    (it.baseblock_bw_time + it.edgeblock_bw_time) / 2;
      if (!s.optimizer_sharding) {
        last_window += b.block_optim_time - b.block_optim_mem_time;
      }
    }
    const double last_inflection = last_chunk_blocks * it.block_dp_time +
                                   (block_dp_compute * pu - last_window);
    const double last_exposed =
        last_inflection > 0 ? last_inflection
                            : last_chunk_blocks * it.block_dp_time * pu;
    const double tail = last_window + last_chunk_blocks * it.block_dp_time * pu;
    it.dp_bw_overlap_req_tail =
        tail > 0 ? bpc * it.block_dp_size / tail * ar_scalar : 0;
    it.dp_comm_exposed_time = it.block_dp_time + chunks_exposed + last_exposed;
    it.dp_comm_link_time = bpp * it.block_dp_time;
  } else if (dp_active) {
    it.dp_comm_exposed_time = bpp * it.block_dp_time;
    it.dp_comm_link_time = it.dp_comm_exposed_time;
  }

  it.total_time = it.fw_time + it.bw_time + it.optim_step_time +
                  it.fw_offload_exposed_time + it.bw_offload_exposed_time +
                  it.recompute_time + it.recomm_exposed_time + it.bubble_time +
                  it.tp_comm_exposed_time + it.pp_comm_exposed_time +
                  it.dp_comm_exposed_time;

  // Offload bandwidth requirements.
  const double fw_window = std::min(base_fw_no_offload - b.block_fw_mem_time,
                                    edge_fw_no_offload - b.block_fw_mem_time);
  const double bw_window = std::min(base_bw_no_offload - bw_mem,
                                    edge_bw_no_offload - bw_mem);
  const double act_offload_bytes = s.recompute != RecomputePolicy::kFull
                                       ? b.block_act_storage_space
                                       : b.block_act_checkpoint_size;
  // The rate that hides `bytes` in `window`. A window <= 0 (every layer of
  // the block bound by its own memory traffic, or rounding at that edge)
  // leaves no time to hide offload in: the requirement is reported as 0, the
  // convention of the overlap requirements above, and the whole transfer is
  // exposed in fw/bw_offload_exposed_time.
  auto rate = [](double bytes, double window) {
    return window > 0 ? bytes / window : 0.0;
  };
  it.act_offload_bw_req = rate(act_offload_bytes, fw_window);
  it.weight_offload_bw_req = rate(b.block_weight_space, fw_window);
  it.optim_offload_bw_req =
      s.training ? rate(b.block_weight_grad_space + b.block_optimizer_space,
                        bw_window)
                 : 0;
  it.offload_mem_bw_req =
      s.training ? std::max(rate(fw_offload_bytes, fw_window),
                            rate(bw_offload_bytes, bw_window))
                 : rate(fw_offload_bytes, fw_window);

  // Efficiency. Quirk (MODEL.md §6.7): useful FLOPs count the optimizer once
  // per microbatch although it runs once per step.
  it.useful_flops = b.useful_flops;
  if (!quirks::kOptimizerFlopsPerMicrobatch && s.training) {
    it.useful_flops -= b.block_optim_flops * (1 - 1 / m);
  }
  const double perfect = bpp * m * it.useful_flops / s.matrix_peak_flops;
  const double compute = it.fw_time + it.bw_time + it.optim_step_time;
  it.compute_efficiency = perfect / compute;
  it.system_efficiency = compute / it.total_time;
  it.total_efficiency = perfect / it.total_time;
  it.sample_rate = static_cast<double>(s.global_batch) / it.total_time;
}

void ComputeMemory(const BlockFigures& b, const StepShape& s,
                   MemoryFigures& mem) {
  mem = MemoryFigures();
  const double p = static_cast<double>(s.p);
  const double v = static_cast<double>(s.v);
  const double bpp = static_cast<double>(s.blocks_per_stage);
  const bool full = s.recompute == RecomputePolicy::kFull;
  double act_space = b.block_act_working_space;
  double checkpoint = 0;
  double act_grad = 0;
  if (s.training) {
    // 1F1B keeps at most p microbatches in flight (m if fewer); interleaving
    // adds (p-1)/(v*p) of a microbatch per chunk.
    const double in_flight = static_cast<double>(s.m < s.p ? s.m : s.p);
    const double factor =
        s.v > 1 ? in_flight * (1 + (p - 1) / (v * p)) : in_flight;
    if (full) {
      checkpoint = bpp * b.block_act_checkpoint_size * factor;
    } else {
      act_space = b.block_act_working_space +
                  b.block_act_storage_space * (bpp * factor - 1);
    }
    act_grad = b.block_act_grad_space;
  }
  mem.weight_space = b.block_weight_space * bpp;
  mem.act_space = act_space;
  mem.act_checkpoint_size = s.training && full ? checkpoint : 0;
  mem.act_grad_space = s.training ? act_grad : 0;
  mem.weight_grad_space =
      !s.training ? 0
      : s.blocks_per_stage == 1
          ? b.block_weight_grad_space_no_sharding
          : b.block_weight_grad_space_no_sharding +
                b.block_weight_grad_space * (bpp - 1);
  mem.optimizer_space = s.training ? b.block_optimizer_space * bpp : 0;

  mem.weight_space_with_offload = b.block_weight_space * 2;
  mem.act_space_with_offload =
      !full ? b.block_act_working_space + b.block_act_storage_space
            : b.block_act_working_space;
  mem.checkpoint_min_defined = s.training;
  mem.act_checkpoint_size_with_offload =
      s.training && full ? b.block_act_checkpoint_size * 2 : 0;
  mem.act_grad_space_with_offload = mem.act_grad_space;
  mem.weight_grad_space_with_offload =
      s.training ? b.block_weight_grad_space_no_sharding +
                       b.block_weight_grad_space
                 : 0;
  mem.optimizer_space_with_offload =
      s.training ? b.block_optimizer_space * 2 : 0;

  // Calculon's _get_mem_cap_reqs: an offloaded item keeps only its minimum
  // in tier 1 and all of it in tier 2.
  double tier1 = 0, tier2 = 0;
  if (s.offload.weights) {
    tier1 += mem.weight_space_with_offload;
    tier2 += mem.weight_space;
  } else {
    tier1 += mem.weight_space;
  }
  if (s.offload.activations) {
    if (!full) {
      tier1 += mem.act_space_with_offload;
      tier2 += mem.act_space;
    } else {
      tier1 += mem.act_space_with_offload;
      tier1 += mem.act_checkpoint_size_with_offload;
      tier2 += mem.act_checkpoint_size;
    }
  } else {
    tier1 += mem.act_space;
    tier1 += mem.act_checkpoint_size;
  }
  if (s.offload.optimizer) {
    tier1 += mem.weight_grad_space_with_offload;
    tier1 += mem.optimizer_space_with_offload;
    tier2 += b.block_weight_grad_space * bpp;
    tier2 += mem.optimizer_space;
  } else {
    tier1 += mem.weight_grad_space + mem.optimizer_space;
  }
  tier1 += mem.act_grad_space;
  mem.proc_mem_tier1_cap_req = tier1;
  mem.proc_mem_tier2_cap_req = tier2;
  mem.tier1_capacity = s.mem1->gib * 1073741824.0;
  mem.tier2_capacity = s.mem2->gib * 1073741824.0;
}

bool MemoryTier1Fits(const MemoryFigures& m) {
  return !(m.proc_mem_tier1_cap_req > m.tier1_capacity);
}

bool MemoryTier2Fits(const MemoryFigures& m) {
  return !(m.proc_mem_tier2_cap_req > m.tier2_capacity);
}

bool MemoryFits(const MemoryFigures& m) {
  return MemoryTier1Fits(m) && MemoryTier2Fits(m);
}

// Bounds ComputeIteration's total_time term by term: fw_time + bw_time +
// optim_step_time + recompute_time (the compute), tp_comm_exposed_time +
// recomm_exposed_time (exposed), and the bubble's (p - 1 +
// extra_interleaving_bubbles) chunks at their compute only; offload, PP and DP
// terms are left out (each >= 0).
double StepTimeLowerBound(const BlockFigures& b, const StepShape& s) {
  if (s.bubble_reduction_blocks != 0) return 0;
  const double p = static_cast<double>(s.p);
  const double v = static_cast<double>(s.v);
  const double m = static_cast<double>(s.m);
  const double bpp = static_cast<double>(s.blocks_per_stage);
  const double bpc = static_cast<double>(s.blocks_per_chunk);
  const double mult = bpp * m;
  const double compute = mult * b.block_fw_time + mult * b.block_agrad_time +
                         mult * b.block_wgrad_time + bpp * b.block_optim_time +
                         mult * b.block_re_time;
  const double per_step = m * v;
  const double exposed =
      per_step *
      ((bpc - 1) *
           (b.baseblock_fw_tp_time_exposed + b.baseblock_agrad_tp_time_exposed +
            b.baseblock_recomm_time_exposed) +
       b.edgeblock_fw_tp_time_exposed + b.edgeblock_agrad_tp_time_exposed +
       b.edgeblock_recomm_time_exposed);
  const int64_t leftover = s.m % s.p;
  const double extra =
      leftover != 0 ? (v - 1) * static_cast<double>(s.p - leftover) : 0;
  const double bubble = (p - 1 + extra) * bpc *
                        (b.block_fw_time + b.block_re_time +
                         b.block_agrad_time + b.block_wgrad_time);
  return compute + exposed + bubble;
}

}  // namespace blueprint
