// Megatron-LM's model accounting: the parameters and the model FLOPs of a
// model as Megatron-LM counts them (compute_weight_and_optimizer_memory in
// megatron/training/theoretical_memory_usage.py and
// num_floating_point_operations in megatron/training/training.py). Pure and
// allocation-free; MakeStepShape calls them once per mapping.
//
// As Megatron-LM's functions do, the counts leave out linear biases and a
// learned position table, count both norms of every block (a scale and a
// bias each for LayerNorm, a scale for RMSNorm), the final norm and the
// embedding (twice when the output layer is untied), and the model FLOPs
// count the GEMMs only: 3 x the forward pass (forward, activation and weight
// gradients), causal attention scores at half, the logits included,
// recompute excluded. A model without a vocabulary (Calculon's) has no
// embedding, final norm or logits.
//
// Mixtures of experts, latent attention and multi-token prediction follow the
// same functions: a MoE block counts its router (hidden x experts), shared
// experts and every routed expert (the active count: topk of them); the
// router's GEMM is not in the model FLOPs; each MTP block counts as a block
// of the last block's kind, in full in both counts, and its FLOPs add its
// projection (2 h^2 + 3 h per token) and one more logits GEMM; latent
// attention counts its q/kv norms in the parameters and as one multiply-add
// per rank in the FLOPs, as Megatron-LM does.
#ifndef BLUEPRINTING_CORE_SPEC_ACCOUNTING_H_
#define BLUEPRINTING_CORE_SPEC_ACCOUNTING_H_

#include <cstdint>

#include "core/spec/spec.h"

namespace blueprint {

struct ParameterCounts {
  double total = 0;
  double active = 0;  // with only the routed experts (dense: total)
};

// The numbers of a model the accounting reads, as a small value (no string:
// the strategy search copies one into every step shape it builds).
struct AccountedModel {
  double hidden = 0, feedforward = 0, num_blocks = 0, seq_size = 0;
  double query = 0;          // attn_heads * attn_size
  double key_value = 0;      // kv_heads * attn_size
  double mlp_matrices = 2;   // 2 plain, 3 gated
  double norm_size = 2;      // weights per hidden unit: 2 LayerNorm, 1 RMS
  double norm_weights = 0;   // per norm: norm_size * hidden
  bool tied = true;
  bool linear_bias = false;
  // Mixture of experts (experts 0: dense): blocks of each kind, including
  // the MTP blocks (of the last block's kind) in mtp_*.
  double experts = 0, topk = 0, expert_ffn = 0, shared_ffn = 0;
  double moe_blocks = 0, dense_blocks = 0;
  double mtp_layers = 0, mtp_moe = 0, mtp_dense = 0;
  // Latent attention (latent false: Q/K/V heads).
  bool latent = false;
  double heads = 0, q_lora_rank = 0, kv_lora_rank = 0, qk_head_dim = 0,
         qk_rope_head_dim = 0, v_head_dim = 0;
};
AccountedModel AccountedModelOf(const TransformerModel& model);

// CountParameters: `padded_vocabulary` is derived.padded_vocabulary.
ParameterCounts CountParameters(const AccountedModel& model,
                                int64_t padded_vocabulary);

// ParameterParts: CountParameters' weights by where a serving mapping
// places them (core/serving): the blocks' attention with both norms of each
// block (split over the tensor ranks), the dense MLPs with the MoE layers'
// shared experts and routers, the routed experts (every one; a decode step
// reads only those its tokens reach) and the vocabulary (embedding, untied
// output layer, final norm). The parts add up to CountParameters' total.
struct ParameterParts {
  double attention = 0;
  double mlp = 0;
  double routed = 0;
  double vocabulary = 0;
};
ParameterParts CountParameterParts(const AccountedModel& model,
                                   int64_t padded_vocabulary);

// ForwardFlops: the forward pass' FLOPs per token, in the parts
// ModelFlopsPerIteration adds (2 per multiply-add): every GEMM of the
// blocks (projections, MLPs, MTP projections), the logits GEMM, and the
// attention's cost per token and position of its sequence per block (the
// causal half of QK^T and of the scores times V), over `blocks` blocks.
struct ForwardFlops {
  double gemm = 0;
  double logits = 0;
  double attention = 0;
  double blocks = 0;
};
ForwardFlops ForwardFlopsPerToken(const AccountedModel& model,
                                  int64_t padded_vocabulary);

// ModelFlopsPerIteration: the model FLOPs of one global batch of
// `global_batch` sequences; a forward pass only (1 x, not 3 x) when not
// training.
double ModelFlopsPerIteration(const AccountedModel& model,
                              int64_t padded_vocabulary, int64_t global_batch,
                              bool training);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_ACCOUNTING_H_
