#include "core/schedule/zero_bubble.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace blueprint {

namespace {

// The reference's types: 0 F, 1 B (input gradient), 2 W.
constexpr std::array<int64_t, 3> kMemory = {1, 0, -1};

struct Variant {
  bool allow_bubble_before_first_b = false;
  bool prioritize_b = false;
  bool no_bubble_greedy = false;
};

struct Outcome {
  std::vector<std::vector<int>> order;  // per stage: the types in order
  double longest_span = 0;
  double makespan = 0;
  double max_compute_busy = 0;
  int64_t peak_live_chunks = 0;
};

class ManualOrder {
 public:
  ManualOrder(int64_t p, int64_t m, const ChunkDurations& d)
      : p_(p),
        m_(m),
        cost_{d.forward, d.backward_input, d.backward_weight},
        comm_(d.p2p_link_time),
        max_memory_(2 * p - 1),
        count_(static_cast<size_t>(p)),
        end_(static_cast<size_t>(3 * p * m), 0),
        now_(static_cast<size_t>(p), 0),
        busy_(static_cast<size_t>(p), 0),
        memory_(static_cast<size_t>(p), 0),
        bubble_(static_cast<size_t>(p), 0),
        order_(static_cast<size_t>(p)) {
    for (auto& c : count_) c.fill(0);
    for (auto& o : order_) o.reserve(static_cast<size_t>(3 * m));
  }

  absl::StatusOr<Outcome> Run(const Variant& variant) {
    for (int64_t i = 0; i < m_ && status_.ok(); ++i) {
      if (i == 0) {
        FirstMicrobatch(variant);
      } else {
        NextMicrobatch(variant, i);
      }
    }
    for (int64_t s = 0; s < p_ && status_.ok(); ++s) {
      while (status_.ok() && count_[s][2] < m_) Put(s, 2);
    }
    if (!status_.ok()) return status_;
    CheckTimes();
    if (!status_.ok()) return status_;
    Outcome out;
    for (int64_t s = 0; s < p_; ++s) {
      const double span =
          EndOf(2, s, m_ - 1) - EndOf(0, s, 0) + cost_[0];
      out.longest_span = std::max(out.longest_span, span);
    }
    out.order = std::move(order_);
    out.makespan = *std::max_element(now_.begin(), now_.end());
    out.max_compute_busy = *std::max_element(busy_.begin(), busy_.end());
    out.peak_live_chunks = peak_memory_;
    return out;
  }

 private:
  size_t Id(int type, int64_t stage, int64_t mb) const {
    return static_cast<size_t>((type * p_ + stage) * m_ + mb);
  }
  double EndOf(int type, int64_t stage, int64_t mb) const {
    return end_[Id(type, stage, mb)];
  }

  void Fail(const std::string& what) {
    if (status_.ok()) {
      status_ = absl::InternalError(absl::StrCat(
          "zb_h2 order for p ", p_, ", m ", m_, " (F ", cost_[0], ", B ",
          cost_[1], ", W ", cost_[2], "): ", what));
    }
  }

  // put(): the next command of `type` on `stage`, as early as the stage
  // and (F, B) its input from the neighbour allow. Like the reference it
  // reads the neighbour's end time as placed so far (0 if not yet placed);
  // CheckTimes verifies the whole order afterwards.
  void Put(int64_t stage, int type) {
    if (!status_.ok()) return;
    const int64_t mb = count_[stage][type];
    if (mb >= m_) {
      Fail(absl::StrCat("stage ", stage, " has no command of type ", type,
                        " left"));
      return;
    }
    const double no_bubble = now_[stage] + cost_[type];
    double end = no_bubble;
    if (stage > 0 && type == 0) {
      end = std::max(end, EndOf(0, stage - 1, mb) + comm_ + cost_[type]);
    }
    if (stage < p_ - 1 && type == 1) {
      end = std::max(end, EndOf(1, stage + 1, mb) + comm_ + cost_[type]);
    }
    if (count_[stage][0] > 0) {
      bubble_[stage] += end - no_bubble;
      max_bubble_ = std::max(max_bubble_, bubble_[stage]);
    }
    now_[stage] = end;
    busy_[stage] += cost_[type];
    end_[Id(type, stage, mb)] = end;
    memory_[stage] += kMemory[type];
    peak_memory_ = std::max(peak_memory_, memory_[stage]);
    order_[stage].push_back(type);
    ++count_[stage][type];
  }

  // W until `memory` more fits on the stage ("Cannot fit memory" when no W
  // is left to free it).
  void MakeRoom(int64_t s, int64_t memory) {
    while (status_.ok() && memory_[s] + memory > max_memory_) {
      if (count_[s][2] >= count_[s][1]) {
        Fail(absl::StrCat("cannot fit memory on stage ", s));
        return;
      }
      Put(s, 2);
    }
  }

  // W that fit before `input` arrives, then one more unless the wait is
  // within the bubble budget and the variant is not greedy.
  void FillWait(int64_t s, double input, bool no_bubble_greedy) {
    while (status_.ok() && count_[s][2] < count_[s][1] &&
           now_[s] + cost_[2] <= input + comm_) {
      Put(s, 2);
    }
    if (status_.ok() && count_[s][2] < count_[s][1] &&
        now_[s] < input + comm_) {
      if (input + comm_ - now_[s] <= max_bubble_ - bubble_[s]) {
        if (no_bubble_greedy) Put(s, 2);
      } else {
        Put(s, 2);
      }
    }
  }

  void FirstMicrobatch(const Variant& variant) {
    for (int64_t s = 0; s < p_; ++s) Put(s, 0);
    std::vector<int64_t> required(static_cast<size_t>(p_), 0);
    double last = 0;
    for (int64_t s = p_ - 1; s >= 0; --s) {
      if (s == p_ - 1) {
        last = EndOf(0, s, 0) + cost_[1];
        continue;
      }
      int64_t memory = memory_[s];
      double time = now_[s];
      while (count_[s][0] + required[s] < m_ &&
             memory + kMemory[0] <= max_memory_) {
        if (variant.allow_bubble_before_first_b) {
          if (time + cost_[0] > last + comm_) break;
        } else {
          if (time >= last + comm_) break;
        }
        memory += kMemory[0];
        time += cost_[0];
        ++required[s];
      }
      last = std::max(time, last + comm_) + cost_[1];
    }
    for (int64_t s = 1; s < p_; ++s) {
      while (required[s] > 0 && required[s] >= required[s - 1] &&
             count_[s][0] + required[s] < m_) {
        --required[s];
      }
    }
    for (int64_t s = 0; s < p_; ++s) {
      for (int64_t k = 0; k < required[s]; ++k) Put(s, 0);
    }
    for (int64_t s = p_ - 1; s >= 0; --s) Put(s, 1);
  }

  void NextMicrobatch(const Variant& variant, int64_t i) {
    std::vector<int64_t>& required = scratch_;
    required.assign(static_cast<size_t>(p_), 0);
    for (int64_t s = 0; s < p_; ++s) {
      if (count_[s][0] >= m_) continue;
      if (s + 1 < p_ && count_[s][0] >= count_[s + 1][0] + 2 &&
          variant.prioritize_b) {
        const double next_plus_forward =
            now_[s + 1] + cost_[0] + cost_[1] + comm_;
        if (now_[s] >= next_plus_forward) continue;
        double weights = 0;
        int64_t memory = memory_[s] + kMemory[0];
        for (int64_t w = 0;
             memory > max_memory_ && count_[s][2] + w < count_[s][1]; ++w) {
          weights += cost_[2];
          memory += kMemory[2];
        }
        if (now_[s] + cost_[0] + weights <= next_plus_forward) {
          required[s] = 1;
          continue;
        }
        if (next_plus_forward - now_[s] <= max_bubble_ - bubble_[s]) continue;
      }
      required[s] = 1;
    }
    for (int64_t s = p_ - 2; s >= 0; --s) {
      required[s] = std::min(required[s], required[s + 1]);
    }
    for (int64_t s = 0; s < p_ && status_.ok(); ++s) {
      if (required[s] == 0) continue;
      MakeRoom(s, kMemory[0]);
      if (s > 0) {
        FillWait(s, EndOf(0, s - 1, count_[s][0]), variant.no_bubble_greedy);
      }
      Put(s, 0);
    }
    for (int64_t s = p_ - 1; s >= 0 && status_.ok(); --s) {
      if (count_[s][1] != i) {
        Fail(absl::StrCat("stage ", s, " has run ", count_[s][1],
                          " B before microbatch ", i));
        return;
      }
      MakeRoom(s, kMemory[1]);
      if (s + 1 < p_) {
        FillWait(s, EndOf(1, s + 1, i), variant.no_bubble_greedy);
      }
      if (s == 0 && count_[s][0] == m_) {
        while (status_.ok() && count_[s][2] < count_[s][1]) Put(s, 2);
      }
      Put(s, 1);
    }
  }

  // The reference's closing assertions: every command after its inputs.
  void CheckTimes() {
    for (int64_t s = 0; s < p_; ++s) {
      for (int64_t mb = 0; mb < m_; ++mb) {
        const double f = EndOf(0, s, mb), b = EndOf(1, s, mb),
                     w = EndOf(2, s, mb);
        bool ok = b >= f + cost_[1] && w >= b + cost_[2];
        if (s > 0) ok = ok && f >= EndOf(0, s - 1, mb) + comm_ + cost_[0];
        if (s < p_ - 1) ok = ok && b >= EndOf(1, s + 1, mb) + comm_ + cost_[1];
        if (!ok) {
          Fail(absl::StrCat("stage ", s, " microbatch ", mb,
                            " runs before its inputs"));
          return;
        }
      }
    }
  }

  const int64_t p_, m_;
  const std::array<double, 3> cost_;
  const double comm_;
  const int64_t max_memory_;
  std::vector<std::array<int64_t, 3>> count_;
  std::vector<double> end_;
  std::vector<double> now_;
  std::vector<double> busy_;
  std::vector<int64_t> memory_;
  int64_t peak_memory_ = 0;
  std::vector<double> bubble_;
  double max_bubble_ = 0;
  std::vector<std::vector<int>> order_;
  std::vector<int64_t> scratch_;
  absl::Status status_;
};

}  // namespace

absl::StatusOr<TimedOrder> ZeroBubbleH2Stages(int64_t p, int64_t m,
                                              const ChunkDurations& durations) {
  std::optional<Outcome> best;
  absl::Status first_error;
  for (bool allow_bubble : {true, false}) {
    for (bool prioritize_b : {true, false}) {
      for (bool greedy : {true, false}) {
        absl::StatusOr<Outcome> o = ManualOrder(p, m, durations)
                                        .Run({allow_bubble, prioritize_b,
                                              greedy});
        if (!o.ok()) {
          if (first_error.ok()) first_error = o.status();
          continue;
        }
        if (!best.has_value() || o->longest_span < best->longest_span) {
          best = std::move(*o);
        }
      }
    }
  }
  if (!best.has_value()) return first_error;
  TimedOrder out;
  out.makespan = best->makespan;
  out.max_compute_busy = best->max_compute_busy;
  out.peak_live_chunks = best->peak_live_chunks;
  std::vector<std::vector<Command>>& stages = out.stages;
  stages.resize(static_cast<size_t>(p));
  for (int64_t s = 0; s < p; ++s) {
    std::array<int64_t, 3> next = {0, 0, 0};
    stages[s].reserve(best->order[s].size());
    for (int type : best->order[s]) {
      const CommandKind kind = type == 0   ? CommandKind::kForward
                               : type == 1 ? CommandKind::kBackward
                                           : CommandKind::kWeightGradient;
      stages[s].push_back(
          ComputeCommand(kind, next[type]++, 0, /*defers=*/type == 1));
    }
  }
  return out;
}

}  // namespace blueprint
