// The project's canonical spec JSON ("blueprinting.spec/1") and MappingSpec,
// both ways, plus the program JSON ("blueprinting.program/1": a checked spec
// and its derived values) that `blueprint check` prints. The format is
// documented in core/spec/README.md; core/spec/testdata/ holds examples.
//
// Parsing is strict and reports every problem of the document at once, one
// line per problem naming its JSON path: malformed JSON (with its position),
// unknown or missing keys, wrong types, non-integers and integers beyond
// int64. Values are not judged here: a degree of 0 parses, and the checker
// (check.h) reports it together with every other violated rule.
//
// Example:
//   absl::StatusOr<MappingSpec> spec = ParseSpecJson(text);
//   if (!spec.ok()) return spec.status();  // one problem per line
//   std::string canonical = SpecToJson(*spec);  // sorted keys, ends in '\n'
#ifndef BLUEPRINTING_CORE_SPEC_SPEC_JSON_H_
#define BLUEPRINTING_CORE_SPEC_SPEC_JSON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "nlohmann/json.hpp"

namespace blueprint {

// The "format" value of a spec document and of a program document.
inline constexpr char kSpecFormat[] = "blueprinting.spec/1";
inline constexpr char kProgramFormat[] = "blueprinting.program/1";

//----- Whole documents
//------------------------------------------------------------

// ParseSpecJson: a spec from its canonical JSON text. kInvalidArgument lists
// every problem, one per line, e.g.
//   "parallelism.tensor.degree: expected an integer, got string \"8\""
//   "parallelism.tensor.overlapp: unknown key (expected keys: degree, ...)"
absl::StatusOr<MappingSpec> ParseSpecJson(const std::string& text);

// SpecFromJsonValue: the same from an already parsed value.
absl::StatusOr<MappingSpec> SpecFromJsonValue(const nlohmann::json& value);

// SpecToJson: the canonical text of `spec`: every field spelled out, keys
// sorted, 2-space indent, ending in "\n". ParseSpecJson(SpecToJson(s))
// gives back `s`, and SpecToJson(ParseSpecJson(t)) == t for canonical t.
std::string SpecToJson(const MappingSpec& spec);
nlohmann::json SpecToJsonValue(const MappingSpec& spec);

// ProgramToJson: {"derived": {...}, "format": "blueprinting.program/1",
// "spec": <SpecToJsonValue>}, canonical, ending in "\n".
std::string ProgramToJson(const TypedProgram& program);
nlohmann::json DerivedToJsonValue(const DerivedValues& derived);

//----- Parts shared with the Calculon adapter
//---------------------------------------

// Whether a model or system object carries the free-text "name" key: the
// canonical spec has it, Calculon's own files do not.
enum class NameKey { kPresent, kAbsent };

// The model as Calculon's application JSON (hidden, feedforward, seq_size,
// attn_heads, attn_size, num_blocks), plus "name" when kPresent.
nlohmann::json ModelToJsonValue(const TransformerModel& model, NameKey name);
void ReadModelJson(const nlohmann::json& value, const std::string& path,
                   NameKey name, std::vector<std::string>* errors,
                   TransformerModel* out);

// The system in Calculon's system-JSON structure (matrix, vector, mem1, mem2,
// processing_mode, networks), plus "name" when kPresent.
nlohmann::json SystemToJsonValue(const System& system, NameKey name);
void ReadSystemJson(const nlohmann::json& value, const std::string& path,
                    NameKey name, std::vector<std::string>* errors,
                    System* out);

// The spellings each sum type's "type" key accepts.
const std::vector<std::string>& TensorCommunicationChoices();
const std::vector<std::string>& PipelineScheduleChoices();

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_SPEC_JSON_H_
