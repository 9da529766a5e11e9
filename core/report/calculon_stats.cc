#include "core/report/calculon_stats.h"

namespace blueprint {

nlohmann::json CalculonStatsJson(const BlockFigures& block,
                                 const IterationFigures& iteration,
                                 const MemoryFigures& memory) {
  nlohmann::json stats = nlohmann::json::object();
  auto put = [&](const char* name, double value) { stats[name] = value; };
  ForEachBlockFigure(block, put);
  ForEachIterationFigure(iteration, put);
  ForEachMemoryFigure(memory, put);
  if (!memory.checkpoint_min_defined) {
    stats["act_checkpoint_size_with_offload"] = nullptr;
  }
  return stats;
}

}  // namespace blueprint
