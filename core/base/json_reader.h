// Strict, error-collecting reads of parsed JSON into typed fields.
//
// Adapters read every field of an external document through these helpers,
// so that one pass reports every problem at once, each as one FieldError
// (core/base/field_errors.h) whose field is the JSON path ("" for the top
// level) and whose message is one line "<path>: <problem>": a missing key
// (kMissingField), an unknown key (kUnknownField), a wrong type or a
// non-integer (kWrongType), an integer beyond int64 (kOutOfRange), an unknown
// enum spelling (kUnknownChoice). Nothing here throws or calls a nlohmann
// accessor on a value of the wrong type (wasm builds have no exceptions).
//
// Example:
//   std::vector<FieldError> errors;
//   JsonObjectReader tensor(json_value, "parallelism.tensor", &errors);
//   int64_t degree = 0;
//   tensor.ReadInt("degree", &degree);
//   tensor.RejectUnknownKeys();
//   // errors: {{"parallelism.tensor.degree",
//   //           "parallelism.tensor.degree: expected an integer, got string "
//   //           "\"8\"", ErrorCode::kWrongType}}
#ifndef BLUEPRINTING_CORE_BASE_JSON_READER_H_
#define BLUEPRINTING_CORE_BASE_JSON_READER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/field_errors.h"
#include "core/base/json.h"
#include "nlohmann/json.hpp"

namespace blueprint {

// JsonTo*: converts one value found at `path`. On a type mismatch appends
// "<path>: expected ..., got ..." (kWrongType) to `errors`, leaves `out`
// untouched and returns false.
//   * JsonToInt accepts only JSON integers that fit in int64_t (8.0 and 1e3
//     are numbers, not integers).
//   * JsonToDouble accepts any JSON number (JSON has no NaN or infinity).
bool JsonToInt(const nlohmann::json& value, const std::string& path,
               std::vector<FieldError>* errors, int64_t* out);
bool JsonToDouble(const nlohmann::json& value, const std::string& path,
                  std::vector<FieldError>* errors, double* out);
bool JsonToBool(const nlohmann::json& value, const std::string& path,
                std::vector<FieldError>* errors, bool* out);
bool JsonToString(const nlohmann::json& value, const std::string& path,
                  std::vector<FieldError>* errors, std::string* out);

// JsonToEnum: a string spelled as one of `choices`, converted by `parse`
// (one of spec.h's Parse* functions). Errors list the accepted spellings.
template <typename Enum>
bool JsonToEnum(const nlohmann::json& value, const std::string& path,
                std::vector<FieldError>* errors,
                std::optional<Enum> (*parse)(const std::string&),
                const std::vector<std::string>& choices, Enum* out);

// UnknownChoiceError: kUnknownChoice at `path`,
// "<path>: expected one of "a", "b", got "c"".
FieldError UnknownChoiceError(const std::string& path,
                              const std::vector<std::string>& choices,
                              const nlohmann::json& got);

// JsonObjectReader: reads the members of one JSON object at `path`. Every
// Read* names a member it expects; RejectUnknownKeys() then reports the
// members nobody asked for. A missing member is an error ("required key is
// missing"): canonical documents spell every field out.
class JsonObjectReader {
 public:
  // Records "<path>: expected an object, got ..." if `value` is not one;
  // every read then fails without further messages. `value` and `errors`
  // must outlive the reader.
  JsonObjectReader(const nlohmann::json& value, std::string path,
                   std::vector<FieldError>* errors);

  bool is_object() const { return object_ != nullptr; }
  const std::string& path() const { return path_; }
  std::string PathOf(const std::string& key) const {
    return MemberPath(path_, key);
  }
  std::vector<FieldError>* errors() const { return errors_; }

  // Member: the value of `key`, or nullptr (recorded as missing).
  const nlohmann::json* Member(const std::string& key);

  bool ReadInt(const std::string& key, int64_t* out);
  bool ReadDouble(const std::string& key, double* out);
  bool ReadBool(const std::string& key, bool* out);
  bool ReadString(const std::string& key, std::string* out);
  template <typename Enum>
  bool ReadEnum(const std::string& key,
                std::optional<Enum> (*parse)(const std::string&),
                const std::vector<std::string>& choices, Enum* out) {
    const nlohmann::json* value = Member(key);
    return value != nullptr &&
           JsonToEnum(*value, PathOf(key), errors_, parse, choices, out);
  }

  // RejectUnknownKeys: one error per member that no read asked for, listing
  // the expected keys. Call once, after the last read.
  void RejectUnknownKeys();

 private:
  const nlohmann::json* object_;  // nullptr when the value is not an object
  std::string path_;
  std::vector<FieldError>* errors_;
  std::vector<std::string> expected_;  // keys asked for, in asking order
};

//----- Implementation details -------------------------------------------------

template <typename Enum>
bool JsonToEnum(const nlohmann::json& value, const std::string& path,
                std::vector<FieldError>* errors,
                std::optional<Enum> (*parse)(const std::string&),
                const std::vector<std::string>& choices, Enum* out) {
  if (!value.is_string()) {
    errors->push_back(UnknownChoiceError(path, choices, value));
    return false;
  }
  const std::optional<Enum> parsed = parse(value.get_ref<const std::string&>());
  if (!parsed.has_value()) {
    errors->push_back(UnknownChoiceError(path, choices, value));
    return false;
  }
  *out = *parsed;
  return true;
}

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_BASE_JSON_READER_H_
