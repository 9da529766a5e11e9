// What the iteration analysis's figures (figures.cc) share with the memory
// analysis's (figures_memory.cc): not a public header (the BUILD lists it
// among the library's srcs).
#ifndef BLUEPRINTING_CORE_ANALYSIS_FIGURES_INTERNAL_H_
#define BLUEPRINTING_CORE_ANALYSIS_FIGURES_INTERNAL_H_

#include "core/analysis/schedule.h"
#include "core/schedule/memo.h"
#include "core/schedule/simulate.h"

namespace blueprint {
namespace figures_internal {

// The simulated schedule of `s` at durations `d` (through the shape's memo
// when it has one: the same numbers); NaN figures when the simulation fails.
// The iteration's bubble and the memory's in-flight microbatches read it.
ShapeOutcome SimulatedOutcome(const StepShape& s, const ChunkDurations& d);

}  // namespace figures_internal
}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ANALYSIS_FIGURES_INTERNAL_H_
