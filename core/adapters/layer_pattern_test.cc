#include "core/adapters/layer_pattern.h"

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

// The pattern of `text`, or "error: MESSAGE".
std::string Eval(const std::string& text) {
  absl::StatusOr<std::string> pattern = ParseLayerPattern(text);
  return pattern.ok() ? *pattern
                      : absl::StrCat("error: ", pattern.status().message());
}

TEST(LayerPattern, EvaluatesMegatronsExpressions) {
  // The examples of Megatron-LM's --moe-layer-freq help and DeepSeek's.
  EXPECT_EQ(Eval("([1]*3+[0]*1)*3"), "111011101110");
  EXPECT_EQ(Eval("([0]+[1]*23)"), "0" + std::string(23, '1'));
  EXPECT_EQ(Eval("([1]*3+[0]*2)*2"), "1110011100");
  EXPECT_EQ(Eval("([0]*3+[1]*58)"), "000" + std::string(58, '1'));
  EXPECT_EQ(Eval("[1,0,1,0]"), "1010");
  EXPECT_EQ(Eval("[1,0,]"), "10");
  EXPECT_EQ(Eval("[]+[1]"), "1");
  // Python's arithmetic: integers, either order of a repetition, * before +.
  EXPECT_EQ(Eval("2*[0,1]"), "0101");
  EXPECT_EQ(Eval("[1]*(2+1)"), "111");
  EXPECT_EQ(Eval("[0]*2*3"), "000000");
  EXPECT_EQ(Eval("2*3*[1]"), "111111");
  EXPECT_EQ(Eval("[1]*0+[0]"), "0");
  EXPECT_EQ(Eval("((([1])))"), "1");
}

TEST(LayerPattern, RejectsWhatIsNotAListOfZerosAndOnes) {
  EXPECT_EQ(Eval(""), "error: the expression is empty");
  EXPECT_EQ(Eval("3"), "error: the expression is an integer, not a list");
  EXPECT_EQ(Eval("(2+1)*2"), "error: the expression is an integer, not a list");
  EXPECT_EQ(Eval("[1, 0]"),
            "error: at character 4: \" \" is not allowed: Megatron-LM's "
            "patterns hold only digits and , [ ] ( ) + *");
  EXPECT_EQ(Eval("__import__('os')"),
            "error: at character 1: \"_\" is not allowed: Megatron-LM's "
            "patterns hold only digits and , [ ] ( ) + *");
  EXPECT_EQ(Eval("[2]"),
            "error: at character 2: a pattern holds 0 (dense) or 1 (MoE), "
            "not 2");
  EXPECT_EQ(Eval("[[1]]"),
            "error: at character 2: a list inside a list is not a pattern");
  EXPECT_EQ(Eval("[1]*[1]"),
            "error: at character 4: cannot multiply a list by a list");
  EXPECT_EQ(Eval("[1]+1"),
            "error: at character 4: cannot add a list and an integer");
  EXPECT_EQ(Eval("[1]]"), "error: at character 4: unexpected ']'");
  EXPECT_EQ(Eval("([1]"),
            "error: at character 5: expected ')' or an operator, got end of "
            "the expression");
  EXPECT_EQ(Eval("[1,,0]"),
            "error: at character 4: expected 0, 1 or ']', got ','");
  EXPECT_EQ(Eval("[1"),
            "error: at character 3: expected ',' or ']', got end of the "
            "expression");
  EXPECT_EQ(Eval("[01]"),
            "error: at character 2: an integer with a leading zero is not "
            "Python");
  EXPECT_EQ(Eval("+[1]"),
            "error: at character 1: expected an integer, '[' or '(', got '+'");
  EXPECT_EQ(Eval("(1,0)"),
            "error: at character 3: expected ')' or an operator, got ','");
  // Bytes that are not text are quoted escaped.
  EXPECT_EQ(Eval(std::string("[1]\xff")),
            "error: at character 4: \"\\xFF\" is not allowed: Megatron-LM's "
            "patterns hold only digits and , [ ] ( ) + *");
}

TEST(LayerPatternBounds, SizeAndDepthAreBounded) {
  EXPECT_EQ(Eval("[0]*1048576").size(), size_t{1} << 20);
  EXPECT_EQ(Eval("[0]*1048577"),
            "error: at character 5: an integer above 1048576 is not a "
            "pattern's");
  EXPECT_EQ(Eval("[0,1]*1048576"),
            "error: at character 6: the list would be longer than 1048576 "
            "elements");
  EXPECT_EQ(Eval("[0]*1024*1024+[1]"),
            "error: at character 14: the list would be longer than 1048576 "
            "elements");
  EXPECT_EQ(Eval("[1]*(1024*1025)"),
            "error: at character 10: an integer above 1048576 is not a "
            "pattern's");
  EXPECT_EQ(Eval("[1]*99999999999999999999999"),
            "error: at character 5: an integer above 1048576 is not a "
            "pattern's");
  // An empty list repeated any number of times is still empty.
  EXPECT_EQ(Eval("[]*1048576+[1]"), "1");
  // What the repetitions copy in all is bounded too: a long chain of them
  // stays cheap.
  std::string chain = "[0]*1048576";
  for (int i = 0; i < 100000; ++i) chain += "*1";
  EXPECT_EQ(Eval(chain),
            "error: at character 42: the expression builds more than "
            "16777216 elements in all");
  const std::string deep = std::string(64, '(') + "[1]" + std::string(64, ')');
  EXPECT_EQ(Eval(deep), "1");
  EXPECT_EQ(Eval("(" + deep + ")"),
            "error: at character 65: nested deeper than 64 levels");
  // Far deeper than any stack: refused at the 65th level, not by recursion.
  EXPECT_EQ(Eval(std::string(1 << 20, '(')),
            "error: at character 65: nested deeper than 64 levels");
}

TEST(LayerPatternExpression, WritesRunsAndRepetitions) {
  EXPECT_EQ(LayerPatternExpression("000" + std::string(58, '1')),
            "([0]*3+[1]*58)");
  EXPECT_EQ(LayerPatternExpression("0" + std::string(26, '1')), "([0]+[1]*26)");
  EXPECT_EQ(LayerPatternExpression("1111"), "([1]*4)");
  EXPECT_EQ(LayerPatternExpression("0"), "([0])");
  EXPECT_EQ(LayerPatternExpression("010101"), "([0]+[1])*3");
  EXPECT_EQ(LayerPatternExpression("110110"), "([1]*2+[0])*2");
  EXPECT_EQ(LayerPatternExpression("0110"), "([0]+[1]*2+[0])");
  // Every expression evaluates back to its pattern.
  for (const std::string pattern :
       {"0001111", "0101", "1", "10", "0110110", "111011101110"}) {
    EXPECT_EQ(Eval(LayerPatternExpression(pattern)), pattern) << pattern;
  }
}

}  // namespace
}  // namespace blueprint
