#include "core/schedule/v_schedule.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace blueprint {

namespace {

// The reference's categories and chunk numbering: cat 0 F, 1 B, 2 W. For F
// the chunk is the model chunk; for B and W the reference numbers chunks in
// backward order, so its B "chunk 0" is the backward of model chunk 1 (which
// starts on stage 0 and goes down the stages, like the forward of chunk 0)
// and its "chunk 1" the backward of model chunk 0.
struct Placed {
  int cat = 0;
  int chunk = 0;
  int64_t microbatch = 0;
};

struct Attempt {
  std::vector<std::vector<Placed>> order;  // per stage
  std::vector<double> stage_bubble;
  double max_bubble = 0;
  double makespan = 0;
  double max_compute_busy = 0;
  int64_t peak_live_chunks = 0;
};

// The memory of one command, in chunks of activations (see the header).
constexpr std::array<int64_t, 3> kMemory = {1, 0, -1};
constexpr const char* kCategoryName[] = {"F", "B", "W"};

class VScheduleTry {
 public:
  VScheduleTry(int64_t p, int64_t m, const ChunkDurations& d,
               const std::vector<double>* approved)
      : p_(p),
        m_(m),
        cost_{d.forward, d.backward_input, d.backward_weight},
        comm_(d.p2p_link_time),
        max_memory_(2 * p),
        count_(static_cast<size_t>(p)),
        end_(static_cast<size_t>(6 * p * m), -1),
        now_(static_cast<size_t>(p), 0),
        busy_(static_cast<size_t>(p), 0),
        memory_(static_cast<size_t>(p), 0),
        bubble_(static_cast<size_t>(p), 0),
        pending_weights_(static_cast<size_t>(p)),
        order_(static_cast<size_t>(p)) {
    for (auto& c : count_) c.fill(0);
    approved_.assign(static_cast<size_t>(p), -1);
    if (approved != nullptr) approved_ = *approved;
    max_approved_ = *std::max_element(approved_.begin(), approved_.end());
    for (auto& o : order_) o.reserve(static_cast<size_t>(6 * m));
  }

  absl::StatusOr<Attempt> Run(bool fill_f, bool fill_b) {
    Warmup();
    if (!status_.ok()) return status_;
    for (int64_t round = 0; round < 2 * m_ && status_.ok(); ++round) {
      PlaceBackwards(fill_b);
      if (status_.ok()) PlaceForwards(fill_f);
    }
    for (int64_t s = 0; s < p_ && status_.ok(); ++s) {
      while (!pending_weights_[s].empty() && status_.ok()) PutWeight(s);
    }
    if (!status_.ok()) return status_;
    for (int64_t s = 0; s < p_; ++s) {
      for (int k = 0; k < 6; ++k) {
        if (count_[s][k] != m_) {
          Fail(absl::StrCat("stage ", s, " placed ", count_[s][k], " of ", m_,
                            " ", kCategoryName[k / 2], " commands of chunk ",
                            k % 2));
          return status_;
        }
      }
    }
    Attempt out;
    out.order = std::move(order_);
    out.stage_bubble = bubble_;
    out.max_bubble = max_bubble_;
    out.makespan = *std::max_element(now_.begin(), now_.end());
    out.max_compute_busy = *std::max_element(busy_.begin(), busy_.end());
    out.peak_live_chunks = peak_memory_;
    return out;
  }

 private:
  size_t Id(int cat, int chunk, int64_t stage, int64_t mb) const {
    return static_cast<size_t>(((cat * 2 + chunk) * p_ + stage) * m_ + mb);
  }
  double EndOf(int cat, int chunk, int64_t stage, int64_t mb) const {
    return end_[Id(cat, chunk, stage, mb)];
  }
  // end_time[fa_id] with the reference's Python indexing: fa_id = -1 reads
  // the last node (the last W of stage p-1's chunk 1), unplaced (-1) until
  // the very end.
  double EndOrLast(int64_t id) const {
    return id >= 0 ? end_[static_cast<size_t>(id)] : end_.back();
  }
  double MaxStageBubble(int64_t stage) const {
    double most = max_bubble_;
    if (stage >= 0) most = std::max(most, max_approved_ - approved_[stage]);
    return most;
  }

  // Records the first failure; every step stops once one is recorded.
  void Fail(const std::string& what) {
    if (status_.ok()) {
      status_ = absl::InternalError(
          absl::StrCat("zb_v order for p ", p_, ", m ", m_, " (F ", cost_[0],
                       ", B ", cost_[1], ", W ", cost_[2], "): ", what));
    }
  }

  void Put(int cat, int chunk, int64_t stage) {
    if (!status_.ok()) return;
    const double no_bubble = now_[stage] + cost_[cat];
    double end = no_bubble;
    const int64_t mb = count_[stage][cat * 2 + chunk];
    if (mb >= m_) {
      Fail(absl::StrCat("stage ", stage, " has no ", kCategoryName[cat],
                        " of chunk ", chunk, " left"));
      return;
    }
    if (memory_[stage] + kMemory[cat] > max_memory_) {
      Fail(absl::StrCat("stage ", stage, " would exceed ", max_memory_,
                        " live chunks"));
      return;
    }
    if (cat > 0 || chunk > 0) {
      const int last = cat * 2 + chunk - 1;
      const double before = cat < 2 ? EndOf(last / 2, last % 2, stage, mb)
                                    : EndOf(1, chunk, stage, mb);
      if (before < 0) {
        Fail(absl::StrCat("stage ", stage, " microbatch ", mb, ": ",
                          kCategoryName[cat], " of chunk ", chunk,
                          " before its predecessor"));
        return;
      }
    }
    if (cat < 2) {
      int64_t from = -1;
      if (chunk == 1 && stage < p_ - 1) from = stage + 1;
      if (chunk == 0 && stage > 0) from = stage - 1;
      if (from >= 0) {
        const double arrives = EndOf(cat, chunk, from, mb);
        if (arrives < 0) {
          Fail(absl::StrCat("stage ", stage, " microbatch ", mb, ": ",
                            kCategoryName[cat], " of chunk ", chunk,
                            " before stage ", from, "'s"));
          return;
        }
        end = std::max(end, arrives + comm_ + cost_[cat]);
      }
    }
    if (count_[stage][0] > 0) {
      bubble_[stage] += end - no_bubble;
      max_bubble_ = std::max(max_bubble_, bubble_[stage]);
    }
    end_[Id(cat, chunk, stage, mb)] = end;
    now_[stage] = end;
    busy_[stage] += cost_[cat];
    memory_[stage] += kMemory[cat];
    peak_memory_ = std::max(peak_memory_, memory_[stage]);
    order_[stage].push_back(Placed{cat, chunk, mb});
    if (cat == 1) pending_weights_[stage].push_back(chunk);
    ++count_[stage][cat * 2 + chunk];
  }

  void PutWeight(int64_t stage) {
    if (pending_weights_[stage].empty()) {
      Fail(absl::StrCat("stage ", stage, " has no W to run"));
      return;
    }
    const int chunk = pending_weights_[stage].front();
    pending_weights_[stage].pop_front();
    Put(2, chunk, stage);
  }

  // W while the wait for `id` (the command's input from the next stage)
  // would cover one, then one more when the wait exceeds the bubble budget.
  void FillWait(int64_t stage, int64_t id, bool fill_last) {
    std::deque<int>& pending = pending_weights_[stage];
    while (status_.ok() && !pending.empty() && id >= 0 &&
           end_[static_cast<size_t>(id)] + comm_ >= now_[stage] + cost_[2]) {
      PutWeight(stage);
    }
    if (status_.ok() && !pending.empty() &&
        EndOrLast(id) + comm_ - now_[stage] >
            MaxStageBubble(stage) - bubble_[stage] &&
        fill_last) {
      PutWeight(stage);
    }
  }

  void Warmup() {
    for (int64_t s = 0; s < p_; ++s) Put(0, 0, s);
    for (int64_t s = p_ - 1; s >= 0 && status_.ok(); --s) {
      if (s == p_ - 1) {
        Put(0, 1, s);
        continue;
      }
      const double returns = EndOf(0, 1, s + 1, 0) + comm_;
      while (status_.ok() &&
             memory_[s] + kMemory[0] * (2 + 2 * s) <= max_memory_ &&
             now_[s] + cost_[0] <= returns && count_[s][0] < m_) {
        for (int64_t j = 0; j <= s; ++j) Put(0, 0, j);
      }
      Put(0, 1, s);
    }
    // Even out the stages: stage s catches up with stage s - 1's forwards,
    // alternating chunks, from the last stage up.
    int chunk = 0;
    const int64_t max_sweeps = 4 * p_ * m_ + 4;
    int64_t sweeps = 0;
    for (int64_t s = 1; s < p_ && status_.ok(); ++s) {
      while (
          status_.ok() &&
          (count_[s][0] + count_[s][1] < count_[s - 1][0] + count_[s - 1][1] ||
           (count_[s][1] <= count_[s - 1][1] && count_[s - 1][1] < m_))) {
        if (++sweeps > max_sweeps) {
          Fail("the warm-up does not converge");
          return;
        }
        for (int64_t j = p_ - 1; j >= s; --j) {
          if (count_[j][chunk] < m_) Put(0, chunk, j);
        }
        chunk = 1 - chunk;
      }
    }
  }

  void PlaceBackwards(bool fill_b) {
    std::vector<int64_t>& b0 = scratch_b0_;
    std::vector<int64_t>& b1 = scratch_b1_;
    b0.clear();
    b1.clear();
    for (int64_t s = 0; s < p_; ++s) {
      if (count_[s][3] >= count_[s][2]) {
        b0.push_back(s);
      } else if (s == p_ - 1) {
        b1.push_back(s);
      } else if (EndOf(1, 1, s + 1, count_[s][3]) >= 0 || count_[s][2] >= m_) {
        b1.push_back(s);
      } else {
        b0.push_back(s);
      }
    }
    auto place = [&](int64_t s, int chunk) {
      int64_t from = -1;
      if (chunk == 1 && s < p_ - 1) {
        from = static_cast<int64_t>(Id(1, 1, s + 1, count_[s][3]));
      }
      if (chunk == 0 && s > 0 && count_[s][2] < m_) {
        from = static_cast<int64_t>(Id(1, 0, s - 1, count_[s][2]));
      }
      FillWait(s, from, chunk == 1 || fill_b);
      Put(1, chunk, s);
    };
    for (auto it = b1.rbegin(); it != b1.rend() && status_.ok(); ++it) {
      place(*it, 1);
    }
    for (int64_t s : b0) {
      if (!status_.ok()) break;
      place(s, 0);
    }
  }

  void PlaceForwards(bool fill_f) {
    for (int64_t s = 0; s < p_ && status_.ok(); ++s) {
      if (count_[s][1] >= m_) continue;
      int chunk = -1;
      if (count_[s][1] >= count_[s][0]) {
        chunk = 0;
      } else if (s == p_ - 1) {
        chunk = 1;
      } else if (EndOf(0, 1, s + 1, count_[s][1]) >= 0) {
        chunk = 1;
      } else if (count_[s][0] < m_) {
        if (s == 0 || EndOf(0, 0, s - 1, count_[s][0]) >= 0) chunk = 0;
      }
      if (chunk < 0) continue;
      while (status_.ok() && memory_[s] + kMemory[0] > max_memory_) {
        PutWeight(s);
      }
      int64_t from = -1;
      if (chunk == 0 && s > 0 && count_[s][0] < m_) {
        from = static_cast<int64_t>(Id(0, 0, s - 1, count_[s][0]));
      }
      if (chunk == 1 && s < p_ - 1) {
        from = static_cast<int64_t>(Id(0, 1, s + 1, count_[s][1]));
      }
      FillWait(s, from, fill_f);
      Put(0, chunk, s);
    }
  }

  const int64_t p_, m_;
  const std::array<double, 3> cost_;
  const double comm_;
  const int64_t max_memory_;
  std::vector<std::array<int64_t, 6>> count_;
  std::vector<double> end_;
  std::vector<double> now_;
  std::vector<double> busy_;
  std::vector<int64_t> memory_;
  int64_t peak_memory_ = 0;
  std::vector<double> bubble_;
  double max_bubble_ = 0;
  std::vector<double> approved_;
  double max_approved_ = -1;
  std::vector<std::deque<int>> pending_weights_;
  std::vector<std::vector<Placed>> order_;
  std::vector<int64_t> scratch_b0_, scratch_b1_;
  absl::Status status_;
};

// try_v_schedule with its refinement: re-run with the stage bubbles as
// approved while the largest bubble shrinks.
absl::StatusOr<Attempt> RefinedAttempt(int64_t p, int64_t m,
                                       const ChunkDurations& d, bool fill_f,
                                       bool fill_b) {
  absl::StatusOr<Attempt> best =
      VScheduleTry(p, m, d, nullptr).Run(fill_f, fill_b);
  for (int refinement = 0; best.ok() && refinement < 64; ++refinement) {
    absl::StatusOr<Attempt> next =
        VScheduleTry(p, m, d, &best->stage_bubble).Run(fill_f, fill_b);
    if (!next.ok()) return next.status();
    if (!(next->max_bubble < best->max_bubble)) break;
    best = std::move(next);
  }
  return best;
}

}  // namespace

absl::StatusOr<TimedOrder> VShapeZeroBubbleStages(
    int64_t p, int64_t m, const ChunkDurations& durations) {
  std::optional<Attempt> best;
  for (bool fill_b : {true, false}) {
    for (bool fill_f : {true, false}) {
      absl::StatusOr<Attempt> a =
          RefinedAttempt(p, m, durations, fill_f, fill_b);
      if (!a.ok()) return a.status();
      if (!best.has_value() || a->max_bubble < best->max_bubble) {
        best = std::move(*a);
      }
    }
  }
  TimedOrder out;
  out.makespan = best->makespan;
  out.max_compute_busy = best->max_compute_busy;
  out.peak_live_chunks = best->peak_live_chunks;
  std::vector<std::vector<Command>>& stages = out.stages;
  stages.resize(static_cast<size_t>(p));
  for (int64_t s = 0; s < p; ++s) {
    stages[s].reserve(best->order[s].size());
    for (const Placed& x : best->order[s]) {
      switch (x.cat) {
        case 0:
          stages[s].push_back(
              ComputeCommand(CommandKind::kForward, x.microbatch, x.chunk));
          break;
        case 1:
          stages[s].push_back(ComputeCommand(CommandKind::kBackward,
                                             x.microbatch, 1 - x.chunk,
                                             /*defers=*/true));
          break;
        default:
          stages[s].push_back(ComputeCommand(CommandKind::kWeightGradient,
                                             x.microbatch, 1 - x.chunk));
          break;
      }
    }
  }
  return out;
}

}  // namespace blueprint
