// PipelineScheduleIR: a concrete pipeline schedule as, per physical stage,
// the ordered commands of one training (or inference) iteration. It is the
// command-level counterpart of the analytic bubble contract of
// core/analysis/figures.cc (BubbleTerms): simulate.h replays it with
// durations and re-proves (or names the difference from) that contract.
//
// A microbatch travels a *route*: the ordered model positions (virtual
// stages) 0..L-1, each held by one (physical stage, local chunk). Interleaved
// schedules put chunk c of stage s at position c*p+s; V-shaped schedules
// (ZB-V, DualPipeV) put chunk 1 of stage s at 2p-1-s; DualPipe sends half the
// microbatches down the ranks and half up them (two routes).
#ifndef BLUEPRINTING_CORE_SCHEDULE_SCHEDULE_IR_H_
#define BLUEPRINTING_CORE_SCHEDULE_SCHEDULE_IR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/base/field_errors.h"
#include "core/schedule/schedule_table.h"

namespace blueprint {

enum class CommandKind {
  kForward,
  // The input-gradient backward, or the whole backward when the command does
  // not defer its weight gradient (Command::defers_weight_gradient).
  kBackward,
  kWeightGradient,
  // DualPipe: one chunk's forward overlapped with another chunk's whole
  // backward, priced as one "F&B" duration.
  kOverlappedForwardBackward,
  kSendActivation,
  kRecvActivation,
  kSendGradient,
  kRecvGradient,
  kDataParallelReduce,
  kOptimizerStep,
};

// "F", "B", "W", "FB", "SendActivation", "RecvActivation", "SendGradient",
// "RecvGradient", "DataParallelReduce", "OptimizerStep".
absl::string_view CommandKindName(CommandKind kind);

// Which of a stage's three in-order streams runs a command.
enum class StreamKind { kCompute, kSend, kRecv };
StreamKind StreamOf(CommandKind kind);

struct Command {
  CommandKind kind = CommandKind::kForward;
  // F, B, W and P2P: the microbatch and the local chunk (virtual stage index
  // on this physical stage). For P2P the chunk is the local chunk that
  // produces (send) or consumes (recv) the tensor. FB: the forward half.
  int64_t microbatch = -1;
  int64_t chunk = -1;
  // FB only: the backward half (always a whole backward).
  int64_t backward_microbatch = -1;
  int64_t backward_chunk = -1;
  // kBackward: true when a later kWeightGradient computes the weight
  // gradient (zero-bubble split), false when this command is the whole
  // backward.
  bool defers_weight_gradient = false;
  // P2P: the other physical stage.
  int64_t peer_stage = -1;
  // kDataParallelReduce and kOptimizerStep: their given duration (others are
  // priced from the simulation's chunk durations).
  double duration = 0;
  // Which constructor made it, e.g. "schedule:1f1b stage 2 mb 5 chunk 0 F".
  std::string lineage;
};

struct Route {
  // position -> physical stage and local chunk. Every route of a schedule
  // has the same length: p * chunks_per_stage, or p for DualPipe (each
  // direction visits one of a rank's two chunks).
  std::vector<int64_t> stage_of_position;
  std::vector<int64_t> chunk_of_position;
};

struct PipelineScheduleIR {
  ScheduleKind kind = ScheduleKind::kSingleStage;
  int64_t p = 1;  // physical stages
  int64_t v = 1;  // the v asked for (interleaving degree)
  int64_t m = 1;  // microbatches
  // Local chunks each stage holds (ChunksPerStage: v, or 2 for ZB-V,
  // DualPipe, DualPipeV).
  int64_t chunks_per_stage = 1;
  bool training = true;
  std::vector<Route> routes;
  std::vector<int64_t> route_of_microbatch;  // size m
  // stages[s]: stage s's commands in program order; each stream runs its
  // own commands in this order.
  std::vector<std::vector<Command>> stages;
};

// One chunk's (virtual stage's) durations, in any time unit.
struct ChunkDurations {
  double forward = 0;
  // The input-gradient backward; a backward that does not defer its weight
  // gradient runs backward_input + backward_weight.
  double backward_input = 0;
  double backward_weight = 0;  // 0 when the backward is not split
  double p2p_link_time = 0;    // each Send* command's duration
  // DualPipe's F&B (one forward overlapped with one whole backward); a
  // negative value means forward + backward_input + backward_weight.
  double overlapped_forward_backward = -1;
};

// F = B = W = 1, P2P folded: the zero-bubble paper's handcrafted-schedule
// assumption, and the durations BuildSchedule orders a duration-aware
// constructor for when it is given none.
ChunkDurations UnitSplitDurations();

// The compute orders of a constructor that times its own placements (zb_h2,
// zb_v: zero_bubble.h, v_schedule.h), with its timing: each command ends at
// max(the stage's previous end, its input's end + p2p_link_time) + its
// duration, which is the simulator's when p2p_link_time is 0 (P2P folded;
// simulate_test checks them equal).
struct TimedOrder {
  std::vector<std::vector<Command>> stages;  // F, split B, W; no P2P
  double makespan = 0;          // the latest end
  double max_compute_busy = 0;  // the largest sum of a stage's durations
  int64_t peak_live_chunks = 0;  // an F's activations live until its W
};

// Size limits, so that no request allocates without bound.
inline constexpr int64_t kMaxStages = 4096;
inline constexpr int64_t kMaxVirtualStages = 64;
inline constexpr int64_t kMaxMicrobatches = 1 << 20;
// p * chunks_per_stage * m: each slot yields at most 7 commands (F, B, W and
// up to four P2P), so an IR holds at most 700,000 commands (the analysis
// simulates twice per analyze: about a second and 120 MB natively at the
// bound).
inline constexpr int64_t kMaxMicrobatchChunkSlots = 100000;

// BuildSchedule: the schedule of `kind` for p stages, v virtual stages per
// stage and m microbatches. Invalid shapes give one InvalidArgument error
// listing every violated rule (field, value, rule), one per line:
//   p, v, m >= 1 and within the limits above;
//   the row's shape rules (schedule_table.h): single_stage: p = 1, v = 1;
//   gpipe, 1f1b, zb_h1, zb_h2: v = 1;
//   forward_only: any v (groups of p microbatches through each chunk);
//   interleaved: v >= 2; zb_v, dualpipe_v: v = 2; dualpipe: v = 1 (each rank
//   holds two chunks by construction), p even, m even, m >= 2p
//   (deepseek-ai/DualPipe's assertion); dualpipe_v: m >= 2p;
//   p * ChunksPerStage * m within kMaxMicrobatchChunkSlots.
// Interleaved follows Megatron-LM's table order in groups of N microbatches
// per chunk (InterleavedGroupSize: p, or when p does not divide m > p the
// smallest group size Megatron-LM accepts), and m < p is accepted as one
// short group (Megatron-LM rejects it). Groups of p with a short last group
// can deadlock (e.g. p 15, v 5, m 18), which is why Megatron-LM refuses
// them; BuildSchedule still replays m > p, p not dividing m, once at unit
// durations and rejects an order that cannot progress, naming the rule (no
// shape is known to).
// ScheduleShapeErrors: BuildSchedule's shape rules above (every violation,
// fields "p", "v", "m"), without its replay of interleaved leftover orders;
// the spec checker maps the fields to the spec's.
std::vector<FieldError> ScheduleShapeErrors(ScheduleKind kind, int64_t p,
                                            int64_t v, int64_t m);

absl::StatusOr<PipelineScheduleIR> BuildSchedule(ScheduleKind kind, int64_t p,
                                                 int64_t v, int64_t m);
// zb_h2's and zb_v's orders depend on the chunk durations
// (OrderDependsOnDurations, schedule_table.h); the overloads with
// `order_durations` order them for those (they must be finite and
// non-negative), the others use UnitSplitDurations(). Every other kind
// ignores them.
absl::StatusOr<PipelineScheduleIR> BuildSchedule(
    ScheduleKind kind, int64_t p, int64_t v, int64_t m,
    const ChunkDurations& order_durations);
// BuildTimedOrder: the compute orders and the constructor's own timing of
// an order made for its durations (zb_h2, zb_v; BuildSchedule's errors on
// the same arguments), without the IR: the analyses' figures when P2P is
// folded (memo.h SimulateShape). InvalidArgument for a fixed-order kind.
absl::StatusOr<TimedOrder> BuildTimedOrder(ScheduleKind kind, int64_t p,
                                           int64_t v, int64_t m,
                                           const ChunkDurations& durations);
// The same commands without their lineage strings: for the analyses'
// figures (core/schedule/memo.h), which simulate and never print the IR
// (the lineage is most of a build's cost and memory).
absl::StatusOr<PipelineScheduleIR> BuildScheduleWithoutLineage(
    ScheduleKind kind, int64_t p, int64_t v, int64_t m,
    const ChunkDurations& order_durations);

// The microbatches of one group of Megatron-LM's interleaved table
// (--microbatch-group-size-per-virtual-pipeline-stage, N): p, its default,
// unless p does not divide m > p. Megatron-LM refuses 0 < m mod N < p (its
// "dependency bubbles" RuntimeError), so then the smallest N > p it accepts:
// m mod N = 0 or m mod N >= p (N = m at worst).
int64_t InterleavedGroupSize(int64_t p, int64_t m);

// InterleavedFirstStagePeakChunks: the first stage's peak live chunks in
// Megatron-LM's order: its warm-up forwards plus one, 2(p-1) + (v-1)N + 1
// (N = InterleavedGroupSize(p, m)), capped at all m*v chunks.
// figures_memory.cc's factor min(m,p)(1 + (p-1)/(vp)) times v equals it
// when N = p and m*v >= vp + p - 1 (hence p | m); otherwise it may differ
// (simulate_test checks the count, and the equality where it holds).
int64_t InterleavedFirstStagePeakChunks(int64_t p, int64_t v, int64_t m);

// AppendStepTail: appends the data-parallel gradient reduction and the
// optimizer step, with the given durations, to every stage's compute stream
// (not overlapped with the pipeline, as Calculon's no-overlap DP). A zero
// duration still appends the command. Errors on negative or non-finite
// durations.
absl::Status AppendStepTail(PipelineScheduleIR& ir, double reduce_duration,
                            double optimizer_duration);

// A compute command (F, B or W) of microbatch `mb` on local chunk `chunk`,
// without lineage (BuildSchedule adds it).
Command ComputeCommand(CommandKind kind, int64_t mb, int64_t chunk,
                       bool defers = false);

// The position of (stage, chunk) on microbatch mb's route, or -1.
int64_t PositionOf(const PipelineScheduleIR& ir, int64_t microbatch,
                   int64_t stage, int64_t chunk);

// The length of the routes (0 when there is none).
int64_t RouteLength(const PipelineScheduleIR& ir);

// Total number of commands.
int64_t CommandCount(const PipelineScheduleIR& ir);

// The canonical text: first line "pipeline_schedule/1", then the shape, the
// routes and one line per command. Doubles print shortest round-trip
// (core/base/format.h), so the text can be digested.
std::string PrintSchedule(const PipelineScheduleIR& ir);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SCHEDULE_SCHEDULE_IR_H_
