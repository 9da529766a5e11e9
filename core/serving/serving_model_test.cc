#include "core/serving/serving_model.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/base/units.h"
#include "core/presets/presets.h"
#include "core/serving/serving_check.h"
#include "core/serving/serving_report.h"
#include "core/serving/serving_spec.h"
#include "core/serving/serving_test_util.h"
#include "core/spec/accounting.h"
#include "core/spec/derive.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using serving_test::Aggregated;
using serving_test::Disaggregated;
using serving_test::Parse;
using serving_test::Pool;
using serving_test::SpecText;

ServingFigures Analyze(const SpecText& text) {
  absl::StatusOr<ServingAnalysis> analysis = AnalyzeServing(Parse(text));
  EXPECT_TRUE(analysis.ok()) << analysis.status();
  return analysis.ok() ? analysis->figures : ServingFigures{};
}

SpecText DeepSeekV3OnH200() {
  SpecText text;
  text.model = "\"deepseek-v3\"";
  text.system = "\"h200_sxm_141g\"";
  text.weight_datatype = "float8";
  text.pools = Aggregated(Pool(8, 1, 8));
  return text;
}

// Llama-3.1-70B, GQA: 80 layers x 2 (K and V) x 8 key/value heads x 128 x
// 2 bytes; over 8 tensor ranks each holds one head; at 16 (more ranks than
// heads) still one, copied.
TEST(ServingModel, KvBytesPerTokenOfLlama31_70B) {
  const ServingFigures f = Analyze(SpecText{});
  EXPECT_EQ(f.kv_cache_bytes_per_token, 80.0 * 2 * 8 * 128 * 2);
  EXPECT_EQ(f.kv_cache_bytes_per_token_per_rank, 80.0 * 2 * 1 * 128 * 2);
  SpecText fp8;
  fp8.kv_datatype = "float8";
  fp8.pools = Aggregated(Pool(4, 2));
  const ServingFigures g = Analyze(fp8);
  EXPECT_EQ(g.kv_cache_bytes_per_token, 80.0 * 2 * 8 * 128 * 1);
  EXPECT_EQ(g.kv_cache_bytes_per_token_per_rank, 40.0 * 2 * 2 * 128 * 1);
  SpecText wide;
  wide.system = "\"gb200_nvl72\"";
  wide.pools = Aggregated(Pool(16));
  EXPECT_EQ(Analyze(wide).kv_cache_bytes_per_token_per_rank,
            80.0 * 2 * 1 * 128 * 2);
}

// DeepSeek-V3, MLA: 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64) x
// 2 bytes; the latent is not split over tensor ranks.
TEST(ServingModel, KvBytesPerTokenOfDeepSeekV3) {
  const ServingFigures f = Analyze(DeepSeekV3OnH200());
  EXPECT_EQ(f.kv_cache_bytes_per_token, 61.0 * (512 + 64) * 2);
  EXPECT_EQ(f.kv_cache_bytes_per_token_per_rank, 61.0 * (512 + 64) * 2);
  SpecText fp8 = DeepSeekV3OnH200();
  fp8.kv_datatype = "float8";
  EXPECT_EQ(Analyze(fp8).kv_cache_bytes_per_token, 61.0 * (512 + 64));
}

// A request of 1024 + 256 tokens holds 80 blocks of 16.
TEST(ServingModel, MaxConcurrencyIsTheFreeMemoryOverOneRequestsCache) {
  const ServingFigures f = Analyze(SpecText{});
  const double per_request = 80.0 * 16 * 80 * 2 * 1 * 128 * 2;
  EXPECT_EQ(f.kv_cache_bytes_per_request_per_rank, per_request);
  EXPECT_EQ(f.max_concurrency, std::floor(f.free_bytes_per_rank / per_request));
  EXPECT_EQ(f.free_bytes_per_rank, 80 * kGiB * 0.9 - f.weight_bytes_per_rank -
                                       f.activation_bytes_per_rank);
  EXPECT_EQ(f.kv_cache_bytes_per_rank, 64 * per_request);
  // Attention data parallelism: each group its own requests and cache.
  SpecText dp = DeepSeekV3OnH200();
  dp.pools = Aggregated(Pool(1, 1, 8, 8));
  const ServingFigures g = Analyze(dp);
  EXPECT_EQ(g.max_concurrency,
            8 * std::floor(g.free_bytes_per_rank /
                           g.kv_cache_bytes_per_request_per_rank));
  EXPECT_EQ(g.kv_cache_bytes_per_rank,
            64.0 / 8 * g.kv_cache_bytes_per_request_per_rank);
}

// With p = 1 and a = 1 every weight is split over the tensor ranks: they
// add up to Megatron-LM's parameter count at 2 bytes.
TEST(ServingModel, WeightsAddUpToTheParameterCount) {
  const ServingSpec spec = Parse(SpecText{});
  const ParameterCounts counts = CountParameters(
      AccountedModelOf(spec.model),
      *PaddedVocabulary(spec.model.vocabulary, 8));
  const ServingFigures f = Analyze(SpecText{});
  EXPECT_NEAR(8 * f.weight_bytes_per_rank, 2 * counts.total,
              1e-12 * counts.total);
  EXPECT_GT(counts.total, 70e9);
  EXPECT_LT(counts.total, 71e9);
}

TEST(ServingModel, ParameterPartsAddUpForEveryModelPreset) {
  for (const std::string& name : PresetNames(PresetKind::kModel)) {
    SpecText text;
    text.model = "\"" + name + "\"";
    absl::StatusOr<ServingSpec> spec = ParseServingSpecJson(text.Json());
    ASSERT_TRUE(spec.ok()) << name << ": " << spec.status();
    const AccountedModel m = AccountedModelOf(spec->model);
    const int64_t vocabulary = *PaddedVocabulary(spec->model.vocabulary, 1);
    const ParameterParts parts = CountParameterParts(m, vocabulary);
    const double total = CountParameters(m, vocabulary).total;
    EXPECT_NEAR(parts.attention + parts.mlp + parts.routed + parts.vocabulary,
                total, 1e-12 * total)
        << name;
  }
}

// Decode is never priced under the weight-read roofline: every step reads
// each rank's weights (the experts its tokens reach) at most at the
// memory's peak bandwidth.
TEST(ServingModel, DecodeStepIsNeverBelowTheWeightReadRoofline) {
  for (int64_t concurrency : {1, 8, 64, 512}) {
    SpecText text;
    text.concurrency = concurrency;
    const ServingFigures f = Analyze(text);
    EXPECT_GE(f.decode_step_time,
              f.weight_bytes_per_rank / (3350 * kGB)) << concurrency;
    EXPECT_GE(f.decode_memory_time, f.decode_weight_read_time);
    EXPECT_GE(f.decode_step_time,
              std::max(f.decode_compute_time, f.decode_memory_time));
  }
  // Low concurrency is memory-bound, high concurrency compute-bound.
  SpecText low;
  low.concurrency = 1;
  const ServingFigures l = Analyze(low);
  EXPECT_GT(l.decode_memory_time, l.decode_compute_time);
  SpecText high;
  high.concurrency = 1024;
  high.input_tokens = 128;
  high.output_tokens = 128;
  const ServingFigures h = Analyze(high);
  EXPECT_GT(h.decode_compute_time, h.decode_weight_read_time);
  // DeepSeek-V3 at one request reads only the experts its token reaches.
  SpecText one = DeepSeekV3OnH200();
  one.concurrency = 1;
  const ServingFigures d = Analyze(one);
  EXPECT_GE(d.decode_step_time, d.decode_weight_read_time);
  EXPECT_LT(d.decode_weight_read_time,
            d.weight_bytes_per_rank / (4800 * kGB));
}

TEST(ServingModel, DisaggregatedAgainstAggregated) {
  // The same 8 GPUs: one shared pool of two tensor-4 replicas, or one
  // prefill and one decode replica of tensor 4.
  SpecText aggregated;
  aggregated.pools = Aggregated(Pool(4, 1, 1, 1, 2));
  SpecText disaggregated;
  disaggregated.pools = Disaggregated(Pool(4), Pool(4));
  const ServingFigures a = Analyze(aggregated);
  const ServingFigures d = Analyze(disaggregated);
  EXPECT_EQ(a.gpus, 8);
  EXPECT_EQ(d.gpus, 8);
  EXPECT_EQ(a.kv_transfer_time, 0);
  EXPECT_GT(d.kv_transfer_time, 0);
  EXPECT_EQ(d.ttft, d.prefill_time + d.kv_transfer_time);
  EXPECT_EQ(a.ttft, a.prefill_time);
  EXPECT_EQ(a.prefill_time, d.prefill_time);
  // Decode steps are alike (the shared pool's activations differ, not its
  // step); the shared pool's requests also wait for the others' prefills.
  EXPECT_EQ(d.tpot, d.decode_step_time);
  EXPECT_GT(a.tpot, a.decode_step_time);
  EXPECT_GT(a.tpot, d.tpot);
  // Throughput: the disaggregated deployment is bounded by its slower pool.
  const double prefill_rate = 1 / d.prefill_replica_time_per_request;
  const double decode_rate = 64 / (255 * d.decode_step_time);
  EXPECT_EQ(d.requests_per_second, std::min(prefill_rate, decode_rate));
  EXPECT_EQ(a.requests_per_second,
            2 * 64 / (64 * a.prefill_replica_time_per_request +
                      255 * a.decode_step_time));
  EXPECT_EQ(a.output_tokens_per_second_per_gpu,
            a.requests_per_second * 256 / 8);
}

TEST(ServingModel, OneOutputTokenHasNoTimePerOutputToken) {
  SpecText text;
  text.output_tokens = 1;
  const ServingFigures f = Analyze(text);
  EXPECT_EQ(f.tpot, 0);
  EXPECT_EQ(f.requests_per_second,
            64 / (64 * f.prefill_replica_time_per_request));
}

TEST(ServingModel, PipelineStagesAddSendsAndMicrobatches) {
  SpecText text;
  text.pools = Aggregated(Pool(4, 2));
  const ServingFigures f = Analyze(text);
  EXPECT_GT(f.decode_send_time, 0);
  EXPECT_EQ(f.decode_step_time, 2 * (f.decode_stage_time + f.decode_send_time));
  EXPECT_EQ(f.prefill_time, 2 * f.prefill_stage_time + f.prefill_send_time);
}

TEST(ServingReport, TextAndExplainCoverEveryFigure) {
  const ServingSpec spec = Parse(DeepSeekV3OnH200());
  absl::StatusOr<ServingAnalysis> analysis = AnalyzeServing(spec);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  const std::string text = ServingAnalysisText(spec, *analysis);
  EXPECT_TRUE(absl::StartsWith(text, "blueprinting.serving_analysis/1\n"));
  for (const ServingFigureRow& row : ServingFigureTable()) {
    EXPECT_TRUE(absl::StrContains(text, absl::StrCat("\nlineage ", row.name,
                                                     " = ", row.formula)))
        << row.name;
    absl::StatusOr<std::string> tree =
        ExplainServingFigure(spec, *analysis, row.name);
    ASSERT_TRUE(tree.ok()) << row.name;
    EXPECT_TRUE(absl::StartsWith(*tree, absl::StrCat(row.name, " = ")));
  }
  absl::StatusOr<std::string> ttft =
      ExplainServingFigure(spec, *analysis, "ttft");
  EXPECT_TRUE(absl::StrContains(*ttft, "spec:workload.input_tokens = 1024"))
      << *ttft;
  EXPECT_TRUE(absl::StrContains(*ttft, "system:networks[0]\n")) << *ttft;
  absl::StatusOr<std::string> max =
      ExplainServingFigure(spec, *analysis, "max_concurrency");
  EXPECT_TRUE(absl::StrContains(*max, "system:mem1.GiB = 141")) << *max;
  EXPECT_TRUE(absl::StrContains(*max, "spec:memory_utilization = 0.9"))
      << *max;
  EXPECT_FALSE(ExplainServingFigure(spec, *analysis, "mfu").ok());
}

}  // namespace
}  // namespace blueprint

namespace blueprint {
namespace {

// What the checker accepts, the analysis prices: over a grid of mappings
// and workloads of a GQA and an MLA model, every accepted spec analyses
// without error to finite figures at least 0 (AnalyzeServing verifies that),
// and decode never falls under the weight-read roofline.
TEST(ServingModel, EveryAcceptedSpecOfAGridAnalyses) {
  int accepted = 0, rejected = 0;
  for (const char* model : {"\"llama3.1-8b\"", "\"deepseek-v3\""}) {
    for (int64_t t : {1, 2, 8}) {
      for (int64_t p : {1, 2}) {
        for (int64_t a : {1, 4}) {
          for (int64_t e : {1, 8}) {
            for (int64_t c : {1, 8, 64, 4096}) {
              for (bool disaggregated : {false, true}) {
                SpecText text;
                text.model = model;
                text.system = "\"h200_sxm_141g\"";
                text.weight_datatype = "float8";
                text.concurrency = c;
                text.output_tokens = c == 1 ? 1 : 256;
                const std::string pool = Pool(t, p, e, a);
                text.pools = disaggregated ? Disaggregated(pool, pool)
                                           : Aggregated(pool);
                const ServingSpec spec = Parse(text);
                if (!FindServingViolations(spec).empty()) {
                  ++rejected;
                  continue;
                }
                ++accepted;
                absl::StatusOr<ServingAnalysis> analysis =
                    AnalyzeServing(spec);
                ASSERT_TRUE(analysis.ok()) << text.Json() << "\n"
                                           << analysis.status();
                const ServingFigures& f = analysis->figures;
                EXPECT_GE(f.decode_step_time, f.decode_weight_read_time)
                    << text.Json();
                if (!spec.model.moe) {
                  EXPECT_GE(f.decode_step_time,
                            f.weight_bytes_per_rank / (4800 * kGB))
                      << text.Json();
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(accepted, 40);
  EXPECT_GT(rejected, 40);
}

}  // namespace
}  // namespace blueprint
