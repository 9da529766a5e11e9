// The search on systems with many network tiers (up to the checker's
// kMaxNetworkTiers): the default and exhaustive modes give exactly the result
// of a straightforward reference enumeration (Calculon's loops, the tier check
// looping over every tier, every mapping evaluated), and the default mode's
// tier work grows at most quadratically with the number of tiers while the
// number of mappings grows cubically.
#include <algorithm>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/adapters/calculon.h"
#include "core/analysis/figures.h"
#include "core/analysis/schedule.h"
#include "core/search/block_table.h"
#include "core/search/search.h"
#include "core/search/search_json.h"
#include "core/search/top_n.h"
#include "core/search/tiered_system.h"
#include "core/spec/check.h"
#include "core/testing/programs.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

// A small model (8 blocks) whose search space has every kind of choice.
TransformerModel SmallModel() { return CalculonModel("small", 256, 1024, 16, 16, 8, 64); }

SearchOptions Options(int64_t procs, int64_t max_batch, int top) {
  SearchOptions o;
  o.procs = procs;
  o.max_batch = max_batch;
  o.datatype = DataType::kFloat16;
  o.top = top;
  // The tests below count the pruning's work, which with several workers
  // depends on when each one's ranking fills.
  o.threads = 1;
  return o;
}

//----- The reference: calculon/SEARCH.md enumerated as it reads -------------

std::vector<int64_t> Divisors(int64_t x) {
  std::vector<int64_t> out;
  for (int64_t i = 1; i <= x; ++i) {
    if (x % i == 0) out.push_back(i);
  }
  return out;
}

// The tier check as the search made it before: every tier, every triple.
bool NetworkAssignmentValid(const System& system, int64_t t, int64_t tn,
                            int64_t p, int64_t pn, int64_t d, int64_t dn) {
  const int64_t tiers = static_cast<int64_t>(system.networks.size());
  for (int64_t tier = 0; tier < tiers; ++tier) {
    int64_t used = 1;
    if (t > 1 && tn == tier) used *= t;
    if (p > 1 && pn == tier) used *= p;
    if (d > 1 && dn == tier) used *= d;
    const NetworkTier& net = system.networks[static_cast<size_t>(tier)];
    if (used > net.size) return false;
    if (net.must_be_filled && net.size % used != 0) return false;
  }
  return true;
}

// Steps 6-15: the execution keys besides the degrees, tiers and batch.
std::vector<CalculonExecution> Choices(int64_t t, int64_t d, bool has_mem2,
                                       const SearchOptions& o) {
  const std::vector<bool> tf = {true, false}, f = {false};
  std::vector<TensorOverlap> overlaps = {TensorOverlap::kNone};
  if (t > 1 && o.tp_overlap) {
    overlaps = {TensorOverlap::kNone, TensorOverlap::kRing,
                TensorOverlap::kPipe};
  }
  std::vector<CalculonExecution> out;
  for (RecomputePolicy recompute :
       {RecomputePolicy::kFull, RecomputePolicy::kAttentionOnly,
        RecomputePolicy::kNone}) {
    const bool full = recompute == RecomputePolicy::kFull;
    for (bool sharding : d > 1 ? tf : f) {
      for (const TensorCommunication& comm :
           {TensorCommunication{AllReduce{}},
            TensorCommunication{EdgeReduceScatterAllGather{}},
            TensorCommunication{ReduceScatterAllGather{}}}) {
        const bool can_redo =
            std::holds_alternative<ReduceScatterAllGather>(comm) && !full;
        for (bool redo : can_redo ? tf : f) {
          for (bool dp_overlap : d > 1 && o.dp_overlap ? tf : f) {
            for (TensorOverlap tp_overlap : overlaps) {
              for (bool weights : has_mem2 ? tf : f) {
                for (bool acts : has_mem2 && !full ? tf : f) {
                  for (bool optimizer : has_mem2 ? tf : f) {
                    for (bool fused : o.fused_activation) {
                      CalculonExecution e;
                      e.recompute = recompute;
                      e.optimizer_sharding = sharding;
                      e.comm = comm;
                      if (redo) e.comm = ReduceScatterAllGather{true};
                      e.dp_overlap = dp_overlap;
                      e.tp_overlap = tp_overlap;
                      e.offload = {weights, acts, optimizer};
                      e.fused_activation = fused;
                      out.push_back(e);
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

struct Ranked {
  CalculonExecution execution;
  BlockFigures block;
};

// Every mapping in Calculon's order, each checked and evaluated on its own.
SearchResult ReferenceSearch(const TransformerModel& model,
                             const System& system, const SearchOptions& o) {
  SearchResult result;
  BlockTable blocks(model, system, o.datatype);
  TopN<Ranked> top(static_cast<size_t>(o.top));
  const int64_t n = o.procs, num_blocks = model.num_blocks;
  const int64_t nets = static_cast<int64_t>(system.networks.size());
  for (int64_t t : Divisors(n)) {
    if (model.hidden % t != 0 || model.attn_heads % t != 0) continue;
    for (int64_t p : Divisors(std::min(n / t, num_blocks))) {
      if (n % (t * p) != 0 || num_blocks % p != 0) continue;
      const int64_t d = n / (t * p);
      if (d > o.max_batch) continue;
      for (int64_t v : p == 1 ? std::vector<int64_t>{1}
                              : Divisors(num_blocks / p)) {
        const int64_t batch = o.max_batch / d * d;
        const int64_t bps = num_blocks / p + (num_blocks % p != 0 ? 1 : 0);
        const bool structure_ok =
            v <= bps && bps % v == 0 && model.feedforward % t == 0;
        for (CalculonExecution e : Choices(t, d, system.mem2.gib > 0, o)) {
          e.num_procs = n;
          e.tensor = t;
          e.pipeline = p;
          e.data = d;
          e.interleaving = v;
          e.batch_size = batch;
          e.datatype = o.datatype;
          const bool offload = e.offload.weights || e.offload.activations ||
                               e.offload.optimizer;
          for (int64_t b : Divisors(batch / d)) {
            if ((b * model.seq_size) % t != 0) continue;
            e.microbatch_size = b;
            const BlockConfig config{
                t, b, e.recompute, e.comm, e.tp_overlap, e.fused_activation};
            const int64_t good_before = result.good_executions;
            for (int64_t tn = 0; tn < (t > 1 ? nets : 1); ++tn) {
              for (int64_t pn = 0; pn < (p > 1 ? nets : 1); ++pn) {
                for (int64_t dn = 0; dn < (d > 1 ? nets : 1); ++dn) {
                  ++result.total_executions;
                  e.tensor_net = tn;
                  e.pipeline_net = pn;
                  e.data_net = dn;
                  if (!NetworkAssignmentValid(system, t, tn, p, pn, d, dn) ||
                      !structure_ok || (offload && bps <= 2)) {
                    ++result.bad_executions;
                    continue;
                  }
                  absl::StatusOr<const StagedBlock*> block = blocks.Get(
                      config, tn, e.optimizer_sharding ? d : 1);
                  EXPECT_TRUE(block.ok()) << block.status();
                  if (!block.ok()) return result;
                  const StepShape step = MappingStepShape(
                      model, system, TrainingMappingOf(e, model));
                  MemoryFigures memory;
                  ComputeMemory((*block)->block, (*block)->extras, step,
                                memory);
                  if (memory.proc_mem_tier1_cap_req > memory.tier1_capacity ||
                      memory.proc_mem_tier2_cap_req > memory.tier2_capacity) {
                    ++result.bad_executions;
                    continue;
                  }
                  ++result.good_executions;
                  IterationFigures iteration;
                  ComputeIteration((*block)->block, (*block)->extras, step,
                                   iteration);
                  if (top.Admits(iteration.sample_rate)) {
                    top.Insert(iteration.sample_rate) = {e, (*block)->block};
                  }
                }
              }
            }
            if (o.mbs_break && result.good_executions == good_before) break;
          }
        }
      }
    }
  }
  for (size_t i = 0; i < top.size(); ++i) {
    RankedExecution out;
    out.mapping = TrainingMappingOf(top.entry(i).execution, model);
    out.block = top.entry(i).block;
    const StepShape step = MappingStepShape(model, system, out.mapping);
    ComputeIteration(out.block, out.extras, step, out.iteration);
    ComputeMemory(out.block, out.extras, step, out.memory);
    result.top.push_back(out);
  }
  result.model = model;
  result.system = system;
  return result;
}

//----- Tests -------------------------------------------------------------------

// Counts and the ranked mappings with all their figures, as JSON text.
void ExpectSameAsReference(const TransformerModel& model, const System& system,
                           SearchOptions options, SearchWork* work = nullptr) {
  const SearchResult reference = ReferenceSearch(model, system, options);
  const std::string expected = SearchResultJson(reference);
  for (bool exhaustive : {false, true}) {
    options.exhaustive = exhaustive;
    absl::StatusOr<SearchResult> result = RunSearch(model, system, options);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->total_executions, reference.total_executions);
    EXPECT_EQ(result->good_executions, reference.good_executions);
    EXPECT_EQ(result->bad_executions, reference.bad_executions);
    EXPECT_EQ(SearchResultJson(*result), expected)
        << (exhaustive ? "exhaustive" : "default") << " mode, "
        << system.networks.size() << " tiers, top " << options.top;
    if (!exhaustive && work != nullptr) *work = result->work;
  }
}

TEST(ManyTiersTest, TheBuiltSystemsPassTheChecker) {
  for (int tiers = 1; tiers <= kMaxNetworkTiers; ++tiers) {
    TransformerTrainingMappingSpec spec;
    spec.system = SystemWithTiers(test_programs::A100System(), tiers);
    EXPECT_TRUE(
        FindViolations(SpecOf(CalculonExecution{}, SmallModel(), spec.system))
            .empty())
        << tiers << " tiers";
  }
}

TEST(ManyTiersTest, EightTiersEqualReferenceEnumeration) {
  const TransformerModel model = SmallModel();
  System eight = SystemWithTiers(test_programs::A100System(), 8);
  System small_memory = eight;  // many mappings do not fit
  small_memory.mem1.gib = 0.05;
  small_memory.mem2.gib = 0.2;
  int64_t bounds = 0;
  for (const System* system : {&eight, &small_memory}) {
    for (int top : system == &eight ? std::vector<int>{1, 10}
                                    : std::vector<int>{10}) {
      SearchWork work;
      ExpectSameAsReference(model, *system, Options(8, 4, top), &work);
      bounds += work.step_time_bounds;
      SearchOptions o = Options(4, 8, top);
      o.mbs_break = true;
      o.fused_activation = {true, false};
      ExpectSameAsReference(model, *system, o, &work);
      bounds += work.step_time_bounds;
      o = Options(8, 8, top);
      o.tp_overlap = false;
      o.dp_overlap = false;
      ExpectSameAsReference(model, *system, o, &work);
      bounds += work.step_time_bounds;
    }
  }
  // The per-pair bounds were used (not only evaluated as they come).
  EXPECT_GT(bounds, 0);
}

TEST(ManyTiersTest, EveryTierCountEqualsReferenceEnumeration) {
  for (int tiers = 1; tiers <= kMaxNetworkTiers; ++tiers) {
    ExpectSameAsReference(SmallModel(),
                          SystemWithTiers(test_programs::A100System(), tiers),
                          Options(16, 2, 10));
  }
}

// The mappings grow as tiers^3, the default mode's tier work at most as
// tiers^2: from 4 to 8 tiers, the valid mappings grow more than 6-fold, the
// tier pairs and data tiers looked at at most 4-fold (per mapping batch: the
// batches that reach the tier loop are the same for every tier count).
TEST(ManyTiersTest, TierWorkGrowsAtMostQuadratically) {
  const TransformerModel model = SmallModel();
  struct Point {
    int tiers;
    SearchResult result;
  };
  std::vector<Point> points;
  for (int tiers : {2, 4, 8}) {
    absl::StatusOr<SearchResult> r = RunSearch(
        model, SystemWithTiers(test_programs::A100System(), tiers),
        Options(16, 16, 10));
    ASSERT_TRUE(r.ok()) << r.status();
    points.push_back({tiers, *std::move(r)});
  }
  for (size_t i = 1; i < points.size(); ++i) {
    const SearchResult& a = points[i - 1].result;
    const SearchResult& b = points[i].result;
    const double growth = static_cast<double>(points[i].tiers) /
                          static_cast<double>(points[i - 1].tiers);
    const double quadratic = growth * growth;
    EXPECT_EQ(a.work.memory_evaluations, b.work.memory_evaluations);
    std::printf("%d -> %d tiers: good %lld -> %lld, pairs %lld -> %lld, "
                "data tiers %lld -> %lld, bounds %lld -> %lld, "
                "iterations %lld -> %lld\n",
                points[i - 1].tiers, points[i].tiers,
                static_cast<long long>(a.good_executions),
                static_cast<long long>(b.good_executions),
                static_cast<long long>(a.work.tier_pairs_examined),
                static_cast<long long>(b.work.tier_pairs_examined),
                static_cast<long long>(a.work.tier_triples_examined),
                static_cast<long long>(b.work.tier_triples_examined),
                static_cast<long long>(a.work.step_time_bounds),
                static_cast<long long>(b.work.step_time_bounds),
                static_cast<long long>(a.work.iteration_evaluations),
                static_cast<long long>(b.work.iteration_evaluations));
    EXPECT_GT(static_cast<double>(b.good_executions),
              1.5 * quadratic * static_cast<double>(a.good_executions));
    // All the per-tier work: pairs, data tiers, bound and full iterations.
    const auto tier_work = [](const SearchWork& w) {
      return static_cast<double>(w.tier_pairs_examined +
                                 w.tier_triples_examined +
                                 w.step_time_bounds + w.iteration_evaluations);
    };
    EXPECT_LE(tier_work(b.work), quadratic * tier_work(a.work));
    EXPECT_LE(static_cast<double>(b.work.tier_pairs_examined),
              quadratic * static_cast<double>(a.work.tier_pairs_examined));
  }
}

}  // namespace
}  // namespace blueprint
