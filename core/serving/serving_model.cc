#include "core/serving/serving_model.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/field_errors.h"
#include "core/base/format.h"
#include "core/base/status_macros.h"
#include "core/base/units.h"
#include "core/plan/hardware.h"
#include "core/serving/serving_check.h"
#include "core/spec/accounting.h"
#include "core/spec/derive.h"
#include "core/spec/enums.h"

namespace blueprint {
namespace {

// Activations, and the weights no FP8 checkpoint quantizes (embedding,
// output layer), are bfloat16: vLLM's and SGLang's --dtype auto takes the
// config's torch_dtype, bfloat16 for every model preset.
constexpr double kActivationBytes = 2;
// vLLM's sampler casts the logits to float32 before the softmax
// (vllm/v1/sample/sampler.py: logits.to(torch.float32)).
constexpr double kLogitsBytes = 4;
// The hidden-sized tensors live at once in a block's step: the residual,
// the normed input, the attention's output and the MLP's output.
constexpr double kLiveHiddenTensors = 4;
// The MLP intermediates live at once: a gated MLP's gate and up outputs
// (a plain MLP's one, counted the same).
constexpr double kLiveMlpIntermediates = 2;
// Expert parallelism moves each token to its experts and back: dispatch and
// combine (DeepEP, vLLM's and SGLang's all-to-all backends).
constexpr double kAllToAllsPerMoeBlock = 2;
// A decode token attends to its whole context: twice the causal half per
// token pair that ForwardFlops::attention counts.
constexpr double kFullRowOverCausalHalf = 2;
// A pipeline send and the KV transfer go from one rank to one other.
constexpr int64_t kPointToPointPeers = 2;

// The serving model: the MTP blocks are the speculative decoder's, which
// is not modelled yet (serving_spec.h SpeculativeDecoding): without it
// engines neither load nor run them.
TransformerModel ServedModel(const TransformerModel& model) {
  TransformerModel served = model;
  served.mtp_layers = 0;
  return served;
}

// The numbers of one pool, as doubles (the checker bounds every count).
struct Shape {
  double t = 1, p = 1, e = 1, a = 1, replicas = 1;
  double stage_ranks = 1;  // t * a: the ranks of one stage
  double blocks_per_stage = 0, moe_blocks_per_stage = 0;
  int64_t padded_vocabulary = 0;
};

Shape ShapeOf(const TransformerModel& model, const ServingPool& pool) {
  Shape s;
  s.t = static_cast<double>(pool.tensor);
  s.p = static_cast<double>(pool.pipeline);
  s.e = static_cast<double>(pool.expert);
  s.a = static_cast<double>(pool.attention_data);
  s.replicas = static_cast<double>(pool.replicas);
  s.stage_ranks = s.t * s.a;
  s.blocks_per_stage = static_cast<double>(model.num_blocks) / s.p;
  s.moe_blocks_per_stage =
      model.moe ? static_cast<double>(StageMoeBlocks(model, pool.pipeline)) : 0;
  s.padded_vocabulary =
      PaddedVocabulary(model.vocabulary, pool.tensor).value_or(0);
  return s;
}

// The first network tier that holds `ranks` consecutive ranks (the last one
// when none does: the checker bounds a pool by the last tier's size).
size_t TierOf(const System& system, double ranks) {
  for (size_t i = 0; i < system.networks.size(); ++i) {
    if (static_cast<double>(system.networks[i].size) >= ranks) return i;
  }
  return system.networks.size() - 1;
}

std::string TierSource(size_t tier) {
  return absl::StrCat("system:networks[", tier, "]");
}

double KvBytesPerTokenPerRank(const TransformerModel& model, DataType kv,
                              const Shape& s) {
  const double bytes = BytesPerElement(kv);
  if (model.latent_attention) {
    const LatentAttention& l = *model.latent_attention;
    return s.blocks_per_stage *
           static_cast<double>(l.kv_lora_rank + l.qk_rope_head_dim) * bytes;
  }
  const double heads = std::max(static_cast<double>(model.kv_heads) / s.t, 1.0);
  return s.blocks_per_stage * 2 * heads *
         static_cast<double>(model.attn_size) * bytes;
}

// The collectives of one stage when each attention group holds
// `group_tokens` tokens (prefill_collective_time's formula); the tiers they
// use are added to `sources` unless it is null.
double StageCollectiveTime(const ServingSpec& spec, const Shape& s,
                           double group_tokens,
                           std::vector<std::string>* sources) {
  const TransformerModel& m = spec.model;
  const System& system = spec.system;
  const double hidden_bytes =
      static_cast<double>(m.hidden) * kActivationBytes;
  const double dense_blocks = s.blocks_per_stage - s.moe_blocks_per_stage;
  double time = 0;
  if (s.t > 1) {
    const size_t tier = TierOf(system, s.t);
    if (sources != nullptr) sources->push_back(TierSource(tier));
    time += s.blocks_per_stage *
            CollectiveTime(system.networks[tier], CollectiveOp::kAllReduce,
                           group_tokens * hidden_bytes,
                           static_cast<int64_t>(s.t));
  }
  const size_t stage_tier = TierOf(system, s.stage_ranks);
  const double mlp_all_reduce =
      s.stage_ranks > 1
          ? CollectiveTime(system.networks[stage_tier],
                           CollectiveOp::kAllReduce,
                           s.a * group_tokens * hidden_bytes,
                           static_cast<int64_t>(s.stage_ranks))
          : 0;
  if (s.stage_ranks > 1 && sources != nullptr) {
    sources->push_back(TierSource(stage_tier));
  }
  time += dense_blocks * mlp_all_reduce;
  if (s.moe_blocks_per_stage > 0) {
    double moe = s.stage_ranks > s.e ? mlp_all_reduce : 0;
    if (s.e > 1) {
      const double topk = static_cast<double>(m.moe->topk);
      moe += kAllToAllsPerMoeBlock *
             CollectiveTime(system.networks[stage_tier],
                            CollectiveOp::kAllToAll,
                            group_tokens * topk * hidden_bytes / s.t,
                            static_cast<int64_t>(s.e));
    }
    time += s.moe_blocks_per_stage * moe;
  }
  return time;
}

}  // namespace

double KvCacheBytesPerToken(const TransformerModel& model, DataType kv) {
  Shape whole;
  whole.blocks_per_stage = static_cast<double>(model.num_blocks);
  whole.t = 1;
  return KvBytesPerTokenPerRank(model, kv, whole);
}

PoolMemory PoolMemoryOf(const ServingSpec& spec, const ServingPool& pool,
                        PoolRole role) {
  const TransformerModel model = ServedModel(spec.model);
  const Shape s = ShapeOf(model, pool);
  const ServingWorkload& w = spec.workload;
  const double input = static_cast<double>(w.input_tokens);
  const double concurrency = static_cast<double>(w.concurrency);
  PoolMemory out;
  out.kv_bytes_per_token_per_rank =
      KvBytesPerTokenPerRank(model, spec.kv_cache.datatype, s);
  // A prefill pool keeps a prompt's cache until it is sent; the others the
  // whole context.
  const int64_t context = role == PoolRole::kPrefill
                              ? w.input_tokens
                              : w.input_tokens + w.output_tokens;
  const int64_t block = spec.kv_cache.block_tokens;
  const double blocks =
      static_cast<double>(context / block + (context % block != 0 ? 1 : 0));
  out.kv_bytes_per_request_per_rank = blocks * static_cast<double>(block) *
                                      out.kv_bytes_per_token_per_rank;

  const ParameterParts parts =
      CountParameterParts(AccountedModelOf(model), s.padded_vocabulary);
  const double weight_bytes = BytesPerElement(spec.weight_datatype);
  const bool split_vocabulary = s.p > 1 && !model.vocabulary.tied;
  out.routed_bytes_per_rank = parts.routed / s.stage_ranks / s.p * weight_bytes;
  out.weight_bytes_per_rank =
      (parts.attention / s.t + (parts.mlp + parts.routed) / s.stage_ranks) /
          s.p * weight_bytes +
      parts.vocabulary / (split_vocabulary ? 2 : 1) / s.t * kActivationBytes;

  const double group_requests = concurrency / s.a;
  double step_tokens = group_requests;
  double step_sequences = group_requests;
  switch (role) {
    case PoolRole::kShared:
      step_tokens = std::max(input, group_requests);
      break;
    case PoolRole::kPrefill:
      step_tokens = input;
      step_sequences = 1;
      break;
    case PoolRole::kDecode:
      break;
  }
  double mlp_width = static_cast<double>(model.feedforward);
  if (model.moe) {
    mlp_width = std::max(
        mlp_width, static_cast<double>(model.moe->shared_ffn) +
                       static_cast<double>(model.moe->topk) *
                           static_cast<double>(model.moe->ffn));
  }
  out.activation_bytes_per_rank =
      step_tokens *
          (kLiveHiddenTensors * static_cast<double>(model.hidden) +
           kLiveMlpIntermediates * mlp_width / s.t) *
          kActivationBytes +
      step_sequences * static_cast<double>(s.padded_vocabulary) / s.t *
          kLogitsBytes;
  out.usable_bytes_per_rank = spec.system.mem1.gib * kGiB *
                              spec.memory_utilization;
  out.free_bytes_per_rank = out.usable_bytes_per_rank -
                            out.weight_bytes_per_rank -
                            out.activation_bytes_per_rank;
  out.kv_in_flight_bytes_per_rank =
      (role == PoolRole::kPrefill ? s.p : group_requests) *
      out.kv_bytes_per_request_per_rank;
  out.max_concurrency =
      s.a * std::floor(std::max(out.free_bytes_per_rank, 0.0) /
                       out.kv_bytes_per_request_per_rank);
  return out;
}

namespace {

// The analysis under construction: the figures and, when `lineage`, their
// sources (the search evaluates figures only, building no string).
class Builder {
 public:
  explicit Builder(bool lineage) : lineage_(lineage) {}

  bool lineage() const { return lineage_; }

  // Records a figure and, with lineage, its sources (made by
  // `make_sources`, only then), each once, in the order given.
  template <typename MakeSources>
  void Set(double ServingFigures::*field, const char* name, double value,
           const MakeSources& make_sources) {
    out_.figures.*field = value;
    if (lineage_) Keep(name, make_sources());
  }
  void Set(double ServingFigures::*field, const char* name, double value,
           const std::vector<std::string>& sources) {
    out_.figures.*field = value;
    if (lineage_) Keep(name, sources);
  }
  ServingAnalysis Take() { return std::move(out_); }
  const ServingFigures& figures() const { return out_.figures; }

 private:
  void Keep(const char* name, const std::vector<std::string>& sources) {
    std::vector<std::string>& kept = out_.sources[name];
    kept.clear();
    for (const std::string& source : sources) {
      if (std::find(kept.begin(), kept.end(), source) == kept.end()) {
        kept.push_back(source);
      }
    }
  }

  bool lineage_;
  ServingAnalysis out_;
};

// Sets a figure; the sources (strings) are made only with lineage.
#define BP_SET(builder, name, value, ...)                 \
  (builder).Set(&ServingFigures::name, #name, (value), [&] { \
    return std::vector<std::string>{__VA_ARGS__};          \
  })

// The spec path of a pool's field.
std::string PoolField(const char* pool_path, const char* field) {
  return absl::StrCat("spec:", pool_path, ".", field);
}

void AddMemoryFigures(const ServingSpec& spec, Builder* b) {
  const ServingPool& pool = DecodePool(spec);
  const char* path = DecodePoolPath(spec);
  const PoolMemory mem = PoolMemoryOf(
      spec, pool, IsDisaggregated(spec) ? PoolRole::kDecode : PoolRole::kShared);
  const std::string t = PoolField(path, "tensor");
  const std::string p = PoolField(path, "pipeline");
  const std::string a = PoolField(path, "attention_data");
  BP_SET(*b, kv_cache_bytes_per_token,
         KvCacheBytesPerToken(ServedModel(spec.model), spec.kv_cache.datatype),
         "spec:model", "spec:kv_cache.datatype");
  BP_SET(*b, kv_cache_bytes_per_token_per_rank,
         mem.kv_bytes_per_token_per_rank, "spec:model",
         "spec:kv_cache.datatype", t, p);
  BP_SET(*b, kv_cache_bytes_per_request_per_rank,
         mem.kv_bytes_per_request_per_rank,
         "serving:kv_cache_bytes_per_token_per_rank",
         "spec:workload.input_tokens", "spec:workload.output_tokens",
         "spec:kv_cache.block_tokens");
  BP_SET(*b, weight_bytes_per_rank, mem.weight_bytes_per_rank, "spec:model",
         "spec:weight_datatype", t, a, p);
  BP_SET(*b, activation_bytes_per_rank, mem.activation_bytes_per_rank,
         "spec:model", "spec:workload.input_tokens",
         "spec:workload.concurrency", t, a);
  BP_SET(*b, usable_bytes_per_rank, mem.usable_bytes_per_rank,
         "system:mem1.GiB", "spec:memory_utilization");
  BP_SET(*b, free_bytes_per_rank, mem.free_bytes_per_rank,
         "serving:usable_bytes_per_rank", "serving:weight_bytes_per_rank",
         "serving:activation_bytes_per_rank");
  BP_SET(*b, kv_cache_bytes_per_rank, mem.kv_in_flight_bytes_per_rank,
         "spec:workload.concurrency", a,
         "serving:kv_cache_bytes_per_request_per_rank");
  BP_SET(*b, max_concurrency, mem.max_concurrency, a,
         "serving:free_bytes_per_rank",
         "serving:kv_cache_bytes_per_request_per_rank");
}

// The rates every step reads.
struct Rates {
  const ProcessorRate* gemm = nullptr;
  double achievable = 0;
  const ProcessorRate* attention = nullptr;  // bfloat16
  std::string gemm_source;                   // "system:matrix.<datatype>"
};

// base^n by squaring: + and * only, so native and wasm agree bit for bit
// without the platform's pow (DESIGN.md: the core calls no libm
// transcendental).
double IntegerPower(double base, int64_t n) {
  double result = 1;
  while (n > 0) {
    if (n % 2 == 1) result *= base;
    base *= base;
    n /= 2;
  }
  return result;
}

// What a pool's steps read: the served model, the pool's shape, memory and
// forward FLOPs per token, and its spec path.
struct PoolTerms {
  TransformerModel model;
  Shape s;
  PoolMemory mem;
  ForwardFlops f;
  const char* path = "";
};

PoolTerms TermsOf(const ServingSpec& spec, PoolRole role) {
  const bool decode = role != PoolRole::kPrefill;
  const ServingPool& pool = decode ? DecodePool(spec) : PrefillPool(spec);
  PoolTerms out;
  out.model = ServedModel(spec.model);
  out.s = ShapeOf(out.model, pool);
  out.mem = PoolMemoryOf(
      spec, pool, IsDisaggregated(spec) ? role : PoolRole::kShared);
  out.f = ForwardFlopsPerToken(AccountedModelOf(out.model),
                               out.s.padded_vocabulary);
  out.path = decode ? DecodePoolPath(spec) : PrefillPoolPath(spec);
  return out;
}

// One stage's GEMMs and attention, block by block (the efficiency tables
// looked up at one block's FLOPs on one rank), and the last stage's logits.
double StageComputeTime(const Rates& rates, const Shape& s, double gemm_flops,
                        double attention_flops, double logits_flops) {
  return s.blocks_per_stage * (GemmTime(rates.gemm, rates.achievable,
                                        gemm_flops) +
                               FlopTime(rates.attention, attention_flops)) +
         GemmTime(rates.gemm, rates.achievable, logits_flops);
}

// A pipeline send of `bytes` per rank to the next stage (0 without
// stages), on the tier that holds the replica; `tier` receives it.
double SendTime(const ServingSpec& spec, const Shape& s, double bytes,
                size_t* tier) {
  *tier = TierOf(spec.system, s.stage_ranks * s.p);
  return s.p > 1 ? CollectiveTime(spec.system.networks[*tier],
                                  CollectiveOp::kPointToPoint, bytes,
                                  kPointToPointPeers)
                 : 0;
}

void AddPrefillFigures(const ServingSpec& spec, const Rates& rates,
                       Builder* b) {
  const PoolTerms p = TermsOf(spec, PoolRole::kPrefill);
  const Shape& s = p.s;
  const double input = static_cast<double>(spec.workload.input_tokens);
  const double blocks = static_cast<double>(p.model.num_blocks);
  const double compute = StageComputeTime(
      rates, s, input * p.f.gemm / (blocks * s.t),
      input * input * p.f.attention / s.t, p.f.logits / s.t);
  const double memory =
      MemoryTime(spec.system.mem1, p.mem.weight_bytes_per_rank) +
      MemoryTime(spec.system.mem1, input * p.mem.kv_bytes_per_token_per_rank);
  std::vector<std::string> collective_sources;
  if (b->lineage()) {
    collective_sources = {"spec:model", "spec:workload.input_tokens",
                          PoolField(p.path, "tensor"),
                          PoolField(p.path, "attention_data"),
                          PoolField(p.path, "expert")};
  }
  const double collective = StageCollectiveTime(
      spec, s, input, b->lineage() ? &collective_sources : nullptr);
  size_t tier = 0;
  const double send = SendTime(
      spec, s,
      input * static_cast<double>(p.model.hidden) * kActivationBytes / s.t,
      &tier);
  BP_SET(*b, prefill_compute_time, compute, "spec:model",
         "spec:workload.input_tokens", PoolField(p.path, "tensor"),
         PoolField(p.path, "pipeline"), rates.gemm_source,
         "system:matrix.bfloat16");
  BP_SET(*b, prefill_memory_time, memory, "system:mem1",
         "serving:weight_bytes_per_rank",
         "serving:kv_cache_bytes_per_token_per_rank");
  b->Set(&ServingFigures::prefill_collective_time, "prefill_collective_time",
         collective, collective_sources);
  BP_SET(*b, prefill_send_time, send, "spec:model",
         "spec:workload.input_tokens", PoolField(p.path, "pipeline"),
         TierSource(tier));
  const double stage = std::max(compute, memory) + collective;
  BP_SET(*b, prefill_stage_time, stage, "serving:prefill_compute_time",
         "serving:prefill_memory_time", "serving:prefill_collective_time");
  BP_SET(*b, prefill_time, s.p * stage + (s.p - 1) * send,
         PoolField(p.path, "pipeline"), "serving:prefill_stage_time",
         "serving:prefill_send_time");
  BP_SET(*b, prefill_replica_time_per_request, (stage + send) / s.a,
         "serving:prefill_stage_time", "serving:prefill_send_time",
         PoolField(p.path, "attention_data"));
  if (IsDisaggregated(spec)) {
    const size_t last = spec.system.networks.size() - 1;
    BP_SET(*b, kv_transfer_time,
           CollectiveTime(spec.system.networks[last],
                          CollectiveOp::kPointToPoint,
                          input * p.mem.kv_bytes_per_token_per_rank,
                          kPointToPointPeers),
           "spec:workload.input_tokens", PoolField(p.path, "tensor"),
           PoolField(p.path, "pipeline"), TierSource(last));
  } else {
    BP_SET(*b, kv_transfer_time, 0, "spec:pools.type");
  }
}

void AddDecodeFigures(const ServingSpec& spec, const Rates& rates,
                      Builder* b) {
  const PoolTerms d = TermsOf(spec, PoolRole::kDecode);
  const Shape& s = d.s;
  const ServingWorkload& w = spec.workload;
  const double context = static_cast<double>(w.input_tokens) +
                         static_cast<double>(w.output_tokens) / 2;
  const double microbatch = static_cast<double>(w.concurrency) / s.p;
  const double group_tokens = microbatch / s.a;
  const double blocks = static_cast<double>(d.model.num_blocks);
  const double compute = StageComputeTime(
      rates, s, microbatch * d.f.gemm / (blocks * s.stage_ranks),
      group_tokens * kFullRowOverCausalHalf * context * d.f.attention / s.t,
      microbatch * d.f.logits / s.stage_ranks);
  // With uniform routing (the assumption of core/plan/hardware.h
  // DeduplicatedAllToAllTime), an expert receives none of the microbatch's
  // tokens with probability (1 - topk / experts)^tokens: its weights are
  // not read.
  double untouched = 0;
  if (d.model.moe) {
    const double miss = 1 - static_cast<double>(d.model.moe->topk) /
                                static_cast<double>(d.model.moe->experts);
    untouched =
        IntegerPower(miss, w.concurrency / DecodePool(spec).pipeline);
  }
  const double weight_read = MemoryTime(
      spec.system.mem1,
      d.mem.weight_bytes_per_rank - untouched * d.mem.routed_bytes_per_rank);
  const double memory =
      weight_read + MemoryTime(spec.system.mem1,
                               group_tokens * context *
                                   d.mem.kv_bytes_per_token_per_rank);
  std::vector<std::string> collective_sources;
  if (b->lineage()) {
    collective_sources = {"spec:model", "spec:workload.concurrency",
                          PoolField(d.path, "tensor"),
                          PoolField(d.path, "attention_data"),
                          PoolField(d.path, "expert"),
                          PoolField(d.path, "pipeline")};
  }
  const double collective = StageCollectiveTime(
      spec, s, group_tokens, b->lineage() ? &collective_sources : nullptr);
  size_t tier = 0;
  const double send = SendTime(spec, s,
                               microbatch *
                                   static_cast<double>(d.model.hidden) *
                                   kActivationBytes / s.stage_ranks,
                               &tier);
  BP_SET(*b, decode_context_tokens, context, "spec:workload.input_tokens",
         "spec:workload.output_tokens");
  BP_SET(*b, decode_compute_time, compute, "spec:model",
         "spec:workload.concurrency", "serving:decode_context_tokens",
         PoolField(d.path, "tensor"), PoolField(d.path, "attention_data"),
         PoolField(d.path, "pipeline"), rates.gemm_source,
         "system:matrix.bfloat16");
  BP_SET(*b, decode_weight_read_time, weight_read, "system:mem1",
         "serving:weight_bytes_per_rank", "spec:workload.concurrency",
         PoolField(d.path, "pipeline"));
  BP_SET(*b, decode_memory_time, memory, "serving:decode_weight_read_time",
         "system:mem1", "serving:decode_context_tokens",
         "serving:kv_cache_bytes_per_token_per_rank");
  b->Set(&ServingFigures::decode_collective_time, "decode_collective_time",
         collective, collective_sources);
  BP_SET(*b, decode_send_time, send, "spec:model", "spec:workload.concurrency",
         PoolField(d.path, "pipeline"), TierSource(tier));
  const double stage = std::max(compute, memory) + collective;
  BP_SET(*b, decode_stage_time, stage, "serving:decode_compute_time",
         "serving:decode_memory_time", "serving:decode_collective_time");
  BP_SET(*b, decode_step_time, s.p * (stage + send),
         PoolField(d.path, "pipeline"), "serving:decode_stage_time",
         "serving:decode_send_time");
}

double PoolGpus(const ServingPool& pool) {
  return static_cast<double>(pool.replicas) * static_cast<double>(pool.tensor) *
         static_cast<double>(pool.attention_data) *
         static_cast<double>(pool.pipeline);
}

void AddThroughputFigures(const ServingSpec& spec, Builder* b) {
  const ServingFigures& f = b->figures();
  const ServingWorkload& w = spec.workload;
  const double concurrency = static_cast<double>(w.concurrency);
  const double later_tokens = static_cast<double>(w.output_tokens - 1);
  const ServingPool& decode = DecodePool(spec);
  const ServingPool& prefill = PrefillPool(spec);
  const bool disaggregated = IsDisaggregated(spec);
  const double gpus =
      disaggregated ? PoolGpus(prefill) + PoolGpus(decode) : PoolGpus(decode);
  BP_SET(*b, gpus, gpus, "spec:pools");
  BP_SET(*b, ttft, f.prefill_time + f.kv_transfer_time,
         "serving:prefill_time", "serving:kv_transfer_time");
  double tpot = 0;
  double requests = 0;
  const double decode_replicas = static_cast<double>(decode.replicas);
  if (disaggregated) {
    tpot = w.output_tokens > 1 ? f.decode_step_time : 0;
    const double prefill_rate = static_cast<double>(prefill.replicas) /
                                f.prefill_replica_time_per_request;
    requests = w.output_tokens > 1
                   ? std::min(prefill_rate,
                              decode_replicas * concurrency /
                                  (later_tokens * f.decode_step_time))
                   : prefill_rate;
  } else {
    if (w.output_tokens > 1) {
      tpot = f.decode_step_time + (concurrency - 1) *
                                      f.prefill_replica_time_per_request /
                                      later_tokens;
    }
    requests = decode_replicas * concurrency /
               (concurrency * f.prefill_replica_time_per_request +
                later_tokens * f.decode_step_time);
  }
  BP_SET(*b, tpot, tpot, "serving:decode_step_time",
         "serving:prefill_replica_time_per_request",
         "spec:workload.concurrency", "spec:workload.output_tokens",
         "spec:pools.type");
  BP_SET(*b, requests_per_second, requests,
         "serving:prefill_replica_time_per_request", "serving:decode_step_time",
         "spec:workload.concurrency", "spec:workload.output_tokens",
         "spec:pools");
  BP_SET(*b, output_tokens_per_second_per_gpu,
         requests * static_cast<double>(w.output_tokens) / gpus,
         "serving:requests_per_second", "spec:workload.output_tokens",
         "serving:gpus");
}

#undef BP_SET

}  // namespace

absl::Span<const ServingFigureRow> ServingFigureTable() {
  static constexpr ServingFigureRow kRows[] = {
#define BP_SERVING_ROW(name, unit, meaning, formula) \
  {#name, unit, meaning, formula, &ServingFigures::name},
      BP_SERVING_FIGURES(BP_SERVING_ROW)
#undef BP_SERVING_ROW
  };
  return kRows;
}

const ServingFigureRow* FindServingFigure(const std::string& name) {
  for (const ServingFigureRow& row : ServingFigureTable()) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

namespace {

// Every figure of a checked spec into `builder`.
void BuildFigures(const ServingSpec& spec, Builder* builder) {
  Rates rates;
  rates.gemm = EngineRate(spec.system.matrix, spec.weight_datatype);
  rates.achievable = AchievableThroughput(rates.gemm);
  rates.attention = EngineRate(spec.system.matrix, DataType::kBFloat16);
  if (builder->lineage()) {
    rates.gemm_source =
        absl::StrCat("system:matrix.", EnumName(spec.weight_datatype));
  }
  AddMemoryFigures(spec, builder);
  AddPrefillFigures(spec, rates, builder);
  AddDecodeFigures(spec, rates, builder);
  AddThroughputFigures(spec, builder);
}

}  // namespace

ServingFigures EvaluateServingFigures(const ServingSpec& spec) {
  Builder builder(/*lineage=*/false);
  BuildFigures(spec, &builder);
  return builder.figures();
}

absl::StatusOr<ServingAnalysis> AnalyzeServing(const ServingSpec& spec) {
  BP_RETURN_IF_ERROR(CheckServingSpec(spec));
  Builder builder(/*lineage=*/true);
  BuildFigures(spec, &builder);
  ServingAnalysis analysis = builder.Take();
  for (const ServingFigureRow& row : ServingFigureTable()) {
    const double value = analysis.figures.*row.field;
    if (!std::isfinite(value) || value < 0 ||
        analysis.sources.count(row.name) == 0) {
      return absl::InternalError(
          absl::StrCat("AnalyzeServing: figure ", row.name, " is ",
                       FormatDouble(value),
                       " (every figure must be finite, at least 0 and have "
                       "its sources)"));
    }
  }
  return analysis;
}

}  // namespace blueprint
