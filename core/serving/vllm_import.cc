#include "core/serving/vllm_import.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/checked_math.h"
#include "core/base/field_errors.h"
#include "core/base/parse_int.h"

namespace blueprint {
namespace {

using Class = VllmFlagClass;

// vLLM's EngineArgs.max_num_seqs when --max-num-seqs is not given
// (vllm/engine/arg_utils.py, the default of the versions that set 256).
constexpr int64_t kVllmDefaultMaxNumSeqs = 256;

const char* ClassName(Class c) {
  switch (c) {
    case Class::kModelled:
      return "modelled";
    case Class::kIgnored:
      return "ignored";
    case Class::kUnsupported:
      return "unsupported";
  }
  return "ignored";
}

// The words of one flag as given: its value ("" for a switch).
struct Given {
  std::string word;  // as written, for messages
  std::string value;
};

class Reader {
 public:
  Reader(std::vector<FieldError>* errors, std::vector<std::string>* notes)
      : errors_(errors), notes_(notes) {}

  void Read(const std::vector<std::string>& args) {
    size_t i = 0;
    if (!args.empty() && !absl::StartsWith(args[0], "-")) {
      notes_->push_back(absl::StrCat(
          "the model \"", args[0],
          "\" of the command line is served as the --hf-config model"));
      i = 1;
    }
    for (; i < args.size(); ++i) {
      const std::string& word = args[i];
      if (!absl::StartsWith(word, "-")) {
        Error("", ErrorCode::kSyntax,
              absl::StrCat("\"", word, "\" is not a flag, and no flag before "
                                       "it takes a value"));
        continue;
      }
      const size_t eq = word.find('=');
      const std::string name = word.substr(0, eq);
      const VllmFlag* flag = Find(name);
      if (flag == nullptr) {
        Error(name, ErrorCode::kUnknownField,
              absl::StrCat(name, ": not a vLLM flag this import knows "
                                 "(core/serving/README.md lists them)"));
        if (eq == std::string::npos && i + 1 < args.size() &&
            !absl::StartsWith(args[i + 1], "-")) {
          ++i;  // its value, most likely
        }
        continue;
      }
      Given given{word, ""};
      if (flag->takes_value) {
        if (eq != std::string::npos) {
          given.value = word.substr(eq + 1);
        } else if (i + 1 < args.size()) {
          given.value = args[++i];
        } else {
          Error(name, ErrorCode::kSyntax, absl::StrCat(name, " needs a value"));
          continue;
        }
      } else if (eq != std::string::npos) {
        Error(name, ErrorCode::kSyntax,
              absl::StrCat(name, " is a switch and takes no value"));
        continue;
      }
      const std::string& key = flag->names[0];
      if (!given_.emplace(key, given).second) {
        Error(name, ErrorCode::kSyntax,
              absl::StrCat(key, " is given twice"));
      }
    }
    std::vector<std::string> ignored;
    for (const VllmFlag& flag : VllmFlags()) {
      if (given_.count(flag.names[0]) == 0) continue;
      switch (flag.flag_class) {
        case Class::kModelled:
          break;
        case Class::kIgnored:
          ignored.push_back(absl::StrCat(flag.names[0], " (", flag.doc, ")"));
          break;
        case Class::kUnsupported:
          Error(flag.names[0], ErrorCode::kUnsupported,
                absl::StrCat(flag.names[0], " is not modelled: ", flag.doc));
          break;
      }
    }
    if (!ignored.empty()) {
      notes_->push_back(
          absl::StrCat("ignored: ", absl::StrJoin(ignored, "; ")));
    }
  }

  const Given* Get(const std::string& name) const {
    auto it = given_.find(name);
    return it == given_.end() ? nullptr : &it->second;
  }
  bool Has(const std::string& name) const { return Get(name) != nullptr; }

  // A positive integer flag, `absent` without it (nullopt: reported).
  std::optional<int64_t> Count(const std::string& name, int64_t absent) {
    const Given* given = Get(name);
    if (given == nullptr) return absent;
    const std::optional<int64_t> value = ParsePositiveInteger(given->value);
    if (!value) {
      Error(name, ErrorCode::kWrongType,
            absl::StrCat(name, ": expected a positive integer, got \"",
                         given->value, "\""));
    }
    return value;
  }

  // One of `choices` (each with its meaning), `absent` without the flag.
  template <typename T>
  std::optional<T> Choice(const std::string& name,
                          const std::vector<std::pair<std::string, T>>& choices,
                          T absent) {
    const Given* given = Get(name);
    if (given == nullptr) return absent;
    std::vector<std::string> names;
    for (const auto& [spelling, value] : choices) {
      if (given->value == spelling) return value;
      names.push_back(absl::StrCat("\"", spelling, "\""));
    }
    Error(name, ErrorCode::kUnknownChoice,
          absl::StrCat(name, ": expected one of ", absl::StrJoin(names, ", "),
                       ", got \"", given->value, "\""));
    return std::nullopt;
  }

  void Error(std::string field, ErrorCode code, std::string message) {
    errors_->push_back({std::move(field), std::move(message), code});
  }
  void Note(std::string note) { notes_->push_back(std::move(note)); }

 private:
  static const VllmFlag* Find(const std::string& name) {
    for (const VllmFlag& flag : VllmFlags()) {
      for (const std::string& n : flag.names) {
        if (n == name) return &flag;
      }
    }
    return nullptr;
  }

  std::vector<FieldError>* errors_;
  std::vector<std::string>* notes_;
  std::map<std::string, Given> given_;  // by the flag's first name
};

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
  if (const Given* total = r->Get("--max-concurrency")) {
    const std::optional<int64_t> c = r->Count("--max-concurrency", 0);
    if (!c) return;
    if (*c % pool.replicas != 0) {
      r->Error("--max-concurrency", ErrorCode::kNotDivisible,
               absl::StrCat("--max-concurrency (", total->value,
                            ") must be a multiple of --data-parallel-size (",
                            pool.replicas,
                            "): the requests in flight spread evenly over "
                            "the replicas"));
      return;
    }
    spec->workload.concurrency = *c / pool.replicas;
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

void ReadWorkload(Reader* r, ServingSpec* spec) {
  for (const char* name : {"--random-input-len", "--random-output-len"}) {
    if (!r->Has(name)) {
      r->Error(name, ErrorCode::kMissingField,
               absl::StrCat(name, " (or its synonym) is required: the "
                                  "benchmark's tokens per request"));
    }
  }
  const std::optional<int64_t> input = r->Count("--random-input-len", 0);
  const std::optional<int64_t> output = r->Count("--random-output-len", 0);
  if (input) spec->workload.input_tokens = *input;
  if (output) spec->workload.output_tokens = *output;
  const std::optional<int64_t> length = r->Count("--max-model-len", 0);
  if (length && *length > 0 && input && output &&
      *input + *output > *length) {
    r->Error("--max-model-len", ErrorCode::kInconsistent,
             absl::StrCat("--max-model-len (", *length,
                          ") must hold a request's input and output tokens (",
                          *input, " + ", *output, ")"));
  }
}

void ReadDatatypes(Reader* r, ServingSpec* spec) {
  const std::optional<DataType> dtype = r->Choice<DataType>(
      "--dtype",
      {{"auto", DataType::kBFloat16},
       {"bfloat16", DataType::kBFloat16},
       {"float16", DataType::kFloat16},
       {"half", DataType::kFloat16}},
      DataType::kBFloat16);
  if (dtype) spec->weight_datatype = *dtype;
  if (r->Has("--quantization")) {
    const std::optional<bool> fp8 =
        r->Choice<bool>("--quantization", {{"fp8", true}}, false);
    if (fp8 && *fp8) spec->weight_datatype = DataType::kFloat8;
  }
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
  if (const Given* share = r->Get("--gpu-memory-utilization")) {
    double value = 0;
    if (absl::SimpleAtod(share->value, &value)) {
      spec->memory_utilization = value;
    } else {
      r->Error("--gpu-memory-utilization", ErrorCode::kWrongType,
               absl::StrCat("--gpu-memory-utilization: expected a number, "
                            "got \"",
                            share->value, "\""));
    }
  }
}

}  // namespace

const std::vector<VllmFlag>& VllmFlags() {
  // clang-format off
  static const auto* flags = new std::vector<VllmFlag>{
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

std::string VllmFlagsMarkdown() {
  std::string out = "| flag | class | meaning |\n| --- | --- | --- |\n";
  for (const VllmFlag& flag : VllmFlags()) {
    std::vector<std::string> names;
    for (const std::string& name : flag.names) {
      names.push_back(absl::StrCat("`", name, flag.takes_value ? " N" : "",
                                   "`"));
    }
    absl::StrAppend(&out, "| ", absl::StrJoin(names, ", "), " | ",
                    ClassName(flag.flag_class), " | ", flag.doc, " |\n");
  }
  return out;
}

absl::StatusOr<ServingSpec> FromVllmArgs(const std::vector<std::string>& args,
                                         const TransformerModel& model,
                                         const System& system,
                                         std::vector<std::string>* notes) {
  std::vector<FieldError> errors;
  Reader reader(&errors, notes);
  reader.Read(args);
  ServingSpec spec;
  spec.model = model;
  spec.system = system;
  ReadMapping(model, &reader, &spec);
  ReadWorkload(&reader, &spec);
  ReadDatatypes(&reader, &spec);
  if (!errors.empty()) return InvalidInputError(errors);
  return spec;
}

}  // namespace blueprint
