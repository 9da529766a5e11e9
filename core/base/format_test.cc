#include "core/base/format.h"

#include <cmath>
#include <cstdlib>
#include <limits>

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

}  // namespace
}  // namespace blueprint
