// Validation against measured training runs: the corpus of
// tests/validation/corpus.json (each row a published run with its citation,
// its mapping as Megatron-LM flags, the system preset it ran on and what was
// measured), predicted by the model and compared row by row.
//
// A row is predicted as `blueprint import megatron --system PRESET -- ARGS`
// would build it, with options.profile set to the requested profile; the
// prediction is converted to the row's metric:
//   iteration_s            the step time (iteration figure total_time) T
//   tokens_per_sec_per_gpu global_batch * seq / (T * gpus)
//   tflops_per_gpu         F / (T * gpus) / 1e12, F the FLOPs per iteration
//                          as the source counts them (FlopDefinition)
//   mfu                    model FLOPs / (T * gpus * the system's dense
//                          BF16 peak), as the sources quote MFU
// error = (predicted - measured) / measured. Rows the corpus marks with a
// `skip` reason, and rows the model rejects (the import's or the checker's
// errors), are reported as skipped with the reason; none is dropped silently.
//
// Example:
//   absl::StatusOr<std::vector<ValidationRow>> rows = ParseCorpus(text);
//   ValidationReport report = Validate(*rows, ModelProfile::kRefined);
//   std::string text = ValidationText(report);
#ifndef BLUEPRINTING_CORE_VALIDATION_VALIDATION_H_
#define BLUEPRINTING_CORE_VALIDATION_VALIDATION_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/spec/corrections.h"
#include "core/spec/spec.h"
#include "nlohmann/json.hpp"

namespace blueprint {

// The quantity a source reports.
enum class MeasuredMetric { kIterationSeconds, kTokensPerSecPerGpu,
                            kTflopsPerGpu, kMfu };

// How a source counts the FLOPs behind its TFLOP/s (measured/README.md).
enum class FlopDefinition {
  // Megatron-LM's model FLOPs (core/spec/accounting.h: causal scores at
  // half, logits included, recompute excluded): NeMo's and Megatron-Bridge's
  // "model TFLOP/sec/GPU".
  kMegatronModel,
  // Narayanan et al. 2021 Eq. 3, 96 B s l h^2 (1 + s/6h + V/16lh) with full
  // recompute (72 without): counts the recompute forward pass and full s^2
  // scores; BLOOM's "hardware TFLOPs" use the same formula.
  kNarayananEq3,
  // Hardware FLOPs of unstated definition: no conversion (rows skipped).
  kHardware,
};

// One row of the corpus, as the validation reads it (the file carries more:
// citation, trust, notes, assumptions; see tests/validation/README.md).
struct ValidationRow {
  std::string id;          // "r0443"
  std::string source_key;  // "S7"
  // The key of the source summary the row counts in: its source_key, or the
  // corpus's "summary_source" (make_corpus.py: "S1/blackwell" for a source's
  // rows on a newer GPU generation, so that the gate's figures of the
  // source's earlier rows stay comparable as new systems' rows are added).
  std::string summary_source;
  std::string group;       // "bf16_dense", "fp8", "moe"
  std::string model;       // models.csv name
  std::string system;      // a system preset's name; "" when none
  int64_t gpus = 0;
  MeasuredMetric metric = MeasuredMetric::kTokensPerSecPerGpu;
  double measured = 0;
  FlopDefinition flops = FlopDefinition::kMegatronModel;
  std::vector<std::string> megatron_args;
  // The framework splits blocks % p != 0 over the stages (the spec's
  // stage_layout uneven, which no Megatron-LM flag sets).
  bool uneven_stages = false;
  // The run's attention kernel was not a fused (flash) one: the refined
  // profile's kFlashAttention and kCausalAttention do not apply to it
  // (attention_kernel "unfused"; "flash" or absent: they do).
  bool unfused_attention = false;
  // The source does not print the row's mapping (its trust is "low": a
  // launcher's defaults or a partly stated configuration): the row's
  // ranking is reported beside the goals, never in them.
  bool mapping_assumed = false;
  std::string skip;  // "" when the row is usable
};

// ParseCorpus: the rows of a corpus document
//   {"format": "blueprinting.validation_corpus/1", "rows": [...]}.
// Every malformed row is an error (kInvalidArgument, one line per problem,
// naming the row's path, e.g. "rows[3].measured_value: expected a number").
absl::StatusOr<std::vector<ValidationRow>> ParseCorpus(const std::string& text);

// One row's outcome.
struct RowResult {
  const ValidationRow* row = nullptr;
  bool predicted_ok = false;  // false: skipped, `reason` says why
  std::string reason;
  double predicted = 0;       // in the row's metric
  double error = 0;           // (predicted - measured) / measured
  double predicted_time = 0;  // the step time T, seconds
  bool over_capacity = false; // the model puts the mapping over memory
  // Tokens per second per GPU, global_batch * seq / (T * gpus), for the
  // predicted T and the measured one (the row's metric converted: every
  // metric but the step time is proportional to 1 / T, so the measured T is
  // T * predicted / measured).
  double predicted_throughput = 0;
  double measured_throughput = 0;
};

// Mean and max |error| over the predicted rows of one source or group.
struct ErrorSummary {
  int64_t rows = 0;
  double mean_abs_error = 0;
  double max_abs_error = 0;
  std::string max_row;  // the id with the max |error|
};

// Predicted rows that describe one run (the same model, system, GPUs,
// metric, FLOP definition, Megatron-LM arguments, stage layout and
// attention kernel) measured more than once, e.g. in two software releases.
// A model predicts one number for them all, and no number comes closer to
// every measurement than floor_abs_error_sum = min over P of
// sum |P / measured - 1| (reached at one of the measured values: the sum is
// convex and piecewise linear in P).
struct RepeatedRun {
  std::vector<std::string> ids;  // corpus order
  std::string group;
  double measured_min = 0;
  double measured_max = 0;
  double floor_abs_error_sum = 0;
};

// The least mean |error| any model can reach over a group's (or every)
// predicted row: the repeated runs' floors over the rows.
struct ErrorFloor {
  int64_t rows = 0;
  double floor_mean_abs_error = 0;
};

// How well the model orders the mappings one source measured of one model on
// one system (#45: a planner ranks mappings by the model's numbers): Kendall's
// tau-b between the measured and the predicted throughput (tokens per second
// per GPU) over the source's distinct mappings, each repeated run counted
// once at its mean measured throughput. Only sets of at least
// kMinRankedMappings mappings are ranked.
inline constexpr int64_t kMinRankedMappings = 3;
struct Ranking {
  std::string source_key;
  std::string model;
  std::string system;
  std::vector<std::string> ids;  // corpus order
  int64_t mappings = 0;
  double tau = 0;
  bool mapping_assumed = false;  // any of its rows' mapping is assumed
};

// Over the rankings whose mappings are printed (or over those assumed).
struct RankingSummary {
  int64_t rankings = 0;
  double mean_tau = 0;
  double min_tau = 0;
  std::string min_ranking;  // "SOURCE/MODEL/SYSTEM" at min_tau
  int64_t at_goal = 0;      // rankings with tau >= kRankingGoal
};
inline constexpr double kRankingGoal = 0.8;  // #45's goal

// Kendall's tau-b of two equally long series: (concordant - discordant) /
// sqrt((n0 - ties_x) (n0 - ties_y)) over the n0 = n (n - 1) / 2 pairs; 0
// when either series is all ties (no pair is ordered) or n < 2.
double KendallTauB(const std::vector<double>& x, const std::vector<double>& y);

struct ValidationReport {
  ModelProfile profile = ModelProfile::kCalculon;
  std::vector<Correction> without;
  std::vector<RowResult> rows;  // in corpus order
  std::map<std::string, ErrorSummary> by_source;  // summary_source ->
  std::map<std::string, ErrorSummary> by_group;   // group ->
  ErrorSummary overall;
  int64_t skipped = 0;
  // In the order of their first rows.
  std::vector<RepeatedRun> repeated_runs;
  std::map<std::string, ErrorFloor> floor_by_group;  // group ->
  ErrorFloor floor_overall;
  // In the order of their first rows.
  std::vector<Ranking> rankings;
  RankingSummary rankings_printed;  // the goal's rankings
  RankingSummary rankings_assumed;  // beside the goal
};

// Validate: predicts every row of `rows` (which must outlive the report)
// under `profile`, with the corrections of `without` turned off (to measure
// what each one does; core/spec/corrections.h).
ValidationReport Validate(const std::vector<ValidationRow>& rows,
                          ModelProfile profile,
                          const std::vector<Correction>& without = {});

// The report as text (first line "blueprinting.validation/2 profile=NAME"),
// one line per row, per source, per group, overall, then per repeated run
// ("repeated IDS GROUP measured=MIN..MAX floor_abs_error_sum=X"), the
// floors ("floor group G rows=N floor_mean_abs_error=X (x%)", "floor
// overall ..."), the rankings ("ranking SOURCE MODEL SYSTEM mappings=N
// tau=X[ mapping_assumed] ids=..."), and their summaries ("rankings
// printed|assumed rankings=N mean_tau=X min_tau=Y (at KEY) at_goal=K");
// doubles by FormatDouble, errors also as percentages with two decimals.
std::string ValidationText(const ValidationReport& report);

// The same, structured (canonical JSON).
nlohmann::json ValidationJson(const ValidationReport& report);

//----- The regression gate ---------------------------------------------------

// The recorded mean |error| of every profile, group and source
// (tests/validation/baseline.json):
//   {"format": "blueprinting.validation_baseline/3",
//    "calculon": {"groups": {"bf16_dense": {"rows": 41,
//                                           "mean_abs_error": 0.15...}, ...},
//                 "sources": {"S14": {"rows": 8, ...}, ...},
//                 "rankings": {"rankings": 25, "mean_tau": 0.58...}},
//    "refined": {...}}
// rewritten only by `bazel run //tools:update_validation_baseline`.
// BaselineText: that document for the reports of both profiles.
std::string BaselineText(const ValidationReport& calculon,
                         const ValidationReport& refined);

// BaselineRegressions: one line per group or source of `report` (under its
// profile) that is worse than `baseline_json` records: a mean |error| above
// the recorded one, fewer predicted rows (a row the model no longer
// handles), or a recorded group or source gone; and for the rankings with
// printed mappings, fewer ranked sets or a lower mean tau. Empty: no regression. A malformed baseline is an
// error.
absl::StatusOr<std::vector<std::string>> BaselineRegressions(
    const std::string& baseline_json, const ValidationReport& report);

const char* MeasuredMetricName(MeasuredMetric metric);
const char* FlopDefinitionName(FlopDefinition flops);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_VALIDATION_VALIDATION_H_
