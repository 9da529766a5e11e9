// Structured input errors carried through absl::Status: every line of an
// invalid-input status's message is one problem, and a payload pairs each
// line with the field path it concerns ("" when it concerns no one field, e.g.
// malformed JSON). The checker and the readers create such statuses; the API
// (core/api) turns them back into {field, message} without parsing the text.
//
// Example:
//   absl::Status s = InvalidInputError({{"batch.microbatch_size",
//                                        "batch.microbatch_size (0) must be "
//                                        "positive"}});
//   FieldErrorsOf(s)[0].field == "batch.microbatch_size"
#ifndef BLUEPRINTING_CORE_BASE_FIELD_ERRORS_H_
#define BLUEPRINTING_CORE_BASE_FIELD_ERRORS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace blueprint {

struct FieldError {
  std::string field;    // JSON path in the canonical spec, a flag, or ""
  std::string message;  // one line naming the field, the values and the rule
};

// kInvalidArgument: the messages joined by '\n', the fields as payload.
absl::Status InvalidInputError(const std::vector<FieldError>& errors);

// The error of each line of a json_reader error list ("<path>: <problem>",
// core/base/json_reader.h): the path is the field, the line the message.
std::vector<FieldError> ReaderFieldErrors(const std::vector<std::string>& lines);

// One FieldError per non-empty line of `status`'s message, with the field the
// payload recorded for it ("" when the status carries no fields).
std::vector<FieldError> FieldErrorsOf(const absl::Status& status);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_BASE_FIELD_ERRORS_H_
