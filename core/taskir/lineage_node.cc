#include "core/taskir/lineage_node.h"

#include "absl/strings/str_cat.h"

namespace blueprint {

const char* LineageNodeKindName(LineageNodeKind kind) {
  switch (kind) {
    case LineageNodeKind::kSpec:
      return "spec";
    case LineageNodeKind::kDerived:
      return "derived";
    case LineageNodeKind::kSystem:
      return "system";
    case LineageNodeKind::kTask:
      return "task";
    case LineageNodeKind::kPlan:
      return "plan";
    case LineageNodeKind::kBlock:
      return "block";
    case LineageNodeKind::kFirstStage:
      return "first_stage";
    case LineageNodeKind::kLastStage:
      return "last_stage";
    case LineageNodeKind::kIteration:
      return "iteration";
    case LineageNodeKind::kMemory:
      return "memory";
    case LineageNodeKind::kSchedule:
      return "schedule";
    case LineageNodeKind::kTimeline:
      return "timeline";
    case LineageNodeKind::kStep:
      return "step";
  }
  return "";
}

std::string LineageNode::ToString() const {
  return absl::StrCat(LineageNodeKindName(kind), ":", name);
}

std::optional<LineageNode> ParseLineageNode(absl::string_view text) {
  constexpr LineageNodeKind kKinds[] = {
      LineageNodeKind::kSpec,       LineageNodeKind::kDerived,
      LineageNodeKind::kSystem,     LineageNodeKind::kTask,
      LineageNodeKind::kPlan,       LineageNodeKind::kBlock,
      LineageNodeKind::kFirstStage, LineageNodeKind::kLastStage,
      LineageNodeKind::kIteration,  LineageNodeKind::kMemory,
      LineageNodeKind::kSchedule,   LineageNodeKind::kTimeline,
      LineageNodeKind::kStep,
  };
  const size_t colon = text.find(':');
  if (colon == absl::string_view::npos) return std::nullopt;
  const absl::string_view kind = text.substr(0, colon);
  for (LineageNodeKind k : kKinds) {
    if (kind == LineageNodeKindName(k)) {
      return LineageNode{k, std::string(text.substr(colon + 1))};
    }
  }
  return std::nullopt;
}

}  // namespace blueprint
