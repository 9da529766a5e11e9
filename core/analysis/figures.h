// The step-level figures of the iteration and memory analyses, named exactly
// as Calculon's stats JSON, and the pure functions that compute them from a
// block's figures and a StepShape (calculon/MODEL.md §4.5-4.11). Pure and
// allocation-free: the strategy search calls them millions of times.
#ifndef BLUEPRINTING_CORE_ANALYSIS_FIGURES_H_
#define BLUEPRINTING_CORE_ANALYSIS_FIGURES_H_

#include <vector>

#include "core/analysis/schedule.h"
#include "core/plan/plan_ir.h"
#include "core/schedule/simulate.h"

namespace blueprint {

// The figures of the step (core/figures/figure_table.h BP_ITERATION_FIGURES,
// BP_SCHEDULE_TERMS).
struct IterationFigures {
#define BP_DECLARE_FIELD(name, ...) double name = 0;
  BP_ITERATION_FIGURES(BP_DECLARE_FIELD)
  BP_SCHEDULE_TERMS(BP_DECLARE_FIELD)
#undef BP_DECLARE_FIELD
};

// Memory per rank and stage (core/figures/figure_table.h BP_MEMORY_FIGURES,
// BP_MEMORY_TERMS).
struct MemoryFigures {
#define BP_DECLARE_FIELD(name, ...) double name = 0;
  BP_MEMORY_FIGURES(BP_DECLARE_FIELD)
  BP_MEMORY_TERMS(BP_DECLARE_FIELD)
#undef BP_DECLARE_FIELD
  // Calculon reports act_checkpoint_size_with_offload as null for inference.
  bool checkpoint_min_defined = true;
  double tier1_capacity = 0;  // bytes
  double tier2_capacity = 0;
};

template <typename F>
void ForEachIterationFigure(const IterationFigures& it, F&& f) {
#define BP_VISIT_FIELD(name, ...) f(#name, it.name);
  BP_ITERATION_FIGURES(BP_VISIT_FIELD)
#undef BP_VISIT_FIELD
}
template <typename F>
void ForEachScheduleTerm(const IterationFigures& it, F&& f) {
#define BP_VISIT_FIELD(name, ...) f(#name, it.name);
  BP_SCHEDULE_TERMS(BP_VISIT_FIELD)
#undef BP_VISIT_FIELD
}
template <typename F>
void ForEachMemoryFigure(const MemoryFigures& m, F&& f) {
#define BP_VISIT_FIELD(name, ...) f(#name, m.name);
  BP_MEMORY_FIGURES(BP_VISIT_FIELD)
#undef BP_VISIT_FIELD
}
template <typename F>
void ForEachMemoryTerm(const MemoryFigures& m, F&& f) {
#define BP_VISIT_FIELD(name, ...) f(#name, m.name);
  BP_MEMORY_TERMS(BP_VISIT_FIELD)
#undef BP_VISIT_FIELD
}

// The whole training (or inference) step of pipeline stage 0, and what the
// first and the last stage's extra work adds to it (the slowest stage sets
// the pace).
void ComputeIteration(const BlockFigures& block, const StageExtras& extras,
                      const StepShape& step, IterationFigures& out);
// The same without stage extras (Calculon's model; the strategy search).
void ComputeIteration(const BlockFigures& block, const StepShape& step,
                      IterationFigures& out);

// Memory per rank and per tier (stage 0's, Calculon's figures), and per
// stage with the stage extras.
void ComputeMemory(const BlockFigures& block, const StageExtras& extras,
                   const StepShape& step, MemoryFigures& out);
void ComputeMemory(const BlockFigures& block, const StepShape& step,
                   MemoryFigures& out);

// What the memory analysis reads of a block's and its stage extras'
// figures, in two parts: the state (weights, weight gradients, optimizer
// state), which a ZeRO stage changes and the microbatch size does not, and
// the activations, which the microbatch size changes and a ZeRO stage does
// not. The strategy search keeps each part where it is the same for many
// choices (per ZeRO stage, per block configuration and microbatch size)
// and makes its memory verdicts from the two, without reading the blocks.
struct BlockState {
  double weight_space = 0, weight_grad_space = 0,
         weight_grad_space_no_sharding = 0, optimizer_space = 0;
};
struct BlockActivations {
  double working_space = 0, storage_space = 0, checkpoint_size = 0,
         grad_space = 0;
};
struct MemoryState {
  BlockState block, first, last;
};
struct MemoryActivations {
  BlockActivations block, first, last;
};
MemoryState MemoryStateOf(const BlockFigures& block, const StageExtras& extras);
MemoryActivations MemoryActivationsOf(const BlockFigures& block,
                                      const StageExtras& extras);
// ComputeMemory from the two parts, with `in_flight` = MemoryInFlight(step)
// given (the search computes it once per schedule shape, not per choice).
// The same operations in the same order: the same figures, bit for bit.
void ComputeMemory(const MemoryState& state,
                   const MemoryActivations& activations, const StepShape& step,
                   double in_flight, MemoryFigures& out);

// The tier-1 bytes of a rank's weights, weight gradients and optimizer
// state (offloaded or not, as ComputeMemory places them): a lower bound on
// ComputeMemory's proc_mem_tier1_cap_req, rounding included (its other
// terms are activations, >= 0, added between these), that does not depend
// on the microbatch size. The strategy search rules out at once every
// microbatch size of every choice with the same ZeRO stage and offload
// when it exceeds the tier-1 capacity.
double StateTier1Bytes(const BlockState& block, const StepShape& step);
// StateTier1Bytes is over the tier-1 capacity: so is the rank, whatever
// its activations (MemoryTier1Fits is false for every microbatch size).
bool StateExceedsTier1(const BlockState& block, const StepShape& step);

// MemoryTier1Fits / MemoryTier2Fits / MemoryFits: the requirement of the
// first / second / each memory tier is within its capacity (Calculon's
// memory check, and every stage's tier-1 requirement; a NaN requirement is
// not over the capacity).
bool MemoryTier1Fits(const MemoryFigures& memory);
bool MemoryTier2Fits(const MemoryFigures& memory);
bool MemoryFits(const MemoryFigures& memory);

// StepTimeLowerBound: a lower bound on ComputeIteration(block, step)
// .total_time whatever step's PP and DP tiers (pipeline_net, data_net and
// the flags that compare them): the compute of the step and its exposed TP
// and re-communication time, the same terms as ComputeIteration's (every
// other term of total_time is >= 0), and a bound on the pipeline bubble:
// for a simulated schedule the bubble part is MinimumBubble at the
// chunks' compute (core/schedule/simulate.h), else Calculon's closed form
// at the block times without their PP and offload terms (an uneven stage
// layout's reduction included). The strategy search uses it to skip
// mappings that cannot rank (and so their simulations).
double StepTimeLowerBound(const BlockFigures& block, const StepShape& step);

// What StepTimeLowerBound reads of a block's figures, by the same names:
// the strategy search keeps it beside each planned block's tiers, so that
// a bound reads these 88 bytes, not the block's kilobytes.
struct BoundFigures {
  double block_fw_time = 0, block_agrad_time = 0, block_wgrad_time = 0,
         block_re_time = 0, block_optim_time = 0;
  double baseblock_fw_tp_time_exposed = 0, edgeblock_fw_tp_time_exposed = 0;
  double baseblock_agrad_tp_time_exposed = 0,
         edgeblock_agrad_tp_time_exposed = 0;
  double baseblock_recomm_time_exposed = 0, edgeblock_recomm_time_exposed = 0;
};
BoundFigures BoundFiguresOf(const BlockFigures& block);
// StepTimeLowerBound(block, step) == StepTimeLowerBound(
// BoundFiguresOf(block), step), bit for bit.
double StepTimeLowerBound(const BoundFigures& block, const StepShape& step);

// The most microbatches whose activations one stage holds at once (in
// units of a whole stage's): 1F1B's min(m, p), interleaving's
// min(m, p)(1 + (p - 1)/(v p)), or a simulated schedule's busiest stage at
// equal F, B and W times (NaN if its simulation fails, unreachable after
// the checker). The memory analysis multiplies activations by it.
double PeakInFlightMicrobatches(const StepShape& step);
// What ComputeMemory multiplies the activations by: in training
// PeakInFlightMicrobatches, else 0 (not read).
double MemoryInFlight(const StepShape& step);

// One chunk's durations for the concrete scheduler (core/schedule), from a
// computed iteration: F = chunk_fw_time; W = the weight-gradient GEMMs of
// the chunk's blocks (blocks_per_chunk * block_wgrad_time, at most
// chunk_bw_time), which zero-bubble orders run apart; B = the rest of the
// backward (recompute, input gradients, exposed TP/PP, offload overhead).
// Inference: B = W = 0. A schedule that does not split runs B + W as one.
// For the schedules that overlap one microbatch's forward with another's
// backward (dualpipe, dualpipe_v; OverlapsForwardBackward), F&B =
// chunk_fb_time.
ChunkDurations ChunkDurationsOf(const BlockFigures& block,
                                const StepShape& step,
                                const IterationFigures& it);

// LayoutPositionDurations: under an explicit layout (HasExplicitLayout),
// each model position's chunk durations, one entry per stage_blocks entry:
// a chunk of n >= 1 blocks takes n - 1 base blocks and an edge block (the
// edge block carries the chunk's pipeline send, as ChunkDurationsOf's
// chunk of blocks_per_chunk blocks does: the busiest chunk's durations are
// ChunkDurationsOf's), an empty one (a layout string's stage of only "E"
// or "L") only the pipeline send; W = n weight-gradient GEMMs, at most the
// backward. Empty without a layout. Not for F&B schedules (the checker
// refuses layouts with them).
std::vector<ChunkDurations> LayoutPositionDurations(
    const BlockFigures& block, const StepShape& step,
    const IterationFigures& it);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ANALYSIS_FIGURES_H_
