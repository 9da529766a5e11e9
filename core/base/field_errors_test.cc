#include "core/base/field_errors.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/cord.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using ::testing::ElementsAre;

TEST(ErrorCodes, EveryCodeHasAUniqueSnakeCaseNameAndAMeaning) {
  std::set<std::string> names;
  for (const ErrorCodeInfo& info : kErrorCodes) {
    const std::string name = info.name;
    EXPECT_TRUE(names.insert(name).second) << "duplicate name " << name;
    EXPECT_FALSE(name.empty());
    for (const char c : name) {
      EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '_') << name;
    }
    EXPECT_NE(name.front(), '_') << name;
    EXPECT_NE(name.back(), '_') << name;
    const std::string meaning = info.meaning;
    EXPECT_FALSE(meaning.empty()) << name;
    EXPECT_EQ(meaning.find('\n'), std::string::npos) << name;
    EXPECT_EQ(ErrorCodeName(info.code), name);
    EXPECT_EQ(ParseErrorCode(name), info.code);
  }
  EXPECT_EQ(names.size(), std::size(kErrorCodes));
  EXPECT_EQ(ParseErrorCode("no_such_code"), std::nullopt);
  EXPECT_EQ(ParseErrorCode(""), std::nullopt);
  EXPECT_STREQ(ErrorCodeName(ErrorCode::kOutOfRange), "out_of_range");
}

TEST(FieldErrors, RoundTripThroughAStatus) {
  const absl::Status status = InvalidInputError(
      {{"batch.microbatch_size", "batch.microbatch_size (0) must be positive",
        ErrorCode::kOutOfRange},
       {"", "malformed JSON: line 1", ErrorCode::kSyntax},
       {"system.networks[1].bandwidth", "first line\nsecond line",
        ErrorCode::kWrongType}});
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(status.message(),
            "batch.microbatch_size (0) must be positive\nmalformed JSON: line "
            "1\nfirst line\nsecond line");
  EXPECT_THAT(status,
              FieldErrorsAre(ElementsAre(
                  FieldError{"batch.microbatch_size",
                             "batch.microbatch_size (0) must be positive",
                             ErrorCode::kOutOfRange},
                  FieldError{"", "malformed JSON: line 1", ErrorCode::kSyntax},
                  FieldError{"system.networks[1].bandwidth", "first line",
                             ErrorCode::kWrongType},
                  FieldError{"system.networks[1].bandwidth", "second line",
                             ErrorCode::kWrongType})));
}

TEST(FieldErrors, AStatusWithoutPayloadsHasNoFieldsOrCodes) {
  const std::vector<FieldError> errors =
      FieldErrorsOf(absl::InternalError("a\nb"));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].field, "");
  EXPECT_EQ(errors[0].code, ErrorCode::kInvalidValue);
  EXPECT_EQ(errors[1].message, "b");
}

TEST(FieldErrors, PayloadsThatDoNotMatchTheLinesAreIgnored) {
  absl::Status status = InvalidInputError(
      {{"model.hidden", "model.hidden (0) must be positive",
        ErrorCode::kOutOfRange},
       {"model.seq_size", "model.seq_size (0) must be positive",
        ErrorCode::kOutOfRange}});
  // One code line too few: no codes, fields still there.
  status.SetPayload("blueprinting/codes", absl::Cord("out_of_range"));
  EXPECT_THAT(status, ErrorCodesAre(ElementsAre(ErrorCode::kInvalidValue,
                                                ErrorCode::kInvalidValue)));
  EXPECT_EQ(FieldErrorsOf(status)[1].field, "model.seq_size");
  // A name that is no code: no codes.
  status.SetPayload("blueprinting/codes", absl::Cord("out_of_range\nbogus"));
  EXPECT_THAT(status, ErrorCodesAre(ElementsAre(ErrorCode::kInvalidValue,
                                                ErrorCode::kInvalidValue)));
  // Fields of the wrong count: no fields, codes still there.
  status.SetPayload("blueprinting/codes",
                    absl::Cord("out_of_range\nnot_divisible"));
  status.SetPayload("blueprinting/fields", absl::Cord("a\nb\nc"));
  EXPECT_THAT(status, ErrorCodesAre(ElementsAre(ErrorCode::kOutOfRange,
                                                ErrorCode::kNotDivisible)));
  EXPECT_EQ(FieldErrorsOf(status)[0].field, "");
}

}  // namespace
}  // namespace blueprint
