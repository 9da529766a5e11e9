// FromMegatronArgs (megatron.h): a command line read (megatron_parse.cc),
// its catalogue flags that are not modelled judged, the table's setters run
// and each spec section's rules applied, in that order (megatron_internal.h
// names the file of each part).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/adapters/megatron.h"
#include "core/adapters/megatron_catalogue.h"
#include "core/adapters/megatron_internal.h"
#include "core/base/field_errors.h"
#include "core/base/parse_int.h"

namespace blueprint {
namespace megatron_internal {
namespace {

//----- Values equal to Megatron-LM's defaults ---------------------------------

// Flags whose declared default (None) stands for a value Megatron-LM then
// uses, spelled as Python prints it.
constexpr std::pair<const char*, const char*> kEffectiveDefaults[] = {
    {"--recompute-modules", "['core_attn']"},
};

// `values` as Python prints the list argparse makes of them.
std::string PythonList(const MegatronCatalogueEntry& entry,
                       const std::vector<std::string>& values) {
  const bool quoted = absl::string_view(entry.value_type) == "str";
  std::vector<std::string> items;
  for (const std::string& v : values) {
    items.push_back(quoted ? absl::StrCat("'", v, "'") : v);
  }
  return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
}

// Whether `values` are what Megatron-LM has without the flag, so that giving
// them changes nothing. A switch that is given never is.
bool IsMegatronDefault(const MegatronCatalogueEntry& entry,
                       const std::vector<std::string>& values) {
  if (entry.arity.max == 0 || values.empty()) return false;
  std::string fallback = entry.default_value;
  for (const auto& [name, value] : kEffectiveDefaults) {
    if (entry.name == absl::string_view(name)) fallback = value;
  }
  const absl::string_view type = entry.value_type;
  if (values.size() == 1) {
    const std::string& v = values[0];
    if (type == "int") {
      int64_t given = 0;
      int64_t expected = 0;
      return absl::SimpleAtoi(v, &given) &&
             absl::SimpleAtoi(fallback, &expected) && given == expected;
    }
    if (type == "float") {
      double given = 0;
      double expected = 0;
      return absl::SimpleAtod(v, &given) &&
             absl::SimpleAtod(fallback, &expected) && given == expected;
    }
    if (absl::StartsWith(type, "enum ")) {
      const size_t dot = fallback.rfind('.');
      return v ==
             (dot == std::string::npos ? fallback : fallback.substr(dot + 1));
    }
    if (v == fallback) return true;
  }
  return entry.arity.max > 1 && PythonList(entry, values) == fallback;
}

//----- The conversion ---------------------------------------------------------

// The value `flag` has without being given (valid), if the table says one.
std::optional<Value> AbsentValue(const MegatronFlag& flag) {
  switch (flag.kind) {
    case Kind::kSwitch:
    case Kind::kChoice:
    case Kind::kChoicePerLayer:
      return Value{};
    case Kind::kNumber:
    case Kind::kLayerPattern:
    case Kind::kText:
    case Kind::kChoiceList:
      return std::nullopt;  // their rules say what holds without them
    case Kind::kCount:
      if (flag.absent == "0") return Value{};
      return std::nullopt;
    case Kind::kPositiveInteger:
      if (const std::optional<int64_t> number =
              ParsePositiveInteger(flag.absent)) {
        Value value;
        value.integer = *number;
        return value;
      }
      return std::nullopt;
  }
  return std::nullopt;
}

// The catalogue flags that are not modelled: unmodelled ones are errors
// (unless at Megatron-LM's default), ignored ones one note.
void OtherFlags(Conversion* c) {
  constexpr char kAtDefault[] = "given at Megatron-LM's default value";
  // category -> flags, categories in the order they first appear.
  std::vector<std::pair<std::string, std::vector<std::string>>> ignored;
  const auto ignore = [&](const std::string& category,
                          const std::string& name) {
    for (auto& [known, names] : ignored) {
      if (known == category) {
        names.push_back(name);
        return;
      }
    }
    ignored.push_back({category, {name}});
  };
  int count = 0;
  for (const OtherFlag& other : c->flags.others()) {
    const MegatronCatalogueEntry& entry = *other.entry;
    switch (entry.flag_class) {
      case MegatronFlagClass::kIgnored:
        ignore(entry.reason, entry.name);
        ++count;
        break;
      case MegatronFlagClass::kUnmodelled:
      case MegatronFlagClass::kUnclassified: {
        if (IsMegatronDefault(entry, other.values)) {
          ignore(kAtDefault, entry.name);
          ++count;
          break;
        }
        const std::string why =
            entry.flag_class == MegatronFlagClass::kUnmodelled
                ? std::string(entry.reason)
                : absl::StrCat(
                      "not classified yet (new in Megatron-LM at commit ",
                      absl::string_view(MegatronCatalogueCommit())
                          .substr(0, 12),
                      "), so assumed to change the model");
        std::string given = entry.name;
        if (!other.values.empty()) {
          std::vector<std::string> quoted;
          for (const std::string& v : other.values) quoted.push_back(Quoted(v));
          absl::StrAppend(&given, " ", absl::StrJoin(quoted, " "));
        }
        const absl::string_view fallback = entry.default_value;
        c->Error(
            entry.name, ErrorCode::kUnsupported,
            absl::StrCat("unsupported Megatron-LM flag ", given, ": ", why,
                         entry.arity.max == 0 || fallback == "None"
                             ? std::string()
                             : absl::StrCat("; only Megatron-LM's default, ",
                                            fallback, ", is accepted")));
        break;
      }
      case MegatronFlagClass::kModelled:
        // A catalogue flag the table does not have: a bug of the catalogue.
        c->Error(entry.name, ErrorCode::kInternal,
                 absl::StrCat("internal: ", entry.name,
                              " is marked modelled but MegatronFlags() has no "
                              "row for it"));
        break;
    }
  }
  if (ignored.empty()) return;
  std::vector<std::string> groups;
  for (const auto& [category, names] : ignored) {
    groups.push_back(
        absl::StrCat(absl::StrJoin(names, " "), " (", category, ")"));
  }
  c->notes.push_back(
      absl::StrCat("ignored ", count, " Megatron-LM flag",
                   count == 1 ? " that does not" : "s that do not",
                   " change what is modelled: ", absl::StrJoin(groups, "; ")));
}

// The table's part of one spec section: every flag whose field is in it is
// required or written by its setter.
void ApplyFlags(absl::string_view section, Conversion* c) {
  for (const MegatronFlag& flag : MegatronFlags()) {
    if (!absl::StartsWith(flag.field, absl::StrCat(section, "."))) continue;
    if (flag.absent == kMegatronRequired && !c->flags.Given(flag.name)) {
      c->Error(flag.name, ErrorCode::kMissingField,
               absl::StrCat(flag.name, " is required"));
    }
    if (flag.set == nullptr) continue;
    // A flag given with a bad value (reported) takes its default, if any.
    if (const Value* given = c->flags.Find(flag.name)) {
      flag.set(*given, &c->spec);
    } else if (std::optional<Value> absent = AbsentValue(flag)) {
      flag.set(*absent, &c->spec);
    }
  }
}

}  // namespace

// A note that the given ones of `names` have no effect without `without`,
// as in Megatron-LM.
void NoteIdle(const ParsedFlags& flags, std::vector<const char*> names,
              const std::string& without, std::vector<std::string>* notes) {
  std::vector<std::string> idle;
  for (const char* name : names) {
    if (flags.Given(name)) idle.push_back(name);
  }
  if (idle.empty()) return;
  notes->push_back(absl::StrCat(
      absl::StrJoin(idle, " and "), idle.size() == 1 ? " has" : " have",
      " no effect without ", without, ", as in Megatron-LM"));
}

}  // namespace megatron_internal

absl::StatusOr<MappingSpec> FromMegatronArgs(
    const std::vector<std::string>& args, const System& system,
    std::vector<std::string>* notes) {
  using megatron_internal::ApplyFlags;
  using megatron_internal::Conversion;
  using megatron_internal::OtherFlags;
  Conversion c;
  c.flags = megatron_internal::ParseArgs(args, &c.errors);
  OtherFlags(&c);
  c.spec.system = system;
  // Section by section, the table's flags and then the section's rules (which
  // read what the table wrote): errors come in this order.
  ApplyFlags("model", &c);
  megatron_internal::ModelRules(&c);
  ApplyFlags("parallelism", &c);
  megatron_internal::ParallelismRules(system, &c);
  ApplyFlags("batch", &c);
  megatron_internal::BatchRules(&c);
  ApplyFlags("options", &c);
  megatron_internal::OptionsRules(&c);
  if (notes != nullptr) {
    notes->insert(notes->end(), c.notes.begin(), c.notes.end());
  }
  if (!c.errors.empty()) return InvalidInputError(c.errors);
  return MappingSpec(std::move(c.spec));
}

absl::StatusOr<MappingSpec> FromMegatronArgs(
    const std::vector<std::string>& args, const System& system) {
  return FromMegatronArgs(args, system, nullptr);
}

}  // namespace blueprint
