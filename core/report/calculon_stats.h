// Calculon's stats JSON (the 96 top-level fields of `calculon llm`), built
// from the block, iteration and memory figures: same names, same units.
#ifndef BLUEPRINTING_CORE_REPORT_CALCULON_STATS_H_
#define BLUEPRINTING_CORE_REPORT_CALCULON_STATS_H_

#include "core/analysis/figures.h"
#include "core/plan/plan_ir.h"
#include "nlohmann/json.hpp"

namespace blueprint {

// The stats object. act_checkpoint_size_with_offload is null for inference,
// as in Calculon.
nlohmann::json CalculonStatsJson(const BlockFigures& block,
                                 const IterationFigures& iteration,
                                 const MemoryFigures& memory);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_REPORT_CALCULON_STATS_H_
