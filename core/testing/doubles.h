// Double assertions whose failure messages print values in the shortest form
// that round-trips (FormatDouble, as in every canonical text) instead of
// gtest's 17 significant digits (EXPECT_NEAR, EXPECT_DOUBLE_EQ) or 6
// (EXPECT_EQ, operator<<). Same checks as gtest's:
//
//   BP_EXPECT_DOUBLE_EQ(a, b)     a and b within 4 ULPs   (EXPECT_DOUBLE_EQ)
//   BP_EXPECT_NEAR(a, b, tol)     |a - b| <= tol          (EXPECT_NEAR)
//   BP_EXPECT_DOUBLE_EXACT(a, b)  a == b                  (EXPECT_EQ)
//
// and ASSERT_ variants. For a hand-written message, stream Shortest(x).
#ifndef BLUEPRINTING_CORE_TESTING_DOUBLES_H_
#define BLUEPRINTING_CORE_TESTING_DOUBLES_H_

#include <ostream>
#include <string>

#include "gtest/gtest.h"

namespace blueprint {

// Streams a double as FormatDouble does: `<< Shortest(x)`.
struct Shortest {
  explicit Shortest(double v) : value(v) {}
  double value;
};
std::ostream& operator<<(std::ostream& os, Shortest d);

::testing::AssertionResult DoubleEqFormat(const char* a_expr,
                                          const char* b_expr, double a,
                                          double b);
::testing::AssertionResult DoubleNearFormat(const char* a_expr,
                                            const char* b_expr,
                                            const char* tolerance_expr,
                                            double a, double b,
                                            double tolerance);
::testing::AssertionResult DoubleExactFormat(const char* a_expr,
                                             const char* b_expr, double a,
                                             double b);

}  // namespace blueprint

#define BP_EXPECT_DOUBLE_EQ(a, b) \
  EXPECT_PRED_FORMAT2(::blueprint::DoubleEqFormat, a, b)
#define BP_ASSERT_DOUBLE_EQ(a, b) \
  ASSERT_PRED_FORMAT2(::blueprint::DoubleEqFormat, a, b)
#define BP_EXPECT_NEAR(a, b, tolerance) \
  EXPECT_PRED_FORMAT3(::blueprint::DoubleNearFormat, a, b, tolerance)
#define BP_ASSERT_NEAR(a, b, tolerance) \
  ASSERT_PRED_FORMAT3(::blueprint::DoubleNearFormat, a, b, tolerance)
#define BP_EXPECT_DOUBLE_EXACT(a, b) \
  EXPECT_PRED_FORMAT2(::blueprint::DoubleExactFormat, a, b)
#define BP_ASSERT_DOUBLE_EXACT(a, b) \
  ASSERT_PRED_FORMAT2(::blueprint::DoubleExactFormat, a, b)

#endif  // BLUEPRINTING_CORE_TESTING_DOUBLES_H_
