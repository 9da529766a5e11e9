// The strategy search's worker, internal to core/search: what the units of
// the search share. RunSearch (search.cc) makes one Searcher per worker;
// each unit defines the Searcher methods of its role:
//   enumerate.cc  the space: groups, their choices, their tier prefixes;
//   bound.cc      the bounds that let the pruned mode skip work without
//                 changing the result (README.md: what each proves);
//   evaluate.cc   one group's (choice, microbatch size) pairs, pruned or
//                 exhaustive;
//   rank.cc       the offers to the ranking, the shared threshold, the
//                 merge of the workers' rankings;
//   search.cc     the runs of groups, the workers, progress and cancel.
// The few calls made per (choice, microbatch size) or per tier prefix
// (EvaluatePruned's first checks, RuledOutBeforeTiers, ThresholdKnown,
// BeatenBy, AssignmentValid, Shape) are defined here, inline, and
// MemoryVerdict is inlined into its caller, so that the evaluation loop
// costs what it did in one file (core/search/BENCHMARKS.md).
#ifndef BLUEPRINTING_CORE_SEARCH_SEARCHER_H_
#define BLUEPRINTING_CORE_SEARCH_SEARCHER_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "core/analysis/figures.h"
#include "core/schedule/memo.h"
#include "core/schedule/schedule_ir.h"
#include "core/schedule/schedule_table.h"
#include "core/search/block_table.h"
#include "core/search/mapping.h"
#include "core/search/search.h"
#include "core/search/top_n.h"
#include "core/spec/accounting.h"
#include "core/spec/check.h"
#include "core/spec/derive.h"

namespace blueprint {
namespace search_internal {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Relative slack of the step-time lower bound: far above the rounding error
// of the few dozen operations on either side, far below any real difference.
inline constexpr double kBoundSlack = 1e-9;

// A tier prefix (tensor_net, context_net, pipeline_net) with at most this
// many valid data tiers has them all evaluated, without the per-prefix
// bound (see Searcher::WithoutDpBound).
inline constexpr int64_t kDirectDataTiers = 3;

// Calculon's _factors: every divisor of x (x >= 1), increasing.
std::vector<int64_t> Divisors(int64_t x);

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
  // An explicit stage layout (--stage-layouts megatron: p * v block counts,
  // FirstLastLayouts), shared by the groups made of one base; null: the
  // even layout, or Calculon's uneven one.
  std::shared_ptr<const std::vector<int64_t>> stage_blocks;
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

// A mapping the ranking keeps.
struct Ranked {
  TrainingMapping mapping;
  StagedBlock block;
};

// A run of groups of one (t, cp), which share their blocks: the unit of
// work a worker takes.
struct GroupRun {
  size_t first, end;  // groups [first, end)
  double weight;      // for progress: the most executions
  double cost;        // for ordering and dealing the runs (RunCost)
};

// What the workers of one search share: the runs, costliest first
// (RunCost), and the next one to take; the caller's progress and cancel
// functions, which only worker 0 (the caller's thread) calls; the weight
// each worker has done, whether the search was cancelled and the rate a
// mapping must beat.
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

class Searcher {
 public:
  // Worker `worker` of a search of `variant`'s space whose workers share
  // `shared`; its groups' indices (the ranking's keys) start at
  // `first_group`, after those of the variants searched before.
  Searcher(const TransformerModel& model, const System& system,
           const SearchOptions& options, SharedSearch* shared, int worker,
           const ExecutionVariant& variant = {}, uint64_t first_group = 0);

  // The groups of the space, in enumeration order (their choice lists
  // live in this searcher). enumerate.cc.
  std::vector<Group> EnumerateGroups();
  // Takes the shared runs of `groups` one at a time until none is left.
  // search.cc.
  absl::Status RunGroups(const std::vector<Group>& groups);
  // The workers' counts and rankings merged, the best `top` with their
  // figures. rank.cc.
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
    // The group's mapping rules (core/spec/mapping_rules.h
    // MappingRulesHold: the interleaving, t's split of the model, the
    // experts' and latent attention's splits) and a tier for the expert
    // all-to-all.
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
  // A choice's mapping (MappingOf, at microbatch size 1), derived
  // values (at any microbatch size) and block shard, made on first use:
  // most (choice, microbatch size) pairs need none of them, their memory
  // verdict being their twin's and their bounds their bound part's.
  struct ChoiceSpec {
    bool made = false;
    TrainingMapping mapping;
    DerivedValues derived;
    BlockShard shard;
    // Its step shape at microbatch size 1 (SetStepMicrobatchSize gives
    // another's), pointing to the searcher's schedule memo.
    StepShape step;
  };
  enum class Verdict : int8_t { kUnknown, kFits, kOver };
  // By (bound part, microbatch index, tier pair): StepTimeLowerBound, valid
  // where its generation is the group's (no clearing per group).
  struct KnownBound {
    uint64_t generation = 0;
    double bound = 0;
    // A tier pair's: the planned block the bound was made from (the
    // table keeps it through the group), which the pair's iterations read.
    const StagedBlock* block = nullptr;
  };
  // One EvaluatePruned call: its (choice, microbatch size), what it has
  // made so far and where its per-group memos are.
  struct PrunedCall {
    const GroupState& gs;
    const Group& g;
    const ChoiceList& list;
    size_t choice;
    const Choice& c;
    size_t microbatch;
    int64_t b;
    size_t sizes;  // the group's microbatch sizes
    double batch;  // the group's global batch
    size_t bound_slot;  // (bound part, microbatch size)
    ChoiceSpec& spec;
    // The block of (block part, microbatch size), found on first use.
    BlockTable::Entry*& entry;
    // Whether the block, the spec and the step shape at this microbatch
    // size are made (Shape).
    bool shaped = false;
    // By tier pair: the bounds of (bound part, microbatch size).
    KnownBound* bounds = nullptr;
  };
  // What the tier prefixes of one call carry from one to the next: the
  // current tier pair's block and bound, and the calls' data-tier bounds.
  struct PairState {
    int64_t tn = -1, cn = -1;
    const StagedBlock* block = nullptr;
    bool ruled_out = false;
    double bound = 0;  // the pair's StepTimeLowerBound (0: none)
    // The DP bounds by data tier (dp_time_bound_, dp_order_): made once per
    // call, they read the data tier alone (the blocks of every tier pair
    // have the same weights).
    bool dp_bounds_ready = false;
  };

  // --- enumerate.cc: the space.
  // The context degrees tried with tensor degree t (cp = 1 first).
  std::vector<int64_t> ContextDegrees(int64_t t) const;
  // How a group lays its blocks over the stages.
  enum class StageShape { kEven, kUneven, kLayout };
  // The schedules tried with (p, v): Calculon's (nullopt) first, then with
  // --schedules all and p > 1 gpipe, zb_h1, zb_h2 and dualpipe (v = 1), or
  // dualpipe_v and zb_v (v = 2), all with the even layout only; a group
  // whose shape fits no microbatch size is not made.
  std::vector<std::optional<ScheduleKind>> Schedules(int64_t p, int64_t v,
                                                     StageShape shape) const;
  // Megatron-LM's first/last splits of p stages (--stage-layouts megatron):
  // (v, layout) pairs, each layout the one Megatron-LM's
  // --decoder-first/last-pipeline-num-layers make (PipelineLayoutOf).
  std::vector<std::pair<int64_t, std::shared_ptr<const std::vector<int64_t>>>>
  FirstLastLayouts(int64_t p) const;
  // The (ep, etp) pairs tried for the t * cp * d ranks of a stage.
  std::vector<std::pair<int64_t, int64_t>> ExpertDegrees(int64_t t,
                                                         int64_t ranks) const;
  const ChoiceList* ChoicesFor(const ChoiceShape& shape);
  // The group of (t, cp, p, d, v) before its schedule and (ep, etp).
  Group BaseGroup(int64_t t, int64_t cp, int64_t p, int64_t d, int64_t v);
  // Whether the group's pipeline runs variant_ (the expert overlap needs
  // interleaved_1f1b on p > 1). enumerate.cc.
  bool VariantFits(const Group& g) const;
  // Appends the groups of `base` with each schedule of (p, v) and each
  // (ep, etp), in enumeration order.
  void AddGroups(const Group& base, StageShape shape,
                 std::vector<Group>& groups);
  GroupState StartGroup(const Group& group) const;
  // Appends the prefix (tn, cn, pn) to gs.prefixes when it has a valid
  // data_net, and counts its valid assignments.
  void AddTierPrefix(const Group& g, int64_t tn, int64_t cn, int64_t pn,
                     GroupState& gs) const;
  // The tier check of SEARCH.md's step 17 for one assignment, looking only
  // at the tiers it uses (dn < 0: none).
  bool AssignmentValid(const Group& g, int64_t tn, int64_t cn, int64_t pn,
                       int64_t dn) const {
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

  // --- evaluate.cc: one group's (choice, microbatch size) pairs.
  absl::Status RunGroup(const Group& group, double done);
  // Sizes the per-group memos for `g` (no allocation per mapping).
  void StartGroupMemos(const Group& g, const GroupState& gs);
  // The mapping of a choice of `g` at microbatch size b on the tiers of
  // `a`: the one function from the search's space to the spec's mapping.
  TrainingMapping MappingOf(const Group& g, const Choice& c, int64_t b,
                            const Assignment& a) const;
  // Its block (BlockConfigOf), which reads no tier.
  BlockConfig ConfigOf(const Group& g, const Choice& c, int64_t b) const {
    BlockConfig config = BlockConfigOf(MappingOf(g, c, b, {0, 0, 0, 0}));
    // The group's layout, which outlives the lookup (the mapping's copy
    // does not).
    config.stage_blocks = g.stage_blocks.get();
    return config;
  }
  BlockNets NetsOf(const Group& g, int64_t tn, int64_t cn) const {
    BlockNets nets;
    nets.tensor = tn;
    nets.context = cn;
    nets.expert = g.en;
    return nets;
  }
  // The choice's spec, made if not yet.
  ChoiceSpec& SpecOf(const GroupState& gs, const Choice& c, ChoiceSpec& spec);
  // Both count the executions of one (choice, microbatch size) and offer the
  // valid ones to the ranking. `spec` is the choice's (made on first use).
  // EvaluatePruned takes the choice's index in the group's list and the
  // microbatch size's in microbatch_sizes.
  //
  // EvaluatePruned is run per (choice, microbatch size), tens of millions of
  // times a search, and most runs end at its first checks (a structure that
  // does not fit, a twin's memory verdict over the capacity): those are
  // here, inline in RunGroup's loop; EvaluateMayFit (evaluate.cc) does the
  // rest. (Out of line, the calls cost some 5% more instructions.)
  absl::Status EvaluatePruned(const GroupState& gs, size_t choice,
                              size_t microbatch, ChoiceSpec& spec) {
    const Group& g = *gs.group;
    const ChoiceList& list = *g.choices;
    const Choice& c = list.choices[choice];
    result_.total_executions += gs.assignments;
    if (!gs.structure_ok || !OffloadFits(c.offload, gs.blocks_per_stage) ||
        gs.valid_assignments == 0 || !ScheduleAllows(g, c, microbatch)) {
      result_.bad_executions += gs.assignments;
      return absl::OkStatus();
    }
    Verdict& verdict =
        verdicts_[static_cast<size_t>(list.memory_twin[choice]) *
                      g.microbatch_sizes.size() +
                  microbatch];
    if (verdict == Verdict::kOver) {
      result_.bad_executions += gs.assignments;
      return absl::OkStatus();
    }
    return EvaluateMayFit(gs, choice, microbatch, spec, verdict);
  }
  // EvaluatePruned of a (choice, microbatch size) whose memory verdict
  // (`verdict`) is not known to be over the capacity.
  absl::Status EvaluateMayFit(const GroupState& gs, size_t choice,
                              size_t microbatch, ChoiceSpec& spec,
                              Verdict& verdict);
  absl::Status EvaluateExhaustive(const GroupState& gs, const Choice& c,
                                  size_t microbatch, ChoiceSpec& spec);
  // Makes the call's block, spec and step shape at its microbatch size, if
  // not yet (most calls need none of them).
  absl::Status Shape(PrunedCall& call) {
    if (call.shaped) return absl::OkStatus();
    return MakeShape(call);
  }
  absl::Status MakeShape(PrunedCall& call);
  // The memory verdict of the call's memory twin and microbatch size
  // (kFits or kOver), made from the group's state and activation memos.
  // Inlined into EvaluateMayFit, its one caller (evaluate.cc): some ten
  // million verdicts a search.
  ABSL_ATTRIBUTE_ALWAYS_INLINE inline absl::Status MemoryVerdict(
      PrunedCall& call, Verdict& verdict);
  // Evaluates the call's tier assignments that its bounds let through, in
  // enumeration order.
  absl::Status EvaluateTierPrefixes(PrunedCall& call);
  // Evaluates and offers the data tiers of `prefix` in candidates_.
  void EvaluateCandidates(PrunedCall& call, const TierPrefix& prefix,
                          const StagedBlock& block);

  // --- bound.cc: the bounds (README.md: what each proves).
  // Whether a step time of at least `bound` cannot beat the threshold.
  bool BeatenBy(double batch, double bound) const {
    return batch / (bound * (1 - kBoundSlack)) <= threshold_;
  }
  // Whether the call is ruled out before any tier pair is looked at: by
  // the least of its tier pairs' bounds when all are known, or by the
  // bound of its block without collectives (the floor, made by
  // MakeFloorBound once per (bound part, microbatch size)). Inline: once
  // per (choice, microbatch size) whose memory fits, mostly known bounds.
  absl::Status RuledOutBeforeTiers(PrunedCall& call, bool& ruled_out) {
    const KnownBound& least = least_bounds_[call.bound_slot];
    if (least.generation == bounds_generation_ && ThresholdKnown() &&
        BeatenBy(call.batch, least.bound)) {
      ruled_out = true;
      return absl::OkStatus();
    }
    if (!ThresholdKnown()) return absl::OkStatus();
    KnownBound& floor = floor_bounds_[call.bound_slot];
    if (floor.generation != bounds_generation_) {
      absl::Status made = MakeFloorBound(call, floor);
      if (!made.ok()) return made;
    }
    ruled_out = floor.bound > 0 && BeatenBy(call.batch, floor.bound);
    return absl::OkStatus();
  }
  // The floor: StepTimeLowerBound of the call's block without its
  // collectives (BlockTable::ComputeBound), at most every tier pair's.
  absl::Status MakeFloorBound(PrunedCall& call, KnownBound& floor);
  // Moves `pair` to the tier pair of `prefix`: its block and bound, and
  // whether the bound rules the pair out.
  absl::Status StartTierPair(PrunedCall& call, const TierPrefix& prefix,
                             PairState& pair);
  // A lower bound on the step time of `prefix`'s assignments without their
  // DP term (0: none), and whether it alone rules the prefix out.
  double WithoutDpBound(PrunedCall& call, const TierPrefix& prefix,
                        const PairState& pair, const StagedBlock& block,
                        bool& ruled_out);
  // Per data tier, a lower bound on the DP exposed time (dp_time_bound_),
  // and the data tiers in increasing order of it (dp_order_).
  void MakeDpBounds(PrunedCall& call, const TierPrefix& prefix,
                    const StagedBlock& block);
  // Fills candidates_ with the data_net values of `prefix` to evaluate, in
  // increasing order: every valid one, or (`bounded`: without_dp bounds the
  // step time without its DP term from below) only those whose iteration
  // may enter the top N.
  void DataCandidates(const GroupState& gs, const TierPrefix& prefix,
                      bool bounded, double without_dp, double batch);
  // Once every tier pair's bound of the call is known and positive, keeps
  // their least (RuledOutBeforeTiers reads it).
  void RecordLeastBound(const PrunedCall& call);

  // --- rank.cc: the ranking.
  // Whether some worker has kept `top` mappings; then threshold_ is the
  // best last kept rate of any worker, which `top` mappings reach: a
  // mapping whose bound is at most it cannot rank (the bounds are strict,
  // kBoundSlack).
  bool ThresholdKnown() {
    threshold_ = std::max(threshold_,
                          shared_->threshold.load(std::memory_order_relaxed));
    return threshold_ > -kInfinity;
  }
  // Offers the mapping of (g, c, b) on the tiers of `a` (MappingOf, made
  // only when the ranking admits it).
  void Offer(double rate, const Group& g, const Choice& c, int64_t b,
             const Assignment& a, const StagedBlock& block);

  // --- search.cc: progress and cancel.
  // Whether the search was cancelled (worker 0 polls the caller's cancel).
  bool Cancelled();
  // This worker has done `done` of the weight; worker 0 reports the sum.
  void ReportProgress(double done);

  const TransformerModel& model_;
  const AccountedModel accounted_;  // AccountedModelOf(model_)
  const System& system_;
  const SearchOptions& options_;
  SharedSearch* shared_;
  int worker_;
  const ExecutionVariant variant_;
  const uint64_t first_group_;
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
  // By (bound part, microbatch index, tier pair): see KnownBound.
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
  // Scratch of the pruned mode, sized once to the tier count (no
  // allocation per mapping): a lower bound on the DP exposed time per
  // data_net for the current (tensor_net, context_net) (NaN: unknown), the
  // data tiers in increasing order of it, and the data_net values to
  // evaluate for one tier prefix.
  std::vector<double> dp_time_bound_;
  std::vector<int64_t> dp_order_;
  std::vector<int64_t> candidates_;
  // The pruned mode's memory and iteration figures, overwritten by each use.
  MemoryFigures memory_scratch_;
  IterationFigures iteration_scratch_;
  // The simulated schedules' figures by shape and chunk durations.
  ScheduleMemo schedule_memo_;
};

}  // namespace search_internal
}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SEARCH_SEARCHER_H_
