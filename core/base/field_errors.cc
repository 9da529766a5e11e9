#include "core/base/field_errors.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"

namespace blueprint {
namespace {

// The payloads' type URLs; each value has one line per message line, '\n'
// separated: the field (field paths never contain a newline: the readers
// escape keys) and the code's name.
constexpr char kFieldsPayload[] = "blueprinting/fields";
constexpr char kCodesPayload[] = "blueprinting/codes";

std::vector<std::string> Lines(absl::string_view text) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    out.emplace_back(line);
  }
  return out;
}

// The payload's lines if it has exactly `count`, else nullopt (not ours).
std::optional<std::vector<std::string>> PayloadLines(const absl::Status& status,
                                                     absl::string_view type_url,
                                                     size_t count) {
  const absl::optional<absl::Cord> payload = status.GetPayload(type_url);
  if (!payload) return std::nullopt;
  std::vector<std::string> lines = absl::StrSplit(std::string(*payload), '\n');
  if (lines.size() != count) return std::nullopt;
  return lines;
}

}  // namespace

const char* ErrorCodeName(ErrorCode code) {
  return kErrorCodes[static_cast<size_t>(code)].name;
}

std::optional<ErrorCode> ParseErrorCode(absl::string_view name) {
  for (const ErrorCodeInfo& info : kErrorCodes) {
    if (name == info.name) return info.code;
  }
  return std::nullopt;
}

bool operator==(const FieldError& a, const FieldError& b) {
  return a.field == b.field && a.message == b.message && a.code == b.code;
}

std::ostream& operator<<(std::ostream& os, const FieldError& error) {
  return os << "{field: \"" << error.field << "\", message: \"" << error.message
            << "\", code: " << ErrorCodeName(error.code) << "}";
}

absl::Status InvalidInputError(const std::vector<FieldError>& errors) {
  std::vector<std::string> messages, fields, codes;
  for (const FieldError& error : errors) {
    // A multi-line message would shift the fields of the lines after it.
    for (const std::string& line : Lines(error.message)) {
      messages.push_back(line);
      fields.push_back(error.field);
      codes.push_back(ErrorCodeName(error.code));
    }
  }
  absl::Status status =
      absl::InvalidArgumentError(absl::StrJoin(messages, "\n"));
  status.SetPayload(kFieldsPayload, absl::Cord(absl::StrJoin(fields, "\n")));
  status.SetPayload(kCodesPayload, absl::Cord(absl::StrJoin(codes, "\n")));
  return status;
}

std::vector<FieldError> FieldErrorsOf(const absl::Status& status) {
  std::vector<FieldError> out;
  for (std::string& line : Lines(status.message())) {
    FieldError error;
    error.message = std::move(line);
    out.push_back(std::move(error));
  }
  if (const std::optional<std::vector<std::string>> fields =
          PayloadLines(status, kFieldsPayload, out.size())) {
    for (size_t i = 0; i < out.size(); ++i) out[i].field = (*fields)[i];
  }
  if (const std::optional<std::vector<std::string>> codes =
          PayloadLines(status, kCodesPayload, out.size())) {
    std::vector<ErrorCode> parsed;
    for (const std::string& name : *codes) {
      const std::optional<ErrorCode> code = ParseErrorCode(name);
      if (!code) break;  // not ours: no codes
      parsed.push_back(*code);
    }
    if (parsed.size() == out.size()) {
      for (size_t i = 0; i < out.size(); ++i) out[i].code = parsed[i];
    }
  }
  return out;
}

}  // namespace blueprint
