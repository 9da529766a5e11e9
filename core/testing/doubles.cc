#include "core/testing/doubles.h"

#include <cmath>

#include "core/base/format.h"
#include "gmock/gmock.h"

namespace blueprint {
namespace {

::testing::AssertionResult Failure(const char* a_expr, const char* b_expr,
                                   double a, double b, const char* relation) {
  return ::testing::AssertionFailure()
         << "Expected: " << a_expr << " " << relation << " " << b_expr
         << "\n  where " << a_expr << " is " << Shortest(a) << "\n    and "
         << b_expr << " is " << Shortest(b) << "\n  (difference "
         << Shortest(a - b) << ")";
}

}  // namespace

std::ostream& operator<<(std::ostream& os, Shortest d) {
  return os << FormatDouble(d.value);
}

::testing::AssertionResult DoubleEqFormat(const char* a_expr,
                                          const char* b_expr, double a,
                                          double b) {
  // gmock's DoubleEq is EXPECT_DOUBLE_EQ's comparison: within 4 ULPs, NaN
  // equal to nothing.
  if (::testing::Value(a, ::testing::DoubleEq(b))) {
    return ::testing::AssertionSuccess();
  }
  return Failure(a_expr, b_expr, a, b, "== (within 4 ULPs)");
}

::testing::AssertionResult DoubleNearFormat(const char* a_expr,
                                            const char* b_expr,
                                            const char* tolerance_expr,
                                            double a, double b,
                                            double tolerance) {
  // EXPECT_NEAR's comparison (a NaN anywhere fails).
  if (std::fabs(a - b) <= tolerance) return ::testing::AssertionSuccess();
  return Failure(a_expr, b_expr, a, b, "==")
         << ", more than " << tolerance_expr << " = " << Shortest(tolerance);
}

::testing::AssertionResult DoubleExactFormat(const char* a_expr,
                                             const char* b_expr, double a,
                                             double b) {
  if (a == b) return ::testing::AssertionSuccess();
  return Failure(a_expr, b_expr, a, b, "==");
}

}  // namespace blueprint
