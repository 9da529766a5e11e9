// The quirks of Calculon's model (../shared/calculon/MODEL.md §6) that
// Blueprinting reproduces so that its figures align with Calculon's. They are
// all switched here and nowhere else: a corrected profile flips a constant,
// and the golden digests (bazel run //tools:update_golden) show what moved.
// Quirk §6.5 (DP overlap assumes p microbatches per chunk) is the structure
// of Calculon's DP-overlap formula itself and has no switch.
#ifndef BLUEPRINTING_CORE_PLAN_QUIRKS_H_
#define BLUEPRINTING_CORE_PLAN_QUIRKS_H_

namespace blueprint::quirks {

// §6.1: recompute FLOPs/bytes/times accumulate the running block totals
// instead of the recomputed layer's own (block_re_time is unaffected).
inline constexpr bool kRecomputeAddsRunningTotals = true;

// §6.2: an overlapped linear's exposed time is the one of its last
// processing call, so the re-communication reports the forward exposure.
inline constexpr bool kOverlapExposedFromLastCall = true;

// §6.3: with "pipe" TP overlap the extra tile is added to the processing time
// as well as to the exposed time (counted twice).
inline constexpr bool kPipeTileInProcessingTime = true;

// §6.4: a pipeline send costs its latency even when p = 1 (0 bytes), inside
// the edge-block times.
inline constexpr bool kPointToPointLatencyWithoutPipeline = true;

// §6.6: the full-recompute checkpoint is b*s*h elements, not divided by t
// under sequence parallelism.
inline constexpr bool kCheckpointUnsplitBySequenceParallelism = true;

// §6.7: useful FLOPs count the optimizer step once per microbatch, although
// it runs once per step.
inline constexpr bool kOptimizerFlopsPerMicrobatch = true;

}  // namespace blueprint::quirks

#endif  // BLUEPRINTING_CORE_PLAN_QUIRKS_H_
