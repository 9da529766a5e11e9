#include "core/spec/check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/checked_math.h"
#include "core/base/field_errors.h"
#include "core/base/format.h"
#include "core/base/status_macros.h"
#include "core/schedule/schedule_ir.h"
#include "core/spec/derive.h"
#include "core/spec/recipes.h"
#include "core/spec/spec_schedule.h"
#include "core/spec/spec_view.h"

namespace blueprint {
namespace {

using spec_internal::SpecView;
using spec_internal::ViewOf;

std::string Num(double value) { return FormatDouble(value); }

// "path (value)", the way every message names a field.
std::string Named(const std::string& path, int64_t value) {
  return absl::StrCat(path, " (", value, ")");
}
std::string Named(const std::string& path, double value) {
  return absl::StrCat(path, " (", Num(value), ")");
}

// The ranges of the system's numbers. Calculon only asks for positive or
// non-negative values; these bounds also keep every time, rate and
// requirement the analysis derives finite: with at most 2^63 bytes or FLOPs
// per operation, the slowest throughput (1e-3 TFLOP/s or GB/s at efficiency
// 1e-3) still gives times below 1e40 s, and the fastest no overflow.
struct NumberRange {
  double min;
  double max;
  const char* unit;
  const char* why;
};
constexpr NumberRange kTflops{1e-3, 1e9, "TFLOP/s", "an engine's peak rate"};
constexpr NumberRange kEfficiency{1e-3, 1, "", "a fraction of the peak"};
constexpr NumberRange kThreshold{0, 1e12, "GFLOP or MB",
                                 "an efficiency row's size threshold"};
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

class Collector {
 public:
  void Add(std::string field, ErrorCode code, std::string message) {
    violations_.push_back({std::move(field), std::move(message), code});
  }

  // Each Require* adds a violation and returns false when the rule fails.
  // A count (a size, degree or batch) is also at most kMaxCount.
  bool RequirePositive(const std::string& path, int64_t value) {
    if (value > 0) return RequireAtMostMaxCount(path, value);
    Add(path, ErrorCode::kOutOfRange,
        absl::StrCat(Named(path, value), " must be positive"));
    return false;
  }
  bool RequireAtLeastOne(const std::string& path, int64_t value) {
    if (value >= 1) return RequireAtMostMaxCount(path, value);
    Add(path, ErrorCode::kOutOfRange,
        absl::StrCat(Named(path, value), " must be at least 1"));
    return false;
  }
  bool RequireAtMostMaxCount(const std::string& path, int64_t value) {
    if (value <= kMaxCount) return true;
    Add(path, ErrorCode::kOutOfRange,
        absl::StrCat(Named(path, value), " must be at most ", kMaxCount,
                     " (", kMaxCountWhy, ")"));
    return false;
  }
  // The documented range of a system number (the NumberRange constants).
  bool RequireWithin(const std::string& path, double value,
                     const NumberRange& range) {
    if (std::isfinite(value) && value >= range.min && value <= range.max) {
      return true;
    }
    Add(path, ErrorCode::kOutOfRange,
        absl::StrCat(Named(path, value), " must be between ", Num(range.min),
                     " and ", Num(range.max), *range.unit != '\0' ? " " : "",
                     range.unit, " (", range.why, ")"));
    return false;
  }

  std::vector<Violation> Take() { return std::move(violations_); }
  bool empty() const { return violations_.empty(); }

 private:
  std::vector<Violation> violations_;
};

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

// Calculon looks efficiencies up by taking the first row whose threshold is
// <= the operation size, so rows must descend strictly and end at 0 for every
// size to find one.
void CheckEfficiencyTable(const std::vector<EfficiencyRow>& rows,
                          const std::string& path, Collector* out) {
  if (rows.empty()) {
    out->Add(path, ErrorCode::kOutOfRange,
             absl::StrCat(path, " must have at least one row"));
    return;
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string row = absl::StrCat(path, "[", i, "]");
    const double threshold = rows[i].threshold;
    out->RequireWithin(row + "[0]", threshold, kThreshold);
    out->RequireWithin(row + "[1]", rows[i].efficiency, kEfficiency);
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
}

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

// Calculon's System.set_datatype: both engines must support the datatype.
void CheckDatatype(const SpecView& view, Collector* out) {
  const DataType datatype = view.options->datatype;
  const struct {
    const Processor* engine;
    const char* path;
    const char* field;
    DataType datatype;
  } uses[] = {
      {&view.system->matrix, "system.matrix", "options.datatype", datatype},
      {&view.system->vector, "system.vector", "options.datatype", datatype},
      // The GEMMs run on the matrix engine in their own datatype.
      {&view.system->matrix, "system.matrix", "options.gemm_datatype",
       view.options->gemm_datatype.value_or(datatype)},
  };
  for (const auto& use : uses) {
    if (use.engine->rates.count(use.datatype) > 0) continue;
    if (use.field != std::string("options.datatype") &&
        use.datatype == datatype) {
      continue;  // reported as options.datatype
    }
    std::vector<std::string> supported;
    for (const auto& [name, rate] : use.engine->rates) {
      supported.push_back(DataTypeName(name));
    }
    out->Add(
        use.field, ErrorCode::kInconsistent,
        absl::StrCat(
            use.field, " (", DataTypeName(use.datatype),
            ") is not supported by ", use.path, " (it has: ",
            supported.empty() ? "none" : absl::StrJoin(supported, ", "), ")"));
  }
}

// The gradient reduction moves float32 or the datatype's elements
// (Megatron-LM reduces in fp32 or in the parameters' datatype); inference
// reduces no gradients.
void CheckGradReduceDatatype(const SpecView& view, Collector* out) {
  const std::optional<DataType>& reduce = view.options->grad_reduce_datatype;
  if (!reduce.has_value()) return;
  if (!view.training) {
    out->Add("options.grad_reduce_datatype", ErrorCode::kInconsistent,
             absl::StrCat("options.grad_reduce_datatype is ",
                          DataTypeName(*reduce),
                          ", but an inference spec reduces no gradients: "
                          "leave it null"));
    return;
  }
  const DataType datatype = view.options->datatype;
  if (*reduce != DataType::kFloat32 && *reduce != datatype) {
    out->Add("options.grad_reduce_datatype", ErrorCode::kInconsistent,
             absl::StrCat("options.grad_reduce_datatype is ",
                          DataTypeName(*reduce),
                          ", but the gradients are reduced in float32 or in "
                          "options.datatype (",
                          DataTypeName(datatype), ")"));
  }
}

// float4 is a GEMM datatype only (no tensor is stored or reduced in it but
// by its recipe), and the recipe and the GEMM datatype agree: a recipe runs
// its GEMMs at its own datatype's rate (core/spec/recipes.h), and float4
// GEMMs need NVFP4's block scales.
void CheckRecipe(const SpecView& view, Collector* out) {
  const ExecutionOptions& o = *view.options;
  const struct {
    const char* field;
    std::optional<DataType> datatype;
  } stored[] = {{"options.datatype", o.datatype},
                {"options.weight_datatype", o.weight_datatype},
                {"options.grad_reduce_datatype", o.grad_reduce_datatype}};
  for (const auto& use : stored) {
    if (use.datatype != DataType::kFloat4) continue;
    out->Add(use.field, ErrorCode::kInconsistent,
             absl::StrCat(use.field,
                          " is float4, but float4 is a GEMM datatype only "
                          "(options.gemm_datatype with recipe nvfp4)"));
  }
  const DataType gemm = o.gemm_datatype.value_or(o.datatype);
  if (o.recipe == QuantizationRecipe::kNone) {
    if (gemm == DataType::kFloat4) {
      out->Add("options.recipe", ErrorCode::kInconsistent,
               "options.gemm_datatype is float4, but options.recipe is none: "
               "FP4 GEMMs need the nvfp4 recipe's block scales");
    }
    return;
  }
  const DataType want = RecipeOf(o.recipe).gemm_datatype;
  if (gemm != want) {
    out->Add("options.gemm_datatype", ErrorCode::kInconsistent,
             absl::StrCat("options.gemm_datatype is ", DataTypeName(gemm),
                          ", but options.recipe ", RecipeName(o.recipe),
                          " runs its GEMMs in ", DataTypeName(want)));
  }
}

// The recipe's unquantized first and last blocks (Megatron-LM,
// megatron/core/transformer/transformer_config.py __post_init__): each
// between 0 and num_layers // p, and none with delayed scaling ("Delayed
// scaling does not support first / last layer in BF16"); and a recipe to
// leave, since without one every block runs in options.datatype already.
void CheckUnquantizedBlocks(const SpecView& view, Collector* out) {
  const ExecutionOptions& o = *view.options;
  const int64_t p = view.pipeline->degree;
  const int64_t most =
      p > 0 ? std::max<int64_t>(view.model->num_blocks / p, 0) : kMaxCount;
  const struct {
    const char* field;
    int64_t value;
  } counts[] = {{"options.unquantized_first_blocks", o.unquantized_first_blocks},
                {"options.unquantized_last_blocks", o.unquantized_last_blocks}};
  for (const auto& count : counts) {
    if (count.value < 0 || count.value > most) {
      out->Add(count.field, ErrorCode::kOutOfRange,
               absl::StrCat(Named(count.field, count.value),
                            " must be between 0 and model.num_blocks / "
                            "parallelism.pipeline.degree (", most,
                            "), as Megatron-LM requires"));
      continue;
    }
    if (count.value == 0) continue;
    if (o.recipe == QuantizationRecipe::kNone) {
      out->Add(count.field, ErrorCode::kInconsistent,
               absl::StrCat(Named(count.field, count.value),
                            " needs a recipe to leave, but options.recipe "
                            "is none"));
    } else if (o.recipe == QuantizationRecipe::kFp8Delayed) {
      out->Add(count.field, ErrorCode::kInconsistent,
               absl::StrCat(Named(count.field, count.value),
                            " with options.recipe fp8_delayed: delayed "
                            "scaling does not support blocks outside the "
                            "recipe (Megatron-LM)"));
    }
  }
}

//----- Degrees and networks
//------------------------------------------------------

// One parallel dimension as the network rules see it.
struct Dimension {
  std::string degree_path;
  std::string tier_path;
  int64_t degree;
  int64_t tier;
};

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
void CheckExperts(const SpecView& view, bool degrees_ok, Collector* out) {
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
  if (moe->experts > 0 && moe->experts % expert.degree != 0) {
    out->Add("parallelism.expert.degree", ErrorCode::kNotDivisible,
             absl::StrCat(Named("parallelism.expert.degree", expert.degree),
                          " must divide ",
                          Named("model.moe.experts", moe->experts)));
  }
  if (!ok) return;  // the rules below need a valid expert tensor degree
  const int64_t etp = ExpertTensorDegree(expert, t);
  if (moe->ffn > 0 && moe->ffn % etp != 0) {
    out->Add("model.moe.ffn", ErrorCode::kNotDivisible,
             absl::StrCat(Named("model.moe.ffn", moe->ffn),
                          " must be divisible by the expert tensor degree (",
                          etp, ")"));
  }
  if (moe->shared_ffn > 0 && moe->shared_ffn % t != 0) {
    out->Add("model.moe.shared_ffn", ErrorCode::kNotDivisible,
             absl::StrCat(Named("model.moe.shared_ffn", moe->shared_ffn),
                          " must be divisible by ",
                          Named("parallelism.tensor.degree", t)));
  }
  if (!degrees_ok || view.context == nullptr) return;
  const std::optional<int64_t> stage_ranks =
      CheckedProduct({t, view.context->degree, view.data_degree});
  const std::optional<int64_t> expert_ranks = CheckedMul(expert.degree, etp);
  if (stage_ranks && (!expert_ranks || *stage_ranks % *expert_ranks != 0)) {
    out->Add("parallelism.expert.degree", ErrorCode::kNotDivisible,
             absl::StrCat(
                 Named("parallelism.expert.degree", expert.degree),
                 " * expert tensor degree (", etp,
                 ") must divide the ranks of a pipeline stage, "
                 "parallelism.tensor.degree * context.degree * data.degree (",
                 *stage_ranks, "): expert parallelism is folded onto them"));
  }
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
// a backward chunk); the shared experts' overlap needs the alltoall
// dispatcher.
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

// Context parallelism splits each sequence into 2 * cp chunks (one early and
// one late per rank, which balances the causal work).
void CheckContext(const SpecView& view, Collector* out) {
  if (view.context == nullptr || view.context->degree <= 1) return;
  const int64_t cp = view.context->degree;
  const int64_t s = view.model->seq_size;
  if (s > 0 && (s % cp != 0 || (s / cp) % 2 != 0)) {
    out->Add("model.seq_size", ErrorCode::kNotDivisible,
             absl::StrCat(Named("model.seq_size", s),
                          " must be divisible by 2 * ",
                          Named("parallelism.context.degree", cp),
                          ": each rank holds two load-balanced causal "
                          "chunks"));
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

//----- Batch, tensor and pipeline rules
//------------------------------------------

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

void CheckTensorSplits(const SpecView& view, Collector* out) {
  const int64_t t = view.tensor->degree;
  if (t < 1 || TensorSplitsModel(*view.model, t)) return;
  const TransformerModel& model = *view.model;
  for (const auto& [path, value] :
       {std::pair<const char*, int64_t>{"model.hidden", model.hidden},
        {"model.feedforward", model.feedforward},
        {"model.attn_heads", model.attn_heads},
        {"model.kv_heads", model.kv_heads}}) {
    // kv_heads == attn_heads (multi-head attention) is one rule, said once.
    const bool same_as_heads = path == std::string("model.kv_heads") &&
                               value == model.attn_heads;
    if (value > 0 && value % t != 0 && !same_as_heads) {
      out->Add(path, ErrorCode::kNotDivisible,
               absl::StrCat(Named(path, value), " must be divisible by ",
                            Named("parallelism.tensor.degree", t)));
    }
  }
}

// Calculon's batch_seq rule: with rs_ag or p2p_rs_ag the activations
// (microbatch * sequence rows) are split t ways. With context parallelism a
// rank holds s / cp of each sequence, and it is those rows that are split.
void CheckSequenceSplit(const SpecView& view, Collector* out) {
  const int64_t t = view.tensor->degree;
  const int64_t b = view.batch->microbatch_size;
  const int64_t s = view.model->seq_size;
  // A sequence cp does not divide is CheckContext's report; the rows of the
  // whole sequence must still split t ways.
  int64_t cp = view.context != nullptr ? view.context->degree : 1;
  if (cp < 1 || s % cp != 0) cp = 1;
  if (!SplitsActivations(view.tensor->communication) || t < 1 || b < 1 ||
      s < 1) {
    return;
  }
  const std::string operands =
      cp == 1 ? absl::StrCat(Named("batch.microbatch_size", b), " * ",
                             Named("model.seq_size", s))
              : absl::StrCat(Named("batch.microbatch_size", b), " * ",
                             Named("model.seq_size", s), " / ",
                             Named("parallelism.context.degree", cp));
  const std::optional<int64_t> batch_seq = CheckedMul(b, s / cp);
  if (!batch_seq) {
    out->Add("batch.microbatch_size", ErrorCode::kOutOfRange,
             absl::StrCat(operands, " overflows 64-bit integers"));
    return;
  }
  if (*batch_seq % t != 0) {
    out->Add("parallelism.tensor.communication", ErrorCode::kNotDivisible,
             absl::StrCat(operands, " = ", *batch_seq, " must be divisible by ",
                          Named("parallelism.tensor.degree", t),
                          " with parallelism.tensor.communication ",
                          TensorCommunicationName(view.tensor->communication),
                          ": its activations are split t ways"));
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

// Returns the schedule's v (its virtual_stages field, or its schedule table
// row's fixed v), after checking that the schedule suits the spec kind and
// the pipeline degree.
int64_t CheckSchedule(const SpecView& view, Collector* out) {
  const PipelineSchedule& schedule = view.pipeline->schedule;
  const int64_t p = view.pipeline->degree;
  const std::string name = PipelineScheduleName(schedule);
  const std::string field = "parallelism.pipeline.schedule";
  const std::string degree = Named("parallelism.pipeline.degree", p);
  const auto wrong_kind = [&]() {
    out->Add(
        field, ErrorCode::kInconsistent,
        view.training
            ? absl::StrCat(field, " ", name,
                           " is an inference schedule; "
                           "training uses single_stage (pipeline degree 1), "
                           "1f1b or interleaved_1f1b")
            : absl::StrCat(field, " ", name,
                           " is a training schedule; "
                           "inference uses single_stage (pipeline degree 1) "
                           "or forward_only"));
  };
  const auto needs_pipeline = [&](const std::string& what,
                                  const char* instead) {
    if (p != 1) return;  // p < 1 is reported by CheckDegrees
    out->Add(field, ErrorCode::kInconsistent,
             absl::StrCat(field, " ", what,
                          " requires parallelism.pipeline.degree > 1 "
                          "(got 1); use ",
                          instead));
  };
  // A training schedule with a pipeline and `chunks` per stage.
  const auto training_pipeline = [&](int64_t chunks) -> int64_t {
    if (!view.training) {
      wrong_kind();
    } else {
      needs_pipeline(name, "single_stage");
    }
    return chunks;
  };
  return std::visit(
      Overloaded{
          [&](const SingleStage&) -> int64_t {
            if (p > 1) {
              out->Add(field, ErrorCode::kInconsistent,
                       absl::StrCat(field,
                                    " single_stage requires "
                                    "parallelism.pipeline.degree 1, but ",
                                    degree, " is larger; use ",
                                    view.training ? "1f1b or interleaved_1f1b"
                                                  : "forward_only"));
            }
            return 1;
          },
          [&](const InterleavedOneForwardOneBackward& s) -> int64_t {
            const std::string v_path = field + ".virtual_stages";
            if (!view.training) wrong_kind();
            if (s.virtual_stages < 2) {
              out->Add(v_path, ErrorCode::kOutOfRange,
                       absl::StrCat(Named(v_path, s.virtual_stages),
                                    " must be at least 2 (one virtual stage "
                                    "is the 1f1b schedule)"));
              return 1;
            }
            if (!out->RequireAtMostMaxCount(v_path, s.virtual_stages)) return 1;
            if (view.training) {
              needs_pipeline(absl::StrCat("interleaved_1f1b with ",
                                          Named(v_path, s.virtual_stages)),
                             "single_stage");
            }
            return s.virtual_stages;
          },
          [&](const ForwardOnly& s) -> int64_t {
            const std::string v_path = field + ".virtual_stages";
            if (view.training) {
              wrong_kind();
            } else {
              needs_pipeline("forward_only", "single_stage");
            }
            if (s.virtual_stages < 1) {
              out->Add(v_path, ErrorCode::kOutOfRange,
                       absl::StrCat(Named(v_path, s.virtual_stages),
                                    " must be at least 1"));
              return 1;
            }
            if (!out->RequireAtMostMaxCount(v_path, s.virtual_stages)) return 1;
            return s.virtual_stages;
          },
          // 1f1b and the simulated schedules: their rows say it all.
          [&](const auto& alternative) -> int64_t {
            using Schedule = std::decay_t<decltype(alternative)>;
            constexpr const ScheduleRow& kRow = ScheduleRowOf(Schedule::kKind);
            static_assert(kRow.virtual_stages.fixed != 0 && kRow.trains &&
                              !kRow.infers && kRow.needs_pipeline,
                          "a schedule with a field, one that inference "
                          "runs or one without a pipeline needs its own "
                          "case here");
            return training_pipeline(kRow.virtual_stages.fixed);
          }},
      schedule);
}

// A simulated schedule's shape rules (core/schedule ScheduleShapeErrors:
// dualpipe_v needs m >= 2p, the command count is bounded, ...) on the
// spec's fields, and the even stage layout its equal chunks assume. Checked
// here so that a spec the checker accepts always analyses.
void CheckSimulatedSchedule(const SpecView& view, bool degrees_ok, int64_t v,
                            Collector* out) {
  const std::optional<ScheduleKind> kind =
      SimulatedScheduleKind(view.pipeline->schedule);
  if (!kind.has_value() || !degrees_ok) return;
  const std::string field = "parallelism.pipeline.schedule";
  const std::string name = PipelineScheduleName(view.pipeline->schedule);
  if (!view.pipeline->stage_blocks.empty()) {
    out->Add("parallelism.pipeline.stage_blocks", ErrorCode::kUnsupported,
             absl::StrCat("parallelism.pipeline.stage_blocks cannot be "
                          "combined with ", field, " ", name,
                          ": the simulated schedules price equal stages; "
                          "use 1f1b or interleaved_1f1b"));
  }
  if (view.pipeline->stage_layout == StageLayout::kUneven) {
    out->Add("parallelism.pipeline.stage_layout", ErrorCode::kUnsupported,
             absl::StrCat("parallelism.pipeline.stage_layout uneven cannot be "
                          "combined with ", field, " ", name,
                          ": the simulated schedules price equal stages; use "
                          "even (or 1f1b, interleaved_1f1b)"));
  }
  if (!ScheduleRowOf(*kind).allows_data_overlap && view.data_overlap) {
    out->Add("parallelism.data.overlap", ErrorCode::kUnsupported,
             absl::StrCat("parallelism.data.overlap cannot be combined with ",
                          field, " ", name,
                          ": the overlap windows are one stage's backward "
                          "passes per rank, while a dualpipe rank holds two "
                          "stages whose gradients are summed with the twin "
                          "rank's first; set parallelism.data.overlap to "
                          "false"));
  }
  const Batch& batch = *view.batch;
  if (batch.global_batch_size < 1 || batch.microbatch_size < 1 ||
      batch.global_batch_size % view.data_degree != 0 ||
      (batch.global_batch_size / view.data_degree) % batch.microbatch_size !=
          0) {
    return;  // CheckBatch reports it
  }
  const int64_t m =
      batch.global_batch_size / view.data_degree / batch.microbatch_size;
  for (const FieldError& error :
       ScheduleShapeErrors(*kind, view.pipeline->degree, v, m)) {
    out->Add(SpecFieldOfShapeField(view.pipeline->schedule, error.field),
             error.code,
             absl::StrCat(field, " ", name, ": ", error.message,
                          error.field == "m"
                              ? " (m, the microbatches: "
                                "batch.global_batch_size / (data degree * "
                                "batch.microbatch_size))"
                              : ""));
  }
}

std::string OffloadNames(const Offload& offload) {
  std::vector<const char*> names;
  if (offload.weights) names.push_back("weights");
  if (offload.activations) names.push_back("activations");
  if (offload.optimizer) names.push_back("optimizer");
  return absl::StrJoin(names, ", ");
}

void CheckOffloadFits(const SpecView& view, int64_t per_stage,
                      Collector* out) {
  const Offload& offload = view.options->offload;
  if (!OffloadFits(offload, per_stage)) {
    out->Add("options.offload", ErrorCode::kUnsupported,
             absl::StrCat("options.offload (", OffloadNames(offload),
                          ") requires blocks_per_stage >= ",
                          kMinOffloadBlocksPerStage, " (got ", per_stage, ")"));
  }
}

// An explicit layout (parallelism.pipeline.stage_blocks): Megatron-LM's
// rules for a custom layout (pipeline_parallel_layer_layout.py
// PipelineParallelLayerLayout.__init__ and validate_layer_layout: p * v
// stages; the decoder layers counted once, summing to num_layers; a stage
// may hold none, as "L" alone does). True when it holds.
bool CheckStageBlocks(const SpecView& view, int64_t v, Collector* out) {
  const std::string path = "parallelism.pipeline.stage_blocks";
  const std::vector<int64_t>& blocks = view.pipeline->stage_blocks;
  const int64_t p = view.pipeline->degree;
  const int64_t nb = view.model->num_blocks;
  bool ok = true;
  if (view.pipeline->stage_layout != StageLayout::kEven) {
    out->Add("parallelism.pipeline.stage_layout", ErrorCode::kInconsistent,
             absl::StrCat("parallelism.pipeline.stage_layout ",
                          StageLayoutName(view.pipeline->stage_layout),
                          " cannot be combined with ", path,
                          ", which lays the blocks out itself; use even"));
    ok = false;
  }
  const std::optional<int64_t> stages = CheckedMul(p, v);
  if (!stages || static_cast<int64_t>(blocks.size()) != *stages) {
    out->Add(path, ErrorCode::kInconsistent,
             absl::StrCat(path, " has ", blocks.size(),
                          " entries but needs one per pipeline stage and "
                          "virtual stage: ",
                          Named("parallelism.pipeline.degree", p), " * ", v,
                          " virtual stages of ",
                          PipelineScheduleName(view.pipeline->schedule)));
    ok = false;
  }
  int64_t sum = 0;
  bool sum_ok = true;
  for (size_t k = 0; k < blocks.size(); ++k) {
    const std::string entry = absl::StrCat(path, "[", k, "]");
    if (blocks[k] < 0) {
      out->Add(entry, ErrorCode::kOutOfRange,
               absl::StrCat(Named(entry, blocks[k]), " must be at least 0"));
      ok = sum_ok = false;
    } else if (!out->RequireAtMostMaxCount(entry, blocks[k])) {
      ok = sum_ok = false;
    } else {
      sum += blocks[k];  // at most 4096 * 2^31: no overflow
    }
  }
  if (sum_ok && sum != nb) {
    out->Add(path, ErrorCode::kInconsistent,
             absl::StrCat(path, " sums to ", sum, " blocks but ",
                          Named("model.num_blocks", nb),
                          ": every block sits on exactly one stage"));
    ok = false;
  }
  return ok;
}

// Blocks per stage and per virtual chunk (Calculon's compile()).
void CheckStages(const SpecView& view, int64_t v, Collector* out) {
  const int64_t p = view.pipeline->degree;
  const int64_t nb = view.model->num_blocks;
  if (p < 1 || nb < 1) return;
  const std::string degree = Named("parallelism.pipeline.degree", p);
  const std::string blocks = Named("model.num_blocks", nb);
  if (!view.pipeline->stage_blocks.empty()) {
    if (CheckStageBlocks(view, v, out)) {
      CheckOffloadFits(view, MostRankBlocks(view.pipeline->stage_blocks, p),
                       out);
    }
    return;
  }
  const int64_t remainder = nb % p;
  switch (view.pipeline->stage_layout) {
    case StageLayout::kEven:
      if (remainder != 0) {
        out->Add("parallelism.pipeline.stage_layout", ErrorCode::kNotDivisible,
                 absl::StrCat(blocks, " must be divisible by ", degree,
                              " with parallelism.pipeline.stage_layout even "
                              "(uneven rounds blocks_per_stage up and shortens "
                              "the bubble, as Calculon does)"));
        return;
      }
      break;
    case StageLayout::kUneven:
      // Calculon accepts p > num_blocks too: the last p - num_blocks stages
      // hold no block and shorten the bubble accordingly.
      break;
  }
  const int64_t per_stage = BlocksPerStage(nb, p);

  if (!InterleavingFits(v, per_stage)) {
    // dualpipe_v and zb_v hold two chunks per stage without a field for it.
    const std::string path =
        SpecFieldOfShapeField(view.pipeline->schedule, "v");
    const std::string chunks =
        path != "parallelism.pipeline.schedule"
            ? Named(path, v)
            : absl::StrCat(path, " ",
                           PipelineScheduleName(view.pipeline->schedule),
                           "'s ", v, " chunks per stage");
    out->Add(path,
             v > per_stage ? ErrorCode::kOutOfRange : ErrorCode::kNotDivisible,
             absl::StrCat(chunks,
                          v > per_stage ? " must be at most" : " must divide",
                          " blocks_per_stage (", per_stage, ")"));
  }

  CheckOffloadFits(view, per_stage, out);
}

void CheckOptions(const SpecView& view, Collector* out) {
  const TensorParallel& tensor = *view.tensor;
  if (tensor.overlap != TensorOverlap::kNone && tensor.degree == 1) {
    out->Add("parallelism.tensor.overlap", ErrorCode::kInconsistent,
             absl::StrCat("parallelism.tensor.overlap (",
                          TensorOverlapName(tensor.overlap),
                          ") requires parallelism.tensor.degree > 1 (got 1)"));
  }
  const auto* rs_ag =
      std::get_if<ReduceScatterAllGather>(&tensor.communication);
  if (rs_ag != nullptr && rs_ag->all_gather_redo &&
      view.recompute == RecomputePolicy::kFull) {
    out->Add("parallelism.tensor.communication.all_gather_redo",
             ErrorCode::kInconsistent,
             "parallelism.tensor.communication.all_gather_redo cannot be "
             "combined with parallelism.recompute (full): full recompute "
             "already redoes every all-gather");
  }
  if (view.sharding != nullptr &&
      ShardingStageOf(*view.sharding) != ShardingStage::kNone) {
    const char* name = DataShardingName(*view.sharding);
    const int64_t group = ShardingGroupOf(*view.sharding, 0);
    if (view.data_degree == 1) {
      out->Add("parallelism.data.sharding", ErrorCode::kInconsistent,
               absl::StrCat("parallelism.data.sharding (", name,
                            ") requires parallelism.data.degree > 1 (got "
                            "1)"));
    } else if (group < 0 || group == 1 ||
               (view.data_degree >= 1 && group > 0 &&
                view.data_degree % group != 0)) {
      out->Add("parallelism.data.sharding.group", ErrorCode::kNotDivisible,
               absl::StrCat(Named("parallelism.data.sharding.group", group),
                            " must be 0 (all of parallelism.data.degree) or "
                            "a divisor of ",
                            Named("parallelism.data.degree", view.data_degree),
                            " above 1"));
    }
  }
  const TransformerModel& m = *view.model;
  if (tensor.overlap != TensorOverlap::kNone &&
      (m.moe.has_value() || m.latent_attention.has_value())) {
    out->Add("parallelism.tensor.overlap", ErrorCode::kUnsupported,
             absl::StrCat("parallelism.tensor.overlap (",
                          TensorOverlapName(tensor.overlap),
                          ") is not modelled with ",
                          m.moe.has_value() ? "model.moe" :
                                              "model.latent_attention",
                          ": use none"));
  }
  if (m.latent_attention.has_value() && tensor.degree > 1) {
    const LatentAttention& l = *m.latent_attention;
    for (const auto& [path, value] :
         {std::pair<const char*, int64_t>{"model.latent_attention.q_lora_rank",
                                          l.q_lora_rank},
          {"model.latent_attention.kv_lora_rank", l.kv_lora_rank},
          {"model.latent_attention.qk_rope_head_dim", l.qk_rope_head_dim}}) {
      if (value > 0 && value % tensor.degree != 0) {
        out->Add(path, ErrorCode::kNotDivisible,
                 absl::StrCat(Named(path, value), " must be divisible by ",
                              Named("parallelism.tensor.degree",
                                    tensor.degree),
                              ": every latent-attention matrix is split t "
                              "ways, as Megatron-LM's accounting has it"));
      }
    }
  }
  if (view.data_overlap && view.data_degree == 1) {
    out->Add("parallelism.data.overlap", ErrorCode::kInconsistent,
             "parallelism.data.overlap requires parallelism.data.degree > 1 "
             "(got 1)");
  }
  const TransformerModel& model = m;
  if (view.options->attention == AttentionType::kMultiQuery &&
      model.kv_heads != model.attn_heads) {
    out->Add("options.attention", ErrorCode::kInconsistent,
             absl::StrCat("options.attention multiquery (Calculon's one "
                          "key/value head, replicated on every TP rank) "
                          "cannot be combined with ",
                          Named("model.kv_heads", model.kv_heads), " < ",
                          Named("model.attn_heads", model.attn_heads),
                          ": grouped-query attention is set by "
                          "model.kv_heads alone; use multihead"));
  }
  if (!view.training && view.options->offload.optimizer) {
    out->Add("options.offload.optimizer", ErrorCode::kInconsistent,
             "options.offload.optimizer requires a training spec: inference "
             "keeps no optimizer state");
  }
}

// Runs every rule.
std::vector<Violation> Verify(const MappingSpec& spec) {
  Collector out;
  const SpecView view = ViewOf(spec);
  CheckModel(*view.model, &out);
  CheckSystem(*view.system, &out);
  CheckDatatype(view, &out);
  CheckGradReduceDatatype(view, &out);
  CheckRecipe(view, &out);
  CheckUnquantizedBlocks(view, &out);

  const std::vector<Dimension> dims = DimensionsOf(view);
  const bool degrees_ok = CheckDegrees(dims, &out);
  const bool tiers_ok = CheckNetworkTiers(dims, *view.system, &out);
  if (degrees_ok && tiers_ok) {
    CheckNetworkAssignments(dims, *view.system, &out);
  }
  CheckBatch(view, degrees_ok, &out);
  CheckExperts(view, degrees_ok, &out);
  CheckExpertOverlap(view, &out);
  CheckContext(view, &out);
  CheckTensorSplits(view, &out);
  CheckSequenceSplit(view, &out);
  CheckWorkFits(view, &out);
  const int64_t v = CheckSchedule(view, &out);
  CheckSimulatedSchedule(view, degrees_ok, v, &out);
  CheckStages(view, v, &out);
  CheckOptions(view, &out);
  return out.Take();
}

}  // namespace

std::vector<Violation> FindViolations(const MappingSpec& spec) {
  return Verify(spec);
}

absl::StatusOr<TypedProgram> CheckSpec(const MappingSpec& spec) {
  const std::vector<Violation> violations = Verify(spec);
  if (!violations.empty()) return InvalidInputError(violations);
  return AcceptedProgram(spec);
}

std::vector<FieldRange> CheckedFieldRanges() {
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

}  // namespace blueprint
