#include "core/spec/accounting.h"

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

double NormWeights(const TransformerModel& m) {
  switch (m.norm) {
    case NormType::kLayerNorm:
      return 2 * static_cast<double>(m.hidden);
    case NormType::kRmsNorm:
      return static_cast<double>(m.hidden);
  }
  return 2 * static_cast<double>(m.hidden);
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
  a.norm_weights = NormWeights(m);
  a.tied = m.vocabulary.tied;
  return a;
}

ParameterCounts CountParameters(const AccountedModel& m,
                                int64_t padded_vocabulary) {
  const double h = m.hidden;
  // Q and O (attn_heads heads), K and V (kv_heads heads), the MLP's
  // matrices and the block's two norms.
  const double block = 2 * h * (m.query + m.key_value) +
                       m.mlp_matrices * h * m.feedforward + 2 * m.norm_weights;
  double total = m.num_blocks * block;
  if (padded_vocabulary > 0) {
    const double embedding = h * static_cast<double>(padded_vocabulary);
    total += m.norm_weights + (m.tied ? 1 : 2) * embedding;
  }
  return {total, total};
}

double ModelFlopsPerIteration(const AccountedModel& m,
                              int64_t padded_vocabulary, int64_t global_batch,
                              bool training) {
  const double h = m.hidden;
  const double q = m.query;
  const double kv = m.key_value;
  const double tokens = static_cast<double>(global_batch) * m.seq_size;
  // Forward FLOPs per token (2 per multiply-add): the projections, the MLP
  // and the logits; per token and position of its sequence, the causal half
  // of QK^T and of the scores times V.
  const double projections = 2 * (h * (q + 2 * kv) + q * h);
  const double mlp = 2 * m.mlp_matrices * h * m.feedforward;
  const double logits = 2 * h * static_cast<double>(padded_vocabulary);
  const double attention = 2 * q;  // (2 q + 2 q) / 2 per token pair
  const double forward =
      tokens * ((projections + mlp) * m.num_blocks + logits) +
      tokens * m.seq_size * attention * m.num_blocks;
  return training ? 3 * forward : forward;
}

}  // namespace blueprint
