// A block's MLP: dense (plain or gated), or mixture of experts: the router,
// the routed experts behind the expert exchange and the token permutations
// around it, and the shared experts.
#include <cmath>
#include <utility>

#include "absl/strings/string_view.h"
#include "core/taskir/lower_builder.h"

namespace blueprint {
namespace lower_internal {

void BlockBuilder::BuildMlps(int32_t input) {
  const double share = ctx_.share;
  if (!ctx_.model.moe.has_value() || ctx_.moe_share == 0) {
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

int32_t BlockBuilder::BuildMlp(int32_t input) {
  const BlockContext& c = ctx_;
  const bool full = c.derived.recompute == RecomputePolicy::kFull;
  const bool ag = full || c.derived.all_gather_redo;
  // parallelism.recompute_modules "mlp": Megatron-LM's transformer_layer.py
  // (recompute_mlp, dense layers only) runs the MLP submodule under
  // tensor_parallel.checkpoint: only its input is kept; its linears, its
  // activation and their collectives run again in the backward pass.
  const bool module = c.Recomputes(RecomputeModule::kMlp);
  const bool again = full || module;
  const int64_t bs = c.batch_seq;
  const double mlp_gemm = 2.0 * FullBatchSeq() * c.h() * c.ff();
  // A gated MLP's first linear computes the gate and the up projection.
  const int64_t fc1_width = c.gated() ? 2 * c.ff() : c.ff();
  const double fc1_gemm = c.gated() ? 2 * mlp_gemm : mlp_gemm;
  Sources mlp_sources = {"spec:model.hidden", "spec:model.feedforward",
                         "spec:parallelism.tensor.degree",
                         "spec:batch.microbatch_size", "spec:model.seq_size"};
  if (c.bias) mlp_sources.push_back("spec:model.linear_bias");
  Sources fc1_sources = mlp_sources;
  if (c.gated()) fc1_sources.push_back("spec:model.mlp");
  const auto [fork, norm] = AddBranchStart("MlpBlock", full, input);
  int32_t fc1 = -1;
  if (c.tensor.overlap == TensorOverlap::kNone) {
    const int32_t f = AddTensorComm("MlpBlock_F", false,
                                    TaskFlags().WithRecommunicate(ag || module))
                          .id;
    Reads(f, {norm});
    // The module's one kept input: f's sequence-parallel shard, else the
    // first linear's input.
    const bool kept = !ag && !(module && c.derived.sequence_parallel);
    fc1 = AddLinear("MlpBlock_Mlp1", bs, c.h(), fc1_width / c.t(), fc1_gemm,
                    TaskFlags().WithRecompute(again).WithActivationStored(kept),
                    fc1_sources)
              .id;
    Reads(fc1, {f});
  } else {
    fc1 = AddOverlappedLinear(
              "MlpBlock_Mlp1_AG", bs, c.h(), fc1_width, false, fc1_gemm,
              TaskFlags().WithRecompute(again).WithRecommunicate(ag || module),
              fc1_sources)
              .id;
    Reads(fc1, {norm});
  }
  const int32_t activation = AddMlpActivation(
      "MlpBlock", c.ff() * bs / c.t(),
      TaskFlags().WithRecompute(again).WithActivationStored(!module));
  Reads(activation, {fc1});
  int32_t output = -1;
  if (c.tensor.overlap == TensorOverlap::kNone) {
    const int32_t fc2 =
        AddLinear("MlpBlock_Mlp2", bs, c.ff() / c.t(), c.h(), mlp_gemm,
                  TaskFlags().WithRecompute(again).WithActivationStored(!module),
                  mlp_sources)
            .id;
    Reads(fc2, {activation});
    output =
        AddTensorComm(
            "MlpBlock_G", true,
            TaskFlags().WithRecommunicate(again).WithActivationStored(false))
            .id;
    Reads(output, {fc2});
  } else {
    output = AddOverlappedLinear("MlpBlock_Mlp2_RS", bs, c.ff(), c.h(), true,
                                 mlp_gemm,
                                 TaskFlags()
                                     .WithRecompute(again)
                                     .WithRecommunicate(again)
                                     .WithActivationStored(!module),
                                 mlp_sources)
                 .id;
    Reads(output, {activation});
  }
  return AddBranchEnd("MlpBlock", full, output, fork);
}

int32_t BlockBuilder::AddMlpActivation(absl::string_view prefix,
                                       int64_t elements, TaskFlags flags) {
  return ctx_.gated() ? AddGatedActivation(Name(prefix, "_GatedActivation"),
                                           elements, flags)
                            .id
                      : AddGeLU(Name(prefix, "_GeLU"), elements, flags).id;
}

int32_t BlockBuilder::BuildMoe(int32_t input) {
  const BlockContext& c = ctx_;
  const MixtureOfExperts& moe = *c.model.moe;
  const bool full = c.derived.recompute == RecomputePolicy::kFull;
  const bool ag = full || c.derived.all_gather_redo;
  // parallelism.recompute_modules "moe": Megatron-LM's moe/moe_layer.py
  // (moe_layer_recompute) runs the whole MoE layer (shared experts, router,
  // dispatch, experts, combine) under tensor_parallel.checkpoint: only its
  // input is kept (the router's). "shared_experts": moe_layer.py
  // shared_experts_compute checkpoints the shared experts alone; their
  // input is the router's too, so they keep nothing.
  const bool layer = c.Recomputes(RecomputeModule::kMoe);
  const bool shared_module =
      layer || c.Recomputes(RecomputeModule::kSharedExperts);
  const bool shared_again = full || shared_module;
  const int64_t bs = c.batch_seq;
  const Sources sources = MoeSources();
  const auto [fork, norm] = AddBranchStart("MoeBlock", full, input);
  // The router scores every local token against every expert (replicated
  // over the TP ranks, as its weights are).
  ctx_.moe_part = MoePart::kRouter;
  const double router_local = 2.0 * bs * c.h() * moe.experts;
  const int32_t router =
      AddLinear("MoeBlock_Router", bs, c.h(), moe.experts,
                router_local * static_cast<double>(c.t()) * c.cp(),
                kReusesActivation.WithRecompute(full || layer), sources)
          .id;
  Reads(router, {norm});
  const int32_t routing =
      c.router_kernels ? AddRouterKernels(router, full) : router;
  const int32_t first = static_cast<int32_t>(used_);
  const int32_t combine = BuildRoutedExperts(routing, norm);
  if (record_ != nullptr) {
    record_->sections.push_back({RelowerSections::Kind::kRoutedExperts,
                                 first,
                                 static_cast<int32_t>(used_),
                                 {routing, norm},
                                 ctx_.placement,
                                 ctx_.share});
  }
  int32_t output = combine;
  if (moe.shared_ffn > 0) {
    // Shared experts: a tensor-parallel MLP every token runs.
    ctx_.moe_part = MoePart::kSharedExperts;
    const double shared_gemm = 2.0 * FullBatchSeq() * c.h() * moe.shared_ffn;
    const int64_t fc1_width = c.gated() ? 2 * moe.shared_ffn : moe.shared_ffn;
    const TaskFlags shared_flags = TaskFlags()
                                       .WithRecompute(shared_again)
                                       .WithActivationStored(!shared_module);
    const int32_t f =
        AddTensorComm("MoeBlock_Shared_F", false,
                      TaskFlags()
                          .WithRecommunicate(ag || shared_module)
                          .WithActivationStored(!shared_module))
            .id;
    Reads(f, {norm});
    const int32_t fc1 =
        AddLinear("MoeBlock_Shared_Mlp1", bs, c.h(), fc1_width / c.t(),
                  c.gated() ? 2 * shared_gemm : shared_gemm,
                  shared_flags.WithActivationStored(!ag && !shared_module),
                  sources)
            .id;
    Reads(fc1, {f});
    const int32_t shared_act = AddMlpActivation(
        "MoeBlock_Shared", moe.shared_ffn * bs / c.t(), shared_flags);
    Reads(shared_act, {fc1});
    const int32_t fc2 = AddLinear("MoeBlock_Shared_Mlp2", bs,
                                  moe.shared_ffn / c.t(), c.h(), shared_gemm,
                                  shared_flags, sources)
                            .id;
    Reads(fc2, {shared_act});
    if (c.shared_covers_exchange && c.ep() > 1) {
      // Megatron-LM's --moe-shared-expert-overlap (moe/shared_experts.py):
      // the shared experts' first linear runs while the dispatch is in
      // flight, their second while the combine is.
      CoverExchange(combine, fc2);
      CoverExchange(ExchangeBefore(combine), fc1);
    }
    output = AddTensorComm("MoeBlock_Shared_G", true,
                           TaskFlags()
                               .WithRecommunicate(shared_again)
                               .WithActivationStored(false))
                 .id;
    Reads(output, {fc2, combine});
  }
  ctx_.moe_part = MoePart::kNone;
  return AddBranchEnd("MoeBlock", full, output, fork);
}

int32_t BlockBuilder::BuildRoutedExperts(int32_t router, int32_t norm) {
  const BlockContext& c = ctx_;
  const MixtureOfExperts& moe = *c.model.moe;
  const bool full = c.derived.recompute == RecomputePolicy::kFull;
  const bool ag = full || c.derived.all_gather_redo;
  // parallelism.recompute_modules "moe" (BuildMoe): the tasks run again and
  // keep nothing. The expert exchanges' re-communication is not priced, as
  // under full recompute (README, what is left).
  const bool layer = c.Recomputes(RecomputeModule::kMoe);
  const TaskFlags again =
      TaskFlags().WithRecompute(full || layer).WithActivationStored(!layer);
  // "moe_act": moe/experts.py (activation_recompute) runs the experts'
  // activation under CheckpointWithoutOutput and frees its output once the
  // second linear ran (discard_output_and_register_recompute): that input
  // of the second linear is not kept (under "moe" it is not kept anyway).
  const bool act_module = c.Recomputes(RecomputeModule::kMoeAct);
  const int64_t bs = c.batch_seq;
  const Sources sources = MoeSources();
  // Each rank sends its share of the tokens (b * s/cp / t distinct ones)
  // topk times to the experts' ranks; (ep - 1) / ep of it leaves the rank.
  const double sent = static_cast<double>(bs) / c.t() * moe.topk * c.h();
  const double leaving = sent * c.bpe() * (c.ep() - 1) / c.ep();
  // Tokens of this rank's experts: the microbatch's routed tokens over its
  // t * cp ranks, times the capacity factor (the busiest expert) and etp
  // (the etp ranks of an expert share its tokens).
  const double tokens = static_cast<double>(bs) * moe.topk *
                        moe.capacity_factor * c.etp() / c.t();
  const double local_experts = static_cast<double>(moe.experts) / c.ep();
  const Permutations permutations = PermutationRows(tokens, local_experts);
  // The allgather dispatcher (token_dispatcher.py
  // MoEAllGatherTokenDispatcher): token_dispatch all-gathers every rank's
  // b * s/cp / t tokens over the etp x ep ranks (tp_ep_group), each rank
  // keeping the rows of its experts; token_combine reduce-scatters the
  // outputs back. Each collective moves the gathered tensor, the backward
  // pass the same with the operations swapped.
  const int64_t exchange_peers =
      c.all_gather_dispatch ? c.etp() * c.ep() : c.ep();
  const double gathered = static_cast<double>(bs) / c.t() *
                          static_cast<double>(exchange_peers) * c.h();
  const double gathered_bytes = gathered * c.bpe();
  const CollectiveOp dispatch_op =
      c.all_gather_dispatch ? CollectiveOp::kAllGather : CollectiveOp::kAllToAll;
  const CollectiveOp combine_op = c.all_gather_dispatch
                                      ? CollectiveOp::kReduceScatter
                                      : CollectiveOp::kAllToAll;
  const double exchanged = c.all_gather_dispatch ? gathered : sent;
  const double exchanged_bytes = c.all_gather_dispatch ? gathered_bytes : leaving;
  // Each task's part of the block (Task::moe_part); the caller's again at
  // the end (a relowering rebuilds these tasks alone).
  const MoePart caller_part = ctx_.moe_part;
  int32_t dispatch = router;
  if (c.permutation == MoePermutation::kAllToAll) {
    ctx_.moe_part = MoePart::kPermutation;
    dispatch =
        AddPermutation("MoeBlock_PermuteTokens", permutations.routed,
                       permutations.routed, again)
            .id;
    Reads(dispatch, {router, norm});
  }
  if (exchange_peers > 1) {
    const int32_t permuted = dispatch;
    ctx_.moe_part = MoePart::kDispatch;
    dispatch = AddExchange("MoeBlock_Dispatch", MeshAxis::kExpert,
                           exchange_peers, exchanged, dispatch_op,
                           exchanged_bytes, combine_op, exchanged_bytes, -1,
                           sources)
                   .id;
    Reads(dispatch, {permuted, norm});
  }
  if (c.permutation != MoePermutation::kNone) {
    ctx_.moe_part = MoePart::kPermutation;
    const int32_t sorted =
        AddPermutation("MoeBlock_PermuteExperts", permutations.received,
                       permutations.received, again)
            .id;
    Reads(sorted, {dispatch});
    dispatch = sorted;
  }
  const int64_t up_width = (c.gated() ? 2 : 1) * moe.ffn / c.etp();
  ctx_.moe_part = MoePart::kExperts;
  const int32_t up =
      AddExpertLinear("MoeBlock_Experts_Up", tokens, c.h(), up_width,
                      local_experts, sources,
                      again.WithActivationStored(!ag && !layer))
          .id;
  Reads(up, {dispatch, norm});
  // `tokens` is an average (fractional when the routed tokens do not split
  // evenly); an activation holds whole elements, so it rounds up.
  const int64_t act_elements = static_cast<int64_t>(
      std::ceil(tokens * static_cast<double>(moe.ffn / c.etp())));
  const int32_t act = AddMlpActivation(
      "MoeBlock_Experts", act_elements,
      again.WithRecompute(full || layer || act_module)
          .WithOutputStored(layer || !act_module));
  Reads(act, {up});
  const int32_t down =
      AddExpertLinear("MoeBlock_Experts_Down", tokens, moe.ffn / c.etp(), c.h(),
                      local_experts, sources, again)
          .id;
  Reads(down, {act});
  int32_t combine = down;
  if (c.permutation != MoePermutation::kNone) {
    ctx_.moe_part = MoePart::kPermutation;
    combine =
        AddPermutation("MoeBlock_UnpermuteExperts", permutations.received,
                       permutations.restored, again)
            .id;
    Reads(combine, {down});
  }
  if (exchange_peers > 1) {
    const int32_t unsorted = combine;
    ctx_.moe_part = MoePart::kCombine;
    combine = AddExchange("MoeBlock_Combine", MeshAxis::kExpert,
                          exchange_peers, exchanged, combine_op,
                          exchanged_bytes, dispatch_op, exchanged_bytes, -1,
                          sources)
                  .id;
    Reads(combine, {unsorted});
  }
  if (c.permutation == MoePermutation::kAllToAll) {
    const int32_t exchanged = combine;
    ctx_.moe_part = MoePart::kPermutation;
    combine =
        AddPermutation("MoeBlock_UnpermuteTokens", permutations.routed,
                       permutations.local, again)
            .id;
    Reads(combine, {exchanged});
  }
  ctx_.moe_part = caller_part;
  return combine;
}

int32_t BlockBuilder::AddRouterKernels(int32_t router, bool full) {
  const BlockContext& c = ctx_;
  const MixtureOfExperts& moe = *c.model.moe;
  // The rank's tokens, as the permutations count them (PermutationRows);
  // whole rows.
  const int64_t tokens = static_cast<int64_t>(
      std::ceil(static_cast<double>(c.batch_seq) / c.t()));
  // The gating GEMM writes its logits in the activations' datatype
  // (router.py Router.gating; --moe-router-dtype fp32 is not modelled).
  const RouterBytes per_token = RouterKernelBytesPerToken(
      moe.experts, moe.topk, c.bpe(), moe.aux_loss, moe.router_fusion);
  RawLayer r;  // no FLOPs, no stored activation of its own
  Sources sources = MoeSources();
  sources.push_back("spec:model.moe.router_fusion");
  sources.push_back("spec:model.moe.aux_loss");
  Task& task =
      Add("MoeBlock_RouterKernels",
          RouterKernelsTask{tokens, moe.experts, moe.topk, moe.router_fusion,
                            moe.aux_loss},
          r, TaskFlags().WithRecompute(full).WithActivationStored(false),
          std::move(sources));
  const double rows = static_cast<double>(tokens);
  task.work[static_cast<int>(Stage::kForward)].bytes = rows * per_token.forward;
  task.work[static_cast<int>(Stage::kActivationGrad)].bytes =
      rows * per_token.backward;
  Reads(task.id, {router});
  return task.id;
}

RouterBytes RouterKernelBytesPerToken(int64_t experts, int64_t topk,
                                      double logit_bytes, bool aux_loss,
                                      bool fused) {
  const double e = static_cast<double>(experts);
  const double k = static_cast<double>(topk);
  const double l = logit_bytes;
  constexpr double kFp32 = 4, kIndex = 8, kInt32 = 4, kBool = 1;
  // The dispatcher's gather of the routed probabilities, fused or not
  // (moe_utils.py permute, the argsort path: routing_map.bool().T
  // .contiguous() E read and written, its argsort E read and E int64
  // indices written, probs.T.contiguous() E read and written, the k
  // probabilities gathered; backward: the E-wide gradient zeroed, k
  // scattered, transposed back).
  RouterBytes out;
  out.forward = 2 * kBool * e + e + kIndex * e + 2 * l * e + k * (l + kIndex);
  out.backward = 3 * l * e + k * (l + kIndex);
  if (fused) {
    // transformer_engine/pytorch/router.py FusedTopkScoreFunction: the
    // logits read once, the probabilities (logits' datatype), the bool
    // routing map and the fp32 intermediate written; backward: the
    // probabilities' gradient, the intermediate and the map read, the
    // logits' gradient written.
    out.forward += l * e + l * e + kBool * e + kFp32 * e;
    out.backward += l * e + kFp32 * e + kBool * e + l * e;
    if (aux_loss) {
      // FusedComputeScoresForMoEAuxLoss: the logits read, the fp32 scores,
      // the map and the intermediate written; FusedAuxLoss reads the
      // scores. Backward: the scores' gradient written and read, the
      // intermediate and map read, the logits' gradient written and added
      // to the routing's (two read, one written).
      out.forward += l * e + 2 * kFp32 * e + kBool * e + kFp32 * e;
      out.backward +=
          2 * kFp32 * e + kFp32 * e + kBool * e + l * e + 3 * l * e;
    }
    return out;
  }
  // moe_utils.py topk_routing_with_score_function, softmax after the top-k
  // (Megatron-LM's default score function): torch.topk over the logits (E
  // read; k values and int64 indices written), the fp32 softmax over the
  // k (read, written) and its cast back (read, written); the routing
  // probabilities zeros_like(logits).scatter (E written, E read and
  // written by the out-of-place scatter, the k read); the routing map
  // zeros_like(logits) (E written), .int() (E read, E int32 written),
  // scatter (E int32 read and written, the k indices read), .bool() (E
  // int32 read, E written). Backward: the k gradients through the casts
  // and the softmax, torch.topk's backward (the E-wide gradient zeroed, the
  // k scattered).
  out.forward += l * e + k * (l + kIndex) + k * (l + kFp32) +
                 k * (kFp32 + l) + 3 * l * e + k * (l + kIndex) + l * e +
                 l * e + kInt32 * e + 2 * kInt32 * e + k * kIndex +
                 kInt32 * e + kBool * e;
  out.backward += k * (l + kIndex + l) + k * (l + kFp32) +
                  3 * k * kFp32 + l * e + k * (l + kIndex + l);
  if (aux_loss) {
    // compute_routing_scores_for_aux_loss: softmax(logits, fp32) (E read,
    // E fp32 written), torch.topk (E fp32 read, k written), the map as
    // above (2E in the logits' datatype, 17E bytes); the tokens per
    // expert (routing_map.sum(0): E read) and switch_load_balancing_
    // loss_func's probs.sum(0) (E fp32 read). Backward: the softmax's
    // gradient (its E fp32 output read, E written in the logits'
    // datatype) added to the routing's (two read, one written).
    out.forward += l * e + kFp32 * e + kFp32 * e + k * (kFp32 + kIndex) +
                   2 * l * e + (kInt32 + 2 * kInt32 + kInt32 + kBool) * e +
                   kBool * e + kFp32 * e;
    out.backward += kFp32 * e + l * e + 3 * l * e;
  }
  return out;
}

BlockBuilder::Permutations BlockBuilder::PermutationRows(
    double received, double local_experts) const {
  const BlockContext& c = ctx_;
  // Rows are whole: an average share rounds up.
  const auto rows = [](double x) { return static_cast<int64_t>(std::ceil(x)); };
  const double local = static_cast<double>(c.batch_seq) / c.t();
  Permutations out;
  switch (c.permutation) {
    case MoePermutation::kNone:
      break;
    case MoePermutation::kAllToAll:
      // token_dispatcher.py MoEAlltoAllTokenDispatcher: dispatch_preprocess
      // and combine_postprocess (permute, unpermute) over the rank's
      // tokens; sort_chunks_by_idxs only with num_local_experts > 1.
      out.local = rows(local);
      out.routed = rows(local * c.model.moe->topk);
      out.received = local_experts > 1 ? rows(received) : 0;
      break;
    case MoePermutation::kFlex:
      // MoEFlexTokenDispatcher with DeepEP (_DeepepManager):
      // dispatch_postprocess and combine_preprocess permute the received
      // rows by local expert and back; the tokens leave and return
      // unpermuted (no token-side tasks).
      out.received = rows(received);
      break;
    case MoePermutation::kAllGather:
      // MoEAllGatherTokenDispatcher: dispatch_postprocess permutes the
      // gathered rows of the local experts into their order
      // (permute(hidden_states, local_map)), combine_preprocess unpermutes
      // them into the gathered shape (unpermute(..., restore_shape=
      // hidden_shape_before_permute)), every gathered row written.
      out.received = rows(received);
      out.restored = rows(local * static_cast<double>(c.etp() * c.ep()));
      return out;
  }
  out.restored = out.received;
  return out;
}

Task& BlockBuilder::AddPermutation(absl::string_view name, int64_t read,
                                   int64_t written, TaskFlags flags) {
  RawLayer r;
  r.inputs = static_cast<double>(read) * ctx_.h();
  r.outputs = static_cast<double>(written) * ctx_.h();
  // The permuted rows are the next task's input, kept there; the index
  // maps are a few bytes per row.
  Task& task = Add(name, PermutationTask{read, written, ctx_.h()}, r, flags,
                   MoeSources());
  BackwardBytesAsForward(task);
  return task;
}

Task& BlockBuilder::AddExpertLinear(absl::string_view name, double tokens,
                                    int64_t n, int64_t k, double local_experts,
                                    Sources sources, TaskFlags flags) {
  RawLayer r = GemmLayer(tokens, n, k);
  // Each of the rank's experts has its own n x k weights.
  r.weight_space = r.weight_grads = local_experts * n * k;
  r.optim_space = 2.0 * r.weight_space;
  // The experts' state shards over the expert data-parallel ranks.
  const double dense_shard = ctx_.shard;
  ctx_.shard = ctx_.expert_shard;
  Task& task = Add(name, LinearTask{static_cast<int64_t>(tokens), n, k}, r,
                   flags, std::move(sources));
  ctx_.shard = dense_shard;
  task.expert_state = true;
  // Every rank of the microbatch's t * cp does the same share.
  task.unsharded_gemm_flops = r.fw_flops * static_cast<double>(ctx_.t()) *
                              static_cast<double>(ctx_.cp());
  return task;
}

}  // namespace lower_internal
}  // namespace blueprint
