#include "core/analysis/lineage.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <iterator>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/format.h"
#include "core/schedule/schedule_ir.h"
#include "core/spec/accounting.h"

namespace blueprint {
namespace {

// One figure's sources (its formula is the figure table's).
struct FigureSources {
  const char* figure;
  const char* sources[kMaxFormulaSources];
};

// The rows of the tables below, one per figure: every figure's sources.
#include "core/analysis/lineage_sources.inc"

// The figure lists of the figure table and their formulas, for the
// compile-time check below.
#define BP_NAME(name, ...) #name,
constexpr const char* kIterationNames[] = {BP_ITERATION_FIGURES(BP_NAME)
                                               BP_SCHEDULE_TERMS(BP_NAME)};
constexpr const char* kMemoryNames[] = {BP_MEMORY_FIGURES(BP_NAME)
                                            BP_MEMORY_TERMS(BP_NAME)};
#undef BP_NAME
#define BP_FORMULA(name, unit, label, meaning, formula) formula,
constexpr const char* kIterationFormulaTexts[] = {
    BP_ITERATION_FIGURES(BP_FORMULA) BP_SCHEDULE_TERMS(BP_FORMULA)};
constexpr const char* kMemoryFormulaTexts[] = {BP_MEMORY_FIGURES(BP_FORMULA)
                                                   BP_MEMORY_TERMS(BP_FORMULA)};
#undef BP_FORMULA
#define BP_NAME(name, formula) #name,
constexpr const char* kLayoutNames[] = {BP_LAYOUT_FORMULAS(BP_NAME)};
constexpr const char* kLayoutMemoryNames[] = {
    BP_LAYOUT_MEMORY_FORMULAS(BP_NAME)};
#undef BP_NAME
#define BP_FORMULA(name, formula) formula,
constexpr const char* kLayoutFormulaTexts[] = {
    BP_LAYOUT_FORMULAS(BP_FORMULA)};
constexpr const char* kLayoutMemoryFormulaTexts[] = {
    BP_LAYOUT_MEMORY_FORMULAS(BP_FORMULA)};
#undef BP_FORMULA

constexpr bool SameText(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

// True when row i is the lineage of figure i, for every figure, and every
// figure has a formula and every row at least one source.
template <size_t N, size_t M>
constexpr bool RowsMatch(const FigureSources (&rows)[N],
                         const char* const (&names)[M],
                         const char* const (&formulas)[M]) {
  if (N != M) return false;
  for (size_t i = 0; i < N; ++i) {
    if (!SameText(rows[i].figure, names[i])) return false;
    if (formulas[i][0] == '\0' || rows[i].sources[0] == nullptr) {
      return false;
    }
  }
  return true;
}

static_assert(
    RowsMatch(kIterationRows, kIterationNames, kIterationFormulaTexts),
    "kIterationRows must hold one row per name of "
    "BP_ITERATION_FIGURES then BP_SCHEDULE_TERMS (figure_table.h), in "
    "their order, each with sources (and a formula in the "
    "table)");
static_assert(
    RowsMatch(kLayoutRows, kLayoutNames, kLayoutFormulaTexts),
    "kLayoutRows must hold one row per name of BP_LAYOUT_FORMULAS "
    "(figure_table.h), in its order, each with sources");
static_assert(
    RowsMatch(kLayoutMemoryRows, kLayoutMemoryNames,
              kLayoutMemoryFormulaTexts),
    "kLayoutMemoryRows must hold one row per name of "
    "BP_LAYOUT_MEMORY_FORMULAS (figure_table.h), in its order, each with "
    "sources");
static_assert(
    RowsMatch(kMemoryRows, kMemoryNames, kMemoryFormulaTexts),
    "kMemoryRows must hold one row per name of BP_MEMORY_FIGURES "
    "then BP_MEMORY_TERMS (figure_table.h), in their order, each with a "
    "formula in the table and sources");

// Row i of `rows` with formula i: the lineage rows the API serves.
template <size_t N, size_t M>
constexpr std::array<FigureFormula, N> WithFormulas(
    const FigureSources (&rows)[N], const char* const (&formulas)[M]) {
  std::array<FigureFormula, N> out{};
  for (size_t i = 0; i < N && i < M; ++i) {
    out[i].figure = rows[i].figure;
    out[i].formula = formulas[i];
    for (size_t s = 0; s < kMaxFormulaSources; ++s) {
      out[i].sources[s] = rows[i].sources[s];
    }
  }
  return out;
}
constexpr std::array<FigureFormula, std::size(kIterationRows)>
    kIterationFormulas = WithFormulas(kIterationRows, kIterationFormulaTexts);
constexpr std::array<FigureFormula, std::size(kMemoryRows)> kMemoryFormulas =
    WithFormulas(kMemoryRows, kMemoryFormulaTexts);
constexpr std::array<FigureFormula, std::size(kLayoutRows)> kLayoutFormulas =
    WithFormulas(kLayoutRows, kLayoutFormulaTexts);
constexpr std::array<FigureFormula, std::size(kLayoutMemoryRows)>
    kLayoutMemoryFormulas =
        WithFormulas(kLayoutMemoryRows, kLayoutMemoryFormulaTexts);

// The rows of `table` with those of `layout` in place of theirs.
std::vector<FigureFormula> WithLayoutRows(
    absl::Span<const FigureFormula> table,
    absl::Span<const FigureFormula> layout) {
  std::vector<FigureFormula> out(table.begin(), table.end());
  for (FigureFormula& row : out) {
    for (const FigureFormula& replacement : layout) {
      if (SameText(row.figure, replacement.figure)) row = replacement;
    }
  }
  return out;
}

bool IsNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

bool IsIterationFigure(absl::string_view name) {
  for (const char* n : kIterationNames) {
    if (name == n) return true;
  }
  return false;
}
bool IsMemoryFigure(absl::string_view name) {
  for (const char* n : kMemoryNames) {
    if (name == n) return true;
  }
  return false;
}
bool IsBlockFigure(absl::string_view name) {
  bool found = false;
  ForEachBlockFigure(BlockFigures(), [&](const char* n, double) {
    found = found || name == n;
  });
  return found;
}

std::optional<double> StepValue(const StepShape& step, absl::string_view name) {
  for (const StepTerm& term : StepTerms(step)) {
    if (term.name == name) return term.value;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> SourcesOf(const FigureFormula& row) {
  std::vector<std::string> out;
  for (const char* source : row.sources) {
    if (source == nullptr) break;
    out.push_back(source);
  }
  return out;
}

absl::Span<const FigureFormula> IterationFormulas() {
  return kIterationFormulas;
}
absl::Span<const FigureFormula> IterationFormulas(bool explicit_layout) {
  static const auto* with_layout = new std::vector<FigureFormula>(
      WithLayoutRows(kIterationFormulas, kLayoutFormulas));
  if (!explicit_layout) return kIterationFormulas;
  return *with_layout;
}
absl::Span<const FigureFormula> LayoutFormulas(FormulaScope scope) {
  if (scope == FormulaScope::kIteration) return kLayoutFormulas;
  return kLayoutMemoryFormulas;
}
absl::Span<const FigureFormula> MemoryFormulas() { return kMemoryFormulas; }
absl::Span<const FigureFormula> MemoryFormulas(bool explicit_layout) {
  static const auto* with_layout = new std::vector<FigureFormula>(
      WithLayoutRows(kMemoryFormulas, kLayoutMemoryFormulas));
  if (!explicit_layout) return kMemoryFormulas;
  return *with_layout;
}

const FigureFormula* FindFormula(FormulaScope scope, absl::string_view figure,
                                 bool explicit_layout) {
  for (const FigureFormula& row : scope == FormulaScope::kIteration
                                      ? IterationFormulas(explicit_layout)
                                      : MemoryFormulas(explicit_layout)) {
    if (figure == row.figure) return &row;
  }
  return nullptr;
}

std::vector<StepTerm> StepTerms(const StepShape& s) {
  auto flag = [](bool b) { return b ? 1.0 : 0.0; };
  auto count = [](int64_t n) { return static_cast<double>(n); };
  const ParameterCounts parameters =
      CountParameters(s.accounted, s.padded_vocabulary);
  const double model_flops = ModelFlopsPerIteration(
      s.accounted, s.padded_vocabulary, s.global_batch, s.training);
  return {
      {"p", count(s.p), {"spec:parallelism.pipeline.degree"}},
      {"v", count(s.v), {"derived:virtual_stages"}},
      {"m", count(s.m), {"derived:microbatches"}},
      {"d", count(s.d), {"spec:parallelism.data.degree"}},
      {"blocks_per_stage",
       count(s.blocks_per_stage),
       {"derived:blocks_per_stage"}},
      {"blocks_per_chunk",
       count(s.blocks_per_chunk),
       {"derived:blocks_per_chunk"}},
      {"rank_blocks",
       count(s.stages_per_rank) * count(s.blocks_per_stage),
       {"derived:blocks_per_stage", "derived:stages_per_rank"}},
      {"twin_stages",
       flag(HasTwinStages(s)),
       {"spec:parallelism.pipeline.schedule",
        "spec:parallelism.pipeline.degree"}},
      {"holds_both_ends",
       flag(HoldsBothEnds(s)),
       {"spec:parallelism.pipeline.schedule",
        "spec:parallelism.pipeline.degree"}},
      {"bubble_reduction_blocks",
       count(s.bubble_reduction_blocks),
       {"derived:bubble_reduction_blocks"}},
      {"training", flag(s.training), {"derived:training"}},
      {"simulated_schedule",
       flag(s.simulated_schedule.has_value()),
       {"spec:parallelism.pipeline.schedule"}},
      {"overlapped_forward_backward",
       flag(s.simulated_schedule.has_value() &&
            OverlapsForwardBackward(*s.simulated_schedule)),
       {"spec:parallelism.pipeline.schedule"}},
      {"scheduled_in_flight",
       flag(s.scheduled_in_flight),
       {"spec:options.profile"}},
      {"grad_reduce_bytes",
       s.grad_reduce_bytes,
       {"spec:options.grad_reduce_datatype", "spec:options.profile",
        "spec:options.precision", "spec:options.datatype"}},
      {"global_batch_size",
       count(s.global_batch),
       {"spec:batch.global_batch_size"}},
      {"shard_parameters",
       flag(s.shard_parameters),
       {"spec:parallelism.data.sharding"}},
      {"weight_bytes_per_element",
       count(s.weight_bytes_per_element),
       {"spec:options.weight_datatype", "spec:options.datatype"}},
      {"optimizer_sharding",
       flag(s.optimizer_sharding),
       {"spec:parallelism.data.sharding"}},
      {"data_overlap", flag(s.data_overlap), {"spec:parallelism.data.overlap"}},
      {"full_recompute",
       flag(s.recompute == RecomputePolicy::kFull),
       {"spec:parallelism.recompute"}},
      {"offload_weights", flag(s.offload.weights), {"spec:options.offload"}},
      {"offload_activations",
       flag(s.offload.activations),
       {"spec:options.offload"}},
      {"offload_optimizer",
       flag(s.offload.optimizer),
       {"spec:options.offload"}},
      {"matrix_peak_flops",
       s.matrix_peak_flops,
       {"system:matrix.$dtype.tflops"}},
      {"t", count(s.t), {"spec:parallelism.tensor.degree"}},
      {"first_rank_blocks",
       count(HasExplicitLayout(s) ? s.first_rank_blocks : s.blocks_per_stage),
       {"spec:parallelism.pipeline.stage_blocks",
        "spec:parallelism.pipeline.degree"}},
      {"last_rank_blocks",
       count(HasExplicitLayout(s) ? s.last_rank_blocks : s.blocks_per_stage),
       {"spec:parallelism.pipeline.stage_blocks",
        "spec:parallelism.pipeline.degree"}},
      {"embedding_copy",
       flag(s.embedding_copy),
       {"spec:model.vocabulary.tied", "spec:parallelism.pipeline.degree",
        "derived:padded_vocabulary", "spec:parallelism.pipeline.schedule"}},
      {"embedding_sync",
       flag(s.training && s.embedding_copy),
       {"spec:model.vocabulary.tied", "spec:parallelism.pipeline.degree",
        "derived:padded_vocabulary", "derived:training",
        "spec:parallelism.pipeline.schedule"}},
      {"megatron_parameters",
       parameters.total,
       {"spec:model", "derived:padded_vocabulary"}},
      {"megatron_active_parameters",
       parameters.active,
       {"spec:model", "derived:padded_vocabulary"}},
      {"megatron_model_flops",
       model_flops,
       {"spec:model", "derived:padded_vocabulary",
        "spec:batch.global_batch_size", "derived:training"}},
      {"pipeline_message_bytes",
       s.pipeline_message_bytes,
       {"spec:batch.microbatch_size", "spec:model.seq_size",
        "spec:model.hidden", "spec:parallelism.tensor.communication",
        "spec:parallelism.tensor.degree", "spec:options.datatype"}},
  };
}

const std::vector<FormulaFunction>& FormulaFunctions() {
  static const auto* functions = new std::vector<FormulaFunction>{
      {"max", "the larger argument", {}},
      {"min", "the smaller argument", {}},
      {"simulated_bubble",
       "the concrete scheduler's bubble (core/schedule): the schedule's "
       "commands built for p, v and m and simulated with each chunk's "
       "forward, backward input-gradient (chunk_bw_time less W) and "
       "weight-gradient (W) times, and its F&B time (chunk_fb_time) where "
       "the schedule overlaps a forward with a backward (dualpipe, "
       "dualpipe_v); the makespan less the busiest stage's compute",
       {"spec:parallelism.pipeline.schedule"}},
      {"simulated_fewest_fb_pairs",
       "the fewest overlapped F&B commands on one stage of the simulated "
       "schedule (dualpipe, dualpipe_v), the busiest stage's: each saves F + "
       "B - chunk_fb_time of its compute",
       {"spec:parallelism.pipeline.schedule"}},
      {"simulated_in_flight",
       "the most microbatches one stage of the simulated schedule keeps "
       "live (an F's activations until its W or whole backward ends), at "
       "equal F, B and W times",
       {"spec:parallelism.pipeline.schedule"}},
      {"order_in_flight",
       "the most microbatches the schedule's command order keeps live on "
       "one stage whatever the durations (core/schedule memo.h "
       "OrderPeakLiveMicrobatches): 1 for one stage, min(m, p) for 1f1b, "
       "(2(p - 1) + (v - 1) N + 1) / v capped at m for interleaved (N its "
       "group size)",
       {"spec:parallelism.pipeline.schedule"}},
      {"rate", "rate(bytes, window): bytes / window, 0 when window <= 0", {}},
      {"rank_state_bytes",
       "rank_state_bytes(n): the weights, weight gradients and optimizer "
       "state of a rank that holds n blocks (weight_space + "
       "weight_grad_space + optimizer_space at blocks_per_stage = n; 0 for "
       "n = 0)",
       {"block:block_weight_space", "block:block_weight_grad_space",
        "block:block_weight_grad_space_no_sharding",
        "block:block_optimizer_space", "derived:training"}},
      {"rank_tier1_req",
       "rank_tier1_req(n): the tier-1 need of a rank that holds n blocks "
       "(proc_mem_tier1_cap_req at blocks_per_stage = n, the busiest rank's "
       "in-flight microbatches; 0 for n = 0)",
       {"block:block_weight_space", "block:block_weight_grad_space",
        "block:block_weight_grad_space_no_sharding",
        "block:block_optimizer_space", "block:block_act_working_space",
        "block:block_act_storage_space", "block:block_act_checkpoint_size",
        "block:block_act_grad_space", "spec:parallelism.recompute",
        "spec:options.offload", "derived:microbatches",
        "derived:training"}},
      {"layout_gap_time",
       "layout_gap_time(n): what n blocks a stage lacks against the busiest "
       "take off its microbatch, at bubble_reduction_time's block times: "
       "blocks_per_chunk > 1 ? n * (baseblock_fw_time + edgeblock_fw_time + "
       "baseblock_bw_time + edgeblock_bw_time) / 2 : n * (edgeblock_fw_time "
       "+ edgeblock_bw_time) (figures.cc LayoutGapTime)",
       {"derived:blocks_per_chunk", "iteration:baseblock_fw_time",
        "iteration:edgeblock_fw_time", "iteration:baseblock_bw_time",
        "iteration:edgeblock_bw_time"}},
      {"p2p_time",
       "a point-to-point send of the bytes on the pipeline network",
       {"system:networks[$pp]"}},
      {"dp_time",
       "one block's DP collective: reduce-scatter + all-gather with a sharded "
       "optimizer, else all-reduce",
       {"system:networks[$dp]"}},
      {"pp_all_reduce_time",
       "an all-reduce of the bytes between the first and the last stage on "
       "the pipeline network",
       {"system:networks[$pp]"}},
      {"mem2_time",
       "moving the bytes to or from memory tier 2",
       {"system:mem2"}},
      {"overlapped_chunks_exposed",
       "DP time of the first v - 1 chunks that their backward passes do not "
       "hide (figures.cc OverlappedChunks)",
       {"system:networks[$dp]"}},
      {"overlapped_chunks_bw_req",
       "the DP bandwidth that would hide the first v - 1 chunks' traffic "
       "(figures.cc OverlappedChunks)",
       {"system:networks[$dp]"}},
      {"last_chunk_exposed",
       "DP time of the last chunk that its backward pass does not hide "
       "(figures.cc LastChunk)",
       {"system:networks[$dp]"}},
      {"last_chunk_bw_req",
       "the DP bandwidth that would hide the last chunk's traffic (figures.cc "
       "LastChunk)",
       {"system:networks[$dp]"}},
  };
  return *functions;
}

std::vector<FormulaName> NamesOf(absl::string_view formula) {
  std::vector<FormulaName> out;
  size_t i = 0;
  while (i < formula.size()) {
    const char c = formula[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      // A number literal, exponent included ("1e9").
      while (i < formula.size() && IsNameChar(formula[i])) ++i;
      continue;
    }
    if (!IsNameStart(c)) {
      ++i;
      continue;
    }
    FormulaName name;
    name.begin = i;
    while (i < formula.size() && IsNameChar(formula[i])) ++i;
    name.end = i;
    name.name = std::string(formula.substr(name.begin, name.end - name.begin));
    size_t next = i;
    while (next < formula.size() && formula[next] == ' ') ++next;
    name.function = next < formula.size() && formula[next] == '(';
    out.push_back(std::move(name));
  }
  return out;
}

std::optional<ResolvedName> ResolveName(FormulaScope scope,
                                        absl::string_view name) {
  const size_t dot = name.find('.');
  if (dot != absl::string_view::npos) {
    const absl::string_view qualifier = name.substr(0, dot);
    const absl::string_view figure = name.substr(dot + 1);
    if ((qualifier == "block" && IsBlockFigure(figure)) ||
        (qualifier == "first_stage" && IsBlockFigure(figure)) ||
        (qualifier == "last_stage" && IsBlockFigure(figure)) ||
        (qualifier == "iteration" && IsIterationFigure(figure)) ||
        (qualifier == "memory" && IsMemoryFigure(figure))) {
      return ResolvedName{absl::StrCat(qualifier, ":", figure), {}};
    }
    return std::nullopt;
  }
  if (scope == FormulaScope::kIteration && IsIterationFigure(name)) {
    return ResolvedName{absl::StrCat("iteration:", name), {}};
  }
  if (scope == FormulaScope::kMemory && IsMemoryFigure(name)) {
    return ResolvedName{absl::StrCat("memory:", name), {}};
  }
  for (StepTerm& term : StepTerms(StepShape())) {
    if (term.name == name) {
      return ResolvedName{absl::StrCat("step:", name), std::move(term.sources)};
    }
  }
  if (IsBlockFigure(name))
    return ResolvedName{absl::StrCat("block:", name), {}};
  return std::nullopt;
}

std::optional<double> ValueOf(FormulaScope scope, absl::string_view name,
                              const FormulaValues& values) {
  const std::optional<ResolvedName> resolved = ResolveName(scope, name);
  if (!resolved) return std::nullopt;
  const std::string& node = resolved->node;
  const size_t colon = node.find(':');
  const absl::string_view kind = absl::string_view(node).substr(0, colon);
  const absl::string_view figure = absl::string_view(node).substr(colon + 1);
  std::optional<double> value;
  auto find = [&](const char* n, double x) {
    if (figure == n) value = x;
  };
  if (kind == "iteration" && values.iteration != nullptr) {
    ForEachIterationFigure(*values.iteration, find);
    ForEachScheduleTerm(*values.iteration, find);
  } else if (kind == "memory" && values.memory != nullptr) {
    ForEachMemoryFigure(*values.memory, find);
    ForEachMemoryTerm(*values.memory, find);
  } else if (kind == "block" && values.block != nullptr) {
    ForEachBlockFigure(*values.block, find);
  } else if (kind == "first_stage" && values.first_stage != nullptr) {
    ForEachBlockFigure(*values.first_stage, find);
  } else if (kind == "last_stage" && values.last_stage != nullptr) {
    ForEachBlockFigure(*values.last_stage, find);
  } else if (kind == "step" && values.step != nullptr) {
    value = StepValue(*values.step, figure);
  }
  return value;
}

std::string SubstituteValues(FormulaScope scope, absl::string_view formula,
                             const FormulaValues& values) {
  std::string out;
  size_t done = 0;
  for (const FormulaName& name : NamesOf(formula)) {
    if (name.function) continue;
    const std::optional<double> value = ValueOf(scope, name.name, values);
    if (!value) continue;
    absl::StrAppend(&out, formula.substr(done, name.begin - done),
                    FormatDouble(*value));
    done = name.end;
  }
  absl::StrAppend(&out, formula.substr(done));
  return out;
}

std::vector<std::string> FormulaProblems(FormulaScope scope,
                                         const FigureFormula& row) {
  std::vector<std::string> problems;
  const std::vector<std::string> sources = SourcesOf(row);
  auto has = [&](const std::string& source) {
    return std::find(sources.begin(), sources.end(), source) != sources.end();
  };
  if (row.formula == nullptr || row.formula[0] == '\0') {
    problems.push_back(absl::StrCat(row.figure, ": no formula"));
  }
  if (sources.empty()) {
    problems.push_back(absl::StrCat(row.figure, ": no sources"));
  }
  if (row.formula == nullptr) return problems;
  for (const FormulaName& name : NamesOf(row.formula)) {
    std::vector<std::string> needed;
    if (name.function) {
      const FormulaFunction* function = nullptr;
      for (const FormulaFunction& f : FormulaFunctions()) {
        if (name.name == f.name) function = &f;
      }
      if (function == nullptr) {
        problems.push_back(
            absl::StrCat(row.figure, ": unknown function ", name.name));
        continue;
      }
      for (const char* s : function->sources) needed.push_back(s);
    } else {
      const std::optional<ResolvedName> resolved =
          ResolveName(scope, name.name);
      if (!resolved) {
        problems.push_back(
            absl::StrCat(row.figure, ": unknown name ", name.name));
        continue;
      }
      if (resolved->node ==
          absl::StrCat(
              scope == FormulaScope::kIteration ? "iteration:" : "memory:",
              row.figure)) {
        problems.push_back(
            absl::StrCat(row.figure, ": the formula uses the figure itself"));
      }
      if (resolved->node.rfind("step:", 0) == 0) {
        needed = resolved->step_sources;
      } else {
        needed.push_back(resolved->node);
      }
    }
    for (const std::string& source : needed) {
      if (!has(source)) {
        problems.push_back(absl::StrCat(row.figure, ": ", name.name,
                                        " needs the source ", source));
      }
    }
  }
  return problems;
}

}  // namespace blueprint
