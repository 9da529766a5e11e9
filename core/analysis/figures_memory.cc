// The memory analysis's figures (figures.h): ComputeMemory per rank, tier
// and stage, its two parts (the state and the activations) that the
// strategy search keeps apart, the in-flight microbatches that scale the
// activations, and the capacity checks.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "core/analysis/figures.h"
#include "core/analysis/figures_internal.h"
#include "core/analysis/stages.h"
#include "core/base/units.h"
#include "core/schedule/memo.h"
#include "core/schedule/schedule_ir.h"
#include "core/schedule/schedule_table.h"
#include "core/schedule/simulate.h"

namespace blueprint {

void ComputeMemory(const BlockFigures& b, const StepShape& s,
                   MemoryFigures& mem) {
  ComputeMemory(b, StageExtras(), s, mem);
}

namespace {

// A stage extra's weights, gradients and optimizer state, and what it adds
// to tier 1 (those and one microbatch's activations: the first stage's
// embedding stores none, the last stage runs its head one microbatch at a
// time).
double ExtraWeightAndOptimizer(const BlockState& x, const StepShape& s) {
  if (!s.training) return x.weight_space;
  return x.weight_space + x.weight_grad_space + x.optimizer_space;
}
double ExtraTier1(const BlockState& x, const BlockActivations& a,
                  const StepShape& s) {
  double bytes = ExtraWeightAndOptimizer(x, s) + a.working_space;
  if (s.training) bytes += a.storage_space + a.grad_space;
  return bytes;
}

// What a rank's own blocks take: their weights, gradients and optimizer
// state, and their tier-1 need (proc_mem_tier1_cap_req's sum).
struct RankBlocksMemory {
  double state = 0;
  double tier1 = 0;
};

// An explicit layout's end rank: ComputeMemory's per-rank terms at the
// rank's own `blocks` (0 blocks: nothing but its vocabulary, which the
// stage terms add), at the busiest rank's in-flight microbatches (Calculon's
// one factor for every stage: conservative for the later stages of a 1F1B
// pipeline, which hold fewer).
RankBlocksMemory RankBlocksMemoryAt(const MemoryState& x,
                                    const MemoryActivations& a,
                                    const StepShape& s, double in_flight,
                                    int64_t blocks) {
  if (blocks <= 0) return {};
  StepShape at = s;
  at.blocks_per_stage = blocks;
  at.stage_blocks = {};
  MemoryFigures rank;
  ComputeMemory(x, a, at, in_flight, rank);
  return {rank.weight_space + rank.weight_grad_space + rank.optimizer_space,
          rank.proc_mem_tier1_cap_req};
}

void StageMemoryTerms(const MemoryState& x, const MemoryActivations& a,
                      const StepShape& s, double in_flight,
                      MemoryFigures& mem) {
  const double blocks =
      mem.weight_space + mem.weight_grad_space + mem.optimizer_space;
  // Each end stage on its own blocks (an explicit layout), else on the
  // busiest rank's, as every other stage.
  const bool own_blocks = HasExplicitLayout(s) && s.p > 1 && !HasTwinStages(s);
  const RankBlocksMemory busiest{blocks, mem.proc_mem_tier1_cap_req};
  const RankBlocksMemory first_rank =
      own_blocks ? RankBlocksMemoryAt(x, a, s, in_flight, s.first_rank_blocks)
                 : busiest;
  const RankBlocksMemory last_rank =
      own_blocks ? RankBlocksMemoryAt(x, a, s, in_flight, s.last_rank_blocks)
                 : busiest;
  double first = ExtraWeightAndOptimizer(x.first, s);
  double last = ExtraWeightAndOptimizer(x.last, s);
  double first_tier1 = ExtraTier1(x.first, a.first, s);
  double last_tier1 = ExtraTier1(x.last, a.last, s);
  if (s.embedding_copy) {  // the last stage's copy of the tied table
    last += first;
    last_tier1 += first;
  }
  // One stage holds both, or each dualpipe end rank (TwinEndStageTerms).
  if (HoldsBothEnds(s)) {
    first += last;
    last = first;
    first_tier1 += last_tier1;
    last_tier1 = first_tier1;
  }
  mem.first_stage_weight_and_optimizer_bytes = first_rank.state + first;
  mem.last_stage_weight_and_optimizer_bytes = last_rank.state + last;
  mem.weight_and_optimizer_bytes =
      std::max(mem.first_stage_weight_and_optimizer_bytes,
               mem.last_stage_weight_and_optimizer_bytes);
  mem.first_stage_mem_tier1_req = first_rank.tier1 + first_tier1;
  mem.last_stage_mem_tier1_req = last_rank.tier1 + last_tier1;
  mem.max_stage_mem_tier1_req =
      std::max(mem.first_stage_mem_tier1_req, mem.last_stage_mem_tier1_req);
  if (own_blocks) {
    // The busiest rank may be a middle one, without the vocabulary.
    mem.weight_and_optimizer_bytes =
        std::max(mem.weight_and_optimizer_bytes, blocks);
    mem.max_stage_mem_tier1_req =
        std::max(mem.max_stage_mem_tier1_req, mem.proc_mem_tier1_cap_req);
  }
}

}  // namespace

namespace {

using figures_internal::SimulatedOutcome;

// The most microbatches a simulated schedule keeps live on one stage (an
// F's activations held until its W, or its whole backward), simulated at
// equal F, B and W times (the zero-bubble paper's assumption): memory does
// not depend on the chunk times the iteration analysis prices. NaN when the
// simulation fails (unreachable after the checker; the verifier reports
// it).
double SimulatedInFlight(const StepShape& s) {
  if (const std::optional<double> fixed =
          OrderPeakLiveMicrobatches(*s.simulated_schedule, s.p, s.v, s.m)) {
    return *fixed;
  }
  ChunkDurations unit;
  unit.forward = 1;
  unit.backward_input = 1;
  unit.backward_weight = 1;
  return SimulatedOutcome(s, unit).peak_live_microbatches;
}

}  // namespace

double PeakInFlightMicrobatches(const StepShape& s) {
  if (s.simulated_schedule.has_value()) return SimulatedInFlight(s);
  if (s.scheduled_in_flight && s.training) {
    // The analytic schedules' orders: single_stage, 1f1b, interleaved.
    const ScheduleKind kind = s.p == 1   ? ScheduleKind::kSingleStage
                              : s.v > 1 ? ScheduleKind::kInterleaved
                                        : ScheduleKind::kOneForwardOneBackward;
    if (const std::optional<double> fixed =
            OrderPeakLiveMicrobatches(kind, s.p, s.v, s.m)) {
      return *fixed;
    }
  }
  // 1F1B keeps at most p microbatches in flight (m if fewer); interleaving
  // adds (p-1)/(v*p) of a microbatch per chunk.
  const double p = static_cast<double>(s.p);
  const double v = static_cast<double>(s.v);
  const double in_flight = static_cast<double>(s.m < s.p ? s.m : s.p);
  return s.v > 1 ? in_flight * (1 + (p - 1) / (v * p)) : in_flight;
}

double MemoryInFlight(const StepShape& s) {
  return s.training ? PeakInFlightMicrobatches(s) : 0;
}

namespace {

// What a rank's weights, weight gradients and optimizer state take, in
// place and with offload: they do not depend on the microbatch size.
struct StateBytes {
  double weight_space = 0, weight_grad_space = 0, optimizer_space = 0;
  double weight_space_with_offload = 0, weight_grad_space_with_offload = 0,
         optimizer_space_with_offload = 0;
};

StateBytes StateBytesOf(const BlockState& b, const StepShape& s) {
  const int64_t rank_block_count = s.stages_per_rank * s.blocks_per_stage;
  const double rank_blocks = static_cast<double>(rank_block_count);
  StateBytes state;
  state.weight_space = b.weight_space * rank_blocks;
  // Calculon keeps the block being computed's gradients unsharded in
  // float32; Megatron-LM's mixed precision counts every block's main
  // gradients as its ZeRO stage shards them (ZeRO paper's accounting).
  state.weight_grad_space = !s.training ? 0
                            : s.precision == PrecisionAccounting::kMegatronMixed
                                ? b.weight_grad_space * rank_blocks
                            : rank_block_count == 1
                                ? b.weight_grad_space_no_sharding
                                : b.weight_grad_space_no_sharding +
                                      b.weight_grad_space * (rank_blocks - 1);
  state.optimizer_space = s.training ? b.optimizer_space * rank_blocks : 0;
  state.weight_space_with_offload = b.weight_space * 2;
  state.weight_grad_space_with_offload =
      s.training ? b.weight_grad_space_no_sharding + b.weight_grad_space : 0;
  state.optimizer_space_with_offload = s.training ? b.optimizer_space * 2 : 0;
  return state;
}

// What tier 1 keeps of the state (Calculon's _get_mem_cap_reqs: an
// offloaded item keeps only its minimum in tier 1, all of it in tier 2),
// added to `tier1` as ComputeMemory's sum adds it: the weights first, the
// gradients and optimizer state after the activations.
void AddWeightsTier1(const StateBytes& state, const StepShape& s,
                     double& tier1) {
  tier1 += s.offload.weights ? state.weight_space_with_offload
                             : state.weight_space;
}
void AddGradientsAndOptimizerTier1(const StateBytes& state, const StepShape& s,
                                   double& tier1) {
  if (s.offload.optimizer) {
    tier1 += state.weight_grad_space_with_offload;
    tier1 += state.optimizer_space_with_offload;
  } else {
    tier1 += state.weight_grad_space + state.optimizer_space;
  }
}

BlockState BlockStateOf(const BlockFigures& b) {
  return {b.block_weight_space, b.block_weight_grad_space,
          b.block_weight_grad_space_no_sharding, b.block_optimizer_space};
}

BlockActivations BlockActivationsOf(const BlockFigures& b) {
  return {b.block_act_working_space, b.block_act_storage_space,
          b.block_act_checkpoint_size, b.block_act_grad_space};
}

}  // namespace

MemoryState MemoryStateOf(const BlockFigures& b, const StageExtras& x) {
  return {BlockStateOf(b), BlockStateOf(x.first), BlockStateOf(x.last)};
}

MemoryActivations MemoryActivationsOf(const BlockFigures& b,
                                      const StageExtras& x) {
  return {BlockActivationsOf(b), BlockActivationsOf(x.first),
          BlockActivationsOf(x.last)};
}

double StateTier1Bytes(const BlockState& b, const StepShape& s) {
  // ComputeMemory's tier-1 sum without its activation terms, whose
  // additions (of values >= 0) cannot lower a rounded sum: the same state
  // terms, added by the same calls.
  const StateBytes state = StateBytesOf(b, s);
  double tier1 = 0;
  AddWeightsTier1(state, s, tier1);
  AddGradientsAndOptimizerTier1(state, s, tier1);
  return tier1;
}

bool StateExceedsTier1(const BlockState& b, const StepShape& s) {
  // MemoryTier1Fits's comparison, with ComputeMemory's capacity.
  return StateTier1Bytes(b, s) > s.mem1->gib * kGiB;
}

void ComputeMemory(const BlockFigures& b, const StageExtras& x,
                   const StepShape& s, MemoryFigures& mem) {
  ComputeMemory(MemoryStateOf(b, x), MemoryActivationsOf(b, x), s,
                MemoryInFlight(s), mem);
}

void ComputeMemory(const MemoryState& rank_state,
                   const MemoryActivations& activations, const StepShape& s,
                   double in_flight, MemoryFigures& mem) {
  const BlockActivations& b = activations.block;
  // Every field of `mem` is assigned below, whatever it held (not reset
  // first: the search makes tens of millions of memory verdicts into one
  // scratch; AnalyzeMemory.EveryFigureAssigned checks it).
  // The blocks of every stage the rank holds (in-flight microbatches count
  // in units of all of them).
  const int64_t rank_block_count = s.stages_per_rank * s.blocks_per_stage;
  const double rank_blocks = static_cast<double>(rank_block_count);
  const bool full = s.recompute == RecomputePolicy::kFull;
  double act_space = b.working_space;
  double checkpoint = 0;
  double act_grad = 0;
  if (s.training) {
    if (full) {
      checkpoint = rank_blocks * b.checkpoint_size * in_flight;
    } else {
      act_space =
          b.working_space + b.storage_space * (rank_blocks * in_flight - 1);
    }
    act_grad = b.grad_space;
  }
  const StateBytes state = StateBytesOf(rank_state.block, s);
  mem.weight_space = state.weight_space;
  mem.act_space = act_space;
  mem.act_checkpoint_size = s.training && full ? checkpoint : 0;
  mem.act_grad_space = s.training ? act_grad : 0;
  mem.weight_grad_space = state.weight_grad_space;
  mem.optimizer_space = state.optimizer_space;

  mem.weight_space_with_offload = state.weight_space_with_offload;
  mem.act_space_with_offload =
      !full ? b.working_space + b.storage_space : b.working_space;
  mem.checkpoint_min_defined = s.training;
  mem.act_checkpoint_size_with_offload =
      s.training && full ? b.checkpoint_size * 2 : 0;
  mem.act_grad_space_with_offload = mem.act_grad_space;
  mem.weight_grad_space_with_offload = state.weight_grad_space_with_offload;
  mem.optimizer_space_with_offload = state.optimizer_space_with_offload;

  // Calculon's _get_mem_cap_reqs: an offloaded item keeps only its minimum
  // in tier 1 and all of it in tier 2.
  double tier1 = 0, tier2 = 0;
  AddWeightsTier1(state, s, tier1);
  if (s.offload.weights) tier2 += mem.weight_space;
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
  AddGradientsAndOptimizerTier1(state, s, tier1);
  if (s.offload.optimizer) {
    tier2 += rank_state.block.weight_grad_space * rank_blocks;
    tier2 += mem.optimizer_space;
  }
  tier1 += mem.act_grad_space;
  mem.proc_mem_tier1_cap_req = tier1;
  mem.proc_mem_tier2_cap_req = tier2;
  mem.tier1_capacity = s.mem1->gib * kGiB;
  mem.tier2_capacity = s.mem2->gib * kGiB;
  StageMemoryTerms(rank_state, activations, s, in_flight, mem);
}

bool MemoryTier1Fits(const MemoryFigures& m) {
  return !(m.proc_mem_tier1_cap_req > m.tier1_capacity) &&
         !(m.max_stage_mem_tier1_req > m.tier1_capacity);
}

bool MemoryTier2Fits(const MemoryFigures& m) {
  return !(m.proc_mem_tier2_cap_req > m.tier2_capacity);
}

bool MemoryFits(const MemoryFigures& m) {
  return MemoryTier1Fits(m) && MemoryTier2Fits(m);
}

std::vector<StageFigure> StageFiguresOf(const BlockFigures& b,
                                        const StageExtras& x,
                                        const StepShape& s,
                                        const IterationFigures& it,
                                        const MemoryFigures& mem) {
  const int64_t p = s.p;
  const int64_t positions = p * s.v;
  const bool layout = HasExplicitLayout(s);
  const bool v_shape = s.simulated_schedule.has_value() &&
                       ScheduleRowOf(*s.simulated_schedule).holds_both_ends &&
                       s.v == 2;
  const std::vector<ChunkDurations> by_position =
      LayoutPositionDurations(b, s, it);
  // A middle rank's own blocks under a layout (StageMemoryTerms' terms).
  std::vector<double> rank_tier1(static_cast<size_t>(p),
                                 mem.proc_mem_tier1_cap_req);
  if (layout && p > 1 && !HasTwinStages(s)) {
    const MemoryState state = MemoryStateOf(b, x);
    const MemoryActivations activations = MemoryActivationsOf(b, x);
    const double in_flight = MemoryInFlight(s);
    for (int64_t r = 1; r + 1 < p; ++r) {
      int64_t blocks = 0;
      for (size_t k = static_cast<size_t>(r); k < s.stage_blocks.size();
           k += static_cast<size_t>(p)) {
        blocks += s.stage_blocks[k];
      }
      rank_tier1[static_cast<size_t>(r)] =
          RankBlocksMemoryAt(state, activations, s, in_flight, blocks).tier1;
    }
  }
  rank_tier1.front() = mem.first_stage_mem_tier1_req;
  if (p > 1) rank_tier1.back() = mem.last_stage_mem_tier1_req;
  std::vector<StageFigure> out;
  out.reserve(static_cast<size_t>(positions));
  for (int64_t k = 0; k < positions; ++k) {
    StageFigure stage;
    stage.chunk = k / p;
    stage.rank = v_shape && k >= p ? 2 * p - 1 - k : k % p;
    if (layout) {
      const ChunkDurations& d = by_position[static_cast<size_t>(k)];
      stage.blocks = s.stage_blocks[static_cast<size_t>(k)];
      stage.microbatch_time = d.forward + d.backward_input + d.backward_weight;
    } else {
      stage.blocks = s.blocks_per_chunk;
      stage.microbatch_time = it.chunk_fw_time + it.chunk_bw_time;
    }
    if (k == 0) stage.microbatch_time += it.first_stage_microbatch_time;
    if (k == positions - 1) {
      stage.microbatch_time += it.last_stage_microbatch_time;
    }
    stage.rank_mem_tier1_req = rank_tier1[static_cast<size_t>(stage.rank)];
    out.push_back(stage);
  }
  return out;
}

}  // namespace blueprint
