#include "core/search/search_json.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/adapters/calculon.h"
#include "core/base/field_errors.h"
#include "core/base/json.h"
#include "core/base/parse_int.h"
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
std::string OffloadSummary(const Offload& o) {
  std::string s;
  s += o.weights ? 'w' : '-';
  s += o.activations ? 'a' : '-';
  s += o.optimizer ? 'o' : '-';
  return s;
}

// Parses a positive integer flag value (at most `max`) into `out`.
void ParsePositive(const std::string& flag, const std::string& value,
                   int64_t max, std::vector<FieldError>* problems,
                   int64_t* out) {
  const std::optional<int64_t> parsed = ParsePositiveInteger(value);
  if (!parsed || *parsed > max) {
    problems->push_back(
        {flag,
         absl::StrCat(flag, ": expected a positive integer of at most ", max,
                      " (", kPositiveIntegerSpelling, "), got ",
                      QuoteExcerpt(value)),
         parsed ? ErrorCode::kOutOfRange : PositiveIntegerErrorCode(value)});
    return;
  }
  *out = *parsed;
}

// Parses a flag naming one of the enum E's choices (`parse`: its parser)
// into `out`.
template <typename E>
void ParseChoice(const std::string& flag, const std::string& value,
                 std::optional<E> (*parse)(const std::string&),
                 std::vector<FieldError>* problems, E* out) {
  const std::optional<E> parsed = parse(value);
  if (parsed.has_value()) {
    *out = *parsed;
    return;
  }
  problems->push_back(
      {flag,
       absl::StrCat(flag, ": expected ",
                    absl::StrJoin(EnumChoices<E>(), " or "), ", got ",
                    QuoteExcerpt(value)),
       ErrorCode::kUnknownChoice});
}

// Parses a dimension flag's "calculon" (Calculon's values only: false) or
// "all" (true) into `out`.
void ParseCalculonOrAll(const std::string& flag, const std::string& value,
                        std::vector<FieldError>* problems, bool* out) {
  if (value == "calculon" || value == "all") {
    *out = value == "all";
    return;
  }
  problems->push_back(
      {flag,
       absl::StrCat(flag, ": expected calculon or all, got ",
                    QuoteExcerpt(value)),
       ErrorCode::kUnknownChoice});
}

}  // namespace

absl::StatusOr<SearchOptions> ParseSearchFlags(
    const std::vector<std::string>& args) {
  static const char* const kValueFlags[] = {
      "--procs", "--max-batch", "--datatype", "--top", "--fused-activation",
      "--precision", "--profile", "--max-context", "--context-exchange",
      "--sharding", "--schedules", "--stage-layouts", "--threads",
      "--partition", "--app", "--system"};
  static const char* const kSwitches[] = {"--mbs-break", "--no-tp-overlap",
                                          "--no-dp-overlap", "--json",
                                          "--specs", "--exhaustive"};
  SearchOptions options;
  std::vector<FieldError> problems;
  std::set<std::string> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0) {
      problems.push_back(
          {"", absl::StrCat("unexpected argument ", QuoteExcerpt(arg)),
           ErrorCode::kSyntax});
      continue;
    }
    std::string flag = arg;
    std::optional<std::string> value;
    const size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    bool takes_value = false, is_switch = false;
    for (const char* f : kValueFlags) takes_value = takes_value || flag == f;
    for (const char* f : kSwitches) is_switch = is_switch || flag == f;
    if (!takes_value && !is_switch) {
      // No field: the flag as written may hold any byte.
      problems.push_back(
          {"",
           absl::StrCat("unknown flag ", QuoteExcerpt(flag), " (expected ",
                        absl::StrJoin(kValueFlags, ", "), ", ",
                        absl::StrJoin(kSwitches, ", "), ")"),
           ErrorCode::kUnknownField});
      continue;
    }
    if (!seen.insert(flag).second) {
      problems.push_back({flag, absl::StrCat(flag, " is given more than once"),
                          ErrorCode::kSyntax});
    }
    if (is_switch) {
      if (value.has_value()) {
        problems.push_back(
            {flag, absl::StrCat(flag, " takes no value"), ErrorCode::kSyntax});
      } else if (flag == "--mbs-break") {
        options.mbs_break = true;
      } else if (flag == "--no-tp-overlap") {
        options.tp_overlap = false;
      } else if (flag == "--no-dp-overlap") {
        options.dp_overlap = false;
      } else if (flag == "--json") {
        options.json = true;
      } else if (flag == "--specs") {
        options.specs = true;
      } else if (flag == "--exhaustive") {
        options.exhaustive = true;
      }
      continue;
    }
    if (!value.has_value()) {
      if (i + 1 >= args.size()) {
        problems.push_back(
            {flag, absl::StrCat(flag, " needs a value"), ErrorCode::kSyntax});
        continue;
      }
      value = args[++i];
    }
    if (flag == "--procs") {
      ParsePositive(flag, *value, int64_t{1} << 31, &problems, &options.procs);
    } else if (flag == "--max-batch") {
      ParsePositive(flag, *value, int64_t{1} << 31, &problems,
                    &options.max_batch);
    } else if (flag == "--top") {
      int64_t top = options.top;
      ParsePositive(flag, *value, int64_t{1} << 20, &problems, &top);
      options.top = static_cast<int>(top);
    } else if (flag == "--datatype") {
      const std::optional<DataType> datatype = ParseDataType(*value);
      if (datatype.has_value()) {
        options.datatype = *datatype;
      } else {
        problems.push_back(
            {flag,
             absl::StrCat(
                 "--datatype: expected float8, float16, bfloat16 or float32, "
                 "got ",
                 QuoteExcerpt(*value)),
             ErrorCode::kUnknownChoice});
      }
    } else if (flag == "--precision") {
      ParseChoice(flag, *value, &ParsePrecision, &problems,
                  &options.precision);
    } else if (flag == "--profile") {
      ParseChoice(flag, *value, &ParseModelProfile, &problems,
                  &options.profile);
    } else if (flag == "--threads") {
      ParsePositive(flag, *value, SearchOptions::kMaxThreads, &problems,
                    &options.threads);
    } else if (flag == "--partition") {
      // I/N: I may be 0.
      const std::vector<std::string> parts = absl::StrSplit(*value, '/');
      std::optional<int64_t> index, count;
      if (parts.size() == 2) {
        index = parts[0] == "0" ? std::optional<int64_t>(0)
                                : ParsePositiveInteger(parts[0]);
        count = ParsePositiveInteger(parts[1]);
      }
      if (!index || !count || *count > SearchOptions::kMaxPartitions ||
          *index >= *count) {
        problems.push_back(
            {flag,
             absl::StrCat("--partition: expected I/N, part I of N with 0 <= "
                          "I < N <= ",
                          SearchOptions::kMaxPartitions, ", got ",
                          QuoteExcerpt(*value)),
             ErrorCode::kInvalidValue});
      } else {
        options.partition = *index;
        options.partitions = *count;
      }
    } else if (flag == "--max-context") {
      ParsePositive(flag, *value, int64_t{1} << 31, &problems,
                    &options.max_context);
    } else if (flag == "--context-exchange") {
      const std::optional<ContextExchange> exchange =
          ParseContextExchange(*value);
      if (exchange.has_value()) {
        options.context_exchange = {*exchange};
      } else if (*value == "all") {
        options.context_exchange = {ContextExchange::kRing,
                                    ContextExchange::kAllGather};
      } else {
        problems.push_back(
            {flag,
             absl::StrCat("--context-exchange: expected ",
                          absl::StrJoin(EnumChoices<ContextExchange>(), ", "),
                          " or all, got ", QuoteExcerpt(*value)),
             ErrorCode::kUnknownChoice});
      }
    } else if (flag == "--sharding") {
      ParseCalculonOrAll(flag, *value, &problems, &options.every_sharding);
    } else if (flag == "--schedules") {
      ParseCalculonOrAll(flag, *value, &problems, &options.every_schedule);
    } else if (flag == "--stage-layouts") {
      ParseCalculonOrAll(flag, *value, &problems, &options.uneven_stages);
    } else if (flag == "--fused-activation") {
      if (*value == "true") {
        options.fused_activation = {true};
      } else if (*value == "false") {
        options.fused_activation = {false};
      } else if (*value == "all") {
        options.fused_activation = {true, false};
      } else {
        problems.push_back(
            {flag,
             absl::StrCat(
                 "--fused-activation: expected true, false or all, got ",
                 QuoteExcerpt(*value)),
             ErrorCode::kUnknownChoice});
      }
    }
    // --app and --system: read by the caller.
  }
  for (const char* required : {"--procs", "--max-batch", "--datatype"}) {
    if (seen.count(required) == 0) {
      problems.push_back({required, absl::StrCat(required, " is required"),
                          ErrorCode::kMissingField});
    }
  }
  if (options.specs && !options.json) {
    problems.push_back({"--specs",
                        "--specs needs --json: the specs are JSON objects of "
                        "its ranked mappings",
                        ErrorCode::kInconsistent});
  }
  if (seen.count("--partition") != 0 && !options.json) {
    problems.push_back({"--partition",
                        "--partition needs --json: the parts merge from their "
                        "JSON outputs (mergeSearch)",
                        ErrorCode::kInconsistent});
  }
  if (!problems.empty()) return InvalidInputError(problems);
  return options;
}

nlohmann::json CalculonExecutionJson(const TransformerModel& model,
                                     const System& system,
                                     const CalculonExecution& e) {
  return ToCalculonExecutionJson(ExecutionProgram(model, system, e));
}

nlohmann::json ExecutionJson(const TransformerModel& model,
                             const System& system,
                             const CalculonExecution& execution,
                             const ExecutionExtras& extras,
                             const ExtraDimensions& dimensions) {
  const TypedProgram program =
      ExecutionProgram(model, system, execution, extras);
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
    out["pipeline_stage_layout"] =
        StageLayoutName(program.pipeline().stage_layout);
  }
  return out;
}

nlohmann::json SearchResultJsonValue(const SearchResult& result,
                                     bool with_specs) {
  nlohmann::json top = nlohmann::json::array();
  for (const RankedExecution& r : result.top) {
    nlohmann::json entry = nlohmann::json::object();
    entry["execution"] =
        ExecutionJson(result.model, result.system, r.execution,
                      r.execution_extras, result.dimensions);
    if (with_specs) {
      entry["spec"] = SpecToJsonValue(ExecutionSpec(
          result.model, result.system, r.execution, r.execution_extras));
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

absl::StatusOr<std::string> MergeSearchJson(
    const std::vector<std::string>& parts) {
  std::vector<FieldError> problems;
  if (parts.empty()) {
    return InvalidInputError({{"parts", "mergeSearch: no part to merge",
                               ErrorCode::kMissingField}});
  }
  std::vector<nlohmann::json> values;
  std::vector<PartEntry> entries;
  int64_t counts[3] = {0, 0, 0};
  static const char* const kCountKeys[3] = {
      "total_executions", "good_executions", "bad_executions"};
  int64_t expected_count = -1, expected_top = -1;  // the first part's
  std::vector<int> seen_index(parts.size(), 0);
  for (size_t p = 0; p < parts.size(); ++p) {
    const std::string at = absl::StrCat("parts[", p, "]");
    absl::StatusOr<nlohmann::json> value = ParseJson(parts[p]);
    if (!value.ok()) {
      problems.push_back({at, absl::StrCat(at, ": ", value.status().message()),
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
    if (!v.is_object() || !v.contains("partition") ||
        !v["partition"].is_object() || !v.contains("top") ||
        !v["top"].is_array()) {
      problems.push_back(
          {at,
           absl::StrCat(at, ": not the JSON output of a search with "
                            "--partition I/N (no \"partition\" object or "
                            "\"top\" array)"),
           ErrorCode::kInvalidValue});
      continue;
    }
    const nlohmann::json& partition = v["partition"];
    int64_t fields[3] = {-1, -1, -1};  // index, count, top
    static const char* const kPartitionKeys[3] = {"index", "count", "top"};
    for (int k = 0; k < 3; ++k) {
      if (!partition.contains(kPartitionKeys[k])) continue;
      const std::optional<int64_t> n =
          CountAt(partition[kPartitionKeys[k]],
                  absl::StrCat(at, ".partition.", kPartitionKeys[k]),
                  &problems);
      if (n.has_value()) fields[k] = *n;
    }
    const int64_t index = fields[0], count = fields[1], top = fields[2];
    if (index < 0 || count < 0 || top < 0) {
      problems.push_back(
          {at + ".partition",
           absl::StrCat(at, ".partition: expected integers index, count and "
                            "top"),
           ErrorCode::kInvalidValue});
      continue;
    }
    if (expected_count < 0) expected_count = count;
    if (expected_top < 0) expected_top = top;
    if (count != expected_count || top != expected_top) {
      problems.push_back(
          {at + ".partition",
           absl::StrCat(at, ".partition: count ", count, " and top ", top,
                        " differ from the first part's (", expected_count,
                        " and ", expected_top,
                        "): the parts are of different searches"),
           ErrorCode::kInconsistent});
    } else if (index >= static_cast<int64_t>(parts.size())) {
      problems.push_back(
          {at + ".partition.index",
           absl::StrCat(at, ".partition.index (", index,
                        ") is not below the number of parts given (",
                        parts.size(), ")"),
           ErrorCode::kOutOfRange});
    } else if (++seen_index[static_cast<size_t>(index)] == 2) {
      problems.push_back({at + ".partition.index",
                          absl::StrCat(at, ": part ", index,
                                       " is given more than once"),
                          ErrorCode::kInconsistent});
    }
    for (int k = 0; k < 3; ++k) {
      const std::string field = absl::StrCat(at, ".", kCountKeys[k]);
      const std::optional<int64_t> n =
          v.contains(kCountKeys[k])
              ? CountAt(v[kCountKeys[k]], field, &problems)
              : std::nullopt;
      if (!n) {
        if (!v.contains(kCountKeys[k])) {
          problems.push_back({field, absl::StrCat(field, " is missing"),
                              ErrorCode::kMissingField});
        }
      } else if (counts[k] > std::numeric_limits<int64_t>::max() - *n) {
        problems.push_back({field, absl::StrCat(field, ": the sum overflows"),
                            ErrorCode::kOutOfRange});
      } else {
        counts[k] += *n;
      }
    }
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
        problems.push_back(
            {field,
             absl::StrCat(field, ": expected stats.sample_rate and rank_key "
                                 "[group, offer] (non-negative integers)"),
             ErrorCode::kInvalidValue});
        continue;
      }
      entries.push_back({e["stats"]["sample_rate"].get<double>(),
                         {e["rank_key"][0].get<uint64_t>(),
                          e["rank_key"][1].get<uint64_t>()},
                         p,
                         i});
    }
  }
  if (expected_count >= 0 &&
      expected_count != static_cast<int64_t>(parts.size())) {
    problems.push_back(
        {"parts",
         absl::StrCat("mergeSearch: the parts are of a search in ",
                      expected_count, " parts, ", parts.size(), " given"),
         ErrorCode::kInconsistent});
  }
  if (!problems.empty()) return InvalidInputError(problems);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const PartEntry& a, const PartEntry& b) {
                     return RanksBefore(a.rate, a.key, b.rate, b.key);
                   });
  nlohmann::json top = nlohmann::json::array();
  const size_t kept =
      std::min(entries.size(), static_cast<size_t>(expected_top));
  for (size_t i = 0; i < kept; ++i) {
    nlohmann::json entry =
        std::move(values[entries[i].part]["top"][entries[i].index]);
    entry.erase("rank_key");
    top.push_back(std::move(entry));
  }
  nlohmann::json out = nlohmann::json::object();
  out["total_executions"] = counts[0];
  out["good_executions"] = counts[1];
  out["bad_executions"] = counts[2];
  out["top"] = std::move(top);
  return CanonicalJson(out) + "\n";
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
  absl::StrAppendFormat(
      &out, " %6s %4s %-9s %-9s %-4s %-6s %-6s %-*s %-7s %-*s %9s %9s %6s\n",
      "batch", "mbs", "recompute", "tp_comm", "redo", "tp_ovl", "dp_ovl",
      extra.sharding ? 10 : 6, "shard", "offload", nets_width, "nets",
      "hbm_GiB", "mem2_GiB", "eff");
  for (size_t i = 0; i < result.top.size(); ++i) {
    const RankedExecution& r = result.top[i];
    const CalculonExecution& e = r.execution;
    const ExecutionExtras& x = r.execution_extras;
    absl::StrAppendFormat(&out, "%4d %12.4f %10.4f %5d %4d %6d %4d", i + 1,
                          r.iteration.sample_rate, r.iteration.total_time,
                          e.tensor, e.pipeline, e.data, e.interleaving);
    if (extra.context) {
      absl::StrAppendFormat(
          &out, " %5d %-10s", x.context,
          x.context > 1 ? ContextExchangeName(x.context_exchange) : "-");
    }
    if (extra.expert) {
      absl::StrAppendFormat(&out, " %4d %4d", x.expert,
                            ExpertTensorDegree(ExpertParallel{x.expert,
                                                              x.expert_tensor,
                                                              x.expert_net},
                                               e.tensor));
    }
    if (extra.schedule || extra.stage_layout) {
      const MappingSpec spec = ExecutionSpec(result.model, result.system, e, x);
      const PipelineParallel& pipeline =
          std::get<TransformerTrainingMappingSpec>(spec).parallelism.pipeline;
      if (extra.schedule) {
        absl::StrAppendFormat(&out, " %-16s",
                              PipelineScheduleName(pipeline.schedule));
      }
      if (extra.stage_layout) {
        absl::StrAppendFormat(&out, " %-6s",
                              StageLayoutName(pipeline.stage_layout));
      }
    }
    std::string nets =
        absl::StrCat(e.tensor_net, "/", e.pipeline_net, "/", e.data_net);
    if (extra.context) absl::StrAppend(&nets, "/", x.context_net);
    if (extra.expert) absl::StrAppend(&nets, "/", x.expert_net);
    const ShardingStage stage =
        x.sharding != ShardingStage::kNone ? x.sharding
        : e.optimizer_sharding             ? ShardingStage::kOptimizer
                                           : ShardingStage::kNone;
    absl::StrAppendFormat(
        &out,
        " %6d %4d %-9s %-9s %-4s %-6s %-6s %-*s %-7s %-*s %9.2f %9.2f "
        "%6.4f\n",
        e.batch_size, e.microbatch_size, RecomputeName(e.recompute),
        TensorCommunicationName(e.comm), YesNo(AllGatherRedo(e.comm)),
        TensorOverlapName(e.tp_overlap), YesNo(e.dp_overlap),
        extra.sharding ? 10 : 6,
        extra.sharding ? ShardingStageName(stage)
                       : YesNo(e.optimizer_sharding),
        OffloadSummary(e.offload), nets_width, nets,
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
