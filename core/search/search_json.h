// Text in and out of the strategy search: the result as JSON (--json) and as
// a human-readable table, and the merge of a partitioned search's outputs.
// The `blueprint search` flags (ParseSearchFlags) are search_flags.h's,
// included here for the callers that parse and print.
//
// Example:
//   absl::StatusOr<SearchOptions> options = ParseSearchFlags(args);
//   if (!options.ok()) return options.status();  // one problem per line
//   absl::StatusOr<SearchResult> result = RunSearch(model, system, *options);
//   if (!result.ok()) return result.status();
//   std::cout << FormatSearchResult(*result, *options);
#ifndef BLUEPRINTING_CORE_SEARCH_SEARCH_JSON_H_
#define BLUEPRINTING_CORE_SEARCH_SEARCH_JSON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/search/search.h"
#include "core/search/search_flags.h"
#include "nlohmann/json.hpp"

namespace blueprint {

// {"bad_executions": ..., "good_executions": ..., "top": [{"execution":
// {Calculon's execution keys}, "stats": {Calculon's stats fields}}, ...],
// "total_executions": ...}: canonical (core/base/json.h), ending in "\n".
// `with_specs` (--specs) adds each ranked mapping's canonical spec as
// "spec" (core/spec/README.md), which every dimension fits.
std::string SearchResultJson(const SearchResult& result,
                             bool with_specs = false);
nlohmann::json SearchResultJsonValue(const SearchResult& result,
                                     bool with_specs = false);

// With --partition I/N the output also holds "partition": {"count": N,
// "index": I, "top": K} and each ranked mapping its "rank_key" [group,
// offer], its place among equal sample rates.
//
// MergeSearchJson: the JSON output of the unpartitioned search from the
// outputs of its N parts (--json --partition I/N, each I once, in any
// order): the counts summed, the rankings merged (a higher sample rate
// first, then the smaller rank key: TopN's order) and cut to K, without the
// partition keys; byte for byte the output of the search without
// --partition (tested); one whole output (N = 1 prints no partition keys)
// merges into itself. kInvalidArgument naming every part (field
// "parts[i]...") that is not such an output, and a missing, repeated or
// foreign part.
absl::StatusOr<std::string> MergeSearchJson(
    const std::vector<std::string>& parts);

// The counts, then one row per ranked mapping: rank, sample rate, step time,
// t/p/d/v, batch and microbatch, recompute, TP comm, overlaps, sharding,
// offloads, network tiers, HBM need and total efficiency. Ends in "\n".
std::string SearchResultText(const SearchResult& result);

// SearchResultJson when options.json, else SearchResultText.
std::string FormatSearchResult(const SearchResult& result,
                               const SearchOptions& options);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SEARCH_SEARCH_JSON_H_
