#include "core/pmath/pmath.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace {

// Path of testdata/golden.txt, passed as the first argument by BUILD.bazel (the
// wasm build reads it through node's file system, at the same relative path).
std::string golden_path;  // NOLINT: set once in main().

uint64_t Bits(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

double FromBits(uint64_t u) {
  double v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

TEST(PmathTest, ExactResults) {
  EXPECT_EQ(pm_exp(0.0), 1.0);
  EXPECT_EQ(pm_log(1.0), 0.0);
  EXPECT_EQ(pm_pow(2.0, 10.0), 1024.0);
  EXPECT_EQ(pm_pow(10.0, -1.0), 0.1);
  EXPECT_EQ(pm_cbrt(27.0), 3.0);
  EXPECT_EQ(pm_hypot(3.0, 4.0), 5.0);
  EXPECT_EQ(pm_floor(-1.5), -2.0);
  EXPECT_EQ(pm_ceil(-1.5), -1.0);
  EXPECT_EQ(pm_trunc(-1.5), -1.0);
  EXPECT_EQ(pm_round(2.5), 3.0);
  EXPECT_EQ(pm_fmod(7.0, 3.0), 1.0);
  EXPECT_EQ(pm_scalbn(1.0, 10), 1024.0);
}

TEST(PmathTest, CorrectlyRoundedConstants) {
  EXPECT_EQ(Bits(pm_exp(1.0)), 0x4005bf0a8b145769u);         // e
  EXPECT_EQ(Bits(pm_log(2.0)), 0x3fe62e42fefa39efu);         // ln 2
  EXPECT_EQ(Bits(4.0 * pm_atan(1.0)), 0x400921fb54442d18u);  // pi
}

// Each line of the golden file: "<function> <x bits> <f(x) bits>" (hex), as
// computed by this libm; native and wasm must both reproduce every bit.
TEST(PmathTest, GoldenTable) {
  const std::map<std::string, double (*)(double)> functions = {
      {"acos", pm_acos}, {"asin", pm_asin},   {"atan", pm_atan},
      {"cbrt", pm_cbrt}, {"cos", pm_cos},     {"cosh", pm_cosh},
      {"erf", pm_erf},   {"erfc", pm_erfc},   {"exp", pm_exp},
      {"exp2", pm_exp2}, {"expm1", pm_expm1}, {"log", pm_log},
      {"log10", pm_log10}, {"log1p", pm_log1p}, {"log2", pm_log2},
      {"sin", pm_sin},   {"sinh", pm_sinh},   {"tan", pm_tan},
      {"tanh", pm_tanh},
  };
  std::ifstream in(golden_path);
  ASSERT_TRUE(in) << "cannot open " << golden_path;
  int checked = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
    ASSERT_EQ(f.size(), 3u) << line;
    auto it = functions.find(std::string(f[0]));
    ASSERT_NE(it, functions.end()) << line;
    const double x = FromBits(std::strtoull(std::string(f[1]).c_str(), nullptr, 16));
    EXPECT_EQ(absl::StrFormat("%016x", Bits(it->second(x))), f[2]) << line;
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s GOLDEN_FILE\n", argv[0]);
    return 2;
  }
  golden_path = argv[1];
  return RUN_ALL_TESTS();
}
