#include "core/figures/figure_table.h"

namespace blueprint {
namespace {

// One FigureRow per X(...) of a list, with the list's group.
#define BP_BLOCK_ROW(name, unit, label, meaning, formula) \
  {#name, FigureUnit::unit, FigureGroup::kBlock, label, meaning, formula},
#define BP_ITERATION_ROW(name, unit, label, meaning, formula) \
  {#name, FigureUnit::unit, FigureGroup::kIteration, label, meaning, formula},
#define BP_SCHEDULE_ROW(name, unit, label, meaning, formula) \
  {#name, FigureUnit::unit, FigureGroup::kSchedule, label, meaning, formula},
#define BP_MEMORY_ROW(name, unit, label, meaning, formula) \
  {#name, FigureUnit::unit, FigureGroup::kMemory, label, meaning, formula},
#define BP_REPORT_ROW(name, unit, label, meaning, formula) \
  {#name, FigureUnit::unit, FigureGroup::kReport, label, meaning, formula},
constexpr FigureRow kRows[] = {
    BP_BLOCK_FIGURES(BP_BLOCK_ROW)          //
    BP_ITERATION_FIGURES(BP_ITERATION_ROW)  //
    BP_SCHEDULE_TERMS(BP_SCHEDULE_ROW)      //
    BP_MEMORY_FIGURES(BP_MEMORY_ROW)        //
    BP_MEMORY_TERMS(BP_MEMORY_ROW)          //
    BP_REPORT_FIGURES(BP_REPORT_ROW)        //
};
#undef BP_BLOCK_ROW
#undef BP_ITERATION_ROW
#undef BP_SCHEDULE_ROW
#undef BP_MEMORY_ROW
#undef BP_REPORT_ROW

}  // namespace

const char* FigureUnitName(FigureUnit unit) {
  switch (unit) {
    case FigureUnit::kSeconds:
      return "s";
    case FigureUnit::kBytes:
      return "bytes";
    case FigureUnit::kFlop:
      return "FLOP";
    case FigureUnit::kBytesPerSecond:
      return "bytes/s";
    case FigureUnit::kFraction:
      return "fraction";
    case FigureUnit::kCount:
      return "count";
    case FigureUnit::kSamplesPerSecond:
      return "samples/s";
  }
  return "";
}

const char* FigureGroupName(FigureGroup group) {
  switch (group) {
    case FigureGroup::kBlock:
      return "block";
    case FigureGroup::kIteration:
      return "iteration";
    case FigureGroup::kSchedule:
      return "schedule";
    case FigureGroup::kMemory:
      return "memory";
    case FigureGroup::kReport:
      return "report";
  }
  return "";
}

absl::Span<const FigureRow> FigureTable() { return kRows; }

const FigureRow* FindFigureRow(absl::string_view name) {
  for (const FigureRow& row : kRows) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

}  // namespace blueprint
