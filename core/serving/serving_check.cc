#include "core/serving/serving_check.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/checked_math.h"
#include "core/base/format.h"
#include "core/plan/hardware.h"
#include "core/serving/serving_model.h"
#include "core/spec/check.h"
#include "core/spec/derive.h"
#include "core/spec/enums.h"

namespace blueprint {
namespace {

std::string Named(const std::string& path, int64_t value) {
  return absl::StrCat(path, " (", value, ")");
}

class Violations {
 public:
  void Add(std::string field, ErrorCode code, std::string message) {
    out_.push_back({std::move(field), std::move(message), code});
  }
  // A count: at least 1 and at most kMaxCount (core/spec/check.h).
  bool RequireCount(const std::string& path, int64_t value) {
    if (value < 1) {
      Add(path, ErrorCode::kOutOfRange,
          absl::StrCat(Named(path, value), " must be at least 1"));
      return false;
    }
    if (value > kMaxCount) {
      Add(path, ErrorCode::kOutOfRange,
          absl::StrCat(Named(path, value), " must be at most ", kMaxCount,
                       " (", kMaxCountWhy, ")"));
      return false;
    }
    return true;
  }
  // `divisor` divides `value` (both already judged positive).
  void RequireDivides(const std::string& divisor_path, int64_t divisor,
                      const std::string& value_path, int64_t value,
                      const char* why) {
    if (value % divisor == 0) return;
    Add(divisor_path, ErrorCode::kNotDivisible,
        absl::StrCat(Named(divisor_path, divisor), " must divide ",
                     Named(value_path, value), ": ", why));
  }
  bool empty() const { return out_.empty(); }
  std::vector<FieldError> Take() { return std::move(out_); }

 private:
  std::vector<FieldError> out_;
};

void CheckDatatypes(const ServingSpec& spec, Violations* out) {
  const DataType w = spec.weight_datatype;
  if (w != DataType::kBFloat16 && w != DataType::kFloat16 &&
      w != DataType::kFloat8) {
    out->Add("weight_datatype", ErrorCode::kUnsupported,
             absl::StrCat("weight_datatype (", EnumName(w),
                          ") must be bfloat16, float16 or float8: the "
                          "serving model has no other weight format"));
  } else if (EngineRate(spec.system.matrix, w) == nullptr) {
    out->Add("weight_datatype", ErrorCode::kInconsistent,
             absl::StrCat("weight_datatype (", EnumName(w),
                          ") needs the system's matrix rate "
                          "system.matrix.",
                          EnumName(w), ", which it does not give"));
  }
  if (EngineRate(spec.system.matrix, DataType::kBFloat16) == nullptr) {
    out->Add("system.matrix", ErrorCode::kInconsistent,
             "system.matrix must give a bfloat16 rate: attention runs in "
             "bfloat16");
  }
  const DataType kv = spec.kv_cache.datatype;
  if (kv != DataType::kBFloat16 && kv != DataType::kFloat8) {
    out->Add("kv_cache.datatype", ErrorCode::kUnsupported,
             absl::StrCat("kv_cache.datatype (", EnumName(kv),
                          ") must be bfloat16 or float8 (vLLM's "
                          "--kv-cache-dtype auto or fp8)"));
  }
  out->RequireCount("kv_cache.block_tokens", spec.kv_cache.block_tokens);
  const double u = spec.memory_utilization;
  if (!(std::isfinite(u) && u > 0 && u <= 1)) {
    out->Add("memory_utilization", ErrorCode::kOutOfRange,
             absl::StrCat("memory_utilization (", FormatDouble(u),
                          ") must be above 0 and at most 1 (a share of "
                          "each GPU's memory)"));
  }
}

void CheckWorkload(const ServingSpec& spec, Violations* out) {
  const ServingWorkload& w = spec.workload;
  const bool input_ok = out->RequireCount("workload.input_tokens",
                                          w.input_tokens);
  const bool output_ok = out->RequireCount("workload.output_tokens",
                                           w.output_tokens);
  out->RequireCount("workload.concurrency", w.concurrency);
  // Both at most 2^31: the sum fits.
  if (input_ok && output_ok && spec.model.seq_size > 0 &&
      w.input_tokens + w.output_tokens > spec.model.seq_size) {
    out->Add("workload.input_tokens", ErrorCode::kOutOfRange,
             absl::StrCat(Named("workload.input_tokens", w.input_tokens),
                          " + ",
                          Named("workload.output_tokens", w.output_tokens),
                          " must be at most ",
                          Named("model.seq_size", spec.model.seq_size),
                          ": the longest sequence the model takes"));
  }
}

// One pool's degrees against the model. Returns its GPUs (nullopt when a
// degree is invalid or the product overflows).
std::optional<int64_t> CheckPool(const ServingSpec& spec,
                                 const ServingPool& pool,
                                 const std::string& path, Violations* out) {
  const TransformerModel& m = spec.model;
  const std::string t_path = path + ".tensor";
  const std::string p_path = path + ".pipeline";
  const std::string e_path = path + ".expert";
  const std::string a_path = path + ".attention_data";
  bool ok = true;
  for (const ServingPoolKey& key : kServingPoolKeys) {
    ok = out->RequireCount(absl::StrCat(path, ".", key.key),
                           pool.*key.field) &&
         ok;
  }
  if (!ok) return std::nullopt;
  if (m.attn_heads > 0) {
    out->RequireDivides(t_path, pool.tensor, "model.attn_heads", m.attn_heads,
                        "each tensor rank computes whole query heads");
  }
  if (!m.latent_attention && m.kv_heads > 0 && m.kv_heads % pool.tensor != 0 &&
      pool.tensor % m.kv_heads != 0) {
    out->Add(t_path, ErrorCode::kNotDivisible,
             absl::StrCat(Named(t_path, pool.tensor), " must divide ",
                          Named("model.kv_heads", m.kv_heads),
                          " or be a multiple of it: each rank holds whole "
                          "key/value heads, or one head copied"));
  }
  if (m.num_blocks > 0) {
    out->RequireDivides(p_path, pool.pipeline, "model.num_blocks",
                        m.num_blocks, "each stage holds whole blocks, evenly");
  }
  const std::optional<int64_t> stage_ranks =
      CheckedMul(pool.tensor, pool.attention_data);
  if (!stage_ranks || *stage_ranks > kMaxCount) {
    out->Add(a_path, ErrorCode::kOutOfRange,
             absl::StrCat(Named(t_path, pool.tensor), " * ",
                          Named(a_path, pool.attention_data),
                          " must be at most ", kMaxCount));
    return std::nullopt;
  }
  const std::string stage = absl::StrCat(t_path, " * ", a_path, " (",
                                         *stage_ranks, ")");
  const bool has_dense = !m.moe || MoeBlocks(m) < m.num_blocks;
  if (has_dense && m.feedforward > 0 && m.feedforward % *stage_ranks != 0) {
    out->Add(a_path, ErrorCode::kNotDivisible,
             absl::StrCat(stage, " must divide ",
                          Named("model.feedforward", m.feedforward),
                          ": the dense MLPs are split over a stage's ranks"));
  }
  if (!m.moe) {
    if (pool.expert != 1) {
      out->Add(e_path, ErrorCode::kInconsistent,
               absl::StrCat(Named(e_path, pool.expert),
                            " must be 1: the model has no experts"));
    }
  } else if (m.moe->experts > 0) {
    out->RequireDivides(e_path, pool.expert, "model.moe.experts",
                        m.moe->experts, "each expert rank holds whole experts");
    if (*stage_ranks % pool.expert != 0) {
      out->Add(e_path, ErrorCode::kNotDivisible,
               absl::StrCat(Named(e_path, pool.expert), " must divide ", stage,
                            ": the expert ranks are a stage's ranks"));
    } else if (m.moe->ffn > 0 &&
               m.moe->ffn % (*stage_ranks / pool.expert) != 0) {
      out->Add(e_path, ErrorCode::kNotDivisible,
               absl::StrCat(stage, " / ", Named(e_path, pool.expert),
                            " must divide ", Named("model.moe.ffn", m.moe->ffn),
                            ": each expert is split over the rest of a "
                            "stage's ranks"));
    }
  }
  const std::optional<int64_t> gpus =
      CheckedProduct({*stage_ranks, pool.pipeline, pool.replicas});
  if (!gpus || *gpus > kMaxCount) {
    out->Add(path, ErrorCode::kOutOfRange,
             absl::StrCat(path, ": replicas * tensor * attention_data * "
                                "pipeline must be at most ",
                          kMaxCount));
    return std::nullopt;
  }
  return gpus;
}

void CheckConcurrency(const ServingSpec& spec, Violations* out) {
  if (ServingConcurrencyHolds(spec)) return;
  const ServingPool& pool = DecodePool(spec);
  const std::string path = DecodePoolPath(spec);
  out->Add("workload.concurrency", ErrorCode::kNotDivisible,
           absl::StrCat(Named("workload.concurrency",
                              spec.workload.concurrency),
                        " must be a multiple of ", path,
                        ".attention_data * ", path, ".pipeline (",
                        pool.attention_data * pool.pipeline,
                        "): each attention group holds an equal share of "
                        "the requests, in one microbatch per stage"));
}

std::string Bytes(double value) { return FormatDouble(std::floor(value)); }

void CheckMemory(const ServingSpec& spec, Violations* out) {
  const ServingCapacity capacity = JudgeServingCapacity(spec);
  const PoolMemory& decode = capacity.decode;
  const std::string decode_path = DecodePoolPath(spec);
  if (!capacity.decode_has_room) {
    out->Add(decode_path, ErrorCode::kOverCapacity,
             absl::StrCat(decode_path, ": the weights (",
                          Bytes(decode.weight_bytes_per_rank),
                          " bytes per rank) and activations (",
                          Bytes(decode.activation_bytes_per_rank),
                          ") leave no room for the KV cache in the usable ",
                          Bytes(decode.usable_bytes_per_rank),
                          " bytes (system.mem1.GiB * memory_utilization)"));
  } else if (!capacity.concurrency_fits) {
    out->Add("workload.concurrency", ErrorCode::kOverCapacity,
             absl::StrCat(Named("workload.concurrency",
                                spec.workload.concurrency),
                          " must be at most max_concurrency (",
                          FormatDouble(decode.max_concurrency),
                          "): each request's KV cache takes ",
                          Bytes(decode.kv_bytes_per_request_per_rank),
                          " bytes per rank, and ",
                          Bytes(decode.free_bytes_per_rank),
                          " are free after weights and activations"));
  }
  if (!capacity.prefill_fits) {
    const PoolMemory& prefill = capacity.prefill;
    out->Add("pools.prefill", ErrorCode::kOverCapacity,
             absl::StrCat("pools.prefill: the weights (",
                          Bytes(prefill.weight_bytes_per_rank),
                          " bytes per rank), activations (",
                          Bytes(prefill.activation_bytes_per_rank),
                          ") and the KV cache of its prompts in flight (",
                          Bytes(prefill.kv_in_flight_bytes_per_rank),
                          ") need more than the usable ",
                          Bytes(prefill.usable_bytes_per_rank), " bytes"));
  }
}

}  // namespace

std::vector<FieldError> FindServingViolations(const ServingSpec& spec) {
  Violations out;
  for (FieldError& v : FindModelAndSystemViolations(spec.model, spec.system)) {
    out.Add(std::move(v.field), v.code, std::move(v.message));
  }
  CheckDatatypes(spec, &out);
  CheckWorkload(spec, &out);
  const std::optional<int64_t> gpus = std::visit(
      Overloaded{[&](const AggregatedPools& a) {
                   return CheckPool(spec, a.pool, "pools.pool", &out);
                 },
                 [&](const DisaggregatedPools& d) -> std::optional<int64_t> {
                   const std::optional<int64_t> prefill =
                       CheckPool(spec, d.prefill, "pools.prefill", &out);
                   const std::optional<int64_t> decode =
                       CheckPool(spec, d.decode, "pools.decode", &out);
                   if (!prefill || !decode) return std::nullopt;
                   return CheckedAdd(*prefill, *decode);
                 }},
      spec.pools);
  CheckConcurrency(spec, &out);
  if (gpus && !ServingGpusFitSystem(spec.system, *gpus)) {
    out.Add("pools", ErrorCode::kInconsistent,
            absl::StrCat("pools: the pools' GPUs (", *gpus,
                         ") must fit in the system: its last network tier "
                         "holds system.networks[",
                         spec.system.networks.size() - 1, "].size (",
                         spec.system.networks.back().size, ")"));
  }
  // The memory figures divide by the degrees and sizes judged above.
  if (out.empty()) CheckMemory(spec, &out);
  return out.Take();
}

bool ServingConcurrencyHolds(const ServingSpec& spec) {
  const ServingPool& pool = DecodePool(spec);
  const std::optional<int64_t> groups =
      CheckedMul(pool.attention_data, pool.pipeline);
  if (!groups || *groups < 1 || spec.workload.concurrency < 1) return true;
  return spec.workload.concurrency % *groups == 0;
}

bool ServingGpusFitSystem(const System& system, int64_t gpus) {
  return system.networks.empty() || gpus <= system.networks.back().size;
}

ServingCapacity JudgeServingCapacity(const ServingSpec& spec) {
  ServingCapacity out;
  const bool disaggregated = IsDisaggregated(spec);
  out.decode =
      PoolMemoryOf(spec, DecodePool(spec),
                   disaggregated ? PoolRole::kDecode : PoolRole::kShared);
  out.decode_has_room = out.decode.free_bytes_per_rank > 0;
  out.concurrency_fits =
      !out.decode_has_room || static_cast<double>(spec.workload.concurrency) <=
                                  out.decode.max_concurrency;
  if (disaggregated) {
    out.prefill = PoolMemoryOf(spec, PrefillPool(spec), PoolRole::kPrefill);
    out.prefill_fits = out.prefill.free_bytes_per_rank >=
                       out.prefill.kv_in_flight_bytes_per_rank;
  }
  return out;
}

absl::Status CheckServingSpec(const ServingSpec& spec) {
  std::vector<FieldError> violations = FindServingViolations(spec);
  if (violations.empty()) return absl::OkStatus();
  return InvalidInputError(violations);
}

}  // namespace blueprint
