// The analysing commands of the `blueprint` CLI as pure functions on strings
// (see commands.h for the conventions): analyze, calculon, digest, explain.
#ifndef BLUEPRINTING_CORE_API_ANALYSIS_COMMANDS_H_
#define BLUEPRINTING_CORE_API_ANALYSIS_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/api/commands.h"
#include "core/report/report.h"

namespace blueprint {

// Analyze: `blueprint analyze SPEC`. Output: the report JSON. A mapping that
// does not fit in memory still gets its report, with exit code 2 and one
// error per capacity violation (code kOverCapacity).
CommandResult Analyze(const std::string& spec_json);

// The canonical text of every stage (for `analyze --dump-ir DIR`), or the
// errors. `stages` is empty on failure.
CommandResult AnalyzeStages(const std::string& spec_json,
                            std::vector<StageText>* stages);

// Calculon: `blueprint calculon APP EXE SYS`. Output: one JSON object with
// the top-level fields of Calculon's stats JSON. Invalid input, including a
// mapping over memory capacity (Calculon's rejection), exits 2.
CommandResult Calculon(const std::string& app_json, const std::string& exe_json,
                       const std::string& sys_json);

// Digest: `blueprint digest SPEC`. Output: "<stage> <sha256>" per line.
CommandResult Digest(const std::string& spec_json);

// Explain: `blueprint explain SPEC FIGURE [--depth N]`. Output: the lineage
// chain of one report figure (core/report/report.h ExplainFigure): for an
// iteration or memory figure first its formula with the values substituted,
// then its sources down to `depth` levels (nullopt: every level). A depth < 0
// exits 2 with an error on field "depth" (kOutOfRange), an unknown figure
// with one on field "figure" (kUnknownChoice).
CommandResult Explain(const std::string& spec_json, const std::string& figure,
                      std::optional<int64_t> depth = std::nullopt);

// ScheduleTimeline: `blueprint schedule SPEC [--json]`. The concrete
// schedule of the spec's pipeline.schedule for its p, v and m, each chunk
// priced by the iteration analysis and simulated (core/schedule/
// core/pipeline/schedule_analysis.h). Output: the timeline's canonical text
// ("pipeline_timeline/1", core/schedule/timeline.h), or with `json` its
// canonical JSON, every command of every stage with its start and end. A
// mapping over memory capacity still prints its timeline and exits 2, as
// Analyze does; a shape the schedule constructors reject exits 2 naming it.
CommandResult ScheduleTimeline(const std::string& spec_json, bool json);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_API_ANALYSIS_COMMANDS_H_
