#include "core/search/search.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>
#if !defined(__EMSCRIPTEN__)
#include <thread>
#endif

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/field_errors.h"
#include "core/base/status_macros.h"
#include "core/schedule/memo.h"
#include "core/schedule/schedule_ir.h"
#include "core/schedule/schedule_table.h"
#include "core/search/block_table.h"
#include "core/search/top_n.h"
#include "core/spec/accounting.h"
#include "core/spec/check.h"
#include "core/spec/corrections.h"
#include "core/spec/derive.h"
#include "core/spec/spec_schedule.h"

namespace blueprint {
namespace {

// Inputs beyond these would make the enumeration itself unreasonable.
constexpr int64_t kMaxProcs = int64_t{1} << 31;
constexpr int64_t kMaxBatch = int64_t{1} << 31;

// Relative slack of the step-time lower bound: far above the rounding error
// of the few dozen operations on either side, far below any real difference.
constexpr double kBoundSlack = 1e-9;

// A tier prefix (tensor_net, context_net, pipeline_net) with at most this
// many valid data tiers has them all evaluated, without the per-prefix
// bound (see EvaluatePruned).
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
// TrainingPartsOf), with `derived`, their values derived as the checker
// derives them at any microbatch size (so once per choice: only the
// microbatch count depends on it, set here), and the simulated schedule
// they hold (`schedule`, the extras' or the group's: the spec's
// pipeline.schedule is made from it, so it is not derived again per
// mapping).
StepShape StepShapeOf(DerivedValues derived, const TransformerModel& model,
                      const System& system,
                      const CalculonTrainingParts& parts,
                      const AccountedModel& accounted,
                      std::optional<ScheduleKind> schedule) {
  SetMicrobatchSize(derived, parts.batch.microbatch_size);
  StepShape step = MakeStepShape(derived, model, system, parts.batch,
                                 parts.options, accounted);
  step.simulated_schedule = schedule;
  return step;
}

// Steps 6-15 of SEARCH.md: the choices tried for one (t, p, v), with the
// ZeRO stage in place of step 7's boolean and the context exchange after
// the TP communication.
struct Choice {
  RecomputePolicy recompute;
  ShardingStage sharding;
  TensorCommunication comm;  // with seq_par_ag_redo
  ContextExchange context_exchange;
  bool dp_overlap;
  TensorOverlap tp_overlap;
  Offload offload;
  bool fused_activation;
};

// What the choices of a (t, cp, p, v) depend on.
struct ChoiceShape {
  bool tensor = false;   // t > 1
  bool context = false;  // cp > 1
  bool data = false;     // d > 1
};

std::vector<Choice> EnumerateChoices(const ChoiceShape& shape, bool has_mem2,
                                     bool tp_overlap_modelled,
                                     const SearchOptions& options) {
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

// A group's choices and what they share: the choices that differ only in
// DP overlap, offload or the ZeRO stage share a block configuration
// (block_part); those that differ only in DP overlap and offload share the
// block's figures with its shard, and with them StepTimeLowerBound, which
// reads neither (bound_part); and those that differ only in DP overlap,
// which no memory figure reads, share their memory check (memory_twin);
// those with the same ZeRO stage and weight and optimizer offload share
// the tier-1 bytes of their state (state_part: StateExceedsTier1; the
// block table's state figures are the same for every block configuration
// of a group). All are dense numberings in order of first appearance.
struct ChoiceList {
  std::vector<Choice> choices;
  std::vector<int> block_part;
  std::vector<int> bound_part;
  std::vector<int> memory_twin;
  std::vector<int> state_part;
  int block_parts = 0;
  int bound_parts = 0;
  int memory_twins = 0;
  int state_parts = 0;
};

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

// Steps 1-5 of SEARCH.md: one (t, cp, p, v, ep, etp) and what follows from
// it.
struct Group {
  int64_t t = 1, cp = 1, p = 1, d = 1, v = 1, batch = 1;
  // A simulated schedule (--schedules all) in place of Calculon's, and per
  // microbatch size whether its shape rules (ScheduleShapeErrors: m >= 2p
  // for dualpipe_v, the command bound) hold: the checker's.
  std::optional<ScheduleKind> schedule;
  std::vector<bool> schedule_fits;
  int64_t ep = 1;
  int64_t etp = 0;  // 0: t (a model without experts)
  // The expert all-to-all's tier (0 when ep = 1), -1 when no tier holds
  // ep * etp: every mapping is then bad.
  int64_t en = 0;
  // The (ep, etp) of the groups that differ from this one only in them and
  // have a tier for the all-to-all (shared by them; empty without
  // experts): BlockTable::Find lowers a configuration's blocks for all of
  // them at once.
  std::shared_ptr<const std::vector<std::pair<int64_t, int64_t>>>
      expert_degrees;
  std::vector<int64_t> microbatch_sizes;  // step 16, before --mbs-break
  const ChoiceList* choices = nullptr;
  double weight = 0;  // the most executions it can have, for progress
  // Whether the model splits as the group says (the interleaving fits the
  // stage, t splits the model, etp the experts, a tier holds the
  // all-to-all): else every mapping is bad, at no cost.
  bool structure_ok = true;
};

// Whether the checker accepts the group's simulated schedule with this
// choice and microbatch size: its shape rules (schedule_fits) and, for
// dualpipe, no DP overlap (its row's allows_data_overlap).
inline bool ScheduleAllows(const Group& g, const Choice& c, size_t microbatch) {
  if (!g.schedule.has_value()) return true;
  return g.schedule_fits[microbatch] &&
         !(c.dp_overlap && !ScheduleRowOf(*g.schedule).allows_data_overlap);
}

struct Ranked {
  CalculonExecution execution;
  ExecutionExtras execution_extras;
  StagedBlock block;
};

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// A run of groups of one (t, cp), which share their blocks: the unit of
// work a worker takes.
struct GroupRun {
  size_t first, end;  // groups [first, end)
  double weight;      // for progress: the most executions
  double cost;        // for ordering and dealing the runs (RunCost)
};

// What the workers of one search share: the runs, costliest first
// (RunCost), and the next one to take; the caller's progress and cancel
// functions, which only
// worker 0 (the caller's thread) calls; the weight each worker has done,
// whether the search was cancelled and the rate a mapping must beat.
struct SharedSearch {
  static constexpr int kMaxWorkers = SearchOptions::kMaxThreads;
  std::vector<GroupRun> runs;
  std::atomic<size_t> next_run{0};
  ProgressFn progress;
  CancelFn cancel;
  double total = 0;  // the weight of every group
  int workers = 1;
  // Each on its own cache line: workers write them as they go.
  struct alignas(64) Done {
    std::atomic<double> weight{0};
  };
  Done done[kMaxWorkers];
  alignas(64) std::atomic<bool> cancelled{false};
  // The best last kept rate of a worker whose ranking is full (-inf: none
  // is): `top` mappings reach it.
  alignas(64) std::atomic<double> threshold{-kInfinity};
};

// The choices' spelling of a ZeRO stage (group 0: all d ranks).
DataSharding ShardingOf(ShardingStage stage) {
  switch (stage) {
    case ShardingStage::kNone:
      return NoSharding{};
    case ShardingStage::kOptimizer:
      return ShardOptimizer{};
    case ShardingStage::kGradients:
      return ShardGradients{};
    case ShardingStage::kParameters:
      return ShardParameters{};
  }
  return NoSharding{};
}

// Applies the extras to the parts of a training spec.
void ApplyExtras(const ExecutionExtras& x,
                 TransformerTrainingParallelism& parallelism,
                 ExecutionOptions& options) {
  parallelism.context.degree = x.context;
  parallelism.context.exchange = x.context_exchange;
  parallelism.context.network_tier = x.context_net;
  parallelism.expert.degree = x.expert;
  parallelism.expert.tensor_degree = x.expert_tensor;
  parallelism.expert.network_tier = x.expert_net;
  if (x.sharding != ShardingStage::kNone) {
    parallelism.data.sharding = ShardingOf(x.sharding);
  }
  if (x.schedule.has_value()) {
    if (std::optional<PipelineSchedule> schedule =
            SimulatedSpecSchedule(*x.schedule)) {
      parallelism.pipeline.schedule = *schedule;
    }
  }
  options.precision = x.precision;
  options.profile = x.profile;
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

// The checker's rules on a group's split of the model beyond
// TensorSplitsModel: each expert's matrices split etp ways, the shared
// experts and every latent-attention rank t ways.
bool ExpertsAndLatentsSplit(const TransformerModel& model, int64_t t,
                            int64_t etp) {
  if (model.moe.has_value()) {
    if (model.moe->ffn % etp != 0) return false;
    if (model.moe->shared_ffn > 0 && model.moe->shared_ffn % t != 0) {
      return false;
    }
  }
  if (model.latent_attention.has_value() && t > 1) {
    const LatentAttention& l = *model.latent_attention;
    for (int64_t rank : {l.q_lora_rank, l.kv_lora_rank, l.qk_rope_head_dim}) {
      if (rank > 0 && rank % t != 0) return false;
    }
  }
  return true;
}

class Searcher {
 public:
  // Worker `worker` of a search whose workers share `shared`.
  Searcher(const TransformerModel& model, const System& system,
           const SearchOptions& options, SharedSearch* shared, int worker)
      : model_(model),
        accounted_(AccountedModelOf(model)),
        system_(system),
        options_(options),
        shared_(shared),
        worker_(worker),
        blocks_(model, system, options.datatype, options.precision,
                options.profile),
        top_(static_cast<size_t>(options.top)),
        tp_overlap_modelled_(!model.moe.has_value() &&
                             !model.latent_attention.has_value()) {
    for (const NetworkTier& net : system.networks) {
      every_tier_holds_one_ =
          every_tier_holds_one_ && TierAssignmentFits(net, 1);
    }
    const size_t nets = system.networks.size();
    dp_time_bound_.resize(nets);
    dp_order_.reserve(nets);
    candidates_.reserve(nets);
  }

  // The groups of the space, in enumeration order (their choice lists
  // live in this searcher).
  std::vector<Group> EnumerateGroups();
  // Takes the shared runs of `groups` one at a time until none is left.
  absl::Status RunGroups(const std::vector<Group>& groups);
  // The workers' counts and rankings merged, the best `top` with their
  // figures.
  static SearchResult Merge(
      const std::vector<std::unique_ptr<Searcher>>& workers);

 private:
  // The network-tier assignments of one group, in enumeration order
  // (tensor, context, pipeline, data).
  struct Assignment {
    int64_t tn, cn, pn, dn;
  };
  // One (tensor_net, context_net, pipeline_net) of a group with at least one
  // valid data_net. A data_net other than tn, cn and pn is valid exactly when
  // `others_ok` (tn, cn and pn hold t, cp and p) and the tier holds d alone
  // (GroupState::data_tiers); dn equal to one of them is checked one by one.
  struct TierPrefix {
    int64_t tn, cn, pn;
    bool others_ok;
    int64_t valid;  // how many data_net make a valid assignment
    int64_t pair;   // the index of (tn, cn) among the group's pairs
  };
  struct GroupState {
    const Group* group = nullptr;
    int64_t blocks_per_stage = 0;
    // The checker's InterleavingFits (always so in this space),
    // TensorSplitsModel (the search filters t by hidden and heads only, so
    // the feed-forward size may not split; Calculon asserts, the checker
    // rejects), the experts' and latent attention's splits and a tier for
    // the expert all-to-all.
    bool structure_ok = true;
    int64_t assignments = 0;        // all of them
    int64_t valid_assignments = 0;  // those passing the tier check
    Assignment first_valid = {0, 0, 0, 0};  // when valid_assignments > 0
    // The data_net values (those of SEARCH.md's range) whose tier holds d
    // alone, increasing, and the same as a mask by tier.
    std::vector<int64_t> data_tiers;
    std::vector<bool> data_tier_holds;
    std::vector<TierPrefix> prefixes;  // in enumeration order
    int64_t pairs = 0;  // distinct (tn, cn) of the prefixes
  };
  // A choice's spec parts (ExecutionParts, at microbatch size 1), derived
  // values (at any microbatch size) and block shard, made on first use:
  // most (choice, microbatch size) pairs need none of them, their memory
  // verdict being their twin's and their bounds their bound part's.
  struct ChoiceSpec {
    bool made = false;
    CalculonTrainingParts parts;
    DerivedValues derived;
    BlockShard shard;
    // Its step shape at microbatch size 1 (SetStepMicrobatchSize gives
    // another's), pointing to the searcher's schedule memo.
    StepShape step;
  };
  // The choice's spec, made if not yet.
  ChoiceSpec& SpecOf(const GroupState& gs, const Choice& c, ChoiceSpec& spec);

  // The context degrees tried with tensor degree t (cp = 1 first).
  std::vector<int64_t> ContextDegrees(int64_t t) const;
  // The schedules tried with (p, v): Calculon's (nullopt) first, then with
  // --schedules all and p > 1 the schedule table's simulated rows of that
  // fixed v (gpipe, zb_h1, zb_h2 and dualpipe for v = 1; dualpipe_v and
  // zb_v for v = 2), all with an even layout only; a group whose shape fits
  // no microbatch size is not made.
  std::vector<std::optional<ScheduleKind>> Schedules(int64_t p, int64_t v,
                                                     bool even) const;
  // The (ep, etp) pairs tried for the t * cp * d ranks of a stage.
  std::vector<std::pair<int64_t, int64_t>> ExpertDegrees(int64_t t,
                                                         int64_t ranks) const;
  const ChoiceList* ChoicesFor(const ChoiceShape& shape);
  GroupState StartGroup(const Group& group) const;
  // The tier check of SEARCH.md's step 17 for one assignment, looking only
  // at the tiers it uses (dn < 0: none).
  bool AssignmentValid(const Group& g, int64_t tn, int64_t cn, int64_t pn,
                       int64_t dn) const;
  // Fills candidates_ with the data_net values of `prefix` to evaluate, in
  // increasing order: every valid one, or (`bounded`: step_time_without_dp
  // bounds the step time without its DP term from below) only those whose
  // iteration may enter the top N (see EvaluatePruned).
  void DataCandidates(const GroupState& gs, const TierPrefix& prefix,
                      bool bounded, double step_time_without_dp,
                      double batch);
  absl::Status RunGroup(const Group& group, double done);
  // Whether the search was cancelled (worker 0 polls the caller's cancel).
  bool Cancelled();
  // Whether some worker has kept `top` mappings; then threshold_ is the
  // best last kept rate of any worker, which `top` mappings reach: a
  // mapping whose bound is at most it cannot rank (the bounds are strict,
  // kBoundSlack).
  bool ThresholdKnown() {
    threshold_ = std::max(threshold_,
                          shared_->threshold.load(std::memory_order_relaxed));
    return threshold_ > -kInfinity;
  }
  // This worker has done `done` of the weight; worker 0 reports the sum.
  void ReportProgress(double done);
  CalculonExecution Execution(const Group& g, const Choice& c, int64_t b) const;
  ExecutionExtras Extras(const Group& g, const Choice& c) const;
  BlockConfig ConfigOf(const Group& g, const Choice& c, int64_t b) const;
  BlockNets NetsOf(const Group& g, int64_t tn, int64_t cn) const {
    BlockNets nets;
    nets.tensor = tn;
    nets.context = cn;
    nets.expert = g.en;
    return nets;
  }
  // Both count the executions of one (choice, microbatch size) and offer the
  // valid ones to the ranking. `parts` are the choice's spec parts
  // (ExecutionParts), whose microbatch size they set, `derived` their
  // derived values (at any microbatch size) and `shard` the choice's block
  // shard. EvaluatePruned takes the choice's index in the group's list and
  // the microbatch size's in microbatch_sizes.
  absl::Status EvaluatePruned(const GroupState& gs, size_t choice,
                              size_t microbatch, ChoiceSpec& spec);
  absl::Status EvaluateExhaustive(const GroupState& gs, const Choice& c,
                                  size_t microbatch, ChoiceSpec& spec);
  void Offer(double rate, const CalculonExecution& e,
             const ExecutionExtras& x, const Assignment& a,
             const StagedBlock& block);

  const TransformerModel& model_;
  const AccountedModel accounted_;  // AccountedModelOf(model_)
  const System& system_;
  const SearchOptions& options_;
  SharedSearch* shared_;
  int worker_;
  double threshold_ = -kInfinity;  // see ThresholdKnown()
  uint64_t group_index_ = 0;  // of the group being run
  uint64_t offers_ = 0;
  BlockTable blocks_;
  TopN<Ranked> top_;
  SearchResult result_;
  double last_progress_ = -1;
  // The checker does not model TP overlap with MoE or latent attention.
  bool tp_overlap_modelled_;
  // A tier no dimension uses must still hold 1 (Calculon checks every tier).
  bool every_tier_holds_one_ = true;
  // The choice lists, one per ChoiceShape (ChoicesFor), made on demand.
  ChoiceList choice_lists_[8];
  bool choice_lists_made_[8] = {};
  // Per group, by (block part, microbatch index): its block, found on first
  // use; and by (memory twin, microbatch index): whether its memory fits
  // (kUnknown until checked). Sized per group, reused (no allocation per
  // mapping).
  enum class Verdict : int8_t { kUnknown, kFits, kOver };
  std::vector<BlockTable::Entry*> entries_;
  std::vector<Verdict> verdicts_;
  // Per state part of the group: whether its state alone is over the
  // tier-1 capacity (StateExceedsTier1; kFits: it is not), and that state
  // (made with the verdict; the same for every block configuration and
  // microbatch size of the group: block_table_test).
  std::vector<Verdict> state_verdicts_;
  std::vector<MemoryState> states_;
  // Per (block part, microbatch index) of the group: its activations (the
  // same for every ZeRO stage: block_table_test), known once read; and per
  // microbatch index, PeakInFlightMicrobatches (the group's schedule
  // shape's, the same for every choice).
  std::vector<MemoryActivations> activations_;
  std::vector<bool> activations_known_;
  std::vector<double> in_flight_;
  std::vector<bool> in_flight_known_;
  // Per group of the run in progress, whether it is the last of its
  // blocks' family (BlockTable::Family): after it the entries it used are
  // released (BlockTable::Release).
  std::vector<bool> last_of_family_;
  absl::flat_hash_set<BlockConfig> later_families_;  // scratch
  // By (bound part, microbatch index, tier pair): StepTimeLowerBound, valid
  // where its generation is the group's (no clearing per group).
  struct KnownBound {
    uint64_t generation = 0;
    double bound = 0;
    // A tier pair's: the planned block the bound was made from (the
    // table keeps it through the group), which the pair's iterations read.
    const StagedBlock* block = nullptr;
  };
  std::vector<KnownBound> bounds_;
  // By (bound part, microbatch index): the least of its tier pairs' bounds,
  // once all are known (a choice all of whose pairs are ruled out is then
  // passed over at once).
  std::vector<KnownBound> least_bounds_;
  // By (bound part, microbatch index): StepTimeLowerBound of the block
  // without collectives, at most every tier pair's; known before any pair
  // is planned.
  std::vector<KnownBound> floor_bounds_;
  uint64_t bounds_generation_ = 0;
  // The spec of the choice being run (reused: no allocation per choice).
  ChoiceSpec choice_spec_;
  // Scratch of EvaluatePruned, sized once to the tier count (no allocation
  // per mapping): a lower bound on the DP exposed time per data_net for the
  // current (tensor_net, context_net) (NaN: unknown), the data tiers in
  // increasing order of it, and the data_net values to evaluate for one
  // tier prefix.
  std::vector<double> dp_time_bound_;
  std::vector<int64_t> dp_order_;
  std::vector<int64_t> candidates_;
  // EvaluatePruned's memory and iteration figures, overwritten by each use.
  MemoryFigures memory_scratch_;
  IterationFigures iteration_scratch_;
  // The simulated schedules' figures by shape and chunk durations.
  ScheduleMemo schedule_memo_;
};

std::vector<int64_t> Searcher::ContextDegrees(int64_t t) const {
  std::vector<int64_t> out;
  for (int64_t cp : Divisors(options_.procs / t)) {
    if (cp > options_.max_context) break;
    // The checker's rule: two load-balanced causal chunks per rank.
    if (cp > 1 && model_.seq_size % (2 * cp) != 0) continue;
    out.push_back(cp);
  }
  return out;
}

std::vector<std::optional<ScheduleKind>> Searcher::Schedules(
    int64_t p, int64_t v, bool even) const {
  std::vector<std::optional<ScheduleKind>> out = {std::nullopt};
  // The checker's rule: the simulated schedules price equal stages.
  if (!options_.every_schedule || p < 2 || !even) return out;
  // The schedule table's simulated rows for this v, in table order.
  for (const ScheduleRow& row : kScheduleTable) {
    if (row.simulated && row.virtual_stages.fixed == v) {
      out.push_back(row.kind);
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
      if (ranks % (ep * etp) == 0) out.push_back({ep, etp});
    }
  }
  return out;
}

const ChoiceList* Searcher::ChoicesFor(const ChoiceShape& shape) {
  const int index = (shape.tensor ? 1 : 0) + (shape.context ? 2 : 0) +
                    (shape.data ? 4 : 0);
  if (!choice_lists_made_[index]) {
    choice_lists_[index] = MakeChoiceList(EnumerateChoices(
        shape, system_.mem2.gib > 0, tp_overlap_modelled_, options_));
    choice_lists_made_[index] = true;
  }
  return &choice_lists_[index];
}

std::vector<Group> Searcher::EnumerateGroups() {
  const int64_t n = options_.procs;
  const int64_t blocks = model_.num_blocks;
  const int64_t nets = static_cast<int64_t>(system_.networks.size());
  std::vector<Group> groups;
  for (int64_t t : Divisors(n)) {
    if (model_.hidden % t != 0 || model_.attn_heads % t != 0) continue;
    for (int64_t cp : ContextDegrees(t)) {
      const int64_t ranks = n / (t * cp);  // p * d
      // Calculon's p divide the blocks (the even layout); with
      // --stage-layouts all, every p up to the block count does, those that
      // do not divide it with the uneven layout (the adapter's
      // ExecutionParts sets it): each stage priced with blocks_per_stage =
      // ceil(blocks / p), v dividing that. The same increasing order.
      for (int64_t p : Divisors(ranks)) {
        if (p > blocks) break;
        const bool even = blocks % p == 0;
        if (!even && !options_.uneven_stages) continue;
        const int64_t d = ranks / p;
        if (d > options_.max_batch) continue;
        const std::vector<int64_t> interleavings =
            p == 1 ? std::vector<int64_t>{1}
                   : Divisors(BlocksPerStage(blocks, p));
        for (int64_t v : interleavings) {
          Group base;
          base.t = t;
          base.cp = cp;
          base.p = p;
          base.d = d;
          base.v = v;
          base.batch = options_.max_batch / d * d;
          for (int64_t b : Divisors(base.batch / d)) {
            if ((b * model_.seq_size) % t == 0) {
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
          for (const std::optional<ScheduleKind>& schedule :
               Schedules(p, v, even)) {
            Group with_schedule = base;
            with_schedule.schedule = schedule;
            if (schedule.has_value()) {
              for (int64_t b : base.microbatch_sizes) {
                with_schedule.schedule_fits.push_back(
                    ScheduleShapeErrors(*schedule, p, v, base.batch / d / b)
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
            auto expert_degrees =
                std::make_shared<std::vector<std::pair<int64_t, int64_t>>>();
            const size_t first = groups.size();
            for (const auto& [ep, etp] : ExpertDegrees(t, t * cp * d)) {
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
              g.structure_ok =
                  InterleavingFits(g.v, BlocksPerStage(blocks, g.p)) &&
                  TensorSplitsModel(model_, g.t) &&
                  ExpertsAndLatentsSplit(model_, g.t,
                                         g.etp == 0 ? g.t : g.etp) &&
                  g.en >= 0;
            }
          }
        }
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
  const int64_t holding = static_cast<int64_t>(gs.data_tiers.size());
  for (int64_t tn = 0; tn < tensor_nets; ++tn) {
    for (int64_t cn = 0; cn < context_nets; ++cn) {
      for (int64_t pn = 0; pn < pipeline_nets; ++pn) {
        TierPrefix prefix;
        prefix.tn = tn;
        prefix.cn = cn;
        prefix.pn = pn;
        // The distinct tiers of tn, cn and pn: a data_net equal to one of
        // them has its own check.
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
          prefix.valid = holding;
          for (int i = 0; i < used; ++i) {
            if (gs.data_tier_holds[static_cast<size_t>(same[i])]) {
              --prefix.valid;
            }
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
        if (prefix.valid == 0) continue;
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
    }
  }
  return gs;
}

bool Searcher::AssignmentValid(const Group& g, int64_t tn, int64_t cn,
                               int64_t pn, int64_t dn) const {
  if (!every_tier_holds_one_) return false;
  const int64_t t = g.t > 1 ? g.t : 1;
  const int64_t cp = g.cp > 1 ? g.cp : 1;
  const int64_t p = g.p > 1 ? g.p : 1;
  const int64_t d = g.d > 1 ? g.d : 1;
  // The checker's rule: the degrees mapped to one tier multiply.
  const auto holds = [&](int64_t tier) {
    int64_t used = 1;
    if (tn == tier) used *= t;
    if (cn == tier) used *= cp;
    if (pn == tier) used *= p;
    if (dn == tier) used *= d;
    return TierAssignmentFits(system_.networks[static_cast<size_t>(tier)],
                              used);
  };
  return holds(tn) && (cn == tn || holds(cn)) &&
         (pn == tn || pn == cn || holds(pn)) &&
         (dn < 0 || dn == tn || dn == cn || dn == pn || holds(dn));
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
  e.optimizer_sharding = c.sharding != ShardingStage::kNone;
  e.comm = c.comm;
  e.tp_overlap = c.tp_overlap;
  e.dp_overlap = c.dp_overlap;
  e.offload = c.offload;
  return e;
}

ExecutionExtras Searcher::Extras(const Group& g, const Choice& c) const {
  ExecutionExtras x;
  x.context = g.cp;
  x.context_exchange = c.context_exchange;
  x.expert = g.ep;
  x.expert_tensor = g.etp;
  x.expert_net = g.en > 0 ? g.en : 0;
  x.sharding = c.sharding;
  x.precision = options_.precision;
  x.profile = options_.profile;
  x.schedule = g.schedule;
  return x;
}

BlockConfig Searcher::ConfigOf(const Group& g, const Choice& c,
                               int64_t b) const {
  return BlockConfigOf(Execution(g, c, b), Extras(g, c));
}

void Searcher::Offer(double rate, const CalculonExecution& e,
                     const ExecutionExtras& x, const Assignment& a,
                     const StagedBlock& block) {
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
  slot.execution = e;
  slot.execution.tensor_net = a.tn;
  slot.execution.pipeline_net = a.pn;
  slot.execution.data_net = a.dn;
  slot.execution_extras = x;
  slot.execution_extras.context_net = a.cn;
  slot.block = block;
}

Searcher::ChoiceSpec& Searcher::SpecOf(const GroupState& gs, const Choice& c,
                                       ChoiceSpec& spec) {
  if (spec.made) return spec;
  // Built once per choice: only the microbatch size varies, and the tiers
  // are moved per assignment (SetStepNetworks).
  CalculonExecution e = Execution(*gs.group, c, /*b=*/1);
  e.tensor_net = gs.first_valid.tn;
  e.pipeline_net = gs.first_valid.pn;
  e.data_net = gs.first_valid.dn;
  ExecutionExtras x = Extras(*gs.group, c);
  x.context_net = gs.first_valid.cn;
  spec.parts = ExecutionParts(e, x, model_);
  // The derived values and the shard depend on the microbatch size only
  // through the microbatch count (StepShapeOf sets it).
  spec.derived = DeriveTrainingValues(model_, spec.parts.parallelism,
                                      spec.parts.batch, spec.parts.options);
  spec.shard = BlockShardOf(spec.derived);
  spec.step = StepShapeOf(spec.derived, model_, system_, spec.parts,
                          accounted_, gs.group->schedule);
  spec.step.schedule_memo = &schedule_memo_;
  spec.made = true;
  return spec;
}

// Every execution of one (choice, b) shares the checks that do not depend on
// the network tiers (interleaving, offload, memory: the memory figures come
// from footprints, not from times), so they are made once. The iteration is
// then evaluated per tier assignment, in enumeration order, except where a
// lower bound on the step time shows that it cannot enter the top N:
//   - per (tensor_net, context_net), StepTimeLowerBound (the block with
//     those tiers), computed once per bound part and microbatch size;
//   - per tier prefix with many data_net values, the step time without DP
//     (the iteration with d = 1: every term but the DP exposed time, which
//     is >= 0), plus per data_net a lower bound on the DP exposed time
//     (below), so that only the data tiers with the smallest bounds are
//     looked at (a prefix of them in increasing order of the bound).
// So the work per (choice, b) is O(tiers^3) bounds plus the iterations that
// may enter the top N, not O(tiers^4). Skipping an assignment is safe: its
// rate is at most the bound's, which is at most the N-th best rate when it
// was computed, and that only grows; the assignments evaluated are offered in
// enumeration order, so ties rank as in Calculon.
absl::Status Searcher::EvaluatePruned(const GroupState& gs, size_t choice,
                                      size_t microbatch, ChoiceSpec& spec) {
  const Group& g = *gs.group;
  const ChoiceList& list = *g.choices;
  const Choice& c = list.choices[choice];
  const int64_t b = g.microbatch_sizes[microbatch];
  const size_t sizes = g.microbatch_sizes.size();
  result_.total_executions += gs.assignments;
  if (!gs.structure_ok || !OffloadFits(c.offload, gs.blocks_per_stage) ||
      gs.valid_assignments == 0 || !ScheduleAllows(g, c, microbatch)) {
    result_.bad_executions += gs.assignments;
    return absl::OkStatus();
  }
  Verdict& verdict =
      verdicts_[static_cast<size_t>(list.memory_twin[choice]) * sizes +
                microbatch];
  if (verdict == Verdict::kOver) {
    result_.bad_executions += gs.assignments;
    return absl::OkStatus();
  }
  // The block, the spec and the step shape, made when first needed: a
  // choice whose memory verdict is its twin's and whose bounds rule it out
  // needs none of them.
  BlockTable::Entry*& entry =
      entries_[static_cast<size_t>(list.block_part[choice]) * sizes +
               microbatch];
  // The choice's step shape, given this microbatch size and then each
  // assignment's tiers (SetStepNetworks before each iteration; the memory
  // figures and the bounds read no tier); the memory and iteration figures
  // are scratch the calls reuse: most never shape or evaluate, and zeroing
  // these some hundred bytes per call was a tenth of the loop's time.
  StepShape& step = spec.step;
  bool shaped = false;
  // (A Status, not a StatusOr of the step: called tens of millions of
  // times, mostly when already shaped.)
  const auto shape = [&]() -> absl::Status {
    if (shaped) return absl::OkStatus();
    if (entry == nullptr) {
      BP_ASSIGN_OR_RETURN(entry,
                          blocks_.Find(ConfigOf(g, c, b), *g.expert_degrees,
                                       options_.context_exchange));
    }
    SpecOf(gs, c, spec);
    SetStepMicrobatchSize(step, spec.derived, model_, b);
    shaped = true;
    return absl::OkStatus();
  };
  if (verdict == Verdict::kUnknown) {
    // The weights, gradients and optimizer state depend on neither the
    // microbatch size nor the choice's block configuration: when they
    // alone are over the capacity, so is every microbatch size of every
    // twin with the same ZeRO stage and offload (a fifth of the memory
    // verdicts of the page's search of every dimension).
    const size_t state_part = static_cast<size_t>(list.state_part[choice]);
    Verdict& state = state_verdicts_[state_part];
    if (state != Verdict::kOver) {
      BP_RETURN_IF_ERROR(shape());
      if (state == Verdict::kUnknown) {
        // The memory figures read footprints only: the block need not be
        // planned.
        const StagedBlock* footprint = blocks_.Footprint(entry, spec.shard);
        states_[state_part] =
            MemoryStateOf(footprint->block, footprint->extras);
        state = StateExceedsTier1(states_[state_part].block, step)
                    ? Verdict::kOver
                    : Verdict::kFits;
      }
    }
    if (state == Verdict::kOver) {
      const size_t twin = static_cast<size_t>(list.memory_twin[choice]);
      std::fill_n(
          verdicts_.begin() + static_cast<std::ptrdiff_t>(twin * sizes),
          sizes, Verdict::kOver);
      result_.bad_executions += gs.assignments;
      return absl::OkStatus();
    }
    // The activations depend on the block configuration and the microbatch
    // size, not on the ZeRO stage, and the in-flight microbatches on the
    // schedule's shape alone: each is read from the block or computed once
    // per group, so that a verdict reads no block (a cache miss each).
    const size_t slot =
        static_cast<size_t>(list.block_part[choice]) * sizes + microbatch;
    if (!activations_known_[slot]) {
      // The unsharded footprint's: no ZeRO stage's variant need be made.
      const StagedBlock* footprint = blocks_.Footprint(entry, BlockShard{});
      activations_[slot] =
          MemoryActivationsOf(footprint->block, footprint->extras);
      activations_known_[slot] = true;
    }
    if (!in_flight_known_[microbatch]) {
      in_flight_[microbatch] = MemoryInFlight(step);
      in_flight_known_[microbatch] = true;
    }
    MemoryFigures& memory = memory_scratch_;  // all fields assigned
    ComputeMemory(states_[state_part], activations_[slot], step,
                  in_flight_[microbatch], memory);
    ++result_.work.memory_evaluations;
    verdict = MemoryFits(memory) ? Verdict::kFits : Verdict::kOver;
    if (verdict == Verdict::kOver) {
      result_.bad_executions += gs.assignments;
      return absl::OkStatus();
    }
  }
  result_.good_executions += gs.valid_assignments;
  result_.bad_executions += gs.assignments - gs.valid_assignments;

  // The bounds of this (bound part, microbatch size), by tier pair, and
  // their least: when it rules out every pair, so it does each.
  const size_t bound_slot =
      static_cast<size_t>(list.bound_part[choice]) * sizes + microbatch;
  KnownBound* bounds =
      &bounds_[bound_slot * static_cast<size_t>(gs.pairs)];
  KnownBound& least = least_bounds_[bound_slot];
  const double batch = static_cast<double>(g.batch);
  if (least.generation == bounds_generation_ && ThresholdKnown() &&
      batch / (least.bound * (1 - kBoundSlack)) <= threshold_) {
    return absl::OkStatus();
  }
  if (ThresholdKnown()) {
    // Before any tiers are priced: the bound of the block without its
    // collectives is at most every tier pair's (BlockTable::Compute).
    KnownBound& floor = floor_bounds_[bound_slot];
    if (floor.generation != bounds_generation_) {
      BP_RETURN_IF_ERROR(shape());
      const std::optional<BoundFigures> compute =
          blocks_.ComputeBound(entry, spec.shard);
      floor.bound =
          compute.has_value() ? StepTimeLowerBound(*compute, step) : 0;
      floor.generation = bounds_generation_;
      ++result_.work.step_time_bounds;
    }
    if (floor.bound > 0 &&
        batch / (floor.bound * (1 - kBoundSlack)) <= threshold_) {
      return absl::OkStatus();
    }
  }
  CalculonExecution e;
  ExecutionExtras x;
  bool offerable = false;  // e and x made
  const StagedBlock* block = nullptr;
  IterationFigures& iteration = iteration_scratch_;  // reset by each use
  int64_t planned_tn = -1, planned_cn = -1;
  bool ruled_out = false;
  double pair_bound = 0;  // the tier pair's StepTimeLowerBound (0: none)
  // The DP bounds by data tier (dp_time_bound_, dp_order_): made once per
  // call, they read the data tier alone (the blocks of every tier pair have
  // the same weights).
  bool dp_bounds_ready = false;
  for (const TierPrefix& prefix : gs.prefixes) {
    if (prefix.tn != planned_tn || prefix.cn != planned_cn) {
      planned_tn = prefix.tn;
      planned_cn = prefix.cn;
      block = nullptr;
      ruled_out = false;
      pair_bound = 0;
      if (ThresholdKnown()) {
        KnownBound& known = bounds[prefix.pair];
        if (known.generation != bounds_generation_) {
          BP_RETURN_IF_ERROR(shape());
          // The bound reads the figures kept beside the block's tiers: the
          // block itself is read only if the pair is not ruled out.
          BP_ASSIGN_OR_RETURN(
              const BlockTable::PlannedBlock planned,
              blocks_.GetPlanned(entry, NetsOf(g, prefix.tn, prefix.cn),
                                 spec.shard, /*compose=*/false));
          block = planned.staged;
          known.bound = StepTimeLowerBound(*planned.bound, step);
          known.block = block;
          known.generation = bounds_generation_;
        } else {
          block = known.block;
        }
        const double best_rate = batch / (known.bound * (1 - kBoundSlack));
        ruled_out = best_rate <= threshold_;
        if (known.bound > 0) pair_bound = known.bound;
      }
    }
    if (ruled_out) continue;
    ++result_.work.tier_pairs_examined;
    BP_RETURN_IF_ERROR(shape());
    if (block == nullptr) {
      BP_ASSIGN_OR_RETURN(
          block,
          blocks_.Get(entry, NetsOf(g, prefix.tn, prefix.cn), spec.shard));
      // Kept for the pair's next choices (its bound was made without it).
      KnownBound& known = bounds[prefix.pair];
      if (known.generation == bounds_generation_) known.block = block;
    }
    if (!offerable) {
      e = Execution(g, c, b);
      x = Extras(g, c);
      e.tensor_net = gs.first_valid.tn;
      e.pipeline_net = gs.first_valid.pn;
      e.data_net = gs.first_valid.dn;
      offerable = true;
    }
    // The data tier stays the first valid one until a data tier is chosen
    // below (the bound without DP does not read it).
    SetStepNetworks(step, system_, prefix.tn, prefix.pn, e.data_net);
    // A lower bound on the step time without its DP term (0: none), to
    // which each data tier's DP bound is added (DataCandidates): with many
    // data tiers, the iteration without DP itself; with a few, the tier
    // pair's bound (the iteration would cost as much as the bound, and
    // where DP dominates, as it does under the refined profile's float32
    // gradient reduction, the pair's bound plus DP rules most of them out).
    double without_dp = 0;
    if (ThresholdKnown()) {
      if (prefix.valid > kDirectDataTiers) {
        // The iteration without DP: d = 1 (step.data_net stays a valid
        // tier).
        const int64_t d = step.d;
        step.d = 1;
        ComputeIteration(block->block, block->extras, step, iteration);
        step.d = d;
        ++result_.work.step_time_bounds;
        without_dp = iteration.total_time;
        const double best_rate = batch / (without_dp * (1 - kBoundSlack));
        if (best_rate <= threshold_) continue;
      } else {
        without_dp = pair_bound;
      }
    }
    const bool bounded = without_dp > 0;
    if (bounded) {
      if (!dp_bounds_ready) {
        // Per data tier, a lower bound on dp_comm_exposed_time that holds
        // whatever the tensor, context and pipeline tiers and whether the
        // data tier is also one of them: without DP overlap, it is bpp *
        // block_dp_time, which depends on the data tier only; with it,
        // block_dp_time plus two terms >= 0 (figures.cc).
        dp_bounds_ready = true;
        dp_order_.clear();
        for (int64_t dn : gs.data_tiers) {
          SetStepNetworks(step, system_, prefix.tn, prefix.pn, dn);
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
    DataCandidates(gs, prefix, bounded, without_dp, batch);
    for (int64_t dn : candidates_) {
      SetStepNetworks(step, system_, prefix.tn, prefix.pn, dn);
      ComputeIteration(block->block, block->extras, step, iteration);
      ++result_.work.iteration_evaluations;
      Offer(iteration.sample_rate, e, x,
            {prefix.tn, prefix.cn, prefix.pn, dn}, *block);
    }
  }
  if (least.generation != bounds_generation_) {
    // Only once every pair's bound is known and positive (a pair whose
    // bound is 0 or NaN is never ruled out: neither is the choice).
    double least_bound = kInfinity;
    for (int64_t pair = 0; pair < gs.pairs; ++pair) {
      const KnownBound& known = bounds[pair];
      if (known.generation != bounds_generation_ || !(known.bound > 0)) {
        return absl::OkStatus();
      }
      least_bound = std::min(least_bound, known.bound);
    }
    least.bound = least_bound;
    least.generation = bounds_generation_;
  }
  return absl::OkStatus();
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
    if (bounded && gs.data_tier_holds[static_cast<size_t>(dn)]) {
      const double total =
          without_dp + dp_time_bound_[static_cast<size_t>(dn)];
      if (batch / (total * (1 - kBoundSlack)) <= threshold_) continue;
    }
    candidates_.push_back(dn);
  }
  if (prefix.others_ok) {
    // The other data tiers: every one, or those whose bound lets them in, a
    // prefix of dp_order_ (the bound grows along it).
    const std::vector<int64_t>& tiers = bounded ? dp_order_ : gs.data_tiers;
    for (int64_t dn : tiers) {
      ++result_.work.tier_triples_examined;
      if (bounded) {
        const double total =
            without_dp + dp_time_bound_[static_cast<size_t>(dn)];
        if (batch / (total * (1 - kBoundSlack)) <= threshold_) break;
      }
      if (std::find(same, same + used, dn) != same + used) continue;
      candidates_.push_back(dn);
    }
  }
  std::sort(candidates_.begin(), candidates_.end());
}

// Each execution on its own, as Calculon runs it: tier check, interleaving
// and offload checks, memory, iteration.
absl::Status Searcher::EvaluateExhaustive(const GroupState& gs, const Choice& c,
                                          size_t microbatch, ChoiceSpec& spec) {
  const Group& g = *gs.group;
  SpecOf(gs, c, spec);
  const BlockShard& shard = spec.shard;
  const DerivedValues& derived = spec.derived;
  CalculonTrainingParts& parts = spec.parts;
  const int64_t b = g.microbatch_sizes[microbatch];
  CalculonExecution e = Execution(g, c, b);
  const ExecutionExtras x = Extras(g, c);
  const BlockConfig config = ConfigOf(g, c, b);
  const int64_t nets = static_cast<int64_t>(system_.networks.size());
  // The step shape, built for the first valid assignment; each assignment
  // moves it to its own tiers (nothing else in it depends on them).
  StepShape step;
  bool shaped = false;
  MemoryFigures memory;
  IterationFigures iteration;
  for (int64_t tn = 0; tn < (g.t > 1 ? nets : 1); ++tn) {
    for (int64_t cn = 0; cn < (g.cp > 1 ? nets : 1); ++cn) {
      for (int64_t pn = 0; pn < (g.p > 1 ? nets : 1); ++pn) {
        for (int64_t dn = 0; dn < (g.d > 1 ? nets : 1); ++dn) {
          ++result_.total_executions;
          const bool valid = AssignmentValid(g, tn, cn, pn, dn) &&
                             gs.structure_ok &&
                             OffloadFits(c.offload, gs.blocks_per_stage) &&
                             ScheduleAllows(g, c, microbatch);
          if (!valid) {
            ++result_.bad_executions;
            continue;
          }
          BP_ASSIGN_OR_RETURN(const StagedBlock* block,
                              blocks_.Get(config, NetsOf(g, tn, cn), shard));
          if (!shaped) {
            parts.batch.microbatch_size = b;
            step = StepShapeOf(derived, model_, system_, parts, accounted_,
                               g.schedule);
            step.schedule_memo = &schedule_memo_;
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
          Offer(iteration.sample_rate, e, x, {tn, cn, pn, dn}, *block);
        }
      }
    }
  }
  return absl::OkStatus();
}

bool Searcher::Cancelled() {
  if (shared_->cancelled.load(std::memory_order_relaxed)) return true;
  if (worker_ == 0 && shared_->cancel && shared_->cancel()) {
    shared_->cancelled.store(true, std::memory_order_relaxed);
    return true;
  }
  return false;
}

void Searcher::ReportProgress(double done) {
  shared_->done[worker_].weight.store(done, std::memory_order_relaxed);
  if (worker_ != 0 || !shared_->progress || shared_->total <= 0) return;
  double all = 0;
  for (int w = 0; w < shared_->workers; ++w) {
    all += shared_->done[w].weight.load(std::memory_order_relaxed);
  }
  const double fraction = all / shared_->total;
  if (fraction - last_progress_ >= 1e-3) {
    last_progress_ = fraction;
    shared_->progress(std::min(fraction, 1.0));
  }
}

absl::Status Searcher::RunGroup(const Group& g, double done) {
  const GroupState gs = StartGroup(g);
  const std::vector<Choice>& choices = g.choices->choices;
  const size_t sizes = g.microbatch_sizes.size();
  if (!options_.exhaustive &&
      (!gs.structure_ok || gs.valid_assignments == 0)) {
    // Every execution of the group is bad (EvaluatePruned's first check):
    // counted at once, as the loop below would (one microbatch size per
    // choice with mbs_break); the exhaustive mode counts them one by one.
    if (Cancelled()) return absl::CancelledError("search cancelled");
    const int64_t sizes_tried =
        options_.mbs_break ? std::min<int64_t>(1, static_cast<int64_t>(sizes))
                           : static_cast<int64_t>(sizes);
    const int64_t executions = gs.assignments * sizes_tried *
                               static_cast<int64_t>(choices.size());
    result_.total_executions += executions;
    result_.bad_executions += executions;
    ReportProgress(done + (choices.empty() ? 0 : g.weight));
    return absl::OkStatus();
  }
  entries_.assign(static_cast<size_t>(g.choices->block_parts) * sizes,
                  nullptr);
  verdicts_.assign(static_cast<size_t>(g.choices->memory_twins) * sizes,
                   Verdict::kUnknown);
  state_verdicts_.assign(static_cast<size_t>(g.choices->state_parts),
                         Verdict::kUnknown);
  if (states_.size() < static_cast<size_t>(g.choices->state_parts)) {
    states_.resize(static_cast<size_t>(g.choices->state_parts));
  }
  const size_t block_slots =
      static_cast<size_t>(g.choices->block_parts) * sizes;
  if (activations_.size() < block_slots) activations_.resize(block_slots);
  activations_known_.assign(block_slots, false);
  in_flight_.resize(sizes);
  in_flight_known_.assign(sizes, false);
  const size_t bound_slots = static_cast<size_t>(g.choices->bound_parts) *
                             sizes * static_cast<size_t>(gs.pairs);
  if (bounds_.size() < bound_slots) bounds_.resize(bound_slots);
  const size_t least_slots =
      static_cast<size_t>(g.choices->bound_parts) * sizes;
  if (least_bounds_.size() < least_slots) least_bounds_.resize(least_slots);
  if (floor_bounds_.size() < least_slots) floor_bounds_.resize(least_slots);
  ++bounds_generation_;
  const double per_choice =
      choices.empty() ? 0 : g.weight / static_cast<double>(choices.size());
  for (size_t i = 0; i < choices.size(); ++i) {
    if (Cancelled()) return absl::CancelledError("search cancelled");
    ChoiceSpec& spec = choice_spec_;
    spec.made = false;
    for (size_t j = 0; j < sizes; ++j) {
      const int64_t good_before = result_.good_executions;
      BP_RETURN_IF_ERROR(options_.exhaustive
                             ? EvaluateExhaustive(gs, choices[i], j, spec)
                             : EvaluatePruned(gs, i, j, spec));
      if (options_.mbs_break && result_.good_executions == good_before) break;
    }
    ReportProgress(done + per_choice * static_cast<double>(i + 1));
  }
  return absl::OkStatus();
}

absl::Status Searcher::RunGroups(const std::vector<Group>& groups) {
  double done = 0;
  for (;;) {
    const size_t r =
        shared_->next_run.fetch_add(1, std::memory_order_relaxed);
    if (r >= shared_->runs.size()) break;
    // No block is shared across t or cp, nor chunk durations.
    blocks_.Clear();
    schedule_memo_.ForgetOutcomes();
    const GroupRun& run = shared_->runs[r];
    last_of_family_.assign(run.end - run.first, false);
    later_families_.clear();
    for (size_t index = run.end; index-- > run.first;) {
      last_of_family_[index - run.first] =
          later_families_
              .insert(
                  blocks_.Family(ConfigOf(groups[index], Choice{}, /*b=*/1)))
              .second;
    }
    for (size_t index = run.first; index < run.end; ++index) {
      group_index_ = index;
      entries_.clear();
      BP_RETURN_IF_ERROR(RunGroup(groups[index], done));
      done += groups[index].weight;
      if (last_of_family_[index - run.first]) {
        // No later group of the run uses these blocks.
        for (BlockTable::Entry* entry : entries_) {
          if (entry != nullptr) blocks_.Release(entry);
        }
      }
    }
  }
  result_.work.blocks_lowered = blocks_.blocks_lowered();
  result_.work.blocks_planned = blocks_.blocks_planned();
  result_.work.blocks_resharded = blocks_.blocks_resharded();
  result_.work.schedule_simulations = schedule_memo_.simulations();
  return absl::OkStatus();
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
    out.execution = r.execution;
    out.execution_extras = r.execution_extras;
    out.rank_key = ranked[i].key;
    out.block = r.block.block;
    out.extras = r.block.extras;
    const StepShape step = ExecutionStepShape(
        first.model_, first.system_, r.execution, r.execution_extras);
    ComputeIteration(out.block, out.extras, step, out.iteration);
    ComputeMemory(out.block, out.extras, step, out.memory);
    result.top.push_back(out);
  }
  const SearchOptions& options = first.options_;
  result.dimensions.context = options.max_context > 1;
  result.dimensions.expert = first.model_.moe.has_value();
  result.dimensions.sharding = options.every_sharding;
  result.dimensions.schedule = options.every_schedule;
  result.dimensions.stage_layout = options.uneven_stages;
  result.partition = options.partition;
  result.partitions = options.partitions;
  result.top_wanted = options.top;
  return result;
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
  if (options.threads < 0 || options.threads > SearchOptions::kMaxThreads) {
    problems.push_back(
        {"--threads",
         absl::StrCat("--threads (", options.threads,
                      ") must be between 1 and ", SearchOptions::kMaxThreads,
                      ", or 0 for the machine's cores"),
         ErrorCode::kOutOfRange});
  }
  if (options.top < 1) {
    problems.push_back(
        {"--top", absl::StrCat("--top (", options.top, ") must be at least 1"),
         ErrorCode::kOutOfRange});
  }
  if (options.partitions < 1 ||
      options.partitions > SearchOptions::kMaxPartitions ||
      options.partition < 0 || options.partition >= options.partitions) {
    problems.push_back(
        {"--partition",
         absl::StrCat("--partition (", options.partition, "/",
                      options.partitions, ") must be I/N with 0 <= I < N <= ",
                      SearchOptions::kMaxPartitions),
         ErrorCode::kOutOfRange});
  }
  if (options.fused_activation.empty()) {
    problems.push_back({"--fused-activation",
                        "--fused-activation must allow true, false or both",
                        ErrorCode::kInvalidValue});
  }
  if (options.max_context < 1) {
    problems.push_back(
        {"--max-context",
         absl::StrCat("--max-context (", options.max_context,
                      ") must be at least 1"),
         ErrorCode::kOutOfRange});
  }
  if (options.context_exchange.empty()) {
    problems.push_back({"--context-exchange",
                        "--context-exchange must allow ring, all_gather or "
                        "both",
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

CalculonTrainingParts ExecutionParts(const CalculonExecution& e,
                                     const ExecutionExtras& x,
                                     const TransformerModel& model) {
  CalculonTrainingParts parts = TrainingPartsOf(e, model);
  ApplyExtras(x, parts.parallelism, parts.options);
  return parts;
}

MappingSpec ExecutionSpec(const TransformerModel& model, const System& system,
                          const CalculonExecution& e,
                          const ExecutionExtras& extras) {
  MappingSpec spec = SpecOf(e, model, system);
  if (auto* training = std::get_if<TransformerTrainingMappingSpec>(&spec)) {
    ApplyExtras(extras, training->parallelism, training->options);
  }
  return spec;
}

TypedProgram ExecutionProgram(const TransformerModel& model,
                              const System& system, const CalculonExecution& e,
                              const ExecutionExtras& extras) {
  TypedProgram program;
  program.spec = ExecutionSpec(model, system, e, extras);
  program.derived = DeriveValues(program.spec);
  // As CheckSpec: the corrections of the spec's profile.
  program.corrections = CorrectionsFor(program.options().profile);
  return program;
}

StepShape ExecutionStepShape(const TransformerModel& model,
                             const System& system, const CalculonExecution& e,
                             const ExecutionExtras& extras) {
  const CalculonTrainingParts parts = ExecutionParts(e, extras, model);
  return StepShapeOf(DeriveTrainingValues(model, parts.parallelism,
                                          parts.batch, parts.options),
                     model, system, parts, AccountedModelOf(model),
                     extras.schedule);
}

namespace {

// The workers a search runs on: --threads, or (0) the machine's cores; one
// in WebAssembly, which is built without threads.
int SearchThreads(const SearchOptions& options) {
#if defined(__EMSCRIPTEN__)
  (void)options;
  return 1;
#else
  int64_t threads = options.threads;
  if (threads <= 0) {
    threads = static_cast<int64_t>(std::thread::hardware_concurrency());
  }
  return static_cast<int>(
      std::clamp<int64_t>(threads, 1, SharedSearch::kMaxWorkers));
#endif
}

// An estimate of a run's time, in memory verdicts: the memory verdicts its
// groups may take (memory twins x microbatch sizes) and its lowerings (per
// (ep, etp), the most block configurations x microbatch sizes of a group:
// the groups of other p, v and schedules share them), each some
// kLoweringCost verdicts (fitted to the time of each run, one worker: 21
// for Qwen3-235B-A22B's blocks, 18 for DeepSeek-V3's; in WebAssembly, where
// the page deals its parts by it, Qwen3's two parts balance nearer 30). A
// group whose structure does not fit costs nothing. The executions, which
// progress counts, are a poor guide: a run with few data tiers has few of
// them and as many lowerings.
double RunCost(const std::vector<Group>& groups, const GroupRun& run) {
  constexpr double kLoweringCost = 24;
  double verdicts = 0;
  std::vector<std::pair<std::pair<int64_t, int64_t>, double>> lowerings;
  for (size_t i = run.first; i < run.end; ++i) {
    const Group& g = groups[i];
    if (!g.structure_ok) continue;
    const double sizes = static_cast<double>(g.microbatch_sizes.size());
    verdicts += static_cast<double>(g.choices->memory_twins) * sizes;
    const double configs = static_cast<double>(g.choices->block_parts) * sizes;
    const std::pair<int64_t, int64_t> experts{g.ep, g.etp};
    auto it = std::find_if(lowerings.begin(), lowerings.end(),
                           [&](const auto& l) { return l.first == experts; });
    if (it == lowerings.end()) {
      lowerings.push_back({experts, configs});
    } else {
      it->second = std::max(it->second, configs);
    }
  }
  double lowered = 0;
  for (const auto& l : lowerings) lowered += l.second;
  return verdicts + kLoweringCost * lowered;
}

// The runs of groups of one (t, cp), costliest first (RunCost; the first of
// equal ones), so that the workers, which take them in this order, finish
// together.
std::vector<GroupRun> GroupRuns(const std::vector<Group>& groups) {
  std::vector<GroupRun> runs;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (runs.empty() || groups[i].t != groups[runs.back().first].t ||
        groups[i].cp != groups[runs.back().first].cp) {
      runs.push_back({i, i, 0, 0});
    }
    runs.back().end = i + 1;
    runs.back().weight += groups[i].weight;
  }
  for (GroupRun& run : runs) run.cost = RunCost(groups, run);
  std::stable_sort(runs.begin(), runs.end(),
                   [](const GroupRun& a, const GroupRun& b) {
                     return a.cost > b.cost;
                   });
  return runs;
}

// The runs of part `partition` of `partitions` (SearchOptions): `runs`
// (costliest first) dealt in order, each to the part with the least cost
// so far, the first of equal ones; still costliest first.
std::vector<GroupRun> PartitionRuns(const std::vector<GroupRun>& runs,
                                    int64_t partition, int64_t partitions) {
  std::vector<double> load(static_cast<size_t>(partitions), 0.0);
  std::vector<GroupRun> mine;
  for (const GroupRun& run : runs) {
    const size_t least = static_cast<size_t>(
        std::min_element(load.begin(), load.end()) - load.begin());
    load[least] += run.cost;
    if (static_cast<int64_t>(least) == partition) mine.push_back(run);
  }
  return mine;
}

// Runs work(0) on this thread and work(1..workers-1) on their own.
void RunWorkers(int workers, const std::function<void(int)>& work) {
#if defined(__EMSCRIPTEN__)
  for (int w = 0; w < workers; ++w) work(w);
#else
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; ++w) threads.emplace_back(work, w);
  work(0);
  for (std::thread& thread : threads) thread.join();
#endif
}

}  // namespace

absl::StatusOr<SearchResult> RunSearch(const TransformerModel& model,
                                       const System& system,
                                       const SearchOptions& options,
                                       ProgressFn progress, CancelFn cancel) {
  BP_RETURN_IF_ERROR(ValidateInputs(model, system, options));
  SharedSearch shared;
  shared.progress = std::move(progress);
  shared.cancel = std::move(cancel);
  std::vector<std::unique_ptr<Searcher>> workers;
  workers.push_back(
      std::make_unique<Searcher>(model, system, options, &shared, 0));
  const std::vector<Group> groups = workers.front()->EnumerateGroups();
  shared.runs = GroupRuns(groups);
  if (options.partitions > 1) {
    shared.runs =
        PartitionRuns(shared.runs, options.partition, options.partitions);
  }
  for (const GroupRun& run : shared.runs) shared.total += run.weight;
  shared.workers = static_cast<int>(std::max<size_t>(
      1, std::min(shared.runs.size(),
                  static_cast<size_t>(SearchThreads(options)))));
  for (int w = 1; w < shared.workers; ++w) {
    workers.push_back(
        std::make_unique<Searcher>(model, system, options, &shared, w));
  }
  std::vector<absl::Status> statuses(static_cast<size_t>(shared.workers));
  RunWorkers(shared.workers, [&](int w) {
    statuses[static_cast<size_t>(w)] =
        workers[static_cast<size_t>(w)]->RunGroups(groups);
    // A failed worker stops the others.
    if (!statuses[static_cast<size_t>(w)].ok()) {
      shared.cancelled.store(true, std::memory_order_relaxed);
    }
  });
  // The first failure other than a cancellation it caused, else that.
  for (const absl::Status& status : statuses) {
    if (!status.ok() && !absl::IsCancelled(status)) return status;
  }
  for (const absl::Status& status : statuses) {
    if (!status.ok()) return status;
  }
  if (shared.progress) shared.progress(1.0);
  SearchResult result = Searcher::Merge(workers);
  result.model = model;
  result.system = system;
  return result;
}

}  // namespace blueprint
