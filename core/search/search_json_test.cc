#include "core/search/search_json.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/base/field_errors.h"
#include "core/base/json.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(ParseSearchFlagsTest, RequiredAndDefaults) {
  absl::StatusOr<SearchOptions> o = ParseSearchFlags(
      {"--procs", "512", "--max-batch", "256", "--datatype", "bfloat16"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->procs, 512);
  EXPECT_EQ(o->max_batch, 256);
  EXPECT_EQ(o->datatype, DataType::kBFloat16);
  EXPECT_EQ(o->profile, ModelProfile::kCalculon);
  EXPECT_EQ(o->top, 10);
  EXPECT_FALSE(o->mbs_break);
  EXPECT_TRUE(o->tp_overlap);
  EXPECT_TRUE(o->dp_overlap);
  EXPECT_EQ(o->fused_activation, std::vector<bool>{true});
  EXPECT_FALSE(o->json);
  EXPECT_FALSE(o->exhaustive);
}

TEST(ParseSearchFlagsTest, EveryFlag) {
  absl::StatusOr<SearchOptions> o = ParseSearchFlags(
      {"--app", "a.json", "--system=s.json", "--procs=8", "--max-batch", "16",
       "--datatype", "float16", "--top", "3", "--mbs-break", "--no-tp-overlap",
       "--no-dp-overlap", "--fused-activation", "all", "--json",
       "--exhaustive", "--precision", "megatron_mixed", "--profile",
       "refined"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->precision, PrecisionAccounting::kMegatronMixed);
  EXPECT_EQ(o->profile, ModelProfile::kRefined);
  EXPECT_EQ(o->procs, 8);
  EXPECT_EQ(o->max_batch, 16);
  EXPECT_EQ(o->top, 3);
  EXPECT_TRUE(o->mbs_break);
  EXPECT_FALSE(o->tp_overlap);
  EXPECT_FALSE(o->dp_overlap);
  EXPECT_EQ(o->fused_activation, (std::vector<bool>{true, false}));
  EXPECT_TRUE(o->json);
  EXPECT_TRUE(o->exhaustive);

  o = ParseSearchFlags({"--procs", "8", "--max-batch", "16", "--datatype",
                        "float16", "--fused-activation=false"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->fused_activation, std::vector<bool>{false});
}

TEST(ParseSearchFlagsTest, ReportsEveryProblem) {
  absl::StatusOr<SearchOptions> o = ParseSearchFlags(
      {"--procs", "x", "--top", "0", "--datatype", "float64", "--bogus",
       "stray", "--json=yes", "--fused-activation", "maybe", "--top", "2",
       "--precision", "fp8", "--profile", "best", "--max-batch"});
  ASSERT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string m(o.status().message());
  for (const char* expected :
       {"--procs: expected a positive integer", "got \"x\"",
        "--top: expected a positive integer", "--datatype: expected float8",
        "unknown flag \"--bogus\"", "unexpected argument \"stray\"",
        "--json takes no value", "--fused-activation: expected true",
        "--top is given more than once", "--max-batch needs a value",
        "--precision: expected calculon or megatron_mixed, got \"fp8\"",
        "--profile: expected calculon or refined, got \"best\""}) {
    EXPECT_TRUE(absl::StrContains(m, expected)) << expected << "\n" << m;
  }
  o = ParseSearchFlags({});
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(std::string(o.status().message()),
            "--procs is required\n--max-batch is required\n"
            "--datatype is required");
}

TEST(ParseSearchFlagsTest, ProblemsCarryTheirFlagAndCode) {
  absl::StatusOr<SearchOptions> o =
      ParseSearchFlags({"--procs", "x", "--top", "0", "--datatype", "float64",
                        "--bogus", "stray", "--json=yes", "--fused-activation",
                        "maybe", "--top", "2", "--max-batch"});
  EXPECT_THAT(
      o, FieldsAndCodesAre(ElementsAre(
             Pair("--procs", ErrorCode::kWrongType),
             Pair("--top", ErrorCode::kOutOfRange),
             Pair("--datatype", ErrorCode::kUnknownChoice),
             Pair("", ErrorCode::kUnknownField), Pair("", ErrorCode::kSyntax),
             Pair("--json", ErrorCode::kSyntax),
             Pair("--fused-activation", ErrorCode::kUnknownChoice),
             Pair("--top", ErrorCode::kSyntax),
             Pair("--max-batch", ErrorCode::kSyntax))));
  EXPECT_THAT(
      ParseSearchFlags({"--procs", "4294967296", "--max-batch", "1",
                        "--datatype", "float16"}),
      FieldsAndCodesAre(ElementsAre(Pair("--procs", ErrorCode::kOutOfRange))));
  EXPECT_THAT(ParseSearchFlags({}),
              FieldsAndCodesAre(
                  ElementsAre(Pair("--procs", ErrorCode::kMissingField),
                              Pair("--max-batch", ErrorCode::kMissingField),
                              Pair("--datatype", ErrorCode::kMissingField))));
}

TEST(ParseSearchFlagsTest, IntegersAreStrict) {
  const std::vector<std::string> base = {"--max-batch", "16", "--datatype",
                                         "float16"};
  for (const std::string value :
       {" 64", "+64", "064", "64 ", "0", "-1", "6e1", "0x40", "2147483649",
        "99999999999999999999", "\xEF\xBB\xBF" "64"}) {
    std::vector<std::string> args = base;
    args.push_back("--procs");
    args.push_back(value);
    const absl::StatusOr<SearchOptions> o = ParseSearchFlags(args);
    ASSERT_FALSE(o.ok()) << value;
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(
        o.status().message(),
        "--procs: expected a positive integer of at most 2147483648 (digits "
        "only, no sign, spaces or leading zeros), got \""))
        << o.status();
  }
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--procs", "2147483648", "--top", "1048576"});
  const absl::StatusOr<SearchOptions> o = ParseSearchFlags(args);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->procs, 2147483648);
  EXPECT_EQ(o->top, 1048576);
}

TEST(ParseSearchFlagsTest, ValuesAreQuotedShortAndEscaped) {
  const absl::StatusOr<SearchOptions> o = ParseSearchFlags(
      {"--procs", "\xEF\xBB\xBF" "8\n", "--max-batch",
       std::string(100, '9'), "--datatype", "fp\xE2\x82", "--top",
       std::string(40, '1') + "\xF0\x9F\x98\x80"});
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(std::string(o.status().message()),
            "--procs: expected a positive integer of at most 2147483648 "
            "(digits only, no sign, spaces or leading zeros), got "
            "\"\\xEF\\xBB\\xBF8\\x0A\"\n"
            "--max-batch: expected a positive integer of at most 2147483648 "
            "(digits only, no sign, spaces or leading zeros), got \"" +
                std::string(32, '9') +
                "\"...\n"
                "--datatype: expected float8, float16, bfloat16 or float32, "
                "got \"fp\\xE2\\x82\"\n"
                "--top: expected a positive integer of at most 1048576 "
                "(digits only, no sign, spaces or leading zeros), got \"" +
                std::string(32, '1') + "\"...");
}

SearchResult SmallResult(int top) {
  SearchOptions o;
  o.procs = 8;
  o.max_batch = 8;
  o.top = top;
  const TransformerModel model = CalculonModel("small", 256, 1024, 16, 16, 8, 64);
  absl::StatusOr<SearchResult> r =
      RunSearch(model, test_programs::A100System(), o);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : SearchResult{};
}

TEST(SearchResultJsonTest, ShapeAndKeys) {
  const SearchResult r = SmallResult(3);
  const std::string text = SearchResultJson(r);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  absl::StatusOr<nlohmann::json> parsed = ParseJson(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(CanonicalJson(*parsed) + "\n", text);  // canonical
  EXPECT_EQ((*parsed)["total_executions"], r.total_executions);
  EXPECT_EQ((*parsed)["good_executions"], r.good_executions);
  EXPECT_EQ((*parsed)["bad_executions"], r.bad_executions);
  ASSERT_EQ((*parsed)["top"].size(), 3u);
  const nlohmann::json& first = (*parsed)["top"][0];
  EXPECT_EQ(first.size(), 2u);
  EXPECT_EQ(first["execution"].size(), 23u);
  for (const char* key :
       {"num_procs", "tensor_par", "pipeline_par", "data_par",
        "tensor_par_net", "pipeline_par_net", "data_par_net", "batch_size",
        "microbatch_size", "datatype", "fused_activation", "attention_type",
        "activation_recompute", "pipeline_interleaving", "optimizer_sharding",
        "tensor_par_comm_type", "tensor_par_overlap", "seq_par_ag_redo",
        "data_par_overlap", "weight_offload", "activations_offload",
        "optimizer_offload", "training"}) {
    EXPECT_TRUE(first["execution"].contains(key)) << key;
  }
  EXPECT_EQ(first["execution"]["num_procs"], 8);
  EXPECT_EQ(first["execution"]["attention_type"], "multihead");
  EXPECT_EQ(first["execution"]["training"], true);
  EXPECT_EQ(first["stats"]["sample_rate"].get<double>(),
            r.top[0].iteration.sample_rate);
  EXPECT_TRUE(first["stats"].contains("proc_mem_tier1_cap_req"));
}

TEST(SearchResultTextTest, CountsHeaderAndOneRowPerMapping) {
  const SearchResult r = SmallResult(4);
  const std::string text = SearchResultText(r);
  EXPECT_TRUE(absl::StartsWith(
      text, absl::StrCat(r.total_executions, " executions: ",
                         r.good_executions, " good, ", r.bad_executions,
                         " bad\n")))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "samples/s"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2 + 4);
  SearchOptions json;
  json.json = true;
  EXPECT_EQ(FormatSearchResult(r, json), SearchResultJson(r));
  EXPECT_EQ(FormatSearchResult(r, SearchOptions{}), text);
}

TEST(ParseSearchFlagsTest, DimensionsBeyondCalculon) {
  absl::StatusOr<SearchOptions> o = ParseSearchFlags(
      {"--procs", "8", "--max-batch", "8", "--datatype", "float16"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->max_context, 1);
  EXPECT_EQ(o->context_exchange,
            std::vector<ContextExchange>{ContextExchange::kRing});
  EXPECT_FALSE(o->every_sharding);
  EXPECT_FALSE(o->every_schedule);
  EXPECT_FALSE(o->uneven_stages);
  EXPECT_FALSE(o->first_last_stages);
  EXPECT_EQ(o->threads, 0);
  o = ParseSearchFlags({"--procs", "8", "--max-batch", "8", "--datatype",
                        "float16", "--max-context", "4", "--context-exchange",
                        "all", "--sharding", "all", "--schedules", "all",
                        "--stage-layouts", "all", "--threads", "3"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->max_context, 4);
  EXPECT_EQ(o->context_exchange,
            (std::vector<ContextExchange>{ContextExchange::kRing,
                                          ContextExchange::kAllGather}));
  EXPECT_TRUE(o->every_sharding);
  EXPECT_TRUE(o->every_schedule);
  EXPECT_TRUE(o->uneven_stages);
  EXPECT_TRUE(o->first_last_stages);
  EXPECT_EQ(o->threads, 3);
  // megatron: Megatron-LM's first and last stages, not Calculon's uneven.
  o = ParseSearchFlags({"--procs", "8", "--max-batch", "8", "--datatype",
                        "float16", "--stage-layouts", "megatron"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->uneven_stages);
  EXPECT_TRUE(o->first_last_stages);
  o = ParseSearchFlags({"--procs", "8", "--max-batch", "8", "--datatype",
                        "float16", "--context-exchange=all_gather",
                        "--sharding=calculon", "--schedules=calculon",
                        "--stage-layouts=calculon"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->context_exchange,
            std::vector<ContextExchange>{ContextExchange::kAllGather});
  EXPECT_FALSE(o->every_sharding);
  EXPECT_FALSE(o->every_schedule);
  EXPECT_FALSE(o->uneven_stages);
  EXPECT_THAT(
      ParseSearchFlags({"--procs", "8", "--max-batch", "8", "--datatype",
                        "float16", "--max-context", "0", "--context-exchange",
                        "p2p", "--sharding", "zero3", "--schedules", "zb_h1",
                        "--stage-layouts", "uneven", "--threads", "0"}),
      FieldsAndCodesAre(ElementsAre(
          Pair("--max-context", ErrorCode::kOutOfRange),
          Pair("--context-exchange", ErrorCode::kUnknownChoice),
          Pair("--sharding", ErrorCode::kUnknownChoice),
          Pair("--schedules", ErrorCode::kUnknownChoice),
          Pair("--stage-layouts", ErrorCode::kUnknownChoice),
          Pair("--threads", ErrorCode::kOutOfRange))));
}

TEST(ParseSearchFlagsTest, SpecsNeedJson) {
  absl::StatusOr<SearchOptions> o =
      ParseSearchFlags({"--procs", "8", "--max-batch", "8", "--datatype",
                        "float16", "--json", "--specs"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->specs);
  EXPECT_THAT(ParseSearchFlags({"--procs", "8", "--max-batch", "8",
                                "--datatype", "float16", "--specs"}),
              FieldsAndCodesAre(
                  ElementsAre(Pair("--specs", ErrorCode::kInconsistent))));
}

// A MoE model searched over every new dimension: the execution objects name
// them (Calculon's 23 keys and 9 more), the table has their columns.
TEST(SearchResultJsonTest, NewDimensionsAddKeysAndColumns) {
  TransformerModel model = CalculonModel("small-moe", 256, 1024, 16, 16, 8, 64);
  model.mlp = MlpType::kGated;
  MixtureOfExperts moe;
  moe.experts = 8;
  moe.topk = 2;
  moe.ffn = 128;
  model.moe = moe;
  SearchOptions o;
  o.procs = 8;
  o.max_batch = 8;
  o.top = 3;
  o.max_context = 2;
  o.every_sharding = true;
  o.every_schedule = true;
  o.uneven_stages = true;
  absl::StatusOr<SearchResult> r =
      RunSearch(model, test_programs::A100System(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->top.size(), 3u);
  const nlohmann::json json = SearchResultJsonValue(*r);
  for (size_t i = 0; i < r->top.size(); ++i) {
    const nlohmann::json& e = json["top"][i]["execution"];
    EXPECT_EQ(e.size(), 23u + 9u);
    EXPECT_TRUE(e["pipeline_schedule"].is_string());
    EXPECT_EQ(e["pipeline_stage_layout"], "even");  // 8 blocks, p <= 8
    const TransformerTrainingParallelism& x = r->top[i].mapping.parallelism;
    EXPECT_EQ(e["context_par"], x.context.degree);
    EXPECT_EQ(e["context_par_net"], x.context.network_tier);
    EXPECT_EQ(e["context_par_exchange"], "ring");
    EXPECT_EQ(e["expert_par"], x.expert.degree);
    EXPECT_EQ(e["expert_tensor_par"],
              x.expert.tensor_degree == 0 ? x.tensor.degree
                                          : x.expert.tensor_degree);
    EXPECT_EQ(e["expert_par_net"], x.expert.network_tier);
    EXPECT_EQ(e["data_par_sharding"],
              ShardingStageName(ShardingStageOf(x.data.sharding)));
    EXPECT_EQ(e["num_procs"], 8);
  }
  const std::string text = SearchResultText(*r);
  for (const char* column :
       {" cp ", "cp_x", " ep ", " etp ", " schedule ", " layout "}) {
    EXPECT_TRUE(absl::StrContains(text, column)) << column << "\n" << text;
  }
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2 + 3);
}

// An explicit layout (--stage-layouts megatron) is named `explicit` with its
// blocks per (virtual) stage in the JSON, and in the text by its blocks per
// pipeline rank, runs written N*R.
TEST(SearchResultJsonTest, ExplicitLayoutsShowTheirBlocks) {
  SearchOptions o;
  o.procs = 8;
  o.max_batch = 16;
  o.top = 20000;
  o.first_last_stages = true;
  absl::StatusOr<SearchResult> r = RunSearch(
      CalculonModel("nine", 256, 1024, 16, 16, 9, 64),
      test_programs::A100System(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  const nlohmann::json json = SearchResultJsonValue(*r);
  const std::string text = SearchResultText(*r);
  int explicit_layouts = 0;
  for (size_t i = 0; i < r->top.size(); ++i) {
    const nlohmann::json& e = json["top"][i]["execution"];
    const PipelineParallel& pipeline = r->top[i].mapping.parallelism.pipeline;
    if (pipeline.stage_blocks.empty()) {
      EXPECT_EQ(e["pipeline_stage_layout"], "even");
      EXPECT_FALSE(e.contains("pipeline_stage_blocks"));
      continue;
    }
    ++explicit_layouts;
    EXPECT_EQ(e["pipeline_stage_layout"], "explicit");
    EXPECT_EQ(e["pipeline_stage_blocks"].get<std::vector<int64_t>>(),
              pipeline.stage_blocks);
  }
  EXPECT_GT(explicit_layouts, 0);
  // p = 4's layouts: 3 blocks on each middle rank, 1 and 2 on the ends.
  EXPECT_TRUE(absl::StrContains(text, " 1,3*2,2 ") ||
              absl::StrContains(text, " 2,3*2,1 "))
      << text;
}

TEST(ParseSearchFlagsTest, Partition) {
  const std::vector<std::string> base = {"--procs", "8", "--max-batch", "16",
                                         "--datatype", "float16", "--json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return ParseSearchFlags(args);
  };
  absl::StatusOr<SearchOptions> o = with({"--partition", "0/3"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->partition, 0);
  EXPECT_EQ(o->partitions, 3);
  o = with({"--partition=2/3"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->partition, 2);
  o = with({});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->partition, 0);
  EXPECT_EQ(o->partitions, 1);
  for (const char* bad : {"3/3", "1", "-1/2", "1/0", "a/2", "0/257", "0/2/3",
                          "/2", "1/"}) {
    o = with({"--partition", bad});
    ASSERT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(o.status().message(), "--partition: expected I/N"))
        << o.status();
  }
  o = ParseSearchFlags({"--procs", "8", "--max-batch", "16", "--datatype",
                        "float16", "--partition", "0/2"});
  ASSERT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(o.status().message(), "--partition needs --json"))
      << o.status();
}

// A part as a partitioned search prints it.
std::string Part(int64_t index, int64_t count, int64_t top,
                 const std::string& entries = "[]") {
  return absl::StrCat(R"({"bad_executions": 1, "good_executions": 2, )",
                      R"("partition": {"count": )", count, R"(, "index": )",
                      index, R"(, "top": )", top, R"(}, "top": )", entries,
                      R"(, "total_executions": 3})");
}

TEST(MergeSearchJsonTest, MergesCountsAndRankings) {
  const std::string a = Part(
      0, 2, 2,
      R"([{"rank_key": [0, 5], "stats": {"sample_rate": 2.5}, "x": "a0"},)"
      R"( {"rank_key": [0, 9], "stats": {"sample_rate": 1}, "x": "a1"}])");
  const std::string b = Part(
      1, 2, 2,
      R"([{"rank_key": [1, 0], "stats": {"sample_rate": 2.5}, "x": "b0"}])");
  absl::StatusOr<std::string> merged = MergeSearchJson({b, a});
  ASSERT_TRUE(merged.ok()) << merged.status();
  absl::StatusOr<nlohmann::json> value = ParseJson(*merged);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ((*value)["total_executions"], 6);
  EXPECT_EQ((*value)["good_executions"], 4);
  EXPECT_EQ((*value)["bad_executions"], 2);
  EXPECT_FALSE(value->contains("partition"));
  ASSERT_EQ((*value)["top"].size(), 2u);
  // Equal rates: the smaller key (the earlier group) first.
  EXPECT_EQ((*value)["top"][0]["x"], "a0");
  EXPECT_EQ((*value)["top"][1]["x"], "b0");
  EXPECT_FALSE((*value)["top"][0].contains("rank_key"));
}

TEST(MergeSearchJsonTest, NamesEveryBadPart) {
  absl::StatusOr<std::string> merged = MergeSearchJson({});
  EXPECT_EQ(merged.status().code(), absl::StatusCode::kInvalidArgument);
  merged = MergeSearchJson(
      {"{", R"({"top": []})", Part(0, 4, 2), Part(0, 4, 2), Part(1, 5, 2),
       Part(9, 4, 2),
       Part(2, 4, 2, R"([{"stats": {"sample_rate": "x"}, "rank_key": [0]}])")});
  ASSERT_EQ(merged.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(merged.status().message());
  for (const char* expected :
       {"parts[0]", "parts[1]: not the JSON output of a search with --partition",
        "parts[3]: part 0 is given more than once",
        "parts[4].partition: count 5 and top 2 differ from the first part's (4 and 2)",
        "parts[5].partition.index (9) is not below the number of parts given (7)",
        "parts[6].top[0]: expected stats.sample_rate and rank_key",
        "the parts are of a search in 4 parts, 7 given"}) {
    EXPECT_TRUE(absl::StrContains(message, expected)) << expected << "\n"
                                                      << message;
  }
  // One whole search's output (--partition 0/1 prints no partition keys)
  // merges into itself.
  const std::string whole =
      R"({"bad_executions": 1, "good_executions": 2, "top": [], "total_executions": 3})";
  merged = MergeSearchJson({whole});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(*merged, CanonicalJson(*ParseJson(whole)) + "\n");
  // A part missing: the count says so.
  merged = MergeSearchJson({Part(0, 2, 1)});
  ASSERT_EQ(merged.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(merged.status().message(),
                                "a search in 2 parts, 1 given"))
      << merged.status();
}

}  // namespace
}  // namespace blueprint
