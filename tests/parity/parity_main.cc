// Prints a deterministic report of floating-point results that must be
// bit-identical between the native and the wasm build: division chains,
// sqrt, a*b+c (no FMA contraction) and every //core/pmath function over a sweep
// of inputs. parity_test.sh runs both builds and compares the outputs byte for
// byte; any difference means the two targets would compute different reports.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/pmath/pmath.h"

namespace {

// %.17g round-trips every double; std::to_chars(double) is missing from
// emscripten 3.1.6's libc++.
std::string Fmt(double v) { return absl::StrFormat("%.17g", v); }

uint64_t Bits(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

// FNV-1a over the bytes of each result: summarizes sweeps too long to print.
class Digest {
 public:
  void Add(double v) {
    const uint64_t bits = Bits(v);
    for (int b = 0; b < 8; ++b) {
      h_ ^= (bits >> (8 * b)) & 0xff;
      h_ *= 1099511628211ULL;
    }
  }
  std::string Hex() const { return absl::StrFormat("%016x", h_); }

 private:
  uint64_t h_ = 1469598103934665603ULL;
};

// Deterministic inputs in [lo, hi): an LCG, independent of the platform's rand().
class Sweep {
 public:
  Sweep(double lo, double hi, uint64_t seed = 12345)
      : lo_(lo), hi_(hi), state_(seed) {}
  double Next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    const double u = static_cast<double>(state_ >> 11) * 0x1.0p-53;
    return lo_ + (hi_ - lo_) * u;
  }

 private:
  double lo_, hi_;
  uint64_t state_;
};

void Division(std::string& out) {
  out += "[division]\n";
  double x = 1.0;
  for (int i = 1; i <= 10000; ++i) {
    x = x / 3.0 + 1.0 / (7.0 + i) - x / 11.0;
    if (i == 1 || i == 10 || i == 100 || i == 1000 || i == 10000) {
      absl::StrAppend(&out, "chain ", i, " ", Fmt(x), "\n");
    }
  }
  double harmonic = 0.0, basel = 0.0;
  for (int n = 1; n <= 100000; ++n) {
    harmonic += 1.0 / n;
    basel += 1.0 / (static_cast<double>(n) * n);
  }
  absl::StrAppend(&out, "harmonic 100000 ", Fmt(harmonic), "\n");
  absl::StrAppend(&out, "basel 100000 ", Fmt(basel), "\n");
  for (int i = 1; i <= 12; ++i) {
    for (int j = 7; j <= 12; ++j) {
      absl::StrAppend(&out, "ratio ", i, "/", j, " ", Fmt(i * 0.1 / (j * 0.3)), "\n");
    }
  }
  // Identical only if neither compiler fuses a*b+c into an FMA.
  volatile double a = 0.1, b = 10.0, c = -1.0;
  absl::StrAppend(&out, "mul_add 0.1*10-1 ", Fmt(a * b + c), "\n");
}

void Sqrt(std::string& out) {
  out += "[sqrt]\n";
  for (int i = 0; i <= 40; ++i) {
    const double x = i * 0.37 + i * i * 1e3;
    absl::StrAppend(&out, "sqrt ", Fmt(x), " ", Fmt(std::sqrt(x)), "\n");
  }
  double x = 2.0;
  Digest d;
  for (int i = 0; i < 100000; ++i) {
    x = std::sqrt(x * 1.7 + 0.3);
    d.Add(x);
  }
  absl::StrAppend(&out, "sqrt_chain 100000 ", Fmt(x), " digest ", d.Hex(), "\n");
}

struct Unary {
  const char* name;
  double (*f)(double);
  double lo, hi;
};

struct Binary {
  const char* name;
  double (*f)(double, double);
  double lo1, hi1, lo2, hi2;
};

constexpr int kPrinted = 12;     // samples printed per function
constexpr int kDigested = 20000;  // samples summarized by the digest line

void Pmath(std::string& out) {
  out += "[pmath]\n";
  const Unary unary[] = {
      {"acos", pm_acos, -1, 1},        {"asin", pm_asin, -1, 1},
      {"atan", pm_atan, -1e4, 1e4},    {"cbrt", pm_cbrt, -1e9, 1e9},
      {"ceil", pm_ceil, -1e6, 1e6},    {"cos", pm_cos, -1e4, 1e4},
      {"cosh", pm_cosh, -700, 700},    {"erf", pm_erf, -6, 6},
      {"erfc", pm_erfc, -6, 27},       {"exp", pm_exp, -745, 710},
      {"exp2", pm_exp2, -1075, 1024},  {"expm1", pm_expm1, -40, 40},
      {"floor", pm_floor, -1e6, 1e6},  {"log", pm_log, 1e-300, 1e300},
      {"log10", pm_log10, 1e-9, 1e12}, {"log1p", pm_log1p, -0.999, 1e6},
      {"log2", pm_log2, 1e-9, 1e12},   {"round", pm_round, -1e6, 1e6},
      {"sin", pm_sin, -1e4, 1e4},      {"sinh", pm_sinh, -700, 700},
      {"tan", pm_tan, -1e4, 1e4},      {"tanh", pm_tanh, -20, 20},
      {"trunc", pm_trunc, -1e6, 1e6},
  };
  for (const Unary& f : unary) {
    Sweep s(f.lo, f.hi);
    Digest d;
    for (int i = 0; i < kDigested; ++i) {
      const double x = s.Next(), y = f.f(x);
      if (i < kPrinted) absl::StrAppend(&out, f.name, " ", Fmt(x), " ", Fmt(y), "\n");
      d.Add(y);
    }
    absl::StrAppend(&out, f.name, " digest ", kDigested, " ", d.Hex(), "\n");
  }
  const Binary binary[] = {
      {"pow", pm_pow, 0, 100, -150, 150},
      {"atan2", pm_atan2, -1e3, 1e3, -1e3, 1e3},
      {"hypot", pm_hypot, -1e200, 1e200, -1e200, 1e200},
      {"fmod", pm_fmod, -1e9, 1e9, -1e3, 1e3},
  };
  for (const Binary& f : binary) {
    Sweep s1(f.lo1, f.hi1), s2(f.lo2, f.hi2, 67890);
    Digest d;
    for (int i = 0; i < kDigested; ++i) {
      const double x = s1.Next(), y = s2.Next(), z = f.f(x, y);
      if (i < kPrinted) {
        absl::StrAppend(&out, f.name, " ", Fmt(x), " ", Fmt(y), " ", Fmt(z), "\n");
      }
      d.Add(z);
    }
    absl::StrAppend(&out, f.name, " digest ", kDigested, " ", d.Hex(), "\n");
  }
}

}  // namespace

int main() {
  std::string out = "# blueprinting native/wasm parity report v1\n";
  Division(out);
  Sqrt(out);
  Pmath(out);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
