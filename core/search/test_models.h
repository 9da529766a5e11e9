// Models for the search's tests: a small transformer given the architecture
// of today's mixture-of-experts models.
//
// Example:
//   TransformerModel m = WithExperts(CalculonModel("tiny", 64, 256, 8, 8, 4,
//                                                  32),
//                                    500, Experts(4, 2, 32), std::nullopt);
#ifndef BLUEPRINTING_CORE_SEARCH_TEST_MODELS_H_
#define BLUEPRINTING_CORE_SEARCH_TEST_MODELS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "core/spec/spec.h"

namespace blueprint::test_models {

// `experts` routed experts of intermediate size `ffn`, `topk` per token,
// shared experts of `shared_ffn` (0: none), MoE blocks by `pattern` ("":
// every block).
inline MixtureOfExperts Experts(int64_t experts, int64_t topk, int64_t ffn,
                                int64_t shared_ffn = 0,
                                std::string pattern = "",
                                double capacity_factor = 1) {
  MixtureOfExperts moe;
  moe.experts = experts;
  moe.topk = topk;
  moe.ffn = ffn;
  moe.shared_ffn = shared_ffn;
  moe.layer_pattern = std::move(pattern);
  moe.capacity_factor = capacity_factor;
  return moe;
}

inline LatentAttention Latent(int64_t q_lora_rank, int64_t kv_lora_rank,
                              int64_t qk_head_dim, int64_t qk_rope_head_dim,
                              int64_t v_head_dim) {
  return {q_lora_rank, kv_lora_rank, qk_head_dim, qk_rope_head_dim,
          v_head_dim};
}

// `base` with a gated MLP, RMSNorm, an untied vocabulary of `vocabulary`,
// the experts `moe` and `mtp_layers` multi-token-prediction blocks; with
// `latent`, latent attention (every head its own key and value, heads of
// qk_head_dim + qk_rope_head_dim), else grouped-query attention with 4
// key/value heads.
inline TransformerModel WithExperts(TransformerModel base, int64_t vocabulary,
                                    MixtureOfExperts moe,
                                    std::optional<LatentAttention> latent,
                                    int64_t mtp_layers = 0) {
  TransformerModel m = std::move(base);
  m.kv_heads = latent.has_value() ? m.attn_heads : 4;
  m.mlp = MlpType::kGated;
  m.norm = NormType::kRmsNorm;
  m.vocabulary.size = vocabulary;
  m.vocabulary.tied = false;
  m.moe = std::move(moe);
  if (latent.has_value()) {
    m.latent_attention = latent;
    m.attn_size = latent->qk_head_dim + latent->qk_rope_head_dim;
  }
  m.mtp_layers = mtp_layers;
  return m;
}

}  // namespace blueprint::test_models

#endif  // BLUEPRINTING_CORE_SEARCH_TEST_MODELS_H_
