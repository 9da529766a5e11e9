// gMock matchers for absl::Status and absl::StatusOr<T> (abseil 20220623
// ships none outside its own tests), so that a failing test prints the status
// instead of crashing on a dereferenced error:
//
//   ASSERT_THAT(program, IsOk());                      // prints the status
//   EXPECT_THAT(spec, StatusIs(absl::StatusCode::kInvalidArgument));
//   EXPECT_THAT(spec, StatusIs(absl::StatusCode::kInvalidArgument,
//                              HasSubstr("model.hidden")));
//   BP_ASSERT_OK_AND_ASSIGN(const TypedProgram program, TestProgram(m));
//   EXPECT_THAT(spec, ErrorCodesAre(ElementsAre(ErrorCode::kOutOfRange)));
//   EXPECT_THAT(spec, FieldsAndCodesAre(ElementsAre(
//                         Pair("model.hidden", ErrorCode::kOutOfRange))));
//   EXPECT_THAT(spec, FieldErrorsAre(Contains(FieldError{
//                         "model.hidden", "model.hidden (0) must be positive",
//                         ErrorCode::kOutOfRange})));
//
// Each matcher accepts an absl::Status or an absl::StatusOr<T>. A failure
// prints the value as its status ("INVALID_ARGUMENT: ..."), or "OK: <value>".
#ifndef BLUEPRINTING_CORE_TESTING_STATUS_MATCHERS_H_
#define BLUEPRINTING_CORE_TESTING_STATUS_MATCHERS_H_

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/base/field_errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace absl {
ABSL_NAMESPACE_BEGIN

// gtest prints a value through PrintTo found by argument-dependent lookup.
// abseil 20220623 gives StatusOr neither PrintTo nor operator<<, so without
// this a failed ASSERT_THAT(x, IsOk()) would print x as raw bytes.
template <typename T>
void PrintTo(const StatusOr<T>& value, std::ostream* os) {
  if (value.ok()) {
    *os << "OK: " << ::testing::PrintToString(*value);
  } else {
    *os << value.status();
  }
}

ABSL_NAMESPACE_END
}  // namespace absl

namespace blueprint {
namespace status_matchers_internal {

inline const absl::Status& GetStatus(const absl::Status& status) {
  return status;
}

template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

class IsOkMatcher {
 public:
  template <typename StatusType>
  bool MatchAndExplain(const StatusType& actual,
                       ::testing::MatchResultListener*) const {
    return GetStatus(actual).ok();
  }
  void DescribeTo(std::ostream* os) const { *os << "is OK"; }
  void DescribeNegationTo(std::ostream* os) const { *os << "is not OK"; }
};

class StatusIsMatcher {
 public:
  StatusIsMatcher(absl::StatusCode code,
                  ::testing::Matcher<const std::string&> message,
                  bool describe_message)
      : code_(code),
        message_(std::move(message)),
        describe_message_(describe_message) {}

  template <typename StatusType>
  bool MatchAndExplain(const StatusType& actual,
                       ::testing::MatchResultListener* listener) const {
    const absl::Status& status = GetStatus(actual);
    if (status.code() != code_) {
      *listener << "whose code is " << absl::StatusCodeToString(status.code());
      return false;
    }
    const std::string message(status.message());
    ::testing::StringMatchResultListener inner;
    if (!message_.MatchAndExplain(message, &inner)) {
      *listener << "whose message does not match";
      if (!inner.str().empty()) *listener << ", " << inner.str();
      return false;
    }
    return true;
  }

  void DescribeTo(std::ostream* os) const {
    *os << "has status code " << absl::StatusCodeToString(code_);
    if (describe_message_) {
      *os << " and a message that ";
      message_.DescribeTo(os);
    }
  }

  void DescribeNegationTo(std::ostream* os) const {
    *os << "does not have status code " << absl::StatusCodeToString(code_);
    if (describe_message_) {
      *os << " or has a message that ";
      message_.DescribeNegationTo(os);
    }
  }

 private:
  absl::StatusCode code_;
  ::testing::Matcher<const std::string&> message_;
  bool describe_message_;
};

// Matches FieldErrorsOf(status), or their codes alone, against a matcher of
// std::vector<FieldError> (or std::vector<ErrorCode>).
template <typename Projected>
class FieldErrorsMatcher {
 public:
  using Project = Projected (*)(const absl::Status&);
  FieldErrorsMatcher(Project project, const char* what,
                     ::testing::Matcher<const Projected&> inner)
      : project_(project), what_(what), inner_(std::move(inner)) {}

  template <typename StatusType>
  bool MatchAndExplain(const StatusType& actual,
                       ::testing::MatchResultListener* listener) const {
    const Projected projected = project_(GetStatus(actual));
    *listener << "whose " << what_ << " are "
              << ::testing::PrintToString(projected);
    return inner_.Matches(projected);
  }
  void DescribeTo(std::ostream* os) const {
    *os << "has " << what_ << " that ";
    inner_.DescribeTo(os);
  }
  void DescribeNegationTo(std::ostream* os) const {
    *os << "has " << what_ << " that ";
    inner_.DescribeNegationTo(os);
  }

 private:
  Project project_;
  const char* what_;
  ::testing::Matcher<const Projected&> inner_;
};

inline std::vector<ErrorCode> ErrorCodesOf(const absl::Status& status) {
  std::vector<ErrorCode> out;
  for (const FieldError& error : FieldErrorsOf(status)) {
    out.push_back(error.code);
  }
  return out;
}

inline std::vector<std::pair<std::string, ErrorCode>> FieldsAndCodesOf(
    const absl::Status& status) {
  std::vector<std::pair<std::string, ErrorCode>> out;
  for (const FieldError& error : FieldErrorsOf(status)) {
    out.emplace_back(error.field, error.code);
  }
  return out;
}

template <typename Projected, typename Matcher>
::testing::PolymorphicMatcher<FieldErrorsMatcher<Projected>>
MakeFieldErrorsMatcher(Projected (*project)(const absl::Status&),
                       const char* what, Matcher&& matcher) {
  return ::testing::MakePolymorphicMatcher(
      FieldErrorsMatcher<Projected>(project, what,
                                    ::testing::MatcherCast<const Projected&>(
                                        std::forward<Matcher>(matcher))));
}

}  // namespace status_matchers_internal

// Matches a status (or StatusOr) whose FieldErrorsOf (core/base/
// field_errors.h) match `matcher`, e.g. ElementsAre(FieldError{...}).
template <typename Matcher>
auto FieldErrorsAre(Matcher&& matcher) {
  return status_matchers_internal::MakeFieldErrorsMatcher(
      &FieldErrorsOf, "field errors", std::forward<Matcher>(matcher));
}

// Matches a status (or StatusOr) whose errors' codes, in order, match
// `matcher`, e.g. ElementsAre(ErrorCode::kOutOfRange).
template <typename Matcher>
auto ErrorCodesAre(Matcher&& matcher) {
  return status_matchers_internal::MakeFieldErrorsMatcher(
      &status_matchers_internal::ErrorCodesOf, "error codes",
      std::forward<Matcher>(matcher));
}

// Matches a status (or StatusOr) whose errors' {field, code} pairs, in order,
// match `matcher`, e.g. ElementsAre(Pair("--procs", ErrorCode::kWrongType)).
template <typename Matcher>
auto FieldsAndCodesAre(Matcher&& matcher) {
  return status_matchers_internal::MakeFieldErrorsMatcher(
      &status_matchers_internal::FieldsAndCodesOf, "fields and codes",
      std::forward<Matcher>(matcher));
}

// Matches an OK absl::Status or an absl::StatusOr<T> holding a value.
inline ::testing::PolymorphicMatcher<status_matchers_internal::IsOkMatcher>
IsOk() {
  return ::testing::MakePolymorphicMatcher(
      status_matchers_internal::IsOkMatcher());
}

// Matches a status (or a StatusOr's status) whose code is `code`.
inline ::testing::PolymorphicMatcher<status_matchers_internal::StatusIsMatcher>
StatusIs(absl::StatusCode code) {
  return ::testing::MakePolymorphicMatcher(
      status_matchers_internal::StatusIsMatcher(code, ::testing::_, false));
}

// ... and whose message (as a std::string) matches `message`: a string (equal
// to it) or a matcher such as HasSubstr("...").
template <typename MessageMatcher>
::testing::PolymorphicMatcher<status_matchers_internal::StatusIsMatcher>
StatusIs(absl::StatusCode code, MessageMatcher&& message) {
  return ::testing::MakePolymorphicMatcher(
      status_matchers_internal::StatusIsMatcher(
          code,
          ::testing::MatcherCast<const std::string&>(
              std::forward<MessageMatcher>(message)),
          true));
}

}  // namespace blueprint

#define BP_TESTING_CONCAT_INNER_(a, b) a##b
#define BP_TESTING_CONCAT_(a, b) BP_TESTING_CONCAT_INNER_(a, b)

// BP_ASSERT_OK_AND_ASSIGN(lhs, expr): evaluates the absl::StatusOr `expr`;
// if it holds an error, fails the test fatally (printing `expr` and the
// status) and returns from the enclosing void function; otherwise moves the
// value into `lhs`, which may be a declaration (`const TypedProgram p`).
#define BP_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  BP_ASSERT_OK_AND_ASSIGN_IMPL_(           \
      BP_TESTING_CONCAT_(bp_assert_statusor_, __LINE__), lhs, expr)
#define BP_ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, expr)                    \
  auto statusor = (expr);                                                     \
  if (!statusor.ok()) FAIL() << #expr << " is not OK: " << statusor.status(); \
  lhs = std::move(*statusor)

#endif  // BLUEPRINTING_CORE_TESTING_STATUS_MATCHERS_H_
