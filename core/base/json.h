// JSON in and out for every canonical text of the project.
//
// ParseJson is the one entry point for JSON text: it never throws (wasm builds
// have no exceptions), reports malformed input with its position, and rejects
// duplicate keys and pathological nesting that nlohmann would accept.
// CanonicalJson prints a value deterministically: keys sorted, integers
// exactly, doubles in their shortest round-trip form (FormatDouble).
//
// Example:
//   absl::StatusOr<nlohmann::json> value = ParseJson(R"({"b": 1, "a": [1,
//   2]})"); if (!value.ok()) return value.status(); std::string text =
//   CanonicalJson(*value) + "\n";
//   // {
//   //   "a": [1, 2],
//   //   "b": 1
//   // }
#ifndef BLUEPRINTING_CORE_BASE_JSON_H_
#define BLUEPRINTING_CORE_BASE_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace blueprint {

// Deepest nesting of arrays and objects ParseJson accepts. Real inputs nest
// at most 5 levels; the limit keeps every recursive consumer safe.
inline constexpr int kMaxJsonDepth = 64;

// ParseJson: parses `text` as one strict JSON value (RFC 8259, no comments,
// nothing after the value). On failure returns kInvalidArgument (an
// InvalidInputError, core/base/field_errors.h: field "", ErrorCode::kSyntax)
// with a one-line message:
//   "malformed JSON: parse error at line 3, column 7: syntax error ..."
//   "malformed JSON: parse error at line 1, column 9: syntax error while
//    parsing object key - invalid literal; last read: \"\\xEF\"; expected
//    string literal"  (the token quoted by QuoteExcerptEnd, core/base/quote.h:
//    its last 32 bytes at most, escaped, so the message is valid UTF-8)
//   "malformed JSON: duplicate key \"degree\" at parallelism.tensor"
//   "malformed JSON: nesting deeper than 64 levels at a[0][0]..."
absl::StatusOr<nlohmann::json> ParseJson(const std::string& text);

// CanonicalJson: the canonical text of `value`, without a trailing newline.
//   * indent >= 0: one member or element per line, `indent` spaces per level;
//     an array whose elements are all scalars stays on one line ("[128,
//     0.95]"); empty containers print as {} and [].
//   * indent < 0: everything on one line with no spaces.
// Object keys are sorted (nlohmann::json stores objects in a std::map).
// Integers print exactly, doubles through FormatDouble, except that a
// non-finite double (which no JSON text can contain) prints as null and
// negative zero as 0 (JSON's "-0" reads back as the integer 0). Strings are
// escaped as JSON requires, invalid UTF-8 replaced by U+FFFD.
std::string CanonicalJson(const nlohmann::json& value, int indent = 2);

// MemberPath: "parent.key" ("key" at the top level) naming a member in
// messages. A key that is not a plain identifier ([A-Za-z0-9_]+) is written
// parent["..."] with JSON escapes, so a path is always one printable line.
std::string MemberPath(const std::string& parent, const std::string& key);
// ElementPath: "parent[index]".
std::string ElementPath(const std::string& parent, size_t index);

// JsonTypeName: "an object", "an array", "a string", "an integer", "a number",
// "a boolean" or "null", for error messages.
const char* JsonTypeName(const nlohmann::json& value);

// JsonSnippet: a short rendering of `value` for error messages: scalars in
// compact JSON (strings cut after at most 40 bytes, between UTF-8
// characters, "..." before the closing quote), containers by type name.
std::string JsonSnippet(const nlohmann::json& value);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_BASE_JSON_H_
