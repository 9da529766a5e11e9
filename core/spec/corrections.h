// The named corrections of the refined profile (options.profile "refined"):
// where published measured runs (tests/validation) show Calculon's model
// wrong, one switch each, with its source. The calculon profile has none of
// them on, so its figures stay Calculon's; the refined profile has all of
// them on. `blueprint validate --profile refined --without NAME` measures one
// switch's effect on the corpus (tests/validation/README.md records each).
//
// Example:
//   Corrections c = CorrectionsFor(ModelProfile::kRefined);
//   if (c.On(Correction::kFlashAttention)) { ... }
#ifndef BLUEPRINTING_CORE_SPEC_CORRECTIONS_H_
#define BLUEPRINTING_CORE_SPEC_CORRECTIONS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "core/spec/spec.h"

namespace blueprint {

enum class Correction {
  // Attention as one fused kernel (FlashAttention; Transformer Engine's and
  // cuDNN's fused attention, Megatron-Core's default backend): the s x s
  // scores, their softmax and dropout never reach memory (no HBM traffic, no
  // stored activation but the fp32 log-sum-exp per row), and the backward
  // pass recomputes the scores (one more Q K^T GEMM). Dao et al. 2022,
  // "FlashAttention", arXiv:2205.14135, Sec. 3.1 and Theorem 2.
  kFlashAttention,
  // Causal attention does half of the score and context work: the fused
  // kernel skips the key blocks above the diagonal (Dao 2023,
  // "FlashAttention-2", arXiv:2307.08691, Sec. 3.1.1), as Megatron-LM's
  // model-FLOP accounting counts it. Only with kFlashAttention (an unfused
  // kernel computes every score and then masks).
  kCausalAttention,
  // With FP8 GEMMs (options.gemm_datatype), the attention's score and
  // context matmuls still run in the 16-bit datatype: Transformer Engine
  // casts only its linear layers to FP8; its fused attention is BF16 unless
  // fp8_dpa is set (Transformer Engine documentation, DelayedScaling /
  // "fp8_dpa: False" by default; NVIDIA FP8 primer).
  kAttentionInDatatype,
  // The activations of the microbatches the schedule's command order keeps
  // in flight (core/schedule memo.h OrderPeakLiveMicrobatches) instead of
  // Calculon's interleaving factor min(m, p)(1 + (p-1)/(vp)): Megatron-LM's
  // interleaved order runs 2(p-1) + (v-1)N warm-up forward chunks on the
  // first stage (megatron/core/pipeline_parallel/schedules.py, the
  // interleaved schedule's num_warmup_microbatches; N its
  // microbatch_group_size_per_vp_stage), so it holds 2(p-1) + (v-1)N + 1
  // chunks, capped at m v. The same as Calculon's when p | m and m v >= vp
  // + p - 1; fewer for m < p, more for m > p not a multiple of p.
  kScheduledInFlight,
  // With bfloat16 parameters under Megatron-LM's precision
  // (options.precision megatron_mixed), the data-parallel gradient
  // reduction (the all-reduce, or the reduce-scatter of a sharded
  // optimizer) moves float32 gradients, twice the datatype's bytes; the
  // parameter all-gathers stay in the weights' datatype. Megatron-LM's
  // megatron/training/arguments.py: "bfloat16 requires gradient
  // accumulation and all-reduce to be done in fp32" (it sets
  // accumulate_allreduce_grads_in_fp32 with --bf16 unless
  // --grad-reduce-in-bf16). With --fp16 it reduces in fp16, as Calculon.
  // options.grad_reduce_datatype, when set, decides instead
  // (analysis/schedule.h Fp32GradientReduction).
  kFp32GradientReduction,
  // Selective recomputation recomputes the whole attention core: Q K^T,
  // softmax, dropout and the product with V (Korthikanti et al. 2022,
  // "Reducing Activation Recomputation in Large Transformer Models",
  // arXiv:2205.05198, Sec. 4.1; Megatron-LM checkpoints its core attention
  // module, megatron/core/transformer/attention.py
  // _checkpointed_attention_forward). Calculon's attn_only recomputes the
  // first three only; this recomputes the product with V too (its stored
  // activations are already Q, K and V alone).
  kSelectiveRecomputeCoreAttention,
  // The expert all-to-all on a tier above the first sends the tokens for
  // the expert-parallel peers that share the tier below (the same node)
  // over that faster tier and only the rest over the slower one, both at
  // once: NCCL runs an all-to-all as one send and receive per peer, each on
  // its own transport (NCCL User Guide, "Point-to-point communication",
  // all-to-all), which is why DeepSeek-V3 limits each token to 4 nodes
  // (DeepSeek-V3 technical report, arXiv:2412.19437, Sec. 3.2.2: IB 50 GB/s
  // against NVLink 160 GB/s). Calculon's model has no all-to-all; without
  // this the whole exchange runs at the slower tier's rate.
  kHierarchicalAllToAll,
  // With a flex dispatcher (parallelism.expert.dispatcher deep_ep or
  // hybrid_ep), a token crosses the slower tier once per destination node
  // other than its own, whatever the number of its experts there, and then
  // fans out to their ranks over the faster tier; the combine reduces on the
  // node first and returns the same way. DeepEP's normal kernels: RDMA to
  // the same-index GPU of each node, NVLink forwarding (deepseek-ai/DeepEP
  // README, "normal kernels"; DeepSeek-V3 technical report, arXiv:2412.19437,
  // Sec. 3.2.2: "each token ... transmitted via IB to the GPU with the same
  // in-node index on its target nodes ... immediately forwarded via
  // NVLink"). core/plan/hardware.h DeduplicatedAllToAllTime.
  kNodeDeduplicatedDispatch,
  // parallelism.expert.overlap: Megatron-LM's combined 1F1B runs a block's
  // forward of one microbatch beside the backward of the adjacent one, each
  // pass's dispatch and combine under the other pass's compute (Megatron
  // Core documentation, "Combined 1F1B: Expert-Parallel All-to-All Overlap";
  // --delay-wgrad-compute adds the weight-gradient GEMMs to the backward
  // work that hides them). core/plan/block_pricing.cc ExpertOverlapKept.
  kExpertOverlap,
  // parallelism.expert.shared_expert_overlap: the shared experts' first
  // linear runs while the dispatch is in flight and their second while the
  // combine is (Megatron-LM core/transformer/moe/shared_experts.py, the
  // overlap with the alltoall dispatcher; --moe-shared-expert-overlap).
  kSharedExpertOverlap,
  // With a recipe (options.recipe), its quantization passes: every GEMM in
  // the recipe casts its input and its output gradient, read in the 16-bit
  // datatype and written row-wise and column-wise with their scales, and
  // its weights once per step, as separate memory-bound kernels at the
  // first memory tier's bandwidth (core/spec/recipes.h, Transformer
  // Engine's te.Linear). Calculon's model has no casts.
  kQuantizationPasses,
  // With FP8 or FP4 GEMMs, the output layer and the MoE router run in the
  // 16-bit datatype: Megatron-LM builds the output layer as
  // tensor_parallel.ColumnParallelLinear (megatron/core/models/gpt/
  // gpt_model.py, GPTModel.__init__), not a Transformer Engine module,
  // and the router's gating as torch.nn.functional.linear
  // (megatron/core/transformer/moe/router.py, Router.gating); only TE
  // modules run under fp8_autocast.
  kHeadAndRouterInDatatype,
  // An MoE block's token permutations as memory-bound kernels of their own
  // (Megatron-LM core/transformer/moe/token_dispatcher.py): the all-to-all
  // dispatcher permutes the rank's tokens by expert before the dispatch
  // (permute: T k rows read and written), sorts the received rows by local
  // expert after it and back before the combine when the rank holds more
  // than one expert (sort_chunks_by_idxs: R rows each way), and unpermutes
  // after the combine (T k rows read, T written); the flex dispatcher with
  // DeepEP sends the tokens unpermuted and permutes the R received rows by
  // local expert and back (get_permuted_hidden_states_by_experts,
  // get_restored_hidden_states_by_experts); HybridEP permutes inside its
  // exchange kernels. The same bytes in the backward pass (each kernel's
  // gradient is its inverse). T: the rank's tokens, k: topk, R: the rows
  // its experts receive (capacity included). core/taskir/lower_mlp.cc
  // PermutationRows.
  kMoePermutation,
  // A GEMM runs at most at the GPU's maximum achievable matmul rate in its
  // datatype (a system's matrix.<datatype>.achievable_tflops), the best
  // rate over GEMM shapes that a sweep of torch.mm measures: 70-87% of the
  // datasheet peak (stas00/ml-engineering compute/accelerator/README.md,
  // "Maximum Achievable Matmul FLOPS comparison table";
  // ../shared/hardware/anchors.csv), where Calculon's size table gives
  // large GEMMs 0.95 of it. Smaller GEMMs keep the table's lower rates.
  kAchievableMatmulRate,
  // An MoE block's router kernels after its gating GEMM as one memory-bound
  // task, forward and backward: the score function (fp32), the top-k, the
  // routing probabilities and map scattered over the E experts, the
  // auxiliary loss's scores and sums (model.moe.aux_loss) and the
  // dispatcher's gather of the routed probabilities; as PyTorch's separate
  // kernels (Megatron-LM core/transformer/moe/router.py
  // TopKRouter.routing, moe_utils.py topk_routing_with_score_function,
  // compute_routing_scores_for_aux_loss, switch_load_balancing_loss_func,
  // permute) or, with model.moe.router_fusion (--moe-router-fusion), as
  // Transformer Engine's fused router kernels (transformer_engine/pytorch/
  // router.py: fp32 inside, the probabilities in the logits' datatype, an
  // fp32 intermediate kept for the backward). core/taskir/lower_mlp.cc
  // RouterKernelBytesPerToken.
  kMoeRouterKernels,
  // With kExpertOverlap, the exchange kernels that run beside the covering
  // compute take their share of the processor from it, as Calculon's
  // overlapped collectives do (MODEL.md 4.3 LinearOverlapped and 6.5 the
  // data-parallel overlap: a hidden collective costs its tier's
  // processor_usage times its time): each second of hidden expert exchange
  // stays exposed for processor_usage seconds, the largest of the exchange's
  // tiers'. NVIDIA's Megatron Core MoE report (arXiv:2603.07685 Sec. 4.2.3)
  // measures it: "DeepEP uses 20 SMs per GPU and introduces roughly 20%
  // GEMM-efficiency overhead" (20 of an H100's 132 SMs: 0.15, an NVLink
  // tier's processor_usage in every preset). core/plan/block_pricing.cc
  // ExpertOverlapKept.
  kExpertOverlapProcessorUsage,
  // With kNodeDeduplicatedDispatch (a flex dispatcher), a token also goes
  // to each destination rank once, whatever the number of its experts
  // there: DeepEP's dispatch layout marks the ranks a token is for
  // (get_dispatch_layout: num_tokens_per_rank, is_token_in_rank) and sends
  // it to each once, the receiving rank copying it to its local experts;
  // HybridEP the same. Of P peers, P (1 - C(E - E/P, k) / C(E, k)) hold one
  // of its k experts of E: DeepSeek-V3's k 8 of E 256 on 8 ranks reach
  // 5.28 of them, not 8. Checked against NVIDIA's Megatron Core MoE report
  // (arXiv:2603.07685) Table 7: HybridEP against the all-to-all at EP 8 to
  // 64 (tests/validation/README.md). core/plan/hardware.h
  // DeduplicatedAllToAllTime.
  kRankDeduplicatedDispatch,
  // A collective on a tier with a measured bus bandwidth for it (the tier's
  // measured_busbw, this project's presets) runs at that rate, by group
  // size, instead of the tier's bandwidth x efficiency (Calculon's 0.65 on
  // NVLink): nccl-tests at large messages measure about 370 GB/s for a ring
  // all-gather or reduce-scatter on 8 H100 and 480 for the NVLS all-reduce
  // (NVLink SHARP: the switch reduces) against 292.5 at 450 x 0.65
  // (../shared/hardware/anchors.csv; presets/systems/README.md names each
  // row). The time is nccl-tests' own: bytes x 2(n-1)/n (all-reduce) or
  // (n-1)/n over busbw. core/plan/hardware.h CollectiveTime,
  // SystemUnderCorrections.
  kMeasuredCollectiveRates,
};

inline constexpr int kCorrectionCount = 18;

struct CorrectionInfo {
  Correction correction;
  const char* name;    // "flash_attention"
  const char* source;  // the publication it rests on
};

inline constexpr CorrectionInfo kCorrectionInfos[kCorrectionCount] = {
    {Correction::kFlashAttention, "flash_attention",
     "Dao et al. 2022, FlashAttention (arXiv:2205.14135) Sec. 3.1"},
    {Correction::kCausalAttention, "causal_attention",
     "Dao 2023, FlashAttention-2 (arXiv:2307.08691) Sec. 3.1.1"},
    {Correction::kAttentionInDatatype, "attention_in_datatype",
     "Transformer Engine: FP8 in te.Linear only, fp8_dpa off by default"},
    {Correction::kScheduledInFlight, "scheduled_in_flight",
     "Megatron-LM core pipeline_parallel/schedules.py: interleaved warm-up "
     "2(p-1) + (v-1)N chunks"},
    {Correction::kFp32GradientReduction, "fp32_gradient_reduction",
     "Megatron-LM training/arguments.py: with --bf16, gradient accumulation "
     "and all-reduce in fp32 (accumulate_allreduce_grads_in_fp32)"},
    {Correction::kSelectiveRecomputeCoreAttention,
     "selective_recompute_core_attention",
     "Korthikanti et al. 2022 (arXiv:2205.05198) Sec. 4.1; Megatron-LM "
     "core/transformer/attention.py _checkpointed_attention_forward"},
    {Correction::kHierarchicalAllToAll, "hierarchical_all_to_all",
     "NCCL User Guide, point-to-point all-to-all; DeepSeek-V3 technical "
     "report (arXiv:2412.19437) Sec. 3.2.2"},
    {Correction::kNodeDeduplicatedDispatch, "node_deduplicated_dispatch",
     "deepseek-ai/DeepEP normal kernels (RDMA once per node, NVLink "
     "forwarding); DeepSeek-V3 technical report (arXiv:2412.19437) Sec. "
     "3.2.2"},
    {Correction::kExpertOverlap, "expert_overlap",
     "Megatron Core documentation, Combined 1F1B: Expert-Parallel "
     "All-to-All Overlap (--overlap-moe-expert-parallel-comm, "
     "--delay-wgrad-compute)"},
    {Correction::kSharedExpertOverlap, "shared_expert_overlap",
     "Megatron-LM core/transformer/moe/shared_experts.py "
     "(--moe-shared-expert-overlap)"},
    {Correction::kQuantizationPasses, "quantization_passes",
     "Transformer Engine te.Linear: the recipe's casts of X, dY and W "
     "(core/spec/recipes.h)"},
    {Correction::kHeadAndRouterInDatatype, "head_and_router_in_datatype",
     "Megatron-LM core gpt_model.py (output_layer: ColumnParallelLinear) and "
     "moe/router.py (gating: torch linear): outside fp8_autocast"},
    {Correction::kMoePermutation, "moe_permutation",
     "Megatron-LM core/transformer/moe/token_dispatcher.py and moe_utils.py "
     "(permute, sort_chunks_by_idxs, unpermute)"},
    {Correction::kAchievableMatmulRate, "achievable_matmul_rate",
     "stas00/ml-engineering compute/accelerator/README.md, Maximum "
     "Achievable Matmul FLOPS (MAMF) table (mamf-finder.py)"},
    {Correction::kMoeRouterKernels, "moe_router_kernels",
     "Megatron-LM core/transformer/moe/router.py (TopKRouter.routing) and "
     "moe_utils.py (topk_routing_with_score_function, aux-loss functions); "
     "Transformer Engine pytorch/router.py (fused router kernels)"},
    {Correction::kExpertOverlapProcessorUsage,
     "expert_overlap_processor_usage",
     "Calculon's processor_usage of overlapped collectives (MODEL.md 4.3, "
     "6.5); Megatron Core MoE report (arXiv:2603.07685) Sec. 4.2.3: DeepEP's "
     "20 SMs cost about 20% GEMM efficiency"},
    {Correction::kRankDeduplicatedDispatch, "rank_deduplicated_dispatch",
     "deepseek-ai/DeepEP get_dispatch_layout (a token to each destination "
     "rank once); checked against the Megatron Core MoE report "
     "(arXiv:2603.07685) Table 7, HybridEP against the all-to-all"},
    {Correction::kMeasuredCollectiveRates, "measured_collective_rates",
     "nccl-tests bus bandwidth (doc/PERFORMANCE.md) measured on NVSwitch "
     "nodes: NVIDIA/nccl-tests issue 212; stas00/ml-engineering "
     "network/README.md (NVLS on and off, H200 and B200)"},
};

// Which corrections are on: a set of Correction values.
class Corrections {
 public:
  bool On(Correction c) const { return (bits_ & Bit(c)) != 0; }
  void Set(Correction c, bool on) {
    bits_ = on ? (bits_ | Bit(c)) : (bits_ & ~Bit(c));
  }
  bool Any() const { return bits_ != 0; }

 private:
  static uint32_t Bit(Correction c) {
    return uint32_t{1} << static_cast<int>(c);
  }
  uint32_t bits_ = 0;
};

// CorrectionsFor: none for calculon, every one for refined.
inline Corrections CorrectionsFor(ModelProfile profile) {
  Corrections out;
  switch (profile) {
    case ModelProfile::kCalculon:
      break;
    case ModelProfile::kRefined:
      for (const CorrectionInfo& info : kCorrectionInfos) {
        out.Set(info.correction, true);
      }
      break;
  }
  return out;
}

// CorrectionName: "flash_attention", ...
inline const char* CorrectionName(Correction c) {
  for (const CorrectionInfo& info : kCorrectionInfos) {
    if (info.correction == c) return info.name;
  }
  return "";
}

// ParseCorrection: the correction named `name`, or nullopt.
inline std::optional<Correction> ParseCorrection(const std::string& name) {
  for (const CorrectionInfo& info : kCorrectionInfos) {
    if (name == info.name) return info.correction;
  }
  return std::nullopt;
}

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_CORRECTIONS_H_
