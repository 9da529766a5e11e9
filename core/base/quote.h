// Quoting untrusted input in error messages.
//
// An error message that quotes input (a JSON token, a flag value) must stay
// short, one line, printable, and valid UTF-8, so that the CLI prints exactly
// the bytes the wasm module returns as a JS string (embind decodes invalid
// UTF-8 to U+FFFD, a terminal prints it raw). QuoteExcerpt is the one helper
// for that: it keeps at most `max_bytes` bytes of the input, cuts only between
// characters, and escapes everything that is not plainly visible text.
//
// Example:
//   QuoteExcerpt("64")                  // "\"64\""
//   QuoteExcerpt(" +64\n")              // "\" +64\\x0A\""
//   QuoteExcerpt("\xEF\xBB\xBF{")       // "\"\\xEF\\xBB\\xBF{\""
//   QuoteExcerpt(std::string(100, 'a')) // "\"aaa...a\"..." (32 a's)
//   QuoteExcerptEnd("...long token")    // "...\"<the last 32 bytes>\""
#ifndef BLUEPRINTING_CORE_BASE_QUOTE_H_
#define BLUEPRINTING_CORE_BASE_QUOTE_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace blueprint {

// The longest piece of input an error message quotes, in bytes.
inline constexpr size_t kMaxExcerptBytes = 32;

// QuoteExcerpt: the start of `text` in double quotes. At most `max_bytes`
// bytes of input are quoted; when `text` is longer it is cut before the first
// character that would not fit (never inside a UTF-8 sequence) and "..."
// follows the closing quote. Inside the quotes:
//   * printable ASCII stands for itself, except '"' -> \" and '\' -> \\;
//   * a valid UTF-8 sequence stands for itself, unless it encodes an
//     invisible or line-breaking code point (C1 controls U+0080..U+009F,
//     U+00AD, U+061C, U+180E, U+200B..U+200F, U+2028..U+202E,
//     U+2060..U+206F, U+FEFF, U+FFF9..U+FFFB), whose bytes are escaped;
//   * every other byte (controls 0x00..0x1F and 0x7F, bytes of no valid UTF-8
//     sequence: stray continuation bytes, truncated or overlong sequences,
//     surrogates, > U+10FFFF) is written \xNN (uppercase hex).
// The result is printable ASCII plus visible UTF-8 characters, never longer
// than 4 * max_bytes + 5 bytes, and the same on every platform.
std::string QuoteExcerpt(absl::string_view text,
                         size_t max_bytes = kMaxExcerptBytes);

// QuoteExcerptEnd: the same, but keeps the end of `text` (for the token an
// error was found in, whose last byte is where the error is); "..." precedes
// the opening quote when the start was cut.
std::string QuoteExcerptEnd(absl::string_view text,
                            size_t max_bytes = kMaxExcerptBytes);

// Utf8SequenceLength: the length (1..4) of the valid UTF-8 sequence that
// starts at text[pos], or 0 when the byte there starts none (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF).
size_t Utf8SequenceLength(absl::string_view text, size_t pos);

// Utf8PrefixLength: the length of the longest prefix of `text` of at most
// `max_bytes` bytes that does not end inside a valid UTF-8 sequence.
size_t Utf8PrefixLength(absl::string_view text, size_t max_bytes);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_BASE_QUOTE_H_
