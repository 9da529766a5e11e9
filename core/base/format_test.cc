#include "core/base/format.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace blueprint {
namespace {

TEST(FormatDouble, IntegralValuesPrintWithoutFraction) {
  EXPECT_EQ(FormatDouble(0.0), "0");
  EXPECT_EQ(FormatDouble(-0.0), "-0");
  EXPECT_EQ(FormatDouble(12.0), "12");
  EXPECT_EQ(FormatDouble(-3.0), "-3");
  EXPECT_EQ(FormatDouble(312.0), "312");
  EXPECT_EQ(FormatDouble(9007199254740991.0), "9007199254740991");
}

TEST(FormatDouble, ShortestRoundTrip) {
  EXPECT_EQ(FormatDouble(0.1), "0.1");
  EXPECT_EQ(FormatDouble(0.65), "0.65");
  EXPECT_EQ(FormatDouble(1e-05), "1e-05");
  EXPECT_EQ(FormatDouble(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatDouble(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(FormatDouble(80e9), "80000000000");
  EXPECT_EQ(FormatDouble(1e300), "1e+300");
}

TEST(FormatDouble, EveryOutputParsesBackExactly) {
  const double values[] = {0.95,
                           2.5e-16,
                           123456789.123456789,
                           std::numeric_limits<double>::min(),
                           std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::max(),
                           -7.25e-3};
  for (double value : values) {
    EXPECT_EQ(std::strtod(FormatDouble(value).c_str(), nullptr), value)
        << FormatDouble(value);
  }
}

TEST(FormatDouble, NonFinite) {
  EXPECT_EQ(FormatDouble(std::nan("")), "nan");
  EXPECT_EQ(FormatDouble(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatDouble(-std::numeric_limits<double>::infinity()), "-inf");
}

// The binary search over precisions gives the same text as trying every
// precision from 1 up, on doubles of every magnitude.
TEST(FormatDouble, EqualsTheLinearSearch) {
  auto linear = [](double value) {
    char buf[40];
    for (int precision = 1; precision <= 17; ++precision) {
      std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
      if (std::strtod(buf, nullptr) == value) break;
    }
    return std::string(buf);
  };
  uint64_t state = 12345;
  for (int i = 0; i < 20000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t bits = state;
    double value;
    std::memcpy(&value, &bits, sizeof(value));
    if (!std::isfinite(value)) continue;
    if (std::fabs(value) < 9007199254740992.0 && value == std::trunc(value)) {
      continue;  // the integral fast path
    }
    ASSERT_EQ(FormatDouble(value), linear(value)) << i;
    const double ratio = static_cast<double>(i + 1) / 7.0;  // short decimals
    if (ratio != std::trunc(ratio)) {
      ASSERT_EQ(FormatDouble(ratio), linear(ratio)) << ratio;
    }
  }
}

}  // namespace
}  // namespace blueprint
