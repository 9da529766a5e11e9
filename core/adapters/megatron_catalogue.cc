#include "core/adapters/megatron_catalogue.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace blueprint {
namespace {

// The names megatron_catalogue.inc is written with (the generator may write
// any of them; today's catalogue has no optional-value or unclassified flag).
constexpr MegatronArity kSwitch = kMegatronSwitch;
constexpr MegatronArity kOne = kMegatronOneValue;
[[maybe_unused]] constexpr MegatronArity kOptional = kMegatronOptional;
constexpr MegatronArity kAny = kMegatronAnyValues;
constexpr MegatronArity kOneOrMore = kMegatronOneOrMore;
constexpr MegatronArity Fixed(int n) { return {n, n}; }
constexpr MegatronFlagClass kModelled = MegatronFlagClass::kModelled;
constexpr MegatronFlagClass kIgnored = MegatronFlagClass::kIgnored;
constexpr MegatronFlagClass kUnmodelled = MegatronFlagClass::kUnmodelled;
[[maybe_unused]] constexpr MegatronFlagClass kUnclassified =
    MegatronFlagClass::kUnclassified;

#include "core/adapters/megatron_catalogue.inc"

using Groups =
    std::map<std::string, std::vector<const MegatronCatalogueEntry*>>;

// One Markdown section per reason: its flags, with their defaults when
// `show_defaults` (for a flag that takes a value).
void AppendGroups(const Groups& groups, bool show_defaults, std::string* out) {
  for (const auto& [reason, entries] : groups) {
    absl::StrAppend(out, "\n### ", reason, " (", entries.size(), ")\n\n");
    std::vector<std::string> names;
    for (const MegatronCatalogueEntry* entry : entries) {
      names.push_back(
          show_defaults && entry->arity.max > 0
              ? absl::StrCat("`", entry->name, "` (", entry->default_value, ")")
              : absl::StrCat("`", entry->name, "`"));
    }
    absl::StrAppend(out, absl::StrJoin(names, ", "), "\n");
  }
}

bool NameLess(const MegatronCatalogueEntry& entry, absl::string_view name) {
  return absl::string_view(entry.name) < name;
}

}  // namespace

absl::Span<const MegatronCatalogueEntry> MegatronCatalogue() {
  return kCatalogue;
}

const MegatronCatalogueEntry* FindMegatronCatalogueEntry(
    absl::string_view name) {
  const auto* it = std::lower_bound(std::begin(kCatalogue),
                                    std::end(kCatalogue), name, NameLess);
  if (it == std::end(kCatalogue) || name != it->name) return nullptr;
  return it;
}

const char* MegatronCatalogueCommit() { return kCatalogueCommit; }

const char* MegatronFlagClassName(MegatronFlagClass flag_class) {
  switch (flag_class) {
    case MegatronFlagClass::kModelled:
      return "modelled";
    case MegatronFlagClass::kIgnored:
      return "ignored";
    case MegatronFlagClass::kUnmodelled:
      return "unmodelled";
    case MegatronFlagClass::kUnclassified:
      return "unclassified";
  }
  return "unclassified";
}

std::string MegatronCatalogueMarkdown() {
  std::map<MegatronFlagClass, int> counts;
  // reason -> its flags, for each of the two classes shown.
  Groups ignored;
  Groups unmodelled;
  for (const MegatronCatalogueEntry& entry : kCatalogue) {
    ++counts[entry.flag_class];
    switch (entry.flag_class) {
      case MegatronFlagClass::kIgnored:
        ignored[entry.reason].push_back(&entry);
        break;
      case MegatronFlagClass::kUnmodelled:
      case MegatronFlagClass::kUnclassified:
        unmodelled[entry.flag_class == MegatronFlagClass::kUnclassified
                       ? std::string("not classified yet")
                       : std::string(entry.reason)]
            .push_back(&entry);
        break;
      case MegatronFlagClass::kModelled:
        break;
    }
  }
  std::string out = absl::StrCat(
      "# Megatron-LM's flags the adapter does not model\n\n"
      "Every flag of Megatron-LM's `megatron/training/arguments.py` at commit "
      "`",
      kCatalogueCommit,
      "`, read by `tools/megatron_catalogue` into `megatron_catalogue.inc`: ",
      std::size(kCatalogue), " spellings, of which ",
      counts[MegatronFlagClass::kModelled],
      " are modelled (the table of `README.md`), ",
      counts[MegatronFlagClass::kIgnored], " ignored and ",
      counts[MegatronFlagClass::kUnmodelled] +
          counts[MegatronFlagClass::kUnclassified],
      " unmodelled. This file is `MegatronCatalogueMarkdown()`; "
      "`//core/adapters:megatron_catalogue_test` fails when it differs.\n\n"
      "## Ignored: accepted and listed once in a note\n\n"
      "They do not change the FLOPs, memory or communication the model "
      "counts.\n");
  AppendGroups(ignored, /*show_defaults=*/false, &out);
  absl::StrAppend(
      &out,
      "\n## Unmodelled: an error, unless the value is Megatron-LM's default\n\n"
      "They change what the model counts in a way it cannot represent. A "
      "flag given with its default value (shown in parentheses) changes "
      "nothing and is accepted like an ignored one; a switch is an error "
      "whenever it is given.\n");
  AppendGroups(unmodelled, /*show_defaults=*/true, &out);
  return out;
}

}  // namespace blueprint
