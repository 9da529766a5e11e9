#include "core/search/top_n.h"

#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace blueprint {
namespace {

TEST(TopNTest, KeepsTheBestInDescendingOrder) {
  TopN<std::string> top(3);
  EXPECT_TRUE(top.Admits(-1e300));
  const struct {
    double score;
    const char* name;
  } offers[] = {{1, "a"}, {5, "b"}, {3, "c"}, {4, "d"}, {0.5, "e"}, {6, "f"}};
  for (const auto& o : offers) {
    if (top.Admits(o.score)) top.Insert(o.score) = o.name;
  }
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top.entry(0), "f");
  EXPECT_EQ(top.entry(1), "b");
  EXPECT_EQ(top.entry(2), "d");
  EXPECT_EQ(top.worst_score(), 4);
}

// Calculon keeps equal sample rates in enumeration order and replaces the
// last entry only with a strictly better one.
TEST(TopNTest, EqualScoresKeepOfferOrder) {
  TopN<std::string> top(3);
  for (const char* name : {"first", "second", "third", "fourth"}) {
    if (top.Admits(2.0)) top.Insert(2.0) = name;
  }
  EXPECT_EQ(top.entry(0), "first");
  EXPECT_EQ(top.entry(1), "second");
  EXPECT_EQ(top.entry(2), "third");
  EXPECT_FALSE(top.Admits(2.0));
  ASSERT_TRUE(top.Admits(2.5));
  top.Insert(2.5) = "better";
  EXPECT_EQ(top.entry(0), "better");
  EXPECT_EQ(top.entry(1), "first");
  EXPECT_EQ(top.entry(2), "second");
}

// Keyed entries may come out of key order (the search's workers take runs
// of groups heaviest first): equal scores rank by key, and an equal score
// with a smaller key displaces the last one.
TEST(TopNTest, EqualScoresRankByKey) {
  TopN<std::string> top(3);
  const std::pair<TopN<std::string>::Key, const char*> offers[] = {
      {{5, 0}, "g5"}, {{7, 1}, "g7"}, {{2, 2}, "g2 a"}, {{2, 3}, "g2 b"},
      {{9, 4}, "g9"}};
  for (const auto& [key, name] : offers) {
    if (top.Admits(2.0, key)) top.Insert(2.0, key) = name;
  }
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top.entry(0), "g2 a");
  EXPECT_EQ(top.entry(1), "g2 b");
  EXPECT_EQ(top.entry(2), "g5");
  EXPECT_EQ(top.key(2), (TopN<std::string>::Key{5, 0}));
  EXPECT_FALSE(top.Admits(2.0, {5, 1}));
  EXPECT_TRUE(top.Admits(2.0, {4, 9}));
  EXPECT_FALSE(top.Admits(2.0));  // no key: after every kept one
  EXPECT_TRUE(top.Admits(2.5, {99, 0}));
}

TEST(TopNTest, CapacityOne) {
  TopN<int> top(1);
  for (int i = 0; i < 10; ++i) {
    const double score = i % 3;
    if (top.Admits(score)) top.Insert(score) = i;
  }
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top.entry(0), 2);  // the first of the 2.0 scores
}

}  // namespace
}  // namespace blueprint
