// The table of modelled flags (megatron_flags.cc): its names, its rows and
// the README's copy of it.
#include "core/adapters/megatron.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "core/adapters/megatron_test_util.h"
#include "core/spec/spec.h"
#include "core/spec/spec_json.h"
#include "core/testing/files.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

using megatron_test::A100;
using megatron_test::Args;

TEST(Megatron, FlagNames) {
  EXPECT_EQ(MegatronFlagNames().size(), 78u);
  EXPECT_EQ(MegatronFlagNames().front(), "--num-layers");
  ASSERT_EQ(MegatronFlagNames().size(), MegatronFlags().size());
  for (size_t i = 0; i < MegatronFlags().size(); ++i) {
    EXPECT_EQ(MegatronFlagNames()[i], MegatronFlags()[i].name);
  }
}

// The path `path` ("a.b.c") in `json`, or nullptr.
const nlohmann::json* AtPath(const nlohmann::json& json,
                             const std::string& path) {
  const nlohmann::json* node = &json;
  for (const std::string& key :
       std::vector<std::string>(absl::StrSplit(path, '.'))) {
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
  }
  return node;
}

TEST(Megatron, TableRowsAreWellFormed) {
  // With experts, latent attention and a stage layout, so that their
  // fields are printed.
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      Args("--num-layers 24 --hidden-size 1024 --num-attention-heads 16 "
           "--seq-length 1024 --micro-batch-size 2 --num-experts 4 "
           "--multi-latent-attention --account-for-loss-in-pipeline-split"),
      A100());
  ASSERT_TRUE(spec.ok()) << spec.status();
  const nlohmann::json canonical = nlohmann::json::parse(SpecToJson(*spec));
  std::set<std::string> names;
  for (const MegatronFlag& flag : MegatronFlags()) {
    SCOPED_TRACE(flag.name);
    EXPECT_TRUE(names.insert(flag.name).second) << "listed twice";
    EXPECT_EQ(flag.name.rfind("--", 0), 0u);
    // The field is a path of the canonical spec, in one of the sections
    // FromMegatronArgs fills.
    EXPECT_NE(AtPath(canonical, flag.field), nullptr) << flag.field;
    const std::string section = flag.field.substr(0, flag.field.find('.'));
    EXPECT_TRUE(section == "model" || section == "parallelism" ||
                section == "batch" || section == "options")
        << flag.field;
    EXPECT_EQ(flag.choices.empty(),
              flag.kind != MegatronFlagKind::kChoice &&
                  flag.kind != MegatronFlagKind::kChoicePerLayer &&
                  flag.kind != MegatronFlagKind::kChoiceList);
    EXPECT_FALSE(flag.absent.empty());
    EXPECT_FALSE(flag.doc.empty());
    for (const std::string& text : {flag.absent, flag.doc}) {
      EXPECT_EQ(text.find('\n'), std::string::npos) << text;
    }
    if (flag.absent == kMegatronRequired) {
      EXPECT_EQ(flag.kind, MegatronFlagKind::kPositiveInteger);
      EXPECT_NE(flag.set, nullptr);
    }
  }
}

// The README's flag table is MegatronFlagsMarkdown(), so that the
// documentation and the parser cannot drift apart.
TEST(Megatron, ReadmeShowsTheFlagTable) {
  const std::optional<std::string> shown = test_files::MarkedSection(
      "core/adapters/README.md", "MegatronFlagsMarkdown()");
  ASSERT_TRUE(shown.has_value())
      << "core/adapters/README.md has no MegatronFlagsMarkdown() markers";
  EXPECT_TRUE(*shown == MegatronFlagsMarkdown())
      << "core/adapters/README.md's flag table differs from "
         "MegatronFlagsMarkdown(); put this between its markers:\n"
      << MegatronFlagsMarkdown();
}

}  // namespace
}  // namespace blueprint
