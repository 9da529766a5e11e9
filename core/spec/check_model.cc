// The checker's rules on the model's sizes and features (rule 1 of
// core/spec/README.md) and on the system's numbers (rule 2), and the
// documented ranges they read, which CheckedFieldRanges exports.
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

namespace blueprint {
namespace check_internal {
namespace {

// The ranges of the system's numbers. Calculon only asks for positive or
// non-negative values; these bounds also keep every time, rate and
// requirement the analysis derives finite: with at most 2^63 bytes or FLOPs
// per operation, the slowest throughput (1e-3 TFLOP/s or GB/s at efficiency
// 1e-3) still gives times below 1e40 s, and the fastest no overflow.
constexpr NumberRange kTflops{1e-3, 1e9, "TFLOP/s", "an engine's peak rate"};
constexpr NumberRange kEfficiency{1e-3, 1, "", "a fraction of the peak"};
constexpr NumberRange kThreshold{0, 1e12, "GFLOP or MB",
                                 "an efficiency row's size threshold"};
constexpr NumberRange kGroupThreshold{0, 1e12, "ranks",
                                      "a measured rate's group size"};
constexpr NumberRange kCapacity{1e-6, 1e15, "GiB", "a memory tier's capacity"};
constexpr NumberRange kOptionalCapacity{
    0, 1e15, "GiB", "a memory tier's capacity, 0 for no offload tier"};
constexpr NumberRange kBandwidth{1e-3, 1e9, "GB/s", "a memory or link rate"};
constexpr NumberRange kLatency{0, 1e3, "s", "a link's latency"};
constexpr NumberRange kScalar{1e-3, 1e3, "", "a collective's size multiplier"};
// Network time multiplies the bytes by 1 + offset / n for a group of n >= 2
// processors: an offset below -2 would make it negative.
constexpr NumberRange kOffset{-2, 1e3, "",
                              "a collective's size offset; 1 + offset / n "
                              "must stay >= 0 for groups of n >= 2"};
constexpr NumberRange kProcessorUsage{
    0, 0.99, "", "the fraction of the processor a link's transfers use"};

//----- Model and system
//---------------------------------------------------------

// kMaxExperts bounds the experts of a layer and kMaxMtpLayers the
// multi-token prediction blocks (far above any model's: DeepSeek-V3 has 256
// and 1), which keeps every count of the accounting exact in a double.
constexpr int64_t kMaxExperts = int64_t{1} << 20;
constexpr int64_t kMaxMtpLayers = 1024;

void CheckMixture(const TransformerModel& model, Collector* out) {
  if (!model.moe.has_value()) return;
  const MixtureOfExperts& moe = *model.moe;
  const bool experts_ok = out->RequirePositive("model.moe.experts", moe.experts);
  if (experts_ok && moe.experts > kMaxExperts) {
    out->Add("model.moe.experts", ErrorCode::kOutOfRange,
             absl::StrCat(Named("model.moe.experts", moe.experts),
                          " must be at most ", kMaxExperts));
  }
  if (out->RequirePositive("model.moe.topk", moe.topk) && experts_ok &&
      moe.topk > moe.experts) {
    out->Add("model.moe.topk", ErrorCode::kOutOfRange,
             absl::StrCat(Named("model.moe.topk", moe.topk),
                          " must be at most ",
                          Named("model.moe.experts", moe.experts)));
  }
  out->RequirePositive("model.moe.ffn", moe.ffn);
  if (moe.shared_ffn < 0) {
    out->Add("model.moe.shared_ffn", ErrorCode::kOutOfRange,
             absl::StrCat(Named("model.moe.shared_ffn", moe.shared_ffn),
                          " must be at least 0 (0: no shared experts)"));
  } else {
    out->RequireAtMostMaxCount("model.moe.shared_ffn", moe.shared_ffn);
  }
  // The busiest expert serves between its even share (1) and every routed
  // token (experts / topk times the share).
  const double most = moe.experts > 0 && moe.topk > 0 && moe.topk <= moe.experts
                          ? static_cast<double>(moe.experts) / moe.topk
                          : 1;
  if (!std::isfinite(moe.capacity_factor) || moe.capacity_factor < 1 ||
      moe.capacity_factor > most) {
    out->Add("model.moe.capacity_factor", ErrorCode::kOutOfRange,
             absl::StrCat(Named("model.moe.capacity_factor",
                                moe.capacity_factor),
                          " must be between 1 (tokens spread evenly) and "
                          "experts / topk (",
                          Num(most), ": every token at the busiest expert)"));
  }
  const std::string& pattern = moe.layer_pattern;
  if (pattern.empty()) return;
  const bool digits =
      pattern.find_first_not_of("01") == std::string::npos;
  if (!digits || static_cast<int64_t>(pattern.size()) != model.num_blocks) {
    out->Add("model.moe.layer_pattern", ErrorCode::kInvalidValue,
             absl::StrCat("model.moe.layer_pattern (", pattern.size(),
                          " characters) must be empty (every block MoE) or "
                          "hold one '0' (dense) or '1' (MoE) per block of ",
                          Named("model.num_blocks", model.num_blocks)));
  } else if (pattern.find('1') == std::string::npos) {
    out->Add("model.moe.layer_pattern", ErrorCode::kInconsistent,
             "model.moe.layer_pattern has no MoE block ('1'): a dense model "
             "has model.moe null");
  }
}

void CheckLatentAttention(const TransformerModel& model, Collector* out) {
  if (!model.latent_attention.has_value()) return;
  const LatentAttention& mla = *model.latent_attention;
  if (mla.q_lora_rank < 0) {
    out->Add("model.latent_attention.q_lora_rank", ErrorCode::kOutOfRange,
             absl::StrCat(Named("model.latent_attention.q_lora_rank",
                                mla.q_lora_rank),
                          " must be at least 0 (0: queries projected "
                          "directly)"));
  }
  out->RequirePositive("model.latent_attention.kv_lora_rank",
                       mla.kv_lora_rank);
  out->RequirePositive("model.latent_attention.qk_head_dim", mla.qk_head_dim);
  if (mla.qk_rope_head_dim < 0) {
    out->Add("model.latent_attention.qk_rope_head_dim",
             ErrorCode::kOutOfRange,
             absl::StrCat(Named("model.latent_attention.qk_rope_head_dim",
                                mla.qk_rope_head_dim),
                          " must be at least 0"));
  }
  out->RequirePositive("model.latent_attention.v_head_dim", mla.v_head_dim);
  for (const int64_t rank : {mla.q_lora_rank, mla.kv_lora_rank,
                             mla.qk_head_dim, mla.qk_rope_head_dim,
                             mla.v_head_dim}) {
    if (rank > kMaxVocabulary) {
      out->Add("model.latent_attention", ErrorCode::kOutOfRange,
               absl::StrCat("model.latent_attention's ranks and head sizes "
                            "must be at most ",
                            kMaxVocabulary, " (got ", rank, ")"));
      break;
    }
  }
  if (model.kv_heads != model.attn_heads) {
    out->Add("model.kv_heads", ErrorCode::kInconsistent,
             absl::StrCat(Named("model.kv_heads", model.kv_heads),
                          " must equal ",
                          Named("model.attn_heads", model.attn_heads),
                          " with model.latent_attention: every head has its "
                          "own key and value from the shared latent"));
  }
  if (mla.qk_head_dim > 0 && mla.qk_rope_head_dim >= 0 &&
      model.attn_size != mla.qk_head_dim + mla.qk_rope_head_dim) {
    out->Add("model.attn_size", ErrorCode::kInconsistent,
             absl::StrCat(Named("model.attn_size", model.attn_size),
                          " must equal model.latent_attention.qk_head_dim + "
                          "qk_rope_head_dim (",
                          mla.qk_head_dim + mla.qk_rope_head_dim,
                          "): the size of a query and key head"));
  }
}

void CheckMtp(const TransformerModel& model, Collector* out) {
  if (model.mtp_layers < 0 || model.mtp_layers > kMaxMtpLayers) {
    out->Add("model.mtp_layers", ErrorCode::kOutOfRange,
             absl::StrCat(Named("model.mtp_layers", model.mtp_layers),
                          " must be between 0 and ", kMaxMtpLayers));
  } else if (model.mtp_layers > 0 && model.vocabulary.size == 0) {
    out->Add("model.mtp_layers", ErrorCode::kInconsistent,
             absl::StrCat(Named("model.mtp_layers", model.mtp_layers),
                          " needs an output layer: model.vocabulary.size "
                          "must be positive (got 0)"));
  }
}

}  // namespace

void CheckModel(const TransformerModel& model, Collector* out) {
  out->RequirePositive("model.hidden", model.hidden);
  out->RequirePositive("model.feedforward", model.feedforward);
  out->RequirePositive("model.attn_heads", model.attn_heads);
  out->RequirePositive("model.attn_size", model.attn_size);
  out->RequirePositive("model.num_blocks", model.num_blocks);
  out->RequirePositive("model.seq_size", model.seq_size);
  if (out->RequirePositive("model.kv_heads", model.kv_heads) &&
      model.attn_heads > 0 && model.attn_heads % model.kv_heads != 0) {
    out->Add(
        "model.kv_heads", ErrorCode::kNotDivisible,
        absl::StrCat(Named("model.kv_heads", model.kv_heads), " must divide ",
                     Named("model.attn_heads", model.attn_heads),
                     ": each key/value head serves a whole group of "
                     "query heads"));
  }
  const Vocabulary& vocab = model.vocabulary;
  if (vocab.size < 0) {
    out->Add("model.vocabulary.size", ErrorCode::kOutOfRange,
             absl::StrCat(Named("model.vocabulary.size", vocab.size),
                          " must be at least 0 (0: no embedding and no "
                          "output layer, Calculon's model)"));
  }
  out->RequirePositive("model.vocabulary.divisible_by", vocab.divisible_by);
  if (vocab.size > kMaxVocabulary) {
    out->Add("model.vocabulary.size", ErrorCode::kOutOfRange,
             absl::StrCat(Named("model.vocabulary.size", vocab.size),
                          " must be at most ", kMaxVocabulary));
  }
  if (vocab.divisible_by > kMaxVocabulary) {
    out->Add(
        "model.vocabulary.divisible_by", ErrorCode::kOutOfRange,
        absl::StrCat(Named("model.vocabulary.divisible_by", vocab.divisible_by),
                     " must be at most ", kMaxVocabulary));
  }
  if (vocab.max_positions < 0 || vocab.max_positions > kMaxVocabulary) {
    out->Add("model.vocabulary.max_positions", ErrorCode::kOutOfRange,
             absl::StrCat(
                 Named("model.vocabulary.max_positions", vocab.max_positions),
                 " must be between 0 and ", kMaxVocabulary));
  }
  CheckMixture(model, out);
  CheckLatentAttention(model, out);
  CheckMtp(model, out);
  if (vocab.position == PositionEmbedding::kLearned) {
    if (vocab.size == 0) {
      out->Add("model.vocabulary.position_embedding", ErrorCode::kInconsistent,
               "model.vocabulary.position_embedding learned needs an input "
               "embedding: model.vocabulary.size must be positive (got 0)");
    }
    if (model.seq_size > 0 && vocab.max_positions < model.seq_size) {
      out->Add(
          "model.vocabulary.max_positions", ErrorCode::kOutOfRange,
          absl::StrCat(
              Named("model.vocabulary.max_positions", vocab.max_positions),
              " must be at least ", Named("model.seq_size", model.seq_size),
              " with a learned position embedding"));
    }
  }
}

namespace {

// Calculon looks efficiencies up by taking the first row whose threshold is
// <= the operation size, so rows must descend strictly and end at 0 for every
// size to find one.
// `thresholds` and `values`: the ranges of a row's two numbers (an
// efficiency table's by default; a measured bus bandwidth table's are ranks
// and GB/s).
void CheckEfficiencyTable(const std::vector<EfficiencyRow>& rows,
                          const std::string& path, Collector* out,
                          const NumberRange& thresholds = kThreshold,
                          const NumberRange& values = kEfficiency) {
  if (rows.empty()) {
    out->Add(path, ErrorCode::kOutOfRange,
             absl::StrCat(path, " must have at least one row"));
    return;
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string row = absl::StrCat(path, "[", i, "]");
    const double threshold = rows[i].threshold;
    out->RequireWithin(row + "[0]", threshold, thresholds);
    out->RequireWithin(row + "[1]", rows[i].efficiency, values);
    if (i > 0 && !(threshold < rows[i - 1].threshold)) {
      out->Add(row + "[0]", ErrorCode::kInvalidValue,
               absl::StrCat(path, " thresholds must be strictly descending: ",
                            Named(row + "[0]", threshold), " is not below ",
                            Named(absl::StrCat(path, "[", i - 1, "][0]"),
                                  rows[i - 1].threshold)));
    }
  }
  const double last = rows.back().threshold;
  if (last != 0) {
    const std::string field = absl::StrCat(path, "[", rows.size() - 1, "][0]");
    out->Add(field, ErrorCode::kInvalidValue,
             absl::StrCat(path,
                          " must end with threshold 0 so that "
                          "every size finds an efficiency (",
                          field, " is ", Num(last), ")"));
  }
}

void CheckProcessor(const Processor& processor, const std::string& path,
                    Collector* out) {
  if (processor.rates.empty()) {
    out->Add(path, ErrorCode::kOutOfRange,
             absl::StrCat(path, " must list at least one datatype"));
  }
  for (const auto& [datatype, rate] : processor.rates) {
    const std::string rate_path =
        absl::StrCat(path, ".", DataTypeName(datatype));
    out->RequireWithin(rate_path + ".tflops", rate.tflops, kTflops);
    CheckEfficiencyTable(rate.gflops_efficiency,
                         rate_path + ".gflops_efficiency", out);
    if (rate.achievable_tflops.has_value()) {
      const std::string field = rate_path + ".achievable_tflops";
      out->RequireWithin(field, *rate.achievable_tflops, kTflops);
      // A measured rate cannot beat the peak it is measured against.
      if (*rate.achievable_tflops > rate.tflops) {
        out->Add(field, ErrorCode::kOutOfRange,
                 absl::StrCat(field, " (", Num(*rate.achievable_tflops),
                              ") must not exceed ", rate_path, ".tflops (",
                              Num(rate.tflops), "): a measured rate is at "
                              "most the peak"));
      }
    }
  }
}

// A capacity of 0 is allowed for the second tier only: a system without an
// offload tier (Calculon's search then offers no offload; any offload fails
// the capacity check of the analysis).
void CheckMemory(const MemoryTier& memory, const std::string& path,
                 bool may_be_empty, Collector* out) {
  out->RequireWithin(path + ".GiB", memory.gib,
                     may_be_empty ? kOptionalCapacity : kCapacity);
  out->RequireWithin(path + ".GBps", memory.gbps, kBandwidth);
  CheckEfficiencyTable(memory.mb_efficiency, path + ".MB_efficiency", out);
}

void CheckNetworkOp(const NetworkOpCost& op, const std::string& path,
                    bool collective, Collector* out) {
  out->RequireWithin(path + "[0]", op.scalar, kScalar);
  const std::string offset_path = path + "[1]";
  if (collective) {
    if (!op.offset.has_value()) {
      out->Add(offset_path, ErrorCode::kWrongType,
               absl::StrCat(offset_path,
                            " must be a number: a collective needs an offset"));
    } else {
      out->RequireWithin(offset_path, *op.offset, kOffset);
    }
  } else if (op.offset.has_value()) {
    out->Add(
        offset_path, ErrorCode::kWrongType,
        absl::StrCat(Named(offset_path, *op.offset),
                     " must be null: point-to-point sends have no offset"));
  }
}

void CheckNetwork(const NetworkTier& network, const std::string& path,
                  Collector* out) {
  out->RequireWithin(path + ".bandwidth", network.bandwidth_gbps, kBandwidth);
  out->RequireWithin(path + ".efficiency", network.efficiency, kEfficiency);
  out->RequireAtLeastOne(path + ".size", network.size);
  out->RequireWithin(path + ".latency", network.latency_s, kLatency);
  CheckNetworkOp(network.p2p, path + ".ops.p2p", /*collective=*/false, out);
  CheckNetworkOp(network.reduce_scatter, path + ".ops.reduce_scatter",
                 /*collective=*/true, out);
  CheckNetworkOp(network.all_gather, path + ".ops.all_gather",
                 /*collective=*/true, out);
  CheckNetworkOp(network.all_reduce, path + ".ops.all_reduce",
                 /*collective=*/true, out);
  out->RequireWithin(path + ".processor_usage", network.processor_usage,
                     kProcessorUsage);
  for (const auto& [key, op] : NetworkCollectives(network)) {
    if (op->measured_busbw.empty()) continue;
    CheckEfficiencyTable(op->measured_busbw,
                         absl::StrCat(path, ".measured_busbw.", key), out,
                         kGroupThreshold, kBandwidth);
  }
}

}  // namespace

void CheckSystem(const System& system, Collector* out) {
  CheckProcessor(system.matrix, "system.matrix", out);
  CheckProcessor(system.vector, "system.vector", out);
  CheckMemory(system.mem1, "system.mem1", /*may_be_empty=*/false, out);
  CheckMemory(system.mem2, "system.mem2", /*may_be_empty=*/true, out);
  if (system.networks.empty()) {
    out->Add("system.networks", ErrorCode::kOutOfRange,
             "system.networks must list at least one network tier");
  }
  if (system.networks.size() > static_cast<size_t>(kMaxNetworkTiers)) {
    out->Add("system.networks", ErrorCode::kOutOfRange,
             absl::StrCat("system.networks lists ", system.networks.size(),
                          " network tiers, more than the limit of ",
                          kMaxNetworkTiers,
                          " (a real system has a few: NVLink, node, rack, "
                          "pod; the search tries every tier for every "
                          "parallel dimension)"));
  }
  for (size_t i = 0; i < system.networks.size(); ++i) {
    CheckNetwork(system.networks[i], absl::StrCat("system.networks[", i, "]"),
                 out);
  }
}

}  // namespace check_internal

namespace check_internal {
namespace {

std::vector<FieldRange> Ranges() {
  std::vector<FieldRange> out;
  auto number = [&](const std::string& field, const NumberRange& range) {
    out.push_back({field, range.min, range.max, range.unit, range.why});
  };
  for (const char* engine : {"system.matrix", "system.vector"}) {
    const std::string rate = absl::StrCat(engine, ".<datatype>");
    number(rate + ".tflops", kTflops);
    number(rate + ".gflops_efficiency[][0]", kThreshold);
    number(rate + ".gflops_efficiency[][1]", kEfficiency);
    number(rate + ".achievable_tflops", kTflops);
  }
  for (const char* tier : {"system.mem1", "system.mem2"}) {
    number(absl::StrCat(tier, ".GiB"),
           std::string(tier) == "system.mem2" ? kOptionalCapacity : kCapacity);
    number(absl::StrCat(tier, ".GBps"), kBandwidth);
    number(absl::StrCat(tier, ".MB_efficiency[][0]"), kThreshold);
    number(absl::StrCat(tier, ".MB_efficiency[][1]"), kEfficiency);
  }
  number("system.networks[].bandwidth", kBandwidth);
  number("system.networks[].efficiency", kEfficiency);
  number("system.networks[].latency", kLatency);
  for (const char* op : {"p2p", "reduce_scatter", "all_gather", "all_reduce"}) {
    number(absl::StrCat("system.networks[].ops.", op, "[0]"), kScalar);
    if (std::string(op) != "p2p") {
      number(absl::StrCat("system.networks[].ops.", op, "[1]"), kOffset);
    }
  }
  number("system.networks[].processor_usage", kProcessorUsage);
  const NetworkTier names;
  for (const auto& [op, unused] : NetworkCollectives(names)) {
    number(absl::StrCat("system.networks[].measured_busbw.", op, "[][0]"),
           kGroupThreshold);
    number(absl::StrCat("system.networks[].measured_busbw.", op, "[][1]"),
           kBandwidth);
  }

  // The integer rules: every integer of the spec has a documented minimum
  // and maximum (kMaxCount unless a rule above says less).
  auto integer = [&](const std::string& field, int64_t min, int64_t max,
                     const char* why) {
    out.push_back({field, static_cast<double>(min), static_cast<double>(max),
                   "", why});
  };
  for (const char* size : {"hidden", "feedforward", "attn_heads", "attn_size",
                           "num_blocks", "seq_size", "kv_heads"}) {
    integer(absl::StrCat("model.", size), 1, kMaxCount, "a model size");
  }
  integer("model.vocabulary.size", 0, kMaxVocabulary,
          "tokens before padding; 0: no embedding and no output layer");
  integer("model.vocabulary.divisible_by", 1, kMaxVocabulary,
          "the vocabulary is padded to a multiple of this times the tensor "
          "degree");
  integer("model.vocabulary.max_positions", 0, kMaxVocabulary,
          "rows of a learned position table");
  integer("model.moe.experts", 1, kMaxExperts, "routed experts per MoE block");
  integer("model.moe.topk", 1, kMaxExperts,
          "experts per token, at most model.moe.experts");
  integer("model.moe.ffn", 1, kMaxCount, "an expert's intermediate size");
  integer("model.moe.shared_ffn", 0, kMaxCount,
          "the shared experts' intermediate size, 0: none");
  for (const char* rank : {"q_lora_rank", "qk_rope_head_dim"}) {
    integer(absl::StrCat("model.latent_attention.", rank), 0, kMaxVocabulary,
            "a latent-attention rank or head size (0: none)");
  }
  for (const char* rank : {"kv_lora_rank", "qk_head_dim", "v_head_dim"}) {
    integer(absl::StrCat("model.latent_attention.", rank), 1, kMaxVocabulary,
            "a latent-attention rank or head size");
  }
  integer("model.mtp_layers", 0, kMaxMtpLayers,
          "multi-token prediction blocks on the last stage");
  integer("system.networks", 1, kMaxNetworkTiers,
          "the number of network tiers");
  integer("system.networks[].size", 1, kMaxCount,
          "processors a network tier connects");
  for (const char* dim : {"parallelism.tensor", "parallelism.pipeline",
                          "parallelism.data", "parallelism.replica",
                          "parallelism.context", "parallelism.expert"}) {
    integer(absl::StrCat(dim, ".degree"), 1, kMaxCount, "a degree");
    integer(absl::StrCat(dim, ".network_tier"), 0, kMaxNetworkTiers - 1,
            "an index into system.networks (below its length), checked "
            "whatever the degree");
  }
  integer("parallelism.pipeline.schedule.virtual_stages", 1, kMaxCount,
          "chunks per stage: at least 2 for interleaved_1f1b, at least 1 for "
          "forward_only; divides blocks_per_stage");
  integer("parallelism.expert.tensor_degree", 0, kMaxCount,
          "ranks each expert's matrices split over; 0: the tensor degree");
  integer("parallelism.data.sharding.group", 0, kMaxCount,
          "ranks sharing one copy of the sharded state: 0 (all d) or a "
          "divisor of d above 1");
  integer("batch.global_batch_size", 1, kMaxCount,
          "divisible by the data degree times the microbatch size");
  integer("batch.microbatch_size", 1, kMaxCount, "samples per microbatch");
  for (const char* ends : {"first", "last"}) {
    integer(absl::StrCat("options.unquantized_", ends, "_blocks"), 0,
            kMaxCount,
            "blocks outside the recipe, their GEMMs in options.datatype: at "
            "most model.num_blocks / parallelism.pipeline.degree, none with "
            "fp8_delayed");
  }
  return out;
}

}  // namespace
}  // namespace check_internal

std::vector<FieldRange> CheckedFieldRanges() {
  return check_internal::Ranges();
}

}  // namespace blueprint
