#include "core/spec/accounting.h"

#include "core/spec/derive.h"

namespace blueprint {
namespace {

// The MLP's matrices: hidden x ff, twice, and a third for a gated MLP.
double MlpMatrices(const TransformerModel& m) {
  switch (m.mlp) {
    case MlpType::kPlain:
      return 2;
    case MlpType::kGated:
      return 3;
  }
  return 2;
}

double NormSize(const TransformerModel& m) {
  switch (m.norm) {
    case NormType::kLayerNorm:
      return 2;
    case NormType::kRmsNorm:
      return 1;
  }
  return 2;
}

// The attention's weights of one block: Q, K, V and O, or latent
// attention's projections with its q/kv norms (`norm` weights per latent
// unit: norm_size for the parameters, 1 in Megatron-LM's FLOPs).
double AttentionWeights(const AccountedModel& m, double norm) {
  const double h = m.hidden;
  if (!m.latent) return 2 * h * (m.query + m.key_value);
  const double qk = m.qk_head_dim + m.qk_rope_head_dim;
  const double q = m.q_lora_rank > 0
                       ? m.q_lora_rank * (h + m.heads * qk + norm)
                       : h * m.heads * qk;
  return q +
         m.kv_lora_rank *
             (h + m.heads * (m.qk_head_dim + m.v_head_dim) + norm) +
         h * m.qk_rope_head_dim + m.heads * m.v_head_dim * h;
}

// The weights of one block's MLP: dense, or a MoE layer's shared and routed
// experts (`routed` of them) and its router.
double DenseMlpWeights(const AccountedModel& m) {
  return m.mlp_matrices * m.hidden * m.feedforward;
}
double MoeMlpWeights(const AccountedModel& m, double routed) {
  return m.mlp_matrices * m.hidden * (m.shared_ffn + m.expert_ffn * routed) +
         m.hidden * m.experts + (m.linear_bias ? m.experts : 0);
}

}  // namespace

AccountedModel AccountedModelOf(const TransformerModel& m) {
  AccountedModel a;
  a.hidden = static_cast<double>(m.hidden);
  a.feedforward = static_cast<double>(m.feedforward);
  a.num_blocks = static_cast<double>(m.num_blocks);
  a.seq_size = static_cast<double>(m.seq_size);
  a.query = static_cast<double>(m.attn_heads) * m.attn_size;
  a.key_value = static_cast<double>(m.kv_heads) * m.attn_size;
  a.mlp_matrices = MlpMatrices(m);
  a.norm_size = NormSize(m);
  a.norm_weights = a.norm_size * a.hidden;
  a.tied = m.vocabulary.tied;
  a.linear_bias = m.linear_bias;
  a.dense_blocks = a.num_blocks;
  if (m.moe.has_value()) {
    a.experts = static_cast<double>(m.moe->experts);
    a.topk = static_cast<double>(m.moe->topk);
    a.expert_ffn = static_cast<double>(m.moe->ffn);
    a.shared_ffn = static_cast<double>(m.moe->shared_ffn);
    a.moe_blocks = static_cast<double>(MoeBlocks(m));
    a.dense_blocks = a.num_blocks - a.moe_blocks;
  }
  a.mtp_layers = static_cast<double>(m.mtp_layers);
  const bool last_is_moe = IsMoeBlock(m, m.num_blocks - 1);
  a.mtp_moe = last_is_moe ? a.mtp_layers : 0;
  a.mtp_dense = last_is_moe ? 0 : a.mtp_layers;
  if (m.latent_attention.has_value()) {
    const LatentAttention& l = *m.latent_attention;
    a.latent = true;
    a.heads = static_cast<double>(m.attn_heads);
    a.q_lora_rank = static_cast<double>(l.q_lora_rank);
    a.kv_lora_rank = static_cast<double>(l.kv_lora_rank);
    a.qk_head_dim = static_cast<double>(l.qk_head_dim);
    a.qk_rope_head_dim = static_cast<double>(l.qk_rope_head_dim);
    a.v_head_dim = static_cast<double>(l.v_head_dim);
  }
  return a;
}

ParameterCounts CountParameters(const AccountedModel& m,
                                int64_t padded_vocabulary) {
  const double h = m.hidden;
  // A block: its attention, its MLP (dense, or a MoE layer with all or the
  // topk routed experts) and its two norms.
  const double common = AttentionWeights(m, m.norm_size) + 2 * m.norm_weights;
  const double dense = common + DenseMlpWeights(m);
  const double moe = common + MoeMlpWeights(m, m.experts);
  const double moe_active = common + MoeMlpWeights(m, m.topk);
  const double mtp = m.mtp_dense * dense + m.mtp_moe * moe;
  double total = m.dense_blocks * dense + m.moe_blocks * moe + mtp;
  double active = m.dense_blocks * dense + m.moe_blocks * moe_active + mtp;
  if (padded_vocabulary > 0) {
    const double embedding = h * static_cast<double>(padded_vocabulary);
    const double extra = m.norm_weights + (m.tied ? 1 : 2) * embedding;
    total += extra;
    active += extra;
  }
  return {total, active};
}

ParameterParts CountParameterParts(const AccountedModel& m,
                                   int64_t padded_vocabulary) {
  const double blocks = m.dense_blocks + m.mtp_dense + m.moe_blocks + m.mtp_moe;
  const double moe_blocks = m.moe_blocks + m.mtp_moe;
  ParameterParts parts;
  parts.attention =
      blocks * (AttentionWeights(m, m.norm_size) + 2 * m.norm_weights);
  parts.mlp = (m.dense_blocks + m.mtp_dense) * DenseMlpWeights(m) +
              moe_blocks * MoeMlpWeights(m, 0);
  parts.routed =
      moe_blocks * (MoeMlpWeights(m, m.experts) - MoeMlpWeights(m, 0));
  if (padded_vocabulary > 0) {
    parts.vocabulary = m.norm_weights + (m.tied ? 1 : 2) * m.hidden *
                                            static_cast<double>(
                                                padded_vocabulary);
  }
  return parts;
}

ForwardFlops ForwardFlopsPerToken(const AccountedModel& m,
                                  int64_t padded_vocabulary) {
  const double h = m.hidden;
  const double q = m.query;
  const double kv = m.key_value;
  ForwardFlops f;
  f.blocks = m.num_blocks + m.mtp_layers;
  // The projections, the MLPs (dense, shared and routed experts) and the
  // logits (once more per MTP block).
  const double projections =
      m.latent ? 2 * AttentionWeights(m, 1) : 2 * (h * (q + 2 * kv) + q * h);
  const double dense_mlp = 2 * m.mlp_matrices * h * m.feedforward;
  const double moe_mlp =
      2 * m.mlp_matrices * h * (m.expert_ffn * m.topk + m.shared_ffn);
  const double mlps = (m.dense_blocks + m.mtp_dense) * dense_mlp +
                      (m.moe_blocks + m.mtp_moe) * moe_mlp;
  const double mtp = 2 * m.mtp_layers * (3 * h + 2 * h * h);
  f.gemm = projections * f.blocks + mlps + mtp;
  f.logits = 2 * h * static_cast<double>(padded_vocabulary) *
             (m.mtp_layers + 1);
  // (2 q + 2 q) / 2 per token pair; latent attention: heads of qk + rope
  // for the scores, of v_head_dim for the values.
  f.attention =
      m.latent ? m.heads * (m.qk_head_dim + m.qk_rope_head_dim + m.v_head_dim)
               : 2 * q;
  return f;
}

double ModelFlopsPerIteration(const AccountedModel& m,
                              int64_t padded_vocabulary, int64_t global_batch,
                              bool training) {
  const double tokens = static_cast<double>(global_batch) * m.seq_size;
  const ForwardFlops f = ForwardFlopsPerToken(m, padded_vocabulary);
  // The same sums in the same order as before the parts were named, so
  // every figure stays bit-identical.
  const double forward = tokens * (f.gemm + f.logits) +
                         tokens * m.seq_size * f.attention * f.blocks;
  return training ? 3 * forward : forward;
}

}  // namespace blueprint
