#include "wasm/demo.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "core/pmath/pmath.h"

namespace blueprinting {

std::string DigestDemo() {
  uint64_t h = 1469598103934665603ULL;
  auto add = [&h](double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    for (int b = 0; b < 8; ++b) {
      h ^= (bits >> (8 * b)) & 0xff;
      h *= 1099511628211ULL;
    }
  };
  for (int i = 1; i <= 1000; ++i) {
    const double x = i / 37.0;
    add(pm_exp(x / 10.0));
    add(pm_log(x));
    add(pm_pow(x, 1.0 / 3.0));
    add(pm_sin(x * 7.0));
    add(pm_tanh(x - 13.0));
  }
  return absl::StrFormat("pmath-fnv1a64 %016x", h);
}

}  // namespace blueprinting
