// A command's flags as one table of FlagRow<Options>: each flag's spelling,
// the kind of value it takes, the Options field it sets, what holds without
// it and a one-line description. Parsing (ParseFlagTable), its errors for a
// malformed, repeated, missing or unknown flag, the synopsis
// (FlagTableSynopsis) and the Markdown table of a README
// (FlagTableMarkdown) are made from the table, so they cannot drift apart.
// `blueprint search` (search_flags.h, SearchOptions) and `blueprint search
// --serving` (core/serving/serving_search_flags.h) each have one table and
// share this machinery.
//
// Example:
//   absl::StatusOr<SearchOptions> options =
//       ParseFlagTable(SearchFlags(), {"--procs", "512", ...});
//   if (!options.ok()) return options.status();  // one problem per line
#ifndef BLUEPRINTING_CORE_SEARCH_FLAG_TABLE_H_
#define BLUEPRINTING_CORE_SEARCH_FLAG_TABLE_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "core/base/field_errors.h"
#include "core/base/parse_int.h"
#include "core/base/quote.h"

namespace blueprint {

enum class SearchFlagKind {
  kSwitch,           // "--flag" alone
  kPositiveInteger,  // "--flag N", 1 <= N <= FlagRow::max
  kPositiveNumber,   // "--flag X", a finite decimal number above 0
  kChoice,           // "--flag WORD", WORD one of FlagRow::choices
  // "--flag WORD[,WORD...]": "calculon" or "all" alone (FlagRow::choices'
  // first two), or a comma-separated list of its others, each once, in any
  // order.
  kChoiceList,
  kPartition,        // "--flag I/N", 0 <= I < N <= FlagRow::max
  kCallerFile,       // "--flag PATH": read by the caller, skipped here
};

// The value of one flag on a command line, once it parsed.
struct SearchFlagValue {
  int64_t integer = 0;  // kPositiveInteger: N; kPartition: I
  int64_t count = 0;    // kPartition: N
  double number = 0;    // kPositiveNumber: X
  std::string choice;   // kChoice: one of the choices; kChoiceList:
                        // "calculon" or "all", "" for a list
  std::vector<std::string> list;  // kChoiceList: the words listed
};

// One accepted flag of a table whose parse gives an Options.
template <typename Options>
struct FlagRow {
  const char* name;  // "--procs"
  SearchFlagKind kind;
  // What the synopsis shows for its value ("N", "APP.json"); "" for a
  // switch, and for a choice whose choices it shows instead.
  const char* placeholder;
  // kChoice, kChoiceList: in the order errors list
  std::vector<std::string> choices;
  // kPositiveInteger: the largest N; kPartition: the largest N of I/N.
  int64_t max = 0;
  bool required = false;
  // Another flag it is meaningless without ("--json"), and why: given
  // alone it is an error, and the synopsis shows it within that flag's
  // brackets. "" when none.
  const char* needs = "";
  const char* needs_why = "";
  // The Options field it sets ("procs"); "" for the caller's flags.
  const char* target;
  const char* absent;  // what holds without it (Markdown)
  const char* doc;     // one line of Markdown
  // Writes a parsed value (for a switch: that it was given) into the
  // options; nullptr for the caller's flags.
  void (*set)(const SearchFlagValue& value, Options* options) = nullptr;
};

namespace flag_table_internal {

// "a", "a or b", "a, b or c": how an error lists the values it expected.
std::string OneOf(const std::vector<std::string>& choices);

// "unknown flag ... (expected ...)": `with_value`, then `switches`.
std::string UnknownFlagError(const std::string& flag,
                             const std::vector<std::string>& with_value,
                             const std::vector<std::string>& switches);

// A kChoiceList's value (SearchFlagKind): "calculon" or "all" into
// value.choice, or the words of a list into value.list.
bool ParseChoiceList(const char* name, const std::vector<std::string>& choices,
                     const std::string& text,
                     std::vector<FieldError>& problems,
                     SearchFlagValue& value);

// Parses `text`, the value of a flag of `kind`, into `value`; false, with
// the problem in `problems`, when it is not one.
bool ParseValue(const char* name, SearchFlagKind kind, int64_t max,
                const std::vector<std::string>& choices,
                const std::string& text, std::vector<FieldError>& problems,
                SearchFlagValue& value);

template <typename Options>
const FlagRow<Options>* FindFlag(const std::vector<FlagRow<Options>>& table,
                                 const std::string& name) {
  for (const FlagRow<Options>& flag : table) {
    if (name == flag.name) return &flag;
  }
  return nullptr;
}

// The flag and its value as the synopsis shows them, with the flags that
// need it inside its brackets.
template <typename Options>
std::string SynopsisOf(const std::vector<FlagRow<Options>>& table,
                       const FlagRow<Options>& flag) {
  std::string out = flag.name;
  if (flag.kind != SearchFlagKind::kSwitch) {
    absl::StrAppend(&out, " ",
                    *flag.placeholder != '\0'
                        ? std::string(flag.placeholder)
                        : absl::StrJoin(flag.choices, "|"));
  }
  for (const FlagRow<Options>& inner : table) {
    if (flag.name == std::string(inner.needs)) {
      absl::StrAppend(&out, " ", SynopsisOf(table, inner));
    }
  }
  return flag.required ? out : absl::StrCat("[", out, "]");
}

}  // namespace flag_table_internal

// ParseFlagTable: the options of a command line of `table` ("--flag value"
// or "--flag=value"), starting from `options`. The caller's flags
// (kCallerFile) are skipped with their value. kInvalidArgument
// (InvalidInputError: each problem's field is the flag it concerns, "" for
// a stray argument or an unknown flag) lists every problem, one per line.
template <typename Options>
absl::StatusOr<Options> ParseFlagTable(
    const std::vector<FlagRow<Options>>& table,
    const std::vector<std::string>& args, Options options = Options()) {
  using Row = FlagRow<Options>;
  std::vector<FieldError> problems;
  std::set<std::string> seen, set;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0) {
      problems.push_back(
          {"", absl::StrCat("unexpected argument ", QuoteExcerpt(arg)),
           ErrorCode::kSyntax});
      continue;
    }
    std::string name = arg;
    std::optional<std::string> text;
    const size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      text = arg.substr(eq + 1);
    }
    const Row* flag = flag_table_internal::FindFlag(table, name);
    if (flag == nullptr) {
      std::vector<std::string> with_value, switches;
      for (const Row& f : table) {
        (f.kind == SearchFlagKind::kSwitch ? switches : with_value)
            .push_back(f.name);
      }
      // No field: the flag as written may hold any byte.
      problems.push_back(
          {"", flag_table_internal::UnknownFlagError(name, with_value,
                                                     switches),
           ErrorCode::kUnknownField});
      continue;
    }
    if (!seen.insert(name).second) {
      problems.push_back({name, absl::StrCat(name, " is given more than once"),
                          ErrorCode::kSyntax});
    }
    if (flag->kind == SearchFlagKind::kSwitch && text.has_value()) {
      problems.push_back(
          {name, absl::StrCat(name, " takes no value"), ErrorCode::kSyntax});
      continue;
    }
    if (flag->kind != SearchFlagKind::kSwitch && !text.has_value()) {
      if (i + 1 >= args.size()) {
        problems.push_back(
            {name, absl::StrCat(name, " needs a value"), ErrorCode::kSyntax});
        continue;
      }
      text = args[++i];
    }
    SearchFlagValue value;
    if (flag_table_internal::ParseValue(flag->name, flag->kind, flag->max,
                                        flag->choices, text.value_or(""),
                                        problems, value) &&
        flag->set != nullptr) {
      flag->set(value, &options);
      set.insert(name);
    }
  }
  // The flags as a whole: a required one missing, one given without the
  // flag it needs having been set.
  for (const Row& flag : table) {
    if (flag.required && flag.kind != SearchFlagKind::kCallerFile &&
        seen.count(flag.name) == 0) {
      problems.push_back({flag.name, absl::StrCat(flag.name, " is required"),
                          ErrorCode::kMissingField});
    }
  }
  for (const Row& flag : table) {
    if (*flag.needs != '\0' && seen.count(flag.name) != 0 &&
        set.count(flag.needs) == 0) {
      problems.push_back({flag.name,
                          absl::StrCat(flag.name, " needs ", flag.needs, ": ",
                                       flag.needs_why),
                          ErrorCode::kInconsistent});
    }
  }
  if (!problems.empty()) return InvalidInputError(problems);
  return options;
}

// FlagTableSynopsis: the flags as a usage line, in table order, e.g.
// "--app APP.json ... [--top K] [--json [--specs] [--partition I/N]]".
template <typename Options>
std::string FlagTableSynopsis(const std::vector<FlagRow<Options>>& table) {
  std::vector<std::string> words;
  for (const FlagRow<Options>& flag : table) {
    if (*flag.needs == '\0') {
      words.push_back(flag_table_internal::SynopsisOf(table, flag));
    }
  }
  return absl::StrJoin(words, " ");
}

// FlagTableMarkdown: the table as a README's Markdown table (a header row
// naming `options_type`, then one row per flag; every line ends in '\n').
template <typename Options>
std::string FlagTableMarkdown(const std::vector<FlagRow<Options>>& table,
                              const char* options_type) {
  std::string out = absl::StrCat(
      "| flag | value | sets (`", options_type,
      "`) | without it | meaning |\n| --- | --- | --- | --- | --- |\n");
  for (const FlagRow<Options>& flag : table) {
    // A '|' inside a table cell, even in code, must be escaped.
    const std::string value =
        flag.kind == SearchFlagKind::kSwitch
            ? ""
            : absl::StrReplaceAll(flag.choices.empty()
                                      ? std::string(flag.placeholder)
                                      : absl::StrJoin(flag.choices, "|"),
                                  {{"|", "\\|"}});
    std::string meaning = flag.doc;
    if (*flag.needs != '\0') {
      absl::StrAppend(&meaning, "; needs `", flag.needs, "`");
    }
    absl::StrAppend(&out, "| `", flag.name, "` | ",
                    value.empty() ? "" : absl::StrCat("`", value, "`"), " | ",
                    *flag.target == '\0' ? "(the caller's)"
                                         : absl::StrCat("`", flag.target, "`"),
                    " | ", flag.absent, " | ", meaning, " |\n");
  }
  return out;
}

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SEARCH_FLAG_TABLE_H_
