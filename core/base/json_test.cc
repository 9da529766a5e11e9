#include "core/base/json.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/base/json_reader.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using ::testing::ElementsAre;
using ::testing::Not;

using Json = nlohmann::json;

// The example of json.h's header comment.
TEST(Json, APIExample) {
  absl::StatusOr<Json> value = ParseJson(R"({"b": 1, "a": [1, 2]})");
  ASSERT_THAT(value, IsOk());
  EXPECT_EQ(CanonicalJson(*value) + "\n",
            "{\n"
            "  \"a\": [1, 2],\n"
            "  \"b\": 1\n"
            "}\n");
}

TEST(CanonicalJson, SortsKeysAndPrintsNumbersExactly) {
  Json value = Json::object();
  value["z"] = 0.1;
  value["a"] = int64_t{9007199254740993};  // not representable as a double
  value["m"] = uint64_t{18446744073709551615u};
  value["d"] = 128.0;
  value["s"] = "quote \" and \n newline";
  EXPECT_EQ(CanonicalJson(value, -1),
            "{\"a\":9007199254740993,\"d\":128,\"m\":18446744073709551615,"
            "\"s\":\"quote \\\" and \\n newline\",\"z\":0.1}");
}

TEST(CanonicalJson, NestedLayout) {
  absl::StatusOr<Json> value = ParseJson(
      R"({"rows": [[128, 0.95], [0, 0.1]], "empty": {}, "none": [],
          "objects": [{"x": null, "y": true}]})");
  ASSERT_THAT(value, IsOk());
  EXPECT_EQ(CanonicalJson(*value),
            "{\n"
            "  \"empty\": {},\n"
            "  \"none\": [],\n"
            "  \"objects\": [\n"
            "    {\n"
            "      \"x\": null,\n"
            "      \"y\": true\n"
            "    }\n"
            "  ],\n"
            "  \"rows\": [\n"
            "    [128, 0.95],\n"
            "    [0, 0.1]\n"
            "  ]\n"
            "}");
}

TEST(CanonicalJson, IsAFixedPointOfParsing) {
  const std::string text =
      "{\n  \"a\": [1e-05, 0, 2.5],\n  \"b\": \"\\u0001\"\n}";
  absl::StatusOr<Json> value = ParseJson(text);
  ASSERT_THAT(value, IsOk());
  EXPECT_EQ(CanonicalJson(*value), text);
}

TEST(CanonicalJson, NonFiniteDoublesPrintAsNullAndNegativeZeroAsZero) {
  EXPECT_EQ(CanonicalJson(Json(std::numeric_limits<double>::infinity())),
            "null");
  EXPECT_EQ(CanonicalJson(Json(-0.0)), "0");
}

TEST(ParseJson, MalformedTextNamesThePosition) {
  absl::StatusOr<Json> value = ParseJson("{\n  \"a\": 1\n  \"b\": 2\n}");
  ASSERT_THAT(value, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(std::string(value.status().message()),
            "malformed JSON: parse error at line 3, column 5: syntax error "
            "while parsing object - unexpected string literal; expected '}'");
}

std::string ParseError(const std::string& text) {
  absl::StatusOr<Json> value = ParseJson(text);
  if (value.ok()) return "(parsed)";
  return std::string(value.status().message());
}

TEST(ParseJson, MidDocumentByteOrderMarkIsQuotedEscaped) {
  // A BOM opening the document is skipped (nlohmann); anywhere else it is an
  // invalid literal whose first byte is quoted as \xEF, never raw.
  EXPECT_THAT(ParseJson("\xEF\xBB\xBF{\"a\": 1}"), IsOk());
  // (nlohmann's "last read" holds the structural characters read since the
  // last scalar token.)
  EXPECT_EQ(ParseError("{\"a\": 1,\xEF\xBB\xBF \"b\": 2}"),
            "malformed JSON: parse error at line 1, column 9: syntax error "
            "while parsing object key - invalid literal; last read: "
            "\"1,\\xEF\"; expected string literal");
  EXPECT_EQ(ParseError("{\"a\":\n\xEF\xBB\xBF" "1}"),
            "malformed JSON: parse error at line 2, column 1: syntax error "
            "while parsing value - invalid literal; last read: "
            "\"\\\"a\\\":\\x0A\\xEF\"");
}

TEST(ParseJson, InvalidUtf8InAStringIsQuotedEscaped) {
  EXPECT_EQ(ParseError("{\"k\xC3\xA9y\xFF\": 1}"),
            "malformed JSON: parse error at line 1, column 7: syntax error "
            "while parsing object key - invalid string: ill-formed UTF-8 "
            "byte; last read: \"\\\"k\xC3\xA9y\\xFF\"; expected string "
            "literal");
}

TEST(ParseJson, ControlBytesInATokenAreEscapedOnce) {
  EXPECT_EQ(ParseError("[\"a\tb\"]"),
            "malformed JSON: parse error at line 1, column 4: syntax error "
            "while parsing value - invalid string: control character "
            "U+0009 (HT) must be escaped to \\u0009 or \\t; last read: "
            "\"\\\"a\\x09\"");
  // Input that spells nlohmann's own escape is quoted as it is.
  EXPECT_EQ(ParseError("[\"<U+0009>\tb\"]"),
            "malformed JSON: parse error at line 1, column 11: syntax error "
            "while parsing value - invalid string: control character "
            "U+0009 (HT) must be escaped to \\u0009 or \\t; last read: "
            "\"\\\"<U+0009>\\x09\"");
}

TEST(ParseJson, LongTokenIsCutToItsEnd) {
  // A 1 MB string that ends inside a 4-byte character: the message quotes
  // the last 32 bytes at most, starting on a character boundary.
  const std::string text =
      "[\"" + std::string(1 << 20, 'a') + "\xF0\x9F\x98\x80" + "\xF0\x9F";
  const std::string message = ParseError(text);
  EXPECT_EQ(message,
            "malformed JSON: parse error at line 1, column 1048585: syntax "
            "error while parsing value - invalid string: ill-formed UTF-8 "
            "byte; last read: ...\"" +
                std::string(26, 'a') +
                "\xF0\x9F\x98\x80\\xF0\\x9F\"");
  // A long line of garbage.
  EXPECT_EQ(ParseError(std::string(1000, 'x')),
            "malformed JSON: parse error at line 1, column 1: syntax error "
            "while parsing value - invalid literal; last read: \"x\"");
}

TEST(ParseJson, LongDuplicateKeyIsCut) {
  const std::string key(100, 'k');
  EXPECT_EQ(ParseError("{\"" + key + "\": 1, \"" + key + "\": 2}"),
            "malformed JSON: duplicate key \"" + std::string(40, 'k') +
                "...\" in the top level");
  // Cut between characters: 39 ASCII bytes and a 2-byte character.
  const std::string wide = std::string(39, 'k') + "\xC3\xA9" + "tail";
  EXPECT_EQ(ParseError("{\"" + wide + "\": 1, \"" + wide + "\": 2}"),
            "malformed JSON: duplicate key \"" + std::string(39, 'k') +
                "...\" in the top level");
}

TEST(ParseJson, RejectsTrailingTextAndEmptyInput) {
  EXPECT_THAT(ParseJson("{} {}"), Not(IsOk()));
  EXPECT_THAT(ParseJson(""), Not(IsOk()));
  EXPECT_THAT(ParseJson("{\"a\": 1,}"), Not(IsOk()));
  EXPECT_THAT(ParseJson("// comment\n{}"), Not(IsOk()));
}

TEST(ParseJson, RejectsNumbersBeyondDouble) {
  absl::StatusOr<Json> value = ParseJson("[1e400]");
  ASSERT_THAT(value, Not(IsOk()));
  EXPECT_NE(std::string(value.status().message()).find("number overflow"),
            std::string::npos)
      << value.status();
}

TEST(ParseJson, RejectsDuplicateKeysWithTheirPath) {
  absl::StatusOr<Json> value =
      ParseJson(R"({"a": [{"k": 1}, {"k": 1, "b": {"x": 1, "x": 2}}]})");
  ASSERT_THAT(value, Not(IsOk()));
  EXPECT_EQ(std::string(value.status().message()),
            "malformed JSON: duplicate key \"x\" in a[1].b");
  value = ParseJson(R"({"x": 1, "x": 2})");
  ASSERT_THAT(value, Not(IsOk()));
  EXPECT_EQ(std::string(value.status().message()),
            "malformed JSON: duplicate key \"x\" in the top level");
}

TEST(ParseJson, RejectsDeepNesting) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  absl::StatusOr<Json> value = ParseJson(deep);
  ASSERT_THAT(value, Not(IsOk()));
  EXPECT_NE(std::string(value.status().message())
                .find("nesting deeper than 64 levels"),
            std::string::npos)
      << value.status();
  const std::string ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_THAT(ParseJson(ok), IsOk());
}

TEST(ParseJson, RejectsInvalidUtf8) {
  EXPECT_THAT(ParseJson("\"\xff\""), Not(IsOk()));
}

TEST(JsonObjectReader, ReportsEveryProblemWithItsPathAndCode) {
  absl::StatusOr<Json> value = ParseJson(
      R"({"degree": "8", "big": 18446744073709551615, "frac": 8.5,
          "flag": 1, "kind": "foo", "extra": 1})");
  ASSERT_THAT(value, IsOk());
  std::vector<FieldError> errors;
  JsonObjectReader reader(*value, "parallelism.tensor", &errors);
  int64_t i = 0;
  bool b = false;
  double d = 0;
  EXPECT_FALSE(reader.ReadInt("degree", &i));
  EXPECT_FALSE(reader.ReadInt("big", &i));
  EXPECT_FALSE(reader.ReadInt("frac", &i));
  EXPECT_FALSE(reader.ReadBool("flag", &b));
  EXPECT_FALSE(reader.ReadDouble("missing", &d));
  reader.RejectUnknownKeys();
  EXPECT_THAT(
      errors,
      ElementsAre(
          FieldError{"parallelism.tensor.degree",
                     "parallelism.tensor.degree: expected an integer, got "
                     "string \"8\"",
                     ErrorCode::kWrongType},
          FieldError{"parallelism.tensor.big",
                     "parallelism.tensor.big: integer 18446744073709551615 is "
                     "too large (at most 9223372036854775807)",
                     ErrorCode::kOutOfRange},
          FieldError{"parallelism.tensor.frac",
                     "parallelism.tensor.frac: expected an integer, got 8.5",
                     ErrorCode::kWrongType},
          FieldError{"parallelism.tensor.flag",
                     "parallelism.tensor.flag: expected a boolean (true or "
                     "false), got 1",
                     ErrorCode::kWrongType},
          FieldError{"parallelism.tensor.missing",
                     "parallelism.tensor.missing: required key is missing",
                     ErrorCode::kMissingField},
          FieldError{"parallelism.tensor.extra",
                     "parallelism.tensor.extra: unknown key (expected keys: "
                     "degree, big, frac, flag, missing)",
                     ErrorCode::kUnknownField},
          FieldError{"parallelism.tensor.kind",
                     "parallelism.tensor.kind: unknown key (expected keys: "
                     "degree, big, frac, flag, missing)",
                     ErrorCode::kUnknownField}));
}

TEST(JsonObjectReader, UnknownChoicesListTheAcceptedSpellings) {
  const Json system = Json::object({{"mode", "fast"}});
  std::vector<FieldError> errors;
  JsonObjectReader reader(system, "system", &errors);
  enum class Mode { kSlow };
  Mode mode = Mode::kSlow;
  EXPECT_FALSE(reader.ReadEnum<Mode>(
      "mode",
      [](const std::string& s) -> std::optional<Mode> {
        if (s == "slow") return Mode::kSlow;
        return std::nullopt;
      },
      {"slow"}, &mode));
  EXPECT_THAT(errors,
              ElementsAre(FieldError{
                  "system.mode",
                  "system.mode: expected one of \"slow\", got string \"fast\"",
                  ErrorCode::kUnknownChoice}));
}

TEST(JsonObjectReader, NonObjectIsOneErrorOnNoField) {
  std::vector<FieldError> errors;
  JsonObjectReader reader(Json::array(), "", &errors);
  int64_t i = 0;
  EXPECT_FALSE(reader.ReadInt("x", &i));
  reader.RejectUnknownKeys();
  EXPECT_THAT(errors, ElementsAre(FieldError{
                          "", "top level: expected an object, got an array",
                          ErrorCode::kWrongType}));
}

TEST(ParseJson, MalformedJsonIsASyntaxErrorOnNoField) {
  const absl::StatusOr<Json> value = ParseJson("{\"a\": }");
  EXPECT_THAT(value, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(value, ErrorCodesAre(ElementsAre(ErrorCode::kSyntax)));
  EXPECT_EQ(FieldErrorsOf(value.status())[0].field, "");
}

TEST(MemberPath, OddKeysStayOnOneLine) {
  EXPECT_EQ(MemberPath("", "model"), "model");
  EXPECT_EQ(MemberPath("system.mem1", "MB_efficiency"),
            "system.mem1.MB_efficiency");
  EXPECT_EQ(MemberPath("system", "a\nb"), "system[\"a\\nb\"]");
  EXPECT_EQ(MemberPath("", ""), "[\"\"]");
  EXPECT_EQ(ElementPath("system.networks", 3), "system.networks[3]");

  absl::StatusOr<Json> value = ParseJson(R"({"x\ny": 1, "x\ny": 2})");
  ASSERT_THAT(value, Not(IsOk()));
  EXPECT_EQ(std::string(value.status().message()),
            "malformed JSON: duplicate key \"x\\ny\" in the top level");
}

TEST(JsonSnippet, CutsLongStrings) {
  EXPECT_EQ(JsonSnippet(Json(std::string(50, 'x'))),
            "string \"" + std::string(40, 'x') + "...\"");
  EXPECT_EQ(JsonSnippet(Json::object()), "an object");
  EXPECT_EQ(JsonSnippet(Json(nullptr)), "null");
}

}  // namespace
}  // namespace blueprint
