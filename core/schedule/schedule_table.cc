// The schedule table's in-flight rules, bubble bounds and F&B counts
// (schedule_table.h). Why each holds: memo.h OrderPeakLiveMicrobatches and
// OrderFewestOverlappedPairs, simulate.h MinimumBubble; simulate_test checks
// each against the simulation.
#include "core/schedule/schedule_table.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "core/schedule/schedule_ir.h"

namespace blueprint {
namespace schedule_rules {

//----- In-flight rules: the busiest stage's peak live microbatches ---------

std::optional<double> OneLive(int64_t p, int64_t v, int64_t m) { return 1.0; }

// 1F1B's first stage: its warm-up plus one (zb_h1 and zb_v keep 1F1B's).
std::optional<double> OneForwardOneBackwardLive(int64_t p, int64_t v,
                                                int64_t m) {
  return static_cast<double>(std::min(m, p));
}

std::optional<double> InterleavedLive(int64_t p, int64_t v, int64_t m) {
  return static_cast<double>(InterleavedFirstStagePeakChunks(p, v, m)) /
         static_cast<double>(v);
}

std::optional<double> NotFixedLive(int64_t p, int64_t v, int64_t m) {
  return std::nullopt;
}

std::optional<double> GPipeLive(int64_t p, int64_t v, int64_t m) {
  return static_cast<double>(m);
}

std::optional<double> DualPipeVLive(int64_t p, int64_t v, int64_t m) {
  if (m < 2 * p) return std::nullopt;  // a shape it refuses
  return static_cast<double>(p) + 0.5;
}

std::optional<double> ZbH2Live(int64_t p, int64_t v, int64_t m) {
  return static_cast<double>(std::min(m, 2 * p - 1));
}

std::optional<double> DualPipeLive(int64_t p, int64_t v, int64_t m) {
  // A shape it refuses.
  if (p < 2 || p % 2 != 0 || m % 2 != 0 || m < 2 * p) return std::nullopt;
  return static_cast<double>(p + 1) / 2;
}

//----- Bubble bounds: at most the simulated bubble at durations >= lower ---

double NoBubble(int64_t p, int64_t m, const ChunkDurations& lower) {
  return 0;
}

// Every route enters stage p - 1 after p - 1 forwards upstream.
double UpstreamForwardsBubble(int64_t p, int64_t m,
                              const ChunkDurations& lower) {
  return static_cast<double>(p - 1) * lower.forward;
}

// Its whole bubble.
double GPipeBubble(int64_t p, int64_t m, const ChunkDurations& lower) {
  return static_cast<double>(p - 1) *
         (lower.forward + lower.backward_input + lower.backward_weight);
}

double ZbH1Bubble(int64_t p, int64_t m, const ChunkDurations& lower) {
  if (m >= p) {
    return static_cast<double>(p - 1) *
           std::max(lower.forward, lower.backward_input);
  }
  return UpstreamForwardsBubble(p, m, lower);
}

// Two routes in opposite directions: a middle stage waits for p/2 - 1
// forwards on either.
double DualPipeBubble(int64_t p, int64_t m, const ChunkDurations& lower) {
  return static_cast<double>(p / 2 - 1) * lower.forward;
}

//----- F&B counts: the fewest overlapped pairs on one stage (m >= 2p) ------

int64_t DualPipeVPairs(int64_t p, int64_t m) {
  return p == 1 ? 2 * m - 3 : 2 * m - 3 * p + 1;
}

// Two routes of m / 2 microbatches over an even p.
int64_t DualPipePairs(int64_t p, int64_t m) {
  if (p % 2 != 0 || m % 2 != 0) return 0;
  return p == 2 ? m - 3 : m - 3 * p / 2 + 1;
}

}  // namespace schedule_rules
}  // namespace blueprint
