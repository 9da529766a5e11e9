#include "core/search/search_flags.h"

#include <optional>
#include <set>
#include <string>

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
    EXPECT_EQ(flag.kind == SearchFlagKind::kChoice, !flag.choices.empty())
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

TEST(SearchFlagsTest, Synopsis) {
  EXPECT_EQ(SearchFlagsSynopsis(),
            "--app APP.json --system SYS.json --procs N --max-batch B "
            "--datatype D [--top K] [--mbs-break] [--no-tp-overlap] "
            "[--no-dp-overlap] [--fused-activation true|false|all] "
            "[--precision calculon|megatron_mixed] "
            "[--profile calculon|refined] [--max-context N] "
            "[--context-exchange ring|all_gather|all] "
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
