// The `blueprint search` flags (also the argument array of the wasm
// `search` method) as one table, SearchFlags() (core/search/flag_table.h):
// each flag's spelling, the kind of value it takes, the SearchOptions field
// it sets, what holds without it and a one-line description. Parsing (ParseSearchFlags), its
// errors for a malformed, repeated, missing or unknown flag, the CLI's
// synopsis (SearchFlagsSynopsis) and the flag table of core/search/README.md
// (SearchFlagsMarkdown) are all made from it, so they cannot drift apart.
// The choices of a flag naming an enum of the spec (--datatype, --precision,
// --profile, --context-exchange) are that enum's spellings (core/spec/
// enums.h).
//
// Example:
//   absl::StatusOr<SearchOptions> options = ParseSearchFlags(
//       {"--procs", "512", "--max-batch", "512", "--datatype", "float16"});
//   if (!options.ok()) return options.status();  // one problem per line
#ifndef BLUEPRINTING_CORE_SEARCH_SEARCH_FLAGS_H_
#define BLUEPRINTING_CORE_SEARCH_SEARCH_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/search/flag_table.h"
#include "core/search/search.h"

namespace blueprint {

// One accepted flag (core/search/flag_table.h).
using SearchFlag = FlagRow<SearchOptions>;

// SearchFlags: the table, in documentation (and synopsis) order.
const std::vector<SearchFlag>& SearchFlags();

// ParseSearchFlags: the options of a command line of SearchFlags() ("--flag
// value" or "--flag=value"). `--app PATH` and `--system PATH` are the
// caller's (it reads the files) and are skipped with their value.
// kInvalidArgument (InvalidInputError: each problem's field is the flag it
// concerns, "" for a stray argument or an unknown flag) lists every problem,
// one per line, e.g.
//   "--procs is required"
//   "--top: expected a positive integer of at most 1048576 (...), got \"x\""
absl::StatusOr<SearchOptions> ParseSearchFlags(
    const std::vector<std::string>& args);

// SearchFlagsSynopsis: the flags as a usage line, in table order, e.g.
// "--app APP.json ... --datatype D [--top K] [--mbs-break] ...
// [--json [--specs] [--partition I/N]]".
std::string SearchFlagsSynopsis();

// SearchFlagsMarkdown: the table as the Markdown table that
// core/search/README.md shows (a header row, then one row per flag; every
// line ends in '\n'); search_flags_test checks that the README has it.
std::string SearchFlagsMarkdown();

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SEARCH_SEARCH_FLAGS_H_
