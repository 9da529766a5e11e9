// Conversions between JS values and the core's strings, shared by the
// bindings of the module (bindings.cc) and of its testing variant
// (testing_bindings.cc). Header-only: compiled into each embind module's
// cc_binary (wasm only).
#ifndef WASM_JS_VALUES_H_
#define WASM_JS_VALUES_H_

#include <cstdlib>
#include <string>
#include <vector>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "absl/strings/str_cat.h"
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

}  // namespace blueprint_wasm

#endif  // WASM_JS_VALUES_H_
