// The test helpers themselves: what the matchers accept and what a failure
// prints.
#include <cmath>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/testing/doubles.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using ::testing::DescribeMatcher;
using ::testing::HasSubstr;
using ::testing::Matcher;
using ::testing::Not;

const absl::Status kBad = absl::InvalidArgumentError("model.hidden (7) is odd");

TEST(IsOk, AcceptsOkStatusAndStatusOrWithAValue) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(absl::StatusOr<int>(3), IsOk());
  EXPECT_THAT(kBad, Not(IsOk()));
  EXPECT_THAT(absl::StatusOr<int>(kBad), Not(IsOk()));
  EXPECT_EQ(DescribeMatcher<absl::Status>(IsOk()), "is OK");
  EXPECT_EQ(DescribeMatcher<absl::Status>(IsOk(), true), "is not OK");
}

TEST(StatusIs, MatchesTheCodeAndOptionallyTheMessage) {
  EXPECT_THAT(kBad, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(absl::StatusOr<std::string>(kBad),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(kBad, StatusIs(absl::StatusCode::kInvalidArgument,
                             "model.hidden (7) is odd"));
  EXPECT_THAT(
      kBad, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("hidden")));
  EXPECT_THAT(kBad, Not(StatusIs(absl::StatusCode::kInternal)));
  EXPECT_THAT(kBad, Not(StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr("even"))));
  EXPECT_THAT(absl::OkStatus(), StatusIs(absl::StatusCode::kOk));
  EXPECT_THAT(absl::StatusOr<int>(1),
              Not(StatusIs(absl::StatusCode::kOk, HasSubstr("x"))));
}

std::string ExplanationOf(const Matcher<const absl::Status&>& matcher,
                          const absl::Status& status) {
  ::testing::StringMatchResultListener listener;
  ::testing::ExplainMatchResult(matcher, status, &listener);
  return listener.str();
}

TEST(StatusIs, DescribesAndExplains) {
  const Matcher<const absl::Status&> code =
      StatusIs(absl::StatusCode::kInternal);
  EXPECT_EQ(DescribeMatcher<const absl::Status&>(code),
            "has status code INTERNAL");
  EXPECT_EQ(ExplanationOf(code, kBad), "whose code is INVALID_ARGUMENT");
  const Matcher<const absl::Status&> message =
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("even"));
  EXPECT_EQ(DescribeMatcher<const absl::Status&>(message),
            "has status code INVALID_ARGUMENT and a message that has "
            "substring \"even\"");
  EXPECT_EQ(ExplanationOf(message, kBad), "whose message does not match");
}

TEST(PrintTo, StatusOrPrintsItsStatusOrItsValue) {
  EXPECT_EQ(::testing::PrintToString(absl::StatusOr<int>(kBad)),
            "INVALID_ARGUMENT: model.hidden (7) is odd");
  EXPECT_EQ(::testing::PrintToString(absl::StatusOr<int>(42)), "OK: 42");
}

absl::StatusOr<int> Twice(absl::StatusOr<int> v) {
  if (!v.ok()) return v.status();
  return 2 * *v;
}

TEST(AssertOkAndAssign, AssignsTheValue) {
  BP_ASSERT_OK_AND_ASSIGN(const int x, Twice(21));
  EXPECT_EQ(x, 42);
  int y = 0;
  BP_ASSERT_OK_AND_ASSIGN(y, Twice(2));
  EXPECT_EQ(y, 4);
}

TEST(Doubles, SameChecksAsGtest) {
  EXPECT_TRUE(DoubleEqFormat("a", "b", 0.1 + 0.2, 0.3));
  EXPECT_FALSE(DoubleEqFormat("a", "b", 0.3, 0.30000000001));
  EXPECT_FALSE(DoubleEqFormat("a", "b", std::nan(""), std::nan("")));
  EXPECT_TRUE(DoubleNearFormat("a", "b", "t", 1.0, 1.5, 0.5));
  EXPECT_FALSE(DoubleNearFormat("a", "b", "t", 1.0, 1.5, 0.25));
  EXPECT_FALSE(DoubleNearFormat("a", "b", "t", std::nan(""), 1, 1e300));
  EXPECT_TRUE(DoubleExactFormat("a", "b", 0.5, 0.5));
  EXPECT_FALSE(DoubleExactFormat("a", "b", 0.1 + 0.2, 0.3));
  BP_EXPECT_DOUBLE_EQ(0.1 + 0.2, 0.3);
  BP_EXPECT_NEAR(1.0, 1.1, 0.125);
  BP_EXPECT_DOUBLE_EXACT(2 * 0.25, 0.5);
}

TEST(Doubles, FailuresPrintShortestRoundTripValues) {
  EXPECT_EQ(std::string(DoubleExactFormat("x", "y", 0.1 + 0.2, 0.3).message()),
            "Expected: x == y\n"
            "  where x is 0.30000000000000004\n"
            "    and y is 0.3\n"
            "  (difference 5.551115123125783e-17)");
  EXPECT_EQ(std::string(
                DoubleNearFormat("x", "y", "tol", 18.5, 18.25, 0.1).message()),
            "Expected: x == y\n"
            "  where x is 18.5\n"
            "    and y is 18.25\n"
            "  (difference 0.25), more than tol = 0.1");
  std::ostringstream os;
  os << Shortest(1.0 / 3) << " " << Shortest(2e-5);
  EXPECT_EQ(os.str(), "0.3333333333333333 2e-05");
}

}  // namespace
}  // namespace blueprint
