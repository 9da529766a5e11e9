// The step-level shape of a mapping: pipeline schedule, degrees, batch,
// options and the networks that carry PP and DP traffic. Built from the
// derived values of a mapping (the schedule's chunks per stage among them,
// derive.h VirtualStages); the iteration and
// memory analyses are pure, allocation-free functions of it and of a
// block's figures, so the strategy search can reuse block figures across
// pipeline, data-parallel and batch choices.
#ifndef BLUEPRINTING_CORE_ANALYSIS_SCHEDULE_H_
#define BLUEPRINTING_CORE_ANALYSIS_SCHEDULE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"

#include "core/schedule/memo.h"
#include "core/schedule/schedule_ir.h"
#include "core/spec/accounting.h"
#include "core/spec/corrections.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"

namespace blueprint {

struct StepShape {
  bool training = true;
  int64_t p = 1, v = 1, m = 1, d = 1;
  // A schedule the concrete scheduler prices (gpipe, dualpipe, dualpipe_v,
  // zb_h1, zb_h2, zb_v: core/spec/spec_schedule.h): its bubble and in-flight
  // microbatches come from simulating its command order. nullopt: the
  // analytic contract (what the strategy search builds).
  std::optional<ScheduleKind> simulated_schedule;
  // Where a simulated schedule's figures are remembered (the strategy
  // search's, which asks for the same shape and durations many times);
  // nullptr: simulated on every use. Not owned; the same numbers either way.
  ScheduleMemo* schedule_memo = nullptr;
  // Correction kScheduledInFlight (the refined profile): the memory analysis
  // holds the in-flight microbatches of the schedule's command order for
  // 1f1b and interleaved too, not Calculon's interleaving factor.
  bool scheduled_in_flight = false;
  // The bytes per element the DP gradient reduction moves
  // (GradReduceBytesPerElement); 0: the weights' bytes, as Calculon.
  double grad_reduce_bytes = 0;
  int64_t blocks_per_stage = 1;   // bpp
  // The stages one rank holds (dualpipe 2: stage s of one model copy and
  // p - 1 - s of the other). A microbatch passes one of them, so the
  // compute is blocks_per_stage's; the state (weights, gradients, optimizer)
  // and the live activations are of stages_per_rank * blocks_per_stage
  // blocks, and in training each rank sums its gradients with its twin's.
  int64_t stages_per_rank = 1;
  int64_t blocks_per_chunk = 1;   // bpc
  int64_t bubble_reduction_blocks = 0;
  // An explicit stage layout (PipelineParallel::stage_blocks, p * v
  // entries in model order; a view of the program's): the first and the
  // last pipeline rank's own blocks (derive.h RankBlocks), on which the
  // embedding and the output layer are priced (figures.cc
  // LayoutStageImbalance: the slowest stage, blocks and vocabulary
  // together, paces the pipeline), and each position's chunk durations,
  // which a simulated schedule simulates (figures.h
  // LayoutPositionDurations). Without one (empty) the end stages are
  // priced at blocks_per_stage, Calculon's formula (SetStepLayout sets
  // these three).
  absl::Span<const int64_t> stage_blocks;
  int64_t first_rank_blocks = 0;
  int64_t last_rank_blocks = 0;
  int64_t global_batch = 1;
  RecomputePolicy recompute = RecomputePolicy::kNone;
  bool optimizer_sharding = false;
  // ZeRO-3 / FSDP: the weights too are sharded, and all-gathered before
  // the forward and the backward pass of each block.
  bool shard_parameters = false;
  int64_t cp = 1;  // context ranks: the world is t * cp * p * d
  int bytes_per_element = 2;
  // The weights' storage datatype's (WeightDatatype: FP8 parameters'
  // 1): what ZeRO-3 all-gathers.
  int weight_bytes_per_element = 2;
  PrecisionAccounting precision = PrecisionAccounting::kCalculon;
  bool data_overlap = false;
  Offload offload;
  // Bytes of one pipeline send (0 when p == 1).
  double pipeline_message_bytes = 0;
  const NetworkTier* pipeline_net = nullptr;
  const NetworkTier* data_net = nullptr;
  bool data_net_is_tensor_net = false;
  bool data_net_is_pipeline_net = false;
  const MemoryTier* mem1 = nullptr;
  const MemoryTier* mem2 = nullptr;
  double matrix_peak_flops = 0;  // tflops*kTFLOP of the datatype
  int64_t t = 1;
  // Tied embedding and output layer on different stages (p > 1, one stage
  // per rank): the last stage keeps a copy of the table, and in training
  // their gradients are summed between the first and the last stage each
  // step. (A dualpipe end rank holds both: one table serves both.)
  bool embedding_copy = false;
  // What Megatron-LM's accounting of the model reads (core/spec/accounting.h;
  // computed by the iteration analysis, not per shape: the strategy search
  // builds far more shapes than it evaluates iterations).
  AccountedModel accounted;
  int64_t padded_vocabulary = 0;
};

// HasExplicitLayout: the spec lays the blocks out itself (stage_blocks).
inline bool HasExplicitLayout(const StepShape& s) {
  return !s.stage_blocks.empty();
}

// HasTwinStages: each rank holds two stages of a pipeline (dualpipe), sums
// its gradients with its twin's, and both end ranks hold the first and the
// last stage. HoldsBothEnds: one rank holds the first and the last stage's
// own work (p = 1, or a dualpipe end rank).
inline bool HasTwinStages(const StepShape& s) {
  return s.stages_per_rank == 2 && s.p > 1;
}
inline bool HoldsBothEnds(const StepShape& s) {
  return s.p == 1 || HasTwinStages(s);
}

// MakeStepShape: the step shape of a mapping from its derived values
// (derive.h) and the parts of its spec they do not cover (the corrections
// of options.profile). Pure and
// allocation-free (the strategy search builds one per mapping); the shape
// points into `system`, which must outlive it.
StepShape MakeStepShape(const DerivedValues& derived,
                        const TransformerModel& model, const System& system,
                        const Batch& batch, const ExecutionOptions& options);
// The same with the model's accounting given (AccountedModelOf(model)): the
// strategy search computes it once, not per mapping.
StepShape MakeStepShape(const DerivedValues& derived,
                        const TransformerModel& model, const System& system,
                        const Batch& batch, const ExecutionOptions& options,
                        const AccountedModel& accounted);

// The same for a checked program, with the program's corrections in force;
// `program` must outlive the shape.
StepShape MakeStepShape(const TypedProgram& program);

// SetStepLayout: the shape of a mapping with an explicit stage layout
// (PipelineParallel::stage_blocks; nothing when it is empty): a view of the
// layout, which must outlive the shape, and its end ranks' blocks.
void SetStepLayout(StepShape& shape, const std::vector<int64_t>& stage_blocks);

// SetStepMicrobatchSize: `shape` (MakeStepShape of `derived`) given another
// microbatch size, as MakeStepShape makes it: the microbatch count and the
// pipeline message (the strategy search shapes a choice once, then each of
// its microbatch sizes).
void SetStepMicrobatchSize(StepShape& shape, const DerivedValues& derived,
                           const TransformerModel& model,
                           int64_t microbatch_size);

// GradReduceBytesPerElement: the bytes per gradient element the DP
// gradient reduction moves: those of options.grad_reduce_datatype, or when
// it is null 4 under correction kFp32GradientReduction (bfloat16 under
// Megatron-LM's precision accounting, `corrections` having it on), else the
// datatype's where the weights are stored in another width (FP8
// parameters: gradients are never FP8), else 0: the weights' bytes,
// Calculon's.
double GradReduceBytesPerElement(const ExecutionOptions& options,
                                 const Corrections& corrections);

// SetStepNetworks: puts the step's PP and DP traffic on tiers `pipeline_net`
// and `data_net` of `system` and records whether the DP tier is the TP or
// the PP one (Calculon compares network objects: the same tier index).
// MakeStepShape calls it; the strategy search calls it to move one shape
// across tier assignments.
inline void SetStepNetworks(StepShape& step, const System& system,
                            int64_t tensor_net, int64_t pipeline_net,
                            int64_t data_net) {
  step.pipeline_net = &system.networks[static_cast<size_t>(pipeline_net)];
  step.data_net = &system.networks[static_cast<size_t>(data_net)];
  step.data_net_is_tensor_net = data_net == tensor_net;
  step.data_net_is_pipeline_net = data_net == pipeline_net;
}

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ANALYSIS_SCHEDULE_H_
