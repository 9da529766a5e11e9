#include "core/serving/serving_search.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/base/checked_math.h"
#include "core/base/field_errors.h"
#include "core/base/format.h"
#include "core/base/json.h"
#include "core/base/status_macros.h"
#include "core/search/top_n.h"
#include "core/serving/serving_check.h"
#include "core/spec/check.h"
#include "core/spec/enums.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

inline constexpr char kServingSearchFormat[] = "blueprinting.serving_search/1";

// The flag each field of the base spec comes from: the search's errors
// name the flag the user can change (a field's first matching prefix).
struct FieldFlag {
  const char* prefix;
  const char* flag;
};
constexpr FieldFlag kFieldFlags[] = {
    {"model", "--hf-config"},
    {"system", "--system"},
    {"weight_datatype", "--weight-datatype"},
    {"kv_cache.datatype", "--kv-cache-dtype"},
    {"workload.input_tokens", "--input-len"},
    {"workload.output_tokens", "--output-len"},
};

// Whether a violation of a probe spec depends on the mapping (the pools,
// the concurrency, the memory they leave), not on what the flags fix.
bool DependsOnMapping(const FieldError& v) {
  return v.code == ErrorCode::kOverCapacity ||
         v.field.rfind("pools", 0) == 0 ||
         v.field == "workload.concurrency";
}

// The spec with one aggregated pool of one replica of `pool` at the least
// concurrency the checker may accept for it.
ServingSpec WithPool(ServingSpec spec, const ServingPool& pool) {
  spec.pools = AggregatedPools{pool};
  spec.workload.concurrency =
      CheckedMul(pool.attention_data, pool.pipeline).value_or(1);
  return spec;
}

// The problems of the flags: the checker's rules on the base spec that no
// mapping changes, each renamed to its flag, and the GPUs against the
// system.
std::vector<FieldError> FlagProblems(const ServingSpec& base,
                                     const ServingSearchOptions& options) {
  std::vector<FieldError> out;
  const ServingPool one_gpu;
  for (FieldError& v : FindServingViolations(WithPool(base, one_gpu))) {
    if (DependsOnMapping(v)) continue;
    for (const FieldFlag& f : kFieldFlags) {
      if (v.field.rfind(f.prefix, 0) == 0) {
        v.message = absl::StrCat(f.flag, ": ", v.message);
        v.field = f.flag;
        break;
      }
    }
    out.push_back(std::move(v));
  }
  if (!ServingGpusFitSystem(base.system, options.procs)) {
    out.push_back({"--procs",
                   absl::StrCat("--procs (", options.procs,
                                ") must be at most the system's last network "
                                "tier's size (system.networks[",
                                base.system.networks.size() - 1, "].size ",
                                base.system.networks.back().size,
                                "): every pool's GPUs fit in the system"),
                   ErrorCode::kInconsistent});
  }
  return out;
}

// A pool of one replica the checker accepts, with its GPUs.
struct Shape {
  ServingPool pool;
  int64_t gpus = 0;
};

// The values of one degree (`field` of a pool, the others 1) up to `procs`
// against which the checker reports no rule of that degree alone (heads
// for tensor, blocks for pipeline): the search's loops skip the others.
std::vector<int64_t> DegreesAlone(const ServingSpec& base,
                                  int64_t ServingPool::*field,
                                  const char* key, int64_t procs) {
  const std::string path = absl::StrCat("pools.pool.", key);
  std::vector<int64_t> out;
  for (int64_t value = 1; value <= procs; ++value) {
    ServingPool pool;
    pool.*field = value;
    bool holds = true;
    for (const FieldError& v : FindServingViolations(WithPool(base, pool))) {
      holds = holds && (v.field != path || DependsOnMapping(v));
    }
    if (holds) out.push_back(value);
  }
  return out;
}

// Every pool of at most `procs` GPUs whose rules hold (FindServingViolations
// on an aggregated probe, leaving the memory to each mapping: a decode or
// prefill pool needs less than a shared one). Expert degrees are taken
// among the divisors of the stage's ranks only, the rest of the checker's
// rules judging them.
std::vector<Shape> PoolShapes(const ServingSpec& base, int64_t procs) {
  std::vector<Shape> out;
  const std::vector<int64_t> tensors =
      DegreesAlone(base, &ServingPool::tensor, "tensor", procs);
  const std::vector<int64_t> pipelines =
      DegreesAlone(base, &ServingPool::pipeline, "pipeline", procs);
  for (const int64_t t : tensors) {
    for (int64_t a = 1; t * a <= procs; ++a) {
      for (const int64_t p : pipelines) {
        if (t * a * p > procs) break;
        for (int64_t e = 1; e <= t * a; ++e) {
          if ((t * a) % e != 0) continue;
          ServingPool pool;
          pool.tensor = t;
          pool.pipeline = p;
          pool.expert = e;
          pool.attention_data = a;
          bool holds = true;
          for (const FieldError& v :
               FindServingViolations(WithPool(base, pool))) {
            holds = holds && v.code == ErrorCode::kOverCapacity;
          }
          if (holds) out.push_back({pool, t * a * p});
        }
      }
    }
  }
  return out;
}

// What a kept mapping needs to be rebuilt: its pools and concurrency.
struct Slot {
  ServingPools pools;
  int64_t concurrency = 0;
  ServingFigures figures;
};

class Searcher {
 public:
  Searcher(const ServingSpec& base, const ServingSearchOptions& options)
      : spec_(base), options_(options),
        top_(static_cast<size_t>(options.top)) {}

  // Every concurrency of the form attention_data x pipeline x 2^k (of the
  // decode pool) that the capacity rules accept, for `pools`.
  void Visit(const ServingPools& pools) {
    spec_.pools = pools;
    const ServingPool& decode = DecodePool(spec_);
    const std::optional<int64_t> groups =
        CheckedMul(decode.attention_data, decode.pipeline);
    if (!groups) return;
    for (int64_t c = *groups; c <= kMaxCount; c *= 2) {
      spec_.workload.concurrency = c;
      if (!ServingConcurrencyHolds(spec_)) continue;
      // More requests in flight never need less memory.
      if (!JudgeServingCapacity(spec_).holds()) break;
      const ServingFigures figures = EvaluateServingFigures(spec_);
      ++result_.evaluated;
      const bool meets =
          (!options_.max_ttft || figures.ttft <= *options_.max_ttft) &&
          (!options_.max_tpot || figures.tpot <= *options_.max_tpot);
      if (!meets) continue;
      ++result_.meeting_targets;
      const double score = figures.output_tokens_per_second_per_gpu;
      // Equal scores rank by tpot (a positive double's bits order as it
      // does), then in enumeration order.
      uint64_t tpot_bits = 0;
      static_assert(sizeof(tpot_bits) == sizeof(figures.tpot));
      std::memcpy(&tpot_bits, &figures.tpot, sizeof(tpot_bits));
      const TopN<Slot>::Key key{tpot_bits, order_++};
      if (!top_.Admits(score, key)) continue;
      Slot& slot = top_.Insert(score, key);
      slot.pools = pools;
      slot.concurrency = c;
      slot.figures = figures;
    }
  }

  ServingSearchResult Take(const ServingSpec& base) {
    for (size_t i = 0; i < top_.size(); ++i) {
      ServingSearchEntry entry;
      entry.spec = base;
      entry.spec.pools = top_.entry(i).pools;
      entry.spec.workload.concurrency = top_.entry(i).concurrency;
      entry.figures = top_.entry(i).figures;
      result_.best.push_back(std::move(entry));
    }
    return std::move(result_);
  }

  ServingSearchResult& result() { return result_; }

 private:
  ServingSpec spec_;
  const ServingSearchOptions& options_;
  TopN<Slot> top_;
  uint64_t order_ = 0;
  ServingSearchResult result_;
};

}  // namespace

ServingSpec ServingSearchBase(const TransformerModel& model,
                              const System& system,
                              const ServingSearchOptions& options) {
  ServingSpec spec;
  spec.model = model;
  spec.system = system;
  spec.weight_datatype = options.weight_datatype;
  spec.kv_cache.datatype = options.kv_datatype;
  spec.pools = AggregatedPools{};
  spec.workload.input_tokens = options.input_tokens;
  spec.workload.output_tokens = options.output_tokens;
  spec.workload.concurrency = 1;
  return spec;
}

absl::StatusOr<ServingSearchResult> SearchServing(
    const TransformerModel& model, const System& system,
    const ServingSearchOptions& options) {
  const ServingSpec base = ServingSearchBase(model, system, options);
  std::vector<FieldError> problems = FlagProblems(base, options);
  if (options.top < 1) {
    problems.push_back({"--top", "--top must be at least 1",
                        ErrorCode::kOutOfRange});
  }
  if (!problems.empty()) return InvalidInputError(problems);

  const std::vector<Shape> shapes = PoolShapes(base, options.procs);
  Searcher searcher(base, options);
  searcher.result().pool_shapes = static_cast<int64_t>(shapes.size());
  for (const Shape& shape : shapes) {
    if (options.procs % shape.gpus != 0) continue;
    ServingPool pool = shape.pool;
    pool.replicas = options.procs / shape.gpus;
    searcher.Visit(AggregatedPools{pool});
  }
  // Disaggregated: prefill replicas of one shape, the GPUs left to decode
  // replicas of another.
  for (const Shape& prefill : shapes) {
    for (int64_t rp = 1; rp * prefill.gpus < options.procs; ++rp) {
      const int64_t rest = options.procs - rp * prefill.gpus;
      for (const Shape& decode : shapes) {
        if (rest % decode.gpus != 0) continue;
        DisaggregatedPools pools{prefill.pool, decode.pool};
        pools.prefill.replicas = rp;
        pools.decode.replicas = rest / decode.gpus;
        searcher.Visit(pools);
      }
    }
  }
  return searcher.Take(base);
}

namespace {

// "t8 p1 e1 a1 x2": a pool's degrees and replicas.
std::string PoolText(const ServingPool& pool) {
  return absl::StrCat("t", pool.tensor, " p", pool.pipeline, " e",
                      pool.expert, " a", pool.attention_data, " x",
                      pool.replicas);
}

std::string PoolsText(const ServingPools& pools) {
  return std::visit(
      Overloaded{[](const AggregatedPools& a) {
                   return absl::StrCat("aggregated ", PoolText(a.pool));
                 },
                 [](const DisaggregatedPools& d) {
                   return absl::StrCat("prefill ", PoolText(d.prefill),
                                       " | decode ", PoolText(d.decode));
                 }},
      pools);
}

std::string TargetText(const char* name, const std::optional<double>& t) {
  return t ? absl::StrCat(name, " <= ", FormatDouble(*t), " s")
           : absl::StrCat(name, " any");
}

std::string ResultText(const ServingSearchResult& result,
                       const ServingSearchOptions& options) {
  std::string out = absl::StrFormat(
      "%d GPUs, %d input and %d output tokens per request; targets %s, %s\n"
      "%d pool shapes, %d mappings evaluated, %d meet the targets\n",
      options.procs, options.input_tokens, options.output_tokens,
      TargetText("ttft", options.max_ttft),
      TargetText("tpot", options.max_tpot), result.pool_shapes,
      result.evaluated, result.meeting_targets);
  absl::StrAppendFormat(&out, "%4s %14s %10s %10s %12s %11s  %s\n", "rank",
                        "tokens/s/GPU", "ttft (s)", "tpot (s)", "requests/s",
                        "concurrency", "pools (t p e a x replicas)");
  for (size_t i = 0; i < result.best.size(); ++i) {
    const ServingSearchEntry& e = result.best[i];
    absl::StrAppendFormat(&out, "%4d %14.2f %10.4f %10.5f %12.3f %11d  %s\n",
                          i + 1, e.figures.output_tokens_per_second_per_gpu,
                          e.figures.ttft, e.figures.tpot,
                          e.figures.requests_per_second,
                          e.spec.workload.concurrency,
                          PoolsText(e.spec.pools));
  }
  return out;
}

std::string ResultJson(const ServingSearchResult& result,
                       const ServingSearchOptions& options) {
  nlohmann::json out = nlohmann::json::object();
  out["format"] = kServingSearchFormat;
  out["procs"] = options.procs;
  out["max_ttft"] = options.max_ttft ? nlohmann::json(*options.max_ttft)
                                     : nlohmann::json(nullptr);
  out["max_tpot"] = options.max_tpot ? nlohmann::json(*options.max_tpot)
                                     : nlohmann::json(nullptr);
  out["pool_shapes"] = result.pool_shapes;
  out["evaluated"] = result.evaluated;
  out["meeting_targets"] = result.meeting_targets;
  out["mappings"] = nlohmann::json::array();
  for (size_t i = 0; i < result.best.size(); ++i) {
    const ServingSearchEntry& e = result.best[i];
    nlohmann::json mapping = nlohmann::json::object();
    mapping["rank"] = i + 1;
    mapping["figures"] = nlohmann::json::object();
    for (const ServingFigureRow& row : ServingFigureTable()) {
      mapping["figures"][row.name] = e.figures.*row.field;
    }
    mapping["spec"] = ServingSpecToJsonValue(e.spec);
    out["mappings"].push_back(std::move(mapping));
  }
  return CanonicalJson(out) + "\n";
}

}  // namespace

std::string FormatServingSearch(const ServingSearchResult& result,
                                const ServingSearchOptions& options) {
  return options.json ? ResultJson(result, options)
                      : ResultText(result, options);
}

}  // namespace blueprint
