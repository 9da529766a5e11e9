// The golden test: recomputes every case of golden/MANIFEST and compares the
// digest of each stage's canonical text with the manifest. On a mismatch it
// prints the case, the stage, a diff against the stored text and the update
// command. Built natively and to wasm (bp_cc_test), so it also proves that
// both builds produce the manifest's bytes.
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "core/base/sha256.h"
#include "core/golden/golden.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

constexpr char kUpdate[] = "bazel run //tools:update_golden";

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  *out = text.str();
  return true;
}

TEST(Golden, EveryCaseMatchesTheManifest) {
  std::string manifest;
  ASSERT_TRUE(ReadFile("golden/MANIFEST", &manifest))
      << "golden/MANIFEST is missing; run " << kUpdate;
  // case -> stage -> digest, in manifest order.
  std::map<std::string, std::map<std::string, std::string>> expected;
  std::vector<std::string> order;
  for (absl::string_view line : absl::StrSplit(manifest, '\n')) {
    if (line.empty()) continue;
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    ASSERT_EQ(f.size(), 3u) << "bad manifest line: " << line;
    if (!expected.count(f[0])) order.push_back(f[0]);
    expected[f[0]][f[1]] = f[2];
  }
  ASSERT_GE(order.size(), 80u);
  for (const std::string& name : order) {
    const std::string dir = "golden/cases/" + name + "/";
    CaseFiles files;
    for (const std::string& input : CaseInputNames()) {
      std::string text;
      if (ReadFile(dir + input, &text)) files[input] = text;
    }
    ASSERT_FALSE(files.empty()) << name << ": no input files";
    const std::vector<StageText> stages = EvaluateCase(files);
    std::set<std::string> seen;
    for (const StageText& stage : stages) {
      seen.insert(stage.stage);
      auto it = expected[name].find(stage.stage);
      if (it == expected[name].end()) {
        ADD_FAILURE() << name << ": stage " << stage.stage
                      << " is not in the manifest; run " << kUpdate;
        continue;
      }
      const std::string digest = Sha256Hex(stage.text);
      if (digest == it->second) continue;
      std::string stored;
      ReadFile(dir + "out/" + stage.stage + ".txt", &stored);
      ADD_FAILURE() << name << ": stage " << stage.stage << " digest "
                    << digest << " != manifest " << it->second << "\n"
                    << LineDiff(stored, stage.text)
                    << "If the change is intended, run: " << kUpdate;
    }
    for (const auto& [stage, digest] : expected[name]) {
      EXPECT_TRUE(seen.count(stage))
          << name << ": manifest stage " << stage
          << " is no longer produced; run " << kUpdate;
    }
  }
}

}  // namespace
}  // namespace blueprint
