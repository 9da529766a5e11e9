// DistributedTaskIR: one local tensor-parallel transformer block, as the
// tasks one TP rank runs for one microbatch, on a LogicalMesh with a single
// `tp` axis, followed (for a model with a vocabulary) by the tasks the first
// and the last pipeline stage run once per microbatch besides their blocks. Each task carries its per-stage work (FLOPs, bytes accessed),
// its collectives for the base and the edge block of a pipeline chunk, its
// memory footprints and its recompute / re-communication / storage flags.
// Pipeline and data parallelism stay in the TypedProgram and are composed by
// the iteration analysis.
//
// Produced by LowerTensorParallelBlock (lower.h); consumed by PlanPortable.
#ifndef BLUEPRINTING_CORE_TASKIR_TASK_IR_H_
#define BLUEPRINTING_CORE_TASKIR_TASK_IR_H_

#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "core/spec/spec.h"

namespace blueprint {

// Lineage: the pass that made a node and what it came from: spec fields
// ("spec:model.hidden"), earlier IR nodes ("task:3"), system parameters
// ("system:networks[0].bandwidth"). Never empty.
struct Lineage {
  std::string pass;
  std::vector<std::string> sources;
};

// The stages of Calculon's per-layer accounting.
enum class Stage { kForward = 0, kActivationGrad = 1, kWeightGrad = 2,
                   kOptimizer = 3 };
inline constexpr int kNumStages = 4;
const char* StageName(Stage s);  // "fw", "agrad", "wgrad", "optim"

// Which block of a pipeline chunk: all but the last are base blocks.
enum class BlockVariant { kBase = 0, kEdge = 1 };
inline constexpr int kNumVariants = 2;
const char* BlockVariantName(BlockVariant v);  // "base", "edge"

// The phases that can carry a TP collective: forward, backward (activation
// gradient) and re-communication during recompute.
enum class CommPhase { kForward = 0, kBackward = 1, kRecommunication = 2 };
inline constexpr int kNumCommPhases = 3;
const char* CommPhaseName(CommPhase p);  // "fw", "bw", "recomm"

// The same as indices into the per-stage, per-phase and per-variant arrays
// (StageWork, Task::collectives, the plan's times), for every pass that
// reads them.
inline constexpr int kFw = static_cast<int>(Stage::kForward);
inline constexpr int kAgrad = static_cast<int>(Stage::kActivationGrad);
inline constexpr int kWgrad = static_cast<int>(Stage::kWeightGrad);
inline constexpr int kOptim = static_cast<int>(Stage::kOptimizer);
inline constexpr int kFwPhase = static_cast<int>(CommPhase::kForward);
inline constexpr int kBwPhase = static_cast<int>(CommPhase::kBackward);
inline constexpr int kRecommPhase =
    static_cast<int>(CommPhase::kRecommunication);
inline constexpr int kBase = static_cast<int>(BlockVariant::kBase);

enum class CollectiveOp { kNone, kAllReduce, kReduceScatter, kAllGather,
                          kPointToPoint, kAllToAll };
const char* CollectiveOpName(CollectiveOp op);

// The group of ranks a collective runs over: the block's tensor-parallel
// ranks, the expert-parallel ranks (the MoE all-to-all) or the
// context-parallel ranks (the K/V exchange). Each runs on its dimension's
// network tier.
enum class MeshAxis { kTensor = 0, kExpert = 1, kContext = 2 };
const char* MeshAxisName(MeshAxis a);  // "tp", "ep", "cp"

//----- Task kinds (one struct per kind; local shapes) ------------------------

struct LinearTask { int64_t m = 0, n = 0, k = 0; };   // Y[m,k] = X[m,n] W[n,k]
// A linear fused with its TP collective, tiled t ways (TP overlap ring/pipe).
struct OverlappedLinearTask {
  int64_t m = 0, n = 0, k = 0;  // local shape after the split
  bool conjugate = false;       // false: AG/identity before; true: RS/AR after
  TensorOverlap overlap = TensorOverlap::kRing;
  int64_t tiles = 1;
};
struct BatchMatMulTask { int64_t batch = 0, m = 0, n = 0, k = 0; };
struct LayerNormTask { int64_t elements = 0, hidden = 0; };
struct DropOutTask { int64_t elements = 0; };
struct GeLUTask { int64_t elements = 0; bool fused = false; };
// The gated MLP's activation (SwiGLU, GeGLU): act(gate) * up over
// `elements` outputs, reading twice as many inputs.
struct GatedActivationTask { int64_t elements = 0; bool fused = false; };
// A vocabulary-parallel embedding lookup: `tokens` rows gathered from this
// rank's `rows` x `hidden` table.
struct EmbeddingTask { int64_t tokens = 0, rows = 0, hidden = 0; };
struct SoftMaxTask { int64_t elements = 0; };
struct ElementWiseTask { int64_t lhs = 0, rhs = 0; };
struct ForkTask { int64_t elements = 0, users = 0; };
// A token permutation of an MoE block (Megatron-LM core/transformer/moe/
// moe_utils.py permute, unpermute, sort_chunks_by_idxs): `read` rows of
// `hidden` elements gathered or scattered by index into `written` rows;
// memory-bound, no FLOPs.
struct PermutationTask { int64_t read = 0, written = 0, hidden = 0; };
// An MoE block's router kernels after its gating GEMM (correction
// kMoeRouterKernels): score function, top-k, the probabilities and routing
// map over `experts`, the auxiliary loss's passes with `aux_loss`, for
// `tokens` rows; one fused pass each way with `fused`. Memory-bound, no
// FLOPs counted.
struct RouterKernelsTask {
  int64_t tokens = 0, experts = 0, topk = 0;
  bool fused = false, aux_loss = false;
};
// Megatron's f (conjugate = false: identity/all-gather forward) and g
// (conjugate = true: all-reduce/reduce-scatter forward) operators.
struct TensorCommTask { int64_t elements = 0; bool conjugate = false; };
// An exchange of `elements` per rank over the expert ranks (the MoE
// dispatch or combine all-to-all) or the context ranks (K/V blocks of a
// ring, or one all-gather), with `overlapped_by` the task whose compute
// hides it (-1: none, exposed in full).
struct ExchangeTask {
  int64_t elements = 0;
  MeshAxis axis = MeshAxis::kExpert;
  int32_t overlapped_by = -1;
};

using TaskKind =
    std::variant<LinearTask, OverlappedLinearTask, BatchMatMulTask,
                 LayerNormTask, DropOutTask, GeLUTask, SoftMaxTask,
                 ElementWiseTask, ForkTask, TensorCommTask,
                 GatedActivationTask, EmbeddingTask, ExchangeTask,
                 PermutationTask, RouterKernelsTask>;
const char* TaskKindName(const TaskKind& kind);
// Whether a task of this kind is a matrix multiplication (GEMM work).
bool IsGemm(const TaskKind& kind);

// Work of one stage: FLOPs and bytes of local memory traffic.
struct StageWork {
  double flops = 0;
  double bytes = 0;
  bool matrix_engine = false;  // else the vector engine
};

// One collective, on the tp axis unless it says otherwise.
struct Collective {
  CollectiveOp op = CollectiveOp::kNone;
  double bytes = 0;    // message size handed to the network model
  int64_t peers = 0;   // the ranks of its axis (t for tp)
  MeshAxis axis = MeshAxis::kTensor;
  // The reduction FLOPs it carries (vector engine), 0 if none.
  double reduction_flops = 0;
};

// Memory footprints in bytes, as Calculon's layer getters define them.
struct Footprint {
  double weight = 0;
  double activation = 0;
  double output = 0;
  double activation_grad = 0;
  double weight_grad_sharded = 0;    // low precision, divided by the shard
  double weight_grad_unsharded = 0;  // fp32
  double optimizer = 0;              // master weights + Adam moments / shard
};

// Per-task flags. The defaults describe a task that stores its activation
// and its output and redoes nothing; build others by naming each change:
//   TaskFlags().WithRecompute(full).WithActivationStored(false)
struct TaskFlags {
  bool recompute = false;          // re-run in the backward pass
  bool recommunicate = false;      // collective redone during recompute
  bool activation_stored = true;
  bool activation_reused = false;  // stored by another task
  bool output_stored = true;

  // Copies with one flag set.
  constexpr TaskFlags WithRecompute(bool on) const {
    TaskFlags f = *this;
    f.recompute = on;
    return f;
  }
  constexpr TaskFlags WithRecommunicate(bool on) const {
    TaskFlags f = *this;
    f.recommunicate = on;
    return f;
  }
  constexpr TaskFlags WithActivationStored(bool on) const {
    TaskFlags f = *this;
    f.activation_stored = on;
    return f;
  }
  constexpr TaskFlags WithActivationReused(bool on) const {
    TaskFlags f = *this;
    f.activation_reused = on;
    return f;
  }
  constexpr TaskFlags WithOutputStored(bool on) const {
    TaskFlags f = *this;
    f.output_stored = on;
    return f;
  }
};

// Where a task runs: in every transformer block, or once per microbatch on
// the first pipeline stage (the input embedding) or the last (final norm,
// output layer, loss).
enum class Placement { kEveryBlock = 0, kFirstStage = 1, kLastStage = 2 };
inline constexpr int kNumPlacements = 3;
const char* PlacementName(Placement p);  // "block", "first_stage", ...

// The part of an MoE block a task belongs to, set where the lowering adds
// it (lower_mlp.cc): the analysis sums the plan's times of one MoE block by
// part (the moe_block_* figures), with no task named twice. kNone for every
// other task, the MoE block's residual branch (fork, norm, dropout,
// residual add) included.
enum class MoePart : int8_t {
  kNone = 0,
  kRouter = 1,          // the gating linear and the router kernels
  kPermutation = 2,     // the token permutations around the exchanges
  kDispatch = 3,        // the exchange to the experts' ranks
  kExperts = 4,         // the routed experts' linears and activation
  kCombine = 5,         // the exchange back
  kSharedExperts = 6,   // the shared experts' linears, activation, f and g
};
inline constexpr int kNumMoeParts = 7;
// "none", "router", "permutation", "dispatch", "experts", "combine",
// "shared_experts"
const char* MoePartName(MoePart p);

struct Task {
  int32_t id = 0;
  Placement placement = Placement::kEveryBlock;
  // The share of the priced stage's blocks that run this block task: 1, or
  // for a model whose blocks differ (dense and MoE layers) the dense or MoE
  // fraction of the stage with most MoE blocks. Every per-block sum weighs
  // the task by it, so blocks_per_stage times a sum is the stage's.
  double share = 1;
  // A routed expert's weights: its state shards over the expert
  // data-parallel ranks, not the data-parallel ones, and it counts in the
  // per-rank expert parameters.
  bool expert_state = false;
  MoePart moe_part = MoePart::kNone;
  std::string name;  // Calculon's layer name, e.g. "AttnBlock_Query"
  TaskKind kind;
  std::array<StageWork, kNumStages> work;
  // collectives[phase][variant]
  std::array<std::array<Collective, kNumVariants>, kNumCommPhases> collectives;
  Footprint footprint;
  TaskFlags flags;
  // GEMM work of this task summed over the t ranks, for work conservation
  // (0 for non-GEMM tasks).
  double unsharded_gemm_flops = 0;
  std::vector<int32_t> deps;  // ids of the tasks whose output this consumes
  Lineage lineage;
};

struct LogicalMesh {
  int64_t tp = 1;  // the axis of the local block
  int64_t ep = 1;  // expert ranks of the MoE all-to-all
  int64_t cp = 1;  // context ranks of the K/V exchange
};

struct DistributedTaskIR {
  static constexpr const char* kFormat = "blueprinting.distributed_task_ir/1";
  LogicalMesh mesh;
  bool training = true;
  int bytes_per_element = 2;
  int64_t optimizer_shard = 1;
  TensorOverlap overlap = TensorOverlap::kNone;
  std::vector<Task> tasks;
};

// Canonical text: format line first, one task per block of lines, every
// number exact or in shortest round-trip form, lineage on every node.
std::string ToText(const DistributedTaskIR& ir);

// Structural invariants: dense ids, acyclic edges pointing backwards within a
// placement (blocks first, then first-stage, then last-stage tasks), lineage
// on every node, collectives only on TP tasks (shard boundaries), no negative
// or NaN quantity, work conservation over the tp axis. kWithoutLineage skips
// the lineage check, for LowerTensorParallelBlock::RunWithoutLineage alone.
// With `only` (increasing task ids), the checks of single tasks are made
// on those alone, the others being those of an IR verified before
// (LowerTensorParallelBlock::Relower); work conservation is checked
// over every task, the others' GEMM work read from `others` when given
// (GemmWork of those tasks, which the caller promises unchanged) instead of
// summed again.
enum class TaskIRChecks { kAll, kWithoutLineage };

// The GEMM work of some tasks, as work conservation sums it: share x
// forward FLOPs, and share x unsharded GEMM FLOPs.
struct GemmWork {
  double local = 0;
  double unsharded = 0;
};
// Adds the GEMM work of `task` (none unless a GEMM) to `work`.
void AddGemmWork(const Task& task, GemmWork& work);

absl::Status VerifyTaskIR(const DistributedTaskIR& ir,
                          TaskIRChecks checks = TaskIRChecks::kAll,
                          const std::vector<int32_t>* only = nullptr,
                          const GemmWork* others = nullptr);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_TASKIR_TASK_IR_H_
