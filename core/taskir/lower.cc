#include "core/taskir/lower.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "core/base/status_macros.h"
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
struct BlockContext {
  int64_t t, b, s, h, ff, a, dh;
  double bpe;
  double shard;
  bool training;
  bool sequence_parallel;     // rs_ag
  bool edge_split;            // p2p_rs_ag: split comm only in the edge block
  RecomputePolicy recompute;
  bool ag_redo;
  TensorOverlap overlap;
  bool fused;
  bool multiquery;
  int64_t batch_seq;          // b*s
  int64_t activation;         // A = b*s*h
  int64_t seq_par_activation; // As = (b*s/t)*h
};

class BlockBuilder {
 public:
  explicit BlockBuilder(const BlockContext& ctx) : ctx_(ctx) {}

  DistributedTaskIR Build();

 private:
  // Activation size of the non-TP-split path: As under sequence parallelism.
  int64_t ResidualActivation() const {
    return ctx_.sequence_parallel ? ctx_.seq_par_activation : ctx_.activation;
  }
  Task& Add(std::string name, TaskKind kind, const RawLayer& raw,
            TaskFlags flags, std::vector<std::string> sources);
  void FillDefaultFootprint(Task& task, const RawLayer& raw) const;
  // Linear(M, N, K) with per-class getters.
  // `unsharded` is the FLOPs of the whole model-level GEMM this task is a
  // shard of, computed from the unsplit model dimensions.
  Task& AddLinear(std::string name, int64_t m, int64_t n, int64_t k,
                  double unsharded, TaskFlags flags,
                  std::vector<std::string> sources);
  Task& AddOverlappedLinear(std::string name, int64_t m, int64_t n, int64_t k,
                            bool conjugate, double unsharded, TaskFlags flags,
                            std::vector<std::string> sources);
  Task& AddBatchMatMul(std::string name, int64_t batch, int64_t m, int64_t n,
                       int64_t k, double unsharded, TaskFlags flags,
                       std::vector<std::string> sources);
  Task& AddLayerNorm(std::string name, int64_t elements, TaskFlags flags);
  Task& AddDropOut(std::string name, int64_t elements, TaskFlags flags,
                   std::vector<std::string> sources);
  Task& AddGeLU(std::string name, int64_t elements, TaskFlags flags);
  Task& AddSoftMax(std::string name, int64_t elements, TaskFlags flags);
  Task& AddElementWise(std::string name, int64_t lhs, int64_t rhs,
                       TaskFlags flags);
  Task& AddFork(std::string name, int64_t elements, int64_t users,
                TaskFlags flags, std::vector<std::string> sources);
  Task& AddTensorComm(std::string name, bool conjugate, TaskFlags flags);

  // The residual branch around each sub-block: fork + layer norm before it,
  // dropout + residual add after it (`prefix` is "AttnBlock" or "MlpBlock").
  void AddBranchStart(const std::string& prefix, bool full);
  void AddBranchEnd(const std::string& prefix, bool full);
  void BuildAttention();
  void BuildMlp();
  // Sets every task's dependencies: the tasks whose outputs it reads.
  void LinkDataflow();

  const BlockContext& ctx_;
  DistributedTaskIR ir_;
};

// Activation-sized tasks on the residual path depend on these fields.
const std::vector<std::string>& ResidualSources() {
  static const auto* sources = new std::vector<std::string>{
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
  fp.weight = raw.weight_space * bpe;
  fp.activation = raw.activation_space * bpe;
  fp.output = raw.outputs * bpe;
  fp.activation_grad = raw.activation_grads * bpe;
  fp.weight_grad_sharded = WeightGradBytes(raw.weight_grads, bpe, ctx_.shard);
  fp.weight_grad_unsharded = UnshardedWeightGradBytes(raw.weight_grads);
  fp.optimizer =
      OptimizerStateBytes(raw.weight_space, raw.optim_space, bpe, ctx_.shard);
}

Task& BlockBuilder::Add(std::string name, TaskKind kind, const RawLayer& raw,
                        TaskFlags flags, std::vector<std::string> sources) {
  Task task;
  task.id = static_cast<int32_t>(ir_.tasks.size());
  task.name = std::move(name);
  task.kind = std::move(kind);
  const double bpe = ctx_.bpe;
  StageWork& fw = task.work[static_cast<int>(Stage::kForward)];
  StageWork& ag = task.work[static_cast<int>(Stage::kActivationGrad)];
  StageWork& wg = task.work[static_cast<int>(Stage::kWeightGrad)];
  StageWork& op = task.work[static_cast<int>(Stage::kOptimizer)];
  fw.flops = raw.fw_flops;
  fw.bytes = (raw.inputs + raw.outputs + raw.weight_space) * bpe;
  ag.flops = raw.agrad_flops;
  ag.bytes = (raw.weight_space + raw.activation_space + raw.activation_grads) *
             bpe;
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
  task.lineage.pass = LowerTensorParallelBlock::kName;
  task.lineage.sources = std::move(sources);
  for (auto& phase : task.collectives) {
    for (auto& c : phase) c.peers = ctx_.t;
  }
  ir_.tasks.push_back(std::move(task));
  return ir_.tasks.back();
}

Task& BlockBuilder::AddLinear(std::string name, int64_t m, int64_t n,
                              int64_t k, double unsharded, TaskFlags flags,
                              std::vector<std::string> sources) {
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
  Task& task = Add(std::move(name), LinearTask{m, n, k}, r, flags,
                   std::move(sources));
  task.unsharded_gemm_flops = unsharded;
  return task;
}

Task& BlockBuilder::AddOverlappedLinear(std::string name, int64_t m, int64_t n,
                                        int64_t k, bool conjugate,
                                        double unsharded, TaskFlags flags,
                                        std::vector<std::string> sources) {
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
  Task& task = Add(std::move(name),
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

Task& BlockBuilder::AddBatchMatMul(std::string name, int64_t batch, int64_t m,
                                   int64_t n, int64_t k, double unsharded,
                                   TaskFlags flags,
                                   std::vector<std::string> sources) {
  RawLayer r;
  const double bmnk2 = 2.0 * batch * m * n * k;
  r.fw_flops = bmnk2;
  r.agrad_flops = 2 * bmnk2;
  r.inputs = static_cast<double>(batch) * (m * n + n * k);
  r.outputs = static_cast<double>(batch) * m * k;
  r.activation_space = r.inputs;
  r.activation_grads = r.outputs;
  r.matrix = true;
  Task& task = Add(std::move(name), BatchMatMulTask{batch, m, n, k}, r, flags,
                   std::move(sources));
  task.unsharded_gemm_flops = unsharded;
  return task;
}

Task& BlockBuilder::AddLayerNorm(std::string name, int64_t elements,
                                 TaskFlags flags) {
  RawLayer r;
  const double x = static_cast<double>(elements);
  r.fw_flops = 9 * x;
  r.agrad_flops = 14 * x;
  r.wgrad_flops = 7 * x;
  r.inputs = r.outputs = r.activation_space = r.activation_grads = x;
  r.weight_space = r.weight_grads = 2.0 * ctx_.h;
  r.optim_space = 4.0 * ctx_.h;
  return Add(std::move(name), LayerNormTask{elements, ctx_.h}, r, flags,
             {"spec:model.hidden", "spec:batch.microbatch_size",
              "spec:model.seq_size", "spec:parallelism.tensor.communication"});
}

Task& BlockBuilder::AddDropOut(std::string name, int64_t elements,
                               TaskFlags flags,
                               std::vector<std::string> sources) {
  RawLayer r;
  const double x = static_cast<double>(elements);
  r.fw_flops = r.agrad_flops = x;
  r.inputs = r.outputs = r.activation_space = r.activation_grads = x;
  Task& task =
      Add(std::move(name), DropOutTask{elements}, r, flags, std::move(sources));
  // The mask (1 byte per element) is the only activation kept.
  const double fw_bytes = (r.inputs + r.outputs) * ctx_.bpe + x;
  task.work[static_cast<int>(Stage::kForward)].bytes = fw_bytes;
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes = fw_bytes;
  task.footprint.activation = x;
  task.footprint.activation_grad = x;
  return task;
}

Task& BlockBuilder::AddGeLU(std::string name, int64_t elements,
                            TaskFlags flags) {
  RawLayer r;
  const double x = static_cast<double>(elements);
  r.fw_flops = 8 * x;
  r.agrad_flops = 13 * x;
  r.inputs = r.outputs = x;
  // A fused GeLU runs inside the preceding linear and keeps nothing.
  r.activation_space = r.activation_grads = ctx_.fused ? 0 : x;
  Task& task = Add(std::move(name), GeLUTask{elements, ctx_.fused}, r, flags,
                   {"spec:model.feedforward", "spec:batch.microbatch_size",
                    "spec:model.seq_size", "spec:parallelism.tensor.degree",
                    "spec:options.fused_activation"});
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes =
      task.work[static_cast<int>(Stage::kForward)].bytes;
  return task;
}

Task& BlockBuilder::AddSoftMax(std::string name, int64_t elements,
                               TaskFlags flags) {
  RawLayer r;
  const double x = static_cast<double>(elements);
  r.fw_flops = 5 * x;
  r.agrad_flops = 8 * x;
  r.inputs = r.outputs = r.activation_space = r.activation_grads = x;
  Task& task = Add(std::move(name), SoftMaxTask{elements}, r, flags,
                   {"spec:model.attn_heads", "spec:model.seq_size",
                    "spec:batch.microbatch_size",
                    "spec:parallelism.tensor.degree"});
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes =
      task.work[static_cast<int>(Stage::kForward)].bytes;
  return task;
}

Task& BlockBuilder::AddElementWise(std::string name, int64_t lhs, int64_t rhs,
                                   TaskFlags flags) {
  RawLayer r;
  const double x = static_cast<double>(lhs > rhs ? lhs : rhs);
  r.fw_flops = x;
  r.agrad_flops = static_cast<double>(lhs) + rhs;
  r.inputs = static_cast<double>(lhs) + rhs;
  r.outputs = x;
  r.activation_space = r.inputs;
  r.activation_grads = x;
  return Add(std::move(name), ElementWiseTask{lhs, rhs}, r, flags,
             {"spec:model.hidden", "spec:batch.microbatch_size",
              "spec:model.seq_size", "spec:parallelism.tensor.communication"});
}

Task& BlockBuilder::AddFork(std::string name, int64_t elements, int64_t users,
                            TaskFlags flags,
                            std::vector<std::string> sources) {
  RawLayer r;
  const double x = static_cast<double>(elements);
  r.inputs = x;
  r.agrad_flops = users * x;
  r.activation_space = x;
  // Gradients of the users accumulate in storage accounted elsewhere.
  r.activation_grads = 0;
  Task& task = Add(std::move(name), ForkTask{elements, users}, r, flags,
                   std::move(sources));
  task.work[static_cast<int>(Stage::kForward)].bytes = 0;
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes =
      x * ctx_.bpe * (users + 1);
  return task;
}

Task& BlockBuilder::AddTensorComm(std::string name, bool conjugate,
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
  Task& task = Add(std::move(name), TensorCommTask{ctx_.activation, conjugate},
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

void BlockBuilder::AddBranchStart(const std::string& prefix, bool full) {
  AddFork(prefix + "_Fork", ResidualActivation(), 2,
          TaskFlags().WithRecompute(full), ResidualSources());
  AddLayerNorm(prefix + "_LayerNorm", ResidualActivation(),
               kReusesActivation.WithRecompute(full));
}

void BlockBuilder::AddBranchEnd(const std::string& prefix, bool full) {
  AddDropOut(prefix + "_DropOut", ResidualActivation(),
             TaskFlags().WithRecompute(full), ResidualSources());
  AddElementWise(prefix + "_Residual", ResidualActivation(),
                 ResidualActivation(), kReusesActivation.WithRecompute(full));
}

void BlockBuilder::BuildAttention() {
  const BlockContext& c = ctx_;
  const bool full = c.recompute == RecomputePolicy::kFull;
  const bool attn = full || c.recompute == RecomputePolicy::kAttentionOnly;
  const bool ag = attn || c.ag_redo;
  const int64_t bs = c.batch_seq;
  const int64_t heads_local = c.a * c.dh / c.t;
  // Unsharded GEMM FLOPs from the model dimensions (work conservation).
  const double bsd = static_cast<double>(bs);
  const double qkv_one = 2 * bsd * c.h * (static_cast<double>(c.a) * c.dh);
  const double attn_bmm = 2.0 * c.b * c.a * c.s * c.dh * c.s;
  const std::vector<std::string> qkv_sources = {
      "spec:model.hidden", "spec:model.attn_heads", "spec:model.attn_size",
      "spec:parallelism.tensor.degree", "spec:batch.microbatch_size",
      "spec:model.seq_size"};

  AddBranchStart("AttnBlock", full);
  if (c.overlap == TensorOverlap::kNone) {
    AddTensorComm("AttnBlock_F", false, TaskFlags().WithRecommunicate(ag));
    AddFork("AttnBlock_Multihead_Fork", c.activation, 3,
            TaskFlags().WithRecompute(ag).WithActivationStored(!ag),
            ResidualSources());
    AddLinear("AttnBlock_Query", bs, c.h, heads_local, qkv_one,
              kReusesActivation.WithRecompute(full), qkv_sources);
    // Multi-query K and V are one head, replicated on every TP rank.
    const int64_t kv = c.multiquery ? c.dh : heads_local;
    const double kv_unsharded =
        c.multiquery ? 2 * bsd * c.h * c.dh * c.t : qkv_one;
    AddLinear("AttnBlock_Key", bs, c.h, kv, kv_unsharded,
              kReusesActivation.WithRecompute(full), qkv_sources);
    AddLinear("AttnBlock_Value", bs, c.h, kv, kv_unsharded,
              kReusesActivation.WithRecompute(full), qkv_sources);
  } else if (!c.multiquery) {
    AddOverlappedLinear(
        "AttnBlock_QKV_AG", bs, c.h, c.a * c.dh * 3, false, 3 * qkv_one,
        TaskFlags().WithRecompute(full).WithRecommunicate(ag), qkv_sources);
  } else {
    AddOverlappedLinear(
        "AttnBlock_Query_AG", bs, c.h, c.a * c.dh, false, qkv_one,
        TaskFlags().WithRecompute(full).WithRecommunicate(ag), qkv_sources);
    AddFork("AttnBlock_KV_Fork", c.activation, 2,
            TaskFlags().WithRecompute(ag).WithActivationStored(!ag),
            ResidualSources());
    AddLinear("AttnBlock_Key", bs, c.h, c.dh, 2 * bsd * c.h * c.dh * c.t,
              kReusesActivation.WithRecompute(full), qkv_sources);
    AddLinear("AttnBlock_Value", bs, c.h, c.dh, 2 * bsd * c.h * c.dh * c.t,
              kReusesActivation.WithRecompute(full), qkv_sources);
  }
  const std::vector<std::string> attn_sources = {
      "spec:model.attn_heads", "spec:model.attn_size", "spec:model.seq_size",
      "spec:batch.microbatch_size", "spec:parallelism.tensor.degree",
      "spec:parallelism.recompute"};
  AddBatchMatMul("AttnBlock_Multihead_Key_Query", c.b * c.a / c.t, c.s, c.dh,
                 c.s, attn_bmm,
                 TaskFlags().WithRecompute(attn).WithOutputStored(!attn),
                 attn_sources);
  const int64_t scores = c.a / c.t * c.s * c.s * c.b;
  AddSoftMax("AttnBlock_Multihead_SoftMax", scores,
             TaskFlags().WithRecompute(attn).WithOutputStored(!attn));
  AddDropOut("AttnBlock_Multihead_DropOut", scores,
             TaskFlags().WithRecompute(attn).WithActivationStored(!attn),
             attn_sources);
  AddBatchMatMul("AttnBlock_Multihead_Attn", c.b * c.a / c.t, c.s, c.s,
                 c.a * c.dh / c.a, attn_bmm, TaskFlags().WithRecompute(full),
                 attn_sources);
  if (c.overlap == TensorOverlap::kNone) {
    AddLinear("AttnBlock_MLP", bs, heads_local, c.h, qkv_one,
              TaskFlags().WithRecompute(full), qkv_sources);
    AddTensorComm(
        "AttnBlock_G", true,
        TaskFlags().WithRecommunicate(full).WithActivationStored(false));
  } else {
    AddOverlappedLinear("AttnBlock_MLP_RS", bs, c.a * c.dh, c.h, true, qkv_one,
                        TaskFlags().WithRecompute(full).WithRecommunicate(full),
                        qkv_sources);
  }
  AddBranchEnd("AttnBlock", full);
}

void BlockBuilder::BuildMlp() {
  const BlockContext& c = ctx_;
  const bool full = c.recompute == RecomputePolicy::kFull;
  const bool ag = full || c.ag_redo;
  const int64_t bs = c.batch_seq;
  const double mlp_gemm = 2.0 * bs * c.h * c.ff;
  const std::vector<std::string> mlp_sources = {
      "spec:model.hidden", "spec:model.feedforward",
      "spec:parallelism.tensor.degree", "spec:batch.microbatch_size",
      "spec:model.seq_size"};
  AddBranchStart("MlpBlock", full);
  if (c.overlap == TensorOverlap::kNone) {
    AddTensorComm("MlpBlock_F", false, TaskFlags().WithRecommunicate(ag));
    AddLinear("MlpBlock_Mlp1", bs, c.h, c.ff / c.t, mlp_gemm,
              TaskFlags().WithRecompute(full).WithActivationStored(!ag),
              mlp_sources);
  } else {
    AddOverlappedLinear("MlpBlock_Mlp1_AG", bs, c.h, c.ff, false, mlp_gemm,
                        TaskFlags().WithRecompute(full).WithRecommunicate(ag),
                        mlp_sources);
  }
  AddGeLU("MlpBlock_GeLU", c.ff * bs / c.t, TaskFlags().WithRecompute(full));
  if (c.overlap == TensorOverlap::kNone) {
    AddLinear("MlpBlock_Mlp2", bs, c.ff / c.t, c.h, mlp_gemm,
              TaskFlags().WithRecompute(full), mlp_sources);
    AddTensorComm(
        "MlpBlock_G", true,
        TaskFlags().WithRecommunicate(full).WithActivationStored(false));
  } else {
    AddOverlappedLinear("MlpBlock_Mlp2_RS", bs, c.ff, c.h, true, mlp_gemm,
                        TaskFlags().WithRecompute(full).WithRecommunicate(full),
                        mlp_sources);
  }
  AddBranchEnd("MlpBlock", full);
}

void BlockBuilder::LinkDataflow() {
  // task -> the tasks it reads, by name; alternatives separated by '|' (the
  // first present one is used: overlapped and multi-query variants rename
  // producers).
  static const auto* kInputs =
      new std::vector<std::pair<const char*, std::vector<const char*>>>{
          {"AttnBlock_LayerNorm", {"AttnBlock_Fork"}},
          {"AttnBlock_F", {"AttnBlock_LayerNorm"}},
          {"AttnBlock_Multihead_Fork", {"AttnBlock_F"}},
          {"AttnBlock_QKV_AG", {"AttnBlock_LayerNorm"}},
          {"AttnBlock_Query_AG", {"AttnBlock_LayerNorm"}},
          {"AttnBlock_KV_Fork", {"AttnBlock_Query_AG"}},
          {"AttnBlock_Query", {"AttnBlock_Multihead_Fork"}},
          {"AttnBlock_Key", {"AttnBlock_Multihead_Fork|AttnBlock_KV_Fork"}},
          {"AttnBlock_Value", {"AttnBlock_Multihead_Fork|AttnBlock_KV_Fork"}},
          {"AttnBlock_Multihead_Key_Query",
           {"AttnBlock_Query|AttnBlock_QKV_AG|AttnBlock_Query_AG",
            "AttnBlock_Key|AttnBlock_QKV_AG"}},
          {"AttnBlock_Multihead_SoftMax", {"AttnBlock_Multihead_Key_Query"}},
          {"AttnBlock_Multihead_DropOut", {"AttnBlock_Multihead_SoftMax"}},
          {"AttnBlock_Multihead_Attn",
           {"AttnBlock_Multihead_DropOut", "AttnBlock_Value|AttnBlock_QKV_AG"}},
          {"AttnBlock_MLP", {"AttnBlock_Multihead_Attn"}},
          {"AttnBlock_G", {"AttnBlock_MLP"}},
          {"AttnBlock_MLP_RS", {"AttnBlock_Multihead_Attn"}},
          {"AttnBlock_DropOut", {"AttnBlock_G|AttnBlock_MLP_RS"}},
          {"AttnBlock_Residual", {"AttnBlock_DropOut", "AttnBlock_Fork"}},
          {"MlpBlock_Fork", {"AttnBlock_Residual"}},
          {"MlpBlock_LayerNorm", {"MlpBlock_Fork"}},
          {"MlpBlock_F", {"MlpBlock_LayerNorm"}},
          {"MlpBlock_Mlp1", {"MlpBlock_F"}},
          {"MlpBlock_Mlp1_AG", {"MlpBlock_LayerNorm"}},
          {"MlpBlock_GeLU", {"MlpBlock_Mlp1|MlpBlock_Mlp1_AG"}},
          {"MlpBlock_Mlp2", {"MlpBlock_GeLU"}},
          {"MlpBlock_G", {"MlpBlock_Mlp2"}},
          {"MlpBlock_Mlp2_RS", {"MlpBlock_GeLU"}},
          {"MlpBlock_DropOut", {"MlpBlock_G|MlpBlock_Mlp2_RS"}},
          {"MlpBlock_Residual", {"MlpBlock_DropOut", "MlpBlock_Fork"}},
      };
  std::map<std::string, int32_t> ids;
  for (const Task& task : ir_.tasks) ids[task.name] = task.id;
  for (const auto& [name, inputs] : *kInputs) {
    auto task = ids.find(name);
    if (task == ids.end()) continue;
    std::vector<int32_t>& deps = ir_.tasks[task->second].deps;
    for (const char* alternatives : inputs) {
      for (absl::string_view producer : absl::StrSplit(alternatives, '|')) {
        auto it = ids.find(std::string(producer));
        if (it == ids.end()) continue;
        if (std::find(deps.begin(), deps.end(), it->second) == deps.end()) {
          deps.push_back(it->second);
        }
        break;
      }
    }
    std::sort(deps.begin(), deps.end());
  }
}

DistributedTaskIR BlockBuilder::Build() {
  ir_.mesh.tp = ctx_.t;
  ir_.training = ctx_.training;
  ir_.bytes_per_element = static_cast<int>(ctx_.bpe);
  ir_.optimizer_shard = static_cast<int64_t>(ctx_.shard);
  ir_.overlap = ctx_.overlap;
  BuildAttention();
  BuildMlp();
  LinkDataflow();
  return std::move(ir_);
}

}  // namespace

absl::StatusOr<DistributedTaskIR> LowerTensorParallelBlock::Run(
    const TypedProgram& program) const {
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
  ctx.shard = d.optimizer_sharding ? static_cast<double>(d.data) : 1.0;
  ctx.training = d.training;
  ctx.sequence_parallel = d.sequence_parallel;
  ctx.edge_split = std::holds_alternative<EdgeReduceScatterAllGather>(
      program.tensor().communication);
  ctx.recompute = d.recompute;
  ctx.ag_redo = d.all_gather_redo;
  ctx.overlap = program.tensor().overlap;
  ctx.fused = program.options().fused_activation;
  ctx.multiquery = program.options().attention == AttentionType::kMultiQuery;
  ctx.batch_seq = ctx.b * ctx.s;
  ctx.activation = ctx.batch_seq * ctx.h;
  ctx.seq_par_activation = (ctx.batch_seq / ctx.t) * ctx.h;
  DistributedTaskIR ir = BlockBuilder(ctx).Build();
  BP_RETURN_IF_ERROR(VerifyTaskIR(ir));
  return ir;
}

}  // namespace blueprint
