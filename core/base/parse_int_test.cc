#include "core/base/parse_int.h"

#include <cstdint>
#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace blueprint {
namespace {

TEST(ParsePositiveInteger, AcceptsCanonicalPositiveIntegers) {
  EXPECT_EQ(ParsePositiveInteger("1"), 1);
  EXPECT_EQ(ParsePositiveInteger("64"), 64);
  EXPECT_EQ(ParsePositiveInteger("9223372036854775807"),
            INT64_C(9223372036854775807));
}

TEST(ParsePositiveInteger, RejectsEverythingElse) {
  for (const std::string text : {"", "0", "00", "064", " 64", "64 ", "+64",
                                 "-64", "6 4", "6_4", "1e3", "0x40", "64.0",
                                 "\xEF\xBB\xBF"
                                 "64",
                                 "\xD9\xA4",  // Arabic-Indic 4
                                 "9223372036854775808", "99999999999999999999",
                                 "18446744073709551617"}) {
    EXPECT_EQ(ParsePositiveInteger(text), std::nullopt) << text;
  }
  EXPECT_EQ(ParsePositiveInteger(std::string("6\0"
                                             "4",
                                             3)),
            std::nullopt);
}

TEST(PositiveIntegerErrorCode, OutOfRangeOnlyForPlainIntegers) {
  for (const std::string text :
       {"0", "-0", "-64", "9223372036854775808", "99999999999999999999"}) {
    EXPECT_EQ(PositiveIntegerErrorCode(text), ErrorCode::kOutOfRange) << text;
  }
  for (const std::string text :
       {"", "-", "00", "064", "-064", " 64", "+64", "1e3", "64.0", "abc"}) {
    EXPECT_EQ(PositiveIntegerErrorCode(text), ErrorCode::kWrongType) << text;
  }
}

}  // namespace
}  // namespace blueprint
