#include "core/search/search_json.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/adapters/calculon.h"
#include "core/base/field_errors.h"
#include "core/base/json.h"
#include "core/base/quote.h"
#include "core/base/units.h"
#include "core/report/calculon_stats.h"
#include "core/search/top_n.h"
#include "core/spec/derive.h"
#include "core/spec/enums.h"
#include "core/spec/spec_json.h"

namespace blueprint {
namespace {

const char* YesNo(bool b) { return b ? "yes" : "no"; }

// "w-o" style summary of the offloaded kinds, "-" when none.
// The text's layout column: even or uneven, or an explicit layout's blocks
// per pipeline rank (a rank's chunks summed), runs of one count as N*R:
// "11,12*6,11".
std::string LayoutColumn(const PipelineParallel& pipeline) {
  if (pipeline.stage_blocks.empty()) {
    return StageLayoutName(pipeline.stage_layout);
  }
  std::vector<int64_t> ranks;
  for (int64_t r = 0; r < pipeline.degree; ++r) {
    ranks.push_back(RankBlocks(pipeline.stage_blocks, pipeline.degree, r));
  }
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t run = 1;
    while (i + run < ranks.size() && ranks[i + run] == ranks[i]) ++run;
    absl::StrAppend(&out, out.empty() ? "" : ",", ranks[i],
                    run > 1 ? absl::StrCat("*", run) : "");
    i += run;
  }
  return out;
}

std::string OffloadSummary(const Offload& o) {
  std::string s;
  s += o.weights ? 'w' : '-';
  s += o.activations ? 'a' : '-';
  s += o.optimizer ? 'o' : '-';
  return s;
}

}  // namespace

nlohmann::json ExecutionJson(const TransformerModel& model,
                             const System& system,
                             const TrainingMapping& mapping,
                             const ExtraDimensions& dimensions) {
  const TypedProgram program = MappingProgram(model, system, mapping);
  nlohmann::json out = ToCalculonExecutionJson(program);
  const DerivedValues& d = program.derived;
  if (dimensions.context) {
    const auto& training =
        std::get<TransformerTrainingMappingSpec>(program.spec);
    out["context_par"] = d.context;
    out["context_par_net"] = d.context_network;
    out["context_par_exchange"] =
        ContextExchangeName(training.parallelism.context.exchange);
  }
  if (dimensions.expert) {
    out["expert_par"] = d.expert;
    out["expert_tensor_par"] = d.expert_tensor;
    out["expert_par_net"] = d.expert_network;
  }
  if (dimensions.sharding) {
    out["data_par_sharding"] = ShardingStageName(d.sharding);
  }
  if (dimensions.schedule) {
    out["pipeline_schedule"] =
        PipelineScheduleName(program.pipeline().schedule);
  }
  if (dimensions.stage_layout) {
    const std::vector<int64_t>& blocks = program.pipeline().stage_blocks;
    out["pipeline_stage_layout"] =
        blocks.empty() ? StageLayoutName(program.pipeline().stage_layout)
                       : "explicit";
    if (!blocks.empty()) out["pipeline_stage_blocks"] = blocks;
  }
  const ExecutionOptions& options = mapping.options;
  if (dimensions.recipe) {
    out["recipe"] = RecipeName(options.recipe);
    out["gemm_datatype"] =
        DataTypeName(options.gemm_datatype.value_or(options.datatype));
    out["weight_datatype"] = DataTypeName(WeightDatatype(options));
  }
  const ExpertParallel& expert = mapping.parallelism.expert;
  if (dimensions.dispatcher) {
    out["expert_dispatcher"] = ExpertDispatcherName(expert.dispatcher);
  }
  if (dimensions.expert_overlap) {
    out["expert_overlap"] = expert.overlap;
    out["expert_delay_wgrad"] = expert.delay_wgrad;
  }
  return out;
}

nlohmann::json SearchResultJsonValue(const SearchResult& result,
                                     bool with_specs) {
  nlohmann::json top = nlohmann::json::array();
  for (const RankedExecution& r : result.top) {
    nlohmann::json entry = nlohmann::json::object();
    entry["execution"] =
        ExecutionJson(result.model, result.system, r.mapping,
                      result.dimensions);
    if (with_specs) {
      entry["spec"] = SpecToJsonValue(
          TrainingSpecOf(result.model, result.system, r.mapping));
    }
    entry["stats"] = CalculonStatsJson(r.block, r.iteration, r.memory);
    if (result.partitions > 1) {
      entry["rank_key"] = {r.rank_key.first, r.rank_key.second};
    }
    top.push_back(std::move(entry));
  }
  nlohmann::json out = nlohmann::json::object();
  out["total_executions"] = result.total_executions;
  out["good_executions"] = result.good_executions;
  out["bad_executions"] = result.bad_executions;
  out["top"] = std::move(top);
  if (result.partitions > 1) {
    out["partition"] = {{"index", result.partition},
                        {"count", result.partitions},
                        {"top", result.top_wanted}};
  }
  return out;
}

namespace {

// A merged part's ranked mapping: its sample rate and key, and where it is.
struct PartEntry {
  double rate;
  std::pair<uint64_t, uint64_t> key;
  size_t part, index;
};

// The non-negative integer at `value`, or a problem naming `field`.
std::optional<int64_t> CountAt(const nlohmann::json& value,
                               const std::string& field,
                               std::vector<FieldError>* problems) {
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    return value.get<int64_t>();
  }
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() <=
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return static_cast<int64_t>(value.get<uint64_t>());
  }
  problems->push_back({field,
                       absl::StrCat(field, ": expected a non-negative integer, "
                                           "got ",
                                    QuoteExcerpt(value.dump())),
                       ErrorCode::kWrongType});
  return std::nullopt;
}

}  // namespace

namespace {

// What MergeSearchJson gathers from the parts, in order, and the problems
// it found.
struct PartsMerge {
  explicit PartsMerge(size_t parts) : seen_index(parts, 0) {}
  std::vector<FieldError> problems;
  std::vector<PartEntry> entries;
  int64_t counts[3] = {0, 0, 0};  // kCountKeys
  int64_t expected_count = -1, expected_top = -1;  // the first part's
  std::vector<int> seen_index;  // how often each part index was given
};

constexpr const char* kCountKeys[3] = {"total_executions", "good_executions",
                                       "bad_executions"};

// Whether `v` is a partitioned search's output at all.
bool IsPartOutput(const nlohmann::json& v) {
  return v.is_object() && v.contains("partition") &&
         v["partition"].is_object() && v.contains("top") &&
         v["top"].is_array();
}

// Checks the "partition" object of part `at`: its index, count and top,
// the same count and top as the first part's, each index once. False when
// the part cannot be read further.
bool ReadPartition(const nlohmann::json& v, const std::string& at,
                   PartsMerge& merge) {
  const nlohmann::json& partition = v["partition"];
  int64_t fields[3] = {-1, -1, -1};  // index, count, top
  static const char* const kPartitionKeys[3] = {"index", "count", "top"};
  for (int k = 0; k < 3; ++k) {
    if (!partition.contains(kPartitionKeys[k])) continue;
    const std::optional<int64_t> n =
        CountAt(partition[kPartitionKeys[k]],
                absl::StrCat(at, ".partition.", kPartitionKeys[k]),
                &merge.problems);
    if (n.has_value()) fields[k] = *n;
  }
  const int64_t index = fields[0], count = fields[1], top = fields[2];
  if (index < 0 || count < 0 || top < 0) {
    merge.problems.push_back(
        {at + ".partition",
         absl::StrCat(at, ".partition: expected integers index, count and "
                          "top"),
         ErrorCode::kInvalidValue});
    return false;
  }
  if (merge.expected_count < 0) merge.expected_count = count;
  if (merge.expected_top < 0) merge.expected_top = top;
  if (count != merge.expected_count || top != merge.expected_top) {
    merge.problems.push_back(
        {at + ".partition",
         absl::StrCat(at, ".partition: count ", count, " and top ", top,
                      " differ from the first part's (", merge.expected_count,
                      " and ", merge.expected_top,
                      "): the parts are of different searches"),
         ErrorCode::kInconsistent});
  } else if (index >= static_cast<int64_t>(merge.seen_index.size())) {
    merge.problems.push_back(
        {at + ".partition.index",
         absl::StrCat(at, ".partition.index (", index,
                      ") is not below the number of parts given (",
                      merge.seen_index.size(), ")"),
         ErrorCode::kOutOfRange});
  } else if (++merge.seen_index[static_cast<size_t>(index)] == 2) {
    merge.problems.push_back({at + ".partition.index",
                              absl::StrCat(at, ": part ", index,
                                           " is given more than once"),
                              ErrorCode::kInconsistent});
  }
  return true;
}

// Adds part `at`'s total, good and bad counts to the sums.
void AddCounts(const nlohmann::json& v, const std::string& at,
               PartsMerge& merge) {
  for (int k = 0; k < 3; ++k) {
    const std::string field = absl::StrCat(at, ".", kCountKeys[k]);
    const std::optional<int64_t> n =
        v.contains(kCountKeys[k])
            ? CountAt(v[kCountKeys[k]], field, &merge.problems)
            : std::nullopt;
    if (!n) {
      if (!v.contains(kCountKeys[k])) {
        merge.problems.push_back({field, absl::StrCat(field, " is missing"),
                                  ErrorCode::kMissingField});
      }
    } else if (merge.counts[k] > std::numeric_limits<int64_t>::max() - *n) {
      merge.problems.push_back(
          {field, absl::StrCat(field, ": the sum overflows"),
           ErrorCode::kOutOfRange});
    } else {
      merge.counts[k] += *n;
    }
  }
}

// Lists part `p`'s ranked mappings with their rate and rank key.
void AddRanked(const nlohmann::json& v, size_t p, const std::string& at,
               PartsMerge& merge) {
  const nlohmann::json& top_entries = v["top"];
  for (size_t i = 0; i < top_entries.size(); ++i) {
    const nlohmann::json& e = top_entries[i];
    const std::string field = absl::StrCat(at, ".top[", i, "]");
    const bool has_rate = e.is_object() && e.contains("stats") &&
                          e["stats"].is_object() &&
                          e["stats"].contains("sample_rate") &&
                          e["stats"]["sample_rate"].is_number();
    const bool has_key = e.is_object() && e.contains("rank_key") &&
                         e["rank_key"].is_array() &&
                         e["rank_key"].size() == 2 &&
                         e["rank_key"][0].is_number_unsigned() &&
                         e["rank_key"][1].is_number_unsigned();
    if (!has_rate || !has_key) {
      merge.problems.push_back(
          {field,
           absl::StrCat(field, ": expected stats.sample_rate and rank_key "
                               "[group, offer] (non-negative integers)"),
           ErrorCode::kInvalidValue});
      continue;
    }
    merge.entries.push_back({e["stats"]["sample_rate"].get<double>(),
                             {e["rank_key"][0].get<uint64_t>(),
                              e["rank_key"][1].get<uint64_t>()},
                             p,
                             i});
  }
}

// The merged output: the summed counts and the best `expected_top` of the
// parts' ranked mappings in TopN's order, without their rank keys.
std::string MergedOutput(std::vector<nlohmann::json>& values,
                         PartsMerge& merge) {
  std::stable_sort(merge.entries.begin(), merge.entries.end(),
                   [](const PartEntry& a, const PartEntry& b) {
                     return RanksBefore(a.rate, a.key, b.rate, b.key);
                   });
  nlohmann::json top = nlohmann::json::array();
  const size_t kept =
      std::min(merge.entries.size(), static_cast<size_t>(merge.expected_top));
  for (size_t i = 0; i < kept; ++i) {
    const PartEntry& ranked = merge.entries[i];
    nlohmann::json entry = std::move(values[ranked.part]["top"][ranked.index]);
    entry.erase("rank_key");
    top.push_back(std::move(entry));
  }
  nlohmann::json out = nlohmann::json::object();
  out["total_executions"] = merge.counts[0];
  out["good_executions"] = merge.counts[1];
  out["bad_executions"] = merge.counts[2];
  out["top"] = std::move(top);
  return CanonicalJson(out) + "\n";
}

}  // namespace

absl::StatusOr<std::string> MergeSearchJson(
    const std::vector<std::string>& parts) {
  if (parts.empty()) {
    return InvalidInputError({{"parts", "mergeSearch: no part to merge",
                               ErrorCode::kMissingField}});
  }
  PartsMerge merge(parts.size());
  std::vector<nlohmann::json> values;
  for (size_t p = 0; p < parts.size(); ++p) {
    const std::string at = absl::StrCat("parts[", p, "]");
    absl::StatusOr<nlohmann::json> value = ParseJson(parts[p]);
    if (!value.ok()) {
      merge.problems.push_back(
          {at, absl::StrCat(at, ": ", value.status().message()),
           ErrorCode::kSyntax});
      values.emplace_back();
      continue;
    }
    values.push_back(std::move(*value));
    const nlohmann::json& v = values.back();
    if (parts.size() == 1 && v.is_object() && !v.contains("partition") &&
        v.contains("top") && v["top"].is_array() &&
        v.contains("total_executions")) {
      // A search in one part (--partition 0/1, or none) is the whole one.
      return CanonicalJson(v) + "\n";
    }
    if (!IsPartOutput(v)) {
      merge.problems.push_back(
          {at,
           absl::StrCat(at, ": not the JSON output of a search with "
                            "--partition I/N (no \"partition\" object or "
                            "\"top\" array)"),
           ErrorCode::kInvalidValue});
      continue;
    }
    if (!ReadPartition(v, at, merge)) continue;
    AddCounts(v, at, merge);
    AddRanked(v, p, at, merge);
  }
  if (merge.expected_count >= 0 &&
      merge.expected_count != static_cast<int64_t>(parts.size())) {
    merge.problems.push_back(
        {"parts",
         absl::StrCat("mergeSearch: the parts are of a search in ",
                      merge.expected_count, " parts, ", parts.size(),
                      " given"),
         ErrorCode::kInconsistent});
  }
  if (!merge.problems.empty()) return InvalidInputError(merge.problems);
  return MergedOutput(values, merge);
}

std::string SearchResultJson(const SearchResult& result, bool with_specs) {
  return CanonicalJson(SearchResultJsonValue(result, with_specs)) + "\n";
}

std::string SearchResultText(const SearchResult& result) {
  std::string out = absl::StrFormat(
      "%d executions: %d good, %d bad\n", result.total_executions,
      result.good_executions, result.bad_executions);
  if (result.top.empty()) return out + "no valid mapping\n";
  const ExtraDimensions& extra = result.dimensions;
  // The tiers of t/p/d, then of cp and of the expert all-to-all.
  const int nets_width = 5 + (extra.context ? 2 : 0) + (extra.expert ? 2 : 0);
  // Calculon's columns, with cp (and its exchange) after v, ep and etp
  // after them and the ZeRO stage as the shard column when in play.
  absl::StrAppendFormat(&out, "%4s %12s %10s %5s %4s %6s %4s", "rank",
                        "samples/s", "step_s", "t", "p", "d", "v");
  if (extra.context) absl::StrAppendFormat(&out, " %5s %-10s", "cp", "cp_x");
  if (extra.expert) absl::StrAppendFormat(&out, " %4s %4s", "ep", "etp");
  if (extra.schedule) absl::StrAppendFormat(&out, " %-16s", "schedule");
  if (extra.stage_layout) absl::StrAppendFormat(&out, " %-6s", "layout");
  if (extra.recipe) absl::StrAppendFormat(&out, " %-14s", "recipe");
  if (extra.dispatcher) absl::StrAppendFormat(&out, " %-10s", "dispatcher");
  if (extra.expert_overlap) absl::StrAppendFormat(&out, " %-6s", "ep_ovl");
  absl::StrAppendFormat(
      &out, " %6s %4s %-9s %-9s %-4s %-6s %-6s %-*s %-7s %-*s %9s %9s %6s\n",
      "batch", "mbs", "recompute", "tp_comm", "redo", "tp_ovl", "dp_ovl",
      extra.sharding ? 10 : 6, "shard", "offload", nets_width, "nets",
      "hbm_GiB", "mem2_GiB", "eff");
  for (size_t i = 0; i < result.top.size(); ++i) {
    const RankedExecution& r = result.top[i];
    const TrainingMapping& m = r.mapping;
    const TransformerTrainingParallelism& par = m.parallelism;
    const DerivedValues d = DeriveTrainingValues(result.model, par, m.batch,
                                                 m.options);
    absl::StrAppendFormat(&out, "%4d %12.4f %10.4f %5d %4d %6d %4d", i + 1,
                          r.iteration.sample_rate, r.iteration.total_time,
                          d.tensor, d.pipeline, d.data, d.virtual_stages);
    if (extra.context) {
      absl::StrAppendFormat(
          &out, " %5d %-10s", d.context,
          d.context > 1 ? ContextExchangeName(par.context.exchange) : "-");
    }
    if (extra.expert) {
      absl::StrAppendFormat(&out, " %4d %4d", d.expert, d.expert_tensor);
    }
    if (extra.schedule) {
      absl::StrAppendFormat(&out, " %-16s",
                            PipelineScheduleName(par.pipeline.schedule));
    }
    if (extra.stage_layout) {
      absl::StrAppendFormat(&out, " %-6s", LayoutColumn(par.pipeline));
    }
    if (extra.recipe) {
      absl::StrAppendFormat(&out, " %-14s", RecipeName(m.options.recipe));
    }
    if (extra.dispatcher) {
      absl::StrAppendFormat(&out, " %-10s",
                            ExpertDispatcherName(par.expert.dispatcher));
    }
    if (extra.expert_overlap) {
      absl::StrAppendFormat(&out, " %-6s", YesNo(par.expert.overlap));
    }
    std::string nets = absl::StrCat(d.tensor_network, "/", d.pipeline_network,
                                    "/", d.data_network);
    if (extra.context) absl::StrAppend(&nets, "/", d.context_network);
    if (extra.expert) absl::StrAppend(&nets, "/", d.expert_network);
    absl::StrAppendFormat(
        &out,
        " %6d %4d %-9s %-9s %-4s %-6s %-6s %-*s %-7s %-*s %9.2f %9.2f "
        "%6.4f\n",
        m.batch.global_batch_size, m.batch.microbatch_size,
        RecomputeName(par.recompute),
        TensorCommunicationName(par.tensor.communication),
        YesNo(AllGatherRedo(par.tensor.communication)),
        TensorOverlapName(par.tensor.overlap), YesNo(par.data.overlap),
        extra.sharding ? 10 : 6,
        extra.sharding ? ShardingStageName(d.sharding)
                       : YesNo(d.sharding != ShardingStage::kNone),
        OffloadSummary(m.options.offload), nets_width, nets,
        // The most loaded stage's need: Calculon's proc_mem_tier1_cap_req
        // exactly for a model without a vocabulary.
        r.memory.max_stage_mem_tier1_req / kGiB,
        r.memory.proc_mem_tier2_cap_req / kGiB, r.iteration.total_efficiency);
  }
  return out;
}

std::string FormatSearchResult(const SearchResult& result,
                               const SearchOptions& options) {
  return options.json ? SearchResultJson(result, options.specs)
                      : SearchResultText(result);
}

}  // namespace blueprint
