// A block's attention: multi-head, grouped-query, multi-query and latent
// (multi-latent) projections, the context-parallel K/V exchange, the core
// (scores, softmax, dropout, context; one fused kernel with flash attention)
// and the output projection.
#include <tuple>
#include <utility>

#include "absl/strings/string_view.h"
#include "core/taskir/lower_builder.h"

namespace blueprint {
namespace lower_internal {

Sources BlockBuilder::ProjectionSources() const {
  Sources sources = {
      "spec:model.hidden",          "spec:model.attn_heads",
      "spec:model.attn_size",       "spec:parallelism.tensor.degree",
      "spec:batch.microbatch_size", "spec:model.seq_size"};
  if (ctx_.g() != ctx_.a()) sources.push_back("spec:model.kv_heads");
  if (ctx_.bias) sources.push_back("spec:model.linear_bias");
  return sources;
}

BlockBuilder::Projections BlockBuilder::BuildProjections(int32_t norm,
                                                         bool full, bool ag) {
  const BlockContext& c = ctx_;
  const int64_t bs = c.batch_seq;
  // Unsharded GEMM FLOPs from the model dimensions (work conservation), for
  // the whole microbatch (all cp ranks' sequence chunks).
  const double bsd = FullBatchSeq();
  const double qkv_one = QueryGemm();
  // Grouped-query attention: K and V have kv_heads heads, split t ways.
  const bool grouped = c.g() != c.a();
  const double kv_one =
      grouped ? 2 * bsd * c.h() * (static_cast<double>(c.g()) * c.dh())
              : qkv_one;
  const Sources sources = ProjectionSources();
  Projections out;
  // Latent attention is never overlapped (the checker's rule).
  if (c.latent() || c.tensor.overlap == TensorOverlap::kNone) {
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
    if (c.latent()) {
      std::tie(out.query, out.key) = BuildLatentProjections(heads_fork, full);
      out.value = out.key;
      return out;
    }
    out.query =
        AddLinear("AttnBlock_Query", bs, c.h(), c.a() * c.dh() / c.t(), qkv_one,
                  kReusesActivation.WithRecompute(full), sources)
            .id;
    // Multi-query K and V are one head, replicated on every TP rank.
    const int64_t kv = c.multiquery() ? c.dh() : c.g() * c.dh() / c.t();
    const double kv_unsharded =
        c.multiquery() ? 2 * bsd * c.h() * c.dh() * c.t() : kv_one;
    out.key = AddLinear("AttnBlock_Key", bs, c.h(), kv, kv_unsharded,
                        kReusesActivation.WithRecompute(full), sources)
                  .id;
    out.value = AddLinear("AttnBlock_Value", bs, c.h(), kv, kv_unsharded,
                          kReusesActivation.WithRecompute(full), sources)
                    .id;
    Reads(out.query, {heads_fork});
    Reads(out.key, {heads_fork});
    Reads(out.value, {heads_fork});
  } else if (!c.multiquery()) {
    out.query = out.key = out.value =
        AddOverlappedLinear(
            "AttnBlock_QKV_AG", bs, c.h(), c.a() * c.dh() + 2 * c.g() * c.dh(),
            false, grouped ? qkv_one + 2 * kv_one : 3 * qkv_one,
            TaskFlags().WithRecompute(full).WithRecommunicate(ag), sources)
            .id;
    Reads(out.query, {norm});
  } else {
    out.query =
        AddOverlappedLinear(
            "AttnBlock_Query_AG", bs, c.h(), c.a() * c.dh(), false, qkv_one,
            TaskFlags().WithRecompute(full).WithRecommunicate(ag), sources)
            .id;
    Reads(out.query, {norm});
    const int32_t kv_fork =
        AddFork("AttnBlock_KV_Fork", c.activation, 2,
                TaskFlags().WithRecompute(ag).WithActivationStored(!ag),
                ResidualSources())
            .id;
    Reads(kv_fork, {out.query});
    for (int32_t* id : {&out.key, &out.value}) {
      *id = AddLinear(id == &out.key ? "AttnBlock_Key" : "AttnBlock_Value", bs,
                      c.h(), c.dh(), 2 * bsd * c.h() * c.dh() * c.t(),
                      kReusesActivation.WithRecompute(full), sources)
                .id;
      Reads(*id, {kv_fork});
    }
  }
  return out;
}

int32_t BlockBuilder::BuildAttention(int32_t input) {
  const BlockContext& c = ctx_;
  const bool full = c.derived.recompute == RecomputePolicy::kFull;
  const bool attn =
      full || c.derived.recompute == RecomputePolicy::kAttentionOnly;
  const bool ag = attn || c.derived.all_gather_redo;
  const int64_t bs = c.batch_seq;
  // Latent attention's values have v_dim per head, its scores qk + rope.
  const int64_t value_size =
      c.latent() ? c.model.latent_attention->v_head_dim : c.dh();
  // The unsharded GEMM FLOPs of the whole microbatch (BuildProjections).
  const double bsd = FullBatchSeq();
  const double out_one =
      2 * bsd * c.h() * (static_cast<double>(c.a()) * value_size);
  const double attn_bmm = 2.0 * c.b() * c.a() * c.s() * c.dh() * c.s();
  const double value_bmm = 2.0 * c.b() * c.a() * c.s() * value_size * c.s();

  const auto [fork, norm] = AddBranchStart("AttnBlock", full, input);
  const Projections qkv = BuildProjections(norm, full, ag);
  const Sources attn_sources = {"spec:model.attn_heads",
                                "spec:model.attn_size",
                                "spec:model.seq_size",
                                "spec:batch.microbatch_size",
                                "spec:parallelism.tensor.degree",
                                "spec:parallelism.recompute"};
  const int32_t exchange = BuildContextExchange(qkv.key, qkv.value);
  // Each rank's s/cp queries meet all s keys (cp = 1: s x s).
  const int32_t scores =
      AddBatchMatMul("AttnBlock_Multihead_Key_Query", c.b() * c.a() / c.t(),
                     c.s_local, c.dh(), c.s(), attn_bmm,
                     TaskFlags().WithRecompute(attn).WithOutputStored(!attn),
                     attn_sources)
          .id;
  Reads(scores, {qkv.query, qkv.key});
  if (exchange >= 0) Reads(scores, {exchange});
  // The other cp ranks' keys and values pass through (ring) or are
  // gathered again (all-gather) in the backward pass: only the rank's own
  // s/cp rows are stored.
  const double batch_heads = static_cast<double>(c.b() * c.a() / c.t());
  if (c.cp() > 1) {
    TaskAt(scores).footprint.activation =
        c.bpe() * batch_heads * (2.0 * c.s_local * c.dh());
  }
  const int64_t score_elements = c.a() / c.t() * c.s_local * c.s() * c.b();
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
      AddBatchMatMul("AttnBlock_Multihead_Attn", c.b() * c.a() / c.t(),
                     c.s_local, c.s(), c.a() * value_size / c.a(), value_bmm,
                     TaskFlags().WithRecompute(
                         full || (attn && c.recompute_core_attention)),
                     attn_sources)
          .id;
  Reads(context, {dropout, qkv.value});
  if (c.cp() > 1) {
    TaskAt(context).footprint.activation =
        c.bpe() * batch_heads *
        (static_cast<double>(c.s_local) * c.s() +
         static_cast<double>(c.s_local) * value_size);
  }
  if (c.flash_attention) {
    FuseAttention(scores, softmax, dropout, context, value_size);
  }
  int32_t output = -1;
  if (c.tensor.overlap == TensorOverlap::kNone || c.latent()) {
    const int32_t projection =
        AddLinear("AttnBlock_MLP", bs, c.a() * value_size / c.t(), c.h(),
                  out_one, TaskFlags().WithRecompute(full), ProjectionSources())
            .id;
    Reads(projection, {context});
    output =
        AddTensorComm(
            "AttnBlock_G", true,
            TaskFlags().WithRecommunicate(full).WithActivationStored(false))
            .id;
    Reads(output, {projection});
  } else {
    output =
        AddOverlappedLinear(
            "AttnBlock_MLP_RS", bs, c.a() * c.dh(), c.h(), true, QueryGemm(),
            TaskFlags().WithRecompute(full).WithRecommunicate(full),
            ProjectionSources())
            .id;
    Reads(output, {context});
  }
  return AddBranchEnd("AttnBlock", full, output, fork);
}

std::pair<int32_t, int32_t> BlockBuilder::BuildLatentProjections(int32_t input,
                                                                 bool full) {
  const BlockContext& c = ctx_;
  const LatentAttention& mla = *c.model.latent_attention;
  const int64_t bs = c.batch_seq;
  const double bsd = FullBatchSeq();
  const int64_t qk = mla.qk_head_dim + mla.qk_rope_head_dim;
  const Sources sources = {
      "spec:model.hidden",           "spec:model.attn_heads",
      "spec:model.latent_attention", "spec:parallelism.tensor.degree",
      "spec:batch.microbatch_size",  "spec:model.seq_size"};
  const TaskFlags flags = kReusesActivation.WithRecompute(full);
  // parallelism.recompute_modules "mla_up_proj": Megatron-LM's
  // multi_latent_attention.py (recompute_up_proj) runs
  // qkv_up_proj_and_rope_apply (the query projection, up or direct, the
  // key/value up projection and RoPE) under CheckpointWithoutOutput and frees
  // the query, key and value once the core attention ran
  // (discard_output_and_register_recompute): they run again in the backward
  // pass, from the kept compressed inputs.
  const bool up_again = ctx_.Recomputes(RecomputeModule::kMlaUpProj);
  const TaskFlags up_flags =
      TaskFlags().WithRecompute(full || up_again).WithOutputStored(!up_again);
  // As Megatron-LM's accounting has it, every latent-attention matrix is
  // split t ways (the checker asks t to divide the ranks).
  int32_t query = -1;
  if (mla.q_lora_rank > 0) {
    const int32_t down =
        AddLinear("AttnBlock_Query_Down", bs, c.h(), mla.q_lora_rank / c.t(),
                  2 * bsd * c.h() * mla.q_lora_rank, flags, sources)
            .id;
    Reads(down, {input});
    query =
        AddLinear("AttnBlock_Query_Up", bs, mla.q_lora_rank, c.a() * qk / c.t(),
                  2 * bsd * mla.q_lora_rank * (static_cast<double>(c.a()) * qk),
                  up_flags, sources)
            .id;
    Reads(query, {down});
  } else {
    query = AddLinear("AttnBlock_Query", bs, c.h(), c.a() * qk / c.t(),
                      2 * bsd * c.h() * (static_cast<double>(c.a()) * qk),
                      kReusesActivation.WithRecompute(full || up_again)
                          .WithOutputStored(!up_again),
                      sources)
                .id;
    Reads(query, {input});
  }
  const int32_t kv_down =
      AddLinear(
          "AttnBlock_KV_Down", bs, c.h(),
          (mla.kv_lora_rank + mla.qk_rope_head_dim) / c.t(),
          2 * bsd * c.h() *
              static_cast<double>(mla.kv_lora_rank + mla.qk_rope_head_dim),
          flags, sources)
          .id;
  Reads(kv_down, {input});
  const int32_t kv_up =
      AddLinear(
          "AttnBlock_KV_Up", bs, mla.kv_lora_rank,
          c.a() * (mla.qk_head_dim + mla.v_head_dim) / c.t(),
          2 * bsd * mla.kv_lora_rank *
              (static_cast<double>(c.a()) * (mla.qk_head_dim + mla.v_head_dim)),
          up_flags, sources)
          .id;
  Reads(kv_up, {kv_down});
  return {query, kv_up};
}

int32_t BlockBuilder::BuildContextExchange(int32_t key, int32_t value) {
  const BlockContext& c = ctx_;
  if (c.cp() <= 1) return -1;
  // The rank's keys and values: b * s/cp rows of its local heads.
  double kv_width = 2.0 * (c.multiquery() ? c.dh() : c.g() * c.dh() / c.t());
  if (c.latent()) {
    const LatentAttention& mla = *c.model.latent_attention;
    kv_width = static_cast<double>(c.a()) / c.t() *
               (mla.qk_head_dim + mla.qk_rope_head_dim + mla.v_head_dim);
  }
  const double elements = static_cast<double>(c.batch_seq) * kv_width;
  const double block_bytes = elements * c.bpe();
  const double others = static_cast<double>(c.cp() - 1);
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
      AddExchange(
          ring ? "AttnBlock_KV_Ring" : "AttnBlock_KV_AllGather",
          MeshAxis::kContext, c.cp(), elements,
          ring ? CollectiveOp::kPointToPoint : CollectiveOp::kAllGather,
          ring ? others * block_bytes : c.cp() * block_bytes,
          ring ? CollectiveOp::kPointToPoint : CollectiveOp::kReduceScatter,
          ring ? others * block_bytes : c.cp() * block_bytes,
          ring ? static_cast<int32_t>(used_) + 1 : -1,
          {"spec:parallelism.context.degree",
           "spec:parallelism.context.exchange", "spec:model.seq_size",
           "spec:batch.microbatch_size", "spec:model.attn_size"})
          .id;
  Reads(exchange, {key, value});
  return exchange;
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
  const double bpe = c.bpe();
  const double f = c.causal_factor;
  const double rows = static_cast<double>(c.b() * c.a() / c.t()) * c.s_local;
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

}  // namespace lower_internal
}  // namespace blueprint
