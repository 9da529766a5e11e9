#include "core/adapters/layer_pattern.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/base/quote.h"

namespace blueprint {
namespace {

constexpr absl::string_view kAllowed = ",0123456789[]()+*";

// The most elements all the repetitions of one expression may copy.
constexpr int64_t kMaxBuilt = 16 * kMaxLayerPattern;

// A value of the expression: an integer or a list of 0s and 1s (as '0'/'1').
struct Value {
  bool is_list = false;
  int64_t integer = 0;
  std::string list;
};

const char* KindOf(const Value& v) {
  return v.is_list ? "a list" : "an integer";
}

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<std::string> Parse() {
    for (size_t i = 0; i < text_.size(); ++i) {
      if (kAllowed.find(text_[i]) == absl::string_view::npos) {
        const size_t length = std::max<size_t>(Utf8SequenceLength(text_, i), 1);
        return Fail(i, absl::StrCat(QuoteExcerpt(text_.substr(i, length)),
                                    " is not allowed: Megatron-LM's patterns "
                                    "hold only digits and , [ ] ( ) + *"));
      }
    }
    if (text_.empty()) return Error("the expression is empty");
    absl::StatusOr<Value> value = Sum();
    if (!value.ok()) return value.status();
    if (pos_ < text_.size()) {
      return Fail(pos_, absl::StrCat("unexpected ", Here()));
    }
    if (!value->is_list) {
      return Error("the expression is an integer, not a list");
    }
    return std::move(value->list);
  }

 private:
  static absl::Status Error(absl::string_view message) {
    return absl::InvalidArgumentError(message);
  }
  static absl::Status Fail(size_t pos, absl::string_view message) {
    return Error(absl::StrCat("at character ", pos + 1, ": ", message));
  }
  // The character at pos_ as a message quotes it, or "the end".
  std::string Here() const {
    return pos_ < text_.size() ? absl::StrCat("'", text_.substr(pos_, 1), "'")
                               : std::string("end of the expression");
  }
  bool Next(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  absl::Status Expected(absl::string_view what) const {
    return Fail(pos_, absl::StrCat("expected ", what, ", got ", Here()));
  }
  static absl::Status TooLong(size_t pos) {
    return Fail(pos, absl::StrCat("the list would be longer than ",
                                  kMaxLayerPattern, " elements"));
  }

  // sum := product ('+' product)*
  absl::StatusOr<Value> Sum() {
    absl::StatusOr<Value> left = Product();
    while (left.ok()) {
      const size_t at = pos_;
      if (!Next('+')) break;
      absl::StatusOr<Value> right = Product();
      if (!right.ok()) return right;
      if (left->is_list != right->is_list) {
        return Fail(at, absl::StrCat("cannot add ", KindOf(*left), " and ",
                                     KindOf(*right)));
      }
      if (left->is_list) {
        if (left->list.size() + right->list.size() >
            static_cast<size_t>(kMaxLayerPattern)) {
          return TooLong(at);
        }
        left->list += right->list;
      } else {
        left->integer += right->integer;  // both <= kMaxLayerPattern
        if (left->integer > kMaxLayerPattern) return TooBig(at);
      }
    }
    return left;
  }

  // product := atom ('*' atom)*
  absl::StatusOr<Value> Product() {
    absl::StatusOr<Value> left = Atom();
    while (left.ok()) {
      const size_t at = pos_;
      if (!Next('*')) break;
      absl::StatusOr<Value> right = Atom();
      if (!right.ok()) return right;
      if (left->is_list && right->is_list) {
        return Fail(at, "cannot multiply a list by a list");
      }
      if (!left->is_list && !right->is_list) {
        if (left->integer != 0 &&
            right->integer > kMaxLayerPattern / left->integer) {
          return TooBig(at);
        }
        left->integer *= right->integer;
        continue;
      }
      Value& list = left->is_list ? *left : *right;
      const int64_t times = left->is_list ? right->integer : left->integer;
      if (!list.list.empty() &&
          times > kMaxLayerPattern / static_cast<int64_t>(list.list.size())) {
        return TooLong(at);
      }
      // Every repetition copies; bound what they copy in all, so that a
      // long chain of them ("[0]*1048576*1*1*...") stays cheap.
      built_ += static_cast<int64_t>(list.list.size()) * times;
      if (built_ > kMaxBuilt) {
        return Fail(at, absl::StrCat("the expression builds more than ",
                                     kMaxBuilt, " elements in all"));
      }
      std::string repeated;
      repeated.reserve(list.list.size() * static_cast<size_t>(times));
      for (int64_t i = 0; i < times && !list.list.empty(); ++i) {
        repeated += list.list;
      }
      Value result;
      result.is_list = true;
      result.list = std::move(repeated);
      *left = std::move(result);
    }
    return left;
  }

  // atom := digits | '[' [digits (',' digits)* [',']] ']' | '(' sum ')'
  absl::StatusOr<Value> Atom() {
    const size_t at = pos_;
    if (Next('(')) {
      if (++depth_ > kMaxLayerPatternDepth) return TooDeep(at);
      absl::StatusOr<Value> inner = Sum();
      --depth_;
      if (!inner.ok()) return inner;
      if (!Next(')')) return Expected("')' or an operator");
      return inner;
    }
    if (Next('[')) {
      Value list;
      list.is_list = true;
      while (!Next(']')) {
        const size_t element_at = pos_;
        if (pos_ < text_.size() && text_[pos_] == '[') {
          return Fail(pos_, "a list inside a list is not a pattern");
        }
        if (!AtDigit()) return Expected("0, 1 or ']'");
        absl::StatusOr<int64_t> element = Integer();
        if (!element.ok()) return element.status();
        if (*element > 1) {
          return Fail(element_at,
                      absl::StrCat("a pattern holds 0 (dense) or 1 (MoE), "
                                   "not ",
                                   *element));
        }
        if (list.list.size() >= static_cast<size_t>(kMaxLayerPattern)) {
          return TooLong(element_at);
        }
        list.list.push_back(*element == 1 ? '1' : '0');
        if (!Next(',')) {
          if (!Next(']')) return Expected("',' or ']'");
          break;
        }
      }
      return list;
    }
    if (!AtDigit()) return Expected("an integer, '[' or '('");
    absl::StatusOr<int64_t> number = Integer();
    if (!number.ok()) return number.status();
    Value value;
    value.integer = *number;
    return value;
  }

  bool AtDigit() const {
    return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9';
  }

  // digits (at least one: AtDigit()), as Python reads an integer literal
  // (no leading zeros but 0).
  absl::StatusOr<int64_t> Integer() {
    const size_t start = pos_;
    int64_t value = 0;
    while (AtDigit()) {
      value = value * 10 + (text_[pos_] - '0');
      if (value > kMaxLayerPattern) return TooBig(start);
      ++pos_;
    }
    if (pos_ - start > 1 && text_[start] == '0') {
      return Fail(start, "an integer with a leading zero is not Python");
    }
    return value;
  }

  static absl::Status TooBig(size_t pos) {
    return Fail(pos, absl::StrCat("an integer above ", kMaxLayerPattern,
                                  " is not a pattern's"));
  }
  static absl::Status TooDeep(size_t pos) {
    return Fail(pos, absl::StrCat("nested deeper than ", kMaxLayerPatternDepth,
                                  " levels"));
  }

  absl::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  int64_t built_ = 0;  // elements the repetitions have copied so far
};

// The runs of `pattern`: "[0]*3+[1]*58", "[0]+[1]".
std::string Runs(absl::string_view pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size();) {
    size_t end = i;
    while (end < pattern.size() && pattern[end] == pattern[i]) ++end;
    if (!out.empty()) out += "+";
    absl::StrAppend(&out, "[", pattern.substr(i, 1), "]");
    if (end - i > 1) absl::StrAppend(&out, "*", end - i);
    i = end;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> ParseLayerPattern(absl::string_view text) {
  return Parser(text).Parse();
}

std::string LayerPatternExpression(absl::string_view pattern) {
  const size_t n = pattern.size();
  // The shortest period that repeats at least twice, if any.
  for (size_t period = 1; period <= n / 2; ++period) {
    if (n % period != 0) continue;
    bool repeats = true;
    for (size_t i = period; i < n && repeats; ++i) {
      repeats = pattern[i] == pattern[i - period];
    }
    if (!repeats) continue;
    const std::string runs = Runs(pattern.substr(0, period));
    // A period of one run is a single run: "[1]*24".
    if (runs.find('+') == std::string::npos) break;
    return absl::StrCat("(", runs, ")*", n / period);
  }
  return absl::StrCat("(", Runs(pattern), ")");
}

}  // namespace blueprint
