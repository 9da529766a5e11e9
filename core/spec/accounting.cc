#include "core/spec/accounting.h"

namespace blueprint {
namespace {

// The weights of one block's attention: Q and O (attn_heads heads), K and V
// (kv_heads heads), each head attn_size wide.
double AttentionWeights(const TransformerModel& m) {
  const double h = static_cast<double>(m.hidden);
  const double q = static_cast<double>(m.attn_heads) * m.attn_size;
  const double kv = static_cast<double>(m.kv_heads) * m.attn_size;
  return 2 * h * (q + kv);
}

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

ParameterCounts CountParameters(const TransformerModel& m,
                                int64_t padded_vocabulary) {
  const double h = static_cast<double>(m.hidden);
  const double block = AttentionWeights(m) +
                       MlpMatrices(m) * h * static_cast<double>(m.feedforward) +
                       2 * NormWeights(m);
  double total = static_cast<double>(m.num_blocks) * block;
  if (padded_vocabulary > 0) {
    const double embedding = h * static_cast<double>(padded_vocabulary);
    total += NormWeights(m) + (m.vocabulary.tied ? 1 : 2) * embedding;
  }
  return {total, total};
}

double ModelFlopsPerIteration(const TransformerModel& m,
                              int64_t padded_vocabulary, int64_t global_batch,
                              bool training) {
  const double h = static_cast<double>(m.hidden);
  const double s = static_cast<double>(m.seq_size);
  const double layers = static_cast<double>(m.num_blocks);
  const double q = static_cast<double>(m.attn_heads) * m.attn_size;
  const double kv = static_cast<double>(m.kv_heads) * m.attn_size;
  const double tokens = static_cast<double>(global_batch) * s;
  // Forward FLOPs per token (2 per multiply-add): the projections, the MLP
  // and the logits; per token and position of its sequence, the causal half
  // of QK^T and of the scores times V.
  const double projections = 2 * (h * (q + 2 * kv) + q * h);
  const double mlp = 2 * MlpMatrices(m) * h * static_cast<double>(m.feedforward);
  const double logits = 2 * h * static_cast<double>(padded_vocabulary);
  const double attention = 2 * q;  // (2 q + 2 q) / 2 per token pair
  const double forward = tokens * ((projections + mlp) * layers + logits) +
                         tokens * s * attention * layers;
  return training ? 3 * forward : forward;
}

}  // namespace blueprint
