// The SGLang import: a `python -m sglang.launch_server` command line and its
// benchmark's load (`python -m sglang.bench_serving --dataset-name random
// --random-input-len I --random-output-len O --random-range-ratio 1
// --max-concurrency C`) to a serving spec with one shared pool
// (serving_spec.h), on a given model and system. `blueprint import sglang
// --system SYS --hf-config MODEL -- FLAGS...`.
//
// Every flag is one row of one table, SglangFlags(), modelled, ignored (one
// note) or unsupported (an error naming why), the discipline and the reader
// the vLLM import shares (engine_flags.h); an unknown flag is an error, and
// every problem is reported at once. The semantics are SGLang's own
// (python/sglang/srt/server_args.py, python/sglang/bench_serving.py; each
// row and constant in sglang_import.cc cites its place):
//   * --tp-size GPUs per replica; --dp-size replicas, or with
//     --enable-dp-attention attention data parallelism inside the --tp-size
//     GPUs (tensor = tp / dp, attention_data = dp, one replica);
//   * --ep-size experts' degree (--enable-ep-moe and the deepep and mooncake
//     all-to-all backends set it to --tp-size);
//   * concurrency per replica: --max-concurrency over the replicas, else
//     --max-running-requests, else an error (SGLang's default follows from
//     its KV cache's size);
//   * --mem-fraction-static is required: SGLang computes its default from
//     the GPU's memory by a heuristic that changes between releases;
//   * the benchmark's lengths must be fixed: --dataset-name random and
//     --random-range-ratio 1 (its default 0 draws them below the given
//     ones).
//
// Example:
//   std::vector<std::string> notes;
//   absl::StatusOr<ServingSpec> spec = FromSglangArgs(
//       {"--tp", "8", "--mem-fraction-static", "0.85", "--dataset-name",
//        "random", "--random-input-len", "1024", "--random-output-len",
//        "256", "--random-range-ratio", "1", "--max-concurrency", "64"},
//       model, system, &notes);
#ifndef BLUEPRINTING_CORE_SERVING_SGLANG_IMPORT_H_
#define BLUEPRINTING_CORE_SERVING_SGLANG_IMPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/serving/engine_flags.h"
#include "core/serving/serving_spec.h"

namespace blueprint {

// SglangFlags: the table, in the order of SglangFlagsMarkdown's rows.
const std::vector<EngineFlag>& SglangFlags();

// SglangFlagsMarkdown: the table as Markdown (core/serving/README.md shows
// it).
std::string SglangFlagsMarkdown();

// FromSglangArgs: the spec of `args` (the words after `--`: the launch
// line's flags and the benchmark's, in one list), serving `model` on
// `system`; `notes` receives the ignored flags and the other notes, also
// when the command line has errors. The spec is not checked: `blueprint
// serve check` judges it.
absl::StatusOr<ServingSpec> FromSglangArgs(const std::vector<std::string>& args,
                                           const TransformerModel& model,
                                           const System& system,
                                           std::vector<std::string>* notes);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SERVING_SGLANG_IMPORT_H_
