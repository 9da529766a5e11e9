#include "core/taskir/lineage_node.h"

#include "gtest/gtest.h"

namespace blueprint {
namespace {

// Every kind reads back what it prints.
TEST(LineageNode, RoundTripsEveryKind) {
  for (const char* text :
       {"spec:model.hidden", "derived:microbatches", "system:networks[1]@fw",
        "task:3", "plan:3", "block:block_fw_time", "first_stage:block_fw_time",
        "last_stage:block_optim_time", "iteration:chunk_time",
        "memory:act_space", "schedule:simulated_bubble_time",
        "timeline:stage[0]", "step:p"}) {
    const std::optional<LineageNode> node = ParseLineageNode(text);
    ASSERT_TRUE(node.has_value()) << text;
    EXPECT_EQ(node->ToString(), text);
  }
  const std::optional<LineageNode> task = ParseLineageNode("task:12");
  EXPECT_EQ(task->kind, LineageNodeKind::kTask);
  EXPECT_EQ(task->name, "12");
}

TEST(LineageNode, RejectsAnUnknownKindOrNoColon) {
  EXPECT_FALSE(ParseLineageNode("blocks:x").has_value());
  EXPECT_FALSE(ParseLineageNode("total_time").has_value());
  EXPECT_FALSE(ParseLineageNode("").has_value());
}

}  // namespace
}  // namespace blueprint
