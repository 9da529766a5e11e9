// `blueprint search` as a pure function on strings (see commands.h): the
// Calculon application and system texts and the search flags in, the ranked
// mappings out (JSON with --json, a table otherwise).
#ifndef BLUEPRINTING_CORE_API_SEARCH_COMMAND_H_
#define BLUEPRINTING_CORE_API_SEARCH_COMMAND_H_

#include <string>
#include <vector>

#include "core/api/commands.h"
#include "core/search/search.h"

namespace blueprint {

// `args` are the search flags (--procs N --max-batch B --datatype D ...);
// `progress` (fraction done) and `cancel` may be null.
CommandResult Search(const std::string& app_json, const std::string& sys_json,
                     const std::vector<std::string>& args,
                     ProgressFn progress = nullptr, CancelFn cancel = nullptr);

// The arguments Search accepts, --app and --system included, as a usage
// line made from the search flags' table (search_flags.h
// SearchFlagsSynopsis); the same string on every call.
const char* SearchSynopsis();

// The wasm `mergeSearch`: the JSON output of a search run in N parts
// (--json --partition I/N, one output per part, in any order) as the
// unpartitioned search prints it (MergeSearchJson).
CommandResult MergeSearch(const std::vector<std::string>& parts);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_API_SEARCH_COMMAND_H_
