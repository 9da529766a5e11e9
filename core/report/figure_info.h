// What every figure of the report JSON ("figures" of `blueprint analyze`)
// means: its unit, the layer that defines it and one line of meaning. The
// units and meanings are written once, in figure_info.cc; the group is
// derived from the list that defines the figure (core/plan/plan_ir.h
// BP_BLOCK_FIGURES, core/analysis/figures.h BP_ITERATION_FIGURES,
// BP_SCHEDULE_TERMS and BP_MEMORY_FIGURES, or the report's own figures in
// report.cc). figure_info_test checks that the table covers exactly the
// report's figures.
#ifndef BLUEPRINTING_CORE_REPORT_FIGURE_INFO_H_
#define BLUEPRINTING_CORE_REPORT_FIGURE_INFO_H_

#include <string>
#include <vector>

namespace blueprint {

// The units a figure can have.
inline constexpr char kUnitSeconds[] = "s";
inline constexpr char kUnitBytes[] = "bytes";
inline constexpr char kUnitFlop[] = "FLOP";
inline constexpr char kUnitBytesPerSecond[] = "bytes/s";
inline constexpr char kUnitFraction[] = "fraction";  // 0..1 (may exceed 1)
inline constexpr char kUnitCount[] = "count";
inline constexpr char kUnitSamplesPerSecond[] = "samples/s";

struct FigureInfo {
  std::string name;     // the key in the report's "figures"
  std::string unit;     // one of the kUnit* above
  std::string group;    // "block", "iteration", "schedule", "memory", "report"
  std::string meaning;  // one line
};

// Every report figure, in the table's order (report JSON keys are sorted
// anyway).
const std::vector<FigureInfo>& ReportFigureInfo();

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_REPORT_FIGURE_INFO_H_
