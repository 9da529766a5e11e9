#include "core/base/quote.h"

#include <string>

#include "gtest/gtest.h"

namespace blueprint {
namespace {

// True when every byte is printable ASCII or part of a valid UTF-8 sequence.
bool IsPrintableUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    if (n == 1 && (s[i] < 0x20 || s[i] == 0x7F)) return false;
    i += n;
  }
  return true;
}

TEST(QuoteExcerpt, PlainTextIsQuoted) {
  EXPECT_EQ(QuoteExcerpt("64"), "\"64\"");
  EXPECT_EQ(QuoteExcerpt(""), "\"\"");
  EXPECT_EQ(QuoteExcerpt("a \"b\" \\c"), "\"a \\\"b\\\" \\\\c\"");
}

TEST(QuoteExcerpt, ControlBytesAreEscaped) {
  EXPECT_EQ(QuoteExcerpt(std::string("\x00\n\t\x1F\x7F", 5)),
            "\"\\x00\\x0A\\x09\\x1F\\x7F\"");
}

TEST(QuoteExcerpt, ValidUtf8IsKept) {
  EXPECT_EQ(QuoteExcerpt("gr\xC3\xBC\xC3\x9F"), "\"gr\xC3\xBC\xC3\x9F\"");
  EXPECT_EQ(QuoteExcerpt("\xE2\x82\xAC\xF0\x9F\x98\x80"),
            "\"\xE2\x82\xAC\xF0\x9F\x98\x80\"");
}

TEST(QuoteExcerpt, InvisibleCharactersAreEscaped) {
  // A BOM, a right-to-left override, a C1 control (NEL), a line separator.
  EXPECT_EQ(QuoteExcerpt("\xEF\xBB\xBF{"), "\"\\xEF\\xBB\\xBF{\"");
  EXPECT_EQ(QuoteExcerpt("a\xE2\x80\xAE"
                         "b"),
            "\"a\\xE2\\x80\\xAEb\"");
  EXPECT_EQ(QuoteExcerpt("\xC2\x85"), "\"\\xC2\\x85\"");
  EXPECT_EQ(QuoteExcerpt("\xE2\x80\xA8"), "\"\\xE2\\x80\\xA8\"");
}

TEST(QuoteExcerpt, InvalidUtf8IsEscapedBytewise) {
  EXPECT_EQ(QuoteExcerpt("\xFF\xFE"), "\"\\xFF\\xFE\"");
  EXPECT_EQ(QuoteExcerpt("a\x80z"), "\"a\\x80z\"");       // stray
  EXPECT_EQ(QuoteExcerpt("\xC0\xAF"), "\"\\xC0\\xAF\"");  // overlong
  EXPECT_EQ(QuoteExcerpt("\xE0\x80\xAF"), "\"\\xE0\\x80\\xAF\"");
  EXPECT_EQ(QuoteExcerpt("\xED\xA0\x80"), "\"\\xED\\xA0\\x80\"");  // surrogate
  EXPECT_EQ(QuoteExcerpt("\xF4\x90\x80\x80"),
            "\"\\xF4\\x90\\x80\\x80\"");                    // > U+10FFFF
  EXPECT_EQ(QuoteExcerpt("\xE2\x82x"), "\"\\xE2\\x82x\"");  // truncated
  EXPECT_EQ(QuoteExcerpt("\xEF"), "\"\\xEF\"");             // BOM's 1st byte
}

TEST(QuoteExcerpt, LongTextIsCut) {
  const std::string long_line(1000, 'a');
  EXPECT_EQ(QuoteExcerpt(long_line),
            "\"" + std::string(kMaxExcerptBytes, 'a') + "\"...");
  EXPECT_EQ(QuoteExcerpt(std::string(kMaxExcerptBytes, 'b')),
            "\"" + std::string(kMaxExcerptBytes, 'b') + "\"");
}

TEST(QuoteExcerpt, NeverCutsInsideACharacter) {
  // 30 ASCII bytes, then a 4-byte character straddling the 32-byte limit.
  const std::string text = std::string(30, 'x') + "\xF0\x9F\x98\x80" + "tail";
  EXPECT_EQ(QuoteExcerpt(text), "\"" + std::string(30, 'x') + "\"...");
  // Exactly at the limit it fits.
  const std::string fits = std::string(28, 'x') + "\xF0\x9F\x98\x80" + "tail";
  EXPECT_EQ(QuoteExcerpt(fits),
            "\"" + std::string(28, 'x') + "\xF0\x9F\x98\x80\"...");
  // A stray byte is one character of its own.
  EXPECT_EQ(QuoteExcerpt(std::string(31, 'x') + "\xFF\xFF"),
            "\"" + std::string(31, 'x') + "\\xFF\"...");
}

TEST(QuoteExcerptEnd, KeepsTheEnd) {
  EXPECT_EQ(QuoteExcerptEnd("short"), "\"short\"");
  const std::string text = std::string(100, 'a') + "END";
  EXPECT_EQ(QuoteExcerptEnd(text),
            "...\"" + std::string(kMaxExcerptBytes - 3, 'a') + "END\"");
  // The 32-byte window starts in the middle of a 4-byte character: skip it.
  const std::string cut = "\xF0\x9F\x98\x80" + std::string(30, 'y');
  EXPECT_EQ(QuoteExcerptEnd(cut), "...\"" + std::string(30, 'y') + "\"");
  // Stray continuation bytes are characters of their own: nothing skipped.
  const std::string stray = std::string(10, '\x80') + std::string(30, 'y');
  EXPECT_EQ(QuoteExcerptEnd(stray),
            "...\"\\x80\\x80" + std::string(30, 'y') + "\"");
}

TEST(QuoteExcerpt, OutputIsAlwaysPrintableUtf8) {
  // Every 1- and 2-byte input, and 33-byte windows over a mixed text.
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const std::string s = {static_cast<char>(a), static_cast<char>(b)};
      ASSERT_TRUE(IsPrintableUtf8(QuoteExcerpt(s))) << a << " " << b;
      ASSERT_TRUE(IsPrintableUtf8(QuoteExcerpt(s, 1))) << a << " " << b;
      ASSERT_TRUE(IsPrintableUtf8(QuoteExcerptEnd(s, 1))) << a << " " << b;
    }
  }
  const std::string mixed =
      "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xFF\x80\xEF\xBB\xBF\n\"\\";
  for (size_t begin = 0; begin < mixed.size(); ++begin) {
    for (size_t max = 0; max <= mixed.size(); ++max) {
      const std::string part = mixed.substr(begin);
      const std::string head = QuoteExcerpt(part, max);
      const std::string tail = QuoteExcerptEnd(part, max);
      ASSERT_TRUE(IsPrintableUtf8(head)) << begin << " " << max;
      ASSERT_TRUE(IsPrintableUtf8(tail)) << begin << " " << max;
      ASSERT_LE(head.size(), 4 * max + 5);
      ASSERT_LE(tail.size(), 4 * max + 5);
    }
  }
}

TEST(Utf8PrefixLength, CutsAtCharacterBoundaries) {
  EXPECT_EQ(Utf8PrefixLength("abc", 10), 3u);
  EXPECT_EQ(Utf8PrefixLength("ab\xE2\x82\xAC", 4), 2u);
  EXPECT_EQ(Utf8PrefixLength("ab\xE2\x82\xAC", 5), 5u);
  EXPECT_EQ(Utf8PrefixLength("ab\xFF\xFF", 3), 3u);
}

}  // namespace
}  // namespace blueprint
