#include "core/search/search_flags.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/testing/files.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

// Every row is complete, and every flag that sets an option has a setter.
TEST(SearchFlagsTest, RowsAreComplete) {
  std::set<std::string> names;
  for (const SearchFlag& flag : SearchFlags()) {
    EXPECT_TRUE(names.insert(flag.name).second) << flag.name;
    EXPECT_EQ(std::string(flag.name).rfind("--", 0), 0u) << flag.name;
    EXPECT_NE(std::string(flag.doc), "") << flag.name;
    EXPECT_NE(std::string(flag.absent), "") << flag.name;
    EXPECT_EQ(flag.kind == SearchFlagKind::kCallerFile, flag.set == nullptr)
        << flag.name;
    EXPECT_EQ(flag.kind == SearchFlagKind::kChoice ||
                  flag.kind == SearchFlagKind::kChoiceList,
              !flag.choices.empty())
        << flag.name;
    if (flag.kind == SearchFlagKind::kPositiveInteger) {
      EXPECT_GT(flag.max, 0) << flag.name;
    }
    if (*flag.needs != '\0') {
      EXPECT_EQ(names.count(flag.needs), 1u)
          << flag.name << " needs a flag of an earlier row";
    }
  }
}

// The datatypes are the spec's (core/spec/enums.h), in its order.
TEST(SearchFlagsTest, ChoicesComeFromTheSpecsEnums) {
  const absl::StatusOr<SearchOptions> o = ParseSearchFlags(
      {"--procs", "8", "--max-batch", "8", "--datatype", "float64"});
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(std::string(o.status().message()),
            "--datatype: expected float8, float16, bfloat16 or float32, got "
            "\"float64\"");
  const absl::StatusOr<SearchOptions> every = ParseSearchFlags(
      {"--procs", "8", "--max-batch", "8", "--datatype", "float8",
       "--context-exchange", "all", "--sharding", "all", "--schedules", "all",
       "--stage-layouts", "all", "--max-context", "4", "--threads", "2",
       "--json", "--specs", "--partition", "0/3"});
  ASSERT_TRUE(every.ok()) << every.status();
  EXPECT_EQ(every->datatype, DataType::kFloat8);
  EXPECT_EQ(every->context_exchange.size(), 2u);
  EXPECT_TRUE(every->every_sharding);
  EXPECT_TRUE(every->every_schedule);
  EXPECT_TRUE(every->uneven_stages);
  EXPECT_EQ(every->max_context, 4);
  EXPECT_EQ(every->threads, 2);
  EXPECT_TRUE(every->specs);
  EXPECT_EQ(every->partition, 0);
  EXPECT_EQ(every->partitions, 3);
}

// --recipes and --expert-dispatchers take calculon, all or a list of the
// spec's spellings; --expert-overlap calculon or all. Errors name the flag
// and the values allowed.
TEST(SearchFlagsTest, VariantFlags) {
  const std::vector<std::string> base = {"--procs", "8", "--max-batch", "8",
                                         "--datatype", "bfloat16"};
  const auto parse = [&](std::vector<std::string> more) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    return ParseSearchFlags(args);
  };
  absl::StatusOr<SearchOptions> o = parse({});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->recipes,
            std::vector<QuantizationRecipe>{QuantizationRecipe::kNone});
  EXPECT_FALSE(o->every_recipe);
  EXPECT_EQ(o->expert_dispatchers,
            std::vector<ExpertDispatcher>{ExpertDispatcher::kAllToAll});
  EXPECT_EQ(o->expert_overlap, std::vector<bool>{false});
  o = parse({"--recipes", "all", "--expert-dispatchers", "all",
             "--expert-overlap", "all"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->every_recipe);
  EXPECT_EQ(o->expert_dispatchers.size(), 4u);
  EXPECT_EQ(o->expert_overlap, (std::vector<bool>{false, true}));
  o = parse({"--recipes=mxfp8,none", "--expert-dispatchers", "hybrid_ep"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->recipes,
            (std::vector<QuantizationRecipe>{QuantizationRecipe::kMxfp8,
                                             QuantizationRecipe::kNone}));
  EXPECT_EQ(o->expert_dispatchers,
            std::vector<ExpertDispatcher>{ExpertDispatcher::kHybridEp});
  o = parse({"--recipes", "mxfp8,fp16", "--expert-dispatchers",
             "deep_ep,deep_ep", "--expert-overlap", "yes"});
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(std::string(o.status().message()),
            "--recipes: expected calculon, all or a comma-separated list of "
            "none, fp8_delayed, fp8_tensorwise, fp8_blockwise, mxfp8 or "
            "nvfp4, got \"mxfp8,fp16\" (unknown \"fp16\")\n"
            "--expert-dispatchers: expected calculon, all or a "
            "comma-separated list of all_to_all, deep_ep, hybrid_ep or "
            "all_gather, got "
            "\"deep_ep,deep_ep\" (\"deep_ep\" is listed twice)\n"
            "--expert-overlap: expected calculon or all, got \"yes\"");
}

TEST(SearchFlagsTest, Synopsis) {
  EXPECT_EQ(SearchFlagsSynopsis(),
            "--app APP.json --system SYS.json --procs N --max-batch B "
            "--datatype D [--top K] [--mbs-break] [--no-tp-overlap] "
            "[--no-dp-overlap] [--fused-activation true|false|all] "
            "[--precision calculon|megatron_mixed] "
            "[--profile calculon|refined] [--max-context N] "
            "[--context-exchange ring|all_gather|all] "
            "[--recipes "
            "calculon|all|none|fp8_delayed|fp8_tensorwise|fp8_blockwise|"
            "mxfp8|nvfp4] "
            "[--expert-dispatchers "
            "calculon|all|all_to_all|deep_ep|hybrid_ep|all_gather] "
            "[--expert-overlap calculon|all] "
            "[--sharding calculon|all] [--schedules calculon|all] "
            "[--stage-layouts calculon|megatron|all] [--threads N] [--exhaustive] "
            "[--json [--specs] [--partition I/N]]");
}

// The README's flag table is SearchFlagsMarkdown(), so that the
// documentation and the parser cannot drift apart.
TEST(SearchFlagsTest, ReadmeShowsTheFlagTable) {
  const std::optional<std::string> shown = test_files::MarkedSection(
      "core/search/README.md", "SearchFlagsMarkdown()");
  ASSERT_TRUE(shown.has_value())
      << "core/search/README.md has no SearchFlagsMarkdown() markers";
  EXPECT_TRUE(*shown == SearchFlagsMarkdown())
      << "core/search/README.md's flag table differs from "
         "SearchFlagsMarkdown(); put this between its markers:\n"
      << SearchFlagsMarkdown();
}

}  // namespace
}  // namespace blueprint
