// Strategy search: every training mapping of Calculon's llm-optimal-execution
// space (calculon/SEARCH.md) for a model, a system, a processor count and a
// maximum batch, ranked by sample rate. Same space, same enumeration order
// (which also orders equal sample rates), same total / good / bad counts as
// Calculon for Calculon's inputs.
//
// Beyond Calculon's space, behind the model and the options (SEARCH.md in
// core/search/README.md gives the rules):
//   - context parallelism (--max-context N > 1): cp over the divisors of
//     procs / t up to N with seq_size % (2 * cp) == 0, its K/V exchange
//     (--context-exchange), and its network tier like t's, p's and d's;
//   - expert parallelism (a model with `moe`): ep over the divisors of the
//     experts with ep * etp | t * cp * d, etp in {t, 1}, the all-to-all on
//     the smallest network tier that holds ep * etp;
//   - the ZeRO stage (--sharding all): none, optimizer, gradients or
//     parameters over all d ranks, in place of Calculon's boolean;
//   - the pipeline schedule (--schedules all): gpipe, zb_h1, zb_h2 and, for
//     even p without DP overlap, dualpipe (v = 1), or dualpipe_v and zb_v
//     (v = 2) beside Calculon's, for p > 1, simulated through a
//     ScheduleMemo (core/schedule/memo.h).
// TP overlap is not tried for a model with MoE or latent attention (the
// checker does not model it there). A dense model without these options
// enumerates exactly Calculon's space.
//
// Speed comes from the structure, not from trimming the space: block figures
// are computed once per distinct block configuration (block_table.h) and
// reused across pipeline, data-parallel, batch, network-tier, offload and
// overlap choices; each mapping is then a few hundred floating-point
// operations without allocation. In the default mode, memory validity is
// shared by the mappings that differ only in network tiers and a mapping's
// iteration is not evaluated when a lower bound on its step time shows it
// cannot enter the top N; `exhaustive` evaluates every mapping in full and
// must give the identical result (tested).
//
// A ranked mapping's execution and extras become a spec, a program or a
// step shape through execution.h; the flags that fill SearchOptions are
// search_flags.h's table; the units that implement the search are listed in
// core/search/README.md ("Where the code is").
//
// Example:
//   SearchOptions options;
//   options.procs = 512;
//   options.max_batch = 512;
//   options.datatype = DataType::kFloat16;
//   absl::StatusOr<SearchResult> result = RunSearch(model, system, options);
//   if (!result.ok()) return result.status();
//   std::cout << SearchResultJson(*result);  // search_json.h
#ifndef BLUEPRINTING_CORE_SEARCH_SEARCH_H_
#define BLUEPRINTING_CORE_SEARCH_SEARCH_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/analysis/figures.h"
#include "core/analysis/schedule.h"
#include "core/plan/plan_ir.h"
#include "core/schedule/schedule_ir.h"
#include "core/search/mapping.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"

namespace blueprint {

// Calculon's llm-optimal-execution options, under their CLI names.
struct SearchOptions {
  int64_t procs = 0;      // --procs: processors (num_procs of every mapping)
  int64_t max_batch = 0;  // --max-batch: largest global batch
  DataType datatype = DataType::kFloat16;  // --datatype
  // --precision: how weights, gradients and optimizer state are counted.
  PrecisionAccounting precision = PrecisionAccounting::kCalculon;
  // --profile: the performance model's profile of every mapping
  // (options.profile: Calculon's model, or the refined one with its
  // corrections, core/spec/corrections.h).
  ModelProfile profile = ModelProfile::kCalculon;
  int top = 10;             // --top: how many mappings to keep
  bool mbs_break = false;   // --mbs-break: stop growing the microbatch once
                            // one size gives no valid mapping
  bool tp_overlap = true;   // try TP overlap ring and pipe (--no-tp-overlap)
  bool dp_overlap = true;   // try DP overlap (--no-dp-overlap)
  // --fused-activation: true -> {true}, false -> {false}, all -> {true, false}.
  std::vector<bool> fused_activation = {true};
  // --max-context: the largest context-parallel degree tried (1: none, as
  // Calculon).
  int64_t max_context = 1;
  // --context-exchange ring|all_gather|all: the K/V exchanges tried with
  // cp > 1.
  std::vector<ContextExchange> context_exchange = {ContextExchange::kRing};
  // --recipes calculon|all|LIST: the low-precision recipes tried
  // (ExecutionVariant, mapping.h: each with its GEMM datatype and, as
  // Megatron-Bridge runs it, FP8 parameter gathers); calculon: none alone
  // (no recipe, GEMMs in `datatype`); all (every_recipe): every recipe the
  // system runs (SystemRunsRecipe, core/spec/recipes.h), in the enum's
  // order.
  std::vector<QuantizationRecipe> recipes = {QuantizationRecipe::kNone};
  bool every_recipe = false;
  // --expert-dispatchers calculon|all|LIST: the expert dispatchers tried
  // with a model with experts (the flex ones with ep > 1 only); calculon:
  // all_to_all.
  std::vector<ExpertDispatcher> expert_dispatchers = {
      ExpertDispatcher::kAllToAll};
  // --expert-overlap calculon|all: without the expert overlap, or also with
  // it (parallelism.expert.overlap and delay_wgrad; where the checker
  // allows it: ep > 1, no full recomputation, interleaved_1f1b on p > 1).
  std::vector<bool> expert_overlap = {false};
  // --sharding calculon|all: Calculon's boolean (optimizer state sharded
  // or not), or every ZeRO stage (none, optimizer, gradients, parameters).
  bool every_sharding = false;
  // --schedules calculon|all: Calculon's schedule (1f1b, interleaved_1f1b
  // with v > 1), or also the simulated ones: gpipe, zb_h1, zb_h2, dualpipe
  // (v = 1; dualpipe for even p, without DP overlap) and dualpipe_v and zb_v
  // (v = 2), for p > 1.
  bool every_schedule = false;
  // --stage-layouts calculon|megatron|all: Calculon's pipeline degrees (p
  // divides the block count: the even layout); `megatron` adds every p up
  // to the block count that does not, laid out as Megatron-LM's
  // --decoder-first/last-pipeline-num-layers lay it (first_last_stages:
  // explicit stage layouts, FirstLastLayouts in enumerate.cc); `all` adds
  // those and Calculon's uneven layout of such p (uneven_stages:
  // blocks_per_stage rounded up, Calculon's pricing of it, Calculon's
  // schedules only).
  bool uneven_stages = false;
  bool first_last_stages = false;
  // --threads N (1..kMaxThreads): the worker threads; 0, the default: the
  // machine's cores, at most kMaxThreads. Always 1 in WebAssembly. The
  // result does not depend on it: each worker takes whole runs of groups of
  // one (t, cp) and the rankings merge in enumeration order; the work
  // counters do (each worker prunes by its own ranking).
  static constexpr int64_t kMaxThreads = 64;
  int64_t threads = 0;
  // --partition I/N (0 <= I < N <= kMaxPartitions): search only part I of
  // N of the space, for N searches in separate processes (the page's Web
  // Workers, each with its own WebAssembly instance) whose outputs
  // MergeSearchJson (search_json.h) merges into exactly the unpartitioned
  // output. The parts are whole runs of groups of one (t, cp), dealt
  // costliest first (an estimate of their time) to the part with the least
  // cost so far (the first of equal ones): every part enumerates the same
  // groups, so the deal is the same in each. N = 1: the whole space.
  static constexpr int64_t kMaxPartitions = 256;
  int64_t partition = 0;
  int64_t partitions = 1;
  // Evaluate every mapping in full: no shared validity, no bound (for tests).
  bool exhaustive = false;
  // Output format of the CLI and wasm `search` (--json); RunSearch ignores it.
  bool json = false;
  // --specs: with --json, each ranked mapping also carries its canonical
  // spec (what the page loads: Calculon's execution keys cannot hold every
  // dimension). RunSearch ignores it.
  bool specs = false;
};

// Which dimensions beyond Calculon's a search tried; its output names them
// only then (search_json.h).
struct ExtraDimensions {
  bool context = false;   // --max-context > 1
  bool expert = false;    // the model has a mixture of experts
  bool sharding = false;  // --sharding all
  bool schedule = false;  // --schedules all
  bool stage_layout = false;  // --stage-layouts megatron or all
  bool recipe = false;  // --recipes other than calculon (or none)
  // A model with experts and --expert-dispatchers, --expert-overlap other
  // than calculon.
  bool dispatcher = false;
  bool expert_overlap = false;
};

// One ranked mapping with the figures Calculon's stats JSON prints.
struct RankedExecution {
  // The mapping (core/spec/spec.h): Calculon's execution keys and the
  // dimensions beyond them are its adapter's output (search_json.h).
  TrainingMapping mapping;
  // Its place among mappings of equal sample rate (TopN's key: its group's
  // index in enumeration order, then the order of offers within it), which
  // a partitioned search prints so that its parts merge in that order.
  std::pair<uint64_t, uint64_t> rank_key{0, 0};
  BlockFigures block;
  StageExtras extras;  // the first and last stage's (0 without a vocabulary)
  IterationFigures iteration;
  MemoryFigures memory;
};

// How much work the search did (for the benchmark; not part of the output;
// with several workers it depends on when each one's ranking fills).
struct SearchWork {
  int64_t blocks_lowered = 0;     // Lower runs (per block)
  int64_t blocks_planned = 0;     // Plan runs (per block and its tiers)
  int64_t blocks_resharded = 0;   // sharded variants derived
  int64_t memory_evaluations = 0;
  int64_t iteration_evaluations = 0;
  // The network-tier work of the default mode, independent of time, for
  // tests of how it grows with the number of tiers: (tensor_net,
  // pipeline_net) pairs looked at (not ruled out per tensor_net), data tiers
  // looked at for them, and iterations run only for a bound (without DP, and
  // per data tier for a DP bound).
  int64_t tier_pairs_examined = 0;
  int64_t tier_triples_examined = 0;
  int64_t step_time_bounds = 0;
  // Simulations of a schedule shape at chunk durations (ScheduleMemo).
  int64_t schedule_simulations = 0;

  // The sum of two searches' work (the workers' of one search).
  SearchWork& operator+=(const SearchWork& o) {
    blocks_lowered += o.blocks_lowered;
    blocks_planned += o.blocks_planned;
    blocks_resharded += o.blocks_resharded;
    memory_evaluations += o.memory_evaluations;
    iteration_evaluations += o.iteration_evaluations;
    tier_pairs_examined += o.tier_pairs_examined;
    tier_triples_examined += o.tier_triples_examined;
    step_time_bounds += o.step_time_bounds;
    schedule_simulations += o.schedule_simulations;
    return *this;
  }
};

struct SearchResult {
  int64_t total_executions = 0;
  int64_t good_executions = 0;
  int64_t bad_executions = 0;
  std::vector<RankedExecution> top;  // best first; ties in enumeration order
  SearchWork work;
  // What the search ran on, so each ranked execution can be turned into a
  // program (MappingProgram) and printed.
  TransformerModel model;
  System system;
  ExtraDimensions dimensions;
  // The part of the space searched (SearchOptions.partition/partitions)
  // and how many mappings a merge of the parts keeps (SearchOptions.top).
  int64_t partition = 0;
  int64_t partitions = 1;
  int64_t top_wanted = 10;
};

// Called with the fraction of the space done, in [0, 1], non-decreasing.
using ProgressFn = std::function<void(double fraction)>;
// Polled during the search; returning true stops it with kCancelled.
using CancelFn = std::function<bool()>;

// Runs the search. kInvalidArgument when an option, the model or the system
// is unusable (InvalidInputError: one problem per line, its field the flag or
// the spec path); kCancelled when `cancel` asked for it.
absl::StatusOr<SearchResult> RunSearch(const TransformerModel& model,
                                       const System& system,
                                       const SearchOptions& options,
                                       ProgressFn progress = nullptr,
                                       CancelFn cancel = nullptr);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SEARCH_SEARCH_H_
