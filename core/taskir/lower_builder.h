// The builder behind LowerTensorParallelBlock (lower.h), private to
// core/taskir: the context a block is lowered in (BlockContext, read from
// the TypedProgram), the per-layer quantities a task is made of (RawLayer)
// and BlockBuilder, whose members are defined by part of the block:
//   lower.cc            the context, the build and relowering, the pass
//   lower_tasks.cc      the task vocabulary (Calculon's layers, exchanges,
//                       the residual branch)
//   lower_attention.cc  attention: dense, grouped, multi-query, latent; the
//                       context-parallel K/V exchange; flash attention
//   lower_mlp.cc        the MLP and the MoE MLP: router, expert exchange,
//                       token permutations, routed and shared experts
//   lower_stages.cc     the first and last stage: embedding, output layer,
//                       loss, multi-token prediction
#ifndef BLUEPRINTING_CORE_TASKIR_LOWER_BUILDER_H_
#define BLUEPRINTING_CORE_TASKIR_LOWER_BUILDER_H_

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/spec/program.h"
#include "core/taskir/lower.h"
#include "core/taskir/task_ir.h"

namespace blueprint {
namespace lower_internal {

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

// A GEMM of m rows through n x k weights (Calculon's Linear, layers.py):
// 2 m n k FLOPs in each of the forward, activation-gradient and
// weight-gradient passes, m x n read and kept, m x k written, n x k weights
// with their gradients and two optimizer moments. (m is a double: an
// expert's rows are an average share of the routed tokens.)
inline RawLayer GemmLayer(double m, int64_t n, int64_t k) {
  RawLayer r;
  r.fw_flops = r.agrad_flops = r.wgrad_flops = 2.0 * m * n * k;
  r.inputs = r.activation_space = m * n;
  r.outputs = r.activation_grads = m * k;
  r.weight_space = r.weight_grads = static_cast<double>(n) * k;
  r.optim_space = 2.0 * n * k;
  r.matrix = true;
  return r;
}

// The bytes an MoE router's kernels after the gating GEMM move per token,
// forward and backward (correction kMoeRouterKernels): `experts` E,
// `topk` k, the logits in `logit_bytes` per element, with or without the
// auxiliary loss's passes, as separate kernels or fused (lower_mlp.cc).
struct RouterBytes {
  double forward = 0, backward = 0;
};
RouterBytes RouterKernelBytesPerToken(int64_t experts, int64_t topk,
                                      double logit_bytes, bool aux_loss,
                                      bool fused);

// How an MoE block permutes its tokens (correction kMoePermutation): in no
// kernel of its own (Calculon's model, the correction off, or HybridEP,
// whose exchange kernels permute), as Megatron-LM's all-to-all dispatcher
// does, or as its flex dispatcher with DeepEP.
enum class MoePermutation { kNone, kAllToAll, kFlex, kAllGather };

// What a block is lowered from: the program's model, options, tensor
// parallelism and derived values, read where the program holds them (the
// context lives no longer than the program), and only what the lowering
// derives itself beside them. The accessors name the model's and the
// derived values in Calculon's notation (calculon/MODEL.md §3: t, b, s, h,
// ff, a, dh, ...), which the formulas use; they copy nothing.
struct BlockContext {
  const TransformerModel& model;
  const Batch& batch;
  const ExecutionOptions& options;
  const TensorParallel& tensor;
  const DerivedValues& derived;

  int64_t t() const { return derived.tensor; }
  int64_t b() const { return batch.microbatch_size; }
  int64_t s() const { return model.seq_size; }
  int64_t h() const { return model.hidden; }
  int64_t ff() const { return model.feedforward; }
  int64_t a() const { return model.attn_heads; }
  int64_t dh() const { return model.attn_size; }
  int64_t g() const { return model.kv_heads; }  // key/value heads
  int64_t cp() const { return derived.context; }
  int64_t ep() const { return derived.expert; }
  int64_t etp() const { return derived.expert_tensor; }
  // The activations' bytes per element, a double as every byte count is.
  double bpe() const { return derived.bytes_per_element; }
  bool multiquery() const {
    return options.attention == AttentionType::kMultiQuery;
  }
  // A gated MLP's first linear is gate and up, 2 ff wide.
  bool gated() const { return model.mlp == MlpType::kGated; }
  bool rms_norm() const { return model.norm == NormType::kRmsNorm; }
  bool latent() const { return model.latent_attention.has_value(); }

  // Resolved once from the program: what the spec states through a
  // fallback, a sum type or a correction switch (core/spec/corrections.h).
  double weight_bpe = 0;    // the weights' storage datatype's (WeightDatatype)
  bool edge_split = false;  // p2p_rs_ag: split comm only in the edge block
  bool cp_ring = true;      // K/V by a p2p ring, else one all-gather
  // Correction kSharedExpertOverlap with parallelism.expert.
  // shared_expert_overlap: the shared experts' linears cover the exchange.
  bool shared_covers_exchange = false;
  // parallelism.expert.dispatcher all_gather: the expert exchanges are an
  // all-gather and a reduce-scatter over the etp x ep ranks.
  bool all_gather_dispatch = false;
  // Correction kMoePermutation: the token permutations as tasks, as the
  // dispatcher (parallelism.expert.dispatcher) runs them.
  MoePermutation permutation = MoePermutation::kNone;
  // Correction kMoeRouterKernels: the router's kernels after its gating
  // GEMM as a task of their own.
  bool router_kernels = false;
  // The refined profile's attention corrections.
  bool flash_attention = false;  // one fused kernel: no s x s in memory
  double causal_factor = 1;      // 0.5: the kernel skips masked blocks
  // Selective recomputation also recomputes the product with V.
  bool recompute_core_attention = false;
  // parallelism.recompute_modules: the modules whose forward runs again in
  // the backward pass besides the core attention (none for inference).
  RecomputeModules recompute_modules;
  bool Recomputes(RecomputeModule m) const {
    return recompute_modules.Has(m);
  }

  // Derived by the lowering from the model and the derived values.
  int64_t s_local = 0;             // s / cp: each rank's share of a sequence
  int64_t batch_seq = 0;           // b * s / cp
  int64_t activation = 0;          // A = b * s / cp * h
  int64_t seq_par_activation = 0;  // As = (b * s / cp / t) * h
  // The ranks that share one copy of the experts' sharded state: the
  // expert data-parallel ranks, in the proportion the dense state's group
  // has to d.
  double expert_shard = 1;
  // Of the priced stage's blocks: the dense and the MoE ones' shares.
  double dense_share = 1, moe_share = 0;
  bool last_block_moe = false;  // MTP blocks are of the last block's kind

  // The tasks being added, which change as the build goes: where they run,
  // the share of the stage's blocks they weigh (Task::share), the ranks
  // that share one copy of their sharded state (d or a hybrid sharding
  // group, 1 unsharded; expert_shard while an expert's linear is added),
  // whether their linears have biases (the model's, but the output
  // layer's, which has none) and the part of an MoE block they belong to
  // (Task::moe_part; kNone outside BuildMoe's parts).
  Placement placement = Placement::kEveryBlock;
  double share = 1;
  double shard = 1;
  bool bias = false;
  MoePart moe_part = MoePart::kNone;

  // Record each task's lineage (false: RunWithoutLineage, for pricing).
  bool lineage = true;
  // Relower: rebuild only the tasks that depend on ep, etp and the
  // exchange, in an IR that holds the block at other ones.
  bool relowering = false;
};

// The context of `program`'s block.
BlockContext MakeBlockContext(const TypedProgram& program, bool lineage,
                              bool relowering);

// A task's lineage sources as the builder collects them: string literals,
// made into the task's strings only when lineage is recorded (the strategy
// search lowers thousands of blocks and prints none of them), held inline
// so that collecting them allocates nothing.
using Sources = absl::InlinedVector<const char*, 12>;

// A MoE block's tasks depend on these fields.
Sources MoeSources();
// Activation-sized tasks on the residual path depend on these fields.
const Sources& ResidualSources();

// A layer whose backward pass moves the bytes its forward pass does (Calculon's
// getter overrides for its vector layers, and their kin:
// GeLU, SoftMax, gated activation, token permutation).
inline void BackwardBytesAsForward(Task& task) {
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes =
      task.work[static_cast<int>(Stage::kForward)].bytes;
}

// A task that reads its input from an activation another task stores (the
// fork before it) instead of storing its own copy.
constexpr TaskFlags kReusesActivation =
    TaskFlags().WithActivationStored(false).WithActivationReused(true);

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
    return static_cast<double>(ctx_.b()) * static_cast<double>(ctx_.s());
  }
  // Activation size of the non-TP-split path: As under sequence parallelism.
  int64_t ResidualActivation() const {
    return ctx_.derived.sequence_parallel ? ctx_.seq_par_activation
                                          : ctx_.activation;
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
                  double unsharded, TaskFlags flags, Sources sources);
  Task& AddOverlappedLinear(absl::string_view name, int64_t m, int64_t n,
                            int64_t k, bool conjugate, double unsharded,
                            TaskFlags flags, Sources sources);
  Task& AddBatchMatMul(absl::string_view name, int64_t batch, int64_t m,
                       int64_t n, int64_t k, double unsharded, TaskFlags flags,
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
  // a relowering at another ep rebuilds as many tasks) and the rows the
  // unpermutation of the received rows writes (restored: received, or the
  // allgather dispatcher's gathered tokens, zeros included).
  struct Permutations {
    int64_t local = 0, routed = 0, received = 0, restored = 0;
  };
  Permutations PermutationRows(double received, double local_experts) const;
  // The router's kernels after its gating GEMM (correction
  // kMoeRouterKernels) over the rank's tokens, reading `router`; returns
  // its id.
  int32_t AddRouterKernels(int32_t router, bool full);
  // The activation after an MLP's first linear: `prefix`_GatedActivation
  // (gated MLP) or `prefix`_GeLU over `elements`; returns its id.
  int32_t AddMlpActivation(absl::string_view prefix, int64_t elements,
                           TaskFlags flags);
  // A routed expert's linear: `tokens` rows (the rank's share of the
  // routed tokens, capacity included) through n x k on each of the rank's
  // `local_experts` experts, whose weights and optimizer state shard over
  // the expert data-parallel ranks.
  Task& AddExpertLinear(absl::string_view name, double tokens, int64_t n,
                        int64_t k, double local_experts, Sources sources,
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
  std::pair<int32_t, int32_t> BuildLatentProjections(int32_t input, bool full);
  // The K/V exchange of context parallelism before the scores, reading
  // the key and value tasks; -1 when cp = 1.
  int32_t BuildContextExchange(int32_t key, int32_t value);
  int32_t AddBranchEnd(absl::string_view prefix, bool full, int32_t output,
                       int32_t fork);
  // Each returns the id of its last task; `input` is the task they read
  // (-1: none, the first task of the block).
  int32_t BuildAttention(int32_t input);
  // The attention's query, key and value tasks (one task for two or three
  // of them where one linear computes them), reading the normed input
  // `norm`; `full` and `ag` the recomputation and re-communication of the
  // block's.
  struct Projections {
    int32_t query = -1, key = -1, value = -1;
  };
  Projections BuildProjections(int32_t norm, bool full, bool ag);
  // The lineage sources of the attention's Q/K/V and output linears.
  Sources ProjectionSources() const;
  // The GEMM FLOPs of a query (or output) projection of the whole
  // microbatch: 2 b s h (a dh).
  double QueryGemm() const {
    return 2 * FullBatchSeq() * ctx_.h() *
           (static_cast<double>(ctx_.a()) * ctx_.dh());
  }
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

  // A copy: the tasks being added (placement, share, shard, bias) change as
  // the build goes.
  BlockContext ctx_;
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

}  // namespace lower_internal
}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_TASKIR_LOWER_BUILDER_H_
