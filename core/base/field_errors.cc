#include "core/base/field_errors.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace blueprint {
namespace {

// The payload's type URL; its value is one field per message line, '\n'
// separated (field paths never contain a newline: the readers escape keys).
constexpr char kFieldsPayload[] = "blueprinting/fields";

std::vector<std::string> Lines(absl::string_view text) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    out.emplace_back(line);
  }
  return out;
}

}  // namespace

absl::Status InvalidInputError(const std::vector<FieldError>& errors) {
  std::vector<std::string> messages, fields;
  for (const FieldError& error : errors) {
    // A multi-line message would shift the fields of the lines after it.
    for (const std::string& line : Lines(error.message)) {
      messages.push_back(line);
      fields.push_back(error.field);
    }
  }
  absl::Status status =
      absl::InvalidArgumentError(absl::StrJoin(messages, "\n"));
  status.SetPayload(kFieldsPayload, absl::Cord(absl::StrJoin(fields, "\n")));
  return status;
}

std::vector<FieldError> ReaderFieldErrors(
    const std::vector<std::string>& lines) {
  std::vector<FieldError> out;
  out.reserve(lines.size());
  for (const std::string& line : lines) {
    const size_t colon = line.find(": ");
    out.push_back({colon == std::string::npos ? "" : line.substr(0, colon),
                   line});
  }
  return out;
}

std::vector<FieldError> FieldErrorsOf(const absl::Status& status) {
  std::vector<FieldError> out;
  for (std::string& line : Lines(status.message())) {
    out.push_back({"", std::move(line)});
  }
  const auto payload = status.GetPayload(kFieldsPayload);
  if (!payload) return out;
  const std::vector<std::string> fields =
      absl::StrSplit(std::string(*payload), '\n');
  if (fields.size() != out.size()) return out;  // not ours: no fields
  for (size_t i = 0; i < out.size(); ++i) out[i].field = fields[i];
  return out;
}

}  // namespace blueprint
