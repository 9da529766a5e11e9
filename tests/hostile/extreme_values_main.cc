// The extreme-value property (core/testing/extreme_values.h) over every
// numeric field of some valid specs: each field alone set to every extreme
// token, then COUNT random mutations of several fields at once (a fixed-seed
// SplitMix64 stream). Prints one record per mutated spec on stdout, every
// broken property on stderr, and exits 1 when one broke. Built natively and
// to wasm; the test compares the two outputs byte for byte.
//
// With --powers instead of COUNT SEED: each integer field alone set to 2^k
// for k = 16 ... 62 (issue 49: sizes that pass a field's own rules but not
// the bounds of what is derived from them), and no random mutations.
//
// usage: extreme_values COUNT SEED INPUT...
//        extreme_values --powers INPUT...
//   INPUT is a spec JSON file, or a directory holding Calculon's app.json,
//   exe.json and sys.json (imported to a spec first).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/api/commands.h"
#include "core/testing/extreme_values.h"
#include "core/testing/split_mix.h"

namespace blueprint::testing {
namespace {


bool ReadText(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  *out = text.str();
  return true;
}

// The spec of one INPUT, or "" when it cannot be read.
std::string LoadSpec(const std::string& input) {
  std::string spec;
  if (ReadText(input + "/app.json", &spec)) {
    std::string exe, sys;
    if (!ReadText(input + "/exe.json", &exe) ||
        !ReadText(input + "/sys.json", &sys)) {
      return "";
    }
    const CommandResult imported = ImportCalculon(spec, exe, sys);
    return imported.exit_code == kExitOk ? imported.output : "";
  }
  return ReadText(input, &spec) ? spec : "";
}

int Main(int argc, char** argv) {
  int64_t count = 0;
  uint64_t seed = 0;
  const bool powers = argc >= 3 && std::string(argv[1]) == "--powers";
  if (!powers && (argc < 4 || !absl::SimpleAtoi(argv[1], &count) ||
                  !absl::SimpleAtoi(argv[2], &seed))) {
    std::fprintf(stderr,
                 "usage: extreme_values COUNT SEED INPUT...\n"
                 "       extreme_values --powers INPUT...\n");
    return 1;
  }
  std::vector<std::string> specs;
  for (int i = powers ? 2 : 3; i < argc; ++i) {
    specs.push_back(LoadSpec(argv[i]));
    if (specs.back().empty()) {
      std::fprintf(stderr, "cannot load %s\n", argv[i]);
      return 1;
    }
  }
  int64_t cases = 0, accepted = 0, broken = 0;
  auto run = [&](const std::string& label, const std::string& spec) {
    const PropertyOutcome outcome = CheckExtremeValueProperty(spec);
    ++cases;
    if (outcome.record.rfind("check=0", 0) == 0) ++accepted;
    std::printf("%s %s\n", label.c_str(), outcome.record.c_str());
    for (const std::string& line : outcome.broken) {
      ++broken;
      std::fprintf(stderr, "BROKEN %s: %s\n", label.c_str(), line.c_str());
    }
  };
  const std::vector<std::string>& tokens =
      powers ? PowerOfTwoTokens() : ExtremeTokens();
  for (size_t s = 0; s < specs.size(); ++s) {
    run(absl::StrCat(s, ":base"), specs[s]);
    for (const std::string& leaf :
         powers ? IntegerLeaves(specs[s]) : NumericLeaves(specs[s])) {
      for (const std::string& token : tokens) {
        run(absl::StrCat(s, ":", leaf, "=", token),
            WithLeaf(specs[s], leaf, token));
      }
    }
  }
  SplitMix64 random(seed);
  for (int64_t i = 0; i < count; ++i) {
    const size_t s = random.Below(specs.size());
    std::string spec = specs[s];
    const std::vector<std::string> leaves = NumericLeaves(spec);
    std::string label = absl::StrCat(s, ":random", i);
    const size_t mutations = 2 + random.Below(3);
    for (size_t k = 0; k < mutations && !leaves.empty(); ++k) {
      const std::string& leaf = leaves[random.Below(leaves.size())];
      const std::string& token = tokens[random.Below(tokens.size())];
      spec = WithLeaf(spec, leaf, token);
      absl::StrAppend(&label, ",", leaf, "=", token);
    }
    run(label, spec);
  }
  std::printf("cases %lld accepted %lld broken %lld\n",
              static_cast<long long>(cases), static_cast<long long>(accepted),
              static_cast<long long>(broken));
  return broken == 0 ? 0 : 1;
}

}  // namespace
}  // namespace blueprint::testing

int main(int argc, char** argv) {
  return blueprint::testing::Main(argc, argv);
}
