#include "core/base/json.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/base/json_reader.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using Json = nlohmann::json;

// The example of json.h's header comment.
TEST(Json, APIExample) {
  absl::StatusOr<Json> value = ParseJson(R"({"b": 1, "a": [1, 2]})");
  ASSERT_TRUE(value.ok()) << value.status();
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
  ASSERT_TRUE(value.ok()) << value.status();
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
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(CanonicalJson(*value), text);
}

TEST(CanonicalJson, NonFiniteDoublesPrintAsNullAndNegativeZeroAsZero) {
  EXPECT_EQ(CanonicalJson(Json(std::numeric_limits<double>::infinity())),
            "null");
  EXPECT_EQ(CanonicalJson(Json(-0.0)), "0");
}

TEST(ParseJson, MalformedTextNamesThePosition) {
  absl::StatusOr<Json> value = ParseJson("{\n  \"a\": 1\n  \"b\": 2\n}");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(value.status().message()),
            "malformed JSON: parse error at line 3, column 5: syntax error "
            "while parsing object - unexpected string literal; expected '}'");
}

TEST(ParseJson, RejectsTrailingTextAndEmptyInput) {
  EXPECT_FALSE(ParseJson("{} {}").ok());
  EXPECT_FALSE(ParseJson("").ok());
  EXPECT_FALSE(ParseJson("{\"a\": 1,}").ok());
  EXPECT_FALSE(ParseJson("// comment\n{}").ok());
}

TEST(ParseJson, RejectsNumbersBeyondDouble) {
  absl::StatusOr<Json> value = ParseJson("[1e400]");
  ASSERT_FALSE(value.ok());
  EXPECT_NE(std::string(value.status().message()).find("number overflow"),
            std::string::npos)
      << value.status();
}

TEST(ParseJson, RejectsDuplicateKeysWithTheirPath) {
  absl::StatusOr<Json> value =
      ParseJson(R"({"a": [{"k": 1}, {"k": 1, "b": {"x": 1, "x": 2}}]})");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(std::string(value.status().message()),
            "malformed JSON: duplicate key \"x\" in a[1].b");
  value = ParseJson(R"({"x": 1, "x": 2})");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(std::string(value.status().message()),
            "malformed JSON: duplicate key \"x\" in the top level");
}

TEST(ParseJson, RejectsDeepNesting) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  absl::StatusOr<Json> value = ParseJson(deep);
  ASSERT_FALSE(value.ok());
  EXPECT_NE(std::string(value.status().message())
                .find("nesting deeper than 64 levels"),
            std::string::npos)
      << value.status();
  const std::string ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_TRUE(ParseJson(ok).ok());
}

TEST(ParseJson, RejectsInvalidUtf8) {
  EXPECT_FALSE(ParseJson("\"\xff\"").ok());
}

TEST(JsonObjectReader, ReportsEveryProblemWithItsPath) {
  absl::StatusOr<Json> value = ParseJson(
      R"({"degree": "8", "big": 18446744073709551615, "frac": 8.5,
          "flag": 1, "kind": "foo", "extra": 1})");
  ASSERT_TRUE(value.ok()) << value.status();
  std::vector<std::string> errors;
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
  EXPECT_EQ(errors,
            (std::vector<std::string>{
                "parallelism.tensor.degree: expected an integer, got string "
                "\"8\"",
                "parallelism.tensor.big: integer 18446744073709551615 is too "
                "large (at most 9223372036854775807)",
                "parallelism.tensor.frac: expected an integer, got 8.5",
                "parallelism.tensor.flag: expected a boolean (true or false), "
                "got 1",
                "parallelism.tensor.missing: required key is missing",
                "parallelism.tensor.extra: unknown key (expected keys: degree, "
                "big, frac, flag, missing)",
                "parallelism.tensor.kind: unknown key (expected keys: degree, "
                "big, frac, flag, missing)",
            }));
}

TEST(JsonObjectReader, NonObjectIsOneError) {
  std::vector<std::string> errors;
  JsonObjectReader reader(Json::array(), "", &errors);
  int64_t i = 0;
  EXPECT_FALSE(reader.ReadInt("x", &i));
  reader.RejectUnknownKeys();
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "top level: expected an object, got an array"}));
}

TEST(MemberPath, OddKeysStayOnOneLine) {
  EXPECT_EQ(MemberPath("", "model"), "model");
  EXPECT_EQ(MemberPath("system.mem1", "MB_efficiency"),
            "system.mem1.MB_efficiency");
  EXPECT_EQ(MemberPath("system", "a\nb"), "system[\"a\\nb\"]");
  EXPECT_EQ(MemberPath("", ""), "[\"\"]");
  EXPECT_EQ(ElementPath("system.networks", 3), "system.networks[3]");

  absl::StatusOr<Json> value = ParseJson(R"({"x\ny": 1, "x\ny": 2})");
  ASSERT_FALSE(value.ok());
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
