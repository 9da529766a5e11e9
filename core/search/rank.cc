// The strategy search's ranking (searcher.h): each worker's offers to its
// TopN, the rate a mapping must beat that the workers share, and the merge
// of the workers' rankings into the search's, as one worker would have
// ranked them all.
#include <algorithm>
#include <memory>
#include <vector>

#include "core/search/searcher.h"

namespace blueprint {
namespace search_internal {

void Searcher::Offer(double rate, const Group& g, const Choice& c, int64_t b,
                     const Assignment& a, const StagedBlock& block) {
  // Ties rank in enumeration order: by group, then as offered (a group's
  // offers come in enumeration order).
  const TopN<Ranked>::Key key{group_index_, offers_++};
  if (!top_.Admits(rate, key)) return;
  Ranked& slot = top_.Insert(rate, key);
  if (top_.full() && top_.worst_score() > threshold_) {
    threshold_ = top_.worst_score();
    double shared = shared_->threshold.load(std::memory_order_relaxed);
    while (shared < threshold_ &&
           !shared_->threshold.compare_exchange_weak(
               shared, threshold_, std::memory_order_relaxed)) {
    }
  }
  slot.mapping = MappingOf(g, c, b, a);
  slot.block = block;
}

SearchResult Searcher::Merge(
    const std::vector<std::unique_ptr<Searcher>>& workers) {
  const Searcher& first = *workers.front();
  SearchResult result;
  // Every worker's ranking, best first and in enumeration order among equal
  // rates, as one worker would rank them all: a mapping a worker did not
  // keep had `top` better ones, or equal ones before it, so it would not
  // rank here either; and the bounds skip only mappings strictly worse than
  // a worker's last kept one (kBoundSlack).
  struct Candidate {
    double rate;
    TopN<Ranked>::Key key;
    const Ranked* ranked;
  };
  std::vector<Candidate> ranked;
  for (const std::unique_ptr<Searcher>& w : workers) {
    const SearchResult& r = w->result_;
    result.total_executions += r.total_executions;
    result.good_executions += r.good_executions;
    result.bad_executions += r.bad_executions;
    result.work += r.work;
    for (size_t i = 0; i < w->top_.size(); ++i) {
      ranked.push_back({w->top_.score(i), w->top_.key(i), &w->top_.entry(i)});
    }
  }
  std::sort(ranked.begin(), ranked.end(),
            [](const Candidate& a, const Candidate& b) {
              return RanksBefore(a.rate, a.key, b.rate, b.key);
            });
  const size_t kept =
      std::min(ranked.size(), static_cast<size_t>(first.options_.top));
  for (size_t i = 0; i < kept; ++i) {
    const Ranked& r = *ranked[i].ranked;
    RankedExecution out;
    out.mapping = r.mapping;
    out.rank_key = ranked[i].key;
    out.block = r.block.block;
    out.extras = r.block.extras;
    const StepShape step =
        MappingStepShape(first.model_, first.system_, r.mapping);
    ComputeIteration(out.block, out.extras, step, out.iteration);
    ComputeMemory(out.block, out.extras, step, out.memory);
    result.top.push_back(out);
  }
  const SearchOptions& options = first.options_;
  result.dimensions.context = options.max_context > 1;
  result.dimensions.expert = first.model_.moe.has_value();
  result.dimensions.sharding = options.every_sharding;
  result.dimensions.schedule = options.every_schedule;
  result.dimensions.stage_layout =
      options.uneven_stages || options.first_last_stages;
  result.partition = options.partition;
  result.partitions = options.partitions;
  result.top_wanted = options.top;
  return result;
}

}  // namespace search_internal
}  // namespace blueprint
