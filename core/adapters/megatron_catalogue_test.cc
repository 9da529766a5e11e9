#include "core/adapters/megatron_catalogue.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/adapters/megatron.h"
#include "core/testing/files.h"
#include "gtest/gtest.h"
#include "re2/re2.h"

namespace blueprint {
namespace {

using test_files::ReadFile;

// The modelled flags Megatron-LM (at the catalogue's commit) does not have.
const std::set<std::string>& NotInMegatron() {
  static const auto* names = new std::set<std::string>{
      "--world-size",                            // torchrun's WORLD_SIZE
      "--virtual-pipeline-model-parallel-size",  // older Megatron-LM
  };
  return *names;
}

TEST(MegatronCatalogue, IsSortedCompleteAndClassified) {
  EXPECT_TRUE(RE2::FullMatch(MegatronCatalogueCommit(), "[0-9a-f]{40}"));
  EXPECT_GT(MegatronCatalogue().size(), 800u);
  absl::string_view previous;
  for (const MegatronCatalogueEntry& entry : MegatronCatalogue()) {
    SCOPED_TRACE(entry.name);
    EXPECT_TRUE(RE2::FullMatch(entry.name, "--[A-Za-z0-9][A-Za-z0-9_-]*"));
    EXPECT_LT(previous, absl::string_view(entry.name)) << "sorted, unique";
    previous = entry.name;
    EXPECT_EQ(FindMegatronCatalogueEntry(entry.name), &entry);
    EXPECT_LE(entry.arity.min, entry.arity.max);
    EXPECT_EQ(entry.arity.max == 0, *entry.value_type == '\0');
    EXPECT_NE(entry.flag_class, MegatronFlagClass::kUnclassified)
        << "classify it in megatron_catalogue.inc";
    const absl::string_view reason = entry.reason;
    EXPECT_EQ(reason.empty(), entry.flag_class == MegatronFlagClass::kModelled);
    EXPECT_EQ(reason.find('\n'), absl::string_view::npos);
  }
  EXPECT_EQ(FindMegatronCatalogueEntry("--world-size"), nullptr);
  EXPECT_EQ(FindMegatronCatalogueEntry("--lr")->flag_class,
            MegatronFlagClass::kIgnored);
  EXPECT_EQ(FindMegatronCatalogueEntry("--num-experts")->flag_class,
            MegatronFlagClass::kModelled);
  EXPECT_EQ(FindMegatronCatalogueEntry("--moe-latent-size")->flag_class,
            MegatronFlagClass::kUnmodelled);
  EXPECT_EQ(FindMegatronCatalogueEntry("--rampup-batch-size")->arity.min, 3);
}

// The catalogue's modelled flags are exactly MegatronFlags(), with the same
// arity, and their choices are Megatron-LM's.
TEST(MegatronCatalogue, ModelledFlagsAreTheTable) {
  std::set<std::string> modelled;
  for (const MegatronCatalogueEntry& entry : MegatronCatalogue()) {
    if (entry.flag_class == MegatronFlagClass::kModelled) {
      modelled.insert(entry.name);
    }
  }
  std::set<std::string> table;
  for (const MegatronFlag& flag : MegatronFlags()) {
    SCOPED_TRACE(flag.name);
    const MegatronCatalogueEntry* entry = FindMegatronCatalogueEntry(flag.name);
    if (NotInMegatron().count(flag.name) > 0) {
      EXPECT_EQ(entry, nullptr);
      continue;
    }
    table.insert(flag.name);
    ASSERT_NE(entry, nullptr);
    switch (flag.kind) {
      case MegatronFlagKind::kSwitch:
        EXPECT_EQ(entry->arity.max, 0);
        break;
      case MegatronFlagKind::kPositiveInteger:
      case MegatronFlagKind::kCount:
      case MegatronFlagKind::kNumber:
      case MegatronFlagKind::kLayerPattern:
        // One value, of argparse's type int, float or Megatron-LM's
        // moe_freq_type.
        EXPECT_EQ(entry->arity.min, 1);
        EXPECT_EQ(entry->arity.max, 1);
        EXPECT_EQ(absl::string_view(entry->value_type),
                  flag.kind == MegatronFlagKind::kPositiveInteger ||
                          flag.kind == MegatronFlagKind::kCount
                      ? "int"
                  : flag.kind == MegatronFlagKind::kNumber        ? "float"
                                                           : "moe_freq_type");
        break;
      case MegatronFlagKind::kText:
        EXPECT_EQ(entry->arity.min, 1);
        EXPECT_EQ(entry->arity.max, 1);
        EXPECT_EQ(absl::string_view(entry->value_type), "str");
        break;
      case MegatronFlagKind::kChoicePerLayer:
      case MegatronFlagKind::kChoiceList:
        // argparse's nargs='+' of any str: Megatron-LM checks the words later.
        EXPECT_EQ(entry->arity.min, 1);
        EXPECT_EQ(entry->arity.max, kMegatronUnbounded);
        EXPECT_EQ(absl::string_view(entry->value_type), "str");
        EXPECT_EQ(absl::string_view(entry->choices), "");
        break;
      case MegatronFlagKind::kChoice: {
        EXPECT_EQ(entry->arity.min, 1);
        EXPECT_EQ(entry->arity.max, 1);
        const std::vector<std::string> choices =
            absl::StrSplit(entry->choices, '|');
        for (const std::string& choice : flag.choices) {
          EXPECT_NE(std::find(choices.begin(), choices.end(), choice),
                    choices.end())
              << choice;
        }
        break;
      }
    }
  }
  EXPECT_EQ(modelled, table);
}

// megatron_catalogue.md is MegatronCatalogueMarkdown(), so that the
// documentation and the catalogue cannot drift apart.
TEST(MegatronCatalogue, DocumentationIsTheCatalogue) {
  const std::string shown = ReadFile("core/adapters/megatron_catalogue.md");
  const std::string want = MegatronCatalogueMarkdown();
  EXPECT_TRUE(shown == want)
      << "core/adapters/megatron_catalogue.md differs from "
         "MegatronCatalogueMarkdown(); write this into it:\n"
      << want;
}

}  // namespace
}  // namespace blueprint
