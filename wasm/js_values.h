// Conversions between JS values and the core's strings, shared by the
// bindings of the module (spec_bindings.cc, bindings.cc) and of its testing
// variant (testing_bindings.cc). Header-only: compiled into each embind module's
// cc_binary (wasm only).
#ifndef WASM_JS_VALUES_H_
#define WASM_JS_VALUES_H_

#include <cstdlib>
#include <string>
#include <vector>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "absl/strings/str_cat.h"
#include "core/api/commands.h"
#include "core/base/field_errors.h"
#include "core/base/input_limits.h"

namespace blueprint_wasm {

using emscripten::val;

// A JS string from UTF-8 bytes on the heap, decoded by TextDecoder (invalid
// UTF-8, which the core never returns, would become U+FFFD as with embind).
inline val JsString(const std::string& text) {
  static const val* const decoder = new val(val::global("TextDecoder").new_());
  return decoder->call<val>(
      "decode",
      val(emscripten::typed_memory_view(
          text.size(), reinterpret_cast<const unsigned char*>(text.data()))));
}

// Converts the JS string `value`, the argument `name`, into `out`, or appends
// an error naming it to `errors` and returns false.
inline bool StringFromJs(const val& value, const std::string& name,
                         std::string* out,
                         std::vector<blueprint::FieldError>* errors) {
  if (!value.isString()) {
    errors->push_back({name,
                       absl::StrCat(name, ": expected a string, got ",
                                    value.typeOf().as<std::string>()),
                       blueprint::ErrorCode::kWrongType});
    return false;
  }
  const double length = value["length"].as<double>();
  if (length > static_cast<double>(blueprint::kMaxInputBytes)) {
    errors->push_back({name, blueprint::InputTooLargeMessage(name),
                       blueprint::ErrorCode::kTooLarge});
    return false;
  }
  // In a /u regular expression a surrogate pair is one code point, so \p{Cs}
  // (the surrogate category) matches only a lone surrogate.
  static const val* const lone_surrogate =
      new val(val::global("RegExp").new_(val("\\p{Cs}"), val("u")));
  const val match = lone_surrogate->call<val>("exec", value);
  if (!match.isNull()) {
    const int index = match["index"].as<int>();
    const int unit = value.call<int>("charCodeAt", index);
    static const char kHex[] = "0123456789ABCDEF";
    std::string hex;
    for (int shift = 12; shift >= 0; shift -= 4) {
      hex.push_back(kHex[(unit >> shift) & 0xF]);
    }
    errors->push_back({name,
                       absl::StrCat(name,
                                    ": not well-formed UTF-16: lone "
                                    "surrogate U+",
                                    hex, " at index ", index),
                       blueprint::ErrorCode::kSyntax});
    return false;
  }
  static const val* const encoder = new val(val::global("TextEncoder").new_());
  const val bytes = encoder->call<val>("encode", value);
  const size_t size = bytes["length"].as<size_t>();
  // Make sure the heap can hold the copy before std::string asks for it:
  // malloc returns null (ALLOW_MEMORY_GROWTH), operator new would not.
  void* probe = std::malloc(size + 1);
  if (probe == nullptr) {
    errors->push_back(
        {name,
         absl::StrCat(name, ": out of memory converting ", size, " bytes"),
         blueprint::ErrorCode::kTooLarge});
    return false;
  }
  std::free(probe);
  out->resize(size);
  if (size > 0) {
    val(emscripten::typed_memory_view(
            size, reinterpret_cast<unsigned char*>(&(*out)[0])))
        .call<void>("set", bytes);
  }
  return true;
}

// {ok, output, errors: [{field, message, code}], notes} of a command.
inline val ToJs(const blueprint::CommandResult& result) {
  val out = val::object();
  out.set("ok", result.exit_code == blueprint::kExitOk);
  out.set("output", JsString(result.output));
  val errors = val::array();
  for (const blueprint::FieldError& e : result.errors) {
    val error = val::object();
    error.set("field", JsString(e.field));
    error.set("message", JsString(e.message));
    error.set("code", val(blueprint::ErrorCodeName(e.code)));
    errors.call<void>("push", error);
  }
  out.set("errors", errors);
  val notes = val::array();
  for (const std::string& note : result.notes) {
    notes.call<void>("push", JsString(note));
  }
  out.set("notes", notes);
  return out;
}

inline val Failure(int exit_code, const std::vector<blueprint::FieldError>& errors) {
  blueprint::CommandResult result;
  result.exit_code = exit_code;
  result.errors = errors;
  return ToJs(result);
}

// A JS array of strings (`name` in messages). The whole list is limited
// like the core limits Megatron-LM's arguments: the sum of the lengths plus
// one per string.
inline bool StringsFromJs(const val& array, const std::string& name,
                   const std::string& not_an_array,
                   std::vector<std::string>* out,
                   std::vector<blueprint::FieldError>* errors) {
  if (!array.isArray()) {
    errors->push_back({name, not_an_array, blueprint::ErrorCode::kWrongType});
    return false;
  }
  const double length = array["length"].as<double>();
  if (length > static_cast<double>(blueprint::kMaxInputBytes)) {
    errors->push_back({name, blueprint::InputTooLargeMessage(name),
                       blueprint::ErrorCode::kTooLarge});
    return false;
  }
  double total = 0;
  for (int i = 0; i < static_cast<int>(length); ++i) {
    const val item = array[i];
    if (!item.isString()) {
      errors->push_back({name, not_an_array, blueprint::ErrorCode::kWrongType});
      return false;
    }
    total += item["length"].as<double>() + 1;
    if (total > static_cast<double>(blueprint::kMaxInputBytes)) {
      errors->push_back({name, blueprint::InputTooLargeMessage(name),
                         blueprint::ErrorCode::kTooLarge});
      return false;
    }
  }
  bool ok = true;
  out->resize(static_cast<size_t>(length));
  for (int i = 0; i < static_cast<int>(length); ++i) {
    ok &= StringFromJs(array[i], absl::StrCat(name, "[", i, "]"), &(*out)[i],
                       errors);
  }
  return ok;
}

// The string arguments of one call, all checked before any is used.
class Arguments {
 public:
  Arguments& String(const val& value, const char* name, std::string* out) {
    StringFromJs(value, name, out, &errors_);
    return *this;
  }
  Arguments& Strings(const val& value, const char* name,
                     const std::string& not_an_array,
                     std::vector<std::string>* out) {
    StringsFromJs(value, name, not_an_array, out, &errors_);
    return *this;
  }
  Arguments& Error(blueprint::FieldError error) {
    errors_.push_back(std::move(error));
    return *this;
  }
  bool ok() const { return errors_.empty(); }
  val Refusal() const { return Failure(blueprint::kExitInvalidInput, errors_); }

 private:
  std::vector<blueprint::FieldError> errors_;
};

// The commands that take one spec: its argument checked, then `command`.
inline val WithSpec(const val& spec_arg,
             blueprint::CommandResult (*command)(const std::string&)) {
  std::string spec;
  Arguments args;
  if (!args.String(spec_arg, "spec", &spec).ok()) return args.Refusal();
  return ToJs(command(spec));
}

}  // namespace blueprint_wasm

#endif  // WASM_JS_VALUES_H_
