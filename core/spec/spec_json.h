// The project's canonical spec JSON ("blueprinting.spec/2") and MappingSpec,
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
#include "core/base/field_errors.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "nlohmann/json.hpp"

namespace blueprint {

// The "format" value of a spec document and of a program document. Version 1
// documents (Calculon's model keys only, no options.precision) are still
// read, as the Calculon-shaped model; version 2 documents (no mixture of
// experts, latent attention, MTP, context or expert parallelism; a boolean
// data.optimizer_sharding) too; SpecToJson writes version 3.
inline constexpr char kSpecFormat[] = "blueprinting.spec/3";
inline constexpr char kSpecFormatV2[] = "blueprinting.spec/2";
inline constexpr char kSpecFormatV1[] = "blueprinting.spec/1";
inline constexpr char kProgramFormat[] = "blueprinting.program/1";

//----- Whole documents
//------------------------------------------------------------

// ParseSpecJson: a spec from its canonical JSON text. kInvalidArgument lists
// every problem, one per line, each with its field and ErrorCode
// (InvalidInputError, core/base/field_errors.h), e.g.
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

// Which keys a model object has: Calculon's application JSON (hidden,
// feedforward, seq_size, attn_heads, attn_size, num_blocks), the spec/1
// model (those and "name"), the spec/2 model (also kv_heads, mlp, norm,
// linear_bias and vocabulary) or the spec/3 model (also moe,
// latent_attention and mtp_layers). Reading a model without the
// architecture keys gives Calculon's block (kv_heads = attn_heads,
// CalculonModel in spec.h).
enum class ModelKeys { kCalculon, kSpecV1, kSpecV2, kSpecV3 };
nlohmann::json ModelToJsonValue(const TransformerModel& model, ModelKeys keys);
void ReadModelJson(const nlohmann::json& value, const std::string& path,
                   ModelKeys keys, std::vector<FieldError>* errors,
                   TransformerModel* out);

// The system in Calculon's system-JSON structure (matrix, vector, mem1, mem2,
// processing_mode, networks), plus "name" when kPresent.
nlohmann::json SystemToJsonValue(const System& system, NameKey name);
void ReadSystemJson(const nlohmann::json& value, const std::string& path,
                    NameKey name, std::vector<FieldError>* errors, System* out);

// The spellings each sum type's "type" key accepts.
const std::vector<std::string>& TensorCommunicationChoices();
const std::vector<std::string>& PipelineScheduleChoices();
const std::vector<std::string>& DataShardingChoices();

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_SPEC_JSON_H_
