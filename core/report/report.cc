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
#include "core/base/format.h"
#include "core/base/json.h"
#include "core/base/sha256.h"
#include "core/base/status_macros.h"
#include "core/report/calculon_stats.h"
#include "core/spec/spec_json.h"

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

  // Resolves a bare report figure name to its node id.
  std::string NodeOf(const std::string& figure) const {
    for (const FigureLineage& f : r_.iteration.lineage) {
      if (f.figure == figure) return "iteration:" + figure;
    }
    for (const FigureLineage& f : r_.memory.lineage) {
      if (f.figure == figure) return "memory:" + figure;
    }
    for (const FigureLineage& f : r_.schedule.lineage) {
      if (f.figure != figure) continue;
      // "stage[s]": a stage of the simulated timeline.
      return (absl::StartsWith(figure, "stage[") ? "timeline:" : "schedule:") +
             figure;
    }
    bool block = false;
    ForEachBlockFigure(r_.plan.block, [&](const char* name, double) {
      block = block || figure == name;
    });
    if (block) return "block:" + figure;
    return "";
  }

  // Appends `node` and, down to max_depth (unlimited when nullopt), its
  // sources: a node already expanded is marked so and not expanded again; a
  // node at max_depth says how many sources it has.
  void Walk(const std::string& node, int64_t depth,
            std::optional<int64_t> max_depth, std::string& out) {
    const std::string indent(static_cast<size_t>(2 * depth), ' ');
    const bool seen = visited_.count(node) > 0;
    const bool cut = !seen && max_depth.has_value() && depth >= *max_depth;
    std::string label;
    std::vector<std::string> sources;
    Describe(node, label, sources);
    std::string mark;
    if (!sources.empty() && seen) mark = " (expanded above)";
    if (!sources.empty() && cut) {
      mark = absl::StrCat(" (", sources.size(),
                          sources.size() == 1 ? " source" : " sources",
                          " not shown)");
    }
    absl::StrAppend(&out, indent, depth == 0 ? "" : "<- ", label, mark, "\n");
    if (seen || cut) return;
    visited_.insert(node);
    for (const std::string& source : sources) {
      Walk(source, depth + 1, max_depth, out);
    }
  }

  // "name = formula = formula with values = value" for an iteration or
  // memory figure's node, "" for any other node.
  std::string FormulaLine(const std::string& node) const {
    const size_t colon = node.find(':');
    const std::string kind = node.substr(0, colon);
    const std::string name = node.substr(colon + 1);
    if (kind == "schedule") {
      for (const FigureLineage& f : r_.schedule.lineage) {
        if (f.figure == name) {
          return absl::StrCat(name, " = ", f.formula, " = ",
                              FormatDouble(ScheduleValue(name)), "\n");
        }
      }
      return "";
    }
    if (kind != "iteration" && kind != "memory") return "";
    const FormulaScope scope =
        kind == "iteration" ? FormulaScope::kIteration : FormulaScope::kMemory;
    const FigureFormula* row = FindFormula(scope, name);
    if (row == nullptr) {
      // A per-rank figure: its formula is prose over the task IR, with no
      // names to substitute.
      double value = 0;
      if (kind != "iteration" ||
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
    const std::optional<double> value =
        ValueOf(scope, absl::StrCat(kind, ".", name), values);
    return absl::StrCat(name, " = ", row->formula, " = ",
                        SubstituteValues(scope, row->formula, values), " = ",
                        FormatDouble(value.value_or(0)), "\n");
  }

 private:
  void Describe(const std::string& node, std::string& label,
                std::vector<std::string>& sources) {
    const size_t colon = node.find(':');
    const std::string kind = node.substr(0, colon);
    const std::string name = node.substr(colon + 1);
    if (kind == "iteration") {
      double value = 0;
      FindIterationFigure(r_.iteration, name, &value);
      label = absl::StrCat(node, " = ", FormatDouble(value), " [",
                           AnalyzeIteration::kName, "]");
      sources = SourcesOf(r_.iteration.lineage, name);
    } else if (kind == "memory") {
      double value = 0;
      auto find = [&](const char* n, double x) {
        if (name == n) value = x;
      };
      ForEachMemoryFigure(r_.memory.figures, find);
      ForEachMemoryTerm(r_.memory.figures, find);
      label = absl::StrCat(node, " = ", FormatDouble(value), " [",
                           AnalyzeMemory::kName, "]");
      sources = SourcesOf(r_.memory.lineage, name);
    } else if (kind == "schedule") {
      label = absl::StrCat(node, " = ", FormatDouble(ScheduleValue(name)),
                           " [", SimulatePipelineSchedule::kName, "]");
      sources = SourcesOf(r_.schedule.lineage, name);
    } else if (kind == "timeline") {
      // "stage[s]": one physical stage of the simulated timeline.
      size_t stage = 0;
      const ScheduleAnalysis& sim = r_.schedule;
      if (absl::StartsWith(name, "stage[") && absl::EndsWith(name, "]") &&
          absl::SimpleAtoi(name.substr(6, name.size() - 7), &stage) &&
          stage < sim.stage_idle_times.size()) {
        label = absl::StrCat(
            node, " busy ", FormatDouble(sim.stage_busy_times[stage]),
            " idle ", FormatDouble(sim.stage_idle_times[stage]),
            " peak_live_microbatches ",
            FormatDouble(sim.stage_peak_live_microbatches[stage]), " of ",
            FormatDouble(sim.makespan), " [", SimulatePipelineSchedule::kName,
            "]");
        sources = SourcesOf(sim.lineage, name);
      }
    } else if (kind == "block") {
      double value = 0;
      ForEachBlockFigure(r_.plan.block, [&](const char* n, double x) {
        if (name == n) value = x;
      });
      label = absl::StrCat(node, " = ", FormatDouble(value), " [",
                           r_.plan.block_lineage.pass, "]");
      sources = r_.plan.block_lineage.sources;
    } else if (kind == "first_stage" || kind == "last_stage") {
      const bool first = kind == "first_stage";
      double value = 0;
      ForEachBlockFigure(first ? r_.plan.first_stage : r_.plan.last_stage,
                         [&](const char* n, double x) {
                           if (name == n) value = x;
                         });
      label = absl::StrCat(node, " = ", FormatDouble(value), " [",
                           r_.plan.block_lineage.pass, "]");
      const Placement placement =
          first ? Placement::kFirstStage : Placement::kLastStage;
      for (const Task& task : r_.tasks.tasks) {
        if (task.placement == placement) {
          sources.push_back(absl::StrCat("plan:", task.id));
        }
      }
    } else if (kind == "plan") {
      int id = 0;
      if (absl::SimpleAtoi(name, &id) && id >= 0 &&
          static_cast<size_t>(id) < r_.plan.tasks.size()) {
        const TaskPlan& tp = r_.plan.tasks[static_cast<size_t>(id)];
        label = absl::StrCat(node, " ", r_.tasks.tasks[tp.task_id].name,
                             " fw=", FormatDouble(tp.processing_time[0]),
                             " s [", tp.lineage.pass, "]");
        sources = tp.lineage.sources;
      }
    } else if (kind == "task") {
      int id = 0;
      if (absl::SimpleAtoi(name, &id) && id >= 0 &&
          static_cast<size_t>(id) < r_.tasks.tasks.size()) {
        const Task& task = r_.tasks.tasks[static_cast<size_t>(id)];
        label = absl::StrCat(node, " ", task.name, " ",
                             TaskKindName(task.kind), " [", task.lineage.pass,
                             "]");
        sources = task.lineage.sources;
      }
    } else if (kind == "derived") {
      label = absl::StrCat(node, " = ",
                           Snippet(JsonAt(derived_json_, name)), " [CheckSpec]");
      sources = SourcesOf(derived_, name);
    } else if (kind == "spec") {
      label = absl::StrCat(node, " = ", Snippet(JsonAt(spec_json_, name)));
    } else if (kind == "system") {
      const std::string path = name.substr(0, name.find('@'));
      const nlohmann::json* system = JsonAt(spec_json_, "system");
      label = absl::StrCat(
          node, " = ", Snippet(system ? JsonAt(*system, path) : nullptr));
    }
    if (label.empty()) label = node;
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
  std::set<std::string> visited_;
};

}  // namespace

absl::StatusOr<std::string> ExplainFigure(const PipelineResult& result,
                                          const std::string& figure,
                                          std::optional<int64_t> max_depth) {
  Explainer explainer(result);
  const std::string node = explainer.NodeOf(figure);
  if (node.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "figure \"", figure,
        "\" is not a report figure (see the keys of \"figures\" in "
        "`blueprint analyze`, e.g. total_time, bubble_time, act_space)"));
  }
  if (max_depth.has_value() && *max_depth < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("depth: expected an integer >= 0, got ", *max_depth));
  }
  std::string out = explainer.FormulaLine(node);
  explainer.Walk(node, 0, max_depth, out);
  return out;
}

}  // namespace blueprint
