// search_bench: times the strategy search on reference searches and prints
// executions evaluated per second, the wall time of each (the first run,
// and the best of the following ones) and the best processor time (on a
// shared machine wall time also counts the other processes' turns), in the
// default (pruned) and the exhaustive mode.
//   1. turing-530B, 5128 GPUs, max batch 2520, a100_80g, float16, top 5,
//      --mbs-break: Calculon's recorded search (8112 executions, 66.57/s).
//   2. gpt3-175B, 512 GPUs, max batch 512, a100_80g, float16, top 10
//      (6,582,816 executions).
//   3. Beyond Calculon's space (tests/search/testdata/README.md's models,
//      h100_80g_nvl8, 2048 GPUs, max batch 2048, float16, top 10, every
//      ZeRO stage; pruned mode only): qwen3-235B-A22B with cp up to 8
//      (54,389,248 executions); the same with every cp and both K/V
//      exchanges (235,240,064); deepseek-v3 with cp up to 8 (13,126,720).
//   4. With --schedules all (gpipe, zb_h1, zb_h2, dualpipe, dualpipe_v, zb_v
//      beside Calculon's schedules): gpt3-175B as in 2, deepseek-v3 and
//      qwen3-235B-A22B as in 3 (pruned only).
//   5. deepseek-v3 (61 blocks: Calculon's space has p = 1 only) and
//      qwen3-235B-A22B (94 blocks: p <= 2) as in 4 with --stage-layouts all:
//      every p up to the block count, uneven stages (pruned only).
//   6. The same with --stage-layouts megatron: every p up to the block
//      count, Megatron-LM's first and last stages (pruned only).
//   7. qwen3-235B-A22B as in 3 (cp up to 8) with --recipes all (the FP8
//      recipes and none on h100_80g_nvl8) and with --expert-dispatchers all
//      (pruned only).
//
// Usage: bazel run //tools:search_bench -- [--data DIR] [--runs N] [--tiers K]
//            [--only NAME] [--pruned] [--threads N]
// (DIR defaults to tests/search/testdata, which `bazel run` provides).
// --only NAME times the cases whose name contains NAME (--only =NAME: the
// case named NAME alone); --pruned skips the exhaustive mode.
// --threads N runs N workers (default: the search's, one per core); with 1
// the work, and callgrind's instruction counts, are the same on every run.
// --tiers K (2..8) replaces a100_80g's two network tiers by K tiers derived
// from them (even tiers NVLink-like of size 8, 16, 32, ... and decreasing
// bandwidth; odd tiers InfiniBand-like, each a little faster) and times the
// pruned mode only: how the search scales with the number of tiers.
// The same program for wasm: `bazel build //tools:search_bench_wasm`, then
// from the workspace root:
//   node bazel-out/k8-optwasm-*/bin/tools/search_bench_wasm.js
// tools/search_bench.mjs times the wasm package's search() method instead.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "core/adapters/calculon.h"
#include "core/search/search.h"
#include "core/search/tiered_system.h"

namespace blueprint {
namespace {

// Calculon's rate on this kind of machine (calculon/SEARCH.md).
constexpr double kCalculonExecutionsPerSecond = 66.57;

struct Case {
  const char* name;
  const char* model_file;
  const char* system_file;
  int64_t procs;
  int64_t max_batch;
  int top;
  bool mbs_break;
  int runs;  // timed runs after the first (cold) one
  // Beyond Calculon's space: --max-context, --sharding all,
  // --context-exchange all.
  int64_t max_context = 1;
  bool every_sharding = false;
  bool every_exchange = false;
  bool pruned_only = false;  // the exhaustive mode would take minutes
  bool every_schedule = false;  // --schedules all
  bool uneven_stages = false;   // --stage-layouts all
  // --precision megatron_mixed --profile refined: what the page searches
  // for a Hugging Face or Megatron-LM import.
  bool megatron_refined = false;
  bool first_last_stages = false;  // --stage-layouts megatron
  bool every_recipe = false;       // --recipes all
  bool every_dispatcher = false;   // --expert-dispatchers all
};


bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

int Run(const std::string& data, int runs_override, int tiers,
        const std::string& only, bool pruned_only, int threads) {
  const Case cases[] = {
      {"turing-530B 5128 GPUs b2520 top5 mbs-break", "turing-530B.json",
       "a100_80g.json", 5128, 2520, 5, true, 50},
      {"gpt3-175B 512 GPUs b512 top10", "gpt3-175B.json", "a100_80g.json", 512,
       512, 10, false, 5},
      {"qwen3-235B-A22B 2048 GPUs b2048 top10 cp<=8 zero",
       "qwen3-235B-A22B.model.json", "h100_80g_nvl8.json", 2048, 2048, 10,
       false, 3, 8, true, false, true},
      {"qwen3-235B-A22B 2048 GPUs b2048 top10 every cp, both exchanges, zero",
       "qwen3-235B-A22B.model.json", "h100_80g_nvl8.json", 2048, 2048, 10,
       false, 1, 2048, true, true, true},
      {"deepseek-v3 2048 GPUs b2048 top10 cp<=8 zero", "deepseek-v3.model.json",
       "h100_80g_nvl8.json", 2048, 2048, 10, false, 1, 8, true, false, true},
      {"gpt3-175B 512 GPUs b512 top10 every schedule", "gpt3-175B.json",
       "a100_80g.json", 512, 512, 10, false, 3, 1, false, false, true, true},
      {"deepseek-v3 2048 GPUs b2048 top10 cp<=8 zero every schedule",
       "deepseek-v3.model.json", "h100_80g_nvl8.json", 2048, 2048, 10, false, 1,
       8, true, false, true, true},
      {"qwen3-235B-A22B 2048 GPUs b2048 top10 cp<=8 zero every schedule",
       "qwen3-235B-A22B.model.json", "h100_80g_nvl8.json", 2048, 2048, 10,
       false, 3, 8, true, false, true, true},
      {"deepseek-v3 2048 GPUs b2048 top10 every cp, both exchanges, zero, "
       "every schedule",
       "deepseek-v3.model.json", "h100_80g_nvl8.json", 2048, 2048, 10, false, 1,
       2048, true, true, true, true},
      {"deepseek-v3 2048 GPUs b2048 top10 cp<=8 zero every schedule, "
       "uneven stages",
       "deepseek-v3.model.json", "h100_80g_nvl8.json", 2048, 2048, 10, false, 1,
       8, true, false, true, true, true},
      {"qwen3-235B-A22B 2048 GPUs b2048 top10 every cp, both exchanges, "
       "zero, every schedule",
       "qwen3-235B-A22B.model.json", "h100_80g_nvl8.json", 2048, 2048, 10,
       false, 1, 2048, true, true, true, true},
      {"qwen3-235B-A22B 2048 GPUs b2048 top10 cp<=8 zero every schedule, "
       "uneven stages",
       "qwen3-235B-A22B.model.json", "h100_80g_nvl8.json", 2048, 2048, 10,
       false, 1, 8, true, false, true, true, true},
      {"qwen3-235B-A22B 2048 GPUs b2048 top10 every cp, both exchanges, "
       "zero, every schedule, megatron_mixed refined",
       "qwen3-235B-A22B.model.json", "h100_80g_nvl8.json", 2048, 2048, 10,
       false, 3, 2048, true, true, true, true, false, true},
      {"deepseek-v3 2048 GPUs b2048 top10 cp<=8 zero every schedule, "
       "Megatron first/last stages",
       "deepseek-v3.model.json", "h100_80g_nvl8.json", 2048, 2048, 10, false, 1,
       8, true, false, true, true, false, false, true},
      {"qwen3-235B-A22B 2048 GPUs b2048 top10 cp<=8 zero every schedule, "
       "Megatron first/last stages",
       "qwen3-235B-A22B.model.json", "h100_80g_nvl8.json", 2048, 2048, 10,
       false, 1, 8, true, false, true, true, false, false, true},
      // 7. The variants of the space: every recipe the system runs (the
      // FP8 ones on an H100), every expert dispatcher.
      {"qwen3-235B-A22B 2048 GPUs b2048 top10 cp<=8 zero, recipes all",
       "qwen3-235B-A22B.model.json", "h100_80g_nvl8.json", 2048, 2048, 10,
       false, 1, 8, true, false, true, false, false, false, false, true},
      {"qwen3-235B-A22B 2048 GPUs b2048 top10 cp<=8 zero, dispatchers all",
       "qwen3-235B-A22B.model.json", "h100_80g_nvl8.json", 2048, 2048, 10,
       false, 1, 8, true, false, true, false, false, false, false, false,
       true},
  };
  std::printf("%-44s %-10s %10s %10s %10s %10s %14s %11s\n", "search",
              "mode", "executions", "first_ms", "best_ms", "best_cpu_ms",
              "executions/s", "vs_calculon");
  for (const Case& c : cases) {
    // "=NAME": that case alone (a name that is the start of others').
    if (!only.empty() && only[0] == '=' ? only.substr(1) != c.name
                                        : std::string(c.name).find(only) ==
                                              std::string::npos) {
      continue;
    }
    std::string model_text, system_text;
    if (!ReadFile(data + "/" + c.model_file, &model_text) ||
        !ReadFile(data + "/" + c.system_file, &system_text)) {
      std::fprintf(stderr, "error: cannot read %s/%s or %s/%s\n",
                   data.c_str(), c.model_file, data.c_str(), c.system_file);
      return 2;
    }
    absl::StatusOr<TransformerModel> model =
        FromCalculonApplication(model_text);
    absl::StatusOr<System> system = FromCalculonSystem(system_text);
    if (system.ok() && tiers > 0) *system = SystemWithTiers(*system, tiers);
    if (!model.ok() || !system.ok()) {
      std::fprintf(stderr, "error: %s %s\n",
                   std::string(model.status().message()).c_str(),
                   std::string(system.status().message()).c_str());
      return 2;
    }
    for (bool exhaustive : {false, true}) {
      if (exhaustive && (tiers > 0 || pruned_only || c.pruned_only)) continue;
      SearchOptions options;
      options.procs = c.procs;
      options.max_batch = c.max_batch;
      options.datatype = DataType::kFloat16;
      options.top = c.top;
      options.mbs_break = c.mbs_break;
      options.max_context = c.max_context;
      options.every_sharding = c.every_sharding;
      options.every_schedule = c.every_schedule;
      options.uneven_stages = c.uneven_stages;
      options.first_last_stages = c.first_last_stages;
      options.every_recipe = c.every_recipe;
      if (c.every_dispatcher) {
        options.expert_dispatchers = {ExpertDispatcher::kAllToAll,
                                      ExpertDispatcher::kDeepEp,
                                      ExpertDispatcher::kHybridEp};
      }
      if (c.megatron_refined) {
        options.precision = PrecisionAccounting::kMegatronMixed;
        options.profile = ModelProfile::kRefined;
      }
      if (c.every_exchange) {
        options.context_exchange = {ContextExchange::kRing,
                                    ContextExchange::kAllGather};
      }
      options.exhaustive = exhaustive;
      if (threads > 0) options.threads = threads;
      const int runs = runs_override > 0 ? runs_override : c.runs;
      double first_ms = 0, best_ms = 1e300, best_cpu_ms = 1e300;
      SearchResult last;
      for (int i = 0; i <= runs; ++i) {
        const auto start = std::chrono::steady_clock::now();
        const std::clock_t cpu_start = std::clock();
        absl::StatusOr<SearchResult> result =
            RunSearch(*model, *system, options);
        const std::clock_t cpu_end = std::clock();
        const auto end = std::chrono::steady_clock::now();
        if (!result.ok()) {
          std::fprintf(stderr, "error: %s\n",
                       std::string(result.status().message()).c_str());
          return 2;
        }
        const double ms =
            std::chrono::duration<double, std::milli>(end - start).count();
        // Run 0 is the cold one (under wasm, before the engine optimizes).
        if (i == 0) first_ms = ms;
        if (i > 0) {
          best_ms = std::min(best_ms, ms);
          // Processor time: on a shared machine, what the search itself
          // used (wall time also counts the other processes' turns).
          best_cpu_ms = std::min(
              best_cpu_ms, 1000.0 * static_cast<double>(cpu_end - cpu_start) /
                               CLOCKS_PER_SEC);
        }
        last = *std::move(result);
      }
      const double rate =
          static_cast<double>(last.total_executions) / (best_ms / 1000);
      std::printf("%-44s %-10s %10lld %10.3f %10.3f %11.3f %14.4g %10.0fx\n",
                  c.name, exhaustive ? "exhaustive" : "pruned",
                  static_cast<long long>(last.total_executions), first_ms,
                  best_ms, best_cpu_ms, rate,
                  rate / kCalculonExecutionsPerSecond);
      std::printf(
          "    good %lld, bad %lld; best %.10g samples/s; %lld blocks "
          "lowered, %lld planned, %lld resharded, %lld memory and %lld "
          "iteration evaluations, %lld schedule simulations\n",
          static_cast<long long>(last.good_executions),
          static_cast<long long>(last.bad_executions),
          last.top.empty() ? 0.0 : last.top[0].iteration.sample_rate,
          static_cast<long long>(last.work.blocks_lowered),
          static_cast<long long>(last.work.blocks_planned),
          static_cast<long long>(last.work.blocks_resharded),
          static_cast<long long>(last.work.memory_evaluations),
          static_cast<long long>(last.work.iteration_evaluations),
          static_cast<long long>(last.work.schedule_simulations));
    }
  }
  return 0;
}

}  // namespace
}  // namespace blueprint

int main(int argc, char** argv) {
  std::string data = "tests/search/testdata";
  int runs = 0;
  int tiers = 0;
  std::string only;
  bool pruned_only = false;
  int threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--data" && i + 1 < argc) {
      data = argv[++i];
    } else if (arg == "--runs" && i + 1 < argc &&
               absl::SimpleAtoi(argv[i + 1], &runs) && runs > 0) {
      ++i;
    } else if (arg == "--tiers" && i + 1 < argc &&
               absl::SimpleAtoi(argv[i + 1], &tiers) && tiers >= 2 &&
               tiers <= 8) {
      ++i;
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--pruned") {
      pruned_only = true;
    } else if (arg == "--threads" && i + 1 < argc &&
               absl::SimpleAtoi(argv[i + 1], &threads) && threads > 0 &&
               threads <= 256) {
      ++i;
    } else {
      std::fprintf(stderr,
                   "usage: search_bench [--data DIR] [--runs N] [--tiers K] "
                   "[--only NAME] [--pruned] [--threads N]\n");
      return 1;
    }
  }
  return blueprint::Run(data, runs, tiers, only, pruned_only, threads);
}
