// The `blueprint search` flags (also the argument array of the wasm
// `search` method) as one table, SearchFlags(): each flag's spelling, the
// kind of value it takes, the SearchOptions field it sets, what holds
// without it and a one-line description. Parsing (ParseSearchFlags), its
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
#include "core/search/search.h"

namespace blueprint {

enum class SearchFlagKind {
  kSwitch,           // "--flag" alone
  kPositiveInteger,  // "--flag N", 1 <= N <= SearchFlag::max
  kChoice,           // "--flag WORD", WORD one of SearchFlag::choices
  kPartition,        // "--flag I/N", 0 <= I < N <= kMaxPartitions
  kCallerFile,       // "--flag PATH": read by the caller, skipped here
};

// The value of one flag on a command line, once it parsed.
struct SearchFlagValue {
  int64_t integer = 0;  // kPositiveInteger: N; kPartition: I
  int64_t count = 0;    // kPartition: N
  std::string choice;   // kChoice: one of the choices
};

// One accepted flag.
struct SearchFlag {
  const char* name;  // "--procs"
  SearchFlagKind kind;
  // What the synopsis shows for its value ("N", "APP.json"); "" for a
  // switch, and for a choice whose choices it shows instead.
  const char* placeholder;
  std::vector<std::string> choices;  // kChoice: in the order errors list
  int64_t max = 0;                   // kPositiveInteger: the largest N
  bool required = false;
  // Another flag it is meaningless without ("--json"), and why: given
  // alone it is an error, and the synopsis shows it within that flag's
  // brackets. "" when none.
  const char* needs = "";
  const char* needs_why = "";
  // The SearchOptions field it sets ("procs"); "" for the caller's flags.
  const char* target;
  const char* absent;  // what holds without it (Markdown)
  const char* doc;     // one line of Markdown
  // Writes a parsed value (for a switch: that it was given) into the
  // options; nullptr for the caller's flags.
  void (*set)(const SearchFlagValue& value, SearchOptions* options) = nullptr;
};

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
