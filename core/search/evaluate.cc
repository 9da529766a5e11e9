// The strategy search's evaluation (searcher.h): one group's (choice,
// microbatch size) pairs, each counted and its valid mappings offered to
// the ranking. The pruned mode (the default) shares what does not depend
// on the network tiers and skips what its bounds (bound.cc) rule out; the
// exhaustive mode runs every mapping as Calculon does and must give the
// identical result (search_test).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "core/base/status_macros.h"
#include "core/search/searcher.h"
#include "core/spec/spec_schedule.h"

namespace blueprint {
namespace search_internal {

TrainingMapping Searcher::MappingOf(const Group& g, const Choice& c,
                                   int64_t b, const Assignment& a) const {
  TrainingMapping m;
  TransformerTrainingParallelism& parallelism = m.parallelism;
  parallelism.tensor = TensorParallel{g.t, c.comm, c.tp_overlap, a.tn};
  parallelism.pipeline = CalculonPipeline(g.p, g.v, model_.num_blocks, a.pn);
  if (g.stage_blocks != nullptr) {
    // An explicit layout: the stages are the layout's, not uneven.
    parallelism.pipeline.stage_layout = StageLayout::kEven;
    parallelism.pipeline.stage_blocks = *g.stage_blocks;
  }
  if (g.schedule.has_value()) {
    if (std::optional<PipelineSchedule> schedule =
            SimulatedSpecSchedule(*g.schedule)) {
      parallelism.pipeline.schedule = *schedule;
    }
  }
  parallelism.data =
      DataParallel{g.d, DataShardingOf(c.sharding), c.dp_overlap, a.dn};
  parallelism.context = ContextParallel{g.cp, c.context_exchange, a.cn};
  parallelism.expert.degree = g.ep;
  parallelism.expert.tensor_degree = g.etp;
  parallelism.expert.network_tier = g.en > 0 ? g.en : 0;
  parallelism.recompute = c.recompute;
  m.batch = Batch{g.batch, b};
  ExecutionOptions& options = m.options;
  options.datatype = options_.datatype;
  options.precision = options_.precision;
  options.profile = options_.profile;
  options.fused_activation = c.fused_activation;
  options.offload = c.offload;
  ApplyExecutionVariant(variant_, m);
  return m;
}

Searcher::ChoiceSpec& Searcher::SpecOf(const GroupState& gs, const Choice& c,
                                       ChoiceSpec& spec) {
  if (spec.made) return spec;
  // Built once per choice: only the microbatch size varies, and the tiers
  // are moved per assignment (SetStepNetworks).
  spec.mapping = MappingOf(*gs.group, c, /*b=*/1, gs.first_valid);
  // The derived values and the shard depend on the microbatch size only
  // through the microbatch count (MappingStepShapeWith sets it).
  spec.derived =
      DeriveTrainingValues(model_, spec.mapping.parallelism,
                           spec.mapping.batch, spec.mapping.options);
  spec.shard = BlockShardOf(spec.derived);
  spec.step = MappingStepShapeWith(spec.derived, model_, system_,
                                   spec.mapping, accounted_);
  spec.step.schedule_memo = &schedule_memo_;
  spec.made = true;
  return spec;
}

void Searcher::StartGroupMemos(const Group& g, const GroupState& gs) {
  const size_t sizes = g.microbatch_sizes.size();
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
  StartGroupMemos(g, gs);
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

// inline: a function with external linkage may be interposed in a -fPIC
// build, where GCC refuses to always_inline it; only this file calls it.
inline absl::Status Searcher::MemoryVerdict(PrunedCall& call,
                                            Verdict& verdict) {
  const ChoiceList& list = call.list;
  const StepShape& step = call.spec.step;
  // The weights, gradients and optimizer state depend on neither the
  // microbatch size nor the choice's block configuration: when they alone
  // are over the capacity, so is every microbatch size of every twin with
  // the same ZeRO stage and offload (a fifth of the memory verdicts of the
  // page's search of every dimension).
  const size_t state_part = static_cast<size_t>(list.state_part[call.choice]);
  Verdict& state = state_verdicts_[state_part];
  if (state != Verdict::kOver) {
    BP_RETURN_IF_ERROR(Shape(call));
    if (state == Verdict::kUnknown) {
      // The memory figures read footprints only: the block need not be
      // planned.
      const StagedBlock* footprint =
          blocks_.Footprint(call.entry, call.spec.shard);
      states_[state_part] = MemoryStateOf(footprint->block, footprint->extras);
      state = StateExceedsTier1(states_[state_part].block, step)
                  ? Verdict::kOver
                  : Verdict::kFits;
    }
  }
  if (state == Verdict::kOver) {
    // The twin's every microbatch size, this one's verdict among them.
    const size_t twin = static_cast<size_t>(list.memory_twin[call.choice]);
    std::fill_n(
        verdicts_.begin() + static_cast<std::ptrdiff_t>(twin * call.sizes),
        call.sizes, Verdict::kOver);
    verdict = Verdict::kOver;
    return absl::OkStatus();
  }
  // The activations depend on the block configuration and the microbatch
  // size, not on the ZeRO stage, and the in-flight microbatches on the
  // schedule's shape alone: each is read from the block or computed once
  // per group, so that a verdict reads no block (a cache miss each).
  const size_t slot =
      static_cast<size_t>(list.block_part[call.choice]) * call.sizes +
      call.microbatch;
  if (!activations_known_[slot]) {
    // The unsharded footprint's: no ZeRO stage's variant need be made.
    const StagedBlock* footprint = blocks_.Footprint(call.entry, BlockShard{});
    activations_[slot] =
        MemoryActivationsOf(footprint->block, footprint->extras);
    activations_known_[slot] = true;
  }
  if (!in_flight_known_[call.microbatch]) {
    in_flight_[call.microbatch] = MemoryInFlight(step);
    in_flight_known_[call.microbatch] = true;
  }
  // The memory figures are scratch: zeroing these some hundred bytes per
  // call was a tenth of the loop's time.
  MemoryFigures& memory = memory_scratch_;  // all fields assigned
  ComputeMemory(states_[state_part], activations_[slot], step,
                in_flight_[call.microbatch], memory);
  ++result_.work.memory_evaluations;
  verdict = MemoryFits(memory) ? Verdict::kFits : Verdict::kOver;
  return absl::OkStatus();
}

// Every execution of one (choice, b) shares the checks that do not depend on
// the network tiers (interleaving, offload, memory: the memory figures come
// from footprints, not from times), so they are made once. The iteration is
// then evaluated per tier assignment, in enumeration order, except where a
// lower bound on the step time shows that it cannot enter the top N
// (bound.cc; README.md: what each bound proves). So the work per (choice,
// b) is O(tiers^3) bounds plus the iterations that may enter the top N, not
// O(tiers^4).
absl::Status Searcher::EvaluateMayFit(const GroupState& gs, size_t choice,
                                      size_t microbatch, ChoiceSpec& spec,
                                      Verdict& verdict) {
  const Group& g = *gs.group;
  const ChoiceList& list = *g.choices;
  const Choice& c = list.choices[choice];
  const size_t sizes = g.microbatch_sizes.size();
  // The block, the spec and the step shape are made when first needed
  // (Shape): a choice whose memory verdict is its twin's and whose bounds
  // rule it out needs none of them.
  PrunedCall call{
      gs,
      g,
      list,
      choice,
      c,
      microbatch,
      g.microbatch_sizes[microbatch],
      sizes,
      static_cast<double>(g.batch),
      static_cast<size_t>(list.bound_part[choice]) * sizes + microbatch,
      spec,
      entries_[static_cast<size_t>(list.block_part[choice]) * sizes +
               microbatch]};
  if (verdict == Verdict::kUnknown) {
    BP_RETURN_IF_ERROR(MemoryVerdict(call, verdict));
    if (verdict == Verdict::kOver) {
      result_.bad_executions += gs.assignments;
      return absl::OkStatus();
    }
  }
  result_.good_executions += gs.valid_assignments;
  result_.bad_executions += gs.assignments - gs.valid_assignments;

  call.bounds = &bounds_[call.bound_slot * static_cast<size_t>(gs.pairs)];
  bool ruled_out = false;
  BP_RETURN_IF_ERROR(RuledOutBeforeTiers(call, ruled_out));
  if (ruled_out) return absl::OkStatus();
  BP_RETURN_IF_ERROR(EvaluateTierPrefixes(call));
  RecordLeastBound(call);
  return absl::OkStatus();
}

absl::Status Searcher::MakeShape(PrunedCall& call) {
  if (call.entry == nullptr) {
    BP_ASSIGN_OR_RETURN(call.entry,
                        blocks_.Find(ConfigOf(call.g, call.c, call.b),
                                     *call.g.expert_degrees,
                                     options_.context_exchange));
  }
  SpecOf(call.gs, call.c, call.spec);
  // The choice's step shape, given this microbatch size and then each
  // assignment's tiers (SetStepNetworks before each iteration; the memory
  // figures and the bounds read no tier).
  SetStepMicrobatchSize(call.spec.step, call.spec.derived, model_, call.b);
  call.shaped = true;
  return absl::OkStatus();
}

absl::Status Searcher::EvaluateTierPrefixes(PrunedCall& call) {
  const GroupState& gs = call.gs;
  StepShape& step = call.spec.step;
  PairState pair;
  for (const TierPrefix& prefix : gs.prefixes) {
    if (prefix.tn != pair.tn || prefix.cn != pair.cn) {
      BP_RETURN_IF_ERROR(StartTierPair(call, prefix, pair));
    }
    if (pair.ruled_out) continue;
    ++result_.work.tier_pairs_examined;
    BP_RETURN_IF_ERROR(Shape(call));
    if (pair.block == nullptr) {
      BP_ASSIGN_OR_RETURN(pair.block,
                          blocks_.Get(call.entry,
                                      NetsOf(call.g, prefix.tn, prefix.cn),
                                      call.spec.shard));
      // Kept for the pair's next choices (its bound was made without it).
      KnownBound& known = call.bounds[prefix.pair];
      if (known.generation == bounds_generation_) known.block = pair.block;
    }
    // The data tier stays the first valid one until a data tier is chosen
    // below (the bound without DP does not read it).
    SetStepNetworks(step, system_, prefix.tn, prefix.pn, gs.first_valid.dn);
    bool ruled_out = false;
    const double without_dp =
        WithoutDpBound(call, prefix, pair, *pair.block, ruled_out);
    if (ruled_out) continue;
    const bool bounded = without_dp > 0;
    if (bounded && !pair.dp_bounds_ready) {
      MakeDpBounds(call, prefix, *pair.block);
      pair.dp_bounds_ready = true;
    }
    DataCandidates(gs, prefix, bounded, without_dp, call.batch);
    EvaluateCandidates(call, prefix, *pair.block);
  }
  return absl::OkStatus();
}

void Searcher::EvaluateCandidates(PrunedCall& call, const TierPrefix& prefix,
                                  const StagedBlock& block) {
  StepShape& step = call.spec.step;
  IterationFigures& iteration = iteration_scratch_;  // reset by each use
  for (int64_t dn : candidates_) {
    SetStepNetworks(step, system_, prefix.tn, prefix.pn, dn);
    ComputeIteration(block.block, block.extras, step, iteration);
    ++result_.work.iteration_evaluations;
    Offer(iteration.sample_rate, call.g, call.c, call.b,
          {prefix.tn, prefix.cn, prefix.pn, dn}, block);
  }
}

// Each execution on its own, as Calculon runs it: tier check, interleaving
// and offload checks, memory, iteration.
absl::Status Searcher::EvaluateExhaustive(const GroupState& gs, const Choice& c,
                                          size_t microbatch, ChoiceSpec& spec) {
  const Group& g = *gs.group;
  SpecOf(gs, c, spec);
  const BlockShard& shard = spec.shard;
  const DerivedValues& derived = spec.derived;
  TrainingMapping& mapping = spec.mapping;
  const int64_t b = g.microbatch_sizes[microbatch];
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
            mapping.batch.microbatch_size = b;
            step = MappingStepShapeWith(derived, model_, system_, mapping,
                                        accounted_);
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
          Offer(iteration.sample_rate, g, c, b, {tn, cn, pn, dn}, *block);
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace search_internal
}  // namespace blueprint
