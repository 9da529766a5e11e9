// The strategy search's space (searcher.h): the groups of SEARCH.md's steps
// 1-5 (t, cp, p, v, the schedule, (ep, etp)), the choices of steps 6-15
// and what they share, and the tier prefixes of step 17, all in Calculon's
// enumeration order, which also orders equal sample rates.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "core/adapters/megatron_layout.h"
#include "core/search/searcher.h"
#include "core/spec/mapping_rules.h"

namespace blueprint {
namespace search_internal {
namespace {

std::vector<Choice> EnumerateChoices(const ChoiceShape& shape, bool has_mem2,
                                     bool tp_overlap_modelled,
                                     const SearchOptions& options,
                                     const ExecutionVariant& variant) {
  const std::vector<bool> both = {true, false};
  const std::vector<bool> only_false = {false};
  const std::vector<TensorOverlap> overlaps =
      shape.tensor && options.tp_overlap && tp_overlap_modelled
          ? std::vector<TensorOverlap>{TensorOverlap::kNone,
                                       TensorOverlap::kRing,
                                       TensorOverlap::kPipe}
          : std::vector<TensorOverlap>{TensorOverlap::kNone};
  // Calculon's optimizer_sharding in [true, false]; every stage, the most
  // sharded first.
  const std::vector<ShardingStage> stages =
      !shape.data ? std::vector<ShardingStage>{ShardingStage::kNone}
      : options.every_sharding
          ? std::vector<ShardingStage>{ShardingStage::kParameters,
                                       ShardingStage::kGradients,
                                       ShardingStage::kOptimizer,
                                       ShardingStage::kNone}
          : std::vector<ShardingStage>{ShardingStage::kOptimizer,
                                       ShardingStage::kNone};
  const std::vector<ContextExchange> exchanges =
      shape.context ? options.context_exchange
                    : std::vector<ContextExchange>{ContextExchange::kRing};
  std::vector<Choice> out;
  for (RecomputePolicy recompute :
       {RecomputePolicy::kFull, RecomputePolicy::kAttentionOnly,
        RecomputePolicy::kNone}) {
    // The checker's rule (CheckExpertOverlap, as Megatron-LM asserts): the
    // expert overlap is not run with full recomputation.
    if (variant.expert_overlap && recompute == RecomputePolicy::kFull) {
      continue;
    }
    for (ShardingStage sharding : stages) {
      // Calculon's ar, p2p_rs_ag, rs_ag.
      for (const TensorCommunication& comm :
           {TensorCommunication{AllReduce{}},
            TensorCommunication{EdgeReduceScatterAllGather{}},
            TensorCommunication{ReduceScatterAllGather{}}}) {
        const bool can_redo =
            std::holds_alternative<ReduceScatterAllGather>(comm) &&
            recompute != RecomputePolicy::kFull;
        for (bool redo : can_redo ? both : only_false) {
          for (ContextExchange exchange : exchanges) {
            for (bool dp_overlap :
                 shape.data && options.dp_overlap ? both : only_false) {
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
                        c.sharding = sharding;
                        c.comm = comm;
                        if (redo) c.comm = ReduceScatterAllGather{true};
                        c.context_exchange = exchange;
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
  }
  return out;
}

ChoiceList MakeChoiceList(std::vector<Choice> choices) {
  ChoiceList list;
  using BlockKey = std::tuple<RecomputePolicy, size_t, bool, ContextExchange,
                              TensorOverlap, bool>;
  using BoundKey = std::tuple<BlockKey, ShardingStage>;
  using MemoryKey = std::tuple<BlockKey, ShardingStage, bool, bool, bool>;
  using StateKey = std::tuple<ShardingStage, bool, bool>;
  std::map<BlockKey, int> parts;
  std::map<BoundKey, int> bound_parts;
  std::map<MemoryKey, int> twins;
  std::map<StateKey, int> states;
  for (const Choice& c : choices) {
    const BlockKey block{c.recompute,        c.comm.index(),
                         AllGatherRedo(c.comm), c.context_exchange,
                         c.tp_overlap,       c.fused_activation};
    const MemoryKey memory{block, c.sharding, c.offload.weights,
                           c.offload.activations, c.offload.optimizer};
    list.block_part.push_back(
        parts.emplace(block, static_cast<int>(parts.size())).first->second);
    list.bound_part.push_back(
        bound_parts
            .emplace(BoundKey{block, c.sharding},
                     static_cast<int>(bound_parts.size()))
            .first->second);
    list.memory_twin.push_back(
        twins.emplace(memory, static_cast<int>(twins.size())).first->second);
    list.state_part.push_back(
        states
            .emplace(StateKey{c.sharding, c.offload.weights,
                              c.offload.optimizer},
                     static_cast<int>(states.size()))
            .first->second);
  }
  list.block_parts = static_cast<int>(parts.size());
  list.bound_parts = static_cast<int>(bound_parts.size());
  list.memory_twins = static_cast<int>(twins.size());
  list.state_parts = static_cast<int>(states.size());
  list.choices = std::move(choices);
  return list;
}

// The smallest network tier (fewest processors; the first of equal ones)
// that holds `ranks`, -1 if none does: where the expert all-to-all runs.
int64_t SmallestTierHolding(const System& system, int64_t ranks) {
  int64_t best = -1;
  for (size_t i = 0; i < system.networks.size(); ++i) {
    const int64_t size = system.networks[i].size;
    if (size < ranks) continue;
    if (best < 0 || size < system.networks[static_cast<size_t>(best)].size) {
      best = static_cast<int64_t>(i);
    }
  }
  return best;
}

// The mapping rules' values (core/spec/mapping_rules.h) of a group's
// degrees; etp 0 (no experts) is t.
MappingValues GroupValues(const TransformerModel& model, int64_t t, int64_t cp,
                          int64_t p, int64_t v, int64_t d, int64_t ep,
                          int64_t etp) {
  return MappingValues{&model, t, cp, p, v, d, ep, etp == 0 ? t : etp};
}

}  // namespace

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

std::vector<int64_t> Searcher::ContextDegrees(int64_t t) const {
  std::vector<int64_t> out;
  for (int64_t cp : Divisors(options_.procs / t)) {
    if (cp > options_.max_context) break;
    // The checker's rules that read cp (two load-balanced causal chunks
    // per rank).
    if (!SearchFilterHolds(GroupValues(model_, t, cp, 1, 1, 1, 1, t),
                           kReadsTensor | kReadsContext, kReadsContext)) {
      continue;
    }
    out.push_back(cp);
  }
  return out;
}

std::vector<std::optional<ScheduleKind>> Searcher::Schedules(
    int64_t p, int64_t v, StageShape shape) const {
  std::vector<std::optional<ScheduleKind>> out = {std::nullopt};
  // The checker's rule: the simulated schedules price equal stages (or an
  // explicit layout, for those that take one; the search leaves them out
  // there: each mapping's unequal chunks would be simulated anew, not
  // shared through the schedule memo, some 200 times the search's time on
  // qwen3-235B-A22B, core/search/BENCHMARKS.md).
  if (!options_.every_schedule || p < 2 || shape != StageShape::kEven) {
    return out;
  }
  // The schedule table's simulated rows for this v, in table order.
  for (const ScheduleRow& row : kScheduleTable) {
    if (row.simulated && row.virtual_stages.fixed == v) {
      out.push_back(row.kind);
    }
  }
  return out;
}

std::vector<std::pair<int64_t, std::shared_ptr<const std::vector<int64_t>>>>
Searcher::FirstLastLayouts(int64_t p) const {
  const int64_t blocks = model_.num_blocks;
  std::vector<std::pair<int64_t, std::shared_ptr<const std::vector<int64_t>>>>
      out;
  if (p < 2 || p > blocks) return out;
  // What the split is for: end stages no heavier than the middle ones (the
  // first carries the embedding, the last the output layer and the loss).
  // The middle stages (p > 2) hold k = ceil(blocks / p) blocks each; the
  // first and the last stage share the rest (at most 2k), as evenly as the
  // v chunks of each allow, the lighter first or last. Each v divides a
  // middle stage's blocks (p > 2) or half the blocks (p = 2).
  const int64_t k = BlocksPerStage(blocks, p);
  const int64_t rest = blocks - (p - 2) * k;
  if (rest < 2) return out;
  for (const int64_t v : Divisors(p > 2 ? k : rest / 2)) {
    const int64_t first = rest / 2 / v * v;
    const int64_t last = rest - first;
    // Each chunk of the end stages holds a block at least, and neither end
    // stage more than a middle one.
    if (first < v || last < v || (p > 2 && last > k)) continue;
    const std::pair<int64_t, int64_t> splits[] = {{first, last},
                                                  {last, first}};
    for (int i = 0; i < (first == last ? 1 : 2); ++i) {
      // Megatron-LM's rule (megatron_layout.h) makes the layout and judges
      // it.
      PipelineLayoutFlags flags;
      flags.num_layers = blocks;
      flags.pipeline = p;
      flags.virtual_stages = v;
      flags.virtual_given = v > 1;
      flags.first = splits[i].first;
      flags.last = splits[i].second;
      PipelineLayout layout = PipelineLayoutOf(flags);
      if (!layout.errors.empty() || layout.stage_blocks.empty()) continue;
      out.emplace_back(v, std::make_shared<const std::vector<int64_t>>(
                              std::move(layout.stage_blocks)));
    }
  }
  return out;
}

std::vector<std::pair<int64_t, int64_t>> Searcher::ExpertDegrees(
    int64_t t, int64_t ranks) const {
  if (!model_.moe.has_value()) return {{1, 0}};
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t ep : Divisors(model_.moe->experts)) {
    // Each expert split over the TP ranks (Megatron-LM's default) or whole.
    for (int64_t etp : t > 1 ? std::vector<int64_t>{t, 1}
                             : std::vector<int64_t>{1}) {
      // The checker's rules on ep and etp (ep * etp folds onto the ranks
      // t * cp * d of a stage; only their product is read).
      if (SearchFilterHolds(
              GroupValues(model_, t, 1, 1, 1, ranks / t, ep, etp),
              kReadsTensor | kReadsContext | kReadsData | kReadsExperts,
              kReadsExperts)) {
        out.push_back({ep, etp});
      }
    }
  }
  return out;
}

const ChoiceList* Searcher::ChoicesFor(const ChoiceShape& shape) {
  const int index = (shape.tensor ? 1 : 0) + (shape.context ? 2 : 0) +
                    (shape.data ? 4 : 0);
  if (!choice_lists_made_[index]) {
    choice_lists_[index] = MakeChoiceList(EnumerateChoices(
        shape, system_.mem2.gib > 0, tp_overlap_modelled_, options_,
        variant_));
    choice_lists_made_[index] = true;
  }
  return &choice_lists_[index];
}

std::vector<Group> Searcher::EnumerateGroups() {
  const int64_t n = options_.procs;
  const int64_t blocks = model_.num_blocks;
  std::vector<Group> groups;
  for (int64_t t : Divisors(n)) {
    // Calculon's filter of t (SEARCH.md step 1): the checker's rules on t
    // it shares; a t failing the others is counted among the bad executions.
    if (!SearchFilterHolds(GroupValues(model_, t, 1, 1, 1, 1, 1, t),
                           kReadsTensor, kReadsTensor)) {
      continue;
    }
    for (int64_t cp : ContextDegrees(t)) {
      const int64_t ranks = n / (t * cp);  // p * d
      // Calculon's p divide the blocks (the even layout); with
      // --stage-layouts all, every p up to the block count does, those that
      // do not divide it with the uneven layout (CalculonPipeline sets
      // it): each stage priced with blocks_per_stage =
      // ceil(blocks / p), v dividing that. The same increasing order.
      for (int64_t p : Divisors(ranks)) {
        if (p > blocks) break;
        const bool even = blocks % p == 0;
        const int64_t d = ranks / p;
        if (d > options_.max_batch) continue;
        if (even || options_.uneven_stages) {
          const std::vector<int64_t> interleavings =
              p == 1 ? std::vector<int64_t>{1}
                     : Divisors(BlocksPerStage(blocks, p));
          for (int64_t v : interleavings) {
            AddGroups(BaseGroup(t, cp, p, d, v),
                      even ? StageShape::kEven : StageShape::kUneven, groups);
          }
        }
        // --stage-layouts megatron: Megatron-LM's first/last splits of a p
        // that does not divide the blocks, after Calculon's layouts of it.
        if (!even && options_.first_last_stages) {
          for (auto& [v, layout] : FirstLastLayouts(p)) {
            Group base = BaseGroup(t, cp, p, d, v);
            base.stage_blocks = std::move(layout);
            AddGroups(base, StageShape::kLayout, groups);
          }
        }
      }
    }
  }
  return groups;
}

Group Searcher::BaseGroup(int64_t t, int64_t cp, int64_t p, int64_t d,
                          int64_t v) {
  const int64_t nets = static_cast<int64_t>(system_.networks.size());
  Group base;
  base.t = t;
  base.cp = cp;
  base.p = p;
  base.d = d;
  base.v = v;
  base.batch = options_.max_batch / d * d;
  // Calculon's step 16: the checker's rules on the microbatch size, for
  // every communication the group tries (MappingValues' splits_activations).
  MappingValues values = GroupValues(model_, t, cp, p, v, d, 1, t);
  for (int64_t b : Divisors(base.batch / d)) {
    values.microbatch = b;
    if (SearchFilterHolds(values, kReadsGroup | kReadsMicrobatch |
                                      kReadsCommunication,
                          kReadsMicrobatch)) {
      base.microbatch_sizes.push_back(b);
    }
  }
  ChoiceShape shape;
  shape.tensor = t > 1;
  shape.context = cp > 1;
  shape.data = d > 1;
  base.choices = ChoicesFor(shape);
  const double assignments = static_cast<double>(
      (t > 1 ? nets : 1) * (cp > 1 ? nets : 1) * (p > 1 ? nets : 1) *
      (d > 1 ? nets : 1));
  base.weight = static_cast<double>(base.choices->choices.size()) *
                static_cast<double>(base.microbatch_sizes.size()) *
                assignments;
  return base;
}

void Searcher::AddGroups(const Group& base, StageShape shape,
                         std::vector<Group>& groups) {
  for (const std::optional<ScheduleKind>& schedule :
       Schedules(base.p, base.v, shape)) {
    Group with_schedule = base;
    with_schedule.schedule = schedule;
    if (schedule.has_value()) {
      for (int64_t b : base.microbatch_sizes) {
        with_schedule.schedule_fits.push_back(
            ScheduleShapeErrors(*schedule, base.p, base.v,
                                base.batch / base.d / b)
                .empty());
      }
      // A shape no microbatch size fits (dualpipe with an odd p,
      // dualpipe_v with m < 2p for every size): nothing to try.
      if (std::none_of(with_schedule.schedule_fits.begin(),
                       with_schedule.schedule_fits.end(),
                       [](bool fits) { return fits; })) {
        continue;
      }
    }
    if (!VariantFits(with_schedule)) continue;
    auto expert_degrees =
        std::make_shared<std::vector<std::pair<int64_t, int64_t>>>();
    const size_t first = groups.size();
    for (const auto& [ep, etp] :
         ExpertDegrees(base.t, base.t * base.cp * base.d)) {
      // The flex dispatchers and the expert overlap exchange tokens
      // between expert-parallel ranks: with ep = 1 the mapping would be
      // the all_to_all one again (the overlap the checker refuses there).
      if (ep == 1 && (variant_.dispatcher != ExpertDispatcher::kAllToAll ||
                      variant_.expert_overlap)) {
        continue;
      }
      Group g = with_schedule;
      g.ep = ep;
      g.etp = etp;
      g.en = ep > 1 ? SmallestTierHolding(system_, ep * etp) : 0;
      if (model_.moe.has_value() && g.en >= 0) {
        expert_degrees->emplace_back(ep, etp);
      }
      groups.push_back(std::move(g));
    }
    for (size_t i = first; i < groups.size(); ++i) {
      Group& g = groups[i];
      g.expert_degrees = expert_degrees;
      // Every mapping rule on the group's degrees (those the search filters
      // by hold already), and a tier for the expert all-to-all. An explicit
      // layout lays its chunks out itself: the rules on v (interleaving,
      // the only ones reading it) are not its, as the checker skips them.
      const uint32_t known = g.stage_blocks != nullptr
                                 ? kReadsGroup & ~kReadsVirtualStages
                                 : kReadsGroup;
      g.structure_ok =
          MappingRulesHold(GroupValues(model_, g.t, g.cp, g.p, g.v, g.d, g.ep,
                                       g.etp),
                           known) &&
          g.en >= 0;
    }
  }
}

bool Searcher::VariantFits(const Group& g) const {
  // The checker's rule (CheckExpertOverlap, as Megatron-LM asserts): the
  // expert overlap on a pipeline pairs a forward and a backward chunk, so
  // it needs interleaved_1f1b, Calculon's schedule for v > 1.
  if (!variant_.expert_overlap || g.p == 1) return true;
  return !g.schedule.has_value() && g.v > 1;
}

Searcher::GroupState Searcher::StartGroup(const Group& g) const {
  GroupState gs;
  gs.group = &g;
  const int64_t blocks = model_.num_blocks;
  gs.blocks_per_stage = g.stage_blocks != nullptr
                            ? MostRankBlocks(*g.stage_blocks, g.p)
                            : BlocksPerStage(blocks, g.p);
  gs.structure_ok = g.structure_ok;
  // The assignments are counted, not enumerated: O(tiers^3) per group.
  const int64_t nets = static_cast<int64_t>(system_.networks.size());
  const int64_t tensor_nets = g.t > 1 ? nets : 1;
  const int64_t context_nets = g.cp > 1 ? nets : 1;
  const int64_t pipeline_nets = g.p > 1 ? nets : 1;
  const int64_t data_nets = g.d > 1 ? nets : 1;
  gs.assignments = tensor_nets * context_nets * pipeline_nets * data_nets;
  gs.data_tier_holds.assign(static_cast<size_t>(nets), false);
  for (int64_t dn = 0; dn < data_nets; ++dn) {
    if (TierAssignmentFits(system_.networks[static_cast<size_t>(dn)],
                           g.d > 1 ? g.d : 1)) {
      gs.data_tiers.push_back(dn);
      gs.data_tier_holds[static_cast<size_t>(dn)] = true;
    }
  }
  for (int64_t tn = 0; tn < tensor_nets; ++tn) {
    for (int64_t cn = 0; cn < context_nets; ++cn) {
      for (int64_t pn = 0; pn < pipeline_nets; ++pn) {
        AddTierPrefix(g, tn, cn, pn, gs);
      }
    }
  }
  return gs;
}

void Searcher::AddTierPrefix(const Group& g, int64_t tn, int64_t cn,
                             int64_t pn, GroupState& gs) const {
  const int64_t data_nets =
      g.d > 1 ? static_cast<int64_t>(system_.networks.size()) : 1;
  TierPrefix prefix;
  prefix.tn = tn;
  prefix.cn = cn;
  prefix.pn = pn;
  // The distinct tiers of tn, cn and pn: a data_net equal to one of them
  // has its own check.
  int64_t same[3] = {tn, 0, 0};
  int used = 1;
  for (int64_t tier : {cn, pn}) {
    if (std::find(same, same + used, tier) == same + used) {
      same[used++] = tier;
    }
  }
  // The assignment with a data_net used by none of them.
  prefix.others_ok = AssignmentValid(g, tn, cn, pn, /*dn=*/-1);
  prefix.valid = 0;
  if (prefix.others_ok) {
    prefix.valid = static_cast<int64_t>(gs.data_tiers.size());
    for (int i = 0; i < used; ++i) {
      if (gs.data_tier_holds[static_cast<size_t>(same[i])]) --prefix.valid;
    }
  }
  int64_t first_dn = -1;
  for (int i = 0; i < used; ++i) {
    const int64_t dn = same[i];
    if (dn < data_nets && AssignmentValid(g, tn, cn, pn, dn)) {
      ++prefix.valid;
      if (first_dn < 0 || dn < first_dn) first_dn = dn;
    }
  }
  if (prefix.valid == 0) return;
  if (gs.valid_assignments == 0) {
    if (prefix.others_ok) {
      for (int64_t dn : gs.data_tiers) {
        if (std::find(same, same + used, dn) != same + used) continue;
        if (first_dn < 0 || dn < first_dn) first_dn = dn;
        break;
      }
    }
    gs.first_valid = {tn, cn, pn, first_dn};
  }
  gs.valid_assignments += prefix.valid;
  // The prefixes come in (tn, cn, pn) order: a pair's are adjacent.
  if (gs.prefixes.empty() || gs.prefixes.back().tn != tn ||
      gs.prefixes.back().cn != cn) {
    ++gs.pairs;
  }
  prefix.pair = gs.pairs - 1;
  gs.prefixes.push_back(prefix);
}

}  // namespace search_internal
}  // namespace blueprint
