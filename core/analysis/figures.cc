// The iteration analysis's figures (figures.h): ComputeIteration term by
// term, the chunk durations the concrete scheduler runs, and the step
// time's lower bound the strategy search prunes with. The memory analysis's
// figures are in figures_memory.cc.
#include "core/analysis/figures.h"

#include <algorithm>
#include <cmath>

#include "core/analysis/figures_internal.h"
#include "core/base/units.h"
#include "core/plan/hardware.h"
#include "core/plan/quirks.h"
#include "core/schedule/memo.h"
#include "core/schedule/schedule_ir.h"
#include "core/schedule/simulate.h"
#include "core/spec/accounting.h"
#include "core/taskir/optimizer.h"

namespace blueprint {
namespace {

// A simulation's outcome, or NaN figures when it failed (which the pass's
// finite-figure verifier reports).
ShapeOutcome OutcomeOrNan(const absl::StatusOr<ShapeOutcome>& r) {
  if (r.ok()) return *r;
  ShapeOutcome failed;
  failed.bubble = failed.peak_live_microbatches = std::nan("");
  return failed;
}

}  // namespace

namespace figures_internal {

// The simulated schedule of `s` at durations `d` (through the shape's memo
// when it has one: the same numbers); the checker's rules
// (ScheduleShapeErrors) make a failure, NaN figures, unreachable for a
// checked spec.
ShapeOutcome SimulatedOutcome(const StepShape& s, const ChunkDurations& d) {
  if (s.schedule_memo != nullptr) {
    return s.schedule_memo->Get(*s.simulated_schedule, s.p, s.v, s.m, d);
  }
  return OutcomeOrNan(SimulateShape(*s.simulated_schedule, s.p, s.v, s.m, d));
}

}  // namespace figures_internal

namespace {

using figures_internal::SimulatedOutcome;

// The counts of a step as doubles, converted once.
struct StepCounts {
  double p, v, m;
  double bpp;             // blocks per stage
  double rank_blocks;     // the blocks whose state a rank holds
  double bpc;             // blocks per chunk
  double base_per_chunk;  // bpc - 1: the edge block is the last one
  double per_step;        // m * v: chunk executions per step
};

StepCounts CountsOf(const StepShape& s) {
  StepCounts c;
  c.p = static_cast<double>(s.p);
  c.v = static_cast<double>(s.v);
  c.m = static_cast<double>(s.m);
  c.bpp = static_cast<double>(s.blocks_per_stage);
  c.rank_blocks = static_cast<double>(s.stages_per_rank) * c.bpp;
  c.bpc = static_cast<double>(s.blocks_per_chunk);
  c.base_per_chunk = c.bpc - 1;
  c.per_step = c.m * c.v;
  return c;
}

// A block-level quantity for the base and the edge block of a chunk.
struct BaseEdge {
  double base = 0;
  double edge = 0;
};

// A per-block time summed over a step: every chunk has base_per_chunk base
// blocks and one edge block, run once per microbatch and virtual stage.
double PerStep(const StepCounts& c, double base, double edge) {
  return c.per_step * (c.base_per_chunk * base + edge);
}

// The bytes one block moves to or from the offload tier.
struct OffloadBytes {
  double fw = 0;
  double bw = 0;
};

// Offloaded activations: the stored activations, or only the checkpoint
// when full recompute rebuilds the rest.
double ActivationOffloadBytes(const BlockFigures& b, const StepShape& s) {
  return s.recompute != RecomputePolicy::kFull ? b.block_act_storage_space
                                               : b.block_act_checkpoint_size;
}

// Calculon's _get_fw_offload_size (MODEL.md §4.9): the larger, not the sum,
// of the offloaded weights and activations.
double ForwardOffloadBytes(const BlockFigures& b, const StepShape& s) {
  const double weights = s.offload.weights ? b.block_weight_space : 0;
  const double activations =
      s.offload.activations ? ActivationOffloadBytes(b, s) : 0;
  return std::max(weights, activations);
}

// Calculon's _get_bw_offload_size (MODEL.md §4.9): the sum of everything
// offloaded, in training only.
double BackwardOffloadBytes(const BlockFigures& b, const StepShape& s) {
  if (!s.training) return 0;
  double bytes = 0;
  if (s.offload.weights) bytes += b.block_weight_space;
  if (s.offload.activations) bytes += ActivationOffloadBytes(b, s);
  if (s.offload.optimizer) bytes += b.block_optimizer_space;
  return bytes;
}

// The memory time of a block's backward pass (agrad and wgrad).
double BackwardMemTime(const BlockFigures& b) {
  return b.block_agrad_mem_time + b.block_wgrad_mem_time;
}

// Compute on the critical path: every block of the stage runs forward,
// recompute and backward once per microbatch, the optimizer once per step
// (over every stage the rank holds).
void ComputeTerms(const BlockFigures& b, const StepCounts& c,
                  IterationFigures& it) {
  const double mult = c.bpp * c.m;
  it.fw_time = mult * b.block_fw_time;
  it.recompute_time = mult * b.block_re_time;
  it.bw_time = mult * b.block_agrad_time + mult * b.block_wgrad_time;
  it.optim_step_time = c.rank_blocks * b.block_optim_time;
}

// TP communication over the step: the plan priced each block's collectives
// (link time) and what of them compute does not hide (exposed time);
// re-communication happens only in a backward pass.
void TensorParallelCommTerms(const BlockFigures& b, const StepShape& s,
                             const StepCounts& c, IterationFigures& it) {
  it.tp_comm_link_time =
      PerStep(c, b.baseblock_fw_tp_time, b.edgeblock_fw_tp_time) +
      PerStep(c, b.baseblock_agrad_tp_time, b.edgeblock_agrad_tp_time);
  it.tp_comm_exposed_time =
      PerStep(c, b.baseblock_fw_tp_time_exposed,
              b.edgeblock_fw_tp_time_exposed) +
      PerStep(c, b.baseblock_agrad_tp_time_exposed,
              b.edgeblock_agrad_tp_time_exposed);
  it.recomm_link_time =
      s.training
          ? PerStep(c, b.baseblock_recomm_time, b.edgeblock_recomm_time)
          : 0;
  it.recomm_exposed_time =
      s.training ? PerStep(c, b.baseblock_recomm_time_exposed,
                           b.edgeblock_recomm_time_exposed)
                 : 0;
}

// Pipeline p2p (MODEL.md §4.5): one send per chunk and microbatch in each
// direction; nothing overlaps it, so exposed = link.
void PipelineCommTerms(const StepShape& s, const StepCounts& c,
                       IterationFigures& it) {
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
  const double fw_p2ps = s.p > 1 ? c.v : 0;
  const double bw_p2ps = s.p > 1 && s.training ? c.v : 0;
  const double pp_fw = c.m * fw_p2ps * it.chunk_fw_pp_time;
  const double pp_bw = c.m * bw_p2ps * it.chunk_bw_pp_time;
  it.pp_comm_link_time = pp_fw + pp_bw;
  it.pp_comm_exposed_time = it.pp_comm_link_time;
}

// Forward block times before offload: compute plus exposed TP comm; the edge
// block also sends its output to the next stage.
// (Templates: also of BoundFigures, which has the fields they read.)
template <typename Figures>
BaseEdge ForwardBlockTimes(const Figures& b, double chunk_fw_pp_time) {
  BaseEdge t;
  t.base = b.block_fw_time + b.baseblock_fw_tp_time_exposed;
  t.edge = b.block_fw_time + b.edgeblock_fw_tp_time_exposed + chunk_fw_pp_time;
  return t;
}

// Backward block times before offload: recompute with its exposed
// re-communication, agrad and wgrad with exposed TP comm; the edge block also
// sends its gradient to the previous stage.
template <typename Figures>
BaseEdge BackwardBlockTimes(const Figures& b, double chunk_bw_pp_time) {
  BaseEdge t;
  t.base = b.block_re_time + b.baseblock_recomm_time_exposed +
           b.block_agrad_time + b.block_wgrad_time +
           b.baseblock_agrad_tp_time_exposed;
  t.edge = b.block_re_time + b.edgeblock_recomm_time_exposed +
           b.block_agrad_time + b.block_wgrad_time +
           b.edgeblock_agrad_tp_time_exposed + chunk_bw_pp_time;
  return t;
}

// What offload adds to a block (MODEL.md §4.9): the transfer and the block's
// own memory traffic are charged against the block's time; what does not fit
// is exposed (0 when it all fits).
double OffloadOverhead(double offload_time, double mem_time,
                       double block_time) {
  return std::max(0.0, offload_time + mem_time - block_time);
}

// Block and chunk times on the critical path with offload overheads, and the
// offload time exposed over the step.
void BlockTimeTerms(const BlockFigures& b, const StepShape& s,
                    const StepCounts& c, const BaseEdge& fw,
                    const BaseEdge& bw, const OffloadBytes& offload,
                    IterationFigures& it) {
  const double fw_offload_time = MemoryTime(*s.mem2, offload.fw);
  const double bw_offload_time =
      s.training ? MemoryTime(*s.mem2, offload.bw) : 0;
  const double bw_mem = BackwardMemTime(b);
  BaseEdge fw_ovh, bw_ovh;
  fw_ovh.base = OffloadOverhead(fw_offload_time, b.block_fw_mem_time, fw.base);
  fw_ovh.edge = OffloadOverhead(fw_offload_time, b.block_fw_mem_time, fw.edge);
  bw_ovh.base = OffloadOverhead(bw_offload_time, bw_mem, bw.base);
  bw_ovh.edge = OffloadOverhead(bw_offload_time, bw_mem, bw.edge);
  it.baseblock_fw_time = fw.base + fw_ovh.base;
  it.edgeblock_fw_time = fw.edge + fw_ovh.edge;
  it.baseblock_bw_time = bw.base + bw_ovh.base;
  it.edgeblock_bw_time = bw.edge + bw_ovh.edge;
  it.chunk_fw_time =
      c.base_per_chunk * it.baseblock_fw_time + it.edgeblock_fw_time;
  it.chunk_bw_time =
      c.base_per_chunk * it.baseblock_bw_time + it.edgeblock_bw_time;
  it.chunk_time = it.chunk_fw_time + it.chunk_bw_time;
  it.fw_offload_exposed_time = PerStep(c, fw_ovh.base, fw_ovh.edge);
  it.bw_offload_exposed_time =
      s.training ? PerStep(c, bw_ovh.base, bw_ovh.edge) : 0;
}

// SimulatedOutcome for an explicit layout: each position's chunk simulated
// at its own blocks (LayoutPositionDurations), ordered for the busiest
// chunk's durations `d`; not memoized (the search builds no layouts). NaN
// when the simulation fails, as SimulatedOutcome.
ShapeOutcome SimulatedLayoutOutcome(const BlockFigures& b, const StepShape& s,
                                    const IterationFigures& it,
                                    const ChunkDurations& d) {
  return OutcomeOrNan(SimulateShapeByPosition(*s.simulated_schedule, s.p, s.v,
                                              s.m, d,
                                              LayoutPositionDurations(b, s, it)));
}

// The bubble of a schedule with no closed form: the simulated makespan less
// the busiest stage's compute, at this mapping's chunk durations. A failed
// simulation (unreachable after the checker) leaves a NaN that the pass's
// finite-figure verifier reports as an internal error.
void SimulatedBubbleTerms(const BlockFigures& b, const StepShape& s,
                          IterationFigures& it) {
  it.bubble_reduction_time = 0;
  it.extra_interleaving_bubbles = 0;
  const ChunkDurations d = ChunkDurationsOf(b, s, it);
  const ShapeOutcome outcome = HasExplicitLayout(s)
                                   ? SimulatedLayoutOutcome(b, s, it, d)
                                   : SimulatedOutcome(s, d);
  it.bubble_time = outcome.bubble;
  it.bubble_chunks = it.chunk_time > 0 ? it.bubble_time / it.chunk_time : 0;
  if (d.overlapped_forward_backward >= 0) {
    // The busiest stage computes F + B less each F&B's gain.
    it.chunk_fb_time = d.overlapped_forward_backward;
    const double serial = d.forward + d.backward_input + d.backward_weight;
    it.fb_overlap_saving_time =
        static_cast<double>(outcome.overlapped_pairs) *
        std::max(0.0, serial - d.overlapped_forward_backward);
  }
}

// `blocks` blocks a stage lacks against blocks_per_stage, at the block
// times: half a base and half an edge block each, or a whole edge block
// when a chunk holds one block (MODEL.md §4.6, Calculon's bubble
// reduction).
double MissingBlocksTime(const StepShape& s, int64_t blocks,
                         const BaseEdge& fw, const BaseEdge& bw) {
  const double missing = static_cast<double>(blocks);
  if (s.blocks_per_chunk > 1) {
    return missing * (fw.base + fw.edge + bw.base + bw.edge) / 2;
  }
  return missing * (fw.edge + bw.edge);
}

// The blocks an uneven stage layout leaves out, at the block times:
// Calculon's pricing (MissingBlocksTime) for its uneven layout, which
// leaves out at most p - 1 blocks; under an explicit layout, which may
// leave an end stage empty, each at the cheaper of a base and an edge
// block, so that the reduction never exceeds the p - 1 chunks of the
// bubble (each chunk holds blocks_per_chunk blocks at least that long).
double BubbleReductionTime(const StepShape& s, const BaseEdge& fw,
                           const BaseEdge& bw) {
  if (!HasExplicitLayout(s)) {
    return MissingBlocksTime(s, s.bubble_reduction_blocks, fw, bw);
  }
  return static_cast<double>(s.bubble_reduction_blocks) *
         std::min(fw.base + bw.base, fw.edge + bw.edge);
}

// What the blocks rank `rank_blocks` lacks against the busiest rank take
// off its microbatch (the schedule's block times, offload included).
double LayoutGapTime(const StepShape& s, const IterationFigures& it,
                     int64_t rank_blocks) {
  return MissingBlocksTime(s, s.blocks_per_stage - rank_blocks,
                           {it.baseblock_fw_time, it.edgeblock_fw_time},
                           {it.baseblock_bw_time, it.edgeblock_bw_time});
}

// The idle chunks interleaving leaves when p does not divide m.
double ExtraInterleavingBubbles(const StepShape& s) {
  const int64_t leftover = s.m % s.p;
  return leftover != 0 ? static_cast<double>(s.v - 1) *
                             static_cast<double>(s.p - leftover)
                       : 0;
}

// The pipeline bubble (MODEL.md §4.6, the seed's contract): p - 1 chunks of
// fill and drain, plus the idle chunks interleaving leaves when p does not
// divide m, less the blocks an uneven stage layout leaves out
// (bubble_reduction_blocks).
void BubbleTerms(const BlockFigures& b, const StepShape& s,
                 const StepCounts& c, IterationFigures& it) {
  const ChunkDurations d = ChunkDurationsOf(b, s, it);
  it.chunk_bw_input_time = d.backward_input;
  it.chunk_bw_weight_time = d.backward_weight;
  it.peak_inflight_microbatches = PeakInFlightMicrobatches(s);
  if (s.simulated_schedule.has_value()) {
    SimulatedBubbleTerms(b, s, it);
    return;
  }
  it.bubble_reduction_time = BubbleReductionTime(
      s, {it.baseblock_fw_time, it.edgeblock_fw_time},
      {it.baseblock_bw_time, it.edgeblock_bw_time});
  it.extra_interleaving_bubbles = ExtraInterleavingBubbles(s);
  it.bubble_chunks = (c.p - 1) + it.extra_interleaving_bubbles;
  it.bubble_time = (c.p - 1) * it.chunk_time +
                   (it.extra_interleaving_bubbles * it.chunk_time -
                    it.bubble_reduction_time);
}

// One block's DP collective: the weight gradients reduce-scattered and the
// weights all-gathered with a sharded optimizer, else one all-reduce.
double BlockDataParallelTime(const StepShape& s, double param_bytes,
                             double grad_bytes) {
  const NetworkTier& net = *s.data_net;
  if (s.shard_parameters) {
    // ZeRO-3: the gradients reduce-scattered, the weights all-gathered for
    // the forward and again for the backward pass.
    return CollectiveTime(net, CollectiveOp::kReduceScatter, grad_bytes, s.d) +
           2 * CollectiveTime(net, CollectiveOp::kAllGather, param_bytes, s.d);
  }
  if (s.optimizer_sharding) {
    return CollectiveTime(net, CollectiveOp::kReduceScatter, grad_bytes, s.d) +
           CollectiveTime(net, CollectiveOp::kAllGather, param_bytes, s.d);
  }
  return CollectiveTime(net, CollectiveOp::kAllReduce, grad_bytes, s.d);
}

// The bytes the DP gradient reduction of figures `x` moves: the parameter
// bytes `param_bytes` (Calculon's), or its gradient elements (the float32
// accumulator's bytes / 4) at s.grad_reduce_bytes each.
double GradientReductionBytes(const BlockFigures& x, const StepShape& s,
                              double param_bytes) {
  return s.grad_reduce_bytes > 0 ? x.block_weight_grad_space_no_sharding /
                                       kFloat32Bytes * s.grad_reduce_bytes
                                 : param_bytes;
}

// The size that, times the DP network's collective scalar (ar_scalar), is
// one block's DP traffic: block_dp_size, or with gradients in their own
// datatype the reduce-scatter's and the all-gather's bytes weighed by their
// scalars.
double DataParallelTrafficSize(const StepShape& s, double ar_scalar,
                               const IterationFigures& it) {
  if (!(s.grad_reduce_bytes > 0) || !(ar_scalar > 0)) return it.block_dp_size;
  if (!s.optimizer_sharding) return it.block_dp_grad_size;
  const NetworkTier& net = *s.data_net;
  return (net.reduce_scatter.scalar * it.block_dp_grad_size +
          net.all_gather.scalar * it.block_dp_size) /
         ar_scalar;
}

// The time of one chunk's backward pass that DP traffic can overlap, and the
// compute it slows down while it does.
struct DataParallelWindow {
  double chunk_window = 0;
  double block_compute = 0;
  double chunk_compute = 0;
};

DataParallelWindow DataParallelWindowOf(const BlockFigures& b,
                                        const StepShape& s,
                                        const StepCounts& c,
                                        const IterationFigures& it) {
  // DP traffic cannot overlap memory accesses.
  double base = it.baseblock_bw_time -
                (b.block_agrad_mem_time + b.block_wgrad_mem_time +
                 b.block_re_mem_time);
  double edge = it.edgeblock_bw_time -
                (b.block_agrad_mem_time + b.block_wgrad_mem_time +
                 b.block_re_mem_time);
  // Compute that DP traffic slows down (block_re_flops_time carries the
  // recompute quirk, MODEL.md §6.1).
  double block_compute = b.block_agrad_flops_time + b.block_wgrad_flops_time +
                         b.block_re_flops_time;
  // An unsharded optimizer step runs in the window too.
  if (!s.optimizer_sharding) {
    base += b.block_optim_time - b.block_optim_mem_time;
    edge += b.block_optim_time - b.block_optim_mem_time;
    block_compute += b.block_optim_flops_time;
  }
  // A DP network that is also the TP network is busy with the TP
  // collectives and re-communication.
  if (s.data_net_is_tensor_net) {
    base -= b.baseblock_recomm_time + b.baseblock_agrad_tp_time;
    edge -= b.edgeblock_recomm_time + b.edgeblock_agrad_tp_time;
  }
  DataParallelWindow w;
  w.chunk_window = c.base_per_chunk * base + edge;
  w.block_compute = block_compute;
  w.chunk_compute = c.bpc * block_compute;
  return w;
}

// An overlapped part of the DP traffic: the time left exposed and the
// bandwidth that would hide it.
struct OverlapTerm {
  double exposed = 0;
  double bandwidth_req = 0;
};

// The first v - 1 chunks' DP traffic, overlapped with the backward passes
// that follow. Quirk (MODEL.md §6.5): the model assumes p microbatches per
// chunk.
OverlapTerm OverlappedChunks(const StepShape& s, const StepCounts& c,
                             const DataParallelWindow& w, double ar_scalar,
                             const IterationFigures& it) {
  const double pu = s.data_net->processor_usage;
  const double overlappable_chunks = c.v - 1;
  const double window = c.p * w.chunk_window;
  const double overlap_compute = c.p * w.chunk_compute;
  const double chunk_dp_time = c.bpc * it.block_dp_time;
  // A DP network that is also the PP network carries the pipeline sends too.
  double overlapped_pp = 0;
  if (s.data_net_is_pipeline_net) {
    const int64_t leftover = s.m % s.p;
    const double cap = leftover != 0 ? static_cast<double>(leftover) : c.p;
    overlapped_pp =
        std::min(std::floor(chunk_dp_time / it.chunk_bw_time), cap);
  }
  const double inflection =
      chunk_dp_time - (window - overlapped_pp * it.chunk_bw_pp_time) +
      overlap_compute * pu;
  OverlapTerm out;
  out.exposed = inflection > 0 ? overlappable_chunks * inflection
                               : overlappable_chunks * chunk_dp_time * pu;
  double chunk_overlap_time = window + overlap_compute * pu;
  if (s.data_net_is_pipeline_net) chunk_overlap_time -= it.chunk_bw_pp_time;
  chunk_overlap_time *= overlappable_chunks;
  out.bandwidth_req =
      chunk_overlap_time > 0
          ? c.bpc * DataParallelTrafficSize(s, ar_scalar, it) /
                chunk_overlap_time * ar_scalar
          : 0;
  return out;
}

// The last chunk's DP traffic: nothing follows it but the rest of its own
// backward pass, so only bpc - 1 blocks' collectives can overlap.
OverlapTerm LastChunk(const BlockFigures& b, const StepShape& s,
                      const StepCounts& c, const DataParallelWindow& w,
                      double ar_scalar, const IterationFigures& it) {
  const double pu = s.data_net->processor_usage;
  const double last_chunk_blocks = c.bpc - 1;
  double last_window = 0;
  if (s.blocks_per_chunk > 1) {
    last_window = w.chunk_window - it.chunk_bw_pp_time -
                  (it.baseblock_bw_time + it.edgeblock_bw_time) / 2;
    if (!s.optimizer_sharding) {
      last_window += b.block_optim_time - b.block_optim_mem_time;
    }
  }
  const double last_inflection = last_chunk_blocks * it.block_dp_time +
                                 (w.block_compute * pu - last_window);
  OverlapTerm out;
  out.exposed = last_inflection > 0
                    ? last_inflection
                    : last_chunk_blocks * it.block_dp_time * pu;
  const double tail = last_window + last_chunk_blocks * it.block_dp_time * pu;
  out.bandwidth_req =
      tail > 0 ? c.bpc * DataParallelTrafficSize(s, ar_scalar, it) / tail *
                     ar_scalar
               : 0;
  return out;
}

// Data parallelism (MODEL.md §4.7): one collective per block and step, all
// exposed without DP overlap; with it, one block's collective plus what the
// overlap windows cannot hide. Nothing without DP or in inference.
void DataParallelCommTerms(const BlockFigures& b, const StepShape& s,
                           const StepCounts& c, IterationFigures& it) {
  if (s.d <= 1 || !s.training) return;
  // ZeRO-3 keeps 1/shard of the weights, but the collectives move them all:
  // the unsharded weights in their storage datatype, from the float32
  // gradient accumulator's size.
  it.block_dp_size = s.shard_parameters
                         ? b.block_weight_grad_space_no_sharding /
                               kFloat32Bytes * s.weight_bytes_per_element
                         : b.block_weight_space;
  it.block_dp_grad_size = GradientReductionBytes(b, s, it.block_dp_size);
  it.block_dp_time =
      BlockDataParallelTime(s, it.block_dp_size, it.block_dp_grad_size);
  if (!s.data_overlap) {
    it.dp_comm_exposed_time = c.rank_blocks * it.block_dp_time;
    it.dp_comm_link_time = it.dp_comm_exposed_time;
    return;
  }
  const NetworkTier& net = *s.data_net;
  const double ar_scalar =
      s.optimizer_sharding ? net.reduce_scatter.scalar + net.all_gather.scalar
                           : net.all_reduce.scalar;
  const DataParallelWindow w = DataParallelWindowOf(b, s, c, it);
  const OverlapTerm chunks = OverlappedChunks(s, c, w, ar_scalar, it);
  const OverlapTerm last = LastChunk(b, s, c, w, ar_scalar, it);
  it.dp_bw_overlap_req_chunk = chunks.bandwidth_req;
  it.dp_bw_overlap_req_tail = last.bandwidth_req;
  it.dp_comm_exposed_time = it.block_dp_time + chunks.exposed + last.exposed;
  it.dp_comm_link_time = c.rank_blocks * it.block_dp_time;
}

// The step: every compute, exposed communication, offload and bubble term.
double TotalTime(const IterationFigures& it) {
  return it.fw_time + it.bw_time + it.optim_step_time +
         it.fw_offload_exposed_time + it.bw_offload_exposed_time +
         it.recompute_time + it.recomm_exposed_time + it.bubble_time +
         it.tp_comm_exposed_time + it.pp_comm_exposed_time +
         it.dp_comm_exposed_time - it.fb_overlap_saving_time;
}

// The rate that hides `bytes` in `window`. A window <= 0 (every layer of the
// block bound by its own memory traffic, or rounding at that edge) leaves no
// time to hide offload in: the requirement is reported as 0, the convention
// of the DP overlap requirements, and the whole transfer is exposed in
// fw/bw_offload_exposed_time.
double Rate(double bytes, double window) {
  return window > 0 ? bytes / window : 0.0;
}

// Offload bandwidth requirements: the rate that hides each transfer in the
// tightest block's time not spent on its own memory traffic.
void OffloadRequirementTerms(const BlockFigures& b, const StepShape& s,
                             const BaseEdge& fw, const BaseEdge& bw,
                             const OffloadBytes& offload,
                             IterationFigures& it) {
  const double bw_mem = BackwardMemTime(b);
  const double fw_window = std::min(fw.base - b.block_fw_mem_time,
                                    fw.edge - b.block_fw_mem_time);
  const double bw_window = std::min(bw.base - bw_mem, bw.edge - bw_mem);
  it.act_offload_bw_req = Rate(ActivationOffloadBytes(b, s), fw_window);
  it.weight_offload_bw_req = Rate(b.block_weight_space, fw_window);
  it.optim_offload_bw_req =
      s.training ? Rate(b.block_weight_grad_space + b.block_optimizer_space,
                        bw_window)
                 : 0;
  it.offload_mem_bw_req =
      s.training ? std::max(Rate(offload.fw, fw_window),
                            Rate(offload.bw, bw_window))
                 : Rate(offload.fw, fw_window);
}

// Efficiency: `perfect` is the useful FLOPs' time at the matrix engine's
// peak; compute efficiency is it over the compute time, system efficiency
// the compute time over the step, total efficiency it over the step.
// Quirk (MODEL.md §6.7): useful FLOPs count the optimizer once per
// microbatch although it runs once per step.
void EfficiencyTerms(const BlockFigures& b, const StepShape& s,
                     const StepCounts& c, IterationFigures& it) {
  it.useful_flops = b.useful_flops;
  if (!quirks::kOptimizerFlopsPerMicrobatch && s.training) {
    it.useful_flops -= b.block_optim_flops * (1 - 1 / c.m);
  }
  const double perfect = c.bpp * c.m * it.useful_flops / s.matrix_peak_flops;
  const double compute = it.fw_time + it.bw_time + it.optim_step_time;
  it.compute_efficiency = perfect / compute;
  it.system_efficiency = compute / it.total_time;
  it.total_efficiency = perfect / it.total_time;
  it.sample_rate = static_cast<double>(s.global_batch) / it.total_time;
}

// One microbatch's extra work on a stage: forward with its exposed TP
// communication, and in training the backward pass with its own.
double StageMicrobatchTime(const BlockFigures& x, const StepShape& s) {
  const double forward = x.block_fw_time + x.baseblock_fw_tp_time_exposed;
  if (!s.training) return forward;
  return forward + x.block_agrad_time + x.block_wgrad_time +
         x.baseblock_agrad_tp_time_exposed;
}

// The DP collective of a stage's extra weights (not overlapped: Megatron-LM
// reduces the embedding and output layer's gradients at the end).
double StageDataParallelTime(const BlockFigures& x, const StepShape& s) {
  if (!s.training || s.d <= 1 || x.block_weight_space <= 0) return 0;
  return BlockDataParallelTime(
      s, x.block_weight_space,
      GradientReductionBytes(x, s, x.block_weight_space));
}

// DualPipe's end ranks: rank 0 holds the first stage of one model copy and
// the last of the other, rank p - 1 the reverse, so each holds the
// embedding and the output layer (a tied table once: the two copies' tables
// are the same, summed with the twin's like every other gradient) and runs
// each for the m / 2 microbatches of one direction. Both end ranks carry
// the same extra, so neither waits for the other: the step grows by one
// end rank's extra work and its DP reduction.
void TwinEndStageTerms(const StageExtras& x, const StepShape& s,
                       const StepCounts& c, double first, double last,
                       IterationFigures& it) {
  const double optim =
      s.training ? x.first.block_optim_time + x.last.block_optim_time : 0;
  it.first_stage_microbatch_time = first;
  it.last_stage_microbatch_time = last;
  it.first_stage_extra_time = c.m / 2 * (first + last) + optim;
  it.last_stage_extra_time = it.first_stage_extra_time;
  it.stage_imbalance_time = it.first_stage_extra_time;
  it.stage_extra_dp_time =
      StageDataParallelTime(x.first, s) + StageDataParallelTime(x.last, s);
  it.embedding_sync_time = 0;
}

// An explicit layout's end stages, each priced on its own blocks: rank r's
// microbatch takes T_r = busiest - gap_r + e_r (gap_r: what the blocks it
// lacks against the busiest rank take, LayoutGapTime; e_r its vocabulary
// work, on ranks 0 and p - 1 only). A 1F1B pipeline of unequal stages runs
// m microbatches in (m - 1) * max_r T_r + sum_r T_r (the slowest stage
// paces it; each stage is passed once in the fill and drain). The blocks'
// terms already hold (m - 1) * busiest + sum_r (busiest - gap_r) (the
// bubble's reduction by bubble_reduction_blocks = sum of the gaps), so the
// vocabulary adds (m - 1) * max(0, e_first - gap_first, e_last - gap_last)
// + e_first + e_last: a recipe that gives the end stages fewer blocks
// (--account-for-embedding-in-pipeline-split, a layout string's E and L)
// hides their extras in the pace. With equal stages it is Calculon-aligned
// m * max(e) + min(e). Interleaved (v > 1): the same pace per rank; the
// fill and drain keep the busiest rank's chunks (bubble_reduction_blocks 0).
double LayoutStageImbalance(const StepShape& s, const StepCounts& c,
                            const IterationFigures& it, double first,
                            double last) {
  const double pace =
      std::max({0.0, first - LayoutGapTime(s, it, s.first_rank_blocks),
                last - LayoutGapTime(s, it, s.last_rank_blocks)});
  return (c.m - 1) * pace + (first + last);
}

// The first and last stage's extra work (MODEL.md has none: Calculon models
// blocks only). With per-microbatch extras e_first and e_last on stages of
// equal blocks, a pipeline of p > 1 stages runs m microbatches in about
// (m + p - 1) chunks of the blocks plus m * max(e) + min(e): the slowest
// stage sets the pace and the other's extra is paid once in the fill or the
// drain. With p = 1 one stage does both, m times.
void StageTerms(const StageExtras& x, const StepShape& s, const StepCounts& c,
                IterationFigures& it) {
  const double first = StageMicrobatchTime(x.first, s);
  const double last = StageMicrobatchTime(x.last, s);
  if (HasTwinStages(s)) {
    TwinEndStageTerms(x, s, c, first, last, it);
    return;
  }
  const double first_optim = s.training ? x.first.block_optim_time : 0;
  // The last stage's copy of a tied table takes its own optimizer step.
  const double last_optim =
      !s.training ? 0
      : s.embedding_copy
          ? x.last.block_optim_time + x.first.block_optim_time
          : x.last.block_optim_time;
  it.first_stage_microbatch_time = first;
  it.last_stage_microbatch_time = last;
  it.first_stage_extra_time = c.m * first + first_optim;
  it.last_stage_extra_time = c.m * last + last_optim;
  const double first_dp = StageDataParallelTime(x.first, s);
  // The copy of a tied table is reduced on the last stage too.
  const double last_dp =
      s.embedding_copy ? StageDataParallelTime(x.last, s) +
                             StageDataParallelTime(x.first, s)
                       : StageDataParallelTime(x.last, s);
  if (s.p == 1) {
    it.stage_imbalance_time =
        it.first_stage_extra_time + it.last_stage_extra_time;
    it.stage_extra_dp_time = first_dp + last_dp;
  } else if (HasExplicitLayout(s)) {
    it.stage_imbalance_time =
        LayoutStageImbalance(s, c, it, first, last) +
        std::max(first_optim, last_optim);
    it.stage_extra_dp_time = std::max(first_dp, last_dp);
  } else {
    it.stage_imbalance_time = c.m * std::max(first, last) +
                              std::min(first, last) +
                              std::max(first_optim, last_optim);
    it.stage_extra_dp_time = std::max(first_dp, last_dp);
  }
  // Tied weights on two stages: their gradients are all-reduced between
  // the two (float32 main gradients, as Megatron-LM sums them).
  it.embedding_sync_time =
      s.training && s.embedding_copy
          ? CollectiveTime(*s.pipeline_net, CollectiveOp::kAllReduce,
                           x.first.block_weight_grad_space_no_sharding, 2)
          : 0;
}

// DualPipe: rank s and its twin, rank p - 1 - s, hold the same two stages
// (of the two model copies), so each sums its gradients with the twin's
// (deepseek-ai/DualPipe's example adds each copy's gradient to the other's)
// after the last backward, before the optimizer step: one all-reduce of two
// ranks over the pipeline tier, of float32 main gradients as Megatron-LM
// sums a tied table's. The end ranks' also hold the embedding and the
// output layer: theirs is the longest, the step's.
void TwinStageSyncTerms(const BlockFigures& b, const StageExtras& x,
                        const StepShape& s, const StepCounts& c,
                        IterationFigures& it) {
  if (!s.training || !HasTwinStages(s)) return;
  const double bytes = c.rank_blocks * b.block_weight_grad_space_no_sharding +
                       x.first.block_weight_grad_space_no_sharding +
                       x.last.block_weight_grad_space_no_sharding;
  it.twin_stage_sync_time =
      CollectiveTime(*s.pipeline_net, CollectiveOp::kAllReduce, bytes, 2);
}

// Per-stage time of the step: the compute of the blocks (fw, bw, recompute,
// optimizer) plus the stage's own extra work.
// With an explicit layout each end stage computes its own blocks: the
// busiest rank's block compute times its share of the blocks.
void StageTimeTerms(const StepShape& s, IterationFigures& it) {
  const double blocks =
      it.fw_time + it.bw_time + it.recompute_time + it.optim_step_time;
  const double both = s.p == 1 ? it.last_stage_extra_time : 0;
  if (HasExplicitLayout(s) && s.p > 1 && !HasTwinStages(s)) {
    const double busiest = static_cast<double>(s.blocks_per_stage);
    it.first_stage_time =
        blocks * static_cast<double>(s.first_rank_blocks) / busiest +
        it.first_stage_extra_time;
    it.last_stage_time =
        blocks * static_cast<double>(s.last_rank_blocks) / busiest +
        it.last_stage_extra_time;
    return;
  }
  it.first_stage_time = blocks + it.first_stage_extra_time + both;
  it.last_stage_time =
      s.p == 1 ? it.first_stage_time : blocks + it.last_stage_extra_time;
}

// Megatron-LM's accounting and model FLOPs utilization: the model FLOPs of
// the step over the time of every rank at the matrix engine's peak.
void ModelTerms(const StepShape& s, IterationFigures& it) {
  const ParameterCounts parameters =
      CountParameters(s.accounted, s.padded_vocabulary);
  it.parameters_total = parameters.total;
  it.parameters_active = parameters.active;
  it.model_flops_per_iteration = ModelFlopsPerIteration(
      s.accounted, s.padded_vocabulary, s.global_batch, s.training);
  const double ranks = static_cast<double>(s.t) * static_cast<double>(s.cp) *
                       static_cast<double>(s.p) * static_cast<double>(s.d);
  const double capacity = it.total_time * s.matrix_peak_flops * ranks;
  it.mfu = capacity > 0 ? it.model_flops_per_iteration / capacity : 0;
}

}  // namespace

// Each term reads the inputs and only the figures of the terms before it.
// Keep every term's order of operations: reassociating a sum or a product
// changes the last bits of figures the goldens pin.
void ComputeIteration(const BlockFigures& b, const StepShape& s,
                      IterationFigures& it) {
  ComputeIteration(b, StageExtras(), s, it);
}

void ComputeIteration(const BlockFigures& b, const StageExtras& x,
                      const StepShape& s, IterationFigures& it) {
  const StepCounts c = CountsOf(s);
  it = IterationFigures();
  ComputeTerms(b, c, it);
  TensorParallelCommTerms(b, s, c, it);
  PipelineCommTerms(s, c, it);
  const BaseEdge fw = ForwardBlockTimes(b, it.chunk_fw_pp_time);
  const BaseEdge bw = BackwardBlockTimes(b, it.chunk_bw_pp_time);
  OffloadBytes offload;
  offload.fw = ForwardOffloadBytes(b, s);
  offload.bw = BackwardOffloadBytes(b, s);
  BlockTimeTerms(b, s, c, fw, bw, offload, it);
  BubbleTerms(b, s, c, it);
  DataParallelCommTerms(b, s, c, it);
  StageTerms(x, s, c, it);
  TwinStageSyncTerms(b, x, s, c, it);
  // The stage terms are 0 without a vocabulary and the twin sync without
  // dualpipe: Calculon's total exactly.
  it.total_time = TotalTime(it) + it.stage_imbalance_time +
                  it.stage_extra_dp_time + it.embedding_sync_time +
                  it.twin_stage_sync_time;
  OffloadRequirementTerms(b, s, fw, bw, offload, it);
  EfficiencyTerms(b, s, c, it);
  StageTimeTerms(s, it);
  ModelTerms(s, it);
}

namespace {

// DualPipe's F&B (DeepSeek-V3 technical report, section 3.2.1): one chunk's
// forward runs beside another microbatch's whole backward, and each one's
// communication (the exposed TP, expert and context collectives and
// exchanges of its blocks, and its pipeline send) hides under the other's
// compute. The pair takes the longer of its compute and its communication:
// max(F + B - comm, comm). Without communication it is F + B.
double OverlappedForwardBackwardTime(const BlockFigures& b, const StepShape& s,
                                     const ChunkDurations& d,
                                     const IterationFigures& it) {
  const double base = static_cast<double>(s.blocks_per_chunk) - 1;
  const double fw_comm = base * b.baseblock_fw_tp_time_exposed +
                         b.edgeblock_fw_tp_time_exposed + it.chunk_fw_pp_time;
  const double bw_comm =
      base * (b.baseblock_recomm_time_exposed +
              b.baseblock_agrad_tp_time_exposed) +
      b.edgeblock_recomm_time_exposed + b.edgeblock_agrad_tp_time_exposed +
      it.chunk_bw_pp_time;
  const double comm = fw_comm + bw_comm;
  const double serial = d.forward + d.backward_input + d.backward_weight;
  return std::max(serial - comm, comm);
}

}  // namespace

ChunkDurations ChunkDurationsOf(const BlockFigures& b, const StepShape& s,
                                const IterationFigures& it) {
  ChunkDurations d;
  d.forward = it.chunk_fw_time;
  if (!s.training) return d;
  d.backward_weight =
      std::min(it.chunk_bw_time,
               static_cast<double>(s.blocks_per_chunk) * b.block_wgrad_time);
  d.backward_input = it.chunk_bw_time - d.backward_weight;
  if (s.simulated_schedule.has_value() &&
      OverlapsForwardBackward(*s.simulated_schedule)) {
    d.overlapped_forward_backward = OverlappedForwardBackwardTime(b, s, d, it);
  }
  return d;
}

std::vector<ChunkDurations> LayoutPositionDurations(
    const BlockFigures& b, const StepShape& s, const IterationFigures& it) {
  std::vector<ChunkDurations> out;
  if (!HasExplicitLayout(s)) return out;
  out.reserve(s.stage_blocks.size());
  for (const int64_t blocks : s.stage_blocks) {
    ChunkDurations d;
    const double base = static_cast<double>(blocks - 1);
    d.forward = blocks > 0 ? base * it.baseblock_fw_time + it.edgeblock_fw_time
                           : it.chunk_fw_pp_time;
    if (s.training) {
      const double backward =
          blocks > 0 ? base * it.baseblock_bw_time + it.edgeblock_bw_time
                     : it.chunk_bw_pp_time;
      d.backward_weight = std::min(
          backward, static_cast<double>(blocks) * b.block_wgrad_time);
      d.backward_input = backward - d.backward_weight;
    }
    out.push_back(d);
  }
  return out;
}

// Bounds ComputeIteration's total_time term by term: fw_time + bw_time +
// optim_step_time + recompute_time (the compute), tp_comm_exposed_time +
// recomm_exposed_time (exposed), and the bubble (below); offload, PP and DP
// terms are left out (each >= 0).
namespace {

// StepTimeLowerBound of a BlockFigures or of its BoundFigures: one body,
// the same operations on the same values.
template <typename Figures>
double StepTimeLowerBoundOf(const Figures& b, const StepShape& s) {
  const double p = static_cast<double>(s.p);
  const double v = static_cast<double>(s.v);
  const double m = static_cast<double>(s.m);
  const double bpp = static_cast<double>(s.blocks_per_stage);
  const double bpc = static_cast<double>(s.blocks_per_chunk);
  const double mult = bpp * m;
  const double optim =
      static_cast<double>(s.stages_per_rank) * bpp * b.block_optim_time;
  const double compute = mult * b.block_fw_time + mult * b.block_agrad_time +
                         mult * b.block_wgrad_time + optim +
                         mult * b.block_re_time;
  const double per_step = m * v;
  const double exposed =
      per_step *
      ((bpc - 1) *
           (b.baseblock_fw_tp_time_exposed + b.baseblock_agrad_tp_time_exposed +
            b.baseblock_recomm_time_exposed) +
       b.edgeblock_fw_tp_time_exposed + b.edgeblock_agrad_tp_time_exposed +
       b.edgeblock_recomm_time_exposed);
  // An explicit layout's stages may hold fewer blocks than the busiest
  // rank's chunks that the bounds below assume on every stage (a lighter
  // first or last stage shortens the fill and the drain): its bubble is
  // bounded by 0 alone.
  if (HasExplicitLayout(s)) return compute + exposed;
  // A simulated schedule's bubble: MinimumBubble at the chunks' compute
  // (ChunkDurationsOf: F >= bpc forwards, W = bpc weight gradients, B the
  // rest of the backward >= bpc recomputes and input gradients), a hair
  // below it so that the simulation's rounding cannot fall under the bound.
  if (s.simulated_schedule.has_value()) {
    ChunkDurations lower;
    lower.forward = bpc * b.block_fw_time;
    lower.backward_input = bpc * (b.block_re_time + b.block_agrad_time);
    lower.backward_weight = bpc * b.block_wgrad_time;
    double pipeline = compute + exposed;
    if (OverlapsForwardBackward(*s.simulated_schedule)) {
      // An F&B takes the larger of its two chunks' compute and their
      // communication, a lone F or B both: each stage's F and B take at
      // least the larger of their compute and their exposed communication.
      const double chunk_compute = mult * b.block_fw_time +
                                   mult * b.block_agrad_time +
                                   mult * b.block_wgrad_time +
                                   mult * b.block_re_time;
      pipeline = std::max(chunk_compute, exposed) + optim;
      // The forwards the last stage waits for are lone F: their exposed
      // communication is not hidden.
      lower.forward += (bpc - 1) * b.baseblock_fw_tp_time_exposed +
                       b.edgeblock_fw_tp_time_exposed;
    }
    const double bounded =
        pipeline +
        (1 - 1e-9) * MinimumBubble(*s.simulated_schedule, s.p, s.m, lower);
    if (!OverlapsForwardBackward(*s.simulated_schedule)) return bounded;
    // The busiest stage, the one with the fewest F&B, hides at most their
    // share of its exposed communication.
    const double paired =
        static_cast<double>(
            OrderFewestOverlappedPairs(*s.simulated_schedule, s.p, s.m)) /
        per_step;
    return std::max(bounded, (1 - 1e-9) * (compute + exposed * (1 - paired)));
  }
  // Calculon's closed form at the block times without their PP sends and
  // offload overheads (terms >= 0): the bubble does not decrease with any
  // block time, since an uneven layout's reduction takes at most half of a
  // chunk's blocks per missing block (bpc > 1), or R <= p - 1 of the
  // p - 1 + extra chunks (bpc = 1).
  const BaseEdge fw = ForwardBlockTimes(b, 0);
  const BaseEdge bw = BackwardBlockTimes(b, 0);
  const double chunk =
      (bpc - 1) * fw.base + fw.edge + ((bpc - 1) * bw.base + bw.edge);
  const double extra = ExtraInterleavingBubbles(s);
  const double bubble = std::max(
      0.0, (p - 1) * chunk + (extra * chunk - BubbleReductionTime(s, fw, bw)));
  return compute + exposed + bubble;
}

}  // namespace

double StepTimeLowerBound(const BlockFigures& block, const StepShape& step) {
  return StepTimeLowerBoundOf(block, step);
}

double StepTimeLowerBound(const BoundFigures& block, const StepShape& step) {
  return StepTimeLowerBoundOf(block, step);
}

BoundFigures BoundFiguresOf(const BlockFigures& b) {
  return {b.block_fw_time,
          b.block_agrad_time,
          b.block_wgrad_time,
          b.block_re_time,
          b.block_optim_time,
          b.baseblock_fw_tp_time_exposed,
          b.edgeblock_fw_tp_time_exposed,
          b.baseblock_agrad_tp_time_exposed,
          b.edgeblock_agrad_tp_time_exposed,
          b.baseblock_recomm_time_exposed,
          b.edgeblock_recomm_time_exposed};
}

}  // namespace blueprint
