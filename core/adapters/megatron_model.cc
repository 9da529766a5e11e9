// The model section's rules of the Megatron-LM adapter (megatron_internal.h):
// the derived defaults (feed-forward and head sizes), grouped-query and
// multi-latent attention, the mixture of experts and its layer pattern, the
// biases, the vocabulary and the position embedding.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/adapters/layer_pattern.h"
#include "core/adapters/megatron_internal.h"
#include "core/base/checked_math.h"
#include "core/base/field_errors.h"
#include "core/base/format.h"

namespace blueprint {
namespace megatron_internal {
namespace {

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
                "--moe-expert-capacity-factor", "--moe-router-fusion"},
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
  moe.router_fusion = flags.Switch("--moe-router-fusion");

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

}  // namespace

PositionEmbedding PositionOf(const std::string& choice) {
  return choice == "rope"   ? PositionEmbedding::kRope
         : choice == "none" ? PositionEmbedding::kNone
                            : PositionEmbedding::kLearned;
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

}  // namespace megatron_internal
}  // namespace blueprint
