// The extreme-value property of hostile input (issue 16), shared by the
// fixed-seed test (tests/hostile) and the libFuzzer target: for a spec,
//   check accepts  => every derived value it prints is a finite number >= 0,
//                     and analyze succeeds (exit 0, or exit 2 with its report
//                     and only memory-capacity violations) and every figure
//                     of the report is a finite number >= 0;
//   check rejects  => exit 2 and every error has a field path, which its
//                     message names.
// Each run also yields a one-line record (exit codes and a digest of every
// byte printed) so that native and wasm builds can be compared.
#ifndef BLUEPRINTING_CORE_TESTING_EXTREME_VALUES_H_
#define BLUEPRINTING_CORE_TESTING_EXTREME_VALUES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace blueprint::testing {

struct PropertyOutcome {
  std::string record;               // "check=E analyze=E sha256=..."
  std::vector<std::string> broken;  // one line per broken property
};

PropertyOutcome CheckExtremeValueProperty(const std::string& spec_json);

// The JSON pointers ("/system/networks/0/bandwidth") of every number in a
// JSON document, in document order.
std::vector<std::string> NumericLeaves(const std::string& json);

// The pointers of the numbers among them written as integers.
std::vector<std::string> IntegerLeaves(const std::string& json);

// `json` with the number at `pointer` replaced by the JSON number `token`
// (e.g. "5e-324", "-1", "9223372036854775807").
std::string WithLeaf(const std::string& json, const std::string& pointer,
                     const std::string& token);

// The extreme values tried in every numeric field: zero, denormals, tiny,
// huge, the largest double, negatives, integer limits.
const std::vector<std::string>& ExtremeTokens();

// 2^k for k = 16 ... 62: the sizes that pass a field's own rules and meet
// the bounds of the products derived from it (issue 49).
const std::vector<std::string>& PowerOfTwoTokens();

}  // namespace blueprint::testing

#endif  // BLUEPRINTING_CORE_TESTING_EXTREME_VALUES_H_
