#include "core/search/top_n.h"

#include <string>

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
