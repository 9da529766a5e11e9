// The `blueprint search --serving` flags (also the argument array of the
// wasm `searchServing` method) as one table (core/search/flag_table.h):
// parsing, its errors (each naming its flag, every problem at once), the
// CLI's synopsis and core/serving/README.md's flag table are all made from
// it. --system and --hf-config are the caller's (it reads the files or
// presets). `--serving`, which selects this search on the command line, is
// the caller's too: the table parses what follows it.
//
// Example:
//   absl::StatusOr<ServingSearchOptions> options = ParseServingSearchFlags(
//       {"--procs", "8", "--input-len", "1024",
//        "--output-len", "256", "--max-tpot", "0.05"});
#ifndef BLUEPRINTING_CORE_SERVING_SERVING_SEARCH_FLAGS_H_
#define BLUEPRINTING_CORE_SERVING_SERVING_SEARCH_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/search/flag_table.h"
#include "core/serving/serving_search.h"

namespace blueprint {

using ServingSearchFlag = FlagRow<ServingSearchOptions>;

// The table, in documentation (and synopsis) order.
const std::vector<ServingSearchFlag>& ServingSearchFlags();

// The options of a command line of ServingSearchFlags(); kInvalidArgument
// lists every problem (ParseFlagTable).
absl::StatusOr<ServingSearchOptions> ParseServingSearchFlags(
    const std::vector<std::string>& args);

// The flags as a usage line ("--hf-config CONFIG --system SYS ... [--json]").
std::string ServingSearchFlagsSynopsis();

// The table as core/serving/README.md shows it (serving_search_test checks
// that the README has it).
std::string ServingSearchFlagsMarkdown();

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SERVING_SERVING_SEARCH_FLAGS_H_
