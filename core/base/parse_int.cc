#include "core/base/parse_int.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "absl/strings/string_view.h"

namespace blueprint {

std::optional<int64_t> ParsePositiveInteger(absl::string_view text) {
  if (text.empty() || text[0] == '0') return std::nullopt;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const int64_t digit = c - '0';
    if (value > (kMax - digit) / 10) return std::nullopt;  // would overflow
    value = value * 10 + digit;
  }
  return value;
}

ErrorCode PositiveIntegerErrorCode(absl::string_view text) {
  absl::string_view digits = text;
  if (!digits.empty() && digits[0] == '-') digits.remove_prefix(1);
  const bool plain = !digits.empty() && (digits == "0" || digits[0] != '0') &&
                     std::all_of(digits.begin(), digits.end(),
                                 [](char c) { return c >= '0' && c <= '9'; });
  return plain ? ErrorCode::kOutOfRange : ErrorCode::kWrongType;
}

}  // namespace blueprint
