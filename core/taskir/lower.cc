#include "core/taskir/lower.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <new>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/base/format.h"
#include "core/base/status_macros.h"
#include "core/spec/derive.h"
#include "core/taskir/optimizer.h"

namespace blueprint {
namespace {

// Raw per-layer quantities, named as in Calculon's Layer constructor (element
// counts, not bytes). The getters below turn them into a Task exactly as
// Calculon's Layer getters do, including every per-class override.
struct RawLayer {
  double fw_flops = 0, agrad_flops = 0, wgrad_flops = 0;
  double inputs = 0, outputs = 0;
  double activation_space = 0, activation_grads = 0;
  double weight_space = 0, weight_grads = 0, optim_space = 0;
  bool matrix = false;
};

// Everything a layer's lowering needs, computed once per block.
// How an MoE block permutes its tokens (correction kMoePermutation): in no
// kernel of its own (Calculon's model, the correction off, or HybridEP,
// whose exchange kernels permute), as Megatron-LM's all-to-all dispatcher
// does, or as its flex dispatcher with DeepEP.
enum class MoePermutation { kNone, kAllToAll, kFlex };

struct BlockContext {
  int64_t t, b, s, h, ff, a, dh;
  double bpe;
  double weight_bpe;          // the weights' storage datatype's
  double shard;
  bool training;
  bool sequence_parallel;     // rs_ag
  bool edge_split;            // p2p_rs_ag: split comm only in the edge block
  RecomputePolicy recompute;
  bool ag_redo;
  TensorOverlap overlap;
  bool fused;
  bool multiquery;
  int64_t g;                  // key/value heads (query groups)
  bool gated;                 // gated MLP: fc1 is gate and up, 2 ff wide
  bool rms_norm;
  bool bias;                  // linear biases
  int64_t vocab;              // padded vocabulary, 0 without one
  bool tied;                  // output layer shares the embedding
  int64_t positions;          // learned position rows, 0 for none
  Placement placement;        // of the tasks being added
  double share;               // of the tasks being added (Task::share)
  PrecisionAccounting precision;
  ShardingStage sharding;     // ZeRO stage (shard: its group, 1 for none)
  // Context parallelism: each rank holds s / cp of every sequence.
  int64_t cp;
  int64_t s_local;            // s / cp
  bool cp_ring;               // K/V by a p2p ring, else one all-gather
  // Mixture of experts (experts 0: dense).
  int64_t ep, etp, experts, topk, expert_ff, shared_ff;
  // Correction kSharedExpertOverlap with parallelism.expert.
  // shared_expert_overlap: the shared experts' linears cover the exchange.
  bool shared_covers_exchange;
  // Correction kMoePermutation: the token permutations as tasks, as the
  // dispatcher (parallelism.expert.dispatcher) runs them.
  MoePermutation permutation;
  double capacity;            // capacity factor
  double expert_shard;        // the expert data-parallel shard
  double dense_share, moe_share;  // of the priced stage's blocks
  // Latent attention (kv_lora 0: Q/K/V heads).
  int64_t q_lora, kv_lora, qk_dim, rope_dim, v_dim;
  int64_t mtp_layers;
  bool last_block_moe;        // MTP blocks are of the last block's kind
  // The refined profile's attention corrections (core/spec/corrections.h).
  bool flash_attention;       // one fused kernel: no s x s in memory
  double causal_factor;       // 0.5: the kernel skips masked blocks; else 1
  // Selective recomputation also recomputes the product with V.
  bool recompute_core_attention;
  int64_t batch_seq;          // b*s
  int64_t activation;         // A = b*s*h
  int64_t seq_par_activation; // As = (b*s/t)*h
  // Record each task's lineage (false: RunWithoutLineage, for pricing).
  bool lineage;
  // Relower: rebuild only the tasks that depend on ep, etp and the
  // exchange, in an IR that holds the block at other ones.
  bool relowering;
};

// A task's lineage sources as the builder collects them: string literals,
// made into the task's strings only when lineage is recorded (the strategy
// search lowers thousands of blocks and prints none of them), held inline
// so that collecting them allocates nothing.
using Sources = absl::InlinedVector<const char*, 12>;

class BlockBuilder {
 public:
  // Builds into `ir`, whose tasks it replaces (keeping their storage),
  // and records where its routed experts and exchanges are in `record`
  // when given. With ctx.relowering, `ir` must hold the block at other
  // expert degrees or exchange and `rebuild` where its lowering put those:
  // only their tasks are rebuilt (their ids appended to `rebuilt`),
  // nothing else is built.
  BlockBuilder(const BlockContext& ctx, DistributedTaskIR& ir,
               RelowerSections* record, const RelowerSections* rebuild,
               std::vector<int32_t>* rebuilt)
      : ctx_(ctx),
        ir_(ir),
        record_(record),
        rebuild_(rebuild),
        rebuilt_(rebuilt) {}

  // Fails only with ctx.relowering, when `ir` is not a block of the same
  // structure (another task count or name).
  absl::Status Build();

 private:
  // b * s of the whole microbatch, as a double (the unsharded GEMMs').
  double FullBatchSeq() const {
    return static_cast<double>(ctx_.b) * static_cast<double>(ctx_.s);
  }
  // Activation size of the non-TP-split path: As under sequence parallelism.
  int64_t ResidualActivation() const {
    return ctx_.sequence_parallel ? ctx_.seq_par_activation : ctx_.activation;
  }
  Task& Add(absl::string_view name, TaskKind kind, const RawLayer& raw,
            TaskFlags flags, Sources sources);
  // A linear layer's bias (k elements), when the model has biases: weights,
  // gradients and optimizer state. Its additions run in the GEMM's epilogue
  // and are not counted as work (m * k beside 2 * m * n * k).
  void AddBias(int64_t k, RawLayer& raw) const {
    if (!ctx_.bias) return;
    const double elements = static_cast<double>(k);
    raw.weight_space += elements;
    raw.weight_grads += elements;
    raw.optim_space += 2 * elements;
  }
  void FillDefaultFootprint(Task& task, const RawLayer& raw) const;
  // Linear(M, N, K) with per-class getters.
  // `unsharded` is the FLOPs of the whole model-level GEMM this task is a
  // shard of, computed from the unsplit model dimensions.
  Task& AddLinear(absl::string_view name, int64_t m, int64_t n, int64_t k,
                  double unsharded, TaskFlags flags,
                  Sources sources);
  Task& AddOverlappedLinear(absl::string_view name, int64_t m, int64_t n, int64_t k,
                            bool conjugate, double unsharded, TaskFlags flags,
                            Sources sources);
  Task& AddBatchMatMul(absl::string_view name, int64_t batch, int64_t m, int64_t n,
                       int64_t k, double unsharded, TaskFlags flags,
                       Sources sources);
  Task& AddLayerNorm(absl::string_view name, int64_t elements, TaskFlags flags);
  Task& AddDropOut(absl::string_view name, int64_t elements, TaskFlags flags,
                   Sources sources);
  Task& AddGeLU(absl::string_view name, int64_t elements, TaskFlags flags);
  Task& AddSoftMax(absl::string_view name, int64_t elements, TaskFlags flags);
  Task& AddElementWise(absl::string_view name, int64_t lhs, int64_t rhs,
                       TaskFlags flags);
  Task& AddFork(absl::string_view name, int64_t elements, int64_t users,
                TaskFlags flags, Sources sources);
  Task& AddTensorComm(absl::string_view name, bool conjugate, TaskFlags flags);
  Task& AddGatedActivation(absl::string_view name, int64_t elements,
                           TaskFlags flags);
  Task& AddEmbedding(absl::string_view name);
  // A token permutation of `read` rows into `written` rows of h elements
  // (PermutationTask), the same bytes in the backward pass.
  Task& AddPermutation(absl::string_view name, int64_t read, int64_t written,
                       TaskFlags flags);
  // The rows of an MoE block's token permutations (correction
  // kMoePermutation): the rank's tokens (local), their routed copies
  // (routed: local x topk; the all-to-all dispatcher's token-side tasks
  // only) and the rows its experts receive (received; 0 for the
  // all-to-all dispatcher with one local expert, whose tasks stay so that
  // a relowering at another ep rebuilds as many tasks).
  struct Permutations {
    int64_t local = 0, routed = 0, received = 0;
  };
  Permutations PermutationRows(double received, double local_experts) const;
  // The activation after an MLP's first linear: `prefix`_GatedActivation
  // (gated MLP) or `prefix`_GeLU over `elements`; returns its id.
  int32_t AddMlpActivation(absl::string_view prefix, int64_t elements,
                           bool full);
  // A routed expert's linear: `tokens` rows (the rank's share of the
  // routed tokens, capacity included) through n x k on each of the rank's
  // `local_experts` experts, whose weights and optimizer state shard over
  // the expert data-parallel ranks.
  Task& AddExpertLinear(absl::string_view name, double tokens, int64_t n, int64_t k,
                        double local_experts, Sources sources,
                        TaskFlags flags);
  // An exchange over the expert or context ranks (ExchangeTask): `elements`
  // per rank, `fw`/`bw` its forward and backward collectives (bytes each).
  Task& AddExchange(absl::string_view name, MeshAxis axis, int64_t peers,
                    double elements, CollectiveOp fw, double fw_bytes,
                    CollectiveOp bw, double bw_bytes, int32_t overlapped_by,
                    Sources sources);
  // The refined profile's flash attention (core/spec/corrections.h): the
  // four tasks of Calculon's attention core priced as one fused kernel.
  void FuseAttention(int32_t scores, int32_t softmax, int32_t dropout,
                     int32_t context, int64_t value_size);
  // Records that `task` reads the outputs of `producers` (sorted, unique).
  void Reads(int32_t task, std::initializer_list<int32_t> producers);

  // The residual branch around each sub-block: fork + layer norm before it
  // (returns the fork's and the norm's ids; the fork reads `input`, -1 for
  // none), dropout + residual add after it (reading `output` and the fork;
  // returns the residual's id). `prefix` is "AttnBlock" or "MlpBlock".
  std::pair<int32_t, int32_t> AddBranchStart(absl::string_view prefix,
                                             bool full, int32_t input);
  // Latent attention's Q and K/V projections (q_lora 0: one Q linear);
  // returns {query, key/value} ids, both reading `input`.
  std::pair<int32_t, int32_t> BuildLatentProjections(int32_t input,
                                                     bool full);
  // The K/V exchange of context parallelism before the scores, reading
  // the key and value tasks; -1 when cp = 1.
  int32_t BuildContextExchange(int32_t key, int32_t value);
  int32_t AddBranchEnd(absl::string_view prefix, bool full, int32_t output,
                       int32_t fork);
  // Each returns the id of its last task; `input` is the task they read
  // (-1: none, the first task of the block).
  int32_t BuildAttention(int32_t input);
  int32_t BuildMlp(int32_t input);
  int32_t BuildMoe(int32_t input);
  // A MoE block's routed experts, reading the router's scores and the
  // normed input: the dispatch, the experts' GEMMs and activation, the
  // combine (all the tasks that depend on ep and etp); the id of the last.
  int32_t BuildRoutedExperts(int32_t router, int32_t norm);
  // Marks exchange task `exchange` as run beside task `cover`.
  void CoverExchange(int32_t exchange, int32_t cover) {
    auto* kind = std::get_if<ExchangeTask>(
        &ir_.tasks[static_cast<size_t>(exchange)].kind);
    if (kind != nullptr) kind->overlapped_by = cover;
  }
  // The exchange task nearest before `id` (the dispatch before a combine).
  int32_t ExchangeBefore(int32_t id) const {
    for (int32_t i = id - 1; i >= 0; --i) {
      if (std::holds_alternative<ExchangeTask>(
              ir_.tasks[static_cast<size_t>(i)].kind)) {
        return i;
      }
    }
    return id;
  }
  // The share a block's MoE MLP weighs, of a block that weighs `share`.
  double MoeShare(double share) const {
    return ctx_.dense_share == 0 ? share : share * ctx_.moe_share;
  }
  // ctx.relowering: BuildRoutedExperts and BuildContextExchange again over
  // each of rebuild_'s sections.
  absl::Status RebuildSections();
  // A block's MLP part: dense, MoE, or both with their shares.
  void BuildMlps(int32_t input);
  // The input embedding (first stage) and the final norm, output layer and
  // loss (last stage), for a model with a vocabulary.
  void BuildFirstStage();
  void BuildLastStage();

  // The next task of the block: ir_.tasks[used_], reset, or a new one.
  // With ctx_.relowering: the task of that index, which must be named
  // `name` unless renaming_ (else discard_ and mismatch_), its
  // dependencies kept.
  Task& NextTask(absl::string_view name);
  // `prefix` followed by `suffix`, in a buffer every name reuses: valid
  // until the next call (a task copies its name when added). Made per
  // block, such names were an allocation each; the buffer holds the
  // longest name without one (a builder is made per lowering).
  absl::string_view Name(absl::string_view prefix, absl::string_view suffix) {
    name_.assign(prefix.begin(), prefix.end());
    name_.insert(name_.end(), suffix.begin(), suffix.end());
    return absl::string_view(name_.data(), name_.size());
  }
  // The task `id` to modify after it was added: discard_ where
  // ctx_.relowering does not rebuild it.
  Task& TaskAt(int32_t id);

  BlockContext ctx_;  // a copy: the placement changes as the build goes
  DistributedTaskIR& ir_;
  size_t used_ = 0;  // tasks of this build; ir_'s others are reused storage
  RelowerSections* record_;         // may be null
  const RelowerSections* rebuild_;  // with ctx_.relowering
  std::vector<int32_t>* rebuilt_;   // with ctx_.relowering
  // Relowering an exchange, whose name is its kind.
  bool renaming_ = false;
  // What relowering builds a task of another name into; its first
  // mismatch.
  Task discard_;
  absl::Status mismatch_;
  absl::InlinedVector<char, 64> name_;  // Name's
};

// A MoE block's tasks depend on these fields.
Sources MoeSources() {
  return {"spec:model.hidden",          "spec:model.moe",
          "spec:parallelism.expert",    "spec:parallelism.tensor.degree",
          "spec:batch.microbatch_size", "spec:model.seq_size"};
}

// Activation-sized tasks on the residual path depend on these fields.
const Sources& ResidualSources() {
  static const auto* sources = new Sources{
      "spec:model.hidden", "spec:batch.microbatch_size", "spec:model.seq_size",
      "spec:parallelism.recompute"};
  return *sources;
}

// A task that reads its input from an activation another task stores (the
// fork before it) instead of storing its own copy.
constexpr TaskFlags kReusesActivation =
    TaskFlags().WithActivationStored(false).WithActivationReused(true);

void BlockBuilder::FillDefaultFootprint(Task& task, const RawLayer& raw) const {
  const double bpe = ctx_.bpe;
  Footprint& fp = task.footprint;
  // ZeRO-3 keeps 1/shard of the weights between uses.
  const double weight_shard =
      ctx_.sharding == ShardingStage::kParameters ? ctx_.shard : 1.0;
  fp.weight = raw.weight_space * ctx_.weight_bpe / weight_shard;
  fp.activation = raw.activation_space * bpe;
  fp.output = raw.outputs * bpe;
  fp.activation_grad = raw.activation_grads * bpe;
  fp.weight_grad_sharded =
      WeightGradBytesFor(ctx_.precision, raw.weight_grads, bpe, ctx_.shard,
                         ctx_.sharding >= ShardingStage::kGradients);
  fp.weight_grad_unsharded = UnshardedWeightGradBytes(raw.weight_grads);
  fp.optimizer =
      OptimizerStateBytes(raw.weight_space, raw.optim_space, bpe, ctx_.shard);
}

Task& BlockBuilder::Add(absl::string_view name, TaskKind kind, const RawLayer& raw,
                        TaskFlags flags, Sources sources) {
  // Built in place: a task is some 700 bytes, and the search lowers
  // thousands of blocks of about a hundred tasks into one IR, whose tasks
  // it reuses with their strings and vectors (malloc and free were a sixth
  // of its time).
  const int32_t id = static_cast<int32_t>(used_);
  Task& task = NextTask(name);
  task.id = id;
  if (&task == &discard_) return task;  // a relowering's mismatch
  task.placement = ctx_.placement;
  task.share = ctx_.share;
  // A relowered task kept its name (NextTask checked it), but an exchange,
  // renamed as its kind.
  if (!ctx_.relowering || renaming_) task.name.assign(name.data(), name.size());
  task.kind = std::move(kind);
  const double bpe = ctx_.bpe;
  StageWork& fw = task.work[static_cast<int>(Stage::kForward)];
  StageWork& ag = task.work[static_cast<int>(Stage::kActivationGrad)];
  StageWork& wg = task.work[static_cast<int>(Stage::kWeightGrad)];
  StageWork& op = task.work[static_cast<int>(Stage::kOptimizer)];
  fw.flops = raw.fw_flops;
  // Bytes of `elements` activations plus the weights (read in their own
  // datatype; Calculon's sum when it is the activations').
  const auto with_weights = [&](double elements) {
    return ctx_.weight_bpe == bpe
               ? (elements + raw.weight_space) * bpe
               : elements * bpe + raw.weight_space * ctx_.weight_bpe;
  };
  fw.bytes = with_weights(raw.inputs + raw.outputs);
  ag.flops = raw.agrad_flops;
  ag.bytes = ctx_.weight_bpe == bpe
                 ? (raw.weight_space + raw.activation_space +
                    raw.activation_grads) * bpe
                 : with_weights(raw.activation_space + raw.activation_grads);
  wg.flops = raw.wgrad_flops;
  wg.bytes = raw.weight_space == 0
                 ? 0
                 : (raw.weight_grads + raw.activation_space +
                    raw.activation_grads) * bpe;
  op.flops = OptimizerStepFlops(raw.weight_grads, ctx_.shard);
  fw.matrix_engine = ag.matrix_engine = wg.matrix_engine = raw.matrix;
  op.matrix_engine = false;  // the optimizer always runs on the vector engine
  FillDefaultFootprint(task, raw);
  op.bytes = task.footprint.optimizer;
  task.flags = flags;
  if (ctx_.lineage) {
    task.lineage.pass = LowerTensorParallelBlock::kName;
    task.lineage.sources.assign(sources.begin(), sources.end());
  }
  for (auto& phase : task.collectives) {
    for (auto& c : phase) c.peers = ctx_.t;
  }
  return task;
}

Task& BlockBuilder::AddLinear(absl::string_view name, int64_t m, int64_t n,
                              int64_t k, double unsharded, TaskFlags flags,
                              Sources sources) {
  RawLayer r;
  const double mnk2 = 2.0 * m * n * k;
  r.fw_flops = r.agrad_flops = r.wgrad_flops = mnk2;
  r.inputs = static_cast<double>(m) * n;
  r.outputs = static_cast<double>(m) * k;
  r.weight_space = r.weight_grads = static_cast<double>(n) * k;
  r.activation_space = static_cast<double>(m) * n;
  r.activation_grads = static_cast<double>(m) * k;
  r.optim_space = 2.0 * n * k;
  r.matrix = true;
  AddBias(k, r);
  Task& task = Add(name, LinearTask{m, n, k}, r, flags,
                   std::move(sources));
  task.unsharded_gemm_flops = unsharded;
  return task;
}

Task& BlockBuilder::AddOverlappedLinear(absl::string_view name, int64_t m, int64_t n,
                                        int64_t k, bool conjugate,
                                        double unsharded, TaskFlags flags,
                                        Sources sources) {
  const int64_t t = ctx_.t;
  const int64_t tiles = t;
  double act_space, act_grad_space, act_grad_net_buffer;
  if (ctx_.sequence_parallel) {
    if (!conjugate) {  // all-gather before the column-parallel linear
      k = k / t;
      act_space = static_cast<double>((m * n) / tiles);
      act_grad_space = static_cast<double>(m) * k;
      act_grad_net_buffer = 0;
    } else {  // reduce-scatter after the row-parallel linear
      n = n / t;
      act_space = static_cast<double>(m) * n;
      act_grad_space = static_cast<double>((m * k) / tiles);
      act_grad_net_buffer = static_cast<double>((m * k) / tiles);
    }
  } else {
    if (!conjugate) {  // identity forward, all-reduce backward
      k = k / t;
      act_space = static_cast<double>(m) * n;
      act_grad_space = 0;
      act_grad_net_buffer = 0;
    } else {  // all-reduce forward
      n = n / t;
      act_space = 0;
      act_grad_space = static_cast<double>(m) * k;
      act_grad_net_buffer = static_cast<double>(m) * k;
    }
  }
  RawLayer r;
  const double mnk2 = 2.0 * m * n * k;
  r.fw_flops = r.agrad_flops = r.wgrad_flops = mnk2;
  r.inputs = static_cast<double>(m) * n;
  r.outputs = static_cast<double>(m) * k;
  r.weight_space = r.weight_grads = static_cast<double>(n) * k;
  r.activation_space = act_space;
  r.activation_grads = act_grad_space + act_grad_net_buffer;
  r.optim_space = 2.0 * n * k;
  r.matrix = true;
  AddBias(k, r);
  Task& task = Add(name,
                   OverlappedLinearTask{m, n, k, conjugate, ctx_.overlap,
                                        tiles},
                   r, flags, std::move(sources));
  task.unsharded_gemm_flops = unsharded;

  // Collectives (LinearOverlapped.get_comm_bytes / compute_net_time).
  if (t > 1) {
    const double bpe = ctx_.bpe;
    const double ag_bytes = r.inputs * bpe;
    const double ar_rs_bytes = r.outputs * bpe;
    for (int v = 0; v < kNumVariants; ++v) {
      const bool split = ctx_.sequence_parallel ||
                         (ctx_.edge_split && v == static_cast<int>(
                                                      BlockVariant::kEdge));
      Collective& fw = task.collectives[0][v];
      Collective& bw = task.collectives[1][v];
      Collective& re = task.collectives[2][v];
      if (conjugate) {
        fw.op = split ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
        fw.bytes = ar_rs_bytes;
        fw.reduction_flops = fw.bytes / bpe * (t - 1) / t;
        bw.op = split ? CollectiveOp::kAllGather : CollectiveOp::kNone;
        bw.bytes = split ? ar_rs_bytes : 0;
      } else {
        fw.op = split ? CollectiveOp::kAllGather : CollectiveOp::kNone;
        fw.bytes = split ? ag_bytes : 0;
        bw.op = split ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
        bw.bytes = ag_bytes;
        bw.reduction_flops = bw.bytes / bpe * (t - 1) / t;
      }
      if (flags.recommunicate && fw.op != CollectiveOp::kNone) {
        re.op = fw.op;
        re.bytes = fw.bytes;
      }
    }
  }
  return task;
}

Task& BlockBuilder::AddBatchMatMul(absl::string_view name, int64_t batch, int64_t m,
                                   int64_t n, int64_t k, double unsharded,
                                   TaskFlags flags,
                                   Sources sources) {
  RawLayer r;
  const double bmnk2 = 2.0 * batch * m * n * k;
  r.fw_flops = bmnk2;
  r.agrad_flops = 2 * bmnk2;
  r.inputs = static_cast<double>(batch) * (m * n + n * k);
  r.outputs = static_cast<double>(batch) * m * k;
  r.activation_space = r.inputs;
  r.activation_grads = r.outputs;
  r.matrix = true;
  Task& task = Add(name, BatchMatMulTask{batch, m, n, k}, r, flags,
                   std::move(sources));
  task.unsharded_gemm_flops = unsharded;
  return task;
}

// Correction kFlashAttention: the scores, softmax, dropout and context of one
// fused kernel (FlashAttention, Transformer Engine's fused attention). The
// s x s scores stay on chip: no task reads or writes them in memory, and
// none is stored for the backward pass but the fp32 log-sum-exp of each
// score row; the backward pass recomputes Q K^T (the scores task's
// activation-gradient work is 3 GEMMs: Q K^T again, dQ and dK). With
// kCausalAttention (causal_factor 0.5) the kernel skips the blocks above
// the diagonal: half of every score, softmax, dropout and context FLOP.
void BlockBuilder::FuseAttention(int32_t scores, int32_t softmax,
                                 int32_t dropout, int32_t context,
                                 int64_t value_size) {
  const BlockContext& c = ctx_;
  const double bpe = c.bpe;
  const double f = c.causal_factor;
  const double rows = static_cast<double>(c.b * c.a / c.t) * c.s_local;
  const double value_bytes = rows * value_size * bpe;
  auto stage = [](Task& task, Stage s) -> StageWork& {
    return task.work[static_cast<int>(s)];
  };
  Task& qk = TaskAt(scores);
  const double qk_flops = stage(qk, Stage::kForward).flops;
  stage(qk, Stage::kForward).flops = f * qk_flops;
  stage(qk, Stage::kActivationGrad).flops = 3 * f * qk_flops;
  qk.unsharded_gemm_flops *= f;
  // Reads Q and K (their activation: all keys, or the rank's own with cp).
  const double qk_in = qk.footprint.activation;
  stage(qk, Stage::kForward).bytes = qk_in;
  stage(qk, Stage::kActivationGrad).bytes = 2 * qk_in;  // + dQ, dK
  qk.footprint.output = 0;
  qk.footprint.activation_grad = qk_in;
  for (int32_t id : {softmax, dropout}) {
    Task& task = TaskAt(id);
    for (Stage s : {Stage::kForward, Stage::kActivationGrad}) {
      stage(task, s).flops *= f;
      stage(task, s).bytes = 0;
    }
    task.footprint.activation = 0;
    task.footprint.output = 0;
    task.footprint.activation_grad = 0;
  }
  // The log-sum-exp of each score row, fp32.
  TaskAt(softmax).footprint.activation = 4 * rows;
  Task& pv = TaskAt(context);
  stage(pv, Stage::kForward).flops *= f;
  stage(pv, Stage::kActivationGrad).flops *= f;
  pv.unsharded_gemm_flops *= f;
  // Reads V (the rank's own rows with cp), writes O; the backward pass
  // reads V, O and dO and writes dV. P is never in memory.
  stage(pv, Stage::kForward).bytes = 2 * value_bytes;
  stage(pv, Stage::kActivationGrad).bytes = 4 * value_bytes;
  pv.footprint.activation = value_bytes;
  pv.footprint.activation_grad = value_bytes;
}

Task& BlockBuilder::AddLayerNorm(absl::string_view name, int64_t elements,
                                 TaskFlags flags) {
  RawLayer r;
  const double x = static_cast<double>(elements);
  r.fw_flops = 9 * x;
  r.agrad_flops = 14 * x;
  r.wgrad_flops = 7 * x;
  r.inputs = r.outputs = r.activation_space = r.activation_grads = x;
  // LayerNorm keeps a scale and a bias per hidden unit, RMSNorm a scale only;
  // both are priced with Calculon's LayerNorm FLOPs.
  const double weights = (ctx_.rms_norm ? 1.0 : 2.0) * ctx_.h;
  r.weight_space = r.weight_grads = weights;
  r.optim_space = 2 * weights;
  Sources sources = {
      "spec:model.hidden", "spec:batch.microbatch_size", "spec:model.seq_size",
      "spec:parallelism.tensor.communication"};
  // Calculon's block (LayerNorm) depends on no architecture field.
  if (ctx_.rms_norm) sources.push_back("spec:model.norm");
  return Add(name, LayerNormTask{elements, ctx_.h}, r, flags,
             std::move(sources));
}

Task& BlockBuilder::AddDropOut(absl::string_view name, int64_t elements,
                               TaskFlags flags,
                               Sources sources) {
  RawLayer r;
  const double x = static_cast<double>(elements);
  r.fw_flops = r.agrad_flops = x;
  r.inputs = r.outputs = r.activation_space = r.activation_grads = x;
  Task& task =
      Add(name, DropOutTask{elements}, r, flags, std::move(sources));
  // The mask (1 byte per element) is the only activation kept.
  const double fw_bytes = (r.inputs + r.outputs) * ctx_.bpe + x;
  task.work[static_cast<int>(Stage::kForward)].bytes = fw_bytes;
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes = fw_bytes;
  task.footprint.activation = x;
  task.footprint.activation_grad = x;
  return task;
}

Task& BlockBuilder::AddGeLU(absl::string_view name, int64_t elements,
                            TaskFlags flags) {
  RawLayer r;
  const double x = static_cast<double>(elements);
  r.fw_flops = 8 * x;
  r.agrad_flops = 13 * x;
  r.inputs = r.outputs = x;
  // A fused GeLU runs inside the preceding linear and keeps nothing.
  r.activation_space = r.activation_grads = ctx_.fused ? 0 : x;
  Task& task = Add(name, GeLUTask{elements, ctx_.fused}, r, flags,
                   {"spec:model.feedforward", "spec:batch.microbatch_size",
                    "spec:model.seq_size", "spec:parallelism.tensor.degree",
                    "spec:options.fused_activation"});
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes =
      task.work[static_cast<int>(Stage::kForward)].bytes;
  return task;
}

Task& BlockBuilder::AddSoftMax(absl::string_view name, int64_t elements,
                               TaskFlags flags) {
  RawLayer r;
  const double x = static_cast<double>(elements);
  r.fw_flops = 5 * x;
  r.agrad_flops = 8 * x;
  r.inputs = r.outputs = r.activation_space = r.activation_grads = x;
  Task& task = Add(name, SoftMaxTask{elements}, r, flags,
                   {"spec:model.attn_heads", "spec:model.seq_size",
                    "spec:batch.microbatch_size",
                    "spec:parallelism.tensor.degree"});
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes =
      task.work[static_cast<int>(Stage::kForward)].bytes;
  return task;
}

Task& BlockBuilder::AddElementWise(absl::string_view name, int64_t lhs, int64_t rhs,
                                   TaskFlags flags) {
  RawLayer r;
  const double x = static_cast<double>(lhs > rhs ? lhs : rhs);
  r.fw_flops = x;
  r.agrad_flops = static_cast<double>(lhs) + rhs;
  r.inputs = static_cast<double>(lhs) + rhs;
  r.outputs = x;
  r.activation_space = r.inputs;
  r.activation_grads = x;
  return Add(name, ElementWiseTask{lhs, rhs}, r, flags,
             {"spec:model.hidden", "spec:batch.microbatch_size",
              "spec:model.seq_size", "spec:parallelism.tensor.communication"});
}

Task& BlockBuilder::AddFork(absl::string_view name, int64_t elements, int64_t users,
                            TaskFlags flags,
                            Sources sources) {
  RawLayer r;
  const double x = static_cast<double>(elements);
  r.inputs = x;
  r.agrad_flops = users * x;
  r.activation_space = x;
  // Gradients of the users accumulate in storage accounted elsewhere.
  r.activation_grads = 0;
  Task& task = Add(name, ForkTask{elements, users}, r, flags,
                   std::move(sources));
  task.work[static_cast<int>(Stage::kForward)].bytes = 0;
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes =
      x * ctx_.bpe * (users + 1);
  return task;
}

Task& BlockBuilder::AddTensorComm(absl::string_view name, bool conjugate,
                                  TaskFlags flags) {
  const int64_t t = ctx_.t;
  const double x = static_cast<double>(ctx_.activation);
  RawLayer r;
  if (t > 1) {
    // The reduction runs where the partial sums meet: backward for f,
    // forward for g.
    const double reduce = x * (t - 1) / t;
    r.fw_flops = conjugate ? reduce : 0;
    r.agrad_flops = conjugate ? 0 : reduce;
    r.inputs = r.outputs = x;
  }
  r.activation_space = r.inputs;
  r.activation_grads = r.outputs;
  Task& task = Add(name, TensorCommTask{ctx_.activation, conjugate},
                   r, flags,
                   {"spec:model.hidden", "spec:batch.microbatch_size",
                    "spec:model.seq_size", "spec:parallelism.tensor.degree",
                    "spec:parallelism.tensor.communication"});
  const double bpe = ctx_.bpe;
  const bool rs_ag = ctx_.sequence_parallel;
  // Identity directions touch no memory (TPComm getter overrides).
  if (!rs_ag && !conjugate) task.work[0].bytes = 0;
  if (!rs_ag && conjugate) task.work[1].bytes = 0;
  if (rs_ag) {
    task.footprint.activation = r.activation_space * bpe / t;
    task.footprint.activation_grad = r.activation_space * bpe / t;
  } else {
    task.footprint.activation = conjugate ? r.activation_space * bpe : 0;
    task.footprint.activation_grad = conjugate ? 0 : r.activation_grads * bpe;
  }
  if (t > 1) {
    const double bytes = x * bpe;
    for (int v = 0; v < kNumVariants; ++v) {
      const bool split =
          rs_ag ||
          (ctx_.edge_split && v == static_cast<int>(BlockVariant::kEdge));
      Collective& fw = task.collectives[0][v];
      Collective& bw = task.collectives[1][v];
      Collective& re = task.collectives[2][v];
      if (split) {
        fw.op = conjugate ? CollectiveOp::kReduceScatter
                          : CollectiveOp::kAllGather;
        bw.op = conjugate ? CollectiveOp::kAllGather
                          : CollectiveOp::kReduceScatter;
        fw.bytes = bw.bytes = bytes;
      } else {
        fw.op = conjugate ? CollectiveOp::kAllReduce : CollectiveOp::kNone;
        bw.op = conjugate ? CollectiveOp::kNone : CollectiveOp::kAllReduce;
        fw.bytes = conjugate ? bytes : 0;
        bw.bytes = conjugate ? 0 : bytes;
      }
      // Re-communication redoes the forward collective (only where there is
      // one: a split f or any g).
      if (flags.recommunicate && (split || conjugate)) {
        re.op = fw.op;
        re.bytes = bytes;
      }
    }
  }
  return task;
}

Task& BlockBuilder::AddGatedActivation(absl::string_view name, int64_t elements,
                                       TaskFlags flags) {
  RawLayer r;
  const double x = static_cast<double>(elements);
  // The GeLU's FLOPs for the activation plus the product with the up half.
  r.fw_flops = 9 * x;
  r.agrad_flops = 15 * x;
  r.inputs = 2 * x;
  r.outputs = x;
  // A fused activation runs inside the preceding linear and keeps nothing;
  // otherwise both halves are kept for the backward pass.
  r.activation_space = r.activation_grads = ctx_.fused ? 0 : 2 * x;
  Task& task =
      Add(name, GatedActivationTask{elements, ctx_.fused}, r, flags,
          {"spec:model.feedforward", "spec:model.mlp",
           "spec:batch.microbatch_size", "spec:model.seq_size",
           "spec:parallelism.tensor.degree", "spec:options.fused_activation"});
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes =
      task.work[static_cast<int>(Stage::kForward)].bytes;
  return task;
}

Task& BlockBuilder::AddPermutation(absl::string_view name, int64_t read,
                                   int64_t written, TaskFlags flags) {
  RawLayer r;
  r.inputs = static_cast<double>(read) * ctx_.h;
  r.outputs = static_cast<double>(written) * ctx_.h;
  // The permuted rows are the next task's input, kept there; the index
  // maps are a few bytes per row.
  Task& task = Add(name, PermutationTask{read, written, ctx_.h}, r, flags,
                   MoeSources());
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes =
      task.work[static_cast<int>(Stage::kForward)].bytes;
  return task;
}

Task& BlockBuilder::AddEmbedding(absl::string_view name) {
  const BlockContext& c = ctx_;
  const int64_t rows = c.vocab / c.t;
  RawLayer r;
  const double tokens = static_cast<double>(c.batch_seq);
  const double out = tokens * c.h;
  // A gather of one row per token (plus a learned position row), and in
  // the backward pass the scatter-add of the gradients into the table.
  r.fw_flops = c.positions > 0 ? out : 0;
  r.wgrad_flops = out;
  r.inputs = out;
  r.outputs = out;
  // A learned position table (max_positions x hidden, replicated) is left
  // out of the weights, as Megatron-LM's weight and optimizer accounting
  // leaves it out (under 0.5% of a first stage's weights).
  const double table = static_cast<double>(rows) * c.h;
  r.weight_space = r.weight_grads = table;
  r.optim_space = 2 * table;
  Sources sources = {
      "derived:padded_vocabulary", "spec:model.hidden",
      "spec:parallelism.tensor.degree", "spec:batch.microbatch_size",
      "spec:model.seq_size"};
  if (c.positions > 0) {
    sources.push_back("spec:model.vocabulary.max_positions");
  }
  Task& task = Add(name, EmbeddingTask{c.batch_seq, rows, c.h}, r,
                   TaskFlags().WithActivationStored(false), std::move(sources));
  // Only the rows touched are read (not the whole table); the gradient's
  // scatter reads and writes as many.
  const double touched = out * c.bpe;
  task.work[static_cast<int>(Stage::kForward)].bytes = 2 * touched;
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes = 0;
  task.work[static_cast<int>(Stage::kWeightGrad)].bytes = 3 * touched;
  task.footprint.activation = 0;
  task.footprint.activation_grad = 0;
  return task;
}

Task& BlockBuilder::AddExpertLinear(absl::string_view name, double tokens,
                                    int64_t n, int64_t k,
                                    double local_experts,
                                    Sources sources,
                                    TaskFlags flags) {
  RawLayer r;
  const double mnk2 = 2.0 * tokens * n * k;
  r.fw_flops = r.agrad_flops = r.wgrad_flops = mnk2;
  r.inputs = tokens * n;
  r.outputs = tokens * k;
  r.weight_space = r.weight_grads = local_experts * n * k;
  r.activation_space = tokens * n;
  r.activation_grads = tokens * k;
  r.optim_space = 2.0 * r.weight_space;
  r.matrix = true;
  // The experts' state shards over the expert data-parallel ranks.
  const double dense_shard = ctx_.shard;
  ctx_.shard = ctx_.expert_shard;
  Task& task = Add(name,
                   LinearTask{static_cast<int64_t>(tokens), n, k}, r, flags,
                   std::move(sources));
  ctx_.shard = dense_shard;
  task.expert_state = true;
  // Every rank of the microbatch's t * cp does the same share.
  task.unsharded_gemm_flops =
      mnk2 * static_cast<double>(ctx_.t) * static_cast<double>(ctx_.cp);
  return task;
}

Task& BlockBuilder::AddExchange(absl::string_view name, MeshAxis axis,
                                int64_t peers, double elements,
                                CollectiveOp fw_op, double fw_bytes,
                                CollectiveOp bw_op, double bw_bytes,
                                int32_t overlapped_by,
                                Sources sources) {
  RawLayer r;
  r.inputs = r.outputs = elements;
  // The exchange keeps nothing: its output is the next task's input.
  Task& task =
      Add(name,
          ExchangeTask{static_cast<int64_t>(elements), axis, overlapped_by}, r,
          TaskFlags().WithActivationStored(false), std::move(sources));
  task.footprint.output = 0;
  for (int v = 0; v < kNumVariants; ++v) {
    Collective& fw = task.collectives[0][v];
    Collective& bw = task.collectives[1][v];
    fw.axis = bw.axis = task.collectives[2][v].axis = axis;
    fw.peers = bw.peers = task.collectives[2][v].peers = peers;
    fw.op = fw_op;
    fw.bytes = fw_bytes;
    if (ctx_.training) {
      bw.op = bw_op;
      bw.bytes = bw_bytes;
    }
  }
  return task;
}

void BlockBuilder::Reads(int32_t task,
                         std::initializer_list<int32_t> producers) {
  // A relowering keeps every task's dependencies: the structure is the
  // same.
  if (ctx_.relowering) return;
  std::vector<int32_t>& deps = ir_.tasks[static_cast<size_t>(task)].deps;
  for (int32_t producer : producers) {
    if (std::find(deps.begin(), deps.end(), producer) == deps.end()) {
      deps.push_back(producer);
    }
  }
  std::sort(deps.begin(), deps.end());
}

std::pair<int32_t, int32_t> BlockBuilder::AddBranchStart(
    absl::string_view prefix, bool full, int32_t input) {
  const int32_t fork =
      AddFork(Name(prefix, "_Fork"), ResidualActivation(), 2,
              TaskFlags().WithRecompute(full), ResidualSources())
          .id;
  if (input >= 0) Reads(fork, {input});
  const int32_t norm =
      AddLayerNorm(Name(prefix, "_LayerNorm"), ResidualActivation(),
                   kReusesActivation.WithRecompute(full))
          .id;
  Reads(norm, {fork});
  return {fork, norm};
}

int32_t BlockBuilder::AddBranchEnd(absl::string_view prefix, bool full,
                                   int32_t output, int32_t fork) {
  const int32_t dropout =
      AddDropOut(Name(prefix, "_DropOut"), ResidualActivation(),
                 TaskFlags().WithRecompute(full), ResidualSources())
          .id;
  Reads(dropout, {output});
  const int32_t residual =
      AddElementWise(Name(prefix, "_Residual"), ResidualActivation(),
                     ResidualActivation(),
                     kReusesActivation.WithRecompute(full))
          .id;
  Reads(residual, {dropout, fork});
  return residual;
}

std::pair<int32_t, int32_t> BlockBuilder::BuildLatentProjections(
    int32_t input, bool full) {
  const BlockContext& c = ctx_;
  const int64_t bs = c.batch_seq;
  const double bsd = FullBatchSeq();
  const int64_t qk = c.qk_dim + c.rope_dim;
  const Sources sources = {
      "spec:model.hidden", "spec:model.attn_heads",
      "spec:model.latent_attention", "spec:parallelism.tensor.degree",
      "spec:batch.microbatch_size", "spec:model.seq_size"};
  const TaskFlags flags = kReusesActivation.WithRecompute(full);
  // As Megatron-LM's accounting has it, every latent-attention matrix is
  // split t ways (the checker asks t to divide the ranks).
  int32_t query = -1;
  if (c.q_lora > 0) {
    const int32_t down =
        AddLinear("AttnBlock_Query_Down", bs, c.h, c.q_lora / c.t,
                  2 * bsd * c.h * c.q_lora, flags, sources)
            .id;
    Reads(down, {input});
    query = AddLinear("AttnBlock_Query_Up", bs, c.q_lora, c.a * qk / c.t,
                      2 * bsd * c.q_lora * (static_cast<double>(c.a) * qk),
                      TaskFlags().WithRecompute(full), sources)
                .id;
    Reads(query, {down});
  } else {
    query = AddLinear("AttnBlock_Query", bs, c.h, c.a * qk / c.t,
                      2 * bsd * c.h * (static_cast<double>(c.a) * qk), flags,
                      sources)
                .id;
    Reads(query, {input});
  }
  const int32_t kv_down =
      AddLinear("AttnBlock_KV_Down", bs, c.h, (c.kv_lora + c.rope_dim) / c.t,
                2 * bsd * c.h * static_cast<double>(c.kv_lora + c.rope_dim),
                flags, sources)
          .id;
  Reads(kv_down, {input});
  const int32_t kv_up =
      AddLinear("AttnBlock_KV_Up", bs, c.kv_lora,
                c.a * (c.qk_dim + c.v_dim) / c.t,
                2 * bsd * c.kv_lora *
                    (static_cast<double>(c.a) * (c.qk_dim + c.v_dim)),
                TaskFlags().WithRecompute(full), sources)
          .id;
  Reads(kv_up, {kv_down});
  return {query, kv_up};
}

int32_t BlockBuilder::BuildContextExchange(int32_t key, int32_t value) {
  const BlockContext& c = ctx_;
  if (c.cp <= 1) return -1;
  // The rank's keys and values: b * s/cp rows of its local heads.
  const double kv_width =
      c.kv_lora > 0
          ? static_cast<double>(c.a) / c.t * (c.qk_dim + c.rope_dim + c.v_dim)
          : 2.0 * (c.multiquery ? c.dh : c.g * c.dh / c.t);
  const double elements = static_cast<double>(c.batch_seq) * kv_width;
  const double block_bytes = elements * c.bpe;
  const double others = static_cast<double>(c.cp - 1);
  const bool ring = c.cp_ring;
  // Ring: cp - 1 blocks arrive (and their gradients go back), hidden by the
  // attention on the blocks already there; all-gather: the whole K/V at
  // once before the scores (its gradients reduce-scattered after).
  if (record_ != nullptr) {
    record_->sections.push_back({RelowerSections::Kind::kContextExchange,
                                 static_cast<int32_t>(used_),
                                 static_cast<int32_t>(used_) + 1,
                                 {key, value},
                                 ctx_.placement,
                                 ctx_.share});
  }
  const int32_t exchange =
      AddExchange(ring ? "AttnBlock_KV_Ring" : "AttnBlock_KV_AllGather",
                  MeshAxis::kContext, c.cp, elements,
                  ring ? CollectiveOp::kPointToPoint : CollectiveOp::kAllGather,
                  ring ? others * block_bytes : c.cp * block_bytes,
                  ring ? CollectiveOp::kPointToPoint
                       : CollectiveOp::kReduceScatter,
                  ring ? others * block_bytes : c.cp * block_bytes,
                  ring ? static_cast<int32_t>(used_) + 1 : -1,
                  {"spec:parallelism.context.degree",
                   "spec:parallelism.context.exchange", "spec:model.seq_size",
                   "spec:batch.microbatch_size", "spec:model.attn_size"})
          .id;
  Reads(exchange, {key, value});
  return exchange;
}

int32_t BlockBuilder::BuildAttention(int32_t input) {
  const BlockContext& c = ctx_;
  const bool full = c.recompute == RecomputePolicy::kFull;
  const bool attn = full || c.recompute == RecomputePolicy::kAttentionOnly;
  const bool ag = attn || c.ag_redo;
  const int64_t bs = c.batch_seq;
  const bool latent = c.kv_lora > 0;
  // Latent attention's values have v_dim per head, its scores qk + rope.
  const int64_t value_size = latent ? c.v_dim : c.dh;
  const int64_t heads_local = c.a * value_size / c.t;
  // Unsharded GEMM FLOPs from the model dimensions (work conservation), for
  // the whole microbatch (all cp ranks' sequence chunks).
  const double bsd = FullBatchSeq();
  const double qkv_one = 2 * bsd * c.h * (static_cast<double>(c.a) * c.dh);
  const double out_one =
      2 * bsd * c.h * (static_cast<double>(c.a) * value_size);
  const double attn_bmm = 2.0 * c.b * c.a * c.s * c.dh * c.s;
  const double value_bmm = 2.0 * c.b * c.a * c.s * value_size * c.s;
  // Grouped-query attention: K and V have kv_heads heads, split t ways.
  const bool grouped = c.g != c.a;
  const double kv_one =
      grouped ? 2 * bsd * c.h * (static_cast<double>(c.g) * c.dh) : qkv_one;
  Sources qkv_sources = {
      "spec:model.hidden", "spec:model.attn_heads", "spec:model.attn_size",
      "spec:parallelism.tensor.degree", "spec:batch.microbatch_size",
      "spec:model.seq_size"};
  if (grouped) qkv_sources.push_back("spec:model.kv_heads");
  if (c.bias) qkv_sources.push_back("spec:model.linear_bias");

  const auto [fork, norm] = AddBranchStart("AttnBlock", full, input);
  int32_t query = -1, key = -1, value = -1;
  // Latent attention is never overlapped (the checker's rule).
  if (latent || c.overlap == TensorOverlap::kNone) {
    const int32_t f =
        AddTensorComm("AttnBlock_F", false, TaskFlags().WithRecommunicate(ag))
            .id;
    Reads(f, {norm});
    const int32_t heads_fork =
        AddFork("AttnBlock_Multihead_Fork", c.activation, 3,
                TaskFlags().WithRecompute(ag).WithActivationStored(!ag),
                ResidualSources())
            .id;
    Reads(heads_fork, {f});
    if (latent) {
      std::tie(query, key) = BuildLatentProjections(heads_fork, full);
      value = key;
    } else {
      query = AddLinear("AttnBlock_Query", bs, c.h, heads_local, qkv_one,
                        kReusesActivation.WithRecompute(full), qkv_sources)
                  .id;
      // Multi-query K and V are one head, replicated on every TP rank.
      const int64_t kv = c.multiquery ? c.dh : c.g * c.dh / c.t;
      const double kv_unsharded =
          c.multiquery ? 2 * bsd * c.h * c.dh * c.t : kv_one;
      key = AddLinear("AttnBlock_Key", bs, c.h, kv, kv_unsharded,
                      kReusesActivation.WithRecompute(full), qkv_sources)
                .id;
      value = AddLinear("AttnBlock_Value", bs, c.h, kv, kv_unsharded,
                        kReusesActivation.WithRecompute(full), qkv_sources)
                  .id;
      Reads(query, {heads_fork});
      Reads(key, {heads_fork});
      Reads(value, {heads_fork});
    }
  } else if (!c.multiquery) {
    query = key = value =
        AddOverlappedLinear(
            "AttnBlock_QKV_AG", bs, c.h, c.a * c.dh + 2 * c.g * c.dh, false,
            grouped ? qkv_one + 2 * kv_one : 3 * qkv_one,
            TaskFlags().WithRecompute(full).WithRecommunicate(ag), qkv_sources)
            .id;
    Reads(query, {norm});
  } else {
    query = AddOverlappedLinear(
                "AttnBlock_Query_AG", bs, c.h, c.a * c.dh, false, qkv_one,
                TaskFlags().WithRecompute(full).WithRecommunicate(ag),
                qkv_sources)
                .id;
    Reads(query, {norm});
    const int32_t kv_fork =
        AddFork("AttnBlock_KV_Fork", c.activation, 2,
                TaskFlags().WithRecompute(ag).WithActivationStored(!ag),
                ResidualSources())
            .id;
    Reads(kv_fork, {query});
    key = AddLinear("AttnBlock_Key", bs, c.h, c.dh, 2 * bsd * c.h * c.dh * c.t,
                    kReusesActivation.WithRecompute(full), qkv_sources)
              .id;
    value = AddLinear("AttnBlock_Value", bs, c.h, c.dh,
                      2 * bsd * c.h * c.dh * c.t,
                      kReusesActivation.WithRecompute(full), qkv_sources)
                .id;
    Reads(key, {kv_fork});
    Reads(value, {kv_fork});
  }
  const Sources attn_sources = {
      "spec:model.attn_heads", "spec:model.attn_size", "spec:model.seq_size",
      "spec:batch.microbatch_size", "spec:parallelism.tensor.degree",
      "spec:parallelism.recompute"};
  const int32_t exchange = BuildContextExchange(key, value);
  // Each rank's s/cp queries meet all s keys (cp = 1: s x s).
  const int32_t scores =
      AddBatchMatMul("AttnBlock_Multihead_Key_Query", c.b * c.a / c.t,
                     c.s_local, c.dh, c.s, attn_bmm,
                     TaskFlags().WithRecompute(attn).WithOutputStored(!attn),
                     attn_sources)
          .id;
  Reads(scores, {query, key});
  if (exchange >= 0) Reads(scores, {exchange});
  // The other cp ranks' keys and values pass through (ring) or are
  // gathered again (all-gather) in the backward pass: only the rank's own
  // s/cp rows are stored.
  const double batch_heads = static_cast<double>(c.b * c.a / c.t);
  if (c.cp > 1) {
    TaskAt(scores).footprint.activation =
        c.bpe * batch_heads * (2.0 * c.s_local * c.dh);
  }
  const int64_t score_elements = c.a / c.t * c.s_local * c.s * c.b;
  const int32_t softmax =
      AddSoftMax("AttnBlock_Multihead_SoftMax", score_elements,
                 TaskFlags().WithRecompute(attn).WithOutputStored(!attn))
          .id;
  Reads(softmax, {scores});
  const int32_t dropout =
      AddDropOut("AttnBlock_Multihead_DropOut", score_elements,
                 TaskFlags().WithRecompute(attn).WithActivationStored(!attn),
                 attn_sources)
          .id;
  Reads(dropout, {softmax});
  // Correction kSelectiveRecomputeCoreAttention: selective recomputation
  // runs the product with V again too. The stored activations stay
  // Calculon's, which already keep only Q, K and V: the scores' unstored
  // output cancels the probabilities this product's activation counts.
  const int32_t context =
      AddBatchMatMul("AttnBlock_Multihead_Attn", c.b * c.a / c.t, c.s_local,
                     c.s, c.a * value_size / c.a, value_bmm,
                     TaskFlags().WithRecompute(
                         full || (attn && c.recompute_core_attention)),
                     attn_sources)
          .id;
  Reads(context, {dropout, value});
  if (c.cp > 1) {
    TaskAt(context).footprint.activation =
        c.bpe * batch_heads *
        (static_cast<double>(c.s_local) * c.s +
         static_cast<double>(c.s_local) * value_size);
  }
  if (c.flash_attention) {
    FuseAttention(scores, softmax, dropout, context, value_size);
  }
  int32_t output = -1;
  if (c.overlap == TensorOverlap::kNone || latent) {
    const int32_t projection =
        AddLinear("AttnBlock_MLP", bs, heads_local, c.h, out_one,
                  TaskFlags().WithRecompute(full), qkv_sources)
            .id;
    Reads(projection, {context});
    output = AddTensorComm("AttnBlock_G", true,
                           TaskFlags().WithRecommunicate(full).WithActivationStored(
                               false))
                 .id;
    Reads(output, {projection});
  } else {
    output = AddOverlappedLinear(
                 "AttnBlock_MLP_RS", bs, c.a * c.dh, c.h, true, qkv_one,
                 TaskFlags().WithRecompute(full).WithRecommunicate(full),
                 qkv_sources)
                 .id;
    Reads(output, {context});
  }
  return AddBranchEnd("AttnBlock", full, output, fork);
}

int32_t BlockBuilder::BuildMlp(int32_t input) {
  const BlockContext& c = ctx_;
  const bool full = c.recompute == RecomputePolicy::kFull;
  const bool ag = full || c.ag_redo;
  const int64_t bs = c.batch_seq;
  const double mlp_gemm = 2.0 * FullBatchSeq() * c.h * c.ff;
  // A gated MLP's first linear computes the gate and the up projection.
  const int64_t fc1_width = c.gated ? 2 * c.ff : c.ff;
  const double fc1_gemm = c.gated ? 2 * mlp_gemm : mlp_gemm;
  Sources mlp_sources = {
      "spec:model.hidden", "spec:model.feedforward",
      "spec:parallelism.tensor.degree", "spec:batch.microbatch_size",
      "spec:model.seq_size"};
  if (c.bias) mlp_sources.push_back("spec:model.linear_bias");
  Sources fc1_sources = mlp_sources;
  if (c.gated) fc1_sources.push_back("spec:model.mlp");
  const auto [fork, norm] = AddBranchStart("MlpBlock", full, input);
  int32_t fc1 = -1;
  if (c.overlap == TensorOverlap::kNone) {
    const int32_t f =
        AddTensorComm("MlpBlock_F", false, TaskFlags().WithRecommunicate(ag))
            .id;
    Reads(f, {norm});
    fc1 = AddLinear("MlpBlock_Mlp1", bs, c.h, fc1_width / c.t, fc1_gemm,
                    TaskFlags().WithRecompute(full).WithActivationStored(!ag),
                    fc1_sources)
              .id;
    Reads(fc1, {f});
  } else {
    fc1 = AddOverlappedLinear(
              "MlpBlock_Mlp1_AG", bs, c.h, fc1_width, false, fc1_gemm,
              TaskFlags().WithRecompute(full).WithRecommunicate(ag),
              fc1_sources)
              .id;
    Reads(fc1, {norm});
  }
  const int32_t activation = AddMlpActivation("MlpBlock", c.ff * bs / c.t, full);
  Reads(activation, {fc1});
  int32_t output = -1;
  if (c.overlap == TensorOverlap::kNone) {
    const int32_t fc2 = AddLinear("MlpBlock_Mlp2", bs, c.ff / c.t, c.h,
                                  mlp_gemm, TaskFlags().WithRecompute(full),
                                  mlp_sources)
                            .id;
    Reads(fc2, {activation});
    output = AddTensorComm("MlpBlock_G", true,
                           TaskFlags().WithRecommunicate(full).WithActivationStored(
                               false))
                 .id;
    Reads(output, {fc2});
  } else {
    output = AddOverlappedLinear(
                 "MlpBlock_Mlp2_RS", bs, c.ff, c.h, true, mlp_gemm,
                 TaskFlags().WithRecompute(full).WithRecommunicate(full),
                 mlp_sources)
                 .id;
    Reads(output, {activation});
  }
  return AddBranchEnd("MlpBlock", full, output, fork);
}

int32_t BlockBuilder::AddMlpActivation(absl::string_view prefix,
                                       int64_t elements, bool full) {
  const TaskFlags flags = TaskFlags().WithRecompute(full);
  return ctx_.gated ? AddGatedActivation(Name(prefix, "_GatedActivation"),
                                         elements, flags)
                          .id
                    : AddGeLU(Name(prefix, "_GeLU"), elements, flags).id;
}

int32_t BlockBuilder::BuildRoutedExperts(int32_t router, int32_t norm) {
  const BlockContext& c = ctx_;
  const bool full = c.recompute == RecomputePolicy::kFull;
  const bool ag = full || c.ag_redo;
  const int64_t bs = c.batch_seq;
  const Sources sources = MoeSources();
  // Each rank sends its share of the tokens (b * s/cp / t distinct ones)
  // topk times to the experts' ranks; (ep - 1) / ep of it leaves the rank.
  const double sent = static_cast<double>(bs) / c.t * c.topk * c.h;
  const double leaving = sent * c.bpe * (c.ep - 1) / c.ep;
  // Tokens of this rank's experts: the microbatch's routed tokens over its
  // t * cp ranks, times the capacity factor (the busiest expert) and etp
  // (the etp ranks of an expert share its tokens).
  const double tokens =
      static_cast<double>(bs) * c.topk * c.capacity * c.etp / c.t;
  const double local_experts = static_cast<double>(c.experts) / c.ep;
  const Permutations permutations = PermutationRows(tokens, local_experts);
  int32_t dispatch = router;
  if (c.permutation == MoePermutation::kAllToAll) {
    dispatch = AddPermutation("MoeBlock_PermuteTokens",
                              permutations.routed, permutations.routed,
                              TaskFlags().WithRecompute(full))
                   .id;
    Reads(dispatch, {router, norm});
  }
  if (c.ep > 1) {
    const int32_t permuted = dispatch;
    dispatch = AddExchange("MoeBlock_Dispatch", MeshAxis::kExpert, c.ep, sent,
                           CollectiveOp::kAllToAll, leaving,
                           CollectiveOp::kAllToAll, leaving, -1, sources)
                   .id;
    Reads(dispatch, {permuted, norm});
  }
  if (c.permutation != MoePermutation::kNone) {
    const int32_t sorted =
        AddPermutation("MoeBlock_PermuteExperts", permutations.received,
                       permutations.received, TaskFlags().WithRecompute(full))
            .id;
    Reads(sorted, {dispatch});
    dispatch = sorted;
  }
  const int64_t up_width = (c.gated ? 2 : 1) * c.expert_ff / c.etp;
  const int32_t up =
      AddExpertLinear("MoeBlock_Experts_Up", tokens, c.h, up_width,
                      local_experts, sources,
                      TaskFlags().WithRecompute(full).WithActivationStored(!ag))
          .id;
  Reads(up, {dispatch, norm});
  // `tokens` is an average (fractional when the routed tokens do not split
  // evenly); an activation holds whole elements, so it rounds up.
  const int64_t act_elements = static_cast<int64_t>(
      std::ceil(tokens * static_cast<double>(c.expert_ff / c.etp)));
  const int32_t act = AddMlpActivation("MoeBlock_Experts", act_elements, full);
  Reads(act, {up});
  const int32_t down =
      AddExpertLinear("MoeBlock_Experts_Down", tokens, c.expert_ff / c.etp,
                      c.h, local_experts, sources,
                      TaskFlags().WithRecompute(full))
          .id;
  Reads(down, {act});
  int32_t combine = down;
  if (c.permutation != MoePermutation::kNone) {
    combine = AddPermutation("MoeBlock_UnpermuteExperts",
                             permutations.received, permutations.received,
                             TaskFlags().WithRecompute(full))
                  .id;
    Reads(combine, {down});
  }
  if (c.ep > 1) {
    const int32_t unsorted = combine;
    combine = AddExchange("MoeBlock_Combine", MeshAxis::kExpert, c.ep, sent,
                          CollectiveOp::kAllToAll, leaving,
                          CollectiveOp::kAllToAll, leaving, -1, sources)
                  .id;
    Reads(combine, {unsorted});
  }
  if (c.permutation == MoePermutation::kAllToAll) {
    const int32_t exchanged = combine;
    combine = AddPermutation("MoeBlock_UnpermuteTokens", permutations.routed,
                             permutations.local, TaskFlags().WithRecompute(full))
                  .id;
    Reads(combine, {exchanged});
  }
  return combine;
}

BlockBuilder::Permutations BlockBuilder::PermutationRows(
    double received, double local_experts) const {
  const BlockContext& c = ctx_;
  // Rows are whole: an average share rounds up.
  const auto rows = [](double x) { return static_cast<int64_t>(std::ceil(x)); };
  const double local = static_cast<double>(c.batch_seq) / c.t;
  Permutations out;
  switch (c.permutation) {
    case MoePermutation::kNone:
      break;
    case MoePermutation::kAllToAll:
      // token_dispatcher.py MoEAlltoAllTokenDispatcher: dispatch_preprocess
      // and combine_postprocess (permute, unpermute) over the rank's
      // tokens; sort_chunks_by_idxs only with num_local_experts > 1.
      out.local = rows(local);
      out.routed = rows(local * c.topk);
      out.received = local_experts > 1 ? rows(received) : 0;
      break;
    case MoePermutation::kFlex:
      // MoEFlexTokenDispatcher with DeepEP (_DeepepManager):
      // dispatch_postprocess and combine_preprocess permute the received
      // rows by local expert and back; the tokens leave and return
      // unpermuted (no token-side tasks).
      out.received = rows(received);
      break;
  }
  return out;
}

absl::Status BlockBuilder::RebuildSections() {
  for (const RelowerSections::Section& section : rebuild_->sections) {
    if (section.first < 0 || section.end < section.first ||
        static_cast<size_t>(section.end) > ir_.tasks.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("relowering: tasks ", section.first, " to ", section.end,
                       " are not in the block being relowered (",
                       ir_.tasks.size(), " tasks)"));
    }
    used_ = static_cast<size_t>(section.first);
    ctx_.placement = section.placement;
    ctx_.share = section.share;
    switch (section.kind) {
      case RelowerSections::Kind::kRoutedExperts:
        // The blocks' MoE share is the program's (the layer pattern, p).
        if (section.placement == Placement::kEveryBlock &&
            section.share != MoeShare(1)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "relowering: the MoE blocks weigh ", FormatDouble(MoeShare(1)),
              " of the stage, in the block being relowered ",
              FormatDouble(section.share)));
        }
        BuildRoutedExperts(section.inputs[0], section.inputs[1]);
        break;
      case RelowerSections::Kind::kContextExchange:
        renaming_ = true;
        BuildContextExchange(section.inputs[0], section.inputs[1]);
        renaming_ = false;
        break;
    }
    BP_RETURN_IF_ERROR(mismatch_);
    if (used_ != static_cast<size_t>(section.end)) {
      return absl::InvalidArgumentError(
          absl::StrCat("relowering: the rebuilt section has ",
                       used_ - static_cast<size_t>(section.first),
                       " tasks, that of the block being relowered ",
                       section.end - section.first));
    }
  }
  return absl::OkStatus();
}

int32_t BlockBuilder::BuildMoe(int32_t input) {
  const BlockContext& c = ctx_;
  const bool full = c.recompute == RecomputePolicy::kFull;
  const bool ag = full || c.ag_redo;
  const int64_t bs = c.batch_seq;
  const Sources sources = MoeSources();
  const auto [fork, norm] = AddBranchStart("MoeBlock", full, input);
  // The router scores every local token against every expert (replicated
  // over the TP ranks, as its weights are).
  const double router_local = 2.0 * bs * c.h * c.experts;
  const int32_t router =
      AddLinear("MoeBlock_Router", bs, c.h, c.experts,
                router_local * static_cast<double>(c.t) * c.cp,
                kReusesActivation.WithRecompute(full), sources)
          .id;
  Reads(router, {norm});
  const int32_t first = static_cast<int32_t>(used_);
  const int32_t combine = BuildRoutedExperts(router, norm);
  if (record_ != nullptr) {
    record_->sections.push_back({RelowerSections::Kind::kRoutedExperts,
                                 first,
                                 static_cast<int32_t>(used_),
                                 {router, norm},
                                 ctx_.placement,
                                 ctx_.share});
  }
  int32_t output = combine;
  if (c.shared_ff > 0) {
    // Shared experts: a tensor-parallel MLP every token runs.
    const double shared_gemm = 2.0 * FullBatchSeq() * c.h * c.shared_ff;
    const int64_t fc1_width = c.gated ? 2 * c.shared_ff : c.shared_ff;
    const int32_t f =
        AddTensorComm("MoeBlock_Shared_F", false,
                      TaskFlags().WithRecommunicate(ag))
            .id;
    Reads(f, {norm});
    const int32_t fc1 =
        AddLinear("MoeBlock_Shared_Mlp1", bs, c.h, fc1_width / c.t,
                  c.gated ? 2 * shared_gemm : shared_gemm,
                  TaskFlags().WithRecompute(full).WithActivationStored(!ag),
                  sources)
            .id;
    Reads(fc1, {f});
    const int32_t shared_act =
        AddMlpActivation("MoeBlock_Shared", c.shared_ff * bs / c.t, full);
    Reads(shared_act, {fc1});
    const int32_t fc2 =
        AddLinear("MoeBlock_Shared_Mlp2", bs, c.shared_ff / c.t, c.h,
                  shared_gemm, TaskFlags().WithRecompute(full), sources)
            .id;
    Reads(fc2, {shared_act});
    if (c.shared_covers_exchange && c.ep > 1) {
      // Megatron-LM's --moe-shared-expert-overlap (moe/shared_experts.py):
      // the shared experts' first linear runs while the dispatch is in
      // flight, their second while the combine is.
      CoverExchange(combine, fc2);
      CoverExchange(ExchangeBefore(combine), fc1);
    }
    output = AddTensorComm("MoeBlock_Shared_G", true,
                           TaskFlags().WithRecommunicate(full)
                               .WithActivationStored(false))
                 .id;
    Reads(output, {fc2, combine});
  }
  return AddBranchEnd("MoeBlock", full, output, fork);
}

void BlockBuilder::BuildMlps(int32_t input) {
  const double share = ctx_.share;
  if (ctx_.experts == 0 || ctx_.moe_share == 0) {
    BuildMlp(input);
  } else if (ctx_.dense_share == 0) {
    BuildMoe(input);
  } else {
    // A stage of dense and MoE blocks: each MLP weighed by its share.
    ctx_.share = share * ctx_.dense_share;
    BuildMlp(input);
    ctx_.share = MoeShare(share);
    BuildMoe(input);
  }
  ctx_.share = share;
}

void BlockBuilder::BuildFirstStage() {
  ctx_.placement = Placement::kFirstStage;
  const int32_t embedding = AddEmbedding("Embedding").id;
  // Each rank looks up the rows it holds; the partial outputs are summed
  // (reduce-scattered under sequence parallelism) over the TP ranks.
  const int32_t reduce =
      AddTensorComm("Embedding_G", true,
                    TaskFlags().WithActivationStored(false))
          .id;
  Reads(reduce, {embedding});
}

void BlockBuilder::BuildLastStage() {
  ctx_.placement = Placement::kLastStage;
  ctx_.bias = false;  // Megatron-LM's output layer has no bias
  const BlockContext& c = ctx_;
  const int32_t norm =
      AddLayerNorm("FinalNorm", ResidualActivation(), TaskFlags()).id;
  const int32_t f = AddTensorComm("Head_F", false, TaskFlags()).id;
  Reads(f, {norm});
  const Sources head_sources = {
      "derived:padded_vocabulary", "spec:model.hidden",
      "spec:parallelism.tensor.degree", "spec:batch.microbatch_size",
      "spec:model.seq_size", "spec:model.vocabulary.tied"};
  const double logits_gemm =
      2.0 * FullBatchSeq() * c.h * static_cast<double>(c.vocab);
  Task& head = AddLinear("Head_Logits", c.batch_seq, c.h, c.vocab / c.t,
                         logits_gemm, TaskFlags(), head_sources);
  const int32_t logits = head.id;
  if (c.tied) {
    // A tied output layer uses the embedding's table: no weights, gradients
    // or optimizer state of its own. (On a pipeline the last stage keeps a
    // copy of the table; the analyses add it, so that the task IR does not
    // depend on p.)
    head.footprint.weight = 0;
    head.footprint.weight_grad_sharded = 0;
    head.footprint.weight_grad_unsharded = 0;
    head.footprint.optimizer = 0;
    head.work[static_cast<int>(Stage::kOptimizer)] = StageWork{};
  }
  Reads(logits, {f});
  int32_t loss =
      AddSoftMax("Head_CrossEntropy", c.batch_seq * (c.vocab / c.t),
                 TaskFlags().WithOutputStored(false))
          .id;
  Reads(loss, {logits});
  // Multi-token prediction: per MTP block, the normed hidden state and the
  // next token's embedding projected from 2h to h, a block of the last
  // block's kind, and the shared output layer and loss again.
  for (int64_t i = 0; i < c.mtp_layers; ++i) {
    const std::string prefix = absl::StrCat("Mtp", i, "_");
    const int32_t mtp_norm = AddLayerNorm(Name(prefix, "Norms"),
                                          2 * ResidualActivation(), TaskFlags())
                                 .id;
    Reads(mtp_norm, {loss});
    const int32_t proj =
        AddLinear(Name(prefix, "Projection"), c.batch_seq, 2 * c.h, c.h / c.t,
                  2.0 * FullBatchSeq() * (2 * c.h) * c.h, TaskFlags(),
                  {"spec:model.mtp_layers", "spec:model.hidden",
                   "spec:parallelism.tensor.degree"})
            .id;
    Reads(proj, {mtp_norm});
    const int32_t attention = BuildAttention(proj);
    const int32_t block =
        c.last_block_moe ? BuildMoe(attention) : BuildMlp(attention);
    const int32_t mtp_f =
        AddTensorComm(Name(prefix, "Head_F"), false, TaskFlags()).id;
    Reads(mtp_f, {block});
    Task& mtp_head =
        AddLinear(Name(prefix, "Head_Logits"), c.batch_seq, c.h, c.vocab / c.t,
                  logits_gemm, TaskFlags(), head_sources);
    // The output layer is shared with the model's: no weights of its own.
    mtp_head.footprint.weight = 0;
    mtp_head.footprint.weight_grad_sharded = 0;
    mtp_head.footprint.weight_grad_unsharded = 0;
    mtp_head.footprint.optimizer = 0;
    mtp_head.work[static_cast<int>(Stage::kOptimizer)] = StageWork{};
    const int32_t mtp_logits = mtp_head.id;
    Reads(mtp_logits, {mtp_f});
    loss = AddSoftMax(Name(prefix, "Head_CrossEntropy"),
                      c.batch_seq * (c.vocab / c.t),
                      TaskFlags().WithOutputStored(false))
               .id;
    Reads(loss, {mtp_logits});
  }
}

Task& BlockBuilder::NextTask(absl::string_view name) {
  if (ctx_.relowering) {
    const size_t index = used_++;
    if (index >= ir_.tasks.size() ||
        (!renaming_ && ir_.tasks[index].name != name)) {
      if (mismatch_.ok()) {
        mismatch_ = absl::InvalidArgumentError(
            absl::StrCat("relowering: task ", index, " (", name,
                         ") is not in the block being relowered"));
      }
      return discard_;
    }
    rebuilt_->push_back(static_cast<int32_t>(index));
    Task& task = ir_.tasks[index];
    // Rebuilt as below, its dependencies kept (Reads adds none).
    std::string kept_name = std::move(task.name);
    std::vector<int32_t> deps = std::move(task.deps);
    task.~Task();
    new (&task) Task();
    task.name = std::move(kept_name);
    task.deps = std::move(deps);
    return task;
  }
  if (used_ == ir_.tasks.size()) {
    ++used_;
    return ir_.tasks.emplace_back();
  }
  Task& task = ir_.tasks[used_++];
  // Every field back to its default, the storage of the name, the
  // dependencies and the lineage kept.
  std::string kept_name = std::move(task.name);
  std::vector<int32_t> deps = std::move(task.deps);
  std::string pass = std::move(task.lineage.pass);
  std::vector<std::string> sources = std::move(task.lineage.sources);
  kept_name.clear();
  deps.clear();
  pass.clear();
  sources.clear();
  // Rebuilt in place: assigning a new Task would build it and then move
  // each of its some 700 bytes over.
  task.~Task();
  new (&task) Task();
  task.name = std::move(kept_name);
  task.deps = std::move(deps);
  task.lineage.pass = std::move(pass);
  task.lineage.sources = std::move(sources);
  return task;
}

Task& BlockBuilder::TaskAt(int32_t id) {
  if (ctx_.relowering &&
      std::find(rebuilt_->begin(), rebuilt_->end(), id) == rebuilt_->end()) {
    return discard_;
  }
  return ir_.tasks[static_cast<size_t>(id)];
}

absl::Status BlockBuilder::Build() {
  used_ = 0;
  ir_.mesh.tp = ctx_.t;
  ir_.mesh.ep = ctx_.ep;
  ir_.mesh.cp = ctx_.cp;
  ir_.training = ctx_.training;
  ir_.bytes_per_element = static_cast<int>(ctx_.bpe);
  ir_.optimizer_shard = static_cast<int64_t>(ctx_.shard);
  ir_.overlap = ctx_.overlap;
  if (ctx_.relowering) return RebuildSections();
  if (record_ != nullptr) record_->sections.clear();
  // Room for the largest block (MoE with latent attention, dense and MoE
  // MLPs, the first and last stage's tasks and MTP blocks): the strategy
  // search lowers thousands of blocks, and moving tasks as the vector grows
  // cost it a tenth of its time.
  ir_.tasks.reserve(96);
  ctx_.placement = Placement::kEveryBlock;
  BuildMlps(BuildAttention(-1));
  if (ctx_.vocab > 0) {
    BuildFirstStage();
    BuildLastStage();
  }
  ir_.tasks.erase(ir_.tasks.begin() + static_cast<std::ptrdiff_t>(used_),
                  ir_.tasks.end());
  return absl::OkStatus();
}

// The block of `program` into `ir`, with or without each task's lineage,
// where its routed experts are recorded in `record` when given; `rebuild`
// given: only the routed experts it records, their ids put in `rebuilt`
// (see Relower).
absl::Status Lower(const TypedProgram& program, bool lineage,
                   DistributedTaskIR& ir, RelowerSections* record,
                   const RelowerSections* rebuild = nullptr,
                   std::vector<int32_t>* rebuilt = nullptr) {
  const DerivedValues& d = program.derived;
  const TransformerModel& model = program.model();
  BlockContext ctx;
  ctx.t = d.tensor;
  ctx.b = program.batch().microbatch_size;
  ctx.s = model.seq_size;
  ctx.h = model.hidden;
  ctx.ff = model.feedforward;
  ctx.a = model.attn_heads;
  ctx.dh = model.attn_size;
  ctx.bpe = d.bytes_per_element;
  ctx.weight_bpe = BytesPerElement(WeightDatatype(program.options()));
  // The ranks that share one copy of the sharded state (d, or a hybrid
  // sharding group).
  ctx.shard =
      d.optimizer_sharding ? static_cast<double>(d.sharding_group) : 1.0;
  ctx.training = d.training;
  ctx.sequence_parallel = d.sequence_parallel;
  ctx.edge_split = std::holds_alternative<EdgeReduceScatterAllGather>(
      program.tensor().communication);
  ctx.recompute = d.recompute;
  ctx.ag_redo = d.all_gather_redo;
  ctx.overlap = program.tensor().overlap;
  ctx.fused = program.options().fused_activation;
  ctx.flash_attention =
      program.corrections.On(Correction::kFlashAttention);
  ctx.causal_factor =
      ctx.flash_attention &&
              program.corrections.On(Correction::kCausalAttention)
          ? 0.5
          : 1.0;
  ctx.recompute_core_attention = program.corrections.On(
      Correction::kSelectiveRecomputeCoreAttention);
  ctx.multiquery = program.options().attention == AttentionType::kMultiQuery;
  ctx.g = model.kv_heads;
  ctx.gated = model.mlp == MlpType::kGated;
  ctx.rms_norm = model.norm == NormType::kRmsNorm;
  ctx.bias = model.linear_bias;
  ctx.vocab = d.padded_vocabulary;
  ctx.tied = model.vocabulary.tied;
  ctx.positions = model.vocabulary.position == PositionEmbedding::kLearned
                      ? model.vocabulary.max_positions
                      : 0;
  ctx.placement = Placement::kEveryBlock;
  ctx.share = 1;
  ctx.precision = program.options().precision;
  ctx.sharding = d.sharding;
  ctx.cp = d.context;
  ctx.s_local = ctx.s / ctx.cp;
  ctx.cp_ring = true;
  ctx.shared_covers_exchange = false;
  ctx.permutation = MoePermutation::kNone;
  if (const auto* training =
          std::get_if<TransformerTrainingMappingSpec>(&program.spec)) {
    ctx.cp_ring = training->parallelism.context.exchange ==
                  ContextExchange::kRing;
    ctx.shared_covers_exchange =
        training->parallelism.expert.shared_expert_overlap &&
        program.corrections.On(Correction::kSharedExpertOverlap);
    if (program.corrections.On(Correction::kMoePermutation)) {
      switch (training->parallelism.expert.dispatcher) {
        case ExpertDispatcher::kAllToAll:
          ctx.permutation = MoePermutation::kAllToAll;
          break;
        case ExpertDispatcher::kDeepEp:
          ctx.permutation = MoePermutation::kFlex;
          break;
        case ExpertDispatcher::kHybridEp:
          // token_dispatcher.py _HybridEPManager: HybridEP's dispatch and
          // combine kernels permute as they send ("permute + dispatch a2a +
          // permute", fused_a2a.py HybridEPDispatch); no kernel of its own.
          break;
      }
    }
  }
  ctx.batch_seq = ctx.b * ctx.s_local;
  ctx.activation = ctx.batch_seq * ctx.h;
  ctx.seq_par_activation = (ctx.batch_seq / ctx.t) * ctx.h;
  ctx.ep = d.expert;
  ctx.etp = d.expert_tensor;
  ctx.experts = ctx.topk = ctx.expert_ff = ctx.shared_ff = 0;
  ctx.capacity = 1;
  ctx.dense_share = 1;
  ctx.moe_share = 0;
  ctx.last_block_moe = false;
  if (model.moe.has_value()) {
    ctx.experts = model.moe->experts;
    ctx.topk = model.moe->topk;
    ctx.expert_ff = model.moe->ffn;
    ctx.shared_ff = model.moe->shared_ffn;
    ctx.capacity = model.moe->capacity_factor;
    const double per_stage = static_cast<double>(d.blocks_per_stage);
    ctx.moe_share = static_cast<double>(d.stage_moe_blocks) / per_stage;
    ctx.dense_share =
        static_cast<double>(d.blocks_per_stage - d.stage_moe_blocks) /
        per_stage;
    ctx.last_block_moe = IsMoeBlock(model, model.num_blocks - 1);
  }
  // The experts' sharded state: over the expert data-parallel ranks, in
  // the proportion the dense state's group has to d.
  ctx.expert_shard = 1;
  if (d.sharding != ShardingStage::kNone) {
    const double group_fraction =
        static_cast<double>(d.sharding_group) / static_cast<double>(d.data);
    ctx.expert_shard =
        std::max(1.0, static_cast<double>(d.expert_data) * group_fraction);
  }
  ctx.q_lora = ctx.kv_lora = ctx.qk_dim = ctx.rope_dim = ctx.v_dim = 0;
  if (model.latent_attention.has_value()) {
    const LatentAttention& l = *model.latent_attention;
    ctx.q_lora = l.q_lora_rank;
    ctx.kv_lora = l.kv_lora_rank;
    ctx.qk_dim = l.qk_head_dim;
    ctx.rope_dim = l.qk_rope_head_dim;
    ctx.v_dim = l.v_head_dim;
  }
  ctx.mtp_layers = model.mtp_layers;
  ctx.lineage = lineage;
  ctx.relowering = rebuild != nullptr;
  return BlockBuilder(ctx, ir, record, rebuild, rebuilt).Build();
}

}  // namespace

absl::StatusOr<DistributedTaskIR> LowerTensorParallelBlock::Run(
    const TypedProgram& program) const {
  DistributedTaskIR ir;
  BP_RETURN_IF_ERROR(Lower(program, /*lineage=*/true, ir, nullptr));
  BP_RETURN_IF_ERROR(VerifyTaskIR(ir));
  return ir;
}

absl::StatusOr<DistributedTaskIR> LowerTensorParallelBlock::RunWithoutLineage(
    const TypedProgram& program) const {
  DistributedTaskIR ir;
  BP_RETURN_IF_ERROR(RunWithoutLineage(program, ir, nullptr));
  return ir;
}

absl::Status LowerTensorParallelBlock::RunWithoutLineage(
    const TypedProgram& program, DistributedTaskIR& ir,
    RelowerSections* sections) const {
  BP_RETURN_IF_ERROR(Lower(program, /*lineage=*/false, ir, sections));
  if (sections != nullptr) {
    sections->others = GemmWork{};
    for (size_t i = 0; i < ir.tasks.size(); ++i) {
      const auto task = static_cast<int32_t>(i);
      const bool rebuilt =
          std::any_of(sections->sections.begin(), sections->sections.end(),
                      [task](const RelowerSections::Section& section) {
                        return section.first <= task && task < section.end;
                      });
      if (!rebuilt) AddGemmWork(ir.tasks[i], sections->others);
    }
  }
  return VerifyTaskIR(ir, TaskIRChecks::kWithoutLineage);
}

absl::Status LowerTensorParallelBlock::Relower(
    const TypedProgram& program, const RelowerSections& sections,
    DistributedTaskIR& ir, std::vector<int32_t>& rebuilt) const {
  rebuilt.clear();
  const DerivedValues& d = program.derived;
  if (ir.tasks.empty() || (ir.mesh.ep > 1) != (d.expert > 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("relowering: the block being relowered has ep ",
                     ir.mesh.ep, ", the program ", d.expert,
                     " (the dispatch and combine exist only for ep > 1)"));
  }
  if (ir.mesh.tp != d.tensor || ir.mesh.cp != d.context ||
      ir.training != d.training ||
      ir.bytes_per_element != static_cast<int>(d.bytes_per_element)) {
    return absl::InvalidArgumentError(
        absl::StrCat("relowering: the block being relowered (tp ", ir.mesh.tp,
                     ", cp ", ir.mesh.cp, ", ", ir.bytes_per_element,
                     " bytes per element) is not the program's (tp ", d.tensor,
                     ", cp ", d.context, ", ", d.bytes_per_element, ")"));
  }
  BP_RETURN_IF_ERROR(Lower(program, /*lineage=*/false, ir,
                           /*record=*/nullptr, &sections, &rebuilt));
  // The other tasks are those of `ir`, verified when it was lowered, their
  // GEMM work summed then.
  return VerifyTaskIR(ir, TaskIRChecks::kWithoutLineage, &rebuilt,
                      &sections.others);
}

}  // namespace blueprint
