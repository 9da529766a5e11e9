// MegatronFlags(): the table of modelled Megatron-LM flags (megatron.h), and
// its Markdown. Parsing (megatron_parse.cc), the conversion's setters
// (megatron.cc) and the README's flag table all read it.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "core/adapters/megatron.h"
#include "core/adapters/megatron_internal.h"

namespace blueprint {
namespace {

using megatron_internal::PositionOf;
using megatron_internal::Spec;
using megatron_internal::Value;
using Kind = MegatronFlagKind;

// The canonical spelling of --normalization's choices.
NormType NormOf(const std::string& choice) {
  return choice == "RMSNorm" ? NormType::kRmsNorm : NormType::kLayerNorm;
}

}  // namespace

const std::vector<MegatronFlag>& MegatronFlags() {
  // clang-format off
  // {name, kind, choices, field, absent, doc, set}
  static const auto* flags = new std::vector<MegatronFlag>{
      {"--num-layers", Kind::kPositiveInteger, {}, "model.num_blocks",
       kMegatronRequired, "transformer blocks (layers)",
       [](const Value& v, Spec* s) { s->model.num_blocks = v.integer; }},
      {"--hidden-size", Kind::kPositiveInteger, {}, "model.hidden",
       kMegatronRequired, "hidden size",
       [](const Value& v, Spec* s) { s->model.hidden = v.integer; }},
      {"--num-attention-heads", Kind::kPositiveInteger, {}, "model.attn_heads",
       kMegatronRequired, "attention (query) heads",
       [](const Value& v, Spec* s) { s->model.attn_heads = v.integer; }},
      {"--group-query-attention", Kind::kSwitch, {}, "model.kv_heads",
       "off: `--num-attention-heads` (multi-head attention)",
       "grouped-query attention: `--num-query-groups` key/value heads"},
      {"--num-query-groups", Kind::kPositiveInteger, {}, "model.kv_heads",
       "1 (Megatron-LM's default)",
       "key/value heads with `--group-query-attention`; without it Megatron-LM "
       "ignores it (a note says so)"},
      {"--seq-length", Kind::kPositiveInteger, {}, "model.seq_size",
       kMegatronRequired, "sequence length (tokens)",
       [](const Value& v, Spec* s) { s->model.seq_size = v.integer; }},
      {"--ffn-hidden-size", Kind::kPositiveInteger, {}, "model.feedforward",
       "4 * `--hidden-size`; with `--swiglu`, `--hidden-size` * 8 / 3 rounded "
       "down to a multiple of 64 (Megatron-LM's defaults)",
       "hidden size of the feed-forward (MLP) block",
       [](const Value& v, Spec* s) { s->model.feedforward = v.integer; }},
      {"--swiglu", Kind::kSwitch, {}, "model.mlp", "off: `plain` (GELU)",
       "`gated`: SwiGLU, three matrices (gate, up, down)",
       [](const Value& v, Spec* s) {
         s->model.mlp = v.given ? MlpType::kGated : MlpType::kPlain;
       }},
      {"--kv-channels", Kind::kPositiveInteger, {}, "model.attn_size",
       "`--hidden-size` / `--num-attention-heads`, which must divide evenly",
       "size of one attention head",
       [](const Value& v, Spec* s) { s->model.attn_size = v.integer; }},
      {"--normalization", Kind::kChoice, {"LayerNorm", "RMSNorm"}, "model.norm",
       "`LayerNorm`", "`LayerNorm`: `layernorm`, `RMSNorm`: `rmsnorm`",
       [](const Value& v, Spec* s) { s->model.norm = NormOf(v.choice); }},
      {"--disable-bias-linear", Kind::kSwitch, {}, "model.linear_bias",
       "off: `true` (Megatron-LM's `add_bias_linear`)",
       "`false`: no biases on the linear layers",
       [](const Value& v, Spec* s) { s->model.linear_bias = !v.given; }},
      {"--add-qkv-bias", Kind::kSwitch, {}, "model.linear_bias", "off",
       "biases on the QKV projection only: with `--disable-bias-linear` an "
       "error (the model's linear biases are all or none); otherwise "
       "Megatron-LM has them already"},
      {"--vocab-size", Kind::kPositiveInteger, {}, "model.vocabulary.size",
       "0: no vocabulary (no embedding and no output layer; a note says so)",
       "vocabulary size V before padding (Megatron-LM's NullTokenizer size; "
       "with a tokenizer file, give its size)",
       [](const Value& v, Spec* s) { s->model.vocabulary.size = v.integer; }},
      {"--make-vocab-size-divisible-by", Kind::kPositiveInteger, {},
       "model.vocabulary.divisible_by", "128",
       "the vocabulary is padded to a multiple of this * t "
       "(`derived.padded_vocabulary`)",
       [](const Value& v, Spec* s) {
         s->model.vocabulary.divisible_by = v.integer;
       }},
      {"--untie-embeddings-and-output-weights", Kind::kSwitch, {},
       "model.vocabulary.tied", "off: `true`",
       "`false`: the output layer has its own weights",
       [](const Value& v, Spec* s) { s->model.vocabulary.tied = !v.given; }},
      {"--position-embedding-type", Kind::kChoice,
       {"learned_absolute", "rope", "none"},
       "model.vocabulary.position_embedding",
       "`learned_absolute` (Megatron-LM's default); `none` without "
       "`--vocab-size`",
       "`learned_absolute`: `learned`, `rope`: `rope`, `none`: `none`; "
       "Megatron-LM's `yarn`, `mrope` and `relative` are not modelled (an "
       "error); a learned table needs `--vocab-size` (without it, a note)"},
      {"--max-position-embeddings", Kind::kPositiveInteger, {},
       "model.vocabulary.max_positions",
       "required for a learned position embedding; else 0",
       "rows of the learned position table (0 with `rope`, `none` or no "
       "vocabulary)"},
      {"--multi-latent-attention", Kind::kSwitch, {}, "model.latent_attention",
       "off: `null` (query, key and value heads)",
       "multi-latent attention (DeepSeek-V2/V3), sized by the next five "
       "flags; `model.attn_size` is `--qk-head-dim` + "
       "`--qk-pos-emb-head-dim` and `model.kv_heads` `--num-attention-heads` "
       "(`--kv-channels` has no effect); not with `--group-query-attention`, "
       "as Megatron-LM asserts"},
      {"--q-lora-rank", Kind::kPositiveInteger, {},
       "model.latent_attention.q_lora_rank",
       "0: queries projected directly (Megatron-LM's `None`)",
       "rank of the queries' low-rank latent; only with "
       "`--multi-latent-attention` (without it, a note)"},
      {"--kv-lora-rank", Kind::kPositiveInteger, {},
       "model.latent_attention.kv_lora_rank", "32 (Megatron-LM's default)",
       "rank of the keys' and values' shared latent; only with "
       "`--multi-latent-attention`"},
      {"--qk-head-dim", Kind::kPositiveInteger, {},
       "model.latent_attention.qk_head_dim", "128 (Megatron-LM's default)",
       "size of a query/key head without position; only with "
       "`--multi-latent-attention`"},
      {"--qk-pos-emb-head-dim", Kind::kPositiveInteger, {},
       "model.latent_attention.qk_rope_head_dim",
       "64 (Megatron-LM's default)",
       "size of a query/key head's rotary part; only with "
       "`--multi-latent-attention`"},
      {"--v-head-dim", Kind::kPositiveInteger, {},
       "model.latent_attention.v_head_dim", "128 (Megatron-LM's default)",
       "size of a value head; only with `--multi-latent-attention`"},
      {"--num-experts", Kind::kPositiveInteger, {}, "model.moe.experts",
       "`model.moe` `null`: every MLP dense",
       "routed experts of each mixture-of-experts (MoE) block"},
      {"--moe-router-topk", Kind::kPositiveInteger, {}, "model.moe.topk",
       "2 (Megatron-LM's default)",
       "experts each token is routed to; only with `--num-experts` (without "
       "it, a note), as are the next four flags and "
       "`--expert-tensor-parallel-size`"},
      {"--moe-ffn-hidden-size", Kind::kPositiveInteger, {}, "model.moe.ffn",
       "`--ffn-hidden-size` (Megatron-LM's default)",
       "intermediate size of one expert (an MLP like the dense one: gated "
       "with `--swiglu`)"},
      {"--moe-shared-expert-intermediate-size", Kind::kPositiveInteger, {},
       "model.moe.shared_ffn", "0: no shared experts",
       "intermediate size of the shared experts, which every token runs"},
      {"--moe-layer-freq", Kind::kLayerPattern, {},
       "model.moe.layer_pattern", "1: every block is MoE (`\"\"`)",
       "an integer k: block i (from 0) is MoE iff i % k == 0; or a Python "
       "list expression of one 0 (dense) or 1 (MoE) per block, as "
       "Megatron-LM evaluates it: `[1,0,1,0]`, `[x]*n`, `+` and parentheses, "
       "e.g. `([0]*3+[1]*58)`; it must have `--num-layers` elements; a "
       "pattern of all 1s is `\"\"`"},
      {"--moe-expert-capacity-factor", Kind::kNumber, {},
       "model.moe.capacity_factor",
       "1: tokens spread evenly (Megatron-LM's dropless routing)",
       "tokens an expert takes over its even share, beyond which Megatron-LM "
       "drops them: the busiest expert's load; below 0 dropless (1), from 0 "
       "to 1 an error (tokens dropped even when routing is even), above "
       "`--num-experts` / `--moe-router-topk` that ratio (a note)"},
      {"--moe-router-fusion", Kind::kSwitch, {}, "model.moe.router_fusion",
       "off: the router's kernels unfused",
       "Transformer Engine's fused router kernels (score function, top-k, "
       "auxiliary-loss scores) in one pass each way (correction "
       "`moe_router_kernels`)"},
      {"--mtp-num-layers", Kind::kCount, {}, "model.mtp_layers",
       "0",
       "multi-token prediction blocks (DeepSeek-V3) on the last stage, each "
       "one more output-layer GEMM; 0 turns them off (e.g. over a Hugging "
       "Face config that has them)",
       [](const Value& v, Spec* s) { s->model.mtp_layers = v.integer; }},
      {"--tensor-model-parallel-size", Kind::kPositiveInteger, {},
       "parallelism.tensor.degree", "1", "tensor-parallel degree t",
       [](const Value& v, Spec* s) {
         s->parallelism.tensor.degree = v.integer;
       }},
      {"--pipeline-model-parallel-size", Kind::kPositiveInteger, {},
       "parallelism.pipeline.degree", "1", "pipeline-parallel degree p",
       [](const Value& v, Spec* s) {
         s->parallelism.pipeline.degree = v.integer;
       }},
      {"--num-virtual-stages-per-pipeline-rank", Kind::kPositiveInteger, {},
       "parallelism.pipeline.schedule",
       "`1f1b` (`single_stage` when p = 1)",
       "model chunks per pipeline stage v: `interleaved_1f1b` when v > 1; "
       "not with `--num-layers-per-virtual-pipeline-stage`"},
      {"--virtual-pipeline-model-parallel-size", Kind::kPositiveInteger, {},
       "parallelism.pipeline.schedule",
       "`1f1b` (`single_stage` when p = 1)",
       "older Megatron-LM's `--num-virtual-stages-per-pipeline-rank`; not "
       "with `--num-layers-per-virtual-pipeline-stage`"},
      {"--num-layers-per-virtual-pipeline-stage", Kind::kPositiveInteger, {},
       "parallelism.pipeline.schedule",
       "`1f1b` (`single_stage` when p = 1)",
       "layers per model chunk L: interleaved with v = `--num-layers` / p / L, "
       "which must divide evenly"},
      {"--decoder-first-pipeline-num-layers", Kind::kPositiveInteger, {},
       "parallelism.pipeline.stage_blocks", "the even split",
       "transformer layers of the first pipeline rank (over its v chunks); "
       "the middle ranks split the rest evenly, as Megatron-LM does"},
      {"--decoder-last-pipeline-num-layers", Kind::kPositiveInteger, {},
       "parallelism.pipeline.stage_blocks", "the even split",
       "transformer layers of the last pipeline rank (over its v chunks)"},
      {"--account-for-embedding-in-pipeline-split", Kind::kSwitch, {},
       "parallelism.pipeline.stage_blocks", "off",
       "the embedding counts as a layer of the even split: the first chunk "
       "holds one block fewer"},
      {"--account-for-loss-in-pipeline-split", Kind::kSwitch, {},
       "parallelism.pipeline.stage_blocks", "off",
       "the loss counts as a layer of the even split: the last chunk holds "
       "one block fewer"},
      {"--pipeline-model-parallel-layout", Kind::kText, {},
       "parallelism.pipeline.stage_blocks", "the even split",
       "Megatron-LM's layout string, e.g. `Et*3|(tt|)*29,m|L`: `E` "
       "embedding, `t` transformer layer, `m` MTP, `L` loss, `|` between "
       "stages (p * v of them, in model order), `(X)*N` and `c*N` repeat; "
       "sets v"},
      {"--context-parallel-size", Kind::kPositiveInteger, {},
       "parallelism.context.degree", "1",
       "context-parallel degree cp: each sequence split over cp ranks (on "
       "network tier 0 when t * cp ranks fit in it, otherwise on the last "
       "tier)",
       [](const Value& v, Spec* s) {
         s->parallelism.context.degree = v.integer;
       }},
      {"--cp-comm-type", Kind::kChoicePerLayer,
       {"p2p", "allgather", "a2a", "a2a+p2p"}, "parallelism.context.exchange",
       "`p2p`: `ring`",
       "`p2p`: `ring`, `allgather`: `all_gather`; `a2a` and `a2a+p2p` "
       "(Ulysses all-to-all) are not modelled (an error); one type per layer "
       "is accepted when all are the same; no effect with cp = 1 (a note)"},
      {"--expert-model-parallel-size", Kind::kPositiveInteger, {},
       "parallelism.expert.degree", "1",
       "expert-parallel degree ep: each MoE block's experts split over ep "
       "ranks, whose all-to-all runs on network tier 0 when ep * etp ranks "
       "fit in it, otherwise on the last tier; needs `--num-experts`, as "
       "Megatron-LM asserts",
       [](const Value& v, Spec* s) {
         s->parallelism.expert.degree = v.integer;
       }},
      {"--expert-tensor-parallel-size", Kind::kPositiveInteger, {},
       "parallelism.expert.tensor_degree",
       "0: t (Megatron-LM's default)",
       "tensor-parallel degree etp of each expert's matrices"},
      {"--moe-token-dispatcher-type", Kind::kChoice,
       {"allgather", "alltoall", "flex"}, "parallelism.expert.dispatcher",
       "`all_gather` (Megatron-LM's default `allgather`)",
       "`allgather`: `all_gather`; `alltoall`: `all_to_all`; `flex`: the "
       "backend `--moe-flex-dispatcher-backend` names"},
      {"--moe-flex-dispatcher-backend", Kind::kChoice,
       {"deepep", "hybridep", "ncclep"}, "parallelism.expert.dispatcher",
       "`deepep` (Megatron-LM's default)",
       "with `--moe-token-dispatcher-type flex`: `deepep`: `deep_ep`, "
       "`hybridep`: `hybrid_ep`; `ncclep` is not modelled (an error); "
       "without flex Megatron-LM ignores it (a note says so)"},
      {"--moe-enable-deepep", Kind::kSwitch, {},
       "parallelism.expert.dispatcher", "off",
       "older Megatron-LM's DeepEP switch: `deep_ep`; needs "
       "`--moe-token-dispatcher-type flex`, as Megatron-LM asserts"},
      {"--overlap-moe-expert-parallel-comm", Kind::kSwitch, {},
       "parallelism.expert.overlap", "off",
       "combined 1F1B: the dispatch and combine of one microbatch under the "
       "other pass of the adjacent one",
       [](const Value& v, Spec* s) { s->parallelism.expert.overlap = v.given; }},
      {"--delay-wgrad-compute", Kind::kSwitch, {},
       "parallelism.expert.delay_wgrad", "off",
       "the weight-gradient GEMMs as more work to hide the expert exchange "
       "under; needs `--overlap-moe-expert-parallel-comm`",
       [](const Value& v, Spec* s) {
         s->parallelism.expert.delay_wgrad = v.given;
       }},
      {"--moe-shared-expert-overlap", Kind::kSwitch, {},
       "parallelism.expert.shared_expert_overlap", "off",
       "the shared experts beside the dispatch and the combine",
       [](const Value& v, Spec* s) {
         s->parallelism.expert.shared_expert_overlap = v.given;
       }},
      {"--world-size", Kind::kPositiveInteger, {}, "parallelism.data.degree",
       "t * cp * p (data degree 1)",
       "all ranks N (torchrun's `WORLD_SIZE`): data degree N / (t * cp * p), "
       "which must divide evenly"},
      {"--micro-batch-size", Kind::kPositiveInteger, {},
       "batch.microbatch_size", kMegatronRequired, "microbatch size",
       [](const Value& v, Spec* s) { s->batch.microbatch_size = v.integer; }},
      {"--global-batch-size", Kind::kPositiveInteger, {},
       "batch.global_batch_size", "`--micro-batch-size` * data degree",
       "global batch size",
       [](const Value& v, Spec* s) { s->batch.global_batch_size = v.integer; }},
      {"--sequence-parallel", Kind::kSwitch, {},
       "parallelism.tensor.communication", "off: `ar`",
       "`rs_ag` (ignored when t = 1, as Megatron-LM does); with selective "
       "recompute the all-gathers are redone in the backward pass"},
      {"--tp-comm-overlap", Kind::kSwitch, {}, "parallelism.tensor.overlap",
       "`none`",
       "`ring`: Transformer Engine's userbuffers overlap each tensor-parallel "
       "all-gather and reduce-scatter with its GEMM in t chunks; needs "
       "`--sequence-parallel` and t > 1, as Megatron-LM asserts"},
      {"--recompute-granularity", Kind::kChoice, {"full", "selective"},
       "parallelism.recompute", "`none`",
       "`full`: `full` (every block is recomputed), `selective`: `attn_only` "
       "(the core attention) with `--recompute-modules`' other modules, or "
       "`none` and those modules when they leave out `core_attn`",
       [](const Value& v, Spec* s) {
         s->parallelism.recompute = v.choice == "full"
                                        ? RecomputePolicy::kFull
                                    : v.choice == "selective"
                                        ? RecomputePolicy::kAttentionOnly
                                        : RecomputePolicy::kNone;
       }},
      {"--recompute-activations", Kind::kSwitch, {}, "parallelism.recompute",
       "off",
       "older Megatron-LM's `--recompute-granularity selective`, which it "
       "overrides"},
      {"--recompute-modules", Kind::kChoiceList,
       {"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe",
        "shared_experts"},
       "parallelism.recompute", "`core_attn` (Megatron-LM's default)",
       "with granularity `selective`: `core_attn` is `attn_only`, the others "
       "`parallelism.recompute_modules`; ignored (a note) with `full` or "
       "without a granularity, as Megatron-LM does"},
      {"--recompute-method", Kind::kChoice, {"uniform", "block"},
       "parallelism.recompute", "none",
       "needed with granularity `full`, and only then; `block` recomputes "
       "only some blocks per stage, which the model cannot represent"},
      {"--recompute-num-layers", Kind::kPositiveInteger, {},
       "parallelism.recompute", "1 with granularity `full`",
       "blocks per recomputed unit with `uniform`: only 1 (each block's input "
       "kept) is modelled; only with granularity `full`"},
      {"--use-distributed-optimizer", Kind::kSwitch, {},
       "parallelism.data.sharding", "off: `none`",
       "`optimizer` over all data-parallel ranks (ZeRO-1, group 0): shards "
       "the optimizer state (no effect, and a note, with one data-parallel "
       "rank)"},
      {"--use-megatron-fsdp", Kind::kSwitch, {}, "parallelism.data.sharding",
       "off",
       "Megatron-FSDP: the sharding `--data-parallel-sharding-strategy` "
       "says, over all data-parallel ranks (group 0), whether or not "
       "`--use-distributed-optimizer` is given (no effect, and a note, with "
       "one data-parallel rank)"},
      {"--data-parallel-sharding-strategy", Kind::kChoice,
       {"no_shard", "optim", "optim_grads", "optim_grads_params"},
       "parallelism.data.sharding",
       "`optim_grads_params` (Megatron-LM's default)",
       "with `--use-megatron-fsdp`: `no_shard`: `none`, `optim`: `optimizer` "
       "(ZeRO-1), `optim_grads`: `gradients` (ZeRO-2), `optim_grads_params`: "
       "`parameters` (ZeRO-3); without it Megatron-LM ignores it (a note "
       "says so)"},
      {"--overlap-grad-reduce", Kind::kSwitch, {}, "parallelism.data.overlap",
       "off",
       "overlaps the gradient reduction with the backward pass (no effect, "
       "and a note, with one data-parallel rank)",
       [](const Value& v, Spec* s) { s->parallelism.data.overlap = v.given; }},
      {"--overlap-param-gather", Kind::kSwitch, {}, "parallelism.data.overlap",
       "off",
       "overlaps the sharded optimizer's parameter all-gather too, as the "
       "model's data overlap does already; needs `--overlap-grad-reduce` and "
       "`--use-distributed-optimizer` or `--use-megatron-fsdp`"},
      {"--fp16", Kind::kSwitch, {}, "options.datatype",
       "off: `float32` unless `--bf16`", "`float16`; not with `--bf16`"},
      {"--bf16", Kind::kSwitch, {}, "options.datatype",
       "off: `float32` unless `--fp16`", "`bfloat16`; not with `--fp16`"},
      {"--fp8-format", Kind::kChoice, {"e4m3", "hybrid"},
       "options.gemm_datatype", "off: `null` (GEMMs in the datatype)",
       "`float8`: Transformer Engine's FP8 GEMMs on 16-bit activations "
       "(`hybrid`: e4m3 forward, e5m2 backward, the same 1-byte rate); the "
       "system's matrix engine needs a `float8` rate"},
      {"--fp8-recipe", Kind::kChoice,
       {"tensorwise", "delayed", "mxfp8", "blockwise"}, "options.recipe",
       "`delayed` with `--fp8-format` (Megatron-LM's default)",
       "`fp8_tensorwise`, `fp8_delayed`, `mxfp8` or `fp8_blockwise`: the "
       "scaling recipe of the FP8 GEMMs, whose quantization passes the "
       "refined profile prices (core/spec/recipes.h); needs `--fp8-format`"},
      {"--fp4-format", Kind::kChoice, {"e2m1"}, "options.gemm_datatype",
       "off: `null`",
       "`float4`: FP4 GEMMs with `--fp4-recipe` (recipe `nvfp4`); the "
       "system's matrix engine needs a `float4` rate; not with "
       "`--fp8-format`"},
      {"--fp4-recipe", Kind::kChoice, {"nvfp4"}, "options.recipe",
       "`nvfp4` with `--fp4-format` (Megatron-LM's default)",
       "`nvfp4`: E2M1 with E4M3 scales per 16 elements; needs "
       "`--fp4-format`"},
      {"--first-last-layers-bf16", Kind::kSwitch, {},
       "options.unquantized_first_blocks", "off: `0` (every block in the "
       "recipe)",
       "the first `--num-layers-at-start-in-bf16` and the last "
       "`--num-layers-at-end-in-bf16` blocks run their GEMMs in the "
       "datatype, outside the recipe; not with `--fp8-recipe delayed`"},
      {"--num-layers-at-start-in-bf16", Kind::kCount, {},
       "options.unquantized_first_blocks", "1 (with `--first-last-layers-bf16`)",
       "the first blocks outside the recipe, at most the blocks of a "
       "pipeline stage; read only with `--first-last-layers-bf16`"},
      {"--num-layers-at-end-in-bf16", Kind::kCount, {},
       "options.unquantized_last_blocks", "1 (with `--first-last-layers-bf16`)",
       "the last blocks outside the recipe, at most the blocks of a "
       "pipeline stage; read only with `--first-last-layers-bf16`"},
      {"--fp8-param-gather", Kind::kSwitch, {}, "options.weight_datatype",
       "off: `null` (weights in the datatype)",
       "`float8`: the model's weights kept, and all-gathered, in FP8; needs "
       "`--fp8-format`"},
      {"--grad-reduce-in-bf16", Kind::kSwitch, {},
       "options.grad_reduce_datatype",
       "off: `null` (the refined profile's: float32 with `--bf16`, Megatron-LM's "
       "default)",
       "`bfloat16` with `--bf16` (the data-parallel gradient reduction moves "
       "bf16 gradients); no effect with `--fp16` or float32, as in Megatron-LM"},
      {"--accumulate-allreduce-grads-in-fp32", Kind::kSwitch, {},
       "options.grad_reduce_datatype",
       "off: `null` (the refined profile's: float32 with `--bf16`, the "
       "datatype otherwise)",
       "`float32` with `--fp16` or `--bf16` (unless `--grad-reduce-in-bf16`, "
       "which Megatron-LM lets win); no effect in float32"},
  };
  // clang-format on
  return *flags;
}

const std::vector<std::string>& MegatronFlagNames() {
  static const auto* names = [] {
    auto* out = new std::vector<std::string>;
    for (const MegatronFlag& flag : MegatronFlags()) out->push_back(flag.name);
    return out;
  }();
  return *names;
}

std::string MegatronFlagsMarkdown() {
  const auto cell = [](absl::string_view text) {
    return absl::StrReplaceAll(text, {{"|", "\\|"}});
  };
  std::string out =
      "| Flag | Value | Spec field | Without it | Meaning |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (const MegatronFlag& flag : MegatronFlags()) {
    std::string value;
    switch (flag.kind) {
      case Kind::kPositiveInteger:
        value = "positive integer";
        break;
      case Kind::kCount:
        value = "integer >= 0";
        break;
      case Kind::kNumber:
        value = "number";
        break;
      case Kind::kSwitch:
        value = "none (switch)";
        break;
      case Kind::kChoice:
        value = absl::StrCat("`", absl::StrJoin(flag.choices, "`, `"), "`");
        break;
      case Kind::kChoicePerLayer:
        value = absl::StrCat("one or more of `",
                             absl::StrJoin(flag.choices, "`, `"), "`");
        break;
      case Kind::kChoiceList:
        value = absl::StrCat("distinct words of `",
                             absl::StrJoin(flag.choices, "`, `"), "`");
        break;
      case Kind::kLayerPattern:
        value = "positive integer or list expression";
        break;
      case Kind::kText:
        value = "text";
        break;
    }
    absl::StrAppend(&out, "| `", flag.name, "` | ", cell(value), " | `",
                    flag.field, "` | ", cell(flag.absent), " | ",
                    cell(flag.doc), " |\n");
  }
  return out;
}
}  // namespace blueprint
