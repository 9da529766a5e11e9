#include "core/adapters/megatron.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/adapters/layer_pattern.h"
#include "core/adapters/megatron_catalogue.h"
#include "core/base/checked_math.h"
#include "core/base/field_errors.h"
#include "core/base/format.h"
#include "core/base/parse_int.h"
#include "core/base/quote.h"
#include "core/spec/derive.h"
#include "core/adapters/megatron_layout.h"
#include "re2/re2.h"

namespace blueprint {
namespace {

using Spec = TransformerTrainingMappingSpec;
using Value = MegatronFlagValue;
using Kind = MegatronFlagKind;

// The canonical spelling of the choice flags' values.
NormType NormOf(const std::string& choice) {
  return choice == "RMSNorm" ? NormType::kRmsNorm : NormType::kLayerNorm;
}
PositionEmbedding PositionOf(const std::string& choice) {
  return choice == "rope"   ? PositionEmbedding::kRope
         : choice == "none" ? PositionEmbedding::kNone
                            : PositionEmbedding::kLearned;
}

}  // namespace

//----- The table --------------------------------------------------------------

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
       "`all_to_all` (the model's; Megatron-LM's own default `allgather` is "
       "not modelled)",
       "`alltoall`: `all_to_all`; `flex`: the backend "
       "`--moe-flex-dispatcher-backend` names; `allgather` is not modelled "
       "(an error)"},
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
      {"--recompute-granularity", Kind::kChoice, {"full", "selective"},
       "parallelism.recompute", "`none`",
       "`full`: `full` (every block is recomputed), `selective`: `attn_only` "
       "(the attention only)",
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

namespace {

const MegatronFlag* FindFlag(absl::string_view name) {
  for (const MegatronFlag& flag : MegatronFlags()) {
    if (name == flag.name) return &flag;
  }
  return nullptr;
}

// Levenshtein distance of two short ASCII words.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The flag `flag` is most likely a misspelling of: the first one (modelled
// flags first, then the catalogue in order) at the smallest edit distance, if
// that is at most a quarter of its length. "" when none is.
std::string ClosestFlag(absl::string_view flag) {
  std::string closest;
  size_t best = 0;
  const auto consider = [&](absl::string_view known) {
    // Cheap bound first: the distance is at least the difference in length.
    const size_t longer = std::max(flag.size(), known.size());
    const size_t shorter = std::min(flag.size(), known.size());
    if (4 * (longer - shorter) > known.size()) return;
    const size_t distance = EditDistance(flag, known);
    if (4 * distance <= known.size() && (closest.empty() || distance < best)) {
      closest = std::string(known);
      best = distance;
    }
  };
  for (const MegatronFlag& known : MegatronFlags()) consider(known.name);
  for (const MegatronCatalogueEntry& known : MegatronCatalogue()) {
    consider(known.name);
  }
  return closest;
}

// Unknown flags that get a suggestion: each costs an edit distance to every
// flag, so a command line of a million unknown flags must not.
constexpr int kMaxSuggestions = 64;

// A user's word in a message: a short escaped excerpt (core/base/quote.h).
std::string Quoted(const std::string& s) { return QuoteExcerpt(s); }

// Whether argparse reads `word` as a value rather than as a flag: it does not
// start with '-', or it is "-" alone or a negative number ("-1", "-.5").
bool IsValueWord(const std::string& word) {
  static const RE2* const kNegativeNumber = new RE2(R"(-\d+|-\d*\.\d+)");
  return word.empty() || word[0] != '-' || word == "-" ||
         RE2::FullMatch(word, *kNegativeNumber);
}

// A catalogue flag on the command line that is not modelled: its values the
// last time it was given.
struct OtherFlag {
  const MegatronCatalogueEntry* entry;
  std::vector<std::string> values;
};

// The flags of one command line after syntax checks: values parsed and
// validated, keyed by the flag's name ("--num-layers").
class ParsedFlags {
 public:
  // Given: the flag appeared, even with a bad value (already reported).
  bool Given(const std::string& name) const { return given_.count(name) > 0; }
  // The value of a flag given with a valid value.
  const Value* Find(const std::string& name) const {
    const auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  std::optional<int64_t> Integer(const std::string& name) const {
    const Value* value = Find(name);
    if (value == nullptr) return std::nullopt;
    return value->integer;
  }
  std::optional<std::string> Choice(const std::string& name) const {
    const Value* value = Find(name);
    if (value == nullptr) return std::nullopt;
    return value->choice;
  }
  bool Switch(const std::string& name) const { return Find(name) != nullptr; }

  void MarkGiven(const std::string& name) { given_.insert(name); }
  void Set(const std::string& name, Value value) {
    value.given = true;
    values_[name] = std::move(value);
  }

  // The other catalogue flags, in the order they first appear.
  const std::vector<OtherFlag>& others() const { return others_; }
  void SetOther(const MegatronCatalogueEntry* entry,
                std::vector<std::string> values) {
    for (OtherFlag& other : others_) {
      if (other.entry == entry) {
        other.values = std::move(values);
        return;
      }
    }
    others_.push_back({entry, std::move(values)});
  }

 private:
  std::map<std::string, Value> values_;
  std::set<std::string> given_;
  std::vector<OtherFlag> others_;
};

// "a value", "at least one value", "3 values".
std::string ValuesNeeded(const MegatronArity& arity) {
  if (arity.min == arity.max) {
    return arity.min == 1 ? std::string("a value")
                          : absl::StrCat(arity.min, " values");
  }
  return arity.min == 1 ? std::string("at least one value")
                        : absl::StrCat("at least ", arity.min, " values");
}

// Reads the values of the catalogue flag `entry` (starting after args[*i];
// `value` when written --flag=value) into `parsed`, or appends an error.
void ParseOther(const MegatronCatalogueEntry& entry,
                const std::vector<std::string>& args, size_t* i,
                const std::string& flag, bool has_value,
                const std::string& value, ParsedFlags* parsed,
                std::vector<FieldError>* errors) {
  std::vector<std::string> values;
  if (entry.arity.max == 0) {
    if (has_value) {
      errors->push_back(
          {flag,
           absl::StrCat(flag, " takes no value (got ", Quoted(value), ")"),
           ErrorCode::kSyntax});
      return;
    }
  } else if (has_value) {
    // argparse takes exactly one value after '='.
    if (entry.arity.min > 1) {
      errors->push_back(
          {flag,
           absl::StrCat(flag, " needs ", ValuesNeeded(entry.arity), " (got ",
                        Quoted(value), " alone)"),
           ErrorCode::kSyntax});
      return;
    }
    values.push_back(value);
  } else {
    while (static_cast<int>(values.size()) < entry.arity.max &&
           *i + 1 < args.size() && IsValueWord(args[*i + 1])) {
      values.push_back(args[++*i]);
    }
    if (static_cast<int>(values.size()) < entry.arity.min) {
      errors->push_back(
          {flag, absl::StrCat(flag, " needs ", ValuesNeeded(entry.arity)),
           ErrorCode::kSyntax});
      return;
    }
  }
  if (*entry.choices != '\0') {
    const std::vector<absl::string_view> choices =
        absl::StrSplit(entry.choices, '|');
    for (const std::string& v : values) {
      if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
        errors->push_back({flag,
                           absl::StrCat(flag, " must be one of ",
                                        absl::StrJoin(choices, ", "), " (got ",
                                        Quoted(v), ")"),
                           ErrorCode::kUnknownChoice});
        return;
      }
    }
  }
  parsed->SetOther(&entry, std::move(values));
}

// Reads the values of a kChoicePerLayer flag: each one of its choices, all
// the same (the model has one value for every layer).
void ParseChoicePerLayer(const MegatronFlag& info,
                         const std::vector<std::string>& values,
                         ParsedFlags* parsed, std::vector<FieldError>* errors) {
  for (const std::string& v : values) {
    if (std::find(info.choices.begin(), info.choices.end(), v) ==
        info.choices.end()) {
      errors->push_back({info.name,
                         absl::StrCat(info.name, " must be one of ",
                                      absl::StrJoin(info.choices, ", "),
                                      " (got ", Quoted(v), ")"),
                         ErrorCode::kUnknownChoice});
      return;
    }
  }
  for (const std::string& v : values) {
    if (v != values[0]) {
      errors->push_back(
          {info.name,
           absl::StrCat("unsupported Megatron-LM flag ", info.name, " ",
                        Quoted(values[0]), " ... ", Quoted(v),
                        ": one value per layer is modelled only when every "
                        "layer has the same"),
           ErrorCode::kUnsupported});
      return;
    }
  }
  Value choice;
  choice.choice = values[0];
  parsed->Set(info.name, std::move(choice));
}

// Splits `args` into flags and values, appending one error per problem.
ParsedFlags ParseArgs(const std::vector<std::string>& args,
                      std::vector<FieldError>* errors) {
  // Latin-1 and (?s): a value may hold any byte, newlines and invalid UTF-8
  // included, and is then reported rather than mistaken for a stray word.
  static const RE2::Options* const kBytes = [] {
    auto* options = new RE2::Options;
    options->set_encoding(RE2::Options::EncodingLatin1);
    return options;
  }();
  static const RE2* const kFlagWithValue =
      new RE2("(?s)(--[A-Za-z0-9][A-Za-z0-9_-]*)=(.*)", *kBytes);
  static const RE2* const kFlagAlone =
      new RE2("(--[A-Za-z0-9][A-Za-z0-9_-]*)", *kBytes);

  ParsedFlags parsed;
  int suggestions = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string flag;
    std::string value;
    bool has_value = false;
    if (RE2::FullMatch(arg, *kFlagWithValue, &flag, &value)) {
      has_value = true;
    } else if (!RE2::FullMatch(arg, *kFlagAlone, &flag)) {
      errors->push_back(
          {"",
           absl::StrCat(
               "unexpected argument ", Quoted(arg),
               ": expected a Megatron-LM flag such as --num-layers 96"),
           ErrorCode::kSyntax});
      continue;
    }
    // Skips the next word when it is this flag's value.
    const auto skip_value = [&] {
      if (!has_value && i + 1 < args.size() && IsValueWord(args[i + 1])) ++i;
    };
    const MegatronFlag* info = FindFlag(flag);
    if (info == nullptr) {
      if (const MegatronCatalogueEntry* entry =
              FindMegatronCatalogueEntry(flag)) {
        ParseOther(*entry, args, &i, flag, has_value, value, &parsed, errors);
        continue;
      }
      // The name is [A-Za-z0-9_-]+ but may be of any length: quote a long
      // one.
      const std::string shown =
          flag.size() <= kMaxExcerptBytes ? flag : QuoteExcerpt(flag);
      const std::string closest =
          suggestions++ < kMaxSuggestions ? ClosestFlag(flag) : "";
      errors->push_back(
          {shown,
           absl::StrCat(
               "unknown Megatron-LM flag ", shown, ": ",
               closest.empty()
                   ? absl::StrCat("Megatron-LM (at commit ",
                                  absl::string_view(MegatronCatalogueCommit())
                                      .substr(0, 12),
                                  ") has no such flag")
                   : absl::StrCat("did you mean ", closest, "?")),
           ErrorCode::kUnknownField});
      // Skip its values too, so that they are not reported as stray words.
      if (!has_value) {
        while (i + 1 < args.size() && IsValueWord(args[i + 1])) ++i;
      }
      continue;
    }
    if (parsed.Given(flag)) {
      errors->push_back({flag, absl::StrCat(flag, " is given more than once"),
                         ErrorCode::kSyntax});
      if (info->kind != Kind::kSwitch) skip_value();
      continue;
    }
    parsed.MarkGiven(flag);
    if (info->kind == Kind::kSwitch) {
      if (has_value) {
        errors->push_back(
            {flag,
             absl::StrCat(flag, " takes no value (got ", Quoted(value), ")"),
             ErrorCode::kSyntax});
      } else {
        parsed.Set(flag, Value{});
      }
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size() || !IsValueWord(args[i + 1])) {
        errors->push_back(
            {flag,
             absl::StrCat(flag, info->kind == Kind::kChoicePerLayer
                                    ? " needs at least one value"
                                    : " needs a value"),
             ErrorCode::kSyntax});
        continue;
      }
      value = args[++i];
    }
    if (info->kind == Kind::kChoicePerLayer) {
      // argparse's nargs='+': every value word up to the next flag.
      std::vector<std::string> values = {value};
      while (!has_value && i + 1 < args.size() && IsValueWord(args[i + 1])) {
        values.push_back(args[++i]);
      }
      ParseChoicePerLayer(*info, values, &parsed, errors);
      continue;
    }
    if (info->kind == Kind::kNumber) {
      double number = 0;
      if (!absl::SimpleAtod(value, &number) || !std::isfinite(number)) {
        errors->push_back(
            {flag,
             absl::StrCat(flag, " needs a finite decimal number (got ",
                          Quoted(value), ")"),
             ErrorCode::kWrongType});
        continue;
      }
      Value parsed_number;
      parsed_number.number = number;
      parsed.Set(flag, std::move(parsed_number));
      continue;
    }
    if (info->kind == Kind::kText) {
      Value text;
      text.pattern = value;
      parsed.Set(flag, std::move(text));
      continue;
    }
    if (info->kind == Kind::kLayerPattern &&
        value.find('[') != std::string::npos) {
      // Megatron-LM evaluates a value holding '[' as a list expression.
      absl::StatusOr<std::string> pattern = ParseLayerPattern(value);
      if (!pattern.ok()) {
        errors->push_back({flag,
                           absl::StrCat(flag, " ", Quoted(value),
                                        " is not a list of 0s and 1s: ",
                                        pattern.status().message()),
                           ErrorCode::kInvalidValue});
        continue;
      }
      Value list;
      list.pattern = *std::move(pattern);
      parsed.Set(flag, std::move(list));
      continue;
    }
    if (info->kind == Kind::kChoice) {
      if (std::find(info->choices.begin(), info->choices.end(), value) !=
          info->choices.end()) {
        Value choice;
        choice.choice = value;
        parsed.Set(flag, std::move(choice));
        continue;
      }
      // A choice Megatron-LM has but the model cannot represent.
      const MegatronCatalogueEntry* entry = FindMegatronCatalogueEntry(flag);
      const std::vector<absl::string_view> megatron =
          entry == nullptr ? std::vector<absl::string_view>{}
                           : std::vector<absl::string_view>(absl::StrSplit(
                                 entry->choices, '|', absl::SkipEmpty()));
      if (std::find(megatron.begin(), megatron.end(), value) !=
          megatron.end()) {
        errors->push_back(
            {flag,
             absl::StrCat("unsupported Megatron-LM flag ", flag, " ", value,
                          ": the model cannot represent it (", "modelled: ",
                          absl::StrJoin(info->choices, ", "), ")"),
             ErrorCode::kUnsupported});
      } else {
        errors->push_back({flag,
                           absl::StrCat(flag, " must be one of ",
                                        absl::StrJoin(info->choices, ", "),
                                        " (got ", Quoted(value), ")"),
                           ErrorCode::kUnknownChoice});
      }
      continue;
    }
    const std::optional<int64_t> number =
        info->kind == Kind::kCount && value == "0"
            ? std::optional<int64_t>(0)
            : ParsePositiveInteger(value);
    if (!number) {
      errors->push_back(
          {flag,
           absl::StrCat(
               flag,
               info->kind == Kind::kLayerPattern
                   ? " needs a positive integer that fits in 64 bits "
                     "or a Python list expression holding '[' ("
               : info->kind == Kind::kCount
                   ? " needs 0 or a positive integer that fits in 64 bits ("
                   : " needs a positive integer that fits in 64 bits (",
               kPositiveIntegerSpelling, "; got ", Quoted(value), ")"),
           PositiveIntegerErrorCode(value)});
      continue;
    }
    Value integer;
    integer.integer = *number;
    parsed.Set(flag, std::move(integer));
  }
  return parsed;
}

//----- Values equal to Megatron-LM's defaults ---------------------------------

// Flags whose declared default (None) stands for a value Megatron-LM then
// uses, spelled as Python prints it.
constexpr std::pair<const char*, const char*> kEffectiveDefaults[] = {
    {"--recompute-modules", "['core_attn']"},
};

// `values` as Python prints the list argparse makes of them.
std::string PythonList(const MegatronCatalogueEntry& entry,
                       const std::vector<std::string>& values) {
  const bool quoted = absl::string_view(entry.value_type) == "str";
  std::vector<std::string> items;
  for (const std::string& v : values) {
    items.push_back(quoted ? absl::StrCat("'", v, "'") : v);
  }
  return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
}

// Whether `values` are what Megatron-LM has without the flag, so that giving
// them changes nothing. A switch that is given never is.
bool IsMegatronDefault(const MegatronCatalogueEntry& entry,
                       const std::vector<std::string>& values) {
  if (entry.arity.max == 0 || values.empty()) return false;
  std::string fallback = entry.default_value;
  for (const auto& [name, value] : kEffectiveDefaults) {
    if (entry.name == absl::string_view(name)) fallback = value;
  }
  const absl::string_view type = entry.value_type;
  if (values.size() == 1) {
    const std::string& v = values[0];
    if (type == "int") {
      int64_t given = 0;
      int64_t expected = 0;
      return absl::SimpleAtoi(v, &given) &&
             absl::SimpleAtoi(fallback, &expected) && given == expected;
    }
    if (type == "float") {
      double given = 0;
      double expected = 0;
      return absl::SimpleAtod(v, &given) &&
             absl::SimpleAtod(fallback, &expected) && given == expected;
    }
    if (absl::StartsWith(type, "enum ")) {
      const size_t dot = fallback.rfind('.');
      return v ==
             (dot == std::string::npos ? fallback : fallback.substr(dot + 1));
    }
    if (v == fallback) return true;
  }
  return entry.arity.max > 1 && PythonList(entry, values) == fallback;
}

//----- The conversion ---------------------------------------------------------

// The value `flag` has without being given (valid), if the table says one.
std::optional<Value> AbsentValue(const MegatronFlag& flag) {
  switch (flag.kind) {
    case Kind::kSwitch:
    case Kind::kChoice:
    case Kind::kChoicePerLayer:
      return Value{};
    case Kind::kNumber:
    case Kind::kLayerPattern:
    case Kind::kText:
      return std::nullopt;  // their rules say what holds without them
    case Kind::kCount:
      if (flag.absent == "0") return Value{};
      return std::nullopt;
    case Kind::kPositiveInteger:
      if (const std::optional<int64_t> number =
              ParsePositiveInteger(flag.absent)) {
        Value value;
        value.integer = *number;
        return value;
      }
      return std::nullopt;
  }
  return std::nullopt;
}

// One conversion: the flags, the spec being filled, the errors and the notes
// so far.
struct Conversion {
  ParsedFlags flags;
  Spec spec;
  std::vector<FieldError> errors;
  std::vector<std::string> notes;

  void Error(std::string field, ErrorCode code, std::string message) {
    errors.push_back({std::move(field), std::move(message), code});
  }
};

// The catalogue flags that are not modelled: unmodelled ones are errors
// (unless at Megatron-LM's default), ignored ones one note.
void OtherFlags(Conversion* c) {
  constexpr char kAtDefault[] = "given at Megatron-LM's default value";
  // category -> flags, categories in the order they first appear.
  std::vector<std::pair<std::string, std::vector<std::string>>> ignored;
  const auto ignore = [&](const std::string& category,
                          const std::string& name) {
    for (auto& [known, names] : ignored) {
      if (known == category) {
        names.push_back(name);
        return;
      }
    }
    ignored.push_back({category, {name}});
  };
  int count = 0;
  for (const OtherFlag& other : c->flags.others()) {
    const MegatronCatalogueEntry& entry = *other.entry;
    switch (entry.flag_class) {
      case MegatronFlagClass::kIgnored:
        ignore(entry.reason, entry.name);
        ++count;
        break;
      case MegatronFlagClass::kUnmodelled:
      case MegatronFlagClass::kUnclassified: {
        if (IsMegatronDefault(entry, other.values)) {
          ignore(kAtDefault, entry.name);
          ++count;
          break;
        }
        const std::string why =
            entry.flag_class == MegatronFlagClass::kUnmodelled
                ? std::string(entry.reason)
                : absl::StrCat(
                      "not classified yet (new in Megatron-LM at commit ",
                      absl::string_view(MegatronCatalogueCommit())
                          .substr(0, 12),
                      "), so assumed to change the model");
        std::string given = entry.name;
        if (!other.values.empty()) {
          std::vector<std::string> quoted;
          for (const std::string& v : other.values) quoted.push_back(Quoted(v));
          absl::StrAppend(&given, " ", absl::StrJoin(quoted, " "));
        }
        const absl::string_view fallback = entry.default_value;
        c->Error(
            entry.name, ErrorCode::kUnsupported,
            absl::StrCat("unsupported Megatron-LM flag ", given, ": ", why,
                         entry.arity.max == 0 || fallback == "None"
                             ? std::string()
                             : absl::StrCat("; only Megatron-LM's default, ",
                                            fallback, ", is accepted")));
        break;
      }
      case MegatronFlagClass::kModelled:
        // A catalogue flag the table does not have: a bug of the catalogue.
        c->Error(entry.name, ErrorCode::kInternal,
                 absl::StrCat("internal: ", entry.name,
                              " is marked modelled but MegatronFlags() has no "
                              "row for it"));
        break;
    }
  }
  if (ignored.empty()) return;
  std::vector<std::string> groups;
  for (const auto& [category, names] : ignored) {
    groups.push_back(
        absl::StrCat(absl::StrJoin(names, " "), " (", category, ")"));
  }
  c->notes.push_back(
      absl::StrCat("ignored ", count, " Megatron-LM flag",
                   count == 1 ? " that does not" : "s that do not",
                   " change what is modelled: ", absl::StrJoin(groups, "; ")));
}

// The table's part of one spec section: every flag whose field is in it is
// required or written by its setter.
void ApplyFlags(absl::string_view section, Conversion* c) {
  for (const MegatronFlag& flag : MegatronFlags()) {
    if (!absl::StartsWith(flag.field, absl::StrCat(section, "."))) continue;
    if (flag.absent == kMegatronRequired && !c->flags.Given(flag.name)) {
      c->Error(flag.name, ErrorCode::kMissingField,
               absl::StrCat(flag.name, " is required"));
    }
    if (flag.set == nullptr) continue;
    // A flag given with a bad value (reported) takes its default, if any.
    if (const Value* given = c->flags.Find(flag.name)) {
      flag.set(*given, &c->spec);
    } else if (std::optional<Value> absent = AbsentValue(flag)) {
      flag.set(*absent, &c->spec);
    }
  }
}

//----- The rules the table cannot express -------------------------------------

// The last network tier, where Megatron-LM's pipeline and data groups
// usually talk (across nodes).
int64_t OutermostTier(const System& system) {
  return system.networks.empty()
             ? 0
             : static_cast<int64_t>(system.networks.size()) - 1;
}

// A note that the given ones of `names` have no effect without `without`,
// as in Megatron-LM.
void NoteIdle(const ParsedFlags& flags, std::vector<const char*> names,
              const std::string& without, std::vector<std::string>* notes) {
  std::vector<std::string> idle;
  for (const char* name : names) {
    if (flags.Given(name)) idle.push_back(name);
  }
  if (idle.empty()) return;
  notes->push_back(absl::StrCat(
      absl::StrJoin(idle, " and "), idle.size() == 1 ? " has" : " have",
      " no effect without ", without, ", as in Megatron-LM"));
}

// Multi-latent attention: its sizes, and the head size and key/value heads
// it implies.
void LatentAttentionRules(Conversion* c) {
  const ParsedFlags& flags = c->flags;
  TransformerModel& model = c->spec.model;
  if (!flags.Switch("--multi-latent-attention")) {
    NoteIdle(flags,
             {"--q-lora-rank", "--kv-lora-rank", "--qk-head-dim",
              "--qk-pos-emb-head-dim", "--v-head-dim"},
             "--multi-latent-attention", &c->notes);
    return;
  }
  LatentAttention latent;
  latent.q_lora_rank = flags.Integer("--q-lora-rank").value_or(0);
  latent.kv_lora_rank = flags.Integer("--kv-lora-rank").value_or(32);
  latent.qk_head_dim = flags.Integer("--qk-head-dim").value_or(128);
  latent.qk_rope_head_dim = flags.Integer("--qk-pos-emb-head-dim").value_or(64);
  latent.v_head_dim = flags.Integer("--v-head-dim").value_or(128);
  const std::optional<int64_t> head =
      CheckedAdd(latent.qk_head_dim, latent.qk_rope_head_dim);
  if (!head) {
    c->Error(
        "model.attn_size", ErrorCode::kOutOfRange,
        absl::StrCat("--qk-head-dim (", latent.qk_head_dim,
                     ") + --qk-pos-emb-head-dim (", latent.qk_rope_head_dim,
                     "), the size of a query/key head, overflows 64 "
                     "bits"));
  }
  model.attn_size = head.value_or(0);
  model.latent_attention = latent;
  if (flags.Switch("--group-query-attention")) {
    c->Error("model.kv_heads", ErrorCode::kInconsistent,
             "--multi-latent-attention and --group-query-attention cannot both "
             "be given: Megatron-LM asserts that grouped-query attention is "
             "mutually exclusive with multi-latent attention");
  }
  model.kv_heads = model.attn_heads;
  if (flags.Given("--kv-channels")) {
    c->notes.push_back(
        "--kv-channels has no effect with --multi-latent-attention, as in "
        "Megatron-LM: a query/key head is --qk-head-dim + "
        "--qk-pos-emb-head-dim (model.attn_size)");
  }
}

// Mixture of experts: the experts, their routing and which blocks have them.
void MixtureRules(Conversion* c) {
  const ParsedFlags& flags = c->flags;
  TransformerModel& model = c->spec.model;
  const std::optional<int64_t> experts = flags.Integer("--num-experts");
  if (!experts) {
    if (!flags.Given("--num-experts")) {
      NoteIdle(flags,
               {"--moe-router-topk", "--moe-ffn-hidden-size",
                "--moe-shared-expert-intermediate-size", "--moe-layer-freq",
                "--moe-expert-capacity-factor"},
               "--num-experts", &c->notes);
    }
    return;
  }
  MixtureOfExperts moe;
  moe.experts = *experts;
  moe.topk = flags.Integer("--moe-router-topk").value_or(2);
  moe.ffn = flags.Integer("--moe-ffn-hidden-size").value_or(model.feedforward);
  moe.shared_ffn =
      flags.Integer("--moe-shared-expert-intermediate-size").value_or(0);

  // The blocks: every one, every k-th from the first, or a list.
  const std::optional<int64_t> layers = flags.Integer("--num-layers");
  if (const MegatronFlagValue* freq = flags.Find("--moe-layer-freq")) {
    std::string pattern = freq->pattern;
    if (freq->integer > 1 && layers) {
      if (*layers > kMaxLayerPattern) {
        c->Error("--moe-layer-freq", ErrorCode::kOutOfRange,
                 absl::StrCat("--moe-layer-freq ", freq->integer,
                              " with --num-layers ", *layers,
                              ": a pattern of more than ", kMaxLayerPattern,
                              " blocks is not modelled"));
      } else {
        for (int64_t i = 0; i < *layers; ++i) {
          pattern.push_back(i % freq->integer == 0 ? '1' : '0');
        }
      }
    } else if (freq->integer == 0 && layers &&
               static_cast<int64_t>(pattern.size()) != *layers) {
      c->Error("--moe-layer-freq", ErrorCode::kInconsistent,
               absl::StrCat("--moe-layer-freq has ", pattern.size(),
                            " elements but --num-layers is ", *layers,
                            ": one 0 (dense) or 1 (MoE) per block"));
      pattern.clear();
    }
    if (!pattern.empty() && pattern.find('1') == std::string::npos) {
      c->Error("--moe-layer-freq", ErrorCode::kInconsistent,
               "--moe-layer-freq has no MoE block (1): a dense model has no "
               "--num-experts");
    }
    if (pattern.find('0') == std::string::npos) pattern.clear();
    moe.layer_pattern = std::move(pattern);
  }

  // The busiest expert's load: Megatron-LM drops what is over capacity.
  if (const MegatronFlagValue* capacity =
          flags.Find("--moe-expert-capacity-factor")) {
    const double factor = capacity->number;
    // All tokens at one expert: experts / topk times its share (a topk
    // above the experts is the checker's to report).
    const bool routable = moe.topk <= moe.experts;
    const double most =
        static_cast<double>(moe.experts) / static_cast<double>(moe.topk);
    if (factor < 0) {
      c->notes.push_back(absl::StrCat(
          "--moe-expert-capacity-factor ", FormatDouble(factor),
          " is below 0, which Megatron-LM reads as no capacity (dropless "
          "routing): model.moe.capacity_factor 1"));
    } else if (factor < 1) {
      c->Error(
          "--moe-expert-capacity-factor", ErrorCode::kUnsupported,
          absl::StrCat("--moe-expert-capacity-factor ", FormatDouble(factor),
                       " drops tokens even when the routing is even, "
                       "which the model cannot represent "
                       "(model.moe.capacity_factor is at least 1)"));
    } else if (routable && factor > most) {
      c->notes.push_back(absl::StrCat(
          "--moe-expert-capacity-factor ", FormatDouble(factor),
          " exceeds --num-experts / --moe-router-topk (", FormatDouble(most),
          "): no expert receives more than every token, so "
          "model.moe.capacity_factor is ",
          FormatDouble(most)));
      moe.capacity_factor = most;
    } else {
      moe.capacity_factor = factor;
    }
  }
  model.moe = std::move(moe);
}

// The model's derived defaults, its attention, biases and vocabulary.
void ModelRules(Conversion* c) {
  const ParsedFlags& flags = c->flags;
  TransformerModel& model = c->spec.model;
  const std::optional<int64_t> hidden = flags.Integer("--hidden-size");
  const std::optional<int64_t> heads = flags.Integer("--num-attention-heads");
  if (!flags.Integer("--ffn-hidden-size") && hidden) {
    if (flags.Switch("--swiglu")) {
      // Megatron-LM: int((4 * h * 2 / 3) / 64) * 64, i.e. h / 24 * 64.
      model.feedforward = *hidden / 24 * 64;
      if (model.feedforward == 0) {
        c->Error("model.feedforward", ErrorCode::kOutOfRange,
                 absl::StrCat("--ffn-hidden-size defaults to --hidden-size (",
                              *hidden,
                              ") * 8 / 3 rounded down to a multiple of 64 "
                              "with --swiglu, which is 0; give "
                              "--ffn-hidden-size"));
      }
    } else {
      const std::optional<int64_t> four_h = CheckedMul(4, *hidden);
      if (!four_h) {
        c->Error("model.feedforward", ErrorCode::kOutOfRange,
                 absl::StrCat("--ffn-hidden-size defaults to 4 * "
                              "--hidden-size (",
                              *hidden, "), which overflows 64 bits"));
      }
      model.feedforward = four_h.value_or(0);
    }
  }
  // Latent attention sizes its heads itself (LatentAttentionRules).
  const bool latent = flags.Switch("--multi-latent-attention");
  if (!flags.Integer("--kv-channels") && hidden && heads && !latent) {
    if (*hidden % *heads != 0) {
      c->Error(
          "model.attn_size", ErrorCode::kNotDivisible,
          absl::StrCat("--kv-channels defaults to --hidden-size (", *hidden,
                       ") / --num-attention-heads (", *heads,
                       "), which must then divide evenly; give --kv-channels"));
    } else {
      model.attn_size = *hidden / *heads;
    }
  }

  // Grouped-query attention: Megatron-LM reads --num-query-groups (default
  // 1) only with --group-query-attention.
  model.kv_heads = model.attn_heads;
  if (flags.Switch("--group-query-attention")) {
    model.kv_heads = flags.Integer("--num-query-groups").value_or(1);
  } else if (flags.Given("--num-query-groups")) {
    c->notes.push_back(
        "--num-query-groups has no effect without --group-query-attention, "
        "as in Megatron-LM: multi-head attention (model.kv_heads = "
        "--num-attention-heads)");
  }

  LatentAttentionRules(c);
  MixtureRules(c);

  if (flags.Switch("--add-qkv-bias") && flags.Switch("--disable-bias-linear")) {
    c->Error("--add-qkv-bias", ErrorCode::kUnsupported,
             "--add-qkv-bias with --disable-bias-linear puts biases on the QKV "
             "projection only, which the model cannot represent "
             "(model.linear_bias is all or none)");
  }

  // The vocabulary and the position embedding.
  Vocabulary& vocabulary = model.vocabulary;
  const std::string position =
      flags.Choice("--position-embedding-type").value_or("learned_absolute");
  vocabulary.position = PositionOf(position);
  vocabulary.max_positions = 0;
  if (!flags.Given("--vocab-size")) {
    const bool learned = vocabulary.position == PositionEmbedding::kLearned;
    c->notes.push_back(absl::StrCat(
        "without --vocab-size there is no vocabulary to model "
        "(model.vocabulary.size 0): the input embedding, the output layer",
        learned ? " and the learned position embedding (--position-embedding-"
                  "type learned_absolute, Megatron-LM's default) are"
                : " are",
        " not modelled"));
    if (learned) vocabulary.position = PositionEmbedding::kNone;
  } else if (vocabulary.position == PositionEmbedding::kLearned) {
    if (const std::optional<int64_t> rows =
            flags.Integer("--max-position-embeddings")) {
      vocabulary.max_positions = *rows;
    } else if (!flags.Given("--max-position-embeddings")) {
      c->Error("--max-position-embeddings", ErrorCode::kMissingField,
               "--max-position-embeddings is required with a learned position "
               "embedding (--position-embedding-type learned_absolute, "
               "Megatron-LM's default): it is the number of rows of its "
               "table");
    }
  }
}

// The tier of a group of `ranks` neighbouring ranks (Megatron-LM's rank
// order puts tensor, context and expert ranks next to each other): tier 0
// when they fit in it (and fill it evenly if it must be filled), otherwise
// the last tier.
int64_t TierOfNeighbours(const System& system, std::optional<int64_t> ranks) {
  if (system.networks.empty()) return 0;
  const NetworkTier& first = system.networks.front();
  const bool fits = ranks && *ranks <= first.size &&
                    (!first.must_be_filled || first.size % *ranks == 0);
  return fits ? 0 : OutermostTier(system);
}

// Megatron-FSDP's --data-parallel-sharding-strategy as a sharding over all
// data-parallel ranks.
DataSharding ShardingOfStrategy(const std::string& strategy) {
  if (strategy == "optim") return ShardOptimizer{};
  if (strategy == "optim_grads") return ShardGradients{};
  if (strategy == "optim_grads_params") return ShardParameters{};
  return NoSharding{};
}

// Context parallelism: how the ranks exchange keys and values, and where.
void ContextRules(const System& system, Conversion* c) {
  ContextParallel& context = c->spec.parallelism.context;
  const std::string exchange =
      c->flags.Choice("--cp-comm-type").value_or("p2p");
  context.exchange = exchange == "allgather" ? ContextExchange::kAllGather
                                             : ContextExchange::kRing;
  if (exchange == "a2a" || exchange == "a2a+p2p") {
    c->Error(
        "--cp-comm-type", ErrorCode::kUnsupported,
        absl::StrCat("unsupported Megatron-LM flag --cp-comm-type ", exchange,
                     ": all-to-all (Ulysses) context parallelism is not "
                     "modelled (parallelism.context.exchange is ring, "
                     "p2p, or all_gather, allgather)"));
  }
  if (context.degree == 1) {
    // Nothing to exchange: the spec keeps its defaults.
    if (c->flags.Given("--cp-comm-type")) {
      c->notes.push_back(
          "--cp-comm-type has no effect with one context-parallel rank");
    }
    context = ContextParallel{};
    return;
  }
  context.network_tier = TierOfNeighbours(
      system, CheckedMul(c->spec.parallelism.tensor.degree, context.degree));
}

// Expert parallelism: needs experts; its tensor degree and its tier.
void ExpertRules(const System& system, Conversion* c) {
  ExpertParallel& expert = c->spec.parallelism.expert;
  const ParsedFlags& flags = c->flags;
  expert.tensor_degree = 0;
  if (!c->spec.model.moe.has_value()) {
    if (expert.degree > 1 && !flags.Given("--num-experts")) {
      c->Error("--expert-model-parallel-size", ErrorCode::kInconsistent,
               absl::StrCat("--expert-model-parallel-size (", expert.degree,
                            ") needs --num-experts, as Megatron-LM asserts"));
    }
    if (!flags.Given("--num-experts")) {
      NoteIdle(flags, {"--expert-tensor-parallel-size"}, "--num-experts",
               &c->notes);
    }
  } else {
    expert.tensor_degree =
        flags.Integer("--expert-tensor-parallel-size").value_or(0);
  }
  // One expert-parallel rank has no all-to-all: tier 0, the default.
  const int64_t t = c->spec.parallelism.tensor.degree;
  expert.network_tier =
      expert.degree == 1
          ? 0
          : TierOfNeighbours(system, CheckedMul(expert.degree,
                                                ExpertTensorDegree(expert, t)));
}

// The expert dispatcher: Megatron-LM's --moe-token-dispatcher-type, its
// flex backend (megatron/core/transformer/moe/token_dispatcher.py
// MoEFlexTokenDispatcher) or the older --moe-enable-deepep, which
// transformer_config.py allows only with the flex type.
void DispatcherRules(Conversion* c) {
  const ParsedFlags& flags = c->flags;
  ExpertParallel& expert = c->spec.parallelism.expert;
  const std::string type =
      flags.Choice("--moe-token-dispatcher-type").value_or("alltoall");
  const std::string backend =
      flags.Choice("--moe-flex-dispatcher-backend").value_or("deepep");
  const bool deepep = flags.Switch("--moe-enable-deepep");
  if (type == "allgather") {
    c->Error("--moe-token-dispatcher-type", ErrorCode::kUnsupported,
             "--moe-token-dispatcher-type allgather is not modelled (the "
             "model prices alltoall and flex)");
  }
  if (deepep && type != "flex") {
    c->Error("--moe-enable-deepep", ErrorCode::kInconsistent,
             absl::StrCat("--moe-enable-deepep needs "
                          "--moe-token-dispatcher-type flex, not ",
                          type, ", as Megatron-LM asserts"));
  }
  if (type != "flex") {
    if (flags.Given("--moe-flex-dispatcher-backend")) {
      c->notes.push_back(
          "--moe-flex-dispatcher-backend has no effect without "
          "--moe-token-dispatcher-type flex");
    }
    expert.dispatcher = ExpertDispatcher::kAllToAll;
    return;
  }
  if (backend == "ncclep" && !deepep) {
    c->Error("--moe-flex-dispatcher-backend", ErrorCode::kUnsupported,
             "--moe-flex-dispatcher-backend ncclep is not modelled (deepep "
             "and hybridep are)");
  }
  expert.dispatcher = backend == "hybridep" && !deepep
                          ? ExpertDispatcher::kHybridEp
                          : ExpertDispatcher::kDeepEp;
}

// The pipeline layout flags' values (megatron_layout.h).
PipelineLayoutFlags PipelineLayoutFlagsOf(const ParsedFlags& flags,
                                          int64_t layers, int64_t mtp_layers,
                                          int64_t p, int64_t v,
                                          bool virtual_given) {
  PipelineLayoutFlags f;
  f.num_layers = layers;
  f.mtp_layers = mtp_layers;
  f.pipeline = p;
  f.virtual_stages = v;
  f.virtual_given = virtual_given;
  f.layers_per_virtual_stage =
      flags.Integer("--num-layers-per-virtual-pipeline-stage");
  f.first = flags.Integer("--decoder-first-pipeline-num-layers");
  f.last = flags.Integer("--decoder-last-pipeline-num-layers");
  f.account_embedding =
      flags.Switch("--account-for-embedding-in-pipeline-split");
  f.account_loss = flags.Switch("--account-for-loss-in-pipeline-split");
  if (const Value* layout = flags.Find("--pipeline-model-parallel-layout")) {
    f.layout = layout->pattern;
  }
  return f;
}

// The data degree, the schedule, recompute, TP communication and the knobs
// Megatron-LM has no flag for.
void ParallelismRules(const System& system, Conversion* c) {
  const ParsedFlags& flags = c->flags;
  auto& parallelism = c->spec.parallelism;
  const int64_t t = parallelism.tensor.degree;
  const int64_t p = parallelism.pipeline.degree;

  const int64_t cp = parallelism.context.degree;

  int64_t d = 1;
  if (std::optional<int64_t> world = flags.Integer("--world-size")) {
    const std::optional<int64_t> model_parallel = CheckedProduct({t, cp, p});
    if (!model_parallel || *world % *model_parallel != 0) {
      c->Error("--world-size", ErrorCode::kNotDivisible,
               absl::StrCat(
                   "--world-size (", *world,
                   ") must be divisible by "
                   "--tensor-model-parallel-size (",
                   t, ") * ",
                   flags.Given("--context-parallel-size")
                       ? absl::StrCat("--context-parallel-size (", cp, ") * ")
                       : "",
                   "--pipeline-model-parallel-size (", p, ")"));
    } else {
      d = *world / *model_parallel;
    }
  }

  // Pipeline schedule: v from at most one of three flags.
  int64_t v = 1;
  const std::optional<int64_t> layers = flags.Integer("--num-layers");
  const std::optional<int64_t> layers_per_virtual =
      flags.Integer("--num-layers-per-virtual-pipeline-stage");
  std::vector<std::string> chunk_flags;
  std::optional<int64_t> chunks;
  for (const char* name : {"--virtual-pipeline-model-parallel-size",
                           "--num-virtual-stages-per-pipeline-rank",
                           "--num-layers-per-virtual-pipeline-stage"}) {
    if (!flags.Integer(name)) continue;
    chunk_flags.push_back(name);
    if (name != std::string("--num-layers-per-virtual-pipeline-stage")) {
      chunks = flags.Integer(name);
    }
  }
  if (chunk_flags.size() > 1) {
    c->Error(
        "parallelism.pipeline.schedule", ErrorCode::kInconsistent,
        absl::StrCat(
            absl::StrJoin(chunk_flags.begin(), chunk_flags.end() - 1, ", "),
            " and ", chunk_flags.back(),
            chunk_flags.size() == 2 ? " cannot both be given"
                                    : " cannot be given together"));
  } else if (chunks) {
    v = *chunks;
  } else if (layers_per_virtual && layers &&
             (flags.Switch("--account-for-embedding-in-pipeline-split") ||
              flags.Switch("--account-for-loss-in-pipeline-split"))) {
    // The stage layout's rule counts the embedding and loss first.
  } else if (layers_per_virtual && layers) {
    if (*layers % p != 0) {
      c->Error("--num-layers-per-virtual-pipeline-stage",
               ErrorCode::kNotDivisible,
               absl::StrCat("--num-layers (", *layers,
                            ") must be divisible by "
                            "--pipeline-model-parallel-size (",
                            p,
                            ") to use "
                            "--num-layers-per-virtual-pipeline-stage"));
    } else if ((*layers / p) % *layers_per_virtual != 0) {
      c->Error("--num-layers-per-virtual-pipeline-stage",
               ErrorCode::kNotDivisible,
               absl::StrCat("--num-layers-per-virtual-pipeline-stage (",
                            *layers_per_virtual,
                            ") must divide the layers per pipeline stage "
                            "(--num-layers ",
                            *layers, " / --pipeline-model-parallel-size ", p,
                            " = ", *layers / p, ")"));
    } else {
      v = *layers / p / *layers_per_virtual;
    }
  }
  if (layers) {
    PipelineLayout layout = PipelineLayoutOf(PipelineLayoutFlagsOf(
        flags, *layers, c->spec.model.mtp_layers, p, v, !chunk_flags.empty()));
    c->errors.insert(c->errors.end(), layout.errors.begin(),
                     layout.errors.end());
    c->notes.insert(c->notes.end(), layout.notes.begin(), layout.notes.end());
    v = layout.virtual_stages;
    parallelism.pipeline.stage_blocks = std::move(layout.stage_blocks);
  }
  if (v > 1) {
    parallelism.pipeline.schedule = InterleavedOneForwardOneBackward{v};
  } else if (p == 1) {
    parallelism.pipeline.schedule = SingleStage{};
  } else {
    parallelism.pipeline.schedule = OneForwardOneBackward{};
  }
  parallelism.pipeline.stage_layout = StageLayout::kEven;
  parallelism.pipeline.network_tier = OutermostTier(system);

  // Recompute: the granularity set the policy (Megatron-LM's older
  // --recompute-activations overrides it); the method and the number of
  // layers must fit it.
  if (flags.Switch("--recompute-activations")) {
    parallelism.recompute = RecomputePolicy::kAttentionOnly;
  }
  const std::optional<std::string> method = flags.Choice("--recompute-method");
  const std::optional<int64_t> recompute_layers =
      flags.Integer("--recompute-num-layers");
  if (parallelism.recompute != RecomputePolicy::kFull) {
    if (method) {
      c->Error("--recompute-method", ErrorCode::kInconsistent,
               "--recompute-method only applies to --recompute-granularity "
               "full");
    }
    if (recompute_layers) {
      c->Error("--recompute-num-layers", ErrorCode::kInconsistent,
               "--recompute-num-layers only applies to --recompute-granularity "
               "full");
    }
  } else if (!method) {
    c->Error("--recompute-method", ErrorCode::kMissingField,
             "--recompute-granularity full needs --recompute-method uniform");
  } else if (*method == "block") {
    c->Error("--recompute-method", ErrorCode::kUnsupported,
             "--recompute-method block recomputes only some blocks of each "
             "stage, which the model cannot represent (it recomputes every "
             "block); use --recompute-method uniform");
  } else if (recompute_layers && *recompute_layers != 1) {
    c->Error("--recompute-num-layers", ErrorCode::kUnsupported,
             absl::StrCat("--recompute-num-layers ", *recompute_layers,
                          " keeps the input of every ", *recompute_layers,
                          "th block only, which the model cannot represent (it "
                          "keeps each block's input); use "
                          "--recompute-num-layers 1"));
  }

  // Tensor parallelism: Megatron-LM turns sequence parallelism off at t == 1.
  parallelism.tensor.overlap = TensorOverlap::kNone;
  parallelism.tensor.network_tier = 0;
  if (flags.Switch("--sequence-parallel") && t > 1) {
    parallelism.tensor.communication = ReduceScatterAllGather{
        parallelism.recompute == RecomputePolicy::kAttentionOnly};
  } else {
    parallelism.tensor.communication = AllReduce{};
    if (flags.Switch("--sequence-parallel")) {
      c->notes.push_back(
          "--sequence-parallel has no effect with one tensor-parallel rank, as "
          "in Megatron-LM");
    }
  }

  ContextRules(system, c);
  ExpertRules(system, c);
  DispatcherRules(c);

  // Data parallelism: with one rank there is nothing to shard or overlap.
  const bool fsdp = flags.Switch("--use-megatron-fsdp");
  if (flags.Switch("--overlap-param-gather")) {
    if (!flags.Switch("--overlap-grad-reduce")) {
      c->Error("--overlap-param-gather", ErrorCode::kInconsistent,
               "--overlap-param-gather needs --overlap-grad-reduce, as "
               "Megatron-LM asserts");
    }
    if (!flags.Switch("--use-distributed-optimizer") && !fsdp) {
      c->Error("--overlap-param-gather", ErrorCode::kInconsistent,
               "--overlap-param-gather needs --use-distributed-optimizer or "
               "--use-megatron-fsdp, as Megatron-LM asserts");
    }
  }
  parallelism.data.degree = d;
  parallelism.data.network_tier = OutermostTier(system);
  parallelism.data.sharding = NoSharding{};
  if (fsdp) {
    parallelism.data.sharding =
        ShardingOfStrategy(flags.Choice("--data-parallel-sharding-strategy")
                               .value_or("optim_grads_params"));
  } else if (flags.Switch("--use-distributed-optimizer")) {
    parallelism.data.sharding = ShardOptimizer{};
  }
  if (!fsdp) {
    NoteIdle(flags, {"--data-parallel-sharding-strategy"},
             "--use-megatron-fsdp", &c->notes);
  }
  if (d == 1) {
    std::vector<std::string> idle;
    for (const char* name :
         {"--use-distributed-optimizer", "--use-megatron-fsdp",
          "--overlap-grad-reduce", "--overlap-param-gather"}) {
      if (flags.Switch(name)) idle.push_back(name);
    }
    if (!idle.empty()) {
      c->notes.push_back(absl::StrCat(
          absl::StrJoin(idle, " and "), idle.size() == 1 ? " has" : " have",
          " no effect with one data-parallel rank (--world-size = "
          "--tensor-model-parallel-size * ",
          cp > 1 ? "--context-parallel-size * " : "",
          "--pipeline-model-parallel-size)"));
    }
    parallelism.data.sharding = NoSharding{};
    parallelism.data.overlap = false;
  }
}

// The global batch's default.
void BatchRules(Conversion* c) {
  const std::optional<int64_t> micro = c->flags.Integer("--micro-batch-size");
  if (c->flags.Integer("--global-batch-size") || !micro) return;
  const int64_t d = c->spec.parallelism.data.degree;
  const std::optional<int64_t> global = CheckedMul(*micro, d);
  if (!global) {
    c->Error("batch.global_batch_size", ErrorCode::kOutOfRange,
             absl::StrCat(
                 "--global-batch-size defaults to --micro-batch-size (", *micro,
                 ") * data-parallel size (", d, "), which overflows 64 bits"));
  }
  c->spec.batch.global_batch_size = global.value_or(0);
}

// The recipe (megatron/training/arguments.py: --fp8-recipe defaults to
// delayed, --fp4-recipe to nvfp4; FP8 and FP4 training exclude each other,
// megatron/core/fp4_utils.py and fp8_utils.py pick one autocast).
void RecipeRules(Conversion* c, bool fp8) {
  const bool fp4 = c->flags.Choice("--fp4-format").has_value();
  const std::optional<std::string> fp8_recipe = c->flags.Choice("--fp8-recipe");
  if (fp8 && fp4) {
    c->Error("options.recipe", ErrorCode::kInconsistent,
             "--fp8-format and --fp4-format cannot both be given: Megatron-LM "
             "trains in one low-precision format");
  }
  if (fp8_recipe && !fp8) {
    c->Error("options.recipe", ErrorCode::kInconsistent,
             absl::StrCat("--fp8-recipe ", *fp8_recipe,
                          " needs --fp8-format: the recipe scales FP8 GEMMs"));
  }
  if (c->flags.Choice("--fp4-recipe") && !fp4) {
    c->Error("options.recipe", ErrorCode::kInconsistent,
             "--fp4-recipe needs --fp4-format: the recipe scales FP4 GEMMs");
  }
  // The BF16 layers (megatron/core/fp8_utils.py is_first_last_bf16_layer:
  // the counts count only with the switch, each 1 by default,
  // transformer_config.py).
  if (c->flags.Switch("--first-last-layers-bf16")) {
    c->spec.options.unquantized_first_blocks =
        c->flags.Integer("--num-layers-at-start-in-bf16").value_or(1);
    c->spec.options.unquantized_last_blocks =
        c->flags.Integer("--num-layers-at-end-in-bf16").value_or(1);
  }
  if (fp4 && !fp8) {
    c->spec.options.gemm_datatype = DataType::kFloat4;
    c->spec.options.recipe = QuantizationRecipe::kNvfp4;
    return;
  }
  if (!fp8) return;
  static const auto* const kRecipes =
      new std::map<std::string, QuantizationRecipe>{
          {"tensorwise", QuantizationRecipe::kFp8Tensorwise},
          {"delayed", QuantizationRecipe::kFp8Delayed},
          {"mxfp8", QuantizationRecipe::kMxfp8},
          {"blockwise", QuantizationRecipe::kFp8Blockwise},
      };
  const auto it = kRecipes->find(fp8_recipe.value_or("delayed"));
  if (it != kRecipes->end()) c->spec.options.recipe = it->second;
}

// The datatype, and the options Megatron-LM has no flag for.
void OptionsRules(Conversion* c) {
  const bool fp16 = c->flags.Switch("--fp16");
  const bool bf16 = c->flags.Switch("--bf16");
  if (fp16 && bf16) {
    c->Error("options.datatype", ErrorCode::kInconsistent,
             "--fp16 and --bf16 cannot both be given");
  }
  c->spec.options.datatype = fp16   ? DataType::kFloat16
                             : bf16 ? DataType::kBFloat16
                                    : DataType::kFloat32;
  const bool fp8 = c->flags.Choice("--fp8-format").has_value();
  if (fp8) c->spec.options.gemm_datatype = DataType::kFloat8;
  RecipeRules(c, fp8);
  if (c->flags.Switch("--fp8-param-gather")) {
    if (!fp8) {
      c->Error("options.weight_datatype", ErrorCode::kInconsistent,
               "--fp8-param-gather needs --fp8-format: FP8 weights are "
               "Transformer Engine's FP8 training");
    } else {
      c->spec.options.weight_datatype = DataType::kFloat8;
    }
  }
  c->spec.options.precision = PrecisionAccounting::kMegatronMixed;
  // Megatron-Core runs fused (flash) attention: the refined profile's
  // corrections describe it (core/spec/corrections.h).
  c->spec.options.profile = ModelProfile::kRefined;
  c->spec.options.fused_activation = false;
  c->spec.options.attention = AttentionType::kMultiHead;
  c->spec.options.offload = Offload{};
  // megatron/training/arguments.py: with --bf16 the gradients are
  // accumulated and reduced in fp32 unless --grad-reduce-in-bf16 (null
  // leaves that to the refined profile's fp32_gradient_reduction);
  // --accumulate-allreduce-grads-in-fp32 asks for fp32 explicitly.
  if (bf16 && !fp16 && c->flags.Switch("--grad-reduce-in-bf16")) {
    c->spec.options.grad_reduce_datatype = DataType::kBFloat16;
  } else if ((bf16 || fp16) &&
             c->flags.Switch("--accumulate-allreduce-grads-in-fp32")) {
    c->spec.options.grad_reduce_datatype = DataType::kFloat32;
  }
}

}  // namespace

absl::StatusOr<MappingSpec> FromMegatronArgs(
    const std::vector<std::string>& args, const System& system,
    std::vector<std::string>* notes) {
  Conversion c;
  c.flags = ParseArgs(args, &c.errors);
  OtherFlags(&c);
  c.spec.system = system;
  // Section by section, the table's flags and then the section's rules (which
  // read what the table wrote): errors come in this order.
  ApplyFlags("model", &c);
  ModelRules(&c);
  ApplyFlags("parallelism", &c);
  ParallelismRules(system, &c);
  ApplyFlags("batch", &c);
  BatchRules(&c);
  ApplyFlags("options", &c);
  OptionsRules(&c);
  if (notes != nullptr) {
    notes->insert(notes->end(), c.notes.begin(), c.notes.end());
  }
  if (!c.errors.empty()) return InvalidInputError(c.errors);
  return MappingSpec(std::move(c.spec));
}

absl::StatusOr<MappingSpec> FromMegatronArgs(
    const std::vector<std::string>& args, const System& system) {
  return FromMegatronArgs(args, system, nullptr);
}

}  // namespace blueprint
