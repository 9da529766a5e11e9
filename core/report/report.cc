#include "core/report/report.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/analysis/lineage.h"
#include "core/analysis/stages.h"
#include "core/base/format.h"
#include "core/base/json.h"
#include "core/base/sha256.h"
#include "core/base/status_macros.h"
#include "core/report/calculon_stats.h"
#include "core/spec/spec_json.h"
#include "core/taskir/lineage_node.h"

namespace blueprint {
namespace {

nlohmann::json MappingJson(const PipelineResult& r) {
  const DerivedValues& d = r.program.derived;
  nlohmann::json j = nlohmann::json::object();
  j["schedule"] = PipelineScheduleName(r.program.pipeline().schedule);
  j["tensor"] = d.tensor;
  j["pipeline"] = d.pipeline;
  j[d.training ? "data" : "replicas"] = d.data;
  j["virtual_stages"] = d.virtual_stages;
  j["world_size"] = d.world_size;
  j["global_batch_size"] = r.program.batch().global_batch_size;
  j["microbatch_size"] = r.program.batch().microbatch_size;
  j["microbatches"] = d.microbatches;
  j["blocks_per_stage"] = d.blocks_per_stage;
  j["blocks_per_chunk"] = d.blocks_per_chunk;
  j["bubble_reduction_blocks"] = d.bubble_reduction_blocks;
  j["tensor_communication"] =
      TensorCommunicationName(r.program.tensor().communication);
  j["recompute"] = RecomputeName(d.recompute);
  return j;
}

}  // namespace

nlohmann::json ReportJson(const PipelineResult& r) {
  nlohmann::json report = nlohmann::json::object();
  report["format"] = kReportFormat;
  report["kind"] = r.program.derived.training ? "training" : "inference";
  report["mapping"] = MappingJson(r);
  nlohmann::json figures =
      CalculonStatsJson(r.plan.block, r.iteration.figures, r.memory.figures);
  ForEachScheduleTerm(r.iteration.figures,
                      [&](const char* name, double value) {
                        figures[name] = value;
                      });
  ForEachMemoryTerm(r.memory.figures, [&](const char* name, double value) {
    figures[name] = value;
  });
  for (const NamedFigure& f : r.iteration.rank_figures) {
    figures[f.name] = f.value;
  }
  const ScheduleAnalysis& sim = r.schedule;
  nlohmann::json schedule = nlohmann::json::object();
  schedule["simulated"] = sim.simulated;
  if (sim.simulated) {
    figures["simulated_bubble_time"] = sim.simulated_bubble_time;
    figures["simulated_total_time"] = sim.simulated_total_time;
    schedule["makespan"] = sim.makespan;
    schedule["stage_busy_times"] = sim.stage_busy_times;
    schedule["stage_idle_times"] = sim.stage_idle_times;
    schedule["stage_peak_live_microbatches"] =
        sim.stage_peak_live_microbatches;
  } else {
    schedule["not_simulated"] = sim.not_simulated;
  }
  report["figures"] = std::move(figures);
  report["schedule"] = std::move(schedule);
  // Each (virtual) stage in model order (core/analysis/stages.h).
  nlohmann::json stages = nlohmann::json::array();
  for (const StageFigure& stage : StageFiguresOf(
           r.plan.block, StageExtras{r.plan.first_stage, r.plan.last_stage},
           r.iteration.step, r.iteration.figures, r.memory.figures)) {
    nlohmann::json entry = nlohmann::json::object();
    entry["rank"] = stage.rank;
    entry["chunk"] = stage.chunk;
    entry["blocks"] = stage.blocks;
    entry["microbatch_time"] = stage.microbatch_time;
    entry["rank_mem_tier1_req"] = stage.rank_mem_tier1_req;
    stages.push_back(std::move(entry));
  }
  report["stages"] = std::move(stages);
  nlohmann::json memory = nlohmann::json::object();
  memory["fits"] = r.memory.violations.empty();
  std::vector<std::string> violations;
  for (const FieldError& v : r.memory.violations) {
    violations.push_back(v.message);
  }
  memory["violations"] = violations;
  memory["tier1_capacity"] = r.memory.figures.tier1_capacity;
  memory["tier2_capacity"] = r.memory.figures.tier2_capacity;
  report["memory"] = std::move(memory);
  return report;
}

std::string ReportText(const PipelineResult& r) {
  return CanonicalJson(ReportJson(r)) + "\n";
}

std::string CalculonStatsText(const PipelineResult& r) {
  return CanonicalJson(CalculonStatsJson(r.plan.block, r.iteration.figures,
                                         r.memory.figures)) +
         "\n";
}

std::vector<StageText> StageTexts(const PipelineResult& r) {
  std::string spec = ProgramToJson(r.program);
  std::string lineage = "";
  for (const FigureLineage& f : DerivedLineage()) {
    absl::StrAppend(&lineage, "lineage derived:", f.figure, " pass=",
                    f.lineage.pass, " from [",
                    absl::StrJoin(f.lineage.sources, ","), "]\n");
  }
  return {
      {"spec", spec + lineage},
      {"task_ir", ToText(r.tasks)},
      {"plan_ir", ToText(r.plan)},
      {"iteration", ToText(r.iteration)},
      {"memory", ToText(r.memory)},
      {"schedule_analysis", ToText(r.schedule)},
      {"report", ReportText(r)},
  };
}

std::string DigestText(const PipelineResult& r) {
  std::string out;
  for (const StageText& stage : StageTexts(r)) {
    absl::StrAppend(&out, stage.stage, " ", Sha256Hex(stage.text), "\n");
  }
  return out;
}

namespace {

// Walks "a.b[2].c" in a JSON value; null when absent.
const nlohmann::json* JsonAt(const nlohmann::json& root,
                             const std::string& path) {
  const nlohmann::json* node = &root;
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    std::string key(part);
    std::vector<int> indices;
    while (!key.empty() && key.back() == ']') {
      const size_t open = key.rfind('[');
      if (open == std::string::npos) return nullptr;
      int index = 0;
      if (!absl::SimpleAtoi(key.substr(open + 1, key.size() - open - 2),
                            &index)) {
        return nullptr;
      }
      indices.insert(indices.begin(), index);
      key = key.substr(0, open);
    }
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
    for (int index : indices) {
      if (!node->is_array() || index < 0 ||
          static_cast<size_t>(index) >= node->size()) {
        return nullptr;
      }
      node = &(*node)[static_cast<size_t>(index)];
    }
  }
  return node;
}

std::string Snippet(const nlohmann::json* value) {
  if (value == nullptr) return "?";
  std::string text = CanonicalJson(*value, -1);
  if (text.size() > 100) text = text.substr(0, 97) + "...";
  return text;
}

class Explainer {
 public:
  explicit Explainer(const PipelineResult& r) : r_(r) {
    spec_json_ = SpecToJsonValue(r.program.spec);
    derived_json_ = DerivedToJsonValue(r.program.derived);
    for (const FigureLineage& f : DerivedLineage()) derived_.push_back(f);
  }

  // The node of a bare report figure name, or nullopt.
  std::optional<LineageNode> NodeOf(const std::string& figure) const {
    for (const FigureLineage& f : r_.iteration.lineage) {
      if (f.figure == figure)
        return LineageNode{LineageNodeKind::kIteration, figure};
    }
    for (const FigureLineage& f : r_.memory.lineage) {
      if (f.figure == figure)
        return LineageNode{LineageNodeKind::kMemory, figure};
    }
    for (const FigureLineage& f : r_.schedule.lineage) {
      if (f.figure != figure) continue;
      // "stage[s]": a stage of the simulated timeline.
      return LineageNode{absl::StartsWith(figure, "stage[")
                             ? LineageNodeKind::kTimeline
                             : LineageNodeKind::kSchedule,
                         figure};
    }
    bool block = false;
    ForEachBlockFigure(r_.plan.block, [&](const char* name, double) {
      block = block || figure == name;
    });
    if (block) return LineageNode{LineageNodeKind::kBlock, figure};
    return std::nullopt;
  }

  // Appends the node `id` (a lineage source as the IR records it) and, down
  // to max_depth (unlimited when nullopt), its sources: a node already
  // expanded is marked so and not expanded again; a node at max_depth says
  // how many sources it has. An id of no known kind is shown as it is.
  void Walk(const std::string& id, int64_t depth,
            std::optional<int64_t> max_depth, std::string& out) {
    const std::string indent(static_cast<size_t>(2 * depth), ' ');
    const bool seen = visited_.count(id) > 0;
    const bool cut = !seen && max_depth.has_value() && depth >= *max_depth;
    Description d;
    if (const std::optional<LineageNode> node = ParseLineageNode(id)) {
      d = Describe(*node);
    }
    if (d.label.empty()) d.label = id;
    std::string mark;
    if (!d.sources.empty() && seen) mark = " (expanded above)";
    if (!d.sources.empty() && cut) {
      mark = absl::StrCat(" (", d.sources.size(),
                          d.sources.size() == 1 ? " source" : " sources",
                          " not shown)");
    }
    absl::StrAppend(&out, indent, depth == 0 ? "" : "<- ", d.label, mark, "\n");
    if (seen || cut) return;
    visited_.insert(id);
    for (const std::string& source : d.sources) {
      Walk(source, depth + 1, max_depth, out);
    }
  }

  // "name = formula = formula with values = value" for an iteration or
  // memory figure's node ("name = formula = value" for a schedule figure or
  // a per-rank figure, whose formulas name no values), "" for any other.
  std::string FormulaLine(const LineageNode& node) const {
    switch (node.kind) {
      case LineageNodeKind::kSchedule:
        return ScheduleFormulaLine(node.name);
      case LineageNodeKind::kIteration:
        return TableFormulaLine(FormulaScope::kIteration, node);
      case LineageNodeKind::kMemory:
        return TableFormulaLine(FormulaScope::kMemory, node);
      case LineageNodeKind::kSpec:
      case LineageNodeKind::kDerived:
      case LineageNodeKind::kSystem:
      case LineageNodeKind::kTask:
      case LineageNodeKind::kPlan:
      case LineageNodeKind::kBlock:
      case LineageNodeKind::kFirstStage:
      case LineageNodeKind::kLastStage:
      case LineageNodeKind::kTimeline:
      case LineageNodeKind::kStep:
        return "";
    }
    return "";
  }

 private:
  // A node's line (without indent and marks) and its sources.
  struct Description {
    std::string label;
    std::vector<std::string> sources;
  };

  std::string ScheduleFormulaLine(const std::string& name) const {
    for (const FigureLineage& f : r_.schedule.lineage) {
      if (f.figure == name) {
        return absl::StrCat(name, " = ", f.formula, " = ",
                            FormatDouble(ScheduleValue(name)), "\n");
      }
    }
    return "";
  }

  std::string TableFormulaLine(FormulaScope scope,
                               const LineageNode& node) const {
    const std::string& name = node.name;
    const FigureFormula* row =
        FindFormula(scope, name, HasExplicitLayout(r_.iteration.step));
    if (row == nullptr) {
      // A per-rank figure: its formula is prose over the task IR, with no
      // names to substitute.
      double value = 0;
      if (scope != FormulaScope::kIteration ||
          !FindIterationFigure(r_.iteration, name, &value)) {
        return "";
      }
      for (const FigureLineage& f : r_.iteration.lineage) {
        if (f.figure == name && !f.formula.empty()) {
          return absl::StrCat(name, " = ", f.formula, " = ",
                              FormatDouble(value), "\n");
        }
      }
      return "";
    }
    const FormulaValues values =
        FormulaValuesOf(r_.plan, r_.iteration, r_.memory);
    const std::optional<double> value = ValueOf(
        scope, absl::StrCat(LineageNodeKindName(node.kind), ".", name), values);
    return absl::StrCat(name, " = ", row->formula, " = ",
                        SubstituteValues(scope, row->formula, values), " = ",
                        FormatDouble(value.value_or(0)), "\n");
  }

  Description Describe(const LineageNode& node) const {
    switch (node.kind) {
      case LineageNodeKind::kIteration:
        return DescribeIteration(node);
      case LineageNodeKind::kMemory:
        return DescribeMemory(node);
      case LineageNodeKind::kSchedule:
        return {absl::StrCat(node.ToString(), " = ",
                             FormatDouble(ScheduleValue(node.name)), " [",
                             SimulatePipelineSchedule::kName, "]"),
                SourcesOf(r_.schedule.lineage, node.name)};
      case LineageNodeKind::kTimeline:
        return DescribeTimeline(node);
      case LineageNodeKind::kBlock:
        return {BlockLabel(node, r_.plan.block), r_.plan.block_lineage.sources};
      case LineageNodeKind::kFirstStage:
        return DescribeStage(node, r_.plan.first_stage, Placement::kFirstStage);
      case LineageNodeKind::kLastStage:
        return DescribeStage(node, r_.plan.last_stage, Placement::kLastStage);
      case LineageNodeKind::kPlan:
        return DescribePlan(node);
      case LineageNodeKind::kTask:
        return DescribeTask(node);
      case LineageNodeKind::kDerived:
        return {absl::StrCat(node.ToString(), " = ",
                             Snippet(JsonAt(derived_json_, node.name)),
                             " [CheckSpec]"),
                SourcesOf(derived_, node.name)};
      case LineageNodeKind::kSpec:
        return {absl::StrCat(node.ToString(), " = ",
                             Snippet(JsonAt(spec_json_, node.name))),
                {}};
      case LineageNodeKind::kSystem: {
        const std::string path = node.name.substr(0, node.name.find('@'));
        const nlohmann::json* system = JsonAt(spec_json_, "system");
        return {absl::StrCat(node.ToString(), " = ",
                             Snippet(system ? JsonAt(*system, path) : nullptr)),
                {}};
      }
      case LineageNodeKind::kStep:
        // A formula's step term, not a node of any IR: shown as it is.
        return {};
    }
    return {};
  }

  Description DescribeIteration(const LineageNode& node) const {
    double value = 0;
    FindIterationFigure(r_.iteration, node.name, &value);
    return {absl::StrCat(node.ToString(), " = ", FormatDouble(value), " [",
                         AnalyzeIteration::kName, "]"),
            SourcesOf(r_.iteration.lineage, node.name)};
  }

  Description DescribeMemory(const LineageNode& node) const {
    double value = 0;
    auto find = [&](const char* n, double x) {
      if (node.name == n) value = x;
    };
    ForEachMemoryFigure(r_.memory.figures, find);
    ForEachMemoryTerm(r_.memory.figures, find);
    return {absl::StrCat(node.ToString(), " = ", FormatDouble(value), " [",
                         AnalyzeMemory::kName, "]"),
            SourcesOf(r_.memory.lineage, node.name)};
  }

  // "stage[s]": one physical stage of the simulated timeline.
  Description DescribeTimeline(const LineageNode& node) const {
    const std::string& name = node.name;
    size_t stage = 0;
    const ScheduleAnalysis& sim = r_.schedule;
    if (!absl::StartsWith(name, "stage[") || !absl::EndsWith(name, "]") ||
        !absl::SimpleAtoi(name.substr(6, name.size() - 7), &stage) ||
        stage >= sim.stage_idle_times.size()) {
      return {};
    }
    return {absl::StrCat(node.ToString(), " busy ",
                         FormatDouble(sim.stage_busy_times[stage]), " idle ",
                         FormatDouble(sim.stage_idle_times[stage]),
                         " peak_live_microbatches ",
                         FormatDouble(sim.stage_peak_live_microbatches[stage]),
                         " of ", FormatDouble(sim.makespan), " [",
                         SimulatePipelineSchedule::kName, "]"),
            SourcesOf(sim.lineage, name)};
  }

  std::string BlockLabel(const LineageNode& node,
                         const BlockFigures& figures) const {
    double value = 0;
    ForEachBlockFigure(figures, [&](const char* n, double x) {
      if (node.name == n) value = x;
    });
    return absl::StrCat(node.ToString(), " = ", FormatDouble(value), " [",
                        r_.plan.block_lineage.pass, "]");
  }

  // A figure of the first or last stage's own work: its sources are the
  // plans of the stage's tasks.
  Description DescribeStage(const LineageNode& node,
                            const BlockFigures& figures,
                            Placement placement) const {
    Description d{BlockLabel(node, figures), {}};
    for (const Task& task : r_.tasks.tasks) {
      if (task.placement == placement) {
        d.sources.push_back(
            LineageNode{LineageNodeKind::kPlan, absl::StrCat(task.id)}
                .ToString());
      }
    }
    return d;
  }

  Description DescribePlan(const LineageNode& node) const {
    int id = 0;
    if (!absl::SimpleAtoi(node.name, &id) || id < 0 ||
        static_cast<size_t>(id) >= r_.plan.tasks.size()) {
      return {};
    }
    const TaskPlan& tp = r_.plan.tasks[static_cast<size_t>(id)];
    return {absl::StrCat(node.ToString(), " ", r_.tasks.tasks[tp.task_id].name,
                         " fw=", FormatDouble(tp.processing_time[0]), " s [",
                         tp.lineage.pass, "]"),
            tp.lineage.sources};
  }

  Description DescribeTask(const LineageNode& node) const {
    int id = 0;
    if (!absl::SimpleAtoi(node.name, &id) || id < 0 ||
        static_cast<size_t>(id) >= r_.tasks.tasks.size()) {
      return {};
    }
    const Task& task = r_.tasks.tasks[static_cast<size_t>(id)];
    return {absl::StrCat(node.ToString(), " ", task.name, " ",
                         TaskKindName(task.kind), " [", task.lineage.pass, "]"),
            task.lineage.sources};
  }

  double ScheduleValue(const std::string& name) const {
    if (name == "simulated_bubble_time") {
      return r_.schedule.simulated_bubble_time;
    }
    if (name == "simulated_total_time") return r_.schedule.simulated_total_time;
    return 0;
  }

  static std::vector<std::string> SourcesOf(
      const std::vector<FigureLineage>& table, const std::string& name) {
    for (const FigureLineage& f : table) {
      if (f.figure == name) return f.lineage.sources;
    }
    return {};
  }

  const PipelineResult& r_;
  nlohmann::json spec_json_;
  nlohmann::json derived_json_;
  std::vector<FigureLineage> derived_;
  std::set<std::string> visited_;  // the ids Walk expanded
};

}  // namespace

absl::StatusOr<std::string> ExplainFigure(const PipelineResult& result,
                                          const std::string& figure,
                                          std::optional<int64_t> max_depth) {
  Explainer explainer(result);
  const std::optional<LineageNode> node = explainer.NodeOf(figure);
  if (!node.has_value()) {
    return absl::NotFoundError(absl::StrCat(
        "figure \"", figure,
        "\" is not a report figure (see the keys of \"figures\" in "
        "`blueprint analyze`, e.g. total_time, bubble_time, act_space)"));
  }
  if (max_depth.has_value() && *max_depth < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("depth: expected an integer >= 0, got ", *max_depth));
  }
  std::string out = explainer.FormulaLine(*node);
  explainer.Walk(node->ToString(), 0, max_depth, out);
  return out;
}

}  // namespace blueprint
