// The serving model (issue #48's first slice): from a checked ServingSpec,
// the KV cache per token and per rank, the memory a pool's ranks have left
// for the cache and the concurrency it holds, prefill and decode step times
// on the system's matrix rates, memory bandwidth and network tiers, and the
// latency and throughput figures (time to first token, time per output
// token, requests and tokens per second). Pure functions; every constant is
// named in serving_model.cc with its source, and every formula is written
// once, in the figure table below, whose text `blueprint serve explain`
// prints (core/serving/README.md describes the model and what it leaves out).
//
// Example:
//   absl::StatusOr<ServingAnalysis> analysis = AnalyzeServing(spec);
//   if (!analysis.ok()) return analysis.status();  // the checker's violations
//   double ttft = analysis->figures.ttft;
#ifndef BLUEPRINTING_CORE_SERVING_SERVING_MODEL_H_
#define BLUEPRINTING_CORE_SERVING_SERVING_MODEL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/serving/serving_spec.h"

namespace blueprint {

// clang-format off

// The figure table: X(name, unit, meaning, formula), in the order of the
// canonical text. "The pool" is the decode pool (the shared pool when
// aggregated), "prefill" figures are the prefill pool's. A formula's names
// are other figures, the spec's fields (pool fields of the pool concerned)
// and the model's terms: kv_bytes and weight_bytes (bytes per element of
// kv_cache.datatype and weight_datatype), activation_bytes (2, bfloat16),
// logits_bytes (4, float32), the parameter parts (core/spec/accounting.h
// CountParameterParts), the forward FLOPs per token (ForwardFlopsPerToken:
// gemm, logits, attention per token pair and block) and the tiers' times
// (core/plan/hardware.h: GemmTime, FlopTime, MemoryTime, CollectiveTime).
#define BP_SERVING_FIGURES(X)                                                  \
  X(gpus, "count", "GPUs of every pool",                                      \
    "sum over pools of replicas * tensor * attention_data * pipeline")         \
  X(kv_cache_bytes_per_token, "bytes", "the KV cache of one token, all blocks", \
    "GQA: num_blocks * 2 * kv_heads * attn_size * kv_bytes; MLA: num_blocks * " \
    "(kv_lora_rank + qk_rope_head_dim) * kv_bytes")                            \
  X(kv_cache_bytes_per_token_per_rank, "bytes",                                \
    "the KV cache of one token on one rank of the pool",                      \
    "GQA: num_blocks / pipeline * 2 * max(kv_heads / tensor, 1) * attn_size * " \
    "kv_bytes (heads split over the tensor ranks, each rank one head when "    \
    "kv_heads < tensor); MLA: num_blocks / pipeline * (kv_lora_rank + "        \
    "qk_rope_head_dim) * kv_bytes (the latent replicated over the tensor "     \
    "ranks)")                                                                  \
  X(kv_cache_bytes_per_request_per_rank, "bytes",                              \
    "one request's KV cache on one rank, whole paging blocks",                \
    "ceil((input_tokens + output_tokens) / block_tokens) * block_tokens * "    \
    "kv_cache_bytes_per_token_per_rank")                                       \
  X(weight_bytes_per_rank, "bytes", "the weights one rank of the pool holds", \
    "(attention / tensor + (mlp + routed) / (tensor * attention_data)) / "     \
    "pipeline * weight_bytes + vocabulary / (pipeline > 1 and untied ? 2 : "   \
    "1) / tensor * activation_bytes (an end stage holds its own vocabulary "   \
    "matrix; a tied one is copied to the last stage)")                         \
  X(activation_bytes_per_rank, "bytes",                                        \
    "the working activations of the pool's largest step on one rank",        \
    "step_tokens * (4 * hidden + 2 * mlp_width / tensor) * activation_bytes + " \
    "step_sequences * padded_vocabulary / tensor * logits_bytes (shared pool: " \
    "step_tokens max(input_tokens, concurrency / attention_data); decode: "    \
    "concurrency / attention_data; step_sequences concurrency / "              \
    "attention_data; mlp_width: the widest MLP's feedforward, or shared_ffn + " \
    "topk * moe.ffn)")                                                         \
  X(usable_bytes_per_rank, "bytes", "the memory the engine may use per rank", \
    "mem1.GiB * 2^30 * memory_utilization")                                    \
  X(free_bytes_per_rank, "bytes", "the memory left for the KV cache per rank", \
    "usable_bytes_per_rank - weight_bytes_per_rank - "                         \
    "activation_bytes_per_rank")                                               \
  X(kv_cache_bytes_per_rank, "bytes",                                          \
    "the KV cache of the requests in flight on one rank",                     \
    "concurrency / attention_data * kv_cache_bytes_per_request_per_rank")      \
  X(max_concurrency, "count",                                                  \
    "the most requests in flight a replica's KV cache holds",                 \
    "attention_data * floor(max(free_bytes_per_rank, 0) / "                    \
    "kv_cache_bytes_per_request_per_rank)")                                    \
  X(prefill_compute_time, "s",                                                 \
    "one stage's prefill of one prompt per attention group, GEMMs and "       \
    "attention, on one rank",                                                  \
    "blocks_per_stage * (GemmTime(input_tokens * gemm / (num_blocks * "        \
    "tensor)) + FlopTime(bfloat16, input_tokens^2 * attention / tensor)) + "   \
    "GemmTime(logits / tensor)")                                               \
  X(prefill_memory_time, "s", "one stage's prefill memory traffic on one rank", \
    "MemoryTime(weight_bytes_per_rank) + MemoryTime(input_tokens * "           \
    "kv_cache_bytes_per_token_per_rank)")                                      \
  X(prefill_collective_time, "s", "one stage's prefill collectives",          \
    "blocks_per_stage attention all-reduces over tensor of input_tokens * "    \
    "hidden * activation_bytes; per dense block an all-reduce over tensor * "  \
    "attention_data of attention_data * input_tokens * hidden * "              \
    "activation_bytes; per MoE block two all-to-alls over expert of "          \
    "input_tokens * topk * hidden * activation_bytes / tensor (expert > 1) "   \
    "and that all-reduce (expert < tensor * attention_data); each on the "     \
    "first tier holding its ranks")                                            \
  X(prefill_send_time, "s", "one pipeline send of a prompt's activations",    \
    "pipeline > 1: CollectiveTime(p2p, input_tokens * hidden * "               \
    "activation_bytes / tensor); else 0")                                      \
  X(prefill_stage_time, "s", "one stage's prefill",                           \
    "max(prefill_compute_time, prefill_memory_time) + "                        \
    "prefill_collective_time")                                                 \
  X(prefill_time, "s", "one prompt's prefill through every stage",           \
    "pipeline * prefill_stage_time + (pipeline - 1) * prefill_send_time")      \
  X(prefill_replica_time_per_request, "s",                                     \
    "the time a prefill replica spends per prompt when busy",                 \
    "(prefill_stage_time + prefill_send_time) / attention_data")               \
  X(decode_context_tokens, "tokens",                                           \
    "the mean context a decode step attends to",                              \
    "input_tokens + output_tokens / 2")                                        \
  X(decode_compute_time, "s",                                                  \
    "one stage's decode of one microbatch (concurrency / pipeline requests) " \
    "on one rank",                                                             \
    "blocks_per_stage * (GemmTime(concurrency / pipeline * gemm / (num_blocks " \
    "* tensor * attention_data)) + FlopTime(bfloat16, concurrency / "          \
    "(attention_data * pipeline) * 2 * decode_context_tokens * attention / "   \
    "tensor)) + GemmTime(concurrency / pipeline * logits / (tensor * "         \
    "attention_data))")                                                        \
  X(decode_weight_read_time, "s",                                              \
    "reading the weights one microbatch touches on one rank",                \
    "MemoryTime(weight_bytes_per_rank - (1 - routed_touched) * "               \
    "routed_bytes_per_rank), routed_touched = 1 - (1 - topk / experts)^"       \
    "(concurrency / pipeline) (uniform routing)")                              \
  X(decode_memory_time, "s", "one stage's decode memory traffic on one rank", \
    "decode_weight_read_time + MemoryTime(concurrency / (attention_data * "    \
    "pipeline) * decode_context_tokens * kv_cache_bytes_per_token_per_rank)")  \
  X(decode_collective_time, "s", "one stage's decode collectives",            \
    "prefill_collective_time's collectives for concurrency / (attention_data " \
    "* pipeline) tokens per attention group")                                  \
  X(decode_send_time, "s", "one pipeline send of a microbatch's activations", \
    "pipeline > 1: CollectiveTime(p2p, concurrency / pipeline * hidden * "     \
    "activation_bytes / (tensor * attention_data)); else 0")                   \
  X(decode_stage_time, "s", "one stage's decode of one microbatch",           \
    "max(decode_compute_time, decode_memory_time) + decode_collective_time")   \
  X(decode_step_time, "s",                                                     \
    "one decode step: every request of the replica gains a token",           \
    "pipeline * (decode_stage_time + decode_send_time)")                       \
  X(kv_transfer_time, "s",                                                     \
    "sending a prompt's KV cache from the prefill pool to the decode pool",  \
    "disaggregated: CollectiveTime(last tier, p2p, input_tokens * "            \
    "prefill kv_cache_bytes_per_token_per_rank); aggregated: 0")               \
  X(ttft, "s", "time to first token",                                         \
    "prefill_time + kv_transfer_time")                                         \
  X(tpot, "s", "time per output token after the first",                      \
    "output_tokens = 1: 0; disaggregated: decode_step_time; aggregated: "      \
    "decode_step_time + (concurrency - 1) * prefill_replica_time_per_request " \
    "/ (output_tokens - 1) (each other request's prefill stalls the decode "   \
    "once)")                                                                   \
  X(requests_per_second, "requests/s", "completed requests per second, all replicas", \
    "aggregated: replicas * concurrency / (concurrency * "                     \
    "prefill_replica_time_per_request + (output_tokens - 1) * "                \
    "decode_step_time); disaggregated: min(prefill replicas / "                \
    "prefill_replica_time_per_request, decode replicas * concurrency / "      \
    "((output_tokens - 1) * decode_step_time))")                               \
  X(output_tokens_per_second_per_gpu, "tokens/s/GPU",                          \
    "generated tokens per second per GPU",                                    \
    "requests_per_second * output_tokens / gpus")

// clang-format on

// The figures, one double each (counts are whole numbers).
struct ServingFigures {
#define BP_SERVING_FIELD(name, unit, meaning, formula) double name = 0;
  BP_SERVING_FIGURES(BP_SERVING_FIELD)
#undef BP_SERVING_FIELD
};

struct ServingFigureRow {
  const char* name;
  const char* unit;
  const char* meaning;
  const char* formula;
  double ServingFigures::*field;
};
absl::Span<const ServingFigureRow> ServingFigureTable();
// The row of `name`, or nullptr.
const ServingFigureRow* FindServingFigure(const std::string& name);

// ServingAnalysis: the figures and, per figure, the lineage sources it was
// computed from ("serving:<figure>", "spec:<json path>",
// "system:<json path>"), in a fixed order.
struct ServingAnalysis {
  ServingFigures figures;
  std::map<std::string, std::vector<std::string>> sources;
};

// PoolMemory: the memory figures of one pool's rank. A shared pool's step
// holds a prompt's or the decode batch's tokens, a prefill pool's one
// prompt (and its KV cache for each of its pipeline's prompts in flight), a
// decode pool's the decode batch.
enum class PoolRole { kShared, kPrefill, kDecode };
struct PoolMemory {
  double kv_bytes_per_token_per_rank = 0;
  double kv_bytes_per_request_per_rank = 0;
  double weight_bytes_per_rank = 0;
  double routed_bytes_per_rank = 0;  // the routed experts' share of it
  double activation_bytes_per_rank = 0;
  double usable_bytes_per_rank = 0;
  double free_bytes_per_rank = 0;
  double kv_in_flight_bytes_per_rank = 0;  // the workload's requests
  double max_concurrency = 0;
};
// For a spec whose structural rules hold (FindServingViolations before its
// capacity rules); serving_check.cc judges the capacity with it.
PoolMemory PoolMemoryOf(const ServingSpec& spec, const ServingPool& pool,
                        PoolRole role);

// KvCacheBytesPerToken: kv_cache_bytes_per_token of `model` (see the table).
double KvCacheBytesPerToken(const TransformerModel& model, DataType kv);

// EvaluateServingFigures: AnalyzeServing's figures without their lineage
// and without judging the rules, for a spec the checker accepts (the
// serving search, serving_search.h, judges each mapping with the checker's
// own functions first). Builds no string.
ServingFigures EvaluateServingFigures(const ServingSpec& spec);

// AnalyzeServing: the figures of `spec`; kInvalidArgument with every
// violation when the checker rejects it (serving_check.h), kInternal if a
// figure came out negative or not finite (a bug).
absl::StatusOr<ServingAnalysis> AnalyzeServing(const ServingSpec& spec);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SERVING_SERVING_MODEL_H_
