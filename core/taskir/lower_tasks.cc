// The builder's task vocabulary: each of Calculon's layers (calculon/MODEL.md
// §3) as a Task, with its FLOPs, bytes, footprint and collectives per stage;
// the expert and context exchanges; the residual branch around a sub-block.
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/taskir/lower_builder.h"
#include "core/taskir/optimizer.h"

namespace blueprint {
namespace lower_internal {
namespace {

// Calculon's FLOPs per element of its vector layers (layers.py, the class
// constructors; ../shared/calculon/MODEL.md §4.2): forward, activation
// gradient, weight gradient.
struct ElementFlops {
  double fw = 0, agrad = 0, wgrad = 0;
};
constexpr ElementFlops kLayerNormFlops{9, 14, 7};
constexpr ElementFlops kGeLUFlops{8, 13, 0};
constexpr ElementFlops kSoftMaxFlops{5, 8, 0};
// The GeLU's for the activation plus the product with the up half.
constexpr ElementFlops kGatedActivationFlops{9, 15, 0};

// A vector layer over `x` elements: reads and writes x, keeps them and
// their gradients for the backward pass.
RawLayer VectorLayer(const ElementFlops& flops, double x) {
  RawLayer r;
  r.fw_flops = flops.fw * x;
  r.agrad_flops = flops.agrad * x;
  r.wgrad_flops = flops.wgrad * x;
  r.inputs = r.outputs = r.activation_space = r.activation_grads = x;
  return r;
}

}  // namespace

// A MoE block's tasks depend on these fields.
Sources MoeSources() {
  return {"spec:model.hidden",          "spec:model.moe",
          "spec:parallelism.expert",    "spec:parallelism.tensor.degree",
          "spec:batch.microbatch_size", "spec:model.seq_size"};
}

// Activation-sized tasks on the residual path depend on these fields.
const Sources& ResidualSources() {
  static const auto* sources =
      new Sources{"spec:model.hidden", "spec:batch.microbatch_size",
                  "spec:model.seq_size", "spec:parallelism.recompute"};
  return *sources;
}

void BlockBuilder::FillDefaultFootprint(Task& task, const RawLayer& raw) const {
  const double bpe = ctx_.bpe();
  Footprint& fp = task.footprint;
  // ZeRO-3 keeps 1/shard of the weights between uses.
  const double weight_shard =
      ctx_.derived.sharding == ShardingStage::kParameters ? ctx_.shard : 1.0;
  fp.weight = raw.weight_space * ctx_.weight_bpe / weight_shard;
  fp.activation = raw.activation_space * bpe;
  fp.output = raw.outputs * bpe;
  fp.activation_grad = raw.activation_grads * bpe;
  fp.weight_grad_sharded = WeightGradBytesFor(
      ctx_.options.precision, raw.weight_grads, bpe, ctx_.shard,
      ctx_.derived.sharding >= ShardingStage::kGradients);
  fp.weight_grad_unsharded = UnshardedWeightGradBytes(raw.weight_grads);
  fp.optimizer =
      OptimizerStateBytes(raw.weight_space, raw.optim_space, bpe, ctx_.shard);
}

Task& BlockBuilder::Add(absl::string_view name, TaskKind kind,
                        const RawLayer& raw, TaskFlags flags, Sources sources) {
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
  task.moe_part = ctx_.moe_part;
  // A relowered task kept its name (NextTask checked it), but an exchange,
  // renamed as its kind.
  if (!ctx_.relowering || renaming_) task.name.assign(name.data(), name.size());
  task.kind = std::move(kind);
  const double bpe = ctx_.bpe();
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
  ag.bytes =
      ctx_.weight_bpe == bpe
          ? (raw.weight_space + raw.activation_space + raw.activation_grads) *
                bpe
          : with_weights(raw.activation_space + raw.activation_grads);
  wg.flops = raw.wgrad_flops;
  wg.bytes =
      raw.weight_space == 0
          ? 0
          : (raw.weight_grads + raw.activation_space + raw.activation_grads) *
                bpe;
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
    for (auto& c : phase) c.peers = ctx_.t();
  }
  return task;
}

Task& BlockBuilder::AddLinear(absl::string_view name, int64_t m, int64_t n,
                              int64_t k, double unsharded, TaskFlags flags,
                              Sources sources) {
  RawLayer r = GemmLayer(static_cast<double>(m), n, k);
  AddBias(k, r);
  Task& task = Add(name, LinearTask{m, n, k}, r, flags, std::move(sources));
  task.unsharded_gemm_flops = unsharded;
  return task;
}

Task& BlockBuilder::AddOverlappedLinear(absl::string_view name, int64_t m,
                                        int64_t n, int64_t k, bool conjugate,
                                        double unsharded, TaskFlags flags,
                                        Sources sources) {
  const int64_t t = ctx_.t();
  const int64_t tiles = t;
  double act_space, act_grad_space, act_grad_net_buffer;
  if (ctx_.derived.sequence_parallel) {
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
  RawLayer r = GemmLayer(static_cast<double>(m), n, k);
  r.activation_space = act_space;
  r.activation_grads = act_grad_space + act_grad_net_buffer;
  AddBias(k, r);
  Task& task =
      Add(name,
          OverlappedLinearTask{m, n, k, conjugate, ctx_.tensor.overlap, tiles},
          r, flags, std::move(sources));
  task.unsharded_gemm_flops = unsharded;

  // Collectives (LinearOverlapped.get_comm_bytes / compute_net_time).
  if (t > 1) {
    const double bpe = ctx_.bpe();
    const double ag_bytes = r.inputs * bpe;
    const double ar_rs_bytes = r.outputs * bpe;
    for (int v = 0; v < kNumVariants; ++v) {
      const bool split =
          ctx_.derived.sequence_parallel ||
          (ctx_.edge_split && v == static_cast<int>(BlockVariant::kEdge));
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

Task& BlockBuilder::AddBatchMatMul(absl::string_view name, int64_t batch,
                                   int64_t m, int64_t n, int64_t k,
                                   double unsharded, TaskFlags flags,
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
  Task& task =
      Add(name, BatchMatMulTask{batch, m, n, k}, r, flags, std::move(sources));
  task.unsharded_gemm_flops = unsharded;
  return task;
}

Task& BlockBuilder::AddLayerNorm(absl::string_view name, int64_t elements,
                                 TaskFlags flags) {
  RawLayer r = VectorLayer(kLayerNormFlops, static_cast<double>(elements));
  // LayerNorm keeps a scale and a bias per hidden unit, RMSNorm a scale only;
  // both are priced with Calculon's LayerNorm FLOPs.
  const double weights = (ctx_.rms_norm() ? 1.0 : 2.0) * ctx_.h();
  r.weight_space = r.weight_grads = weights;
  r.optim_space = 2 * weights;
  Sources sources = {"spec:model.hidden", "spec:batch.microbatch_size",
                     "spec:model.seq_size",
                     "spec:parallelism.tensor.communication"};
  // Calculon's block (LayerNorm) depends on no architecture field.
  if (ctx_.rms_norm()) sources.push_back("spec:model.norm");
  return Add(name, LayerNormTask{elements, ctx_.h()}, r, flags,
             std::move(sources));
}

Task& BlockBuilder::AddDropOut(absl::string_view name, int64_t elements,
                               TaskFlags flags, Sources sources) {
  RawLayer r;
  const double x = static_cast<double>(elements);
  r.fw_flops = r.agrad_flops = x;
  r.inputs = r.outputs = r.activation_space = r.activation_grads = x;
  Task& task = Add(name, DropOutTask{elements}, r, flags, std::move(sources));
  // The mask (1 byte per element) is the only activation kept.
  const double fw_bytes = (r.inputs + r.outputs) * ctx_.bpe() + x;
  task.work[static_cast<int>(Stage::kForward)].bytes = fw_bytes;
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes = fw_bytes;
  task.footprint.activation = x;
  task.footprint.activation_grad = x;
  return task;
}

Task& BlockBuilder::AddGeLU(absl::string_view name, int64_t elements,
                            TaskFlags flags) {
  RawLayer r = VectorLayer(kGeLUFlops, static_cast<double>(elements));
  // A fused GeLU runs inside the preceding linear and keeps nothing.
  if (ctx_.options.fused_activation) {
    r.activation_space = r.activation_grads = 0;
  }
  Task& task =
      Add(name, GeLUTask{elements, ctx_.options.fused_activation}, r, flags,
          {"spec:model.feedforward", "spec:batch.microbatch_size",
           "spec:model.seq_size", "spec:parallelism.tensor.degree",
           "spec:options.fused_activation"});
  BackwardBytesAsForward(task);
  return task;
}

Task& BlockBuilder::AddSoftMax(absl::string_view name, int64_t elements,
                               TaskFlags flags) {
  const RawLayer r = VectorLayer(kSoftMaxFlops, static_cast<double>(elements));
  Task& task =
      Add(name, SoftMaxTask{elements}, r, flags,
          {"spec:model.attn_heads", "spec:model.seq_size",
           "spec:batch.microbatch_size", "spec:parallelism.tensor.degree"});
  BackwardBytesAsForward(task);
  return task;
}

Task& BlockBuilder::AddElementWise(absl::string_view name, int64_t lhs,
                                   int64_t rhs, TaskFlags flags) {
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

Task& BlockBuilder::AddFork(absl::string_view name, int64_t elements,
                            int64_t users, TaskFlags flags, Sources sources) {
  RawLayer r;
  const double x = static_cast<double>(elements);
  r.inputs = x;
  r.agrad_flops = users * x;
  r.activation_space = x;
  // Gradients of the users accumulate in storage accounted elsewhere.
  r.activation_grads = 0;
  Task& task =
      Add(name, ForkTask{elements, users}, r, flags, std::move(sources));
  task.work[static_cast<int>(Stage::kForward)].bytes = 0;
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes =
      x * ctx_.bpe() * (users + 1);
  return task;
}

Task& BlockBuilder::AddTensorComm(absl::string_view name, bool conjugate,
                                  TaskFlags flags) {
  const int64_t t = ctx_.t();
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
  Task& task = Add(name, TensorCommTask{ctx_.activation, conjugate}, r, flags,
                   {"spec:model.hidden", "spec:batch.microbatch_size",
                    "spec:model.seq_size", "spec:parallelism.tensor.degree",
                    "spec:parallelism.tensor.communication"});
  const double bpe = ctx_.bpe();
  const bool rs_ag = ctx_.derived.sequence_parallel;
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
      const bool split = rs_ag || (ctx_.edge_split &&
                                   v == static_cast<int>(BlockVariant::kEdge));
      Collective& fw = task.collectives[0][v];
      Collective& bw = task.collectives[1][v];
      Collective& re = task.collectives[2][v];
      if (split) {
        fw.op =
            conjugate ? CollectiveOp::kReduceScatter : CollectiveOp::kAllGather;
        bw.op =
            conjugate ? CollectiveOp::kAllGather : CollectiveOp::kReduceScatter;
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
  const double x = static_cast<double>(elements);
  RawLayer r = VectorLayer(kGatedActivationFlops, x);
  r.inputs = 2 * x;  // the gate and the up halves
  // A fused activation runs inside the preceding linear and keeps nothing;
  // otherwise both halves are kept for the backward pass.
  r.activation_space = r.activation_grads =
      ctx_.options.fused_activation ? 0 : 2 * x;
  Task& task =
      Add(name, GatedActivationTask{elements, ctx_.options.fused_activation}, r,
          flags,
          {"spec:model.feedforward", "spec:model.mlp",
           "spec:batch.microbatch_size", "spec:model.seq_size",
           "spec:parallelism.tensor.degree", "spec:options.fused_activation"});
  BackwardBytesAsForward(task);
  return task;
}

Task& BlockBuilder::AddExchange(absl::string_view name, MeshAxis axis,
                                int64_t peers, double elements,
                                CollectiveOp fw_op, double fw_bytes,
                                CollectiveOp bw_op, double bw_bytes,
                                int32_t overlapped_by, Sources sources) {
  RawLayer r;
  r.inputs = r.outputs = elements;
  // The exchange keeps nothing: its output is the next task's input.
  Task& task = Add(
      name, ExchangeTask{static_cast<int64_t>(elements), axis, overlapped_by},
      r, TaskFlags().WithActivationStored(false), std::move(sources));
  task.footprint.output = 0;
  for (int v = 0; v < kNumVariants; ++v) {
    Collective& fw = task.collectives[0][v];
    Collective& bw = task.collectives[1][v];
    fw.axis = bw.axis = task.collectives[2][v].axis = axis;
    fw.peers = bw.peers = task.collectives[2][v].peers = peers;
    fw.op = fw_op;
    fw.bytes = fw_bytes;
    if (ctx_.derived.training) {
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
  // parallelism.recompute_modules "layernorm": Megatron-LM's
  // transformer_layer.py checkpoints input_layernorm and pre_mlp_layernorm
  // with CheckpointWithoutOutput (recompute_input_layernorm,
  // recompute_pre_mlp_layernorm): the norm's output is freed once its
  // consumers ran and computed again from the kept input in the backward.
  const bool norm_again = ctx_.Recomputes(RecomputeModule::kLayerNorm);
  const int32_t norm =
      AddLayerNorm(Name(prefix, "_LayerNorm"), ResidualActivation(),
                   kReusesActivation.WithRecompute(full || norm_again)
                       .WithOutputStored(!norm_again))
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

}  // namespace lower_internal
}  // namespace blueprint
