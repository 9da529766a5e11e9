#include "core/serving/vllm_import.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/checked_math.h"
#include "core/base/field_errors.h"
#include "core/serving/engine_flags.h"

namespace blueprint {
namespace {

using Class = EngineFlagClass;
using Reader = EngineFlagReader;

// vLLM's EngineArgs.max_num_seqs when --max-num-seqs is not given
// (vllm/engine/arg_utils.py, the default of the versions that set 256).
constexpr int64_t kVllmDefaultMaxNumSeqs = 256;

// The pool and the concurrency per replica.
void ReadMapping(const TransformerModel& model, Reader* r, ServingSpec* spec) {
  AggregatedPools pools;
  ServingPool& pool = pools.pool;
  const std::optional<int64_t> t = r->Count("--tensor-parallel-size", 1);
  const std::optional<int64_t> p = r->Count("--pipeline-parallel-size", 1);
  const std::optional<int64_t> dp = r->Count("--data-parallel-size", 1);
  bool expert_parallel = r->Has("--enable-expert-parallel");
  if (expert_parallel && !model.moe) {
    r->Note("--enable-expert-parallel has no effect: the model has no "
            "experts");
    expert_parallel = false;
  }
  if (!t || !p || !dp) return;
  pool.tensor = *t;
  pool.pipeline = *p;
  if (expert_parallel) {
    pool.attention_data = *dp;
    pool.expert = CheckedMul(*t, *dp).value_or(0);
  } else {
    pool.replicas = *dp;
  }
  spec->pools = pools;
  // One engine per data-parallel rank: a replica holds `engines` of them.
  const int64_t engines = expert_parallel ? *dp : 1;
  if (ReadMaxConcurrency(pool.replicas, "--data-parallel-size", r, spec)) {
    return;
  }
  if (!r->Has("--max-num-seqs")) {
    r->Note(absl::StrCat("without --max-concurrency or --max-num-seqs each "
                         "engine holds vLLM's default of ",
                         kVllmDefaultMaxNumSeqs, " requests"));
  }
  const std::optional<int64_t> seqs =
      r->Count("--max-num-seqs", kVllmDefaultMaxNumSeqs);
  if (seqs) spec->workload.concurrency = CheckedMul(*seqs, engines).value_or(0);
}

void ReadWorkload(const TransformerModel&, Reader* r, ServingSpec* spec) {
  ReadRequestLengths({"--random-input-len", "--random-output-len",
                      "--max-model-len", std::nullopt, std::nullopt},
                     r, spec);
}

void ReadDatatypes(const TransformerModel&, Reader* r, ServingSpec* spec) {
  ReadWeightDatatype(r, spec);
  const std::optional<DataType> kv = r->Choice<DataType>(
      "--kv-cache-dtype",
      {{"auto", DataType::kBFloat16},
       {"bfloat16", DataType::kBFloat16},
       {"fp8", DataType::kFloat8},
       {"fp8_e4m3", DataType::kFloat8},
       {"fp8_e5m2", DataType::kFloat8}},
      DataType::kBFloat16);
  if (kv) spec->kv_cache.datatype = *kv;
  const std::optional<int64_t> block =
      r->Count("--block-size", kDefaultKvBlockTokens);
  if (block) spec->kv_cache.block_tokens = *block;
  const std::optional<double> share =
      r->Number("--gpu-memory-utilization", kDefaultMemoryUtilization);
  if (share) spec->memory_utilization = *share;
}

}  // namespace

const std::vector<EngineFlag>& VllmFlags() {
  // clang-format off
  static const auto* flags = new std::vector<EngineFlag>{
      // Modelled.
      {{"--tensor-parallel-size", "-tp"}, true, Class::kModelled,
       "`pools.pool.tensor` (1)"},
      {{"--pipeline-parallel-size", "-pp"}, true, Class::kModelled,
       "`pools.pool.pipeline` (1)"},
      {{"--data-parallel-size", "-dp"}, true, Class::kModelled,
       "`pools.pool.replicas`, or with `--enable-expert-parallel` "
       "`pools.pool.attention_data` (1)"},
      {{"--enable-expert-parallel"}, false, Class::kModelled,
       "`pools.pool.expert` = tensor x data parallel size, attention data "
       "parallel (off: experts split over the tensor ranks)"},
      {{"--max-num-seqs"}, true, Class::kModelled,
       "`workload.concurrency` per engine when `--max-concurrency` is absent "
       "(256)"},
      {{"--max-concurrency"}, true, Class::kModelled,
       "the benchmark's requests in flight, over the replicas: "
       "`workload.concurrency`"},
      {{"--random-input-len", "--input-len"}, true, Class::kModelled,
       "`workload.input_tokens` (required)"},
      {{"--random-output-len", "--output-len"}, true, Class::kModelled,
       "`workload.output_tokens` (required)"},
      {{"--max-model-len"}, true, Class::kModelled,
       "must hold input + output tokens (the model's longest sequence)"},
      {{"--kv-cache-dtype"}, true, Class::kModelled,
       "`kv_cache.datatype`: `auto` bfloat16, `fp8`/`fp8_e4m3`/`fp8_e5m2` "
       "float8 (auto)"},
      {{"--dtype"}, true, Class::kModelled,
       "`weight_datatype`: `auto`/`bfloat16` bfloat16, `float16`/`half` "
       "float16 (auto)"},
      {{"--quantization", "-q"}, true, Class::kModelled,
       "`fp8`: `weight_datatype` float8; other methods an error (none)"},
      {{"--block-size"}, true, Class::kModelled,
       "`kv_cache.block_tokens` (16)"},
      {{"--gpu-memory-utilization"}, true, Class::kModelled,
       "`memory_utilization` (0.9)"},
      // Ignored: nothing the serving model computes.
      {{"--host"}, true, Class::kIgnored, "the server's address"},
      {{"--port"}, true, Class::kIgnored, "the server's port"},
      {{"--model"}, true, Class::kIgnored,
       "the model is --hf-config's"},
      {{"--served-model-name"}, true, Class::kIgnored, "an API name"},
      {{"--tokenizer"}, true, Class::kIgnored, "tokenization"},
      {{"--trust-remote-code"}, false, Class::kIgnored, "loading code"},
      {{"--download-dir"}, true, Class::kIgnored, "where weights are kept"},
      {{"--load-format"}, true, Class::kIgnored, "how weights are read"},
      {{"--seed"}, true, Class::kIgnored, "sampling's seed"},
      {{"--disable-log-requests"}, false, Class::kIgnored, "logging"},
      {{"--disable-log-stats"}, false, Class::kIgnored, "logging"},
      {{"--uvicorn-log-level"}, true, Class::kIgnored, "logging"},
      {{"--distributed-executor-backend"}, true, Class::kIgnored,
       "how workers start"},
      {{"--enforce-eager"}, false, Class::kIgnored,
       "CUDA graphs are not modelled"},
      {{"--disable-custom-all-reduce"}, false, Class::kIgnored,
       "all-reduces are priced on the network tiers"},
      {{"--swap-space"}, true, Class::kIgnored,
       "preemption to CPU memory is not modelled"},
      {{"--enable-prefix-caching"}, false, Class::kIgnored,
       "prefix caching is not modelled: every prompt is prefilled in full"},
      {{"--no-enable-prefix-caching"}, false, Class::kIgnored,
       "prefix caching is not modelled"},
      {{"--enable-chunked-prefill"}, false, Class::kIgnored,
       "chunked prefill is not modelled: a prompt's prefill is one step"},
      {{"--max-num-batched-tokens"}, true, Class::kIgnored,
       "the step's token budget: chunked prefill is not modelled"},
      {{"--backend"}, true, Class::kIgnored, "the benchmark's client"},
      {{"--endpoint"}, true, Class::kIgnored, "the benchmark's client"},
      {{"--dataset-name"}, true, Class::kIgnored,
       "the lengths are --random-input-len and --random-output-len"},
      {{"--num-prompts"}, true, Class::kIgnored,
       "the model is the steady state"},
      {{"--request-rate"}, true, Class::kIgnored,
       "arrivals are not modelled: the load is --max-concurrency"},
      {{"--ignore-eos"}, false, Class::kIgnored,
       "every request generates its output tokens"},
      // Unsupported: they change what is served in a way the model lacks.
      {{"--speculative-config"}, true, Class::kUnsupported,
       "speculative decoding is not modelled yet"},
      {{"--num-speculative-tokens"}, true, Class::kUnsupported,
       "speculative decoding is not modelled yet"},
      {{"--enable-lora"}, false, Class::kUnsupported,
       "LoRA adapters are not modelled"},
      {{"--cpu-offload-gb"}, true, Class::kUnsupported,
       "weights offloaded to CPU memory are not modelled"},
      {{"--kv-transfer-config"}, true, Class::kUnsupported,
       "a disaggregated deployment is two engines: write a disaggregated "
       "serving spec"},
      {{"--decode-context-parallel-size", "-dcp"}, true, Class::kUnsupported,
       "context parallelism in decode is not modelled"},
  };
  // clang-format on
  return *flags;
}

std::string VllmFlagsMarkdown() { return EngineFlagsMarkdown(VllmFlags()); }

absl::StatusOr<ServingSpec> FromVllmArgs(const std::vector<std::string>& args,
                                         const TransformerModel& model,
                                         const System& system,
                                         std::vector<std::string>* notes) {
  return ImportEngineFlags(VllmFlags(), "a vLLM", {&ReadMapping, &ReadWorkload, &ReadDatatypes}, args, model, system,
                           notes);
}

}  // namespace blueprint
