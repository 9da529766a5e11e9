// `blueprint metadata` and the wasm module's metadata(): what the core knows
// about its own inputs and outputs, as canonical JSON, so that a page or a
// tool never keeps a copy of it:
//
//   {"format": "blueprinting.metadata/1",
//    "enums": {ID: {"variant": bool,
//                   "choices": [{"name", "calculon", "meaning"}, ...]}},
//    "error_codes": [{"name", "meaning"}, ...],
//    "figures": {NAME: {"unit", "group", "label", "meaning", "formula"}},
//    "spec_fields": {PATH: {"type", "kinds", ["choices"], ["when"],
//                           ["nullable"], ["within"], ["min"], ["max"],
//                           ["unit"], ["why"]}}}
//
// * enums: every enum of the spec and the type names of every sum type
//   (core/spec/enums.h), choices in table order; "calculon" is null where
//   Calculon has no spelling.
// * error_codes: every code an error's `code` can hold (the wasm module's
//   errors[].code), in table order (core/base/field_errors.h kErrorCodes).
// * figures: every figure of the report JSON, a row of the figure table
//   (core/figures/figure_table.h); unit is one of s, bytes, FLOP, bytes/s,
//   fraction, count, samples/s; group is block, iteration, schedule, memory
//   or report; label is the page summary's name for it, or null; formula
//   is how it is computed (the text explain starts with), null for a block
//   figure.
// * spec_fields: every leaf of the canonical spec JSON, derived from the
//   spec writer itself. PATH uses "[]" for any list index and "<datatype>"
//   for a datatype key; type is integer, number, boolean, string or null;
//   kinds lists the spec kinds that have the field; choices names the enum
//   of a string field; when = {"field", "in"} for a field only some
//   alternatives of a sum type have; a string field with "nullable": true
//   may also be null (options.gemm_datatype, options.weight_datatype: the
//   same as options.datatype; options.grad_reduce_datatype: the profile's
//   choice); an optional part of the model
//   (model.moe, model.latent_attention) is type "object" with "nullable":
//   true (the spec holds null or the object), and each of its keys has
//   "within": its path (the key exists only when the part is an object);
//   min/max/unit/why are the checker's ranges (core/spec/check.h
//   CheckedFieldRanges).
#ifndef BLUEPRINTING_CORE_API_METADATA_H_
#define BLUEPRINTING_CORE_API_METADATA_H_

#include "core/api/commands.h"

namespace blueprint {

inline constexpr char kMetadataFormat[] = "blueprinting.metadata/1";

// Metadata: `blueprint metadata`. Output: the canonical JSON above, ending
// in "\n". Always succeeds.
CommandResult Metadata();

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_API_METADATA_H_
