// RunSearch (search.h): the inputs checked, the space enumerated into runs
// of groups, the runs dealt to the parts and taken by the workers, and the
// workers' results merged. What a worker does with a run is the other
// units' (searcher.h).
#include "core/search/search.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#if !defined(__EMSCRIPTEN__)
#include <thread>
#endif

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/field_errors.h"
#include "core/base/status_macros.h"
#include "core/plan/hardware.h"
#include "core/search/searcher.h"
#include "core/spec/check.h"
#include "core/spec/corrections.h"
#include "core/spec/recipes.h"

namespace blueprint {
namespace search_internal {

Searcher::Searcher(const TransformerModel& model, const System& system,
                   const SearchOptions& options, SharedSearch* shared,
                   int worker, const ExecutionVariant& variant,
                   uint64_t first_group)
    : model_(model),
      accounted_(AccountedModelOf(model)),
      system_(system),
      options_(options),
      shared_(shared),
      worker_(worker),
      variant_(variant),
      first_group_(first_group),
      blocks_(model, system, options.datatype, options.precision,
              options.profile, variant),
      top_(static_cast<size_t>(options.top)),
      tp_overlap_modelled_(!model.moe.has_value() &&
                           !model.latent_attention.has_value()) {
  for (const NetworkTier& net : system.networks) {
    every_tier_holds_one_ = every_tier_holds_one_ && TierAssignmentFits(net, 1);
  }
  const size_t nets = system.networks.size();
  dp_time_bound_.resize(nets);
  dp_order_.reserve(nets);
  candidates_.reserve(nets);
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
      group_index_ = first_group_ + index;
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

namespace {

// Inputs beyond these would make the enumeration itself unreasonable.
constexpr int64_t kMaxProcs = int64_t{1} << 31;
constexpr int64_t kMaxBatch = int64_t{1} << 31;

// The options' own problems, one per line.
void ValidateOptions(const SearchOptions& options,
                     std::vector<FieldError>& problems) {
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
  if (options.recipes.empty() && !options.every_recipe) {
    problems.push_back({"--recipes", "--recipes must name a recipe",
                        ErrorCode::kInvalidValue});
  }
  if (options.expert_dispatchers.empty()) {
    problems.push_back({"--expert-dispatchers",
                        "--expert-dispatchers must name a dispatcher",
                        ErrorCode::kInvalidValue});
  }
  if (options.expert_overlap.empty()) {
    problems.push_back({"--expert-overlap",
                        "--expert-overlap must allow overlap or not",
                        ErrorCode::kInvalidValue});
  }
  if (options.context_exchange.empty()) {
    problems.push_back({"--context-exchange",
                        "--context-exchange must allow ring, all_gather or "
                        "both",
                        ErrorCode::kInvalidValue});
  }
}

// Options, model and system problems, one per line. The model and system are
// judged by the checker on the simplest mapping (t = p = d = 1) with the
// largest microbatch the search can try, so its messages name the fields.
absl::Status ValidateInputs(const TransformerModel& model,
                            const System& system,
                            const SearchOptions& options) {
  std::vector<FieldError> problems;
  ValidateOptions(options, problems);
  // A recipe named that the system does not run (SystemRunsRecipe).
  for (QuantizationRecipe recipe : options.recipes) {
    if (options.every_recipe || SystemRunsRecipe(system, recipe)) continue;
    problems.push_back(
        {"--recipes",
         absl::StrCat("--recipes: the system does not run ",
                      RecipeName(recipe), " (its matrix engine has no ",
                      DataTypeName(RecipeOf(recipe).hardware_datatype),
                      " rate; --recipes all lists those it runs)"),
         ErrorCode::kInconsistent});
  }
  TrainingMapping probe;
  probe.parallelism.pipeline =
      CalculonPipeline(/*p=*/1, /*v=*/1, model.num_blocks, 0);
  probe.options.datatype = options.datatype;
  probe.options.fused_activation = true;
  probe.batch.global_batch_size = probe.batch.microbatch_size =
      options.max_batch >= 1 && options.max_batch <= kMaxBatch
          ? options.max_batch
          : 1;
  for (Violation& v :
       FindViolations(TrainingSpecOf(model, system, probe))) {
    problems.push_back(std::move(v));
  }
  if (problems.empty()) return absl::OkStatus();
  return InvalidInputError(problems);
}

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
}  // namespace search_internal

namespace search_internal {
namespace {

// The variants searched (ExecutionVariant, mapping.h), in enumeration
// order: the recipe outermost, then the expert dispatcher, then the expert
// overlap. A model without experts has neither of the latter dimensions.
std::vector<ExecutionVariant> ExecutionVariants(const TransformerModel& model,
                                                const System& system,
                                                const SearchOptions& options) {
  std::vector<QuantizationRecipe> recipes = options.recipes;
  if (options.every_recipe) {
    recipes.clear();
    for (const RecipeInfo& info : kRecipeInfos) {
      if (SystemRunsRecipe(system, info.recipe)) {
        recipes.push_back(info.recipe);
      }
    }
  }
  const bool moe = model.moe.has_value();
  const std::vector<ExpertDispatcher> dispatchers =
      moe ? options.expert_dispatchers
          : std::vector<ExpertDispatcher>{ExpertDispatcher::kAllToAll};
  const std::vector<bool> overlaps =
      moe ? options.expert_overlap : std::vector<bool>{false};
  std::vector<ExecutionVariant> out;
  for (QuantizationRecipe recipe : recipes) {
    for (ExpertDispatcher dispatcher : dispatchers) {
      for (bool overlap : overlaps) {
        // The checker's rule (CheckExpertOverlap, as Megatron-LM asserts).
        if (overlap && !DispatcherRunsExpertOverlap(dispatcher)) continue;
        out.push_back({recipe, dispatcher, overlap});
      }
    }
  }
  return out;
}

// Searches `variant`'s space (its groups' indices from `first_group`,
// advanced past them) with `threshold` known, the worst kept rate of a full
// ranking of the variants before (-inf: none). Its result has its best
// `top` mappings and its counts.
absl::StatusOr<SearchResult> RunVariant(const TransformerModel& model,
                                        const System& system,
                                        const SearchOptions& options,
                                        const ExecutionVariant& variant,
                                        double threshold, ProgressFn progress,
                                        CancelFn cancel,
                                        uint64_t& first_group) {
  SharedSearch shared;
  shared.progress = std::move(progress);
  shared.cancel = std::move(cancel);
  shared.threshold.store(threshold, std::memory_order_relaxed);
  std::vector<std::unique_ptr<Searcher>> workers;
  workers.push_back(std::make_unique<Searcher>(model, system, options, &shared,
                                               0, variant, first_group));
  const std::vector<Group> groups = workers.front()->EnumerateGroups();
  const uint64_t groups_before = first_group;
  first_group += groups.size();
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
    workers.push_back(std::make_unique<Searcher>(
        model, system, options, &shared, w, variant, groups_before));
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
  return Searcher::Merge(workers);
}

// `into` and `from`, the results of two variants' spaces, as one: their
// counts and work summed, their rankings merged (rates, then the
// enumeration order of their keys: MergeSearchJson's order) to `top`.
void MergeVariant(SearchResult from, size_t top, SearchResult& into) {
  into.total_executions += from.total_executions;
  into.good_executions += from.good_executions;
  into.bad_executions += from.bad_executions;
  into.work += from.work;
  for (RankedExecution& r : from.top) into.top.push_back(std::move(r));
  std::stable_sort(into.top.begin(), into.top.end(),
                   [](const RankedExecution& a, const RankedExecution& b) {
                     return RanksBefore(a.iteration.sample_rate, a.rank_key,
                                        b.iteration.sample_rate, b.rank_key);
                   });
  if (into.top.size() > top) into.top.resize(top);
}

}  // namespace
}  // namespace search_internal

absl::StatusOr<SearchResult> RunSearch(const TransformerModel& model,
                                       const System& system,
                                       const SearchOptions& options,
                                       ProgressFn progress, CancelFn cancel) {
  BP_RETURN_IF_ERROR(search_internal::ValidateInputs(model, system, options));
  // The workers price on the system as the profile's corrections see it,
  // as the analysis of each ranked mapping does (RunPipeline); the result
  // keeps the system as given.
  const System priced =
      SystemUnderCorrections(system, CorrectionsFor(options.profile));
  const std::vector<ExecutionVariant> variants =
      search_internal::ExecutionVariants(model, system, options);
  const size_t top = static_cast<size_t>(options.top);
  std::optional<SearchResult> result;
  uint64_t first_group = 0;
  for (size_t k = 0; k < variants.size(); ++k) {
    // Each variant a like share of the progress.
    ProgressFn part;
    if (progress) {
      part = [&progress, k, n = variants.size()](double fraction) {
        progress((static_cast<double>(k) + fraction) / static_cast<double>(n));
      };
    }
    const double threshold =
        result.has_value() && result->top.size() == top
            ? result->top.back().iteration.sample_rate
            : -search_internal::kInfinity;
    BP_ASSIGN_OR_RETURN(
        SearchResult searched,
        search_internal::RunVariant(model, priced, options, variants[k],
                                    threshold, std::move(part), cancel,
                                    first_group));
    if (!result.has_value()) {
      result = std::move(searched);
    } else {
      search_internal::MergeVariant(std::move(searched), top, *result);
    }
  }
  if (progress) progress(1.0);
  result->model = model;
  result->system = system;
  result->dimensions.recipe = options.every_recipe ||
                              options.recipes.size() != 1 ||
                              options.recipes.front() !=
                                  QuantizationRecipe::kNone;
  result->dimensions.dispatcher =
      model.moe.has_value() &&
      (options.expert_dispatchers.size() != 1 ||
       options.expert_dispatchers.front() != ExpertDispatcher::kAllToAll);
  result->dimensions.expert_overlap =
      model.moe.has_value() &&
      (options.expert_overlap.size() != 1 || options.expert_overlap.front());
  return *std::move(result);
}

}  // namespace blueprint
