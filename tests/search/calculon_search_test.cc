// The strategy search against Calculon: the recorded Turing-530B search
// (counts and top 5), exhaustive mode against the default (pruned) mode on
// real searches, and small searches against a brute force that runs every
// execution through the Calculon adapter, the checker and the full passes.
//
// Usage: calculon_search_test [TESTDATA_DIR] (default tests/search/testdata).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/adapters/calculon.h"
#include "core/analysis/figures.h"
#include "core/analysis/schedule.h"
#include "core/base/json.h"
#include "core/plan/plan.h"
#include "core/report/calculon_stats.h"
#include "core/search/mapping.h"
#include "core/search/search.h"
#include "core/search/search_json.h"
#include "core/spec/check.h"
#include "core/taskir/lower.h"
#include "core/testing/doubles.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

std::string g_testdata = "tests/search/testdata";

std::string ReadFile(const std::string& name) {
  std::ifstream in(g_testdata + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << g_testdata << "/" << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TransformerModel Model(const std::string& name) {
  absl::StatusOr<TransformerModel> m = FromCalculonApplication(ReadFile(name));
  EXPECT_THAT(m, IsOk());
  return m.ok() ? *m : TransformerModel{};
}

System SystemFile(const std::string& name) {
  absl::StatusOr<System> s = FromCalculonSystem(ReadFile(name));
  EXPECT_THAT(s, IsOk());
  return s.ok() ? *s : System{};
}

SearchOptions Options(int64_t procs, int64_t max_batch, int top) {
  SearchOptions o;
  o.procs = procs;
  o.max_batch = max_batch;
  o.datatype = DataType::kFloat16;
  o.top = top;
  return o;
}

// `key: value` of the recorded search's log.
int64_t LogCount(const std::string& log, const std::string& key) {
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::ConsumePrefix(&line, key + ": ")) {
      int64_t value = 0;
      if (absl::SimpleAtoi(line, &value)) return value;
    }
  }
  ADD_FAILURE() << "no \"" << key << "\" in the log";
  return -1;
}

bool Near(double ours, double theirs) {
  return std::fabs(ours - theirs) <=
         std::max(1e-9 * std::fabs(theirs), 1e-12);
}

void ExpectStatsNear(const nlohmann::json& ours, const nlohmann::json& theirs,
                     const std::string& where) {
  ASSERT_TRUE(ours.is_object() && theirs.is_object());
  for (auto it = theirs.begin(); it != theirs.end(); ++it) {
    ASSERT_TRUE(ours.contains(it.key())) << where << ": no " << it.key();
    const nlohmann::json& mine = ours[it.key()];
    if (it->is_null()) {
      EXPECT_TRUE(mine.is_null()) << where << ": " << it.key();
      continue;
    }
    ASSERT_TRUE(mine.is_number()) << where << ": " << it.key();
    EXPECT_TRUE(Near(mine.get<double>(), it->get<double>()))
        << where << ": " << it.key() << " ours " << Shortest(mine.get<double>())
        << " Calculon " << Shortest(it->get<double>());
  }
  EXPECT_EQ(ours.size(), theirs.size()) << where;
}

TEST(CalculonSearchTest, RecordedTuringSearchHasTheSameCountsAndTop5) {
  const TransformerModel model = Model("turing-530B.json");
  const System system = SystemFile("a100_80g.json");
  SearchOptions options = Options(5128, 2520, 5);
  options.mbs_break = true;
  absl::StatusOr<SearchResult> result = RunSearch(model, system, options);
  ASSERT_THAT(result, IsOk());

  const std::string log = ReadFile("turing_search.log");
  EXPECT_EQ(result->total_executions, LogCount(log, "Total executions"));
  EXPECT_EQ(result->good_executions, LogCount(log, "Good executions"));
  EXPECT_EQ(result->bad_executions, LogCount(log, "Bad executions"));
  EXPECT_EQ(result->total_executions, 8112);
  EXPECT_EQ(result->good_executions, 1080);
  EXPECT_EQ(result->bad_executions, 7032);

  absl::StatusOr<nlohmann::json> recorded =
      ParseJson(ReadFile("turing_search.json"));
  ASSERT_THAT(recorded, IsOk());
  ASSERT_EQ(result->top.size(), 5u);
  const nlohmann::json ours = SearchResultJsonValue(*result);
  for (int i = 0; i < 5; ++i) {
    const nlohmann::json& theirs = (*recorded)[std::to_string(i)];
    const std::string where = "rank " + std::to_string(i + 1);
    EXPECT_EQ(ours["top"][i]["execution"], theirs["execution"]) << where;
    ExpectStatsNear(ours["top"][i]["stats"], theirs["stats"], where);
  }
  EXPECT_TRUE(Near(result->top[0].iteration.sample_rate, 111.1604995663596));

  options.exhaustive = true;
  absl::StatusOr<SearchResult> exhaustive = RunSearch(model, system, options);
  ASSERT_THAT(exhaustive, IsOk());
  EXPECT_EQ(SearchResultJson(*exhaustive), SearchResultJson(*result));
}

void ExpectExhaustiveEqualsPruned(const TransformerModel& model,
                                  const System& system, SearchOptions options,
                                  int64_t expected_total) {
  options.exhaustive = false;
  absl::StatusOr<SearchResult> pruned = RunSearch(model, system, options);
  options.exhaustive = true;
  absl::StatusOr<SearchResult> exhaustive = RunSearch(model, system, options);
  ASSERT_THAT(pruned, IsOk());
  ASSERT_THAT(exhaustive, IsOk());
  if (expected_total >= 0) {
    EXPECT_EQ(pruned->total_executions, expected_total);
  }
  EXPECT_EQ(SearchResultJson(*pruned), SearchResultJson(*exhaustive));
}

TEST(CalculonSearchTest, Gpt3On512ProcessorsExhaustiveEqualsPruned) {
  ExpectExhaustiveEqualsPruned(Model("gpt3-175B.json"),
                               SystemFile("a100_80g.json"),
                               Options(512, 512, 10), 6582816);
}

TEST(CalculonSearchTest, Megatron22BExhaustiveEqualsPruned) {
  SearchOptions options = Options(4, 4, 20);
  options.fused_activation = {true, false};
  options.mbs_break = true;
  ExpectExhaustiveEqualsPruned(Model("megatron-22B.json"),
                               SystemFile("h100_80g_nvl8.json"), options, -1);
}

// `--app` takes a spec/3 model object (moe, latent_attention, mtp_layers)
// as well as a spec/2 one and Calculon's application.
TEST(CalculonSearchTest, AppTakesSpecV3ModelObjects) {
  const TransformerModel qwen = Model("qwen3-235B-A22B.model.json");
  ASSERT_TRUE(qwen.moe.has_value());
  EXPECT_EQ(qwen.moe->experts, 128);
  EXPECT_EQ(qwen.moe->topk, 8);
  EXPECT_EQ(qwen.moe->ffn, 1536);
  EXPECT_FALSE(qwen.latent_attention.has_value());
  const TransformerModel deepseek = Model("deepseek-v3.model.json");
  ASSERT_TRUE(deepseek.latent_attention.has_value());
  EXPECT_EQ(deepseek.latent_attention->kv_lora_rank, 512);
  EXPECT_EQ(deepseek.mtp_layers, 1);
  ASSERT_TRUE(deepseek.moe.has_value());
  EXPECT_EQ(deepseek.moe->shared_ffn, 2048);
  const TransformerModel llama = Model("llama3-70B.model.json");
  EXPECT_FALSE(llama.moe.has_value());
  EXPECT_EQ(llama.kv_heads, 8);
  // A spec/3 key in a model without a name is Calculon's application: an
  // unknown key there.
  EXPECT_FALSE(FromCalculonApplication(
                   R"({"hidden": 64, "feedforward": 256, "seq_size": 32,
                       "attn_heads": 8, "attn_size": 8, "num_blocks": 2,
                       "mtp_layers": 0})")
                   .ok());

  // Both search, with their experts split.
  const System system = SystemFile("h100_80g_nvl8.json");
  SearchOptions o = Options(64, 64, 3);
  o.max_context = 2;
  o.every_sharding = true;
  for (const TransformerModel* model : {&qwen, &deepseek}) {
    absl::StatusOr<SearchResult> result = RunSearch(*model, system, o);
    ASSERT_THAT(result, IsOk());
    ASSERT_FALSE(result->top.empty()) << model->name;
    EXPECT_GT(result->top[0].mapping.parallelism.expert.degree, 1)
        << model->name;
  }
}

//----- Brute force ------------------------------------------------------------

std::vector<int64_t> Factors(int64_t x) {
  std::vector<int64_t> out;
  for (int64_t i = 1; i <= x; ++i) {
    if (x % i == 0) out.push_back(i);
  }
  return out;
}

struct BruteForceEntry {
  double sample_rate = 0;
  nlohmann::json execution;
  BlockFigures block;
  IterationFigures iteration;
  MemoryFigures memory;
};

struct BruteForceResult {
  int64_t total = 0, good = 0, bad = 0;
  std::vector<BruteForceEntry> top;
};

// One execution as Calculon runs it, through the adapter, the checker and
// the full passes; nullopt-like (good == false) when any rule rejects it.
bool RunOne(const std::string& app, const std::string& sys,
            const nlohmann::json& exe, BruteForceEntry* out) {
  absl::StatusOr<MappingSpec> spec = FromCalculon(app, exe.dump(), sys);
  EXPECT_THAT(spec, IsOk()) << exe.dump();
  if (!spec.ok()) return false;
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  if (!program.ok()) return false;
  absl::StatusOr<DistributedTaskIR> tasks =
      LowerTensorParallelBlock().Run(*program);
  EXPECT_THAT(tasks, IsOk());
  if (!tasks.ok()) return false;
  absl::StatusOr<PortablePlanIR> plan = PlanPortable().Run(*tasks, *program);
  EXPECT_THAT(plan, IsOk());
  if (!plan.ok()) return false;
  const StepShape step = MakeStepShape(*program);
  out->block = plan->block;
  ComputeIteration(out->block, step, out->iteration);
  ComputeMemory(out->block, step, out->memory);
  if (out->memory.proc_mem_tier1_cap_req > out->memory.tier1_capacity ||
      out->memory.proc_mem_tier2_cap_req > out->memory.tier2_capacity) {
    return false;
  }
  out->sample_rate = out->iteration.sample_rate;
  out->execution = exe;
  return true;
}

// Steps 6-15 of calculon/SEARCH.md, as Calculon's execution keys.
std::vector<nlohmann::json> Choices(int64_t t, int64_t d, bool has_mem2,
                                    const SearchOptions& o) {
  const std::vector<bool> tf = {true, false}, f = {false};
  std::vector<std::string> tp_overlaps = {"none"};
  if (t > 1 && o.tp_overlap) tp_overlaps = {"none", "ring", "pipe"};
  std::vector<nlohmann::json> out;
  for (const char* recompute : {"full", "attn_only", "none"}) {
    const bool full = std::string(recompute) == "full";
    for (bool sharding : d > 1 ? tf : f) {
      for (const char* comm : {"ar", "p2p_rs_ag", "rs_ag"}) {
        const bool can_redo = std::string(comm) == "rs_ag" && !full;
        for (bool redo : can_redo ? tf : f) {
          for (bool dp_overlap : d > 1 && o.dp_overlap ? tf : f) {
            for (const std::string& tp_overlap : tp_overlaps) {
              for (bool weights : has_mem2 ? tf : f) {
                for (bool acts : has_mem2 && !full ? tf : f) {
                  for (bool optimizer : has_mem2 ? tf : f) {
                    for (bool fused : o.fused_activation) {
                      out.push_back({{"activation_recompute", recompute},
                                     {"optimizer_sharding", sharding},
                                     {"tensor_par_comm_type", comm},
                                     {"seq_par_ag_redo", redo},
                                     {"data_par_overlap", dp_overlap},
                                     {"tensor_par_overlap", tp_overlap},
                                     {"weight_offload", weights},
                                     {"activations_offload", acts},
                                     {"optimizer_offload", optimizer},
                                     {"fused_activation", fused}});
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

// calculon/SEARCH.md, written out again independently of core/search.
BruteForceResult BruteForce(const std::string& app_name,
                            const std::string& sys_name,
                            const SearchOptions& o) {
  const std::string app = ReadFile(app_name);
  const std::string sys = ReadFile(sys_name);
  const nlohmann::json a = ParseJson(app).value();
  const nlohmann::json s = ParseJson(sys).value();
  const int64_t hidden = a["hidden"], heads = a["attn_heads"];
  const int64_t blocks = a["num_blocks"], seq = a["seq_size"];
  const int64_t nets = static_cast<int64_t>(s["networks"].size());
  const bool has_mem2 = s["mem2"]["GiB"].get<double>() > 0;
  const int64_t n = o.procs;
  BruteForceResult result;
  std::vector<BruteForceEntry> good;
  for (int64_t t : Factors(n)) {
    if (hidden % t || heads % t) continue;
    for (int64_t p : Factors(std::min(n / t, blocks))) {
      if (n % (t * p) || blocks % p) continue;
      const int64_t d = n / (t * p);
      const std::vector<int64_t> interleavings =
          p == 1 ? std::vector<int64_t>{1} : Factors(blocks / p);
      for (int64_t v : interleavings) {
        if (d > o.max_batch) continue;
        const int64_t batch = o.max_batch / d * d;
        for (const nlohmann::json& choice : Choices(t, d, has_mem2, o)) {
          for (int64_t b : Factors(batch / d)) {
            if ((b * seq) % t) continue;
            const int64_t good_before = result.good;
            for (int64_t tn = 0; tn < (t > 1 ? nets : 1); ++tn) {
              for (int64_t pn = 0; pn < (p > 1 ? nets : 1); ++pn) {
                for (int64_t dn = 0; dn < (d > 1 ? nets : 1); ++dn) {
                  nlohmann::json exe = choice;
                  exe.update({{"num_procs", n},
                              {"tensor_par", t},
                              {"pipeline_par", p},
                              {"data_par", d},
                              {"tensor_par_net", tn},
                              {"pipeline_par_net", pn},
                              {"data_par_net", dn},
                              {"batch_size", batch},
                              {"microbatch_size", b},
                              {"datatype", "float16"},
                              {"attention_type", "multihead"},
                              {"pipeline_interleaving", v},
                              {"training", true}});
                  ++result.total;
                  BruteForceEntry entry;
                  if (RunOne(app, sys, exe, &entry)) {
                    ++result.good;
                    good.push_back(std::move(entry));
                  } else {
                    ++result.bad;
                  }
                }
              }
            }
            if (o.mbs_break && result.good == good_before) break;
          }
        }
      }
    }
  }
  std::stable_sort(good.begin(), good.end(),
                   [](const BruteForceEntry& x, const BruteForceEntry& y) {
                     return x.sample_rate > y.sample_rate;
                   });
  if (good.size() > static_cast<size_t>(o.top)) good.resize(o.top);
  result.top = std::move(good);
  return result;
}

void ExpectSearchEqualsBruteForce(const std::string& app_name,
                                  const std::string& sys_name,
                                  const SearchOptions& options) {
  const BruteForceResult brute = BruteForce(app_name, sys_name, options);
  absl::StatusOr<SearchResult> result =
      RunSearch(Model(app_name), SystemFile(sys_name), options);
  ASSERT_THAT(result, IsOk());
  EXPECT_GT(brute.good, 0);
  EXPECT_GT(brute.bad, 0);
  EXPECT_EQ(result->total_executions, brute.total);
  EXPECT_EQ(result->good_executions, brute.good);
  EXPECT_EQ(result->bad_executions, brute.bad);
  ASSERT_EQ(result->top.size(), brute.top.size());
  for (size_t i = 0; i < brute.top.size(); ++i) {
    const RankedExecution& ours = result->top[i];
    const BruteForceEntry& theirs = brute.top[i];
    // Calculon's 23-key execution object of the mapping.
    EXPECT_EQ(ToCalculonExecutionJson(MappingProgram(
                  result->model, result->system, ours.mapping)),
              theirs.execution)
        << "rank " << i + 1;
    // Bit for bit: the same figures as the full passes.
    EXPECT_EQ(ours.iteration.sample_rate, theirs.sample_rate)
        << "rank " << i + 1;
    EXPECT_EQ(CalculonStatsJson(ours.block, ours.iteration, ours.memory),
              CalculonStatsJson(theirs.block, theirs.iteration, theirs.memory))
        << "rank " << i + 1;
  }
}

TEST(CalculonSearchTest, SmallSearchEqualsBruteForceThroughTheFullPasses) {
  ExpectSearchEqualsBruteForce("megatron-22B.json", "a100_80g.json",
                               Options(2, 2, 10));
}

TEST(CalculonSearchTest, SmallMicrobatchBreakSearchEqualsBruteForce) {
  SearchOptions options = Options(2, 8, 5);
  options.tp_overlap = false;
  options.mbs_break = true;
  ExpectSearchEqualsBruteForce("megatron-22B.json", "h100_80g_nvl8.json",
                               options);
}

}  // namespace
}  // namespace blueprint

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc > 1) blueprint::g_testdata = argv[1];
  return RUN_ALL_TESTS();
}
