// Structured input errors carried through absl::Status: every line of an
// invalid-input status's message is one problem, and two payloads pair each
// line with the field path it concerns ("" when it concerns no one field, e.g.
// malformed JSON) and with its machine-readable ErrorCode. The checker, the
// readers and the adapters create such statuses; the API (core/api) turns them
// back into {field, message, code} without parsing the text.
//
// Example:
//   absl::Status s = InvalidInputError({{"batch.microbatch_size",
//                                        "batch.microbatch_size (0) must be "
//                                        "positive",
//                                        ErrorCode::kOutOfRange}});
//   FieldErrorsOf(s)[0].field == "batch.microbatch_size"
//   ErrorCodeName(FieldErrorsOf(s)[0].code) == "out_of_range"
#ifndef BLUEPRINTING_CORE_BASE_FIELD_ERRORS_H_
#define BLUEPRINTING_CORE_BASE_FIELD_ERRORS_H_

#include <cstddef>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace blueprint {

// What kind of problem an error is, for programs (the wasm module's
// errors[].code, `blueprint metadata`'s "error_codes"); the message says it
// for people. kErrorCodes below is the one table of names and meanings.
enum class ErrorCode {
  kSyntax,
  kUnknownField,
  kMissingField,
  kWrongType,
  kUnknownChoice,
  kOutOfRange,
  kNotDivisible,
  kInconsistent,
  kUnsupported,
  kTooLarge,
  kOverCapacity,
  kInvalidValue,
  kInternal,
  kCancelled,
};

struct ErrorCodeInfo {
  ErrorCode code;
  const char* name;     // snake_case, as JSON and the wasm module spell it
  const char* meaning;  // one line, for metadata and the page
};

// One row per ErrorCode, in the enum's order (checked below).
inline constexpr ErrorCodeInfo kErrorCodes[] = {
    {ErrorCode::kSyntax, "syntax",
     "the text cannot be read: malformed JSON (or a duplicate key), malformed "
     "command-line syntax (a stray argument, a repeated flag, a flag missing "
     "its value or given one it does not take), or malformed UTF-16"},
    {ErrorCode::kUnknownField, "unknown_field",
     "a key or a flag the input format does not have"},
    {ErrorCode::kMissingField, "missing_field",
     "a required key or flag is absent"},
    {ErrorCode::kWrongType, "wrong_type",
     "a value of the wrong type: e.g. a string or 8.5 where an integer is "
     "due, null where a number is due, a flag value that is not a positive "
     "integer"},
    {ErrorCode::kUnknownChoice, "unknown_choice",
     "a name none of the accepted ones: an enum spelling, a sum type's "
     "\"type\", a datatype key, a report figure"},
    {ErrorCode::kOutOfRange, "out_of_range",
     "a number outside its documented range (positive, at least, between), "
     "an index past the end of a list, or an integer that overflows 64 bits"},
    {ErrorCode::kNotDivisible, "not_divisible",
     "a divisibility rule fails: a size or batch not divisible by a degree"},
    {ErrorCode::kInconsistent, "inconsistent",
     "fields contradict each other: a setting needs another field's value "
     "(a datatype the system lacks, a network tier too small or not filled, "
     "a schedule for another degree or kind)"},
    {ErrorCode::kUnsupported, "unsupported",
     "valid on its own but not something the model represents (a Megatron-LM "
     "option it has no counterpart for, offload with fewer than 3 blocks per "
     "stage, another format version)"},
    {ErrorCode::kTooLarge, "too_large",
     "an input over the size limit (16 MiB), or too large to copy into "
     "memory"},
    {ErrorCode::kOverCapacity, "over_capacity",
     "the mapping needs more memory than a tier holds (the report is still "
     "computed)"},
    {ErrorCode::kInvalidValue, "invalid_value",
     "any other invalid value, e.g. efficiency thresholds that do not "
     "descend"},
    {ErrorCode::kInternal, "internal",
     "not the input's fault: a bug (a verifier failed) or running out of "
     "memory (exit status 3)"},
    {ErrorCode::kCancelled, "cancelled",
     "the caller cancelled the command (exit status 4)"},
};

namespace field_errors_internal {
constexpr bool RowsInEnumOrder() {
  for (size_t i = 0; i < std::size(kErrorCodes); ++i) {
    if (static_cast<size_t>(kErrorCodes[i].code) != i) return false;
  }
  return true;
}
}  // namespace field_errors_internal
static_assert(field_errors_internal::RowsInEnumOrder(),
              "kErrorCodes must list every ErrorCode once, in enum order");
static_assert(std::size(kErrorCodes) ==
                  static_cast<size_t>(ErrorCode::kCancelled) + 1,
              "kErrorCodes needs one row per ErrorCode");

// The code's snake_case name, e.g. "out_of_range".
const char* ErrorCodeName(ErrorCode code);
// The code a name spells, or nullopt.
std::optional<ErrorCode> ParseErrorCode(absl::string_view name);

struct FieldError {
  std::string field;    // JSON path in the canonical spec, a flag, or ""
  std::string message;  // one line naming the field, the values and the rule
  ErrorCode code = ErrorCode::kInvalidValue;
};

bool operator==(const FieldError& a, const FieldError& b);
inline bool operator!=(const FieldError& a, const FieldError& b) {
  return !(a == b);
}
// {field, message, code}, for test failures.
std::ostream& operator<<(std::ostream& os, const FieldError& error);
inline std::ostream& operator<<(std::ostream& os, ErrorCode code) {
  return os << ErrorCodeName(code);
}

// kInvalidArgument: the messages joined by '\n', the fields and the codes as
// payloads (a message of several lines gives each line its field and code).
absl::Status InvalidInputError(const std::vector<FieldError>& errors);

// One FieldError per non-empty line of `status`'s message, with the field and
// the code the payloads recorded for it. A status without a payload (or with
// one that does not match its lines) gives "" fields and kInvalidValue codes.
std::vector<FieldError> FieldErrorsOf(const absl::Status& status);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_BASE_FIELD_ERRORS_H_
