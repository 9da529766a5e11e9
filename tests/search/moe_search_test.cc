// The strategy search beyond Calculon's space (context and expert
// parallelism, every ZeRO stage) against a brute force: the space of
// core/search/README.md written out again, every mapping built as a spec
// field by field, judged by the checker and, when it passes, run through the
// full pipeline (lowering, planning, iteration and memory analyses). The
// search must give the same counts and the same ranked mappings with the
// same figures, bit for bit.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/pipeline/pipeline.h"
#include "core/search/search.h"
#include "core/search/search_json.h"
#include "core/spec/spec_json.h"
#include "core/search/test_models.h"
#include "core/spec/check.h"
#include "absl/strings/str_cat.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {


std::vector<int64_t> Factors(int64_t x) {
  std::vector<int64_t> out;
  for (int64_t i = 1; i <= x; ++i) {
    if (x % i == 0) out.push_back(i);
  }
  return out;
}

// A small model with routed and shared experts and, when `latent`, latent
// attention and a multi-token-prediction block.
TransformerModel TinyMoe(bool latent) {
  return test_models::WithExperts(
      CalculonModel("tiny-moe", 64, 256, 8, 8, 4, 32), 500,
      test_models::Experts(4, 2, 32, latent ? 64 : 0, latent ? "0111" : ""),
      latent ? std::optional(test_models::Latent(16, 16, 6, 2, 8))
             : std::nullopt,
      latent ? 1 : 0);
}

// Every choice of a training mapping, as text.
std::string MappingText(const MappingSpec& spec) {
  const auto& s = std::get<TransformerTrainingMappingSpec>(spec);
  const TransformerTrainingParallelism& p = s.parallelism;
  const auto* rs_ag =
      std::get_if<ReduceScatterAllGather>(&p.tensor.communication);
  const auto* interleaved =
      std::get_if<InterleavedOneForwardOneBackward>(&p.pipeline.schedule);
  return absl::StrCat(
      "t", p.tensor.degree, "@", p.tensor.network_tier, " ",
      TensorCommunicationName(p.tensor.communication),
      rs_ag != nullptr && rs_ag->all_gather_redo ? "+redo" : "", " ",
      TensorOverlapName(p.tensor.overlap), " cp", p.context.degree, "@",
      p.context.network_tier, ContextExchangeName(p.context.exchange), " p",
      p.pipeline.degree, "@", p.pipeline.network_tier, " v",
      interleaved != nullptr ? interleaved->virtual_stages : 1, " ",
      PipelineScheduleName(p.pipeline.schedule), " d", p.data.degree, "@",
      p.data.network_tier, " ", DataShardingName(p.data.sharding), " ep",
      p.expert.degree, "x", p.expert.tensor_degree, "@",
      p.expert.network_tier, " ", RecomputeName(p.recompute), " b",
      s.batch.global_batch_size, "/", s.batch.microbatch_size, " ",
      PrecisionName(s.options.precision), s.options.fused_activation ? " fused" : "",
      s.options.offload.weights ? " w" : "", s.options.offload.activations
          ? " a" : "", s.options.offload.optimizer ? " o" : "",
      p.data.overlap ? " dp_overlap" : "");
}

struct Entry {
  double sample_rate = 0;
  std::string spec;  // MappingText
  IterationFigures iteration;
  MemoryFigures memory;
};

struct BruteForceResult {
  int64_t total = 0, good = 0, bad = 0;
  std::vector<Entry> top;
  // Good mappings with cp > 1, ep > 1, ZeRO-2, ZeRO-3.
  int64_t context = 0, expert = 0, zero2 = 0, zero3 = 0;
};

// The expert all-to-all's tier: the smallest that holds ep * etp.
int64_t ExpertTier(const System& system, int64_t ranks) {
  int64_t best = -1;
  for (size_t i = 0; i < system.networks.size(); ++i) {
    if (system.networks[i].size < ranks) continue;
    if (best < 0 ||
        system.networks[i].size <
            system.networks[static_cast<size_t>(best)].size) {
      best = static_cast<int64_t>(i);
    }
  }
  return best;
}

// The search's space for these options (no offload: the system has no
// second memory tier; no DP overlap; TP overlap is not modelled with MoE).
BruteForceResult BruteForce(const TransformerModel& model,
                            const System& system, int64_t n,
                            int64_t max_batch, int64_t max_context, int top,
                            PrecisionAccounting precision) {
  BruteForceResult result;
  std::vector<Entry> good;
  const int64_t nets = static_cast<int64_t>(system.networks.size());
  const int64_t blocks = model.num_blocks;
  for (int64_t t : Factors(n)) {
    if (model.hidden % t || model.attn_heads % t) continue;
    for (int64_t cp : Factors(n / t)) {
      if (cp > max_context) break;
      if (cp > 1 && model.seq_size % (2 * cp) != 0) continue;
      for (int64_t p : Factors(std::min(n / (t * cp), blocks))) {
        if ((n / (t * cp)) % p || blocks % p) continue;
        const int64_t d = n / (t * cp * p);
        if (d > max_batch) continue;
        const std::vector<int64_t> interleavings =
            p == 1 ? std::vector<int64_t>{1} : Factors(blocks / p);
        for (int64_t v : interleavings) {
          for (int64_t ep : Factors(model.moe->experts)) {
            for (int64_t etp : t > 1 ? std::vector<int64_t>{t, 1}
                                     : std::vector<int64_t>{1}) {
              if ((t * cp * d) % (ep * etp) != 0) continue;
              const int64_t en = ep > 1 ? ExpertTier(system, ep * etp) : 0;
              const int64_t batch = max_batch / d * d;
              for (RecomputePolicy recompute :
                   {RecomputePolicy::kFull, RecomputePolicy::kAttentionOnly,
                    RecomputePolicy::kNone}) {
                std::vector<DataSharding> shardings = {NoSharding{}};
                if (d > 1) {
                  shardings = {ShardParameters{}, ShardGradients{},
                               ShardOptimizer{}, NoSharding{}};
                }
                for (const DataSharding& sharding : shardings) {
                  std::vector<TensorCommunication> comms = {
                      AllReduce{}, EdgeReduceScatterAllGather{},
                      ReduceScatterAllGather{true},
                      ReduceScatterAllGather{false}};
                  if (recompute == RecomputePolicy::kFull) {
                    comms.erase(comms.begin() + 2);  // no redo with full
                  }
                  for (const TensorCommunication& comm : comms) {
                    for (int64_t b : Factors(batch / d)) {
                      if ((b * model.seq_size) % t) continue;
                      for (int64_t tn = 0; tn < (t > 1 ? nets : 1); ++tn) {
                        for (int64_t cn = 0; cn < (cp > 1 ? nets : 1); ++cn) {
                          for (int64_t pn = 0; pn < (p > 1 ? nets : 1);
                               ++pn) {
                            for (int64_t dn = 0; dn < (d > 1 ? nets : 1);
                                 ++dn) {
                              TransformerTrainingMappingSpec s;
                              s.model = model;
                              s.system = system;
                              TransformerTrainingParallelism& par =
                                  s.parallelism;
                              par.tensor = {t, comm, TensorOverlap::kNone,
                                            tn};
                              par.pipeline.degree = p;
                              par.pipeline.network_tier = pn;
                              par.pipeline.schedule =
                                  p == 1   ? PipelineSchedule{SingleStage{}}
                                  : v == 1 ? PipelineSchedule{
                                                 OneForwardOneBackward{}}
                                           : PipelineSchedule{
                                                 InterleavedOneForwardOneBackward{
                                                     v}};
                              par.data = {d, sharding, false, dn};
                              par.context = {cp, ContextExchange::kRing, cn};
                              par.expert = {ep, etp, en < 0 ? 0 : en};
                              par.recompute = recompute;
                              s.batch = {batch, b};
                              s.options.datatype = DataType::kFloat16;
                              s.options.precision = precision;
                              s.options.fused_activation = true;
                              ++result.total;
                              absl::StatusOr<TypedProgram> program =
                                  CheckSpec(s);
                              if (!program.ok()) {
                                ++result.bad;
                                continue;
                              }
                              absl::StatusOr<PipelineResult> full =
                                  RunPipeline(*program);
                              EXPECT_THAT(full, IsOk());
                              if (!full.ok() ||
                                  !full->memory.violations.empty()) {
                                ++result.bad;
                                continue;
                              }
                              ++result.good;
                              result.context += cp > 1 ? 1 : 0;
                              result.expert += ep > 1 ? 1 : 0;
                              result.zero2 += std::holds_alternative<
                                                  ShardGradients>(sharding)
                                                  ? 1
                                                  : 0;
                              result.zero3 += std::holds_alternative<
                                                  ShardParameters>(sharding)
                                                  ? 1
                                                  : 0;
                              Entry e;
                              e.sample_rate =
                                  full->iteration.figures.sample_rate;
                              e.spec = MappingText(s);
                              e.iteration = full->iteration.figures;
                              e.memory = full->memory.figures;
                              good.push_back(std::move(e));
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
        }
      }
    }
  }
  std::stable_sort(good.begin(), good.end(), [](const Entry& x, const Entry& y) {
    return x.sample_rate > y.sample_rate;
  });
  if (good.size() > static_cast<size_t>(top)) good.resize(top);
  result.top = std::move(good);
  return result;
}

void ExpectSearchEqualsBruteForce(const TransformerModel& model,
                                  const System& system, int64_t procs,
                                  int64_t max_batch, int64_t max_context,
                                  int top, PrecisionAccounting precision) {
  const BruteForceResult brute = BruteForce(model, system, procs, max_batch,
                                            max_context, top, precision);
  SearchOptions o;
  o.procs = procs;
  o.max_batch = max_batch;
  o.datatype = DataType::kFloat16;
  o.top = top;
  o.dp_overlap = false;
  o.max_context = max_context;
  o.every_sharding = true;
  o.precision = precision;
  for (bool exhaustive : {false, true}) {
    o.exhaustive = exhaustive;
    absl::StatusOr<SearchResult> result = RunSearch(model, system, o);
    ASSERT_THAT(result, IsOk());
    EXPECT_GT(brute.good, 0);
    EXPECT_GT(brute.bad, 0);
    EXPECT_GT(brute.context, 0);
    EXPECT_GT(brute.expert, 0);
    EXPECT_GT(brute.zero2, 0);
    EXPECT_GT(brute.zero3, 0);
    EXPECT_EQ(result->total_executions, brute.total);
    EXPECT_EQ(result->good_executions, brute.good);
    EXPECT_EQ(result->bad_executions, brute.bad);
    ASSERT_EQ(result->top.size(), brute.top.size());
    for (size_t i = 0; i < brute.top.size(); ++i) {
      const RankedExecution& ours = result->top[i];
      const Entry& theirs = brute.top[i];
      EXPECT_EQ(MappingText(TrainingSpecOf(model, system, ours.mapping)),
                theirs.spec)
          << "rank " << i + 1;
      EXPECT_EQ(ours.iteration.sample_rate, theirs.sample_rate)
          << "rank " << i + 1;
      EXPECT_EQ(ours.iteration.total_time, theirs.iteration.total_time);
      EXPECT_EQ(ours.iteration.mfu, theirs.iteration.mfu);
      EXPECT_EQ(ours.memory.max_stage_mem_tier1_req,
                theirs.memory.max_stage_mem_tier1_req);
    }
  }
}

System SmallSystem(double gib) {
  System system = test_programs::A100System();
  system.mem1.gib = gib;
  system.mem2.gib = 0;  // no offload
  return system;
}

TEST(MoeSearchTest, MoeSearchEqualsBruteForceThroughTheFullPipeline) {
  ExpectSearchEqualsBruteForce(TinyMoe(false), SmallSystem(0.0015), 4, 4, 2,
                               25, PrecisionAccounting::kCalculon);
}

TEST(MoeSearchTest, LatentMoeSearchEqualsBruteForceThroughTheFullPipeline) {
  ExpectSearchEqualsBruteForce(TinyMoe(true), SmallSystem(0.006), 4, 4, 2, 25,
                               PrecisionAccounting::kMegatronMixed);
}

// --specs: each ranked mapping's spec, read back as JSON, is accepted by the
// checker and analyses to the figures the search ranked it by, so loading
// it (the page's "Load") shows that mapping with its cp, ep and ZeRO stage.
TEST(MoeSearchTest, RankedSpecsAnalyseToTheRankedFigures) {
  const TransformerModel model = TinyMoe(true);
  SearchOptions o;
  o.procs = 4;
  o.max_batch = 4;
  o.datatype = DataType::kFloat16;
  o.top = 5000;  // deep enough to reach cp and ep mappings
  o.max_context = 2;
  o.every_sharding = true;
  o.precision = PrecisionAccounting::kMegatronMixed;
  absl::StatusOr<SearchResult> result =
      RunSearch(model, SmallSystem(0.006), o);
  ASSERT_THAT(result, IsOk());
  const nlohmann::json json = SearchResultJsonValue(*result, true);
  ASSERT_EQ(json["top"].size(), result->top.size());
  ASSERT_FALSE(result->top.empty());
  EXPECT_FALSE(SearchResultJsonValue(*result)["top"][0].contains("spec"));
  int64_t context = 0, expert = 0, sharded = 0;
  for (size_t i = 0; i < result->top.size(); ++i) {
    const nlohmann::json& entry = json["top"][i];
    absl::StatusOr<MappingSpec> spec = ParseSpecJson(entry["spec"].dump());
    ASSERT_THAT(spec, IsOk()) << "rank " << i + 1;
    absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
    ASSERT_THAT(program, IsOk()) << "rank " << i + 1;
    absl::StatusOr<PipelineResult> run = RunPipeline(*program);
    ASSERT_THAT(run, IsOk()) << "rank " << i + 1;
    EXPECT_EQ(run->iteration.figures.total_time,
              result->top[i].iteration.total_time)
        << "rank " << i + 1;
    EXPECT_EQ(entry["stats"]["total_time"].get<double>(),
              run->iteration.figures.total_time);
    const DerivedValues& d = program->derived;
    context += d.context > 1;
    expert += d.expert > 1;
    sharded += d.sharding != ShardingStage::kNone;
  }
  // The ranked mappings use each new dimension, so the test sees them.
  EXPECT_GT(context, 0);
  EXPECT_GT(expert, 0);
  EXPECT_GT(sharded, 0);
}

}  // namespace
}  // namespace blueprint
