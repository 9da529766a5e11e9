// The Megatron-LM adapter's private parts (megatron.h is its API), shared by
// its files, one per stage of FromMegatronArgs:
//   megatron_flags.cc        the table of modelled flags and its Markdown
//   megatron_parse.cc        a command line read as argparse reads it
//                            (ParseArgs -> ParsedFlags)
//   megatron.cc              the conversion: the catalogue's other flags,
//                            the table's setters, then each section's rules
//   megatron_model.cc        the model section's rules (ModelRules)
//   megatron_parallelism.cc  the parallelism and batch sections' rules
//   megatron_options.cc      the options section's rules (datatype, recipe)
// Not a public header: the BUILD lists it among the library's srcs.
#ifndef BLUEPRINTING_CORE_ADAPTERS_MEGATRON_INTERNAL_H_
#define BLUEPRINTING_CORE_ADAPTERS_MEGATRON_INTERNAL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/adapters/megatron.h"
#include "core/adapters/megatron_catalogue.h"
#include "core/base/field_errors.h"
#include "core/base/quote.h"
#include "core/spec/spec.h"

namespace blueprint {
namespace megatron_internal {

using Spec = TransformerTrainingMappingSpec;
using Value = MegatronFlagValue;
using Kind = MegatronFlagKind;

// A user's word in a message: a short escaped excerpt (core/base/quote.h).
inline std::string Quoted(const std::string& s) { return QuoteExcerpt(s); }

// --position-embedding-type's choice as the spec's position embedding (the
// table's setter and ModelRules read it; megatron_model.cc).
PositionEmbedding PositionOf(const std::string& choice);

// A catalogue flag on the command line that is not modelled: its values the
// last time it was given.
struct OtherFlag {
  const MegatronCatalogueEntry* entry;
  std::vector<std::string> values;
};

// The flags of one command line after syntax checks: values parsed and
// validated, keyed by the flag's name ("--num-layers").
class ParsedFlags {
 public:
  // Given: the flag appeared, even with a bad value (already reported).
  bool Given(const std::string& name) const { return given_.count(name) > 0; }
  // The value of a flag given with a valid value.
  const Value* Find(const std::string& name) const {
    const auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  std::optional<int64_t> Integer(const std::string& name) const {
    const Value* value = Find(name);
    if (value == nullptr) return std::nullopt;
    return value->integer;
  }
  std::optional<std::string> Choice(const std::string& name) const {
    const Value* value = Find(name);
    if (value == nullptr) return std::nullopt;
    return value->choice;
  }
  bool Switch(const std::string& name) const { return Find(name) != nullptr; }

  void MarkGiven(const std::string& name) { given_.insert(name); }
  void Set(const std::string& name, Value value) {
    value.given = true;
    values_[name] = std::move(value);
  }

  // The other catalogue flags, in the order they first appear.
  const std::vector<OtherFlag>& others() const { return others_; }
  void SetOther(const MegatronCatalogueEntry* entry,
                std::vector<std::string> values) {
    for (OtherFlag& other : others_) {
      if (other.entry == entry) {
        other.values = std::move(values);
        return;
      }
    }
    others_.push_back({entry, std::move(values)});
  }

 private:
  std::map<std::string, Value> values_;
  std::set<std::string> given_;
  std::vector<OtherFlag> others_;
};

// Splits `args` into flags and values, appending one error per problem
// (megatron_parse.cc).
ParsedFlags ParseArgs(const std::vector<std::string>& args,
                      std::vector<FieldError>* errors);

// One conversion: the flags, the spec being filled, the errors and the notes
// so far.
struct Conversion {
  ParsedFlags flags;
  Spec spec;
  std::vector<FieldError> errors;
  std::vector<std::string> notes;

  void Error(std::string field, ErrorCode code, std::string message) {
    errors.push_back({std::move(field), std::move(message), code});
  }
};

// A note that the given ones of `names` have no effect without `without`,
// as in Megatron-LM (megatron.cc).
void NoteIdle(const ParsedFlags& flags, std::vector<const char*> names,
              const std::string& without, std::vector<std::string>* notes);

// The rules the table cannot express, one function per spec section, run
// after the table's setters of that section (they read what those wrote).
void ModelRules(Conversion* c);                               // model
void ParallelismRules(const System& system, Conversion* c);   // parallelism
void BatchRules(Conversion* c);                               // batch
void OptionsRules(Conversion* c);                             // options

}  // namespace megatron_internal
}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ADAPTERS_MEGATRON_INTERNAL_H_
