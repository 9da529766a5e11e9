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
  // musl under emscripten), so the smallest precision that round-trips is the
  // same everywhere. Round-tripping is monotone in the precision (more
  // correctly rounded digits land closer), so binary search finds it in at
  // most 5 tries instead of up to 17.
  char buf[40];
  auto round_trips = [&](int precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    return std::strtod(buf, nullptr) == value;
  };
  int lo = 1, hi = 17;  // 17 significant digits always round-trip
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (round_trips(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  round_trips(lo);
  return buf;
}

}  // namespace blueprint
