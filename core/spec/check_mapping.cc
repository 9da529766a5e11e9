// The checker's rules on the mapping's degrees: degrees and the world size,
// network tiers and their assignments (rules 4 and 5 of
// core/spec/README.md), expert parallelism, the batch (rule 6) and one
// block's work (rule 9); and the values the mapping rules' table reads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/checked_math.h"
#include "core/base/field_errors.h"
#include "core/spec/check_internal.h"
#include "core/spec/derive.h"
#include "core/spec/spec_schedule.h"

namespace blueprint {
namespace check_internal {

MappingValues MappingValuesOf(const SpecView& view,
                              const char* virtual_stages_field) {
  MappingValues values;
  values.model = view.model;
  values.tensor = view.tensor->degree;
  values.pipeline = view.pipeline->degree;
  values.data = view.data_degree;
  if (view.context != nullptr) values.context = view.context->degree;
  values.expert_tensor = values.tensor;
  if (view.expert != nullptr) {
    values.expert = view.expert->degree;
    values.expert_tensor = ExpertTensorDegree(*view.expert, values.tensor);
  }
  values.microbatch = view.batch->microbatch_size;
  values.splits_activations = SplitsActivations(view.tensor->communication);
  values.virtual_stages_field = virtual_stages_field;
  values.schedule_name = PipelineScheduleName(view.pipeline->schedule);
  values.communication_name =
      TensorCommunicationName(view.tensor->communication);
  return values;
}

//----- Degrees and networks
//------------------------------------------------------

// The dimensions whose product is the world size (t, p, d and, for
// training, cp); expert parallelism is folded onto their ranks.
std::vector<Dimension> DimensionsOf(const SpecView& view) {
  std::vector<Dimension> dims = {
      {"parallelism.tensor.degree", "parallelism.tensor.network_tier",
       view.tensor->degree, view.tensor->network_tier},
      {"parallelism.pipeline.degree", "parallelism.pipeline.network_tier",
       view.pipeline->degree, view.pipeline->network_tier},
      {absl::StrCat(view.data_path, ".degree"),
       absl::StrCat(view.data_path, ".network_tier"), view.data_degree,
       view.data_network_tier},
  };
  if (view.context != nullptr) {
    dims.push_back({"parallelism.context.degree",
                    "parallelism.context.network_tier", view.context->degree,
                    view.context->network_tier});
  }
  return dims;
}

// Returns true when every degree is >= 1 and the world size fits in int64.
bool CheckDegrees(const std::vector<Dimension>& dims, Collector* out) {
  bool ok = true;
  for (const Dimension& dim : dims) {
    ok &= out->RequireAtLeastOne(dim.degree_path, dim.degree);
  }
  if (!ok) return false;
  std::optional<int64_t> world = 1;
  std::vector<std::string> names;
  for (const Dimension& dim : dims) {
    if (world) world = CheckedMul(*world, dim.degree);
    names.push_back(Named(dim.degree_path, dim.degree));
  }
  if (!world) {
    out->Add("parallelism", ErrorCode::kOutOfRange,
             absl::StrCat("world size ", absl::StrJoin(names, " * "),
                          " overflows 64-bit integers"));
    return false;
  }
  return true;
}

// The expert all-to-all's network tier exists.
void CheckExpertTier(const SpecView& view, const ExpertParallel& expert,
                     Collector* out) {
  const int64_t tiers = static_cast<int64_t>(view.system->networks.size());
  if (tiers > 0 && (expert.network_tier < 0 || expert.network_tier >= tiers)) {
    out->Add("parallelism.expert.network_tier", ErrorCode::kOutOfRange,
             absl::StrCat(Named("parallelism.expert.network_tier",
                                expert.network_tier),
                          " must name one of the system's ", tiers,
                          " network tiers (0 to ", tiers - 1, ")"));
  }
}

// Expert parallelism: ep splits the experts, etp each expert's matrices;
// both fold onto the t * cp * d ranks of a pipeline stage.
void CheckExperts(const SpecView& view, const MappingValues& values,
                  bool degrees_ok, Collector* out) {
  if (view.expert == nullptr) return;
  const ExpertParallel& expert = *view.expert;
  const int64_t t = view.tensor->degree;
  // Checked whatever the degree: an unused tier is still printed as derived.
  CheckExpertTier(view, expert, out);
  bool ok = out->RequireAtLeastOne("parallelism.expert.degree", expert.degree);
  if (expert.tensor_degree < 0) {
    ok = false;
    out->Add("parallelism.expert.tensor_degree", ErrorCode::kOutOfRange,
             absl::StrCat(Named("parallelism.expert.tensor_degree",
                                expert.tensor_degree),
                          " must be at least 0 (0: parallelism.tensor.degree)"));
  } else {
    ok &= out->RequireAtMostMaxCount("parallelism.expert.tensor_degree",
                                     expert.tensor_degree);
  }
  const std::optional<MixtureOfExperts>& moe = view.model->moe;
  if (!moe.has_value()) {
    if (expert.degree > 1) {
      out->Add("parallelism.expert.degree", ErrorCode::kInconsistent,
               absl::StrCat(Named("parallelism.expert.degree", expert.degree),
                            " needs experts to split: model.moe is null"));
    }
    if (expert.tensor_degree > 0 && expert.tensor_degree != t) {
      out->Add("parallelism.expert.tensor_degree", ErrorCode::kInconsistent,
               absl::StrCat(Named("parallelism.expert.tensor_degree",
                                  expert.tensor_degree),
                            " needs experts to split: model.moe is null (use "
                            "0 or ",
                            Named("parallelism.tensor.degree", t), ")"));
    }
    return;
  }
  if (expert.degree < 1 || t < 1) return;
  out->AddMappingRules(values, MappingRuleGroup::kExpertCount);
  if (!ok) return;  // the rules below need a valid expert tensor degree
  out->AddMappingRules(values, MappingRuleGroup::kExpertSplit);
  if (!degrees_ok || view.context == nullptr) return;
  out->AddMappingRules(values, MappingRuleGroup::kExpertRanks);
  const int64_t etp = values.expert_tensor;
  const std::optional<int64_t> expert_ranks = CheckedMul(expert.degree, etp);
  const int64_t tiers = static_cast<int64_t>(view.system->networks.size());
  if (expert.network_tier >= 0 && expert.network_tier < tiers &&
      expert.degree > 1 && expert_ranks) {
    const NetworkTier& tier =
        view.system->networks[static_cast<size_t>(expert.network_tier)];
    if (*expert_ranks > tier.size) {
      out->Add(absl::StrCat("system.networks[", expert.network_tier, "].size"),
               ErrorCode::kInconsistent,
               absl::StrCat("network tier ", expert.network_tier,
                            " isn't big enough: the expert all-to-all spans "
                            "parallelism.expert.degree * expert tensor degree "
                            "(",
                            *expert_ranks, ") processors, but system.networks[",
                            expert.network_tier, "].size is ", tier.size));
    }
  }
}

// The expert exchange's overlaps, as Megatron-LM asserts them
// (megatron/core/transformer/transformer_config.py, __post_init__):
// --delay-wgrad-compute needs --overlap-moe-expert-parallel-comm; that needs
// expert parallelism, no full recomputation, no --moe-shared-expert-overlap
// and, on a pipeline, virtual stages (its combined 1F1B pairs a forward and
// a backward chunk) and the alltoall or flex dispatcher; the shared experts'
// overlap needs the alltoall dispatcher.
void CheckExpertOverlap(const SpecView& view, Collector* out) {
  if (view.expert == nullptr) return;
  const ExpertParallel& e = *view.expert;
  constexpr char kOverlap[] = "parallelism.expert.overlap";
  if (e.delay_wgrad && !e.overlap) {
    out->Add("parallelism.expert.delay_wgrad", ErrorCode::kInconsistent,
             "parallelism.expert.delay_wgrad (true) needs "
             "parallelism.expert.overlap: Megatron-LM asserts "
             "--overlap-moe-expert-parallel-comm with --delay-wgrad-compute");
  }
  if (e.shared_expert_overlap && e.dispatcher != ExpertDispatcher::kAllToAll) {
    out->Add("parallelism.expert.shared_expert_overlap",
             ErrorCode::kInconsistent,
             absl::StrCat("parallelism.expert.shared_expert_overlap (true) "
                          "needs the all_to_all dispatcher, not ",
                          ExpertDispatcherName(e.dispatcher),
                          ", as Megatron-LM asserts"));
  }
  if (!e.overlap) return;
  if (e.degree <= 1) {
    out->Add(kOverlap, ErrorCode::kInconsistent,
             absl::StrCat("parallelism.expert.overlap (true) needs expert "
                          "parallelism: ",
                          Named("parallelism.expert.degree", e.degree),
                          " (Megatron-LM asserts ep > 1)"));
  }
  if (!DispatcherRunsExpertOverlap(e.dispatcher)) {
    out->Add(kOverlap, ErrorCode::kInconsistent,
             absl::StrCat("parallelism.expert.overlap (true) needs the "
                          "all_to_all, deep_ep or hybrid_ep dispatcher, not ",
                          ExpertDispatcherName(e.dispatcher),
                          ", as Megatron-LM asserts "
                          "(overlap_moe_expert_parallel_comm with the "
                          "alltoall or flex token dispatcher)"));
  }
  if (e.shared_expert_overlap) {
    out->Add(kOverlap, ErrorCode::kInconsistent,
             "parallelism.expert.overlap and "
             "parallelism.expert.shared_expert_overlap are exclusive, as "
             "Megatron-LM asserts");
  }
  if (view.recompute == RecomputePolicy::kFull) {
    out->Add(kOverlap, ErrorCode::kInconsistent,
             "parallelism.expert.overlap (true) is not run with "
             "parallelism.recompute full, as Megatron-LM asserts");
  }
  if (view.pipeline != nullptr && view.pipeline->degree > 1 &&
      !std::holds_alternative<InterleavedOneForwardOneBackward>(
          view.pipeline->schedule)) {
    out->Add(kOverlap, ErrorCode::kInconsistent,
             absl::StrCat("parallelism.expert.overlap (true) with ",
                          Named("parallelism.pipeline.degree",
                                view.pipeline->degree),
                          " needs the interleaved_1f1b schedule (Megatron-LM "
                          "asserts virtual pipeline stages)"));
  }
}

// Returns true when every dimension names an existing network tier.
bool CheckNetworkTiers(const std::vector<Dimension>& dims, const System& system,
                       Collector* out) {
  const int64_t tiers = static_cast<int64_t>(system.networks.size());
  if (tiers == 0) return false;  // reported by CheckSystem
  bool ok = true;
  for (const Dimension& dim : dims) {
    if (dim.tier >= 0 && dim.tier < tiers) continue;
    ok = false;
    out->Add(dim.tier_path, ErrorCode::kOutOfRange,
             absl::StrCat(Named(dim.tier_path, dim.tier),
                          " must name one of the system's ", tiers,
                          " network tiers (0 to ", tiers - 1, ")"));
  }
  return ok;
}

// Calculon's _check_network_assignments: reports each tier whose mapped
// degrees fail TierAssignmentFits, saying which half of the rule fails.
void CheckNetworkAssignments(const std::vector<Dimension>& dims,
                             const System& system, Collector* out) {
  for (size_t tier = 0; tier < system.networks.size(); ++tier) {
    const NetworkTier& network = system.networks[tier];
    std::vector<std::string> users;
    std::optional<int64_t> product = 1;
    for (const Dimension& dim : dims) {
      if (dim.degree <= 1 || dim.tier != static_cast<int64_t>(tier)) continue;
      users.push_back(Named(dim.degree_path, dim.degree));
      if (product) product = CheckedMul(*product, dim.degree);
    }
    if (users.empty() || network.size < 1) continue;
    if (product && TierAssignmentFits(network, *product)) continue;
    const std::string size_path =
        absl::StrCat("system.networks[", tier, "].size");
    const std::string who = absl::StrJoin(users, " * ");
    const char* verb = users.size() == 1 ? "needs" : "need";
    if (!product || *product > network.size) {
      out->Add(
          size_path, ErrorCode::kInconsistent,
          absl::StrCat("network tier ", tier, " isn't big enough: ", who,
                       " mapped to it ", verb, " ",
                       product ? absl::StrCat(*product) : "more than 2^63",
                       " processors, but ", size_path, " is ", network.size));
    } else {
      out->Add(size_path, ErrorCode::kInconsistent,
               absl::StrCat("network tier ", tier, " isn't fully used: ", who,
                            " mapped to it ",
                            users.size() == 1 ? "uses" : "use", " ", *product,
                            " processors, which does not divide ", size_path,
                            " (", network.size, ") although system.networks[",
                            tier, "].must_be_filled is true"));
    }
  }
}

void CheckBatch(const SpecView& view, bool degrees_ok, Collector* out) {
  const Batch& batch = *view.batch;
  const bool global_ok =
      out->RequirePositive("batch.global_batch_size", batch.global_batch_size);
  const bool micro_ok =
      out->RequirePositive("batch.microbatch_size", batch.microbatch_size);
  if (!global_ok || !degrees_ok) return;
  const std::string data_degree = absl::StrCat(view.data_path, ".degree");
  if (batch.global_batch_size % view.data_degree != 0) {
    out->Add(
        "batch.global_batch_size", ErrorCode::kNotDivisible,
        absl::StrCat(Named("batch.global_batch_size", batch.global_batch_size),
                     " must be divisible by ",
                     Named(data_degree, view.data_degree)));
    return;
  }
  const int64_t local_batch = batch.global_batch_size / view.data_degree;
  if (!micro_ok) return;
  if (local_batch % batch.microbatch_size != 0) {
    out->Add(
        "batch.microbatch_size", ErrorCode::kNotDivisible,
        absl::StrCat("local batch size (batch.global_batch_size ",
                     batch.global_batch_size, " / ", data_degree, " ",
                     view.data_degree, " = ", local_batch,
                     ") must be divisible by ",
                     Named("batch.microbatch_size", batch.microbatch_size)));
  }
}

// Later passes count one block's GEMM work in 64-bit integers: refuse sizes
// whose largest per-block products would overflow.
// The sum of the model's hidden size and every latent-attention rank and
// head size: a bound on the inner size of each latent-attention GEMM.
std::optional<int64_t> LatentWidth(const TransformerModel& m) {
  std::optional<int64_t> sum = m.hidden;
  const LatentAttention& l = *m.latent_attention;
  for (const int64_t part : {l.q_lora_rank, l.kv_lora_rank, l.qk_head_dim,
                             l.qk_rope_head_dim, l.v_head_dim}) {
    if (sum) sum = CheckedAdd(*sum, part > 0 ? part : 0);
  }
  return sum;
}

void CheckWorkFits(const SpecView& view, Collector* out) {
  const TransformerModel& m = *view.model;
  const int64_t b = view.batch->microbatch_size;
  if (m.hidden < 1 || m.feedforward < 1 || m.attn_heads < 1 ||
      m.attn_size < 1 || m.seq_size < 1 || b < 1) {
    return;
  }
  // A factor over its own maximum is reported on its field already.
  for (const int64_t factor :
       {m.hidden, m.feedforward, m.attn_heads, m.attn_size, m.seq_size, b,
        m.moe ? m.moe->ffn : 0, m.moe ? m.moe->shared_ffn : 0}) {
    if (factor > kMaxCount) return;
  }
  const std::optional<int64_t> padded =
      PaddedVocabulary(m.vocabulary, view.tensor->degree);
  if (!padded) {
    out->Add("model.vocabulary.divisible_by", ErrorCode::kOutOfRange,
             absl::StrCat("the vocabulary's padding multiple ",
                          Named("model.vocabulary.divisible_by",
                                m.vocabulary.divisible_by),
                          " * parallelism.tensor.degree overflows 64-bit "
                          "integers"));
  }
  // Each product names the model field it is about (the one a fix would
  // most likely change).
  const struct {
    const char* field;
    const char* formula;
    std::optional<int64_t> value;
  } products[] = {
      {"model.feedforward", "2 * b * s * hidden * feedforward",
       CheckedProduct({2, b, m.seq_size, m.hidden, m.feedforward})},
      {"model.attn_size", "2 * b * s * hidden * attn_heads * attn_size",
       CheckedProduct({2, b, m.seq_size, m.hidden, m.attn_heads, m.attn_size})},
      {"model.seq_size", "4 * b * attn_heads * s * s * attn_size",
       CheckedProduct(
           {4, b, m.attn_heads, m.seq_size, m.seq_size, m.attn_size})},
      {"model.moe.ffn", "2 * b * s * hidden * moe.ffn * moe.experts",
       !m.moe.has_value()
           ? std::optional<int64_t>(0)
           : CheckedProduct({2, b, m.seq_size, m.hidden, m.moe->ffn,
                             m.moe->experts})},
      {"model.moe.shared_ffn", "2 * b * s * hidden * moe.shared_ffn",
       !m.moe.has_value()
           ? std::optional<int64_t>(0)
           : CheckedProduct(
                 {2, b, m.seq_size, m.hidden, m.moe->shared_ffn})},
      {"model.latent_attention",
       "2 * b * s * attn_heads * (latent ranks and head sizes)",
       !m.latent_attention.has_value()
           ? std::optional<int64_t>(0)
           : LatentWidth(m).has_value()
                 ? CheckedProduct({2, b, m.seq_size, m.attn_heads,
                                   *LatentWidth(m)})
                 : std::nullopt},
      {"model.vocabulary.size", "2 * b * s * hidden * padded vocabulary",
       padded.value_or(0) == 0
           ? std::optional<int64_t>(0)
           : CheckedProduct({2, b, m.seq_size, m.hidden, *padded})},
  };
  for (const auto& product : products) {
    if (product.value) continue;
    out->Add(product.field, ErrorCode::kOutOfRange,
             absl::StrCat("one block's work ", product.formula,
                          " (b = batch.microbatch_size, s = model.seq_size) "
                          "overflows 64-bit integers"));
  }
}

}  // namespace check_internal
}  // namespace blueprint
