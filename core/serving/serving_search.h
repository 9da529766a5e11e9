// The serving search (issue #48): every serving mapping of a model on N GPUs
// of a system under a workload, aggregated (one shared pool: tensor,
// pipeline, expert and attention-data degrees, replicas filling the N GPUs)
// and disaggregated (a prefill pool and a decode pool splitting the N GPUs),
// each at every concurrency per (decode) replica of the form
// attention_data x pipeline x 2^k its KV cache holds, ranked by
// output_tokens_per_second_per_gpu (equal ones: the lower tpot first) among
// those meeting the latency targets (ttft <= max_ttft, tpot <= max_tpot).
// `blueprint search --serving`.
//
// The rules are the serving checker's (serving_check.h): each pool shape is
// judged once by FindServingViolations, and per mapping only the rules that
// change with the pools' replicas and the concurrency, through the
// checker's own functions (ServingConcurrencyHolds, JudgeServingCapacity);
// the figures are AnalyzeServing's (EvaluateServingFigures, without the
// lineage). A mapping costs no allocation beyond the ranking's slots.
//
// Example:
//   absl::StatusOr<ServingSearchResult> result = SearchServing(base, options);
//   // result->best[0].spec: the fastest mapping meeting the targets
#ifndef BLUEPRINTING_CORE_SERVING_SERVING_SEARCH_H_
#define BLUEPRINTING_CORE_SERVING_SERVING_SEARCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/serving/serving_model.h"
#include "core/serving/serving_spec.h"

namespace blueprint {

struct ServingSearchOptions {
  int64_t procs = 0;  // the GPUs every mapping uses, all of them
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  std::optional<double> max_ttft;  // seconds; none: no target
  std::optional<double> max_tpot;
  int64_t top = 10;  // mappings kept, best first
  bool json = false;
  DataType kv_datatype = DataType::kBFloat16;
  DataType weight_datatype = DataType::kBFloat16;
};

// One ranked mapping: its spec (the base's model, system and datatypes, its
// pools and workload) and its figures.
struct ServingSearchEntry {
  ServingSpec spec;
  ServingFigures figures;
};

struct ServingSearchResult {
  int64_t pool_shapes = 0;      // pools (one replica) the checker accepts
  int64_t evaluated = 0;        // mappings whose figures were computed
  int64_t meeting_targets = 0;  // of those, within max_ttft and max_tpot
  std::vector<ServingSearchEntry> best;  // at most options.top, best first
};

// ServingSearchBase: the spec every mapping of the search starts from: the
// model and system, options' datatypes and lengths, vLLM's default memory
// utilization and paging block, one GPU and concurrency 1.
ServingSpec ServingSearchBase(const TransformerModel& model,
                              const System& system,
                              const ServingSearchOptions& options);

// SearchServing: the ranking. kInvalidArgument lists every problem at once,
// each naming the flag it comes from: the checker's rules that no mapping
// changes (the model and system, the datatypes, the lengths: --hf-config,
// --system, --weight-datatype, --kv-cache-dtype, --input-len,
// --output-len), procs beyond the system (--procs), a top of 0 (--top).
// A search finding no mapping is no error (empty `best`).
absl::StatusOr<ServingSearchResult> SearchServing(
    const TransformerModel& model, const System& system,
    const ServingSearchOptions& options);

// The result as the CLI prints it: a table best first, or with
// options.json a JSON document ("blueprinting.serving_search/1") whose
// mappings hold their canonical serving spec.
std::string FormatServingSearch(const ServingSearchResult& result,
                                const ServingSearchOptions& options);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SERVING_SERVING_SEARCH_H_
