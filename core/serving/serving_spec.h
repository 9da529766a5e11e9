// The serving spec: what a user asks Blueprinting about a serving deployment
// (issue #48). A transformer model and a system (the training spec's own
// types, core/spec/spec.h, read by the same JSON readers, or a preset's name),
// the serving pools (one shared pool, or disaggregated prefill and decode
// pools) with their parallel degrees, the workload and the KV cache. Its
// canonical JSON ("blueprinting.serving_spec/1") spells every field out, the
// model and the system included; core/serving/README.md documents it.
//
// Parsing is strict and reports every problem of the document at once (the
// training spec's JsonObjectReader rules, core/base/json_reader.h); values
// are judged by the checker (serving_check.h).
//
// Example:
//   absl::StatusOr<ServingSpec> spec = ParseServingSpecJson(text);
//   if (!spec.ok()) return spec.status();  // one problem per line
//   std::visit(Overloaded{[](const AggregatedPools& a) {...},
//                         [](const DisaggregatedPools& d) {...}},
//              spec->pools);
//   std::string canonical = ServingSpecToJson(*spec);
#ifndef BLUEPRINTING_CORE_SERVING_SERVING_SPEC_H_
#define BLUEPRINTING_CORE_SERVING_SERVING_SPEC_H_

#include <cstdint>
#include <string>
#include <variant>

#include "absl/status/statusor.h"
#include "core/spec/spec.h"
#include "nlohmann/json.hpp"

namespace blueprint {

inline constexpr char kServingSpecFormat[] = "blueprinting.serving_spec/1";

// vLLM's defaults (vllm/config: CacheConfig.gpu_memory_utilization = 0.9,
// CacheConfig.block_size = 16), the values a spec without opinions takes.
inline constexpr double kDefaultMemoryUtilization = 0.9;
inline constexpr int64_t kDefaultKvBlockTokens = 16;

// One pool's mapping of a model replica. A replica has tensor x
// attention_data x pipeline GPUs: each pipeline stage holds num_blocks /
// pipeline blocks on tensor x attention_data ranks. Attention runs
// tensor-parallel in attention_data groups, each serving its own share of
// the requests with its own KV cache (SGLang's --enable-dp-attention, vLLM's
// data-parallel attention for MLA models); the MLPs and experts run over all
// tensor x attention_data ranks of the stage, experts spread over `expert`
// of them (expert parallelism) and each split over the rest.
struct ServingPool {
  int64_t tensor = 1;
  int64_t pipeline = 1;
  int64_t expert = 1;
  int64_t attention_data = 1;
  int64_t replicas = 1;
};

// The integer fields of a pool, each a count of at least 1, in canonical
// order: the one list the JSON reader and writer, the checker and the
// analysis text go through.
struct ServingPoolKey {
  const char* key;
  int64_t ServingPool::*field;
};
inline constexpr ServingPoolKey kServingPoolKeys[] = {
    {"tensor", &ServingPool::tensor},
    {"pipeline", &ServingPool::pipeline},
    {"expert", &ServingPool::expert},
    {"attention_data", &ServingPool::attention_data},
    {"replicas", &ServingPool::replicas},
};

// Prefill and decode share every replica (continuous batching, a prompt's
// prefill run as its own step).
struct AggregatedPools {
  ServingPool pool;
};
// Prefill replicas compute each prompt's KV cache and send it to decode
// replicas, which generate the output tokens.
struct DisaggregatedPools {
  ServingPool prefill;
  ServingPool decode;
};
using ServingPools = std::variant<AggregatedPools, DisaggregatedPools>;

// Every request has input_tokens of prompt and generates output_tokens;
// `concurrency` requests are in flight per (decode) replica.
struct ServingWorkload {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t concurrency = 0;
};

// The KV cache's element type (bfloat16 or float8) and its paging block: a
// request holds whole blocks of block_tokens tokens (vLLM's PagedAttention).
struct KvCacheConfig {
  DataType datatype = DataType::kBFloat16;
  int64_t block_tokens = kDefaultKvBlockTokens;
};

// Speculative decoding: a draft (a smaller model, or DeepSeek-V3's MTP
// blocks) proposes tokens the model verifies. Only "none" exists yet; a
// draft will be another alternative, so every consumer must handle it.
struct NoSpeculation {};
using SpeculativeDecoding = std::variant<NoSpeculation>;

struct ServingSpec {
  TransformerModel model;
  System system;
  // The weights' and GEMMs' datatype (float8: an FP8 checkpoint such as
  // DeepSeek-V3's, run on the system's float8 matrix rate).
  DataType weight_datatype = DataType::kBFloat16;
  // The share of each GPU's memory the engine may use (vLLM's
  // --gpu-memory-utilization; SGLang's --mem-fraction-static).
  double memory_utilization = kDefaultMemoryUtilization;
  KvCacheConfig kv_cache;
  ServingPools pools;
  ServingWorkload workload;
  SpeculativeDecoding speculative;
};

// The pool that holds the requests during decode (the shared pool when
// aggregated) and the one that runs prefill, with their JSON paths.
const ServingPool& DecodePool(const ServingSpec& spec);
const ServingPool& PrefillPool(const ServingSpec& spec);
const char* DecodePoolPath(const ServingSpec& spec);   // "pools.pool", ...
const char* PrefillPoolPath(const ServingSpec& spec);  // "pools.prefill", ...
bool IsDisaggregated(const ServingSpec& spec);

// ParseServingSpecJson: a spec from its JSON text (at most kMaxInputBytes,
// core/base/input_limits.h). "model" is a model object of the training spec
// (core/spec/README.md, spec/3 keys) or the name of a model preset (a
// Hugging Face config.json, core/presets/presets.h: "llama3.1-70b"), read as
// `blueprint import megatron --hf-config` reads it; "system" a system object
// or a system preset's name. kInvalidArgument (InvalidInputError) lists
// every problem, one per line, each naming its JSON path.
absl::StatusOr<ServingSpec> ParseServingSpecJson(const std::string& text);

// ModelFromHfConfig: the model of a Hugging Face config.json text, as
// `blueprint import megatron --hf-config` builds it on `system` (its flags
// with one sequence per microbatch and bfloat16, which leave the model as it
// is). Errors as MegatronFlagsFromHfConfig's and FromMegatronArgs'.
absl::StatusOr<TransformerModel> ModelFromHfConfig(
    const std::string& config_json, const System& system);

// ServingSpecToJson: the canonical text: every field spelled out (the model
// and the system as objects), keys sorted, 2-space indent, ending in "\n".
// ParseServingSpecJson(ServingSpecToJson(s)) gives back `s`.
std::string ServingSpecToJson(const ServingSpec& spec);
// The same document as a JSON value (the serving search's mappings hold it).
nlohmann::json ServingSpecToJsonValue(const ServingSpec& spec);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SERVING_SERVING_SPEC_H_
