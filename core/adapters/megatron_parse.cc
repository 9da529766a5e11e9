// Reading a Megatron-LM command line as argparse reads it: each word a flag
// (modelled: MegatronFlags(); other: the catalogue, megatron_catalogue.h) or
// one of its values, each value parsed as its flag's kind. One error per
// problem, none repaired.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/adapters/layer_pattern.h"
#include "core/adapters/megatron.h"
#include "core/adapters/megatron_catalogue.h"
#include "core/adapters/megatron_internal.h"
#include "core/base/field_errors.h"
#include "core/base/parse_int.h"
#include "core/base/quote.h"
#include "re2/re2.h"

namespace blueprint {
namespace megatron_internal {
namespace {

const MegatronFlag* FindFlag(absl::string_view name) {
  for (const MegatronFlag& flag : MegatronFlags()) {
    if (name == flag.name) return &flag;
  }
  return nullptr;
}

// Levenshtein distance of two short ASCII words.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The flag `flag` is most likely a misspelling of: the first one (modelled
// flags first, then the catalogue in order) at the smallest edit distance, if
// that is at most a quarter of its length. "" when none is.
std::string ClosestFlag(absl::string_view flag) {
  std::string closest;
  size_t best = 0;
  const auto consider = [&](absl::string_view known) {
    // Cheap bound first: the distance is at least the difference in length.
    const size_t longer = std::max(flag.size(), known.size());
    const size_t shorter = std::min(flag.size(), known.size());
    if (4 * (longer - shorter) > known.size()) return;
    const size_t distance = EditDistance(flag, known);
    if (4 * distance <= known.size() && (closest.empty() || distance < best)) {
      closest = std::string(known);
      best = distance;
    }
  };
  for (const MegatronFlag& known : MegatronFlags()) consider(known.name);
  for (const MegatronCatalogueEntry& known : MegatronCatalogue()) {
    consider(known.name);
  }
  return closest;
}

// Unknown flags that get a suggestion: each costs an edit distance to every
// flag, so a command line of a million unknown flags must not.
constexpr int kMaxSuggestions = 64;

// Whether argparse reads `word` as a value rather than as a flag: it does not
// start with '-', or it is "-" alone or a negative number ("-1", "-.5").
bool IsValueWord(const std::string& word) {
  static const RE2* const kNegativeNumber = new RE2(R"(-\d+|-\d*\.\d+)");
  return word.empty() || word[0] != '-' || word == "-" ||
         RE2::FullMatch(word, *kNegativeNumber);
}

// "a value", "at least one value", "3 values".
std::string ValuesNeeded(const MegatronArity& arity) {
  if (arity.min == arity.max) {
    return arity.min == 1 ? std::string("a value")
                          : absl::StrCat(arity.min, " values");
  }
  return arity.min == 1 ? std::string("at least one value")
                        : absl::StrCat("at least ", arity.min, " values");
}

// Reads the values of the catalogue flag `entry` (starting after args[*i];
// `value` when written --flag=value) into `parsed`, or appends an error.
void ParseOther(const MegatronCatalogueEntry& entry,
                const std::vector<std::string>& args, size_t* i,
                const std::string& flag, bool has_value,
                const std::string& value, ParsedFlags* parsed,
                std::vector<FieldError>* errors) {
  std::vector<std::string> values;
  if (entry.arity.max == 0) {
    if (has_value) {
      errors->push_back(
          {flag,
           absl::StrCat(flag, " takes no value (got ", Quoted(value), ")"),
           ErrorCode::kSyntax});
      return;
    }
  } else if (has_value) {
    // argparse takes exactly one value after '='.
    if (entry.arity.min > 1) {
      errors->push_back(
          {flag,
           absl::StrCat(flag, " needs ", ValuesNeeded(entry.arity), " (got ",
                        Quoted(value), " alone)"),
           ErrorCode::kSyntax});
      return;
    }
    values.push_back(value);
  } else {
    while (static_cast<int>(values.size()) < entry.arity.max &&
           *i + 1 < args.size() && IsValueWord(args[*i + 1])) {
      values.push_back(args[++*i]);
    }
    if (static_cast<int>(values.size()) < entry.arity.min) {
      errors->push_back(
          {flag, absl::StrCat(flag, " needs ", ValuesNeeded(entry.arity)),
           ErrorCode::kSyntax});
      return;
    }
  }
  if (*entry.choices != '\0') {
    const std::vector<absl::string_view> choices =
        absl::StrSplit(entry.choices, '|');
    for (const std::string& v : values) {
      if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
        errors->push_back({flag,
                           absl::StrCat(flag, " must be one of ",
                                        absl::StrJoin(choices, ", "), " (got ",
                                        Quoted(v), ")"),
                           ErrorCode::kUnknownChoice});
        return;
      }
    }
  }
  parsed->SetOther(&entry, std::move(values));
}

// Reads the values of a kChoicePerLayer flag: each one of its choices, all
// the same (the model has one value for every layer).
void ParseChoicePerLayer(const MegatronFlag& info,
                         const std::vector<std::string>& values,
                         ParsedFlags* parsed, std::vector<FieldError>* errors) {
  for (const std::string& v : values) {
    if (std::find(info.choices.begin(), info.choices.end(), v) ==
        info.choices.end()) {
      errors->push_back({info.name,
                         absl::StrCat(info.name, " must be one of ",
                                      absl::StrJoin(info.choices, ", "),
                                      " (got ", Quoted(v), ")"),
                         ErrorCode::kUnknownChoice});
      return;
    }
  }
  for (const std::string& v : values) {
    if (v != values[0]) {
      errors->push_back(
          {info.name,
           absl::StrCat("unsupported Megatron-LM flag ", info.name, " ",
                        Quoted(values[0]), " ... ", Quoted(v),
                        ": one value per layer is modelled only when every "
                        "layer has the same"),
           ErrorCode::kUnsupported});
      return;
    }
  }
  Value choice;
  choice.choice = values[0];
  parsed->Set(info.name, std::move(choice));
}

// Reads the values of a kChoiceList flag: distinct words, each one of its
// choices; kept in the order given, one space between.
void ParseChoiceList(const MegatronFlag& info,
                     const std::vector<std::string>& values,
                     ParsedFlags* parsed, std::vector<FieldError>* errors) {
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string& v = values[i];
    if (std::find(info.choices.begin(), info.choices.end(), v) ==
        info.choices.end()) {
      errors->push_back({info.name,
                         absl::StrCat(info.name, " takes words of ",
                                      absl::StrJoin(info.choices, ", "),
                                      " (got ", Quoted(v), ")"),
                         ErrorCode::kUnknownChoice});
      return;
    }
    if (std::find(values.begin(), values.begin() + i, v) !=
        values.begin() + i) {
      errors->push_back({info.name,
                         absl::StrCat(info.name, " lists ", Quoted(v),
                                      " twice"),
                         ErrorCode::kInvalidValue});
      return;
    }
  }
  Value list;
  list.pattern = absl::StrJoin(values, " ");
  parsed->Set(info.name, std::move(list));
}

// An unknown flag's error: the closest known flag while suggestions last
// (`*suggestions` counts them), else the catalogue's commit.
void UnknownFlag(const std::string& flag, int* suggestions,
                 std::vector<FieldError>* errors) {
  // The name is [A-Za-z0-9_-]+ but may be of any length: quote a long one.
  const std::string shown =
      flag.size() <= kMaxExcerptBytes ? flag : QuoteExcerpt(flag);
  const std::string closest =
      (*suggestions)++ < kMaxSuggestions ? ClosestFlag(flag) : "";
  errors->push_back(
      {shown,
       absl::StrCat(
           "unknown Megatron-LM flag ", shown, ": ",
           closest.empty()
               ? absl::StrCat("Megatron-LM (at commit ",
                              absl::string_view(MegatronCatalogueCommit())
                                  .substr(0, 12),
                              ") has no such flag")
               : absl::StrCat("did you mean ", closest, "?")),
       ErrorCode::kUnknownField});
}

// The value of a kNumber flag: a finite decimal number.
void ParseNumber(const MegatronFlag& info, const std::string& value,
                 ParsedFlags* parsed, std::vector<FieldError>* errors) {
  double number = 0;
  if (!absl::SimpleAtod(value, &number) || !std::isfinite(number)) {
    errors->push_back({info.name,
                       absl::StrCat(info.name,
                                    " needs a finite decimal number (got ",
                                    Quoted(value), ")"),
                       ErrorCode::kWrongType});
    return;
  }
  Value parsed_number;
  parsed_number.number = number;
  parsed->Set(info.name, std::move(parsed_number));
}

// The value of a kText flag: the word as given (its rule judges it).
void ParseText(const MegatronFlag& info, const std::string& value,
               ParsedFlags* parsed) {
  Value text;
  text.pattern = value;
  parsed->Set(info.name, std::move(text));
}

// The value of a kChoice flag: one of the table's choices; one that only
// Megatron-LM has is unsupported, any other word unknown.
void ParseChoice(const MegatronFlag& info, const std::string& value,
                 ParsedFlags* parsed, std::vector<FieldError>* errors) {
  const std::string& flag = info.name;
  if (std::find(info.choices.begin(), info.choices.end(), value) !=
      info.choices.end()) {
    Value choice;
    choice.choice = value;
    parsed->Set(flag, std::move(choice));
    return;
  }
  // A choice Megatron-LM has but the model cannot represent.
  const MegatronCatalogueEntry* entry = FindMegatronCatalogueEntry(flag);
  const std::vector<absl::string_view> megatron =
      entry == nullptr ? std::vector<absl::string_view>{}
                       : std::vector<absl::string_view>(absl::StrSplit(
                             entry->choices, '|', absl::SkipEmpty()));
  if (std::find(megatron.begin(), megatron.end(), value) != megatron.end()) {
    errors->push_back(
        {flag,
         absl::StrCat("unsupported Megatron-LM flag ", flag, " ", value,
                      ": the model cannot represent it (", "modelled: ",
                      absl::StrJoin(info.choices, ", "), ")"),
         ErrorCode::kUnsupported});
  } else {
    errors->push_back({flag,
                       absl::StrCat(flag, " must be one of ",
                                    absl::StrJoin(info.choices, ", "),
                                    " (got ", Quoted(value), ")"),
                       ErrorCode::kUnknownChoice});
  }
}

// The value of a kPositiveInteger, kCount or kLayerPattern flag: an integer
// (0 too for kCount), or for kLayerPattern a list expression holding '['
// (which Megatron-LM evaluates as a list).
void ParseIntegerOrPattern(const MegatronFlag& info, const std::string& value,
                           ParsedFlags* parsed,
                           std::vector<FieldError>* errors) {
  const std::string& flag = info.name;
  if (info.kind == Kind::kLayerPattern &&
      value.find('[') != std::string::npos) {
    absl::StatusOr<std::string> pattern = ParseLayerPattern(value);
    if (!pattern.ok()) {
      errors->push_back({flag,
                         absl::StrCat(flag, " ", Quoted(value),
                                      " is not a list of 0s and 1s: ",
                                      pattern.status().message()),
                         ErrorCode::kInvalidValue});
      return;
    }
    Value list;
    list.pattern = *std::move(pattern);
    parsed->Set(flag, std::move(list));
    return;
  }
  const std::optional<int64_t> number =
      info.kind == Kind::kCount && value == "0" ? std::optional<int64_t>(0)
                                                : ParsePositiveInteger(value);
  if (!number) {
    errors->push_back(
        {flag,
         absl::StrCat(
             flag,
             info.kind == Kind::kLayerPattern
                 ? " needs a positive integer that fits in 64 bits "
                   "or a Python list expression holding '[' ("
             : info.kind == Kind::kCount
                 ? " needs 0 or a positive integer that fits in 64 bits ("
                 : " needs a positive integer that fits in 64 bits (",
             kPositiveIntegerSpelling, "; got ", Quoted(value), ")"),
         PositiveIntegerErrorCode(value)});
    return;
  }
  Value integer;
  integer.integer = *number;
  parsed->Set(flag, std::move(integer));
}

// The one value of a modelled flag that takes one, as its kind reads it.
void ParseValue(const MegatronFlag& info, const std::string& value,
                ParsedFlags* parsed, std::vector<FieldError>* errors) {
  switch (info.kind) {
    case Kind::kNumber:
      ParseNumber(info, value, parsed, errors);
      return;
    case Kind::kText:
      ParseText(info, value, parsed);
      return;
    case Kind::kChoice:
      ParseChoice(info, value, parsed, errors);
      return;
    case Kind::kPositiveInteger:
    case Kind::kCount:
    case Kind::kLayerPattern:
      ParseIntegerOrPattern(info, value, parsed, errors);
      return;
    case Kind::kSwitch:          // takes no value (ParseArgs)
    case Kind::kChoicePerLayer:  // takes several (ParseChoicePerLayer)
    case Kind::kChoiceList:      // takes several (ParseChoiceList)
      return;
  }
}

}  // namespace

ParsedFlags ParseArgs(const std::vector<std::string>& args,
                      std::vector<FieldError>* errors) {
  // Latin-1 and (?s): a value may hold any byte, newlines and invalid UTF-8
  // included, and is then reported rather than mistaken for a stray word.
  static const RE2::Options* const kBytes = [] {
    auto* options = new RE2::Options;
    options->set_encoding(RE2::Options::EncodingLatin1);
    return options;
  }();
  static const RE2* const kFlagWithValue =
      new RE2("(?s)(--[A-Za-z0-9][A-Za-z0-9_-]*)=(.*)", *kBytes);
  static const RE2* const kFlagAlone =
      new RE2("(--[A-Za-z0-9][A-Za-z0-9_-]*)", *kBytes);

  ParsedFlags parsed;
  int suggestions = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string flag;
    std::string value;
    bool has_value = false;
    if (RE2::FullMatch(arg, *kFlagWithValue, &flag, &value)) {
      has_value = true;
    } else if (!RE2::FullMatch(arg, *kFlagAlone, &flag)) {
      errors->push_back(
          {"",
           absl::StrCat(
               "unexpected argument ", Quoted(arg),
               ": expected a Megatron-LM flag such as --num-layers 96"),
           ErrorCode::kSyntax});
      continue;
    }
    // Skips the next word when it is this flag's value.
    const auto skip_value = [&] {
      if (!has_value && i + 1 < args.size() && IsValueWord(args[i + 1])) ++i;
    };
    const MegatronFlag* info = FindFlag(flag);
    if (info == nullptr) {
      if (const MegatronCatalogueEntry* entry =
              FindMegatronCatalogueEntry(flag)) {
        ParseOther(*entry, args, &i, flag, has_value, value, &parsed, errors);
        continue;
      }
      UnknownFlag(flag, &suggestions, errors);
      // Skip its values too, so that they are not reported as stray words.
      if (!has_value) {
        while (i + 1 < args.size() && IsValueWord(args[i + 1])) ++i;
      }
      continue;
    }
    if (parsed.Given(flag)) {
      errors->push_back({flag, absl::StrCat(flag, " is given more than once"),
                         ErrorCode::kSyntax});
      if (info->kind != Kind::kSwitch) skip_value();
      continue;
    }
    parsed.MarkGiven(flag);
    if (info->kind == Kind::kSwitch) {
      if (has_value) {
        errors->push_back(
            {flag,
             absl::StrCat(flag, " takes no value (got ", Quoted(value), ")"),
             ErrorCode::kSyntax});
      } else {
        parsed.Set(flag, Value{});
      }
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size() || !IsValueWord(args[i + 1])) {
        errors->push_back(
            {flag,
             absl::StrCat(flag, info->kind == Kind::kChoicePerLayer ||
                                        info->kind == Kind::kChoiceList
                                    ? " needs at least one value"
                                    : " needs a value"),
             ErrorCode::kSyntax});
        continue;
      }
      value = args[++i];
    }
    if (info->kind == Kind::kChoicePerLayer ||
        info->kind == Kind::kChoiceList) {
      // argparse's nargs='+': every value word up to the next flag.
      std::vector<std::string> values = {value};
      while (!has_value && i + 1 < args.size() && IsValueWord(args[i + 1])) {
        values.push_back(args[++i]);
      }
      if (info->kind == Kind::kChoiceList) {
        ParseChoiceList(*info, values, &parsed, errors);
      } else {
        ParseChoicePerLayer(*info, values, &parsed, errors);
      }
      continue;
    }
    ParseValue(*info, value, &parsed, errors);
  }
  return parsed;
}

}  // namespace megatron_internal
}  // namespace blueprint
