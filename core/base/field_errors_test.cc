#include "core/base/field_errors.h"

#include <string>
#include <vector>

#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

TEST(FieldErrors, RoundTripThroughAStatus) {
  const absl::Status status = InvalidInputError(
      {{"batch.microbatch_size", "batch.microbatch_size (0) must be positive"},
       {"", "malformed JSON: line 1"},
       {"system.networks[1].bandwidth", "first line\nsecond line"}});
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(status.message(),
            "batch.microbatch_size (0) must be positive\nmalformed JSON: line "
            "1\nfirst line\nsecond line");
  const std::vector<FieldError> errors = FieldErrorsOf(status);
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0].field, "batch.microbatch_size");
  EXPECT_EQ(errors[1].field, "");
  EXPECT_EQ(errors[2].field, "system.networks[1].bandwidth");
  EXPECT_EQ(errors[3].field, "system.networks[1].bandwidth");
  EXPECT_EQ(errors[3].message, "second line");
}

TEST(FieldErrors, AStatusWithoutFieldsHasEmptyFields) {
  const std::vector<FieldError> errors =
      FieldErrorsOf(absl::InternalError("a\nb"));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].field, "");
  EXPECT_EQ(errors[1].message, "b");
}

TEST(FieldErrors, ReaderLinesNameTheirPath) {
  const std::vector<FieldError> errors = ReaderFieldErrors(
      {"model.hidden: expected an integer, got string \"8\"", "no path"});
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].field, "model.hidden");
  EXPECT_EQ(errors[0].message,
            "model.hidden: expected an integer, got string \"8\"");
  EXPECT_EQ(errors[1].field, "");
}

}  // namespace
}  // namespace blueprint
