// TopN: the N best entries seen so far by score, best first. Among equal
// scores the smaller key ranks first; Insert(score) keys each entry by the
// order in which it was offered, so equal scores keep that order: this is
// the result of Calculon's search (a stable descending sort, the last entry
// replaced only by a strictly better score). The search's workers key their
// entries by enumeration order instead (Insert(score, key)), which may come
// out of order, so that their rankings merge into the sequential one.
//
// Entries live in at most N slots that are reused once full; ranking moves
// only (score, key, slot) triples, so inserting costs no allocation once
// full and O(log N + N) small moves.
//
// Example:
//   TopN<Mapping> top(5);
//   if (top.Admits(rate)) top.Insert(rate) = mapping;
#ifndef BLUEPRINTING_CORE_SEARCH_TOP_N_H_
#define BLUEPRINTING_CORE_SEARCH_TOP_N_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace blueprint {

// The ranking of TopN and of every merge of rankings (the search's workers',
// a partitioned search's parts): a higher score first, then a smaller key.
inline bool RanksBefore(double score_a,
                        const std::pair<uint64_t, uint64_t>& key_a,
                        double score_b,
                        const std::pair<uint64_t, uint64_t>& key_b) {
  if (score_a != score_b) return score_a > score_b;
  return key_a < key_b;
}

template <typename T>
class TopN {
 public:
  // Orders equal scores: (first, second) lexicographically.
  using Key = std::pair<uint64_t, uint64_t>;

  // capacity >= 1. Storage grows with the entries kept, up to capacity.
  explicit TopN(size_t capacity) : capacity_(capacity) {
    const size_t initial = std::min<size_t>(capacity, 1024);
    ranks_.reserve(initial);
    entries_.reserve(initial);
  }

  size_t size() const { return ranks_.size(); }
  size_t capacity() const { return capacity_; }
  bool full() const { return ranks_.size() == capacity_; }

  // Whether an entry scoring `score`, offered now without a key (or with a
  // key above every kept one), would be kept.
  bool Admits(double score) const {
    return !full() || score > ranks_.back().score;
  }
  // Whether an entry scoring `score` with `key` would be kept.
  bool Admits(double score, const Key& key) const {
    return !full() || Before({score, key, 0}, ranks_.back());
  }
  // The score an entry must beat once full (the last kept score).
  double worst_score() const { return ranks_.back().score; }

  // Inserts an entry scoring `score` (Admits(score) must hold) after every
  // kept entry scoring at least as much, dropping the last one when full.
  // Returns the entry to fill in (a reused slot holds stale contents).
  T& Insert(double score) { return Insert(score, {0, next_offer_}); }
  // The same, ranked by (score descending, key ascending); Admits(score,
  // key) must hold.
  T& Insert(double score, const Key& key) {
    ++next_offer_;
    size_t slot;
    if (full()) {
      slot = ranks_.back().slot;
      ranks_.pop_back();
    } else {
      slot = entries_.size();
      entries_.emplace_back();
    }
    const Rank rank{score, key, slot};
    ranks_.insert(std::upper_bound(ranks_.begin(), ranks_.end(), rank, Before),
                  rank);
    return entries_[slot];
  }

  // The i-th best, i < size().
  double score(size_t i) const { return ranks_[i].score; }
  const Key& key(size_t i) const { return ranks_[i].key; }
  const T& entry(size_t i) const { return entries_[ranks_[i].slot]; }

 private:
  struct Rank {
    double score;
    Key key;
    size_t slot;  // where the entry lives in entries_
  };
  static bool Before(const Rank& a, const Rank& b) {
    return RanksBefore(a.score, a.key, b.score, b.key);
  }

  size_t capacity_;
  uint64_t next_offer_ = 0;
  std::vector<Rank> ranks_;  // best first
  std::vector<T> entries_;
};

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SEARCH_TOP_N_H_
