// The one strict parser for integer flag values (Megatron-LM flags, search
// flags), so that every flag accepts exactly the same spellings.
//
// Example:
//   ParsePositiveInteger("64")   // 64
//   ParsePositiveInteger("064")  // nullopt: leading zero
//   ParsePositiveInteger(" 64")  // nullopt: whitespace
//   ParsePositiveInteger("+64")  // nullopt: sign
//   ParsePositiveInteger("0")    // nullopt: not positive
#ifndef BLUEPRINTING_CORE_BASE_PARSE_INT_H_
#define BLUEPRINTING_CORE_BASE_PARSE_INT_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "core/base/field_errors.h"

namespace blueprint {

// ParsePositiveInteger: the value of `text` when it is a positive decimal
// integer written canonically: one or more ASCII digits, the first not '0',
// nothing else (no sign, no whitespace, no separators), at most INT64_MAX.
// Otherwise nullopt.
std::optional<int64_t> ParsePositiveInteger(absl::string_view text);

// The ErrorCode of a value ParsePositiveInteger refused: kOutOfRange for an
// integer in plain decimal, optionally negative, that is not positive or is
// beyond INT64_MAX ("0", "-3", "99999999999999999999"); kWrongType for
// anything else ("abc", "8.5", "+8", "064", " 1", "").
ErrorCode PositiveIntegerErrorCode(absl::string_view text);

// How ParsePositiveInteger wants a value written, for error messages.
inline constexpr char kPositiveIntegerSpelling[] =
    "digits only, no sign, spaces or leading zeros";

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_BASE_PARSE_INT_H_
