// The strategy search's bounds (searcher.h): where the pruned mode may skip
// a (choice, microbatch size), a tier pair or a data tier because no mapping
// there can enter the top N. Each is a lower bound on the step time of
// every mapping it rules out, compared with the N-th best rate kept so far
// (the threshold, which only grows) with kBoundSlack to spare; README.md
// says what each proves.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "core/base/status_macros.h"
#include "core/search/searcher.h"

namespace blueprint {
namespace search_internal {

absl::Status Searcher::MakeFloorBound(PrunedCall& call, KnownBound& floor) {
  BP_RETURN_IF_ERROR(Shape(call));
  const std::optional<BoundFigures> compute =
      blocks_.ComputeBound(call.entry, call.spec.shard);
  floor.bound =
      compute.has_value() ? StepTimeLowerBound(*compute, call.spec.step) : 0;
  floor.generation = bounds_generation_;
  ++result_.work.step_time_bounds;
  return absl::OkStatus();
}

absl::Status Searcher::StartTierPair(PrunedCall& call, const TierPrefix& prefix,
                                     PairState& pair) {
  pair.tn = prefix.tn;
  pair.cn = prefix.cn;
  pair.block = nullptr;
  pair.ruled_out = false;
  pair.bound = 0;
  if (!ThresholdKnown()) return absl::OkStatus();
  KnownBound& known = call.bounds[prefix.pair];
  if (known.generation != bounds_generation_) {
    BP_RETURN_IF_ERROR(Shape(call));
    // The bound reads the figures kept beside the block's tiers: the block
    // itself is read only if the pair is not ruled out.
    BP_ASSIGN_OR_RETURN(
        const BlockTable::PlannedBlock planned,
        blocks_.GetPlanned(call.entry, NetsOf(call.g, prefix.tn, prefix.cn),
                           call.spec.shard, /*compose=*/false));
    pair.block = planned.staged;
    known.bound = StepTimeLowerBound(*planned.bound, call.spec.step);
    known.block = pair.block;
    known.generation = bounds_generation_;
  } else {
    pair.block = known.block;
  }
  pair.ruled_out = BeatenBy(call.batch, known.bound);
  if (known.bound > 0) pair.bound = known.bound;
  return absl::OkStatus();
}

// With many data tiers, the iteration without DP itself; with a few, the
// tier pair's bound (the iteration would cost as much as the bound, and
// where DP dominates, as it does under the refined profile's float32
// gradient reduction, the pair's bound plus DP rules most of them out).
double Searcher::WithoutDpBound(PrunedCall& call, const TierPrefix& prefix,
                                const PairState& pair,
                                const StagedBlock& block, bool& ruled_out) {
  if (!ThresholdKnown()) return 0;
  if (prefix.valid <= kDirectDataTiers) return pair.bound;
  // The iteration without DP: d = 1 (step.data_net stays a valid tier).
  // Every other term of the step time is the same, and the DP exposed time
  // is >= 0.
  StepShape& step = call.spec.step;
  IterationFigures& iteration = iteration_scratch_;
  const int64_t d = step.d;
  step.d = 1;
  ComputeIteration(block.block, block.extras, step, iteration);
  step.d = d;
  ++result_.work.step_time_bounds;
  ruled_out = BeatenBy(call.batch, iteration.total_time);
  return iteration.total_time;
}

// Per data tier, a lower bound on dp_comm_exposed_time that holds whatever
// the tensor, context and pipeline tiers and whether the data tier is also
// one of them: without DP overlap, it is bpp * block_dp_time, which depends
// on the data tier only; with it, block_dp_time plus two terms >= 0
// (figures.cc).
void Searcher::MakeDpBounds(PrunedCall& call, const TierPrefix& prefix,
                            const StagedBlock& block) {
  StepShape& step = call.spec.step;
  IterationFigures& iteration = iteration_scratch_;
  dp_order_.clear();
  for (int64_t dn : call.gs.data_tiers) {
    SetStepNetworks(step, system_, prefix.tn, prefix.pn, dn);
    ComputeIteration(block.block, block.extras, step, iteration);
    ++result_.work.step_time_bounds;
    double bound = call.c.dp_overlap ? iteration.block_dp_time
                                     : iteration.dp_comm_exposed_time;
    if (!(bound >= 0)) bound = 0;  // NaN: no bound
    dp_time_bound_[static_cast<size_t>(dn)] = bound;
    dp_order_.push_back(dn);
  }
  std::sort(dp_order_.begin(), dp_order_.end(), [&](int64_t x, int64_t y) {
    const double bx = dp_time_bound_[static_cast<size_t>(x)];
    const double by = dp_time_bound_[static_cast<size_t>(y)];
    return bx < by || (bx == by && x < y);
  });
}

void Searcher::DataCandidates(const GroupState& gs, const TierPrefix& prefix,
                              bool bounded, double without_dp, double batch) {
  candidates_.clear();
  const Group& g = *gs.group;
  const int64_t data_nets =
      g.d > 1 ? static_cast<int64_t>(system_.networks.size()) : 1;
  // dn equal to tn, cn or pn: their own check (a data tier that does not
  // hold d alone has no bound: always a candidate when valid).
  int64_t same[3] = {prefix.tn, 0, 0};
  int used = 1;
  for (int64_t tier : {prefix.cn, prefix.pn}) {
    if (std::find(same, same + used, tier) == same + used) {
      same[used++] = tier;
    }
  }
  for (int i = 0; i < used; ++i) {
    const int64_t dn = same[i];
    ++result_.work.tier_triples_examined;
    if (dn >= data_nets ||
        !AssignmentValid(g, prefix.tn, prefix.cn, prefix.pn, dn)) {
      continue;
    }
    if (bounded && gs.data_tier_holds[static_cast<size_t>(dn)] &&
        BeatenBy(batch, without_dp + dp_time_bound_[static_cast<size_t>(dn)])) {
      continue;
    }
    candidates_.push_back(dn);
  }
  if (prefix.others_ok) {
    // The other data tiers: every one, or those whose bound lets them in, a
    // prefix of dp_order_ (the bound grows along it).
    const std::vector<int64_t>& tiers = bounded ? dp_order_ : gs.data_tiers;
    for (int64_t dn : tiers) {
      ++result_.work.tier_triples_examined;
      if (bounded &&
          BeatenBy(batch,
                   without_dp + dp_time_bound_[static_cast<size_t>(dn)])) {
        break;
      }
      if (std::find(same, same + used, dn) != same + used) continue;
      candidates_.push_back(dn);
    }
  }
  std::sort(candidates_.begin(), candidates_.end());
}

void Searcher::RecordLeastBound(const PrunedCall& call) {
  KnownBound& least = least_bounds_[call.bound_slot];
  if (least.generation == bounds_generation_) return;
  // Only once every pair's bound is known and positive (a pair whose bound
  // is 0 or NaN is never ruled out: neither is the choice).
  double least_bound = kInfinity;
  for (int64_t pair = 0; pair < call.gs.pairs; ++pair) {
    const KnownBound& known = call.bounds[pair];
    if (known.generation != bounds_generation_ || !(known.bound > 0)) return;
    least_bound = std::min(least_bound, known.bound);
  }
  least.bound = least_bound;
  least.generation = bounds_generation_;
}

}  // namespace search_internal
}  // namespace blueprint
