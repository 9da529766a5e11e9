// Replays every fuzz seed (core/adapters/fuzz_seeds/, written by
// tools/make_fuzz_seeds) through the fuzzer's own entry point, so that
// bazel test checks natively and under wasm what the fuzzer starts from: no
// crash and no broken round-trip invariant (FuzzAdapters aborts on one).
//   fuzz_seeds_replay_test SEED...
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/adapters/fuzz_entry.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

std::vector<std::string>* seed_paths = nullptr;

TEST(FuzzSeeds, ReplayEverySeed) {
  ASSERT_NE(seed_paths, nullptr);
  ASSERT_GE(seed_paths->size(), 100u) << "seed corpus missing";
  for (const std::string& path : *seed_paths) {
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in.good()) << "cannot read " << path;
    std::stringstream contents;
    contents << in.rdbuf();
    const std::string data = contents.str();
    SCOPED_TRACE(path);
    FuzzAdapters(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    // Every prefix too: truncated documents are the commonest bad input.
    for (size_t size :
         {size_t{0}, size_t{1}, data.size() / 2, data.size() - 1}) {
      if (size <= data.size()) {
        FuzzAdapters(reinterpret_cast<const uint8_t*>(data.data()), size);
      }
    }
  }
}

}  // namespace
}  // namespace blueprint

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  std::vector<std::string> paths(argv + 1, argv + argc);
  blueprint::seed_paths = &paths;
  return RUN_ALL_TESTS();
}
