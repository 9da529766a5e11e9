#include "core/base/format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace blueprint {

std::string FormatDouble(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return std::signbit(value) ? "-0" : "0";
  if (std::fabs(value) < 9007199254740992.0 && value == std::trunc(value)) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.0f", value);
    return buf;
  }
  // Both targets format with a correctly rounded printf (glibc natively,
  // musl under emscripten), so the first precision that round-trips is the
  // same everywhere.
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

}  // namespace blueprint
