// The vLLM import: a `vllm serve` command line and its benchmark's load
// (`vllm bench serve`'s --random-input-len / --random-output-len /
// --max-concurrency, or --input-len / --output-len) to a serving spec with
// one shared pool (serving_spec.h), on a given model and system. `blueprint
// import vllm --system SYS --hf-config MODEL -- FLAGS...`.
//
// Every flag is one row of one table, VllmFlags(), in one of three classes
// (engine_flags.h, shared with the SGLang import), the discipline of the
// Megatron-LM import (core/adapters/megatron.h):
//   * modelled: it sets a field of the spec (its row says which and what
//     holds without it);
//   * ignored: accepted, and listed in one note: it changes nothing the
//     serving model computes (a port, a log level, a tokenizer), or it
//     changes what the model leaves out (prefix caching, chunked prefill,
//     a request rate), which the note says;
//   * unsupported: an error naming the flag and why (speculative decoding,
//     LoRA adapters, CPU offload, disaggregated KV transfer).
// A flag vLLM has that the table lacks, or a stray word, is an error; the
// first word may be the model's name (as `vllm serve MODEL` takes it), which
// a note says is replaced by the --hf-config model.
//
// The mapping: --tensor-parallel-size and --pipeline-parallel-size are the
// pool's degrees; --data-parallel-size is the replicas, or with
// --enable-expert-parallel the attention data parallelism of one replica
// whose experts spread over tensor x data ranks (vLLM's EP size); the
// concurrency per replica is --max-concurrency over the replicas, or else
// --max-num-seqs per engine (one engine per data-parallel rank), or else
// vLLM's default of 256.
//
// Errors are FieldErrors whose field is the flag (or "" for a stray word),
// all reported at once.
//
// Example:
//   std::vector<std::string> notes;
//   absl::StatusOr<ServingSpec> spec = FromVllmArgs(
//       {"--tensor-parallel-size", "8", "--input-len", "1024",
//        "--output-len", "256", "--max-concurrency", "64"},
//       model, system, &notes);
#ifndef BLUEPRINTING_CORE_SERVING_VLLM_IMPORT_H_
#define BLUEPRINTING_CORE_SERVING_VLLM_IMPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/serving/engine_flags.h"
#include "core/serving/serving_spec.h"

namespace blueprint {

// A vLLM flag's row and class: the shared table row (engine_flags.h).
using VllmFlagClass = EngineFlagClass;
using VllmFlag = EngineFlag;

// VllmFlags: the table, in the order of VllmFlagsMarkdown's rows.
const std::vector<VllmFlag>& VllmFlags();

// VllmFlagsMarkdown: the table as Markdown (core/serving/README.md shows
// it): a header row, then one row per flag.
std::string VllmFlagsMarkdown();

// FromVllmArgs: the spec of `args` (the words after `--`), serving `model`
// on `system`; `notes` receives the ignored flags and the other notes, also
// when the command line has errors. The spec is not checked: `blueprint
// serve check` judges it.
absl::StatusOr<ServingSpec> FromVllmArgs(const std::vector<std::string>& args,
                                         const TransformerModel& model,
                                         const System& system,
                                         std::vector<std::string>* notes);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SERVING_VLLM_IMPORT_H_
