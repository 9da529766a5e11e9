#include "core/base/quote.h"

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace blueprint {
namespace {

bool IsContinuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// The code point of the valid sequence text[pos, pos + length).
uint32_t Decode(absl::string_view text, size_t pos, size_t length) {
  const auto byte = [&](size_t i) {
    return static_cast<uint32_t>(static_cast<unsigned char>(text[pos + i]));
  };
  switch (length) {
    case 1:
      return byte(0);
    case 2:
      return ((byte(0) & 0x1F) << 6) | (byte(1) & 0x3F);
    case 3:
      return ((byte(0) & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) |
             (byte(2) & 0x3F);
    default:
      return ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3F) << 12) |
             ((byte(2) & 0x3F) << 6) | (byte(3) & 0x3F);
  }
}

// Code points that print as nothing, move the cursor or reorder text.
bool IsInvisible(uint32_t c) {
  return (c >= 0x80 && c <= 0x9F) || c == 0xAD || c == 0x61C || c == 0x180E ||
         (c >= 0x200B && c <= 0x200F) || (c >= 0x2028 && c <= 0x202E) ||
         (c >= 0x2060 && c <= 0x206F) || c == 0xFEFF ||
         (c >= 0xFFF9 && c <= 0xFFFB);
}

// The length of the character (a valid sequence, or one stray byte) at pos.
size_t UnitLength(absl::string_view text, size_t pos) {
  const size_t length = Utf8SequenceLength(text, pos);
  return length == 0 ? 1 : length;
}

// Whether a character starts at `pos` (0 < pos < size), i.e. pos is not
// inside a valid multi-byte sequence. Only a lead byte at most 3 bytes back
// can start a sequence covering pos, and a non-continuation byte always
// starts a character.
bool IsBoundary(absl::string_view text, size_t pos) {
  if (pos == 0 || pos >= text.size()) return true;
  if (!IsContinuation(static_cast<unsigned char>(text[pos]))) return true;
  for (size_t back = 1; back <= 3 && back <= pos; ++back) {
    const size_t k = pos - back;
    if (!IsContinuation(static_cast<unsigned char>(text[k]))) {
      return Utf8SequenceLength(text, k) <= back;
    }
  }
  return true;
}

void AppendHexByte(unsigned char b, std::string* out) {
  static const char kHex[] = "0123456789ABCDEF";
  out->append("\\x");
  out->push_back(kHex[b >> 4]);
  out->push_back(kHex[b & 0xF]);
}

// Appends text[begin, end) escaped (see QuoteExcerpt); [begin, end) holds
// whole characters.
void AppendEscaped(absl::string_view text, size_t begin, size_t end,
                   std::string* out) {
  size_t pos = begin;
  while (pos < end) {
    const unsigned char b = static_cast<unsigned char>(text[pos]);
    const size_t length = Utf8SequenceLength(text, pos);
    if (length == 0) {  // a byte of no valid sequence
      AppendHexByte(b, out);
      ++pos;
    } else if (length == 1) {
      if (b == '"' || b == '\\') {
        out->push_back('\\');
        out->push_back(static_cast<char>(b));
      } else if (b < 0x20 || b == 0x7F) {
        AppendHexByte(b, out);
      } else {
        out->push_back(static_cast<char>(b));
      }
      ++pos;
    } else {
      if (IsInvisible(Decode(text, pos, length))) {
        for (size_t i = 0; i < length; ++i) {
          AppendHexByte(static_cast<unsigned char>(text[pos + i]), out);
        }
      } else {
        out->append(text.data() + pos, length);
      }
      pos += length;
    }
  }
}

}  // namespace

size_t Utf8SequenceLength(absl::string_view text, size_t pos) {
  if (pos >= text.size()) return 0;
  const auto at = [&](size_t i) {
    return static_cast<unsigned char>(text[pos + i]);
  };
  const unsigned char b0 = at(0);
  if (b0 < 0x80) return 1;
  size_t length = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;  // continuation byte, C0/C1 (overlong), F5..FF
  }
  if (text.size() - pos < length) return 0;
  if (at(1) < lo || at(1) > hi) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (!IsContinuation(at(i))) return 0;
  }
  return length;
}

size_t Utf8PrefixLength(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text.size();
  size_t end = max_bytes;
  while (end > 0 && !IsBoundary(text, end)) --end;
  return end;
}

std::string QuoteExcerpt(absl::string_view text, size_t max_bytes) {
  size_t end = 0;
  while (end < text.size()) {
    const size_t length = UnitLength(text, end);
    if (end + length > max_bytes) break;
    end += length;
  }
  std::string out = "\"";
  AppendEscaped(text, 0, end, &out);
  out.push_back('"');
  if (end < text.size()) out.append("...");
  return out;
}

std::string QuoteExcerptEnd(absl::string_view text, size_t max_bytes) {
  size_t begin = text.size() > max_bytes ? text.size() - max_bytes : 0;
  while (!IsBoundary(text, begin)) ++begin;
  std::string out = begin > 0 ? "...\"" : "\"";
  AppendEscaped(text, begin, text.size(), &out);
  out.push_back('"');
  return out;
}

}  // namespace blueprint
