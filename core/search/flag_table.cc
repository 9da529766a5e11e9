#include "core/search/flag_table.h"

#include <algorithm>

namespace blueprint {
namespace flag_table_internal {

std::string OneOf(const std::vector<std::string>& choices) {
  if (choices.size() <= 1) return absl::StrJoin(choices, "");
  return absl::StrCat(
      absl::StrJoin(choices.begin(), choices.end() - 1, ", "), " or ",
      choices.back());
}

std::string UnknownFlagError(const std::string& flag,
                             const std::vector<std::string>& with_value,
                             const std::vector<std::string>& switches) {
  return absl::StrCat("unknown flag ", QuoteExcerpt(flag), " (expected ",
                      absl::StrJoin(with_value, ", "), ", ",
                      absl::StrJoin(switches, ", "), ")");
}

bool ParseChoiceList(const char* name, const std::vector<std::string>& choices,
                     const std::string& text,
                     std::vector<FieldError>& problems,
                     SearchFlagValue& value) {
  // choices: the two words that stand alone ("calculon", "all"), then the
  // listable ones.
  for (size_t i = 0; i < 2 && i < choices.size(); ++i) {
    if (text == choices[i]) {
      value.choice = text;
      return true;
    }
  }
  const std::vector<std::string> listable(
      choices.begin() + std::min<size_t>(2, choices.size()), choices.end());
  const std::vector<std::string> words = absl::StrSplit(text, ',');
  std::string problem;
  for (const std::string& word : words) {
    if (std::find(listable.begin(), listable.end(), word) == listable.end()) {
      problem = absl::StrCat("unknown ", QuoteExcerpt(word));
      break;
    }
    if (std::find(value.list.begin(), value.list.end(), word) !=
        value.list.end()) {
      problem = absl::StrCat(QuoteExcerpt(word), " is listed twice");
      break;
    }
    value.list.push_back(word);
  }
  if (problem.empty()) return true;
  value.list.clear();
  problems.push_back(
      {name,
       absl::StrCat(name, ": expected ", choices.size() >= 2 ? choices[0] : "",
                    ", ", choices.size() >= 2 ? choices[1] : "",
                    " or a comma-separated list of ", OneOf(listable),
                    ", got ", QuoteExcerpt(text), " (", problem, ")"),
       ErrorCode::kUnknownChoice});
  return false;
}

bool ParseValue(const char* name, SearchFlagKind kind, int64_t max,
                const std::vector<std::string>& choices,
                const std::string& text, std::vector<FieldError>& problems,
                SearchFlagValue& value) {
  switch (kind) {
    case SearchFlagKind::kSwitch:
    case SearchFlagKind::kCallerFile:
      return true;
    case SearchFlagKind::kPositiveInteger: {
      const std::optional<int64_t> parsed = ParsePositiveInteger(text);
      if (parsed && *parsed <= max) {
        value.integer = *parsed;
        return true;
      }
      problems.push_back(
          {name,
           absl::StrCat(name, ": expected a positive integer of at most ", max,
                        " (", kPositiveIntegerSpelling, "), got ",
                        QuoteExcerpt(text)),
           parsed ? ErrorCode::kOutOfRange : PositiveIntegerErrorCode(text)});
      return false;
    }
    case SearchFlagKind::kPositiveNumber: {
      double parsed = 0;
      const bool number = absl::SimpleAtod(text, &parsed) &&
                          std::isfinite(parsed);
      if (number && parsed > 0) {
        value.number = parsed;
        return true;
      }
      problems.push_back(
          {name,
           absl::StrCat(name, ": expected a finite number above 0, got ",
                        QuoteExcerpt(text)),
           number ? ErrorCode::kOutOfRange : ErrorCode::kInvalidValue});
      return false;
    }
    case SearchFlagKind::kChoice:
      for (const std::string& choice : choices) {
        if (text == choice) {
          value.choice = text;
          return true;
        }
      }
      problems.push_back({name,
                          absl::StrCat(name, ": expected ", OneOf(choices),
                                       ", got ", QuoteExcerpt(text)),
                          ErrorCode::kUnknownChoice});
      return false;
    case SearchFlagKind::kChoiceList:
      return ParseChoiceList(name, choices, text, problems, value);
    case SearchFlagKind::kPartition: {
      // I/N: I may be 0.
      const std::vector<std::string> parts = absl::StrSplit(text, '/');
      std::optional<int64_t> index, count;
      if (parts.size() == 2) {
        index = parts[0] == "0" ? std::optional<int64_t>(0)
                                : ParsePositiveInteger(parts[0]);
        count = ParsePositiveInteger(parts[1]);
      }
      if (index && count && *count <= max && *index < *count) {
        value.integer = *index;
        value.count = *count;
        return true;
      }
      problems.push_back(
          {name,
           absl::StrCat(name,
                        ": expected I/N, part I of N with 0 <= I < N <= ", max,
                        ", got ", QuoteExcerpt(text)),
           ErrorCode::kInvalidValue});
      return false;
    }
  }
  return false;
}

}  // namespace flag_table_internal
}  // namespace blueprint
