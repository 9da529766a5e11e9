#include "core/base/json_reader.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/json.h"

namespace blueprint {
namespace {

using Json = nlohmann::json;

std::string Display(const std::string& path) {
  return path.empty() ? "top level" : path;
}

void AddTypeError(const std::string& path, const char* expected,
                  const Json& got, std::vector<FieldError>* errors) {
  errors->push_back({path,
                     absl::StrCat(Display(path), ": expected ", expected,
                                  ", got ", JsonSnippet(got)),
                     ErrorCode::kWrongType});
}

}  // namespace

bool JsonToInt(const Json& value, const std::string& path,
               std::vector<FieldError>* errors, int64_t* out) {
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      errors->push_back({path,
                         absl::StrCat(Display(path), ": integer ", u,
                                      " is too large (at most ",
                                      std::numeric_limits<int64_t>::max(), ")"),
                         ErrorCode::kOutOfRange});
      return false;
    }
    *out = static_cast<int64_t>(u);
    return true;
  }
  if (value.is_number_integer()) {
    *out = value.get<int64_t>();
    return true;
  }
  AddTypeError(path, "an integer", value, errors);
  return false;
}

bool JsonToDouble(const Json& value, const std::string& path,
                  std::vector<FieldError>* errors, double* out) {
  if (value.is_number_unsigned()) {
    *out = static_cast<double>(value.get<uint64_t>());
  } else if (value.is_number_integer()) {
    *out = static_cast<double>(value.get<int64_t>());
  } else if (value.is_number_float()) {
    *out = value.get<double>();
  } else {
    AddTypeError(path, "a number", value, errors);
    return false;
  }
  return true;
}

bool JsonToBool(const Json& value, const std::string& path,
                std::vector<FieldError>* errors, bool* out) {
  if (!value.is_boolean()) {
    AddTypeError(path, "a boolean (true or false)", value, errors);
    return false;
  }
  *out = value.get<bool>();
  return true;
}

bool JsonToString(const Json& value, const std::string& path,
                  std::vector<FieldError>* errors, std::string* out) {
  if (!value.is_string()) {
    AddTypeError(path, "a string", value, errors);
    return false;
  }
  *out = value.get_ref<const std::string&>();
  return true;
}

FieldError UnknownChoiceError(const std::string& path,
                              const std::vector<std::string>& choices,
                              const Json& got) {
  std::vector<std::string> quoted;
  quoted.reserve(choices.size());
  for (const std::string& choice : choices)
    quoted.push_back(Json(choice).dump());
  return {path,
          absl::StrCat(Display(path), ": expected one of ",
                       absl::StrJoin(quoted, ", "), ", got ", JsonSnippet(got)),
          ErrorCode::kUnknownChoice};
}

JsonObjectReader::JsonObjectReader(const Json& value, std::string path,
                                   std::vector<FieldError>* errors)
    : object_(value.is_object() ? &value : nullptr),
      path_(std::move(path)),
      errors_(errors) {
  if (object_ == nullptr) AddTypeError(path_, "an object", value, errors_);
}

const Json* JsonObjectReader::Member(const std::string& key) {
  expected_.push_back(key);
  if (object_ == nullptr) return nullptr;
  const auto it = object_->find(key);
  if (it == object_->end()) {
    errors_->push_back({PathOf(key),
                        absl::StrCat(PathOf(key), ": required key is missing"),
                        ErrorCode::kMissingField});
    return nullptr;
  }
  return &*it;
}

bool JsonObjectReader::ReadInt(const std::string& key, int64_t* out) {
  const Json* value = Member(key);
  return value != nullptr && JsonToInt(*value, PathOf(key), errors_, out);
}

bool JsonObjectReader::ReadDouble(const std::string& key, double* out) {
  const Json* value = Member(key);
  return value != nullptr && JsonToDouble(*value, PathOf(key), errors_, out);
}

bool JsonObjectReader::ReadBool(const std::string& key, bool* out) {
  const Json* value = Member(key);
  return value != nullptr && JsonToBool(*value, PathOf(key), errors_, out);
}

bool JsonObjectReader::ReadString(const std::string& key, std::string* out) {
  const Json* value = Member(key);
  return value != nullptr && JsonToString(*value, PathOf(key), errors_, out);
}

void JsonObjectReader::RejectUnknownKeys() {
  if (object_ == nullptr) return;
  for (auto it = object_->begin(); it != object_->end(); ++it) {
    if (std::find(expected_.begin(), expected_.end(), it.key()) !=
        expected_.end()) {
      continue;
    }
    const std::string path = PathOf(it.key());
    errors_->push_back({path,
                        absl::StrCat(path, ": unknown key (expected keys: ",
                                     absl::StrJoin(expected_, ", "), ")"),
                        ErrorCode::kUnknownField});
  }
}

}  // namespace blueprint
