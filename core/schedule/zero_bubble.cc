#include "core/schedule/zero_bubble.h"

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace blueprint {

std::vector<std::vector<Command>> GreedyZeroBubbleStages(
    int64_t p, int64_t m, int64_t chunks, const Route& route,
    const std::vector<int64_t>& live_limit,
    const std::vector<int64_t>& max_pending_weights) {
  const int64_t positions = p * chunks;
  // position_of[s * chunks + c]
  std::vector<int64_t> position_of(static_cast<size_t>(positions), 0);
  for (int64_t j = 0; j < positions; ++j) {
    position_of[route.stage_of_position[j] * chunks +
                route.chunk_of_position[j]] = j;
  }
  // Finish ticks; -1 while not run. Index mb * positions + position.
  const size_t slots = static_cast<size_t>(m * positions);
  std::vector<int64_t> forward_done(slots, -1), backward_done(slots, -1);
  auto at = [&](int64_t mb, int64_t j) {
    return static_cast<size_t>(mb * positions + j);
  };
  struct StageState {
    std::vector<int64_t> next_forward, next_backward;  // per chunk
    int64_t live = 0;
    int64_t remaining = 0;                                    // F, B and W left
    std::deque<std::pair<int64_t, int64_t>> pending_weights;  // (mb, chunk)
  };
  std::vector<StageState> states(static_cast<size_t>(p));
  std::vector<std::vector<Command>> out(static_cast<size_t>(p));
  for (int64_t s = 0; s < p; ++s) {
    states[s].next_forward.assign(static_cast<size_t>(chunks), 0);
    states[s].next_backward.assign(static_cast<size_t>(chunks), 0);
    states[s].remaining = 3 * m * chunks;
    out[s].reserve(static_cast<size_t>(3 * m * chunks));
  }
  int64_t left = 3 * m * chunks * p;
  // Some stage runs a command at least every 2 * positions ticks (a ready
  // forward or backward reaches it within that many), so this bound is
  // never reached; it only guarantees termination. Callers check that every
  // command was placed.
  const int64_t max_ticks = (left + 1) * 2 * positions;
  for (int64_t tick = 0; left > 0 && tick < max_ticks; ++tick) {
    // Decisions at `tick` see only commands finished by `tick` (finish =
    // start + 1), so the stage order within a tick does not matter.
    for (int64_t s = 0; s < p; ++s) {
      StageState& st = states[s];
      if (st.remaining == 0) continue;
      // 1. the ready B with the earliest microbatch, then deeper position.
      int64_t best_chunk = -1, best_mb = 0, best_pos = 0;
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t mb = st.next_backward[c];
        if (mb >= m) continue;
        const int64_t j = position_of[s * chunks + c];
        const int64_t f = forward_done[at(mb, j)];
        if (f < 0 || f > tick) continue;
        if (j + 1 < positions) {
          const int64_t b = backward_done[at(mb, j + 1)];
          if (b < 0 || b > tick) continue;
        }
        if (best_chunk < 0 || mb < best_mb || (mb == best_mb && j > best_pos)) {
          best_chunk = c;
          best_mb = mb;
          best_pos = j;
        }
      }
      if (best_chunk >= 0) {
        backward_done[at(best_mb, best_pos)] = tick + 1;
        ++st.next_backward[best_chunk];
        --st.live;
        st.pending_weights.push_back({best_mb, best_chunk});
        out[s].push_back(ComputeCommand(CommandKind::kBackward, best_mb,
                                        best_chunk,
                                        /*defers=*/true));
        --st.remaining;
        --left;
        continue;
      }
      // 2. a ready F under the in-flight bound, unless too many W wait.
      const bool weights_due = !st.pending_weights.empty() &&
                               static_cast<int64_t>(st.pending_weights.size()) >
                                   max_pending_weights[s];
      if (st.live < live_limit[s] && !weights_due) {
        for (int64_t c = 0; c < chunks; ++c) {
          const int64_t mb = st.next_forward[c];
          if (mb >= m) continue;
          const int64_t j = position_of[s * chunks + c];
          if (j > 0) {
            const int64_t f = forward_done[at(mb, j - 1)];
            if (f < 0 || f > tick) continue;
          }
          if (best_chunk < 0 || mb < best_mb ||
              (mb == best_mb && j > best_pos)) {
            best_chunk = c;
            best_mb = mb;
            best_pos = j;
          }
        }
        if (best_chunk >= 0) {
          forward_done[at(best_mb, best_pos)] = tick + 1;
          ++st.next_forward[best_chunk];
          ++st.live;
          out[s].push_back(ComputeCommand(CommandKind::kForward, best_mb,
                                          best_chunk, false));
          --st.remaining;
          --left;
          continue;
        }
      }
      // 3. the oldest deferred W.
      if (!st.pending_weights.empty()) {
        out[s].push_back(ComputeCommand(
            CommandKind::kWeightGradient, st.pending_weights.front().first,
            st.pending_weights.front().second, false));
        st.pending_weights.pop_front();
        --st.remaining;
        --left;
      }
    }
  }
  return out;
}

}  // namespace blueprint
