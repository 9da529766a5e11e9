#include "core/presets/presets.h"
#include "core/testing/files.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace blueprint {
namespace {

using test_files::ReadFile;

// Every embedded preset is its file byte for byte.
TEST(Presets, AreTheFilesOfPresetsDirectory) {
  for (const PresetKind kind : {PresetKind::kModel, PresetKind::kSystem}) {
    const std::vector<std::string> names = PresetNames(kind);
    EXPECT_FALSE(names.empty());
    for (const std::string& name : names) {
      const std::string path = std::string("presets/") + PresetDirectory(kind) +
                               "/" + name + ".json";
      const char* text = FindPreset(kind, name);
      ASSERT_NE(text, nullptr) << name;
      EXPECT_EQ(text, ReadFile(path)) << path;
    }
  }
}

TEST(Presets, NamesTheShippedOnes) {
  const std::vector<std::string> systems = PresetNames(PresetKind::kSystem);
  EXPECT_EQ(systems,
            (std::vector<std::string>{"a100_sxm_80g", "b200_sxm_180g", "b300_sxm_288g",
                                      "gb200_nvl72", "gb300_nvl72", "h100_sxm_80g",
                                      "h200_sxm_141g", "h800_sxm_80g",
                                      "jean_zay_a100_80g"}));
  const std::vector<std::string> models = PresetNames(PresetKind::kModel);
  for (const char* name :
       {"llama2-7b", "llama2-13b", "llama2-70b", "llama3.1-8b", "llama3.1-70b",
        "llama3.1-405b", "mistral-7b-v0.1", "mistral-7b-v0.3", "qwen2.5-7b",
        "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b", "qwen3-8b", "qwen3-14b",
        "qwen3-32b", "mixtral-8x7b-v0.1", "mixtral-8x22b-v0.1", "qwen3-30b-a3b",
        "qwen3-235b-a22b", "deepseek-v3"}) {
    EXPECT_NE(FindPreset(PresetKind::kModel, name), nullptr) << name;
  }
  EXPECT_TRUE(std::is_sorted(models.begin(), models.end()));
}

TEST(Presets, UnknownNamesAndKindsAreNotFound) {
  EXPECT_EQ(FindPreset(PresetKind::kSystem, "llama2-7b"), nullptr);
  EXPECT_EQ(FindPreset(PresetKind::kModel, "h100_sxm_80g"), nullptr);
  EXPECT_EQ(FindPreset(PresetKind::kModel, ""), nullptr);
  EXPECT_EQ(FindPreset(PresetKind::kModel, "llama2-7b.json"), nullptr);
}

}  // namespace
}  // namespace blueprint
