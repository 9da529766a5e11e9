#include "core/search/search.h"

#include <algorithm>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/field_errors.h"
#include "core/base/status_macros.h"
#include "core/search/block_table.h"
#include "core/search/top_n.h"
#include "core/spec/check.h"
#include "core/spec/derive.h"

namespace blueprint {
namespace {

// Inputs beyond these would make the enumeration itself unreasonable.
constexpr int64_t kMaxProcs = int64_t{1} << 31;
constexpr int64_t kMaxBatch = int64_t{1} << 31;

// Relative slack of the step-time lower bound: far above the rounding error
// of the few dozen operations on either side, far below any real difference.
constexpr double kBoundSlack = 1e-9;

// A (tensor_net, pipeline_net) with at most this many valid data tiers has
// them all evaluated, without the per-pair bound (see EvaluatePruned).
constexpr int64_t kDirectDataTiers = 3;

// Calculon's _factors: every divisor of x (x >= 1), increasing.
std::vector<int64_t> Divisors(int64_t x) {
  std::vector<int64_t> low, high;
  for (int64_t i = 1; i <= x / i; ++i) {
    if (x % i != 0) continue;
    low.push_back(i);
    if (i != x / i) high.push_back(x / i);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

// MakeStepShape of the training spec with these parts (calculon.h
// TrainingPartsOf), its values derived as the checker derives them.
StepShape StepShapeOf(const TransformerModel& model, const System& system,
                      const CalculonTrainingParts& parts) {
  return MakeStepShape(DeriveTrainingValues(model, parts.parallelism,
                                            parts.batch, parts.options),
                       model, system, parts.batch, parts.options);
}

// Steps 6-15 of SEARCH.md: the choices tried for one (t, p, v).
struct Choice {
  RecomputePolicy recompute;
  bool optimizer_sharding;
  TensorCommunication comm;  // with seq_par_ag_redo
  bool dp_overlap;
  TensorOverlap tp_overlap;
  Offload offload;
  bool fused_activation;
};

std::vector<Choice> EnumerateChoices(int64_t t, int64_t d, bool has_mem2,
                                     const SearchOptions& options) {
  const std::vector<bool> both = {true, false};
  const std::vector<bool> only_false = {false};
  const std::vector<TensorOverlap> overlaps =
      t > 1 && options.tp_overlap
          ? std::vector<TensorOverlap>{TensorOverlap::kNone,
                                       TensorOverlap::kRing,
                                       TensorOverlap::kPipe}
          : std::vector<TensorOverlap>{TensorOverlap::kNone};
  std::vector<Choice> out;
  for (RecomputePolicy recompute :
       {RecomputePolicy::kFull, RecomputePolicy::kAttentionOnly,
        RecomputePolicy::kNone}) {
    for (bool sharding : d > 1 ? both : only_false) {
      // Calculon's ar, p2p_rs_ag, rs_ag.
      for (const TensorCommunication& comm :
           {TensorCommunication{AllReduce{}},
            TensorCommunication{EdgeReduceScatterAllGather{}},
            TensorCommunication{ReduceScatterAllGather{}}}) {
        const bool can_redo =
            std::holds_alternative<ReduceScatterAllGather>(comm) &&
            recompute != RecomputePolicy::kFull;
        for (bool redo : can_redo ? both : only_false) {
          for (bool dp_overlap :
               d > 1 && options.dp_overlap ? both : only_false) {
            for (TensorOverlap tp_overlap : overlaps) {
              for (bool weights : has_mem2 ? both : only_false) {
                const bool can_offload_activations =
                    has_mem2 && recompute != RecomputePolicy::kFull;
                for (bool activations :
                     can_offload_activations ? both : only_false) {
                  for (bool optimizer : has_mem2 ? both : only_false) {
                    for (bool fused : options.fused_activation) {
                      Choice c;
                      c.recompute = recompute;
                      c.optimizer_sharding = sharding;
                      c.comm = comm;
                      if (redo) c.comm = ReduceScatterAllGather{true};
                      c.dp_overlap = dp_overlap;
                      c.tp_overlap = tp_overlap;
                      c.offload = {weights, activations, optimizer};
                      c.fused_activation = fused;
                      out.push_back(c);
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

// Steps 1-5 of SEARCH.md: one (t, p, v) and what follows from it.
struct Group {
  int64_t t = 1, p = 1, d = 1, v = 1, batch = 1;
  std::vector<int64_t> microbatch_sizes;  // step 16, before --mbs-break
  std::vector<Choice> choices;
  double weight = 0;  // the most executions it can have, for progress
};

struct Ranked {
  CalculonExecution execution;
  StagedBlock block;
};

class Searcher {
 public:
  Searcher(const TransformerModel& model, const System& system,
           const SearchOptions& options, ProgressFn progress, CancelFn cancel)
      : model_(model),
        system_(system),
        options_(options),
        progress_(std::move(progress)),
        cancel_(std::move(cancel)),
        blocks_(model, system, options.datatype, options.precision),
        top_(static_cast<size_t>(options.top)) {
    for (const NetworkTier& net : system.networks) {
      every_tier_holds_one_ =
          every_tier_holds_one_ && TierAssignmentFits(net, 1);
    }
    const size_t nets = system.networks.size();
    dp_time_bound_.resize(nets);
    dp_order_.reserve(nets);
    candidates_.reserve(nets);
  }

  absl::StatusOr<SearchResult> Run();

 private:
  // The network-tier assignments of one (t, p, d), in enumeration order.
  struct Assignment {
    int64_t tn, pn, dn;
  };
  // One (tensor_net, pipeline_net) of a (t, p, d) with at least one valid
  // data_net. A data_net other than tn and pn is valid exactly when
  // `others_ok` (tn and pn hold t and p) and the tier holds d alone
  // (GroupState::data_tiers); dn == tn and dn == pn are checked one by one.
  struct TierPair {
    int64_t tn, pn;
    bool others_ok;
    int64_t valid;  // how many data_net make a valid assignment
  };
  struct GroupState {
    const Group* group = nullptr;
    int64_t blocks_per_stage = 0;
    // The checker's InterleavingFits (always so in this space) and
    // TensorSplitsModel (the search filters t by hidden and heads only, so
    // the feed-forward size may not split; Calculon asserts, the checker
    // rejects).
    bool structure_ok = true;
    int64_t assignments = 0;        // all of them
    int64_t valid_assignments = 0;  // those passing the tier check
    Assignment first_valid = {0, 0, 0};  // when valid_assignments > 0
    // The data_net values (those of SEARCH.md's range) whose tier holds d
    // alone, increasing, and the same as a mask by tier.
    std::vector<int64_t> data_tiers;
    std::vector<bool> data_tier_holds;
    std::vector<TierPair> pairs;  // in enumeration order
  };

  std::vector<Group> EnumerateGroups() const;
  GroupState StartGroup(const Group& group) const;
  // The tier check of SEARCH.md's step 17 for one assignment, looking only
  // at the tiers it uses.
  bool AssignmentValid(const Group& g, int64_t tn, int64_t pn,
                       int64_t dn) const;
  // Fills candidates_ with the data_net values of `pair` to evaluate, in
  // increasing order: every valid one, or (`bounded`) only those whose
  // iteration may enter the top N (see EvaluatePruned).
  void DataCandidates(const GroupState& gs, const TierPair& pair,
                      bool bounded, double step_time_without_dp,
                      double batch);
  absl::Status RunGroup(const Group& group, double done, double total);
  CalculonExecution Execution(const Group& g, const Choice& c, int64_t b) const;
  // Both count the executions of one (choice, microbatch size) and offer the
  // valid ones to the ranking.
  // `parts` are the choice's spec parts (TrainingPartsOf), whose microbatch
  // size they set to b.
  absl::Status EvaluatePruned(const GroupState& gs, const Choice& c, int64_t b,
                              CalculonTrainingParts& parts);
  absl::Status EvaluateExhaustive(const GroupState& gs, const Choice& c,
                                  int64_t b, CalculonTrainingParts& parts);
  void Offer(double rate, const CalculonExecution& e, int64_t tn, int64_t pn,
             int64_t dn, const StagedBlock& block);

  const TransformerModel& model_;
  const System& system_;
  const SearchOptions& options_;
  ProgressFn progress_;
  CancelFn cancel_;
  BlockTable blocks_;
  TopN<Ranked> top_;
  SearchResult result_;
  double last_progress_ = -1;
  // A tier no dimension uses must still hold 1 (Calculon checks every tier).
  bool every_tier_holds_one_ = true;
  // Scratch of EvaluatePruned, sized once to the tier count (no allocation
  // per mapping): a lower bound on the DP exposed time per data_net for the
  // current tensor_net (NaN: unknown), the data tiers in increasing order of
  // it, and the data_net values to evaluate for one tier pair.
  std::vector<double> dp_time_bound_;
  std::vector<int64_t> dp_order_;
  std::vector<int64_t> candidates_;
};

std::vector<Group> Searcher::EnumerateGroups() const {
  const int64_t n = options_.procs;
  const int64_t blocks = model_.num_blocks;
  const bool has_mem2 = system_.mem2.gib > 0;
  const int64_t nets = static_cast<int64_t>(system_.networks.size());
  std::vector<Group> groups;
  for (int64_t t : Divisors(n)) {
    if (model_.hidden % t != 0 || model_.attn_heads % t != 0) continue;
    for (int64_t p : Divisors(std::min(n / t, blocks))) {
      if (n % (t * p) != 0 || blocks % p != 0) continue;
      const int64_t d = n / (t * p);
      if (d > options_.max_batch) continue;
      const std::vector<int64_t> interleavings =
          p == 1 ? std::vector<int64_t>{1} : Divisors(blocks / p);
      for (int64_t v : interleavings) {
        Group g;
        g.t = t;
        g.p = p;
        g.d = d;
        g.v = v;
        g.batch = options_.max_batch / d * d;
        for (int64_t b : Divisors(g.batch / d)) {
          if ((b * model_.seq_size) % t == 0) g.microbatch_sizes.push_back(b);
        }
        g.choices = EnumerateChoices(t, d, has_mem2, options_);
        const double assignments = static_cast<double>(
            (t > 1 ? nets : 1) * (p > 1 ? nets : 1) * (d > 1 ? nets : 1));
        g.weight = static_cast<double>(g.choices.size()) *
                   static_cast<double>(g.microbatch_sizes.size()) *
                   assignments;
        groups.push_back(std::move(g));
      }
    }
  }
  return groups;
}

Searcher::GroupState Searcher::StartGroup(const Group& g) const {
  GroupState gs;
  gs.group = &g;
  const int64_t blocks = model_.num_blocks;
  gs.blocks_per_stage = BlocksPerStage(blocks, g.p);
  gs.structure_ok = InterleavingFits(g.v, gs.blocks_per_stage) &&
                    TensorSplitsModel(model_, g.t);
  // The assignments are counted, not enumerated: O(tiers^2) per (t, p, d).
  const int64_t nets = static_cast<int64_t>(system_.networks.size());
  const int64_t tensor_nets = g.t > 1 ? nets : 1;
  const int64_t pipeline_nets = g.p > 1 ? nets : 1;
  const int64_t data_nets = g.d > 1 ? nets : 1;
  gs.assignments = tensor_nets * pipeline_nets * data_nets;
  gs.data_tier_holds.assign(static_cast<size_t>(nets), false);
  for (int64_t dn = 0; dn < data_nets; ++dn) {
    if (TierAssignmentFits(system_.networks[static_cast<size_t>(dn)],
                           g.d > 1 ? g.d : 1)) {
      gs.data_tiers.push_back(dn);
      gs.data_tier_holds[static_cast<size_t>(dn)] = true;
    }
  }
  const int64_t holding = static_cast<int64_t>(gs.data_tiers.size());
  for (int64_t tn = 0; tn < tensor_nets; ++tn) {
    for (int64_t pn = 0; pn < pipeline_nets; ++pn) {
      TierPair pair;
      pair.tn = tn;
      pair.pn = pn;
      // The assignment with a data_net used by neither tn nor pn.
      pair.others_ok = AssignmentValid(g, tn, pn, /*dn=*/-1);
      pair.valid = 0;
      if (pair.others_ok) {
        pair.valid = holding - (gs.data_tier_holds[static_cast<size_t>(tn)]
                                    ? 1 : 0) -
                     (pn != tn && gs.data_tier_holds[static_cast<size_t>(pn)]
                          ? 1 : 0);
      }
      int64_t first_dn = -1;
      // dn == tn, and dn == pn when pn differs.
      const int64_t same[2] = {tn, pn};
      for (int i = 0; i < (pn != tn ? 2 : 1); ++i) {
        const int64_t dn = same[i];
        if (dn < data_nets && AssignmentValid(g, tn, pn, dn)) {
          ++pair.valid;
          if (first_dn < 0 || dn < first_dn) first_dn = dn;
        }
      }
      if (pair.valid == 0) continue;
      if (gs.valid_assignments == 0) {
        if (pair.others_ok) {
          for (int64_t dn : gs.data_tiers) {
            if (dn == tn || dn == pn) continue;
            if (first_dn < 0 || dn < first_dn) first_dn = dn;
            break;
          }
        }
        gs.first_valid = {tn, pn, first_dn};
      }
      gs.valid_assignments += pair.valid;
      gs.pairs.push_back(pair);
    }
  }
  return gs;
}

bool Searcher::AssignmentValid(const Group& g, int64_t tn, int64_t pn,
                               int64_t dn) const {
  if (!every_tier_holds_one_) return false;
  const int64_t t = g.t > 1 ? g.t : 1;
  const int64_t p = g.p > 1 ? g.p : 1;
  const int64_t d = g.d > 1 ? g.d : 1;
  const auto holds = [&](int64_t tier) {
    int64_t used = 1;
    if (tn == tier) used *= t;
    if (pn == tier) used *= p;
    if (dn == tier) used *= d;
    return TierAssignmentFits(system_.networks[static_cast<size_t>(tier)],
                              used);
  };
  return holds(tn) && (pn == tn || holds(pn)) &&
         (dn < 0 || dn == tn || dn == pn || holds(dn));
}

CalculonExecution Searcher::Execution(const Group& g, const Choice& c,
                                      int64_t b) const {
  CalculonExecution e;
  e.num_procs = options_.procs;
  e.tensor = g.t;
  e.pipeline = g.p;
  e.data = g.d;
  e.batch_size = g.batch;
  e.microbatch_size = b;
  e.interleaving = g.v;
  e.datatype = options_.datatype;
  e.fused_activation = c.fused_activation;
  e.recompute = c.recompute;
  e.optimizer_sharding = c.optimizer_sharding;
  e.comm = c.comm;
  e.tp_overlap = c.tp_overlap;
  e.dp_overlap = c.dp_overlap;
  e.offload = c.offload;
  return e;
}

void Searcher::Offer(double rate, const CalculonExecution& e, int64_t tn,
                     int64_t pn, int64_t dn, const StagedBlock& block) {
  if (!top_.Admits(rate)) return;
  Ranked& slot = top_.Insert(rate);
  slot.execution = e;
  slot.execution.tensor_net = tn;
  slot.execution.pipeline_net = pn;
  slot.execution.data_net = dn;
  slot.block = block;
}

BlockConfig ConfigOf(const CalculonExecution& e) {
  BlockConfig config;
  config.tensor = e.tensor;
  config.microbatch_size = e.microbatch_size;
  config.recompute = e.recompute;
  config.comm = e.comm;
  config.tp_overlap = e.tp_overlap;
  config.fused_activation = e.fused_activation;
  return config;
}

// Every execution of one (choice, b) shares the checks that do not depend on
// the network tiers (interleaving, offload, memory: the memory figures come
// from footprints, not from times), so they are made once. The iteration is
// then evaluated per tier assignment, in enumeration order, except where a
// lower bound on the step time shows that it cannot enter the top N:
//   - per tensor_net, StepTimeLowerBound (the block with its TP tier);
//   - per (tensor_net, pipeline_net) with many data_net values, the step time
//     without DP (the iteration with d = 1: every term but the DP exposed
//     time, which is >= 0), plus per data_net a lower bound on the DP exposed
//     time (below), so that only the data tiers with the smallest bounds are
//     looked at (a prefix of them in increasing order of the bound).
// So the work per (choice, b) is O(tiers^2) bounds plus the iterations that
// may enter the top N, not O(tiers^3). Skipping an assignment is safe: its
// rate is at most the bound's, which is at most the N-th best rate when it
// was computed, and that only grows; the assignments evaluated are offered in
// enumeration order, so ties rank as in Calculon.
absl::Status Searcher::EvaluatePruned(const GroupState& gs, const Choice& c,
                                      int64_t b, CalculonTrainingParts& parts) {
  const Group& g = *gs.group;
  result_.total_executions += gs.assignments;
  if (!gs.structure_ok || !OffloadFits(c.offload, gs.blocks_per_stage) ||
      gs.valid_assignments == 0) {
    result_.bad_executions += gs.assignments;
    return absl::OkStatus();
  }
  CalculonExecution e = Execution(g, c, b);
  const BlockConfig config = ConfigOf(e);
  const int64_t shard = c.optimizer_sharding ? g.d : 1;
  e.tensor_net = gs.first_valid.tn;
  e.pipeline_net = gs.first_valid.pn;
  e.data_net = gs.first_valid.dn;
  BP_ASSIGN_OR_RETURN(const StagedBlock* block,
                      blocks_.Get(config, e.tensor_net, shard));
  parts.batch.microbatch_size = b;
  StepShape step = StepShapeOf(model_, system_, parts);
  MemoryFigures memory;
  ComputeMemory(block->block, block->extras, step, memory);
  ++result_.work.memory_evaluations;
  if (!MemoryFits(memory)) {
    result_.bad_executions += gs.assignments;
    return absl::OkStatus();
  }
  result_.good_executions += gs.valid_assignments;
  result_.bad_executions += gs.assignments - gs.valid_assignments;

  const double batch = static_cast<double>(g.batch);
  IterationFigures iteration;
  int64_t planned_tn = -1;
  bool ruled_out = false;
  bool dp_bounds_ready = false;
  for (const TierPair& pair : gs.pairs) {
    if (pair.tn != planned_tn) {
      planned_tn = pair.tn;
      BP_ASSIGN_OR_RETURN(block, blocks_.Get(config, pair.tn, shard));
      ruled_out = false;
      dp_bounds_ready = false;
      if (top_.full()) {
        const double bound = StepTimeLowerBound(block->block, step);
        const double best_rate = batch / (bound * (1 - kBoundSlack));
        ruled_out = best_rate <= top_.worst_score();
      }
    }
    if (ruled_out) continue;
    ++result_.work.tier_pairs_examined;
    // The data tier stays the first valid one until a data tier is chosen
    // below (the bound without DP does not read it).
    SetStepNetworks(step, system_, pair.tn, pair.pn, e.data_net);
    // A few data tiers are evaluated as they come; bounding them would cost
    // about as much (with Calculon's systems of 2 or 3 tiers, always so).
    const bool bounded = top_.full() && pair.valid > kDirectDataTiers;
    double without_dp = 0;
    if (bounded) {
      // The iteration without DP: d = 1 (step.data_net stays a valid tier).
      const int64_t d = step.d;
      step.d = 1;
      ComputeIteration(block->block, block->extras, step, iteration);
      step.d = d;
      ++result_.work.step_time_bounds;
      without_dp = iteration.total_time;
      const double best_rate = batch / (without_dp * (1 - kBoundSlack));
      if (best_rate <= top_.worst_score()) continue;
      if (!dp_bounds_ready) {
        // Per data tier, a lower bound on dp_comm_exposed_time that holds
        // whatever the pipeline tier and whether the data tier is also the
        // tensor or pipeline one: without DP overlap, it is bpp *
        // block_dp_time, which depends on the data tier only; with it,
        // block_dp_time plus two terms >= 0 (figures.cc).
        dp_bounds_ready = true;
        dp_order_.clear();
        for (int64_t dn : gs.data_tiers) {
          SetStepNetworks(step, system_, pair.tn, pair.pn, dn);
          ComputeIteration(block->block, block->extras, step, iteration);
          ++result_.work.step_time_bounds;
          double bound = c.dp_overlap ? iteration.block_dp_time
                                      : iteration.dp_comm_exposed_time;
          if (!(bound >= 0)) bound = 0;  // NaN: no bound
          dp_time_bound_[static_cast<size_t>(dn)] = bound;
          dp_order_.push_back(dn);
        }
        std::sort(dp_order_.begin(), dp_order_.end(),
                  [&](int64_t x, int64_t y) {
                    const double bx = dp_time_bound_[static_cast<size_t>(x)];
                    const double by = dp_time_bound_[static_cast<size_t>(y)];
                    return bx < by || (bx == by && x < y);
                  });
      }
    }
    DataCandidates(gs, pair, bounded, without_dp, batch);
    for (int64_t dn : candidates_) {
      SetStepNetworks(step, system_, pair.tn, pair.pn, dn);
      ComputeIteration(block->block, block->extras, step, iteration);
      ++result_.work.iteration_evaluations;
      Offer(iteration.sample_rate, e, pair.tn, pair.pn, dn, *block);
    }
  }
  return absl::OkStatus();
}

void Searcher::DataCandidates(const GroupState& gs, const TierPair& pair,
                              bool bounded, double without_dp, double batch) {
  candidates_.clear();
  const int64_t data_nets = gs.group->d > 1
                                ? static_cast<int64_t>(system_.networks.size())
                                : 1;
  // dn == tn or dn == pn: their own check (a data tier that does not hold d
  // alone has no bound: always a candidate when valid).
  const int64_t same[2] = {pair.tn, pair.pn};
  for (int i = 0; i < (pair.pn != pair.tn ? 2 : 1); ++i) {
    const int64_t dn = same[i];
    ++result_.work.tier_triples_examined;
    if (dn >= data_nets || !AssignmentValid(*gs.group, pair.tn, pair.pn, dn)) {
      continue;
    }
    if (bounded && gs.data_tier_holds[static_cast<size_t>(dn)]) {
      const double total =
          without_dp + dp_time_bound_[static_cast<size_t>(dn)];
      if (batch / (total * (1 - kBoundSlack)) <= top_.worst_score()) continue;
    }
    candidates_.push_back(dn);
  }
  if (pair.others_ok) {
    // The other data tiers: every one, or those whose bound lets them in, a
    // prefix of dp_order_ (the bound grows along it).
    const std::vector<int64_t>& tiers = bounded ? dp_order_ : gs.data_tiers;
    for (int64_t dn : tiers) {
      ++result_.work.tier_triples_examined;
      if (bounded) {
        const double total =
            without_dp + dp_time_bound_[static_cast<size_t>(dn)];
        if (batch / (total * (1 - kBoundSlack)) <= top_.worst_score()) break;
      }
      if (dn == pair.tn || dn == pair.pn) continue;
      candidates_.push_back(dn);
    }
  }
  std::sort(candidates_.begin(), candidates_.end());
}

// Each execution on its own, as Calculon runs it: tier check, interleaving
// and offload checks, memory, iteration.
absl::Status Searcher::EvaluateExhaustive(const GroupState& gs, const Choice& c,
                                          int64_t b,
                                          CalculonTrainingParts& parts) {
  const Group& g = *gs.group;
  CalculonExecution e = Execution(g, c, b);
  const BlockConfig config = ConfigOf(e);
  const int64_t shard = c.optimizer_sharding ? g.d : 1;
  const int64_t nets = static_cast<int64_t>(system_.networks.size());
  // The step shape, built for the first valid assignment; each assignment
  // moves it to its own tiers (nothing else in it depends on them).
  StepShape step;
  bool shaped = false;
  MemoryFigures memory;
  IterationFigures iteration;
  for (int64_t tn = 0; tn < (g.t > 1 ? nets : 1); ++tn) {
    for (int64_t pn = 0; pn < (g.p > 1 ? nets : 1); ++pn) {
      for (int64_t dn = 0; dn < (g.d > 1 ? nets : 1); ++dn) {
        ++result_.total_executions;
        e.tensor_net = tn;
        e.pipeline_net = pn;
        e.data_net = dn;
        const bool valid = AssignmentValid(g, tn, pn, dn) && gs.structure_ok &&
                           OffloadFits(c.offload, gs.blocks_per_stage);
        if (!valid) {
          ++result_.bad_executions;
          continue;
        }
        BP_ASSIGN_OR_RETURN(const StagedBlock* block,
                            blocks_.Get(config, tn, shard));
        if (!shaped) {
          parts.batch.microbatch_size = b;
          step = StepShapeOf(model_, system_, parts);
          shaped = true;
        }
        SetStepNetworks(step, system_, tn, pn, dn);
        ComputeMemory(block->block, block->extras, step, memory);
        ++result_.work.memory_evaluations;
        if (!MemoryFits(memory)) {
          ++result_.bad_executions;
          continue;
        }
        ++result_.good_executions;
        ComputeIteration(block->block, block->extras, step, iteration);
        ++result_.work.iteration_evaluations;
        Offer(iteration.sample_rate, e, tn, pn, dn, *block);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Searcher::RunGroup(const Group& g, double done, double total) {
  const GroupState gs = StartGroup(g);
  const double per_choice =
      g.choices.empty() ? 0 : g.weight / static_cast<double>(g.choices.size());
  for (size_t i = 0; i < g.choices.size(); ++i) {
    if (cancel_ && cancel_()) return absl::CancelledError("search cancelled");
    const Choice& c = g.choices[i];
    // The spec parts of the choice, built once: only the microbatch size
    // varies below, and the tiers are moved per assignment (SetStepNetworks).
    CalculonExecution e = Execution(g, c, /*b=*/1);
    e.tensor_net = gs.first_valid.tn;
    e.pipeline_net = gs.first_valid.pn;
    e.data_net = gs.first_valid.dn;
    CalculonTrainingParts parts = TrainingPartsOf(e, model_);
    for (int64_t b : g.microbatch_sizes) {
      const int64_t good_before = result_.good_executions;
      BP_RETURN_IF_ERROR(options_.exhaustive
                             ? EvaluateExhaustive(gs, c, b, parts)
                             : EvaluatePruned(gs, c, b, parts));
      if (options_.mbs_break && result_.good_executions == good_before) break;
    }
    if (progress_ && total > 0) {
      const double fraction =
          (done + per_choice * static_cast<double>(i + 1)) / total;
      if (fraction - last_progress_ >= 1e-3) {
        last_progress_ = fraction;
        progress_(std::min(fraction, 1.0));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<SearchResult> Searcher::Run() {
  const std::vector<Group> groups = EnumerateGroups();
  double total = 0;
  for (const Group& g : groups) total += g.weight;
  double done = 0;
  int64_t current_t = 0;
  for (const Group& g : groups) {
    // No block is shared across t: keep the table to one t at a time.
    if (g.t != current_t) {
      blocks_.Clear();
      current_t = g.t;
    }
    BP_RETURN_IF_ERROR(RunGroup(g, done, total));
    done += g.weight;
  }
  if (progress_) progress_(1.0);

  for (size_t i = 0; i < top_.size(); ++i) {
    const Ranked& r = top_.entry(i);
    RankedExecution out;
    out.execution = r.execution;
    out.block = r.block.block;
    out.extras = r.block.extras;
    const StepShape step = ExecutionStepShape(model_, system_, r.execution);
    ComputeIteration(out.block, out.extras, step, out.iteration);
    ComputeMemory(out.block, out.extras, step, out.memory);
    result_.top.push_back(out);
  }
  result_.work.blocks_planned = blocks_.blocks_planned();
  result_.work.blocks_resharded = blocks_.blocks_resharded();
  return std::move(result_);
}

// Options, model and system problems, one per line. The model and system are
// judged by the checker on the simplest mapping (t = p = d = 1) with the
// largest microbatch the search can try, so its messages name the fields.
absl::Status ValidateInputs(const TransformerModel& model,
                            const System& system,
                            const SearchOptions& options) {
  std::vector<FieldError> problems;
  if (options.procs < 1 || options.procs > kMaxProcs) {
    problems.push_back({"--procs",
                        absl::StrCat("--procs (", options.procs,
                                     ") must be between 1 and ", kMaxProcs),
                        ErrorCode::kOutOfRange});
  }
  if (options.max_batch < 1 || options.max_batch > kMaxBatch) {
    problems.push_back({"--max-batch",
                        absl::StrCat("--max-batch (", options.max_batch,
                                     ") must be between 1 and ", kMaxBatch),
                        ErrorCode::kOutOfRange});
  }
  if (options.top < 1) {
    problems.push_back(
        {"--top", absl::StrCat("--top (", options.top, ") must be at least 1"),
         ErrorCode::kOutOfRange});
  }
  if (options.fused_activation.empty()) {
    problems.push_back({"--fused-activation",
                        "--fused-activation must allow true, false or both",
                        ErrorCode::kInvalidValue});
  }
  CalculonExecution probe;
  probe.datatype = options.datatype;
  probe.batch_size = probe.microbatch_size =
      options.max_batch >= 1 && options.max_batch <= kMaxBatch
          ? options.max_batch
          : 1;
  for (Violation& v : FindViolations(SpecOf(probe, model, system))) {
    problems.push_back(std::move(v));
  }
  if (problems.empty()) return absl::OkStatus();
  return InvalidInputError(problems);
}

}  // namespace

TypedProgram ExecutionProgram(const TransformerModel& model,
                              const System& system,
                              const CalculonExecution& e) {
  TypedProgram program;
  program.spec = SpecOf(e, model, system);
  program.derived = DeriveValues(program.spec);
  return program;
}

StepShape ExecutionStepShape(const TransformerModel& model,
                             const System& system, const CalculonExecution& e) {
  return StepShapeOf(model, system, TrainingPartsOf(e, model));
}

absl::StatusOr<SearchResult> RunSearch(const TransformerModel& model,
                                       const System& system,
                                       const SearchOptions& options,
                                       ProgressFn progress, CancelFn cancel) {
  BP_RETURN_IF_ERROR(ValidateInputs(model, system, options));
  absl::StatusOr<SearchResult> result =
      Searcher(model, system, options, std::move(progress), std::move(cancel))
          .Run();
  if (result.ok()) {
    result->model = model;
    result->system = system;
  }
  return result;
}

}  // namespace blueprint
