#include "core/base/json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/field_errors.h"
#include "core/base/format.h"
#include "core/base/quote.h"

namespace blueprint {
namespace {

using Json = nlohmann::json;

void AppendScalar(const Json& value, std::string* out);
std::string QuotedJsonString(const std::string& s);

// Builds the DOM through nlohmann's own SAX DOM builder while tracking where
// it is, so that a duplicate key or an over-deep nesting can be reported with
// its path. Hides (does not override: sax_parse is a template over the SAX
// type) the events it needs to see.
class StrictDomBuilder : public nlohmann::detail::json_sax_dom_parser<Json> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<Json>;

  StrictDomBuilder(const std::string& text, Json* result)
      : Base(*result, /*allow_exceptions_=*/false), text_(text) {}

  const std::string& error() const { return error_; }

  bool null() { return Value() && Base::null(); }
  bool boolean(bool v) { return Value() && Base::boolean(v); }
  bool number_integer(number_integer_t v) {
    return Value() && Base::number_integer(v);
  }
  bool number_unsigned(number_unsigned_t v) {
    return Value() && Base::number_unsigned(v);
  }
  bool number_float(number_float_t v, const string_t& s) {
    return Value() && Base::number_float(v, s);
  }
  bool string(string_t& v) { return Value() && Base::string(v); }
  bool binary(binary_t& v) { return Value() && Base::binary(v); }

  bool start_object(std::size_t len) {
    return Value() && Open(/*is_object=*/true) && Base::start_object(len);
  }
  bool key(string_t& name) {
    Frame& frame = frames_.back();
    if (!frame.keys.insert(name).second) {
      error_ = absl::StrCat("duplicate key ", QuotedJsonString(name), " in ",
                            Path(/*include_innermost=*/false));
      return false;
    }
    frame.current_key = name;
    return Base::key(name);
  }
  bool end_object() {
    frames_.pop_back();
    return Base::end_object();
  }
  bool start_array(std::size_t len) {
    return Value() && Open(/*is_object=*/false) && Base::start_array(len);
  }
  bool end_array() {
    frames_.pop_back();
    return Base::end_array();
  }

  // `byte` is the number of bytes read, `last_token` the bytes of the token
  // the error is in (control bytes spelled <U+00XX>), ending at `byte`.
  template <class Exception>
  bool parse_error(std::size_t byte, const std::string& last_token,
                   const Exception& ex) {
    // what() is "[json.exception.parse_error.101] parse error at line 1,
    // column 5: ... last read: '<last_token>'; ..."; keep what follows the
    // bracketed id, and quote the token with QuoteExcerptEnd: nlohmann copies
    // all of it (it may be megabytes long, end inside a UTF-8 character or
    // hold invalid UTF-8).
    std::string what = ex.what();
    const std::size_t close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
    const std::string token = absl::StrCat("; last read: '", last_token, "'");
    const std::size_t at = what.find(token);
    if (at != std::string::npos) {
      what.replace(at, token.size(),
                   absl::StrCat("; last read: ",
                                QuoteExcerptEnd(RawToken(byte, last_token))));
    }
    if (what.rfind("parse error", 0) != 0) {
      what = absl::StrCat("at byte ", byte, ": ", what);
    }
    error_ = what;
    return false;
  }

 private:
  struct Frame {
    bool is_object = false;
    std::set<std::string> keys;  // objects: the keys seen so far
    std::string current_key;     // objects: the key of the value being read
    int64_t next_index = 0;      // arrays: index of the next element
    int64_t current_index = -1;  // arrays: index of the value being read
  };

  // Called at the start of every value: advances the enclosing array's index.
  bool Value() {
    if (!frames_.empty() && !frames_.back().is_object) {
      frames_.back().current_index = frames_.back().next_index++;
    }
    return true;
  }

  bool Open(bool is_object) {
    if (static_cast<int>(frames_.size()) >= kMaxJsonDepth) {
      error_ = absl::StrCat("nesting deeper than ", kMaxJsonDepth,
                            " levels at ", Path(/*include_innermost=*/true));
      return false;
    }
    frames_.emplace_back();
    frames_.back().is_object = is_object;
    return true;
  }

  // The path of the value being read; without the innermost container's
  // current member when `include_innermost` is false.
  std::string Path(bool include_innermost) const {
    std::string path;
    const size_t n = frames_.size() - (include_innermost ? 0 : 1);
    for (size_t i = 0; i < n; ++i) {
      const Frame& frame = frames_[i];
      if (frame.is_object) {
        if (frame.keys.empty()) continue;  // no member read yet
        path = MemberPath(path, frame.current_key);
      } else if (frame.current_index >= 0) {
        path = ElementPath(path, static_cast<size_t>(frame.current_index));
      }
    }
    return path.empty() ? "the top level" : path;
  }

  // The input bytes nlohmann's lexer printed as `last_token`: the token ends
  // where reading stopped (`byte`, one past the input at its end), and the
  // lexer wrote each control byte as "<U+00XX>". Falls back to `last_token`
  // if the two do not match.
  std::string RawToken(std::size_t byte, const std::string& last_token) const {
    size_t end = std::min(byte, text_.size());
    size_t printed = last_token.size();
    while (printed > 0 && end > 0) {
      const unsigned char c = static_cast<unsigned char>(text_[end - 1]);
      if (c <= 0x1F) {
        constexpr size_t kEscape = 8;  // <U+00XX>
        char escape[kEscape + 1];
        std::snprintf(escape, sizeof(escape), "<U+%.4X>", c);
        if (printed < kEscape ||
            last_token.compare(printed - kEscape, kEscape, escape) != 0) {
          return last_token;
        }
        printed -= kEscape;
      } else {
        if (last_token[printed - 1] != text_[end - 1]) return last_token;
        --printed;
      }
      --end;
    }
    if (printed != 0) return last_token;
    return text_.substr(end, std::min(byte, text_.size()) - end);
  }

  const std::string& text_;
  std::vector<Frame> frames_;
  std::string error_;
};

// `s` as a JSON string for a message: at most 40 bytes of it, cut between
// UTF-8 characters, with "..." before the closing quote when cut.
std::string QuotedJsonString(const std::string& s) {
  constexpr size_t kMaxBytes = 40;
  std::string quoted;
  const size_t keep = Utf8PrefixLength(s, kMaxBytes);
  AppendScalar(Json(s.substr(0, keep)), &quoted);
  if (keep < s.size()) quoted.insert(quoted.size() - 1, "...");
  return quoted;
}

bool IsScalar(const Json& value) {
  return !value.is_object() && !value.is_array();
}

void AppendScalar(const Json& value, std::string* out) {
  if (value.is_number_unsigned()) {
    absl::StrAppend(out, value.get<uint64_t>());
  } else if (value.is_number_integer()) {
    absl::StrAppend(out, value.get<int64_t>());
  } else if (value.is_number_float()) {
    const double d = value.get<double>();
    // JSON has no NaN or infinity; and "-0" would parse back as the integer
    // 0, so negative zero prints as 0 to keep the text a fixed point.
    if (!std::isfinite(d)) {
      out->append("null");
    } else {
      out->append(d == 0 ? "0" : FormatDouble(d));
    }
  } else {
    // null, booleans and strings: nlohmann's serializer is exact and escapes
    // strings as JSON requires.
    out->append(value.dump(-1, ' ', /*ensure_ascii=*/false,
                           Json::error_handler_t::replace));
  }
}

void AppendValue(const Json& value, int indent, int depth, std::string* out) {
  if (IsScalar(value)) {
    AppendScalar(value, out);
    return;
  }
  const bool is_object = value.is_object();
  const char open = is_object ? '{' : '[';
  const char close = is_object ? '}' : ']';
  if (value.empty()) {
    out->push_back(open);
    out->push_back(close);
    return;
  }
  const bool pretty = indent >= 0;
  bool inline_array = !is_object;
  if (!is_object) {
    for (const Json& element : value) inline_array &= IsScalar(element);
  }
  if (!pretty || inline_array) {
    const char* separator = pretty ? ", " : ",";
    out->push_back(open);
    bool first = true;
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!first) out->append(separator);
      first = false;
      if (is_object) {
        AppendScalar(Json(it.key()), out);
        out->push_back(':');
      }
      AppendValue(*it, indent, depth + 1, out);
    }
    out->push_back(close);
    return;
  }
  const std::string inner(static_cast<size_t>(indent) * (depth + 1), ' ');
  out->push_back(open);
  bool first = true;
  for (auto it = value.begin(); it != value.end(); ++it) {
    out->append(first ? "\n" : ",\n");
    first = false;
    out->append(inner);
    if (is_object) {
      AppendScalar(Json(it.key()), out);
      out->append(": ");
    }
    AppendValue(*it, indent, depth + 1, out);
  }
  out->push_back('\n');
  out->append(static_cast<size_t>(indent) * depth, ' ');
  out->push_back(close);
}

}  // namespace

absl::StatusOr<nlohmann::json> ParseJson(const std::string& text) {
  Json result;
  StrictDomBuilder builder(text, &result);
  const bool ok = Json::sax_parse(text, &builder, Json::input_format_t::json,
                                  /*strict=*/true, /*ignore_comments=*/false);
  if (!ok) {
    return InvalidInputError(
        {{"", absl::StrCat("malformed JSON: ", builder.error()),
          ErrorCode::kSyntax}});
  }
  return result;
}

std::string CanonicalJson(const nlohmann::json& value, int indent) {
  std::string out;
  AppendValue(value, indent, 0, &out);
  return out;
}

std::string MemberPath(const std::string& parent, const std::string& key) {
  const bool plain =
      !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               (c >= '0' && c <= '9') || c == '_';
      });
  if (plain) return parent.empty() ? key : absl::StrCat(parent, ".", key);
  std::string quoted;
  AppendScalar(Json(key), &quoted);
  return absl::StrCat(parent, "[", quoted, "]");
}

std::string ElementPath(const std::string& parent, size_t index) {
  return absl::StrCat(parent, "[", index, "]");
}

const char* JsonTypeName(const nlohmann::json& value) {
  switch (value.type()) {
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a number";
    case Json::value_t::binary:
      return "binary data";
    case Json::value_t::null:
    case Json::value_t::discarded:
      return "null";
  }
  return "null";
}

std::string JsonSnippet(const nlohmann::json& value) {
  if (!IsScalar(value)) return JsonTypeName(value);
  if (value.is_string()) {
    return absl::StrCat(
        "string ", QuotedJsonString(value.get_ref<const std::string&>()));
  }
  std::string text;
  AppendScalar(value, &text);
  return text;
}

}  // namespace blueprint
