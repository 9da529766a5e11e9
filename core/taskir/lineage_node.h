// Typed lineage node ids. Every IR records where a node came from as text
// "kind:name" (Lineage::sources, printed as is in the canonical texts, e.g.
// "spec:model.hidden", "task:3", "iteration:chunk_time"); a LineageNode is
// that id parsed once, so that a consumer (core/report's explain) dispatches
// on an enum, switched without a default, instead of comparing prefixes.
#ifndef BLUEPRINTING_CORE_TASKIR_LINEAGE_NODE_H_
#define BLUEPRINTING_CORE_TASKIR_LINEAGE_NODE_H_

#include <optional>
#include <string>
#include <tuple>

#include "absl/strings/string_view.h"

namespace blueprint {

// What a lineage node is; LineageNodeKindName spells it before the ':'.
enum class LineageNodeKind {
  kSpec,        // "spec": a field of the spec, by JSON path
  kDerived,     // "derived": a derived value (core/spec/derive.h)
  kSystem,      // "system": a system parameter, by JSON path [@stage]
  kTask,        // "task": a task of the task IR, by id
  kPlan,        // "plan": a task's plan in the plan IR, by id
  kBlock,       // "block": a block figure of the plan IR
  kFirstStage,  // "first_stage": a figure of the first stage's own work
  kLastStage,   // "last_stage": a figure of the last stage's own work
  kIteration,   // "iteration": an iteration figure, schedule term or
                // per-rank figure
  kMemory,      // "memory": a memory figure
  kSchedule,    // "schedule": a figure of the simulated schedule
  kTimeline,    // "timeline": a stage of the simulated timeline, "stage[S]"
  kStep,        // "step": a step term of a formula (core/analysis/lineage.h)
};
const char* LineageNodeKindName(LineageNodeKind kind);

struct LineageNode {
  LineageNodeKind kind;
  std::string name;  // what follows the ':'

  // "kind:name", the text the canonical texts print.
  std::string ToString() const;

  friend bool operator==(const LineageNode& a, const LineageNode& b) {
    return a.kind == b.kind && a.name == b.name;
  }
  friend bool operator<(const LineageNode& a, const LineageNode& b) {
    return std::tie(a.kind, a.name) < std::tie(b.kind, b.name);
  }
};

// The node of "kind:name", or nullopt when the text has no ':' or an
// unknown kind.
std::optional<LineageNode> ParseLineageNode(absl::string_view text);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_TASKIR_LINEAGE_NODE_H_
