// Megatron-LM's --moe-layer-freq list expressions, read without eval.
//
// Megatron-LM takes --moe-layer-freq either as an integer k (block i has a
// mixture of experts iff i % k == 0) or, when the text holds '[', as a Python
// list expression that its _eval_pattern evaluates after allowing only the
// characters `,0123456789[]()+*`: "([0]*3+[1]*58)" is DeepSeek-V3's three
// dense blocks and 58 MoE blocks. ParseLayerPattern evaluates the same
// expressions with a small parser of its own, bounded in size and depth, and
// LayerPatternExpression writes a pattern back as one (the Hugging Face
// adapter's --moe-layer-freq).
//
// Example:
//   ParseLayerPattern("([1]*3+[0])*2")   // "11101110"
//   LayerPatternExpression("0001111")    // "([0]*3+[1]*4)"
#ifndef BLUEPRINTING_CORE_ADAPTERS_LAYER_PATTERN_H_
#define BLUEPRINTING_CORE_ADAPTERS_LAYER_PATTERN_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace blueprint {

// The longest list an expression may build (blocks), and the deepest
// nesting of parentheses and brackets it may use: far above any model's, low
// enough that a hostile expression costs little time and stack.
inline constexpr int64_t kMaxLayerPattern = int64_t{1} << 20;
inline constexpr int kMaxLayerPatternDepth = 64;

// ParseLayerPattern: the list a Python list expression evaluates to, one
// '0' or '1' per element. The expressions are Python's over integers and
// lists of integers:
//   sum     := product ('+' product)*
//   product := atom ('*' atom)*
//   atom    := digits | '[' [digits (',' digits)* [',']] ']' | '(' sum ')'
// where + adds two integers or joins two lists, * multiplies two integers or
// repeats a list an integer number of times (in either order), integers are
// written as Python writes them (no leading zeros but "0"), and the whole
// must be a list whose elements are 0 (dense) or 1 (MoE). Anything else is
// kInvalidArgument with a one-line message that names the offending
// character's position (1-based) or the rule ("the expression is an
// integer, not a list"), as is a list longer than kMaxLayerPattern, an
// integer above it or a nesting deeper than kMaxLayerPatternDepth.
absl::StatusOr<std::string> ParseLayerPattern(absl::string_view text);

// LayerPatternExpression: a list expression that ParseLayerPattern (and
// Megatron-LM) evaluate to `pattern` (one '0' or '1' per block, not empty):
// its runs, "[0]*3+[1]*58", repeated when the pattern is a repetition of a
// shorter one ("([0]+[1])*24"), in parentheses.
std::string LayerPatternExpression(absl::string_view pattern);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ADAPTERS_LAYER_PATTERN_H_
