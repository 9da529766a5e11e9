// TopN: the N best entries seen so far by score, best first. An entry whose
// score equals a kept one ranks after it, so equal scores keep the order in
// which they were offered; this is the result of Calculon's search (a stable
// descending sort, the last entry replaced only by a strictly better score).
//
// Entries live in at most N slots that are reused once full; ranking moves
// only (score, slot) pairs, so inserting costs no allocation once full and
// O(log N + N) small moves.
//
// Example:
//   TopN<Mapping> top(5);
//   if (top.Admits(rate)) top.Insert(rate) = mapping;
#ifndef BLUEPRINTING_CORE_SEARCH_TOP_N_H_
#define BLUEPRINTING_CORE_SEARCH_TOP_N_H_

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace blueprint {

template <typename T>
class TopN {
 public:
  // capacity >= 1. Storage grows with the entries kept, up to capacity.
  explicit TopN(size_t capacity) : capacity_(capacity) {
    const size_t initial = std::min<size_t>(capacity, 1024);
    scores_.reserve(initial);
    slots_.reserve(initial);
    entries_.reserve(initial);
  }

  size_t size() const { return scores_.size(); }
  size_t capacity() const { return capacity_; }
  bool full() const { return scores_.size() == capacity_; }

  // Whether an entry scoring `score`, offered now, would be kept.
  bool Admits(double score) const {
    return !full() || score > scores_.back();
  }
  // The score an entry must beat once full (the last kept score).
  double worst_score() const { return scores_.back(); }

  // Inserts an entry scoring `score` (Admits(score) must hold) after every
  // kept entry scoring at least as much, dropping the last one when full.
  // Returns the entry to fill in (a reused slot holds stale contents).
  T& Insert(double score) {
    size_t slot;
    if (full()) {
      slot = slots_.back();
      scores_.pop_back();
      slots_.pop_back();
    } else {
      slot = entries_.size();
      entries_.emplace_back();
    }
    const auto at = std::upper_bound(scores_.begin(), scores_.end(), score,
                                     std::greater<double>());
    const auto index = at - scores_.begin();
    scores_.insert(at, score);
    slots_.insert(slots_.begin() + index, slot);
    return entries_[slot];
  }

  // The i-th best, i < size().
  double score(size_t i) const { return scores_[i]; }
  const T& entry(size_t i) const { return entries_[slots_[i]]; }

 private:
  size_t capacity_;
  std::vector<double> scores_;  // descending
  std::vector<size_t> slots_;   // slots_[i]: where the i-th best lives
  std::vector<T> entries_;
};

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SEARCH_TOP_N_H_
