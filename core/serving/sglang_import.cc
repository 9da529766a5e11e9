#include "core/serving/sglang_import.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/field_errors.h"
#include "core/serving/engine_flags.h"

namespace blueprint {
namespace {

using Class = EngineFlagClass;
using Reader = EngineFlagReader;

// bench_serving.py's argparse defaults: --random-input-len 1024,
// --random-output-len 1024 (python/sglang/bench_serving.py, __main__).
constexpr int64_t kBenchDefaultLength = 1024;

// ServerArgs.page_size: 1 token per page when --page-size is not given
// (server_args.py; newer releases resolve the unset value per attention
// backend, which this import does not reproduce: pass --page-size).
constexpr int64_t kSglangDefaultPageSize = 1;

// How the experts spread: --ep-size, or --tp-size when --enable-ep-moe
// (ServerArgs.__post_init__: `if self.enable_ep_moe: self.ep_size =
// self.tp_size`, deprecated, then removed) or an all-to-all backend that
// needs every rank (ServerArgs._handle_a2a_moe: deepep and mooncake set
// `self.ep_size = self.tp_size`).
std::optional<int64_t> ExpertDegree(const TransformerModel& model, int64_t tp,
                                    Reader* r) {
  const std::optional<int64_t> ep = r->Count("--ep-size", 1);
  const std::optional<bool> a2a_all_ranks = r->Choice<bool>(
      "--moe-a2a-backend",
      {{"none", false}, {"deepep", true}, {"mooncake", true}}, false);
  if (!ep || !a2a_all_ranks) return std::nullopt;
  const bool all_ranks = *a2a_all_ranks || r->Has("--enable-ep-moe");
  const int64_t degree = all_ranks ? tp : *ep;
  if (all_ranks && r->Has("--ep-size") && *ep != tp) {
    r->Note(absl::StrCat("--ep-size ", *ep, " is replaced by --tp-size ", tp,
                         ", as SGLang does for --enable-ep-moe and the "
                         "deepep and mooncake all-to-all backends"));
  }
  if (degree > 1 && !model.moe) {
    r->Note("expert parallelism has no effect: the model has no experts");
    return 1;
  }
  return degree;
}

// The pool and the concurrency per replica.
void ReadMapping(const TransformerModel& model, Reader* r, ServingSpec* spec) {
  const std::optional<int64_t> tp = r->Count("--tp-size", 1);
  const std::optional<int64_t> pp = r->Count("--pp-size", 1);
  const std::optional<int64_t> dp = r->Count("--dp-size", 1);
  const bool dp_attention = r->Has("--enable-dp-attention");
  if (!tp || !pp || !dp) return;
  const std::optional<int64_t> expert = ExpertDegree(model, *tp, r);
  AggregatedPools pools;
  ServingPool& pool = pools.pool;
  pool.pipeline = *pp;
  if (dp_attention) {
    // compute_dp_attention_world_info (python/sglang/srt/layers/
    // dp_attention.py): attn_tp_size = tp_size // dp_size, the dp groups
    // inside the tp ranks of one engine.
    if (*tp % *dp != 0) {
      r->Error(
          "--dp-size", ErrorCode::kNotDivisible,
          absl::StrCat("--dp-size (", *dp, ") must divide --tp-size (", *tp,
                       ") with --enable-dp-attention: the attention "
                       "groups split the tensor-parallel ranks"));
      return;
    }
    pool.tensor = *tp / *dp;
    pool.attention_data = *dp;
  } else {
    pool.tensor = *tp;
    pool.replicas = *dp;
  }
  if (expert) pool.expert = *expert;
  spec->pools = pools;
  if (ReadMaxConcurrency(pool.replicas, "--dp-size", r, spec)) return;
  const std::optional<int64_t> running = r->Count("--max-running-requests", 0);
  if (!running) return;
  if (*running == 0) {
    r->Error("--max-concurrency", ErrorCode::kMissingField,
             "--max-concurrency or --max-running-requests is required: "
             "without them SGLang admits what its KV cache holds "
             "(ModelRunner: max_total_num_tokens // 2 requests, capped by "
             "its request pool), which this import does not compute");
    return;
  }
  // ModelRunner: max_running_requests // dp_size per attention group with
  // --enable-dp-attention; each plain data-parallel replica takes it whole.
  const int64_t groups = pool.attention_data;
  if (*running < groups) {
    r->Error("--max-running-requests", ErrorCode::kOutOfRange,
             absl::StrCat("--max-running-requests (", *running,
                          ") leaves no request to each of the --dp-size (",
                          groups, ") attention groups"));
    return;
  }
  spec->workload.concurrency = *running / groups * groups;
}

// bench_serving.py's random dataset: sample_random_requests draws each
// input length uniformly from [max(int(I x ratio), 1), I] and each output
// length from [int(O x ratio), O], --random-range-ratio defaulting to 0.0;
// the serving model's requests have fixed lengths, so only 1 is read.
void ReadBenchmark(const TransformerModel&, Reader* r, ServingSpec* spec) {
  const std::optional<bool> random = r->Choice<bool>(
      "--dataset-name", {{"random", true}, {"random-ids", true}}, false);
  if (random && !*random) {
    r->Error("--dataset-name", ErrorCode::kMissingField,
             "--dataset-name random is required: bench_serving's default "
             "dataset is sharegpt, whose lengths are a dataset's, not "
             "--random-input-len and --random-output-len");
  }
  const std::optional<double> ratio = r->Number("--random-range-ratio", 0.0);
  if (ratio && *ratio != 1.0) {
    r->Error("--random-range-ratio", ErrorCode::kUnsupported,
             absl::StrCat("--random-range-ratio ", *ratio,
                          " (bench_serving's default 0) draws each length "
                          "uniformly from [length x ratio, length] "
                          "(sample_random_requests); the serving model's "
                          "requests have fixed lengths: pass "
                          "--random-range-ratio 1"));
  }
  ReadRequestLengths(
      {"--random-input-len", "--random-output-len", "--context-length",
       kBenchDefaultLength, kBenchDefaultLength},
      r, spec);
}

void ReadDatatypes(const TransformerModel&, Reader* r, ServingSpec* spec) {
  // ServerArgs.dtype and .quantization: vLLM's spellings of the choices
  // read.
  ReadWeightDatatype(r, spec);
  // ServerArgs.kv_cache_dtype: "auto" is the model's datatype.
  const std::optional<DataType> kv =
      r->Choice<DataType>("--kv-cache-dtype",
                          {{"auto", DataType::kBFloat16},
                           {"bf16", DataType::kBFloat16},
                           {"bfloat16", DataType::kBFloat16},
                           {"fp8_e4m3", DataType::kFloat8},
                           {"fp8_e5m2", DataType::kFloat8}},
                          DataType::kBFloat16);
  if (kv) spec->kv_cache.datatype = *kv;
  const std::optional<int64_t> page =
      r->Count("--page-size", kSglangDefaultPageSize);
  if (page) spec->kv_cache.block_tokens = *page;
  if (!r->Has("--mem-fraction-static")) {
    r->Error("--mem-fraction-static", ErrorCode::kMissingField,
             "--mem-fraction-static is required: SGLang computes its default "
             "from the GPU's memory, the chunked prefill size, the CUDA "
             "graphs' batch size and the parallel sizes "
             "(ServerArgs._handle_gpu_memory_settings), a heuristic that "
             "changes between releases; give the value the server logs");
    return;
  }
  const std::optional<double> share = r->Number("--mem-fraction-static", 0);
  if (share) spec->memory_utilization = *share;
}

}  // namespace

const std::vector<EngineFlag>& SglangFlags() {
  // clang-format off
  static const auto* flags = new std::vector<EngineFlag>{
      // Modelled (ServerArgs, python/sglang/srt/server_args.py; --tp and
      // --dp are argparse's unambiguous prefixes, as SGLang's docs write).
      {{"--tp-size", "--tensor-parallel-size", "--tp"}, true,
       Class::kModelled,
       "`pools.pool.tensor`, or with `--enable-dp-attention` tp / dp (1)"},
      {{"--pp-size", "--pipeline-parallel-size"}, true, Class::kModelled,
       "`pools.pool.pipeline` (1)"},
      {{"--dp-size", "--data-parallel-size", "--dp"}, true, Class::kModelled,
       "`pools.pool.replicas`, or with `--enable-dp-attention` "
       "`pools.pool.attention_data` (1)"},
      {{"--enable-dp-attention"}, false, Class::kModelled,
       "attention in dp groups of tp / dp ranks inside the tp GPUs "
       "(compute_dp_attention_world_info): one replica"},
      {{"--ep-size", "--expert-parallel-size", "--ep"}, true,
       Class::kModelled, "`pools.pool.expert` (1)"},
      {{"--enable-ep-moe"}, false, Class::kModelled,
       "`pools.pool.expert` = tp (deprecated for `--ep-size`)"},
      {{"--moe-a2a-backend"}, true, Class::kModelled,
       "`deepep`/`mooncake`: `pools.pool.expert` = tp (_handle_a2a_moe); "
       "other backends an error (none)"},
      {{"--max-running-requests"}, true, Class::kModelled,
       "`workload.concurrency` per replica when `--max-concurrency` is "
       "absent, split over the dp attention groups (required without it)"},
      {{"--max-concurrency"}, true, Class::kModelled,
       "the benchmark's requests in flight, over the replicas: "
       "`workload.concurrency`"},
      {{"--dataset-name"}, true, Class::kModelled,
       "must be `random` or `random-ids` (sharegpt)"},
      {{"--random-input-len"}, true, Class::kModelled,
       "`workload.input_tokens` (1024)"},
      {{"--random-output-len"}, true, Class::kModelled,
       "`workload.output_tokens` (1024)"},
      {{"--random-range-ratio"}, true, Class::kModelled,
       "must be 1: lengths drawn below the given ones are not modelled "
       "(0.0)"},
      {{"--context-length"}, true, Class::kModelled,
       "must hold input + output tokens (the model's longest sequence)"},
      {{"--kv-cache-dtype"}, true, Class::kModelled,
       "`kv_cache.datatype`: `auto`/`bf16`/`bfloat16` bfloat16, "
       "`fp8_e4m3`/`fp8_e5m2` float8 (auto)"},
      {{"--dtype"}, true, Class::kModelled,
       "`weight_datatype`: `auto`/`bfloat16` bfloat16, `float16`/`half` "
       "float16 (auto)"},
      {{"--quantization"}, true, Class::kModelled,
       "`fp8`: `weight_datatype` float8; other methods an error (none)"},
      {{"--page-size"}, true, Class::kModelled,
       "`kv_cache.block_tokens` (1)"},
      {{"--mem-fraction-static"}, true, Class::kModelled,
       "`memory_utilization` (required: SGLang's default is a heuristic of "
       "the GPU's memory)"},
      // Ignored: nothing the serving model computes.
      {{"--model-path", "--model"}, true, Class::kIgnored,
       "the model is --hf-config's"},
      {{"--tokenizer-path", "--tokenizer"}, true, Class::kIgnored,
       "tokenization"},
      {{"--served-model-name"}, true, Class::kIgnored, "an API name"},
      {{"--host"}, true, Class::kIgnored, "the server's address"},
      {{"--port"}, true, Class::kIgnored, "the server's port"},
      {{"--trust-remote-code"}, false, Class::kIgnored, "loading code"},
      {{"--load-format"}, true, Class::kIgnored, "how weights are read"},
      {{"--random-seed", "--seed"}, true, Class::kIgnored, "sampling's seed"},
      {{"--log-level"}, true, Class::kIgnored, "logging"},
      {{"--enable-metrics"}, false, Class::kIgnored, "metrics"},
      {{"--dist-init-addr"}, true, Class::kIgnored, "how ranks meet"},
      {{"--nnodes"}, true, Class::kIgnored,
       "the nodes of one replica: its GPUs are --tp-size x --pp-size"},
      {{"--node-rank"}, true, Class::kIgnored, "which node this is"},
      {{"--attention-backend"}, true, Class::kIgnored,
       "kernels are priced at the system's rates"},
      {{"--moe-runner-backend"}, true, Class::kIgnored,
       "kernels are priced at the system's rates"},
      {{"--deepep-mode"}, true, Class::kIgnored,
       "the all-to-alls are priced on the network tiers"},
      {{"--cuda-graph-max-bs"}, true, Class::kIgnored,
       "CUDA graphs are not modelled"},
      {{"--disable-cuda-graph"}, false, Class::kIgnored,
       "CUDA graphs are not modelled"},
      {{"--enable-torch-compile"}, false, Class::kIgnored,
       "compilation is not modelled"},
      {{"--disable-radix-cache"}, false, Class::kIgnored,
       "prefix caching is not modelled: every prompt is prefilled in full"},
      {{"--chunked-prefill-size"}, true, Class::kIgnored,
       "chunked prefill is not modelled: a prompt's prefill is one step"},
      {{"--max-prefill-tokens"}, true, Class::kIgnored,
       "a prefill batch's token budget: a prompt's prefill is one step"},
      {{"--enable-mixed-chunk"}, false, Class::kIgnored,
       "mixed prefill and decode batches are not modelled"},
      {{"--enable-two-batch-overlap"}, false, Class::kIgnored,
       "communication overlapped with compute is not modelled"},
      {{"--enable-dp-lm-head"}, false, Class::kIgnored,
       "the output layer is split over the tensor ranks"},
      {{"--backend"}, true, Class::kIgnored, "the benchmark's client"},
      {{"--base-url"}, true, Class::kIgnored, "the benchmark's client"},
      {{"--num-prompts"}, true, Class::kIgnored,
       "the model is the steady state"},
      {{"--request-rate"}, true, Class::kIgnored,
       "arrivals are not modelled: the load is --max-concurrency"},
      {{"--warmup-requests"}, true, Class::kIgnored,
       "the model is the steady state"},
      {{"--flush-cache"}, false, Class::kIgnored,
       "prefix caching is not modelled"},
      {{"--output-file"}, true, Class::kIgnored, "the benchmark's report"},
      {{"--disable-tqdm"}, false, Class::kIgnored, "the benchmark's display"},
      // Unsupported: they change what is served in a way the model lacks.
      {{"--speculative-algorithm"}, true, Class::kUnsupported,
       "speculative decoding is not modelled yet"},
      {{"--speculative-draft-model-path"}, true, Class::kUnsupported,
       "speculative decoding is not modelled yet"},
      {{"--lora-paths"}, true, Class::kUnsupported,
       "LoRA adapters are not modelled"},
      {{"--cpu-offload-gb"}, true, Class::kUnsupported,
       "weights offloaded to CPU memory are not modelled"},
      {{"--max-total-tokens"}, true, Class::kUnsupported,
       "a KV cache capped below what memory holds is not modelled: set "
       "--mem-fraction-static"},
      {{"--disaggregation-mode"}, true, Class::kUnsupported,
       "a disaggregated deployment is two servers: write a disaggregated "
       "serving spec"},
      {{"--dcp-size", "--decode-context-parallel-size"}, true,
       Class::kUnsupported, "context parallelism in decode is not modelled"},
      {{"--attn-cp-size", "--attention-context-parallel-size"}, true,
       Class::kUnsupported, "context parallelism is not modelled"},
      {{"--moe-dense-tp-size"}, true, Class::kUnsupported,
       "dense MLPs on fewer tensor ranks than the experts are not modelled"},
      {{"--disable-ignore-eos"}, false, Class::kUnsupported,
       "requests that stop before --random-output-len are not modelled"},
  };
  // clang-format on
  return *flags;
}

std::string SglangFlagsMarkdown() { return EngineFlagsMarkdown(SglangFlags()); }

absl::StatusOr<ServingSpec> FromSglangArgs(const std::vector<std::string>& args,
                                           const TransformerModel& model,
                                           const System& system,
                                           std::vector<std::string>* notes) {
  return ImportEngineFlags(SglangFlags(), "an SGLang",
                           {&ReadMapping, &ReadBenchmark, &ReadDatatypes}, args,
                           model, system, notes);
}

}  // namespace blueprint
