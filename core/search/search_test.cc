#include "core/search/search.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/adapters/megatron_layout.h"
#include "core/analysis/schedule.h"
#include "core/pipeline/pipeline.h"
#include "core/plan/plan.h"
#include "core/adapters/calculon.h"
#include "core/search/full_pipeline_testing.h"
#include "core/search/search_json.h"
#include "core/search/test_models.h"
#include "core/spec/check.h"
#include "core/spec/spec_json.h"
#include "core/spec/spec_schedule.h"
#include "core/testing/programs.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

// A small model (8 blocks) whose search space has every kind of choice.
TransformerModel SmallModel() { return CalculonModel("small", 256, 1024, 16, 16, 8, 64); }

SearchOptions Options(int64_t procs, int64_t max_batch, int top) {
  SearchOptions o;
  o.procs = procs;
  o.max_batch = max_batch;
  o.datatype = DataType::kFloat16;
  o.top = top;
  return o;
}

// Everything observable of a result: counts, and the ranked mappings with
// their stats, as JSON text.
std::string Observable(const SearchResult& r) { return SearchResultJson(r); }

using search_testing::ExpectTheFullPipelinesFigures;

void ExpectExhaustiveEqualsPruned(const TransformerModel& model,
                                  const System& system, SearchOptions options) {
  options.exhaustive = false;
  absl::StatusOr<SearchResult> pruned = RunSearch(model, system, options);
  options.exhaustive = true;
  absl::StatusOr<SearchResult> exhaustive = RunSearch(model, system, options);
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  ASSERT_TRUE(exhaustive.ok()) << exhaustive.status();
  EXPECT_GT(pruned->total_executions, 0);
  EXPECT_EQ(pruned->total_executions,
            pruned->good_executions + pruned->bad_executions);
  EXPECT_EQ(Observable(*pruned), Observable(*exhaustive));
  // The exhaustive mode evaluates every good mapping; the pruned one fewer.
  EXPECT_EQ(exhaustive->work.iteration_evaluations,
            exhaustive->good_executions);
  EXPECT_LE(pruned->work.iteration_evaluations,
            exhaustive->work.iteration_evaluations);
}

// The A100 system, the same with `small` GiB of HBM (many mappings do not
// fit) and 0.2 GiB of offload memory, and the same in roofline mode.
std::vector<System> TestSystems(double small) {
  const System a100 = test_programs::A100System();
  System small_memory = a100;
  small_memory.mem1.gib = small;
  small_memory.mem2.gib = 0.2;
  System roofline = a100;
  roofline.processing_mode = ProcessingMode::kRoofline;
  return {a100, small_memory, roofline};
}

TEST(SearchTest, ExhaustiveEqualsPrunedOnSmallSearches) {
  const TransformerModel model = SmallModel();
  for (const System& system : TestSystems(0.05)) {
    for (int top : {1, 40}) {
      SearchOptions o = Options(8, 4, top);
      ExpectExhaustiveEqualsPruned(model, system, o);
      o = Options(4, 8, top);
      o.mbs_break = true;
      o.fused_activation = {true, false};
      ExpectExhaustiveEqualsPruned(model, system, o);
      o = Options(8, 6, top);
      o.tp_overlap = false;
      o.dp_overlap = false;
      ExpectExhaustiveEqualsPruned(model, system, o);
    }
  }
}

TEST(SearchTest, CountsAddUpAndTopIsSortedAndValid) {
  System system = test_programs::A100System();
  system.mem1.gib = 0.05;
  SearchOptions o = Options(16, 8, 25);
  absl::StatusOr<SearchResult> r = RunSearch(SmallModel(), system, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->good_executions, 0);
  EXPECT_GT(r->bad_executions, 0);
  EXPECT_EQ(r->total_executions, r->good_executions + r->bad_executions);
  ASSERT_EQ(r->top.size(), 25u);
  for (size_t i = 0; i < r->top.size(); ++i) {
    const RankedExecution& e = r->top[i];
    EXPECT_LE(e.memory.proc_mem_tier1_cap_req, e.memory.tier1_capacity);
    const TransformerTrainingParallelism& par = e.mapping.parallelism;
    EXPECT_EQ(par.tensor.degree * par.pipeline.degree * par.data.degree, 16);
    if (i > 0) {
      EXPECT_GE(r->top[i - 1].iteration.sample_rate,
                e.iteration.sample_rate);
    }
  }
}

TEST(SearchTest, FewerGoodMappingsThanTopKeepsThemAll) {
  System system = test_programs::A100System();
  system.mem1.gib = 0.02;
  absl::StatusOr<SearchResult> r =
      RunSearch(SmallModel(), system, Options(4, 4, 100000));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(static_cast<int64_t>(r->top.size()), r->good_executions);
}

TEST(SearchTest, NoValidMapping) {
  System system = test_programs::A100System();
  system.mem1.gib = 1e-6;
  absl::StatusOr<SearchResult> r =
      RunSearch(SmallModel(), system, Options(8, 8, 5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->total_executions, 0);
  EXPECT_EQ(r->good_executions, 0);
  EXPECT_TRUE(r->top.empty());
  EXPECT_TRUE(absl::StrContains(SearchResultText(*r), "no valid mapping"));
}

TEST(SearchTest, MicrobatchBreakTriesFewerMappings) {
  System system = test_programs::A100System();
  system.mem1.gib = 0.05;
  SearchOptions o = Options(8, 8, 5);
  absl::StatusOr<SearchResult> all = RunSearch(SmallModel(), system, o);
  o.mbs_break = true;
  absl::StatusOr<SearchResult> broken = RunSearch(SmallModel(), system, o);
  ASSERT_TRUE(all.ok() && broken.ok());
  EXPECT_LT(broken->total_executions, all->total_executions);
}

// The checker derives the same program from the spec as MappingProgram,
// and MakeStepShape the same step shape as MappingStepShape.
TEST(SearchTest, MappingProgramAndStepShapeMatchTheCheckedProgram) {
  const TransformerModel model = CalculonModel("uneven", 256, 1024, 16, 16, 10, 64);
  const System system = test_programs::A100System();
  int checked = 0;
  for (int64_t p : {1, 2, 4}) {
    for (const TensorCommunication& comm :
         {TensorCommunication{AllReduce{}},
          TensorCommunication{EdgeReduceScatterAllGather{}},
          TensorCommunication{ReduceScatterAllGather{}}}) {
      for (bool flag : {true, false}) {
        CalculonExecution e;
        e.tensor = 2;
        e.pipeline = p;
        e.data = 4;
        e.num_procs = 8 * p;
        e.tensor_net = 0;
        e.pipeline_net = flag ? 1 : 0;
        e.data_net = 1;
        e.batch_size = 48;
        e.microbatch_size = 3;
        e.interleaving = p == 2 && flag ? 5 : 1;
        e.recompute = flag ? RecomputePolicy::kAttentionOnly
                           : RecomputePolicy::kFull;
        e.comm = comm;
        if (flag && std::holds_alternative<ReduceScatterAllGather>(comm)) {
          e.comm = ReduceScatterAllGather{true};
        }
        e.tp_overlap = flag ? TensorOverlap::kPipe : TensorOverlap::kNone;
        e.optimizer_sharding = flag;
        e.dp_overlap = !flag;
        e.offload = {flag, !flag, flag};
        e.fused_activation = flag;
        absl::StatusOr<TypedProgram> checked_program =
            CheckSpec(SpecOf(e, model, system));
        ASSERT_TRUE(checked_program.ok()) << checked_program.status();
        const TrainingMapping mapping = TrainingMappingOf(e, model);
        const TypedProgram ours = MappingProgram(model, system, mapping);
        const DerivedValues& a = ours.derived;
        const DerivedValues& b = checked_program->derived;
#define BP_EXPECT_SAME(type, name, initial) EXPECT_EQ(a.name, b.name) << #name;
        BP_DERIVED_VALUES(BP_EXPECT_SAME)
#undef BP_EXPECT_SAME

        const StepShape x = MappingStepShape(model, system, mapping);
        const StepShape y = MakeStepShape(*checked_program);
        EXPECT_EQ(x.training, y.training);
        EXPECT_EQ(x.p, y.p);
        EXPECT_EQ(x.v, y.v);
        EXPECT_EQ(x.m, y.m);
        EXPECT_EQ(x.d, y.d);
        EXPECT_EQ(x.blocks_per_stage, y.blocks_per_stage);
        EXPECT_EQ(x.blocks_per_chunk, y.blocks_per_chunk);
        EXPECT_EQ(x.bubble_reduction_blocks, y.bubble_reduction_blocks);
        EXPECT_EQ(x.global_batch, y.global_batch);
        EXPECT_EQ(x.recompute, y.recompute);
        EXPECT_EQ(x.optimizer_sharding, y.optimizer_sharding);
        EXPECT_EQ(x.data_overlap, y.data_overlap);
        EXPECT_EQ(x.offload.weights, y.offload.weights);
        EXPECT_EQ(x.offload.activations, y.offload.activations);
        EXPECT_EQ(x.offload.optimizer, y.offload.optimizer);
        EXPECT_EQ(x.pipeline_message_bytes, y.pipeline_message_bytes);
        // Same tiers (y points into the program's copy of the system).
        EXPECT_EQ(x.pipeline_net - system.networks.data(),
                  y.pipeline_net - checked_program->system().networks.data());
        EXPECT_EQ(x.data_net - system.networks.data(),
                  y.data_net - checked_program->system().networks.data());
        EXPECT_EQ(x.data_net_is_tensor_net, y.data_net_is_tensor_net);
        EXPECT_EQ(x.data_net_is_pipeline_net, y.data_net_is_pipeline_net);
        EXPECT_EQ(x.mem1->gib, y.mem1->gib);
        EXPECT_EQ(x.mem2->gib, y.mem2->gib);
        EXPECT_EQ(x.matrix_peak_flops, y.matrix_peak_flops);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 18);
}

TEST(SearchTest, ProgressIsMonotoneAndEndsAtOne) {
  std::vector<double> reported;
  absl::StatusOr<SearchResult> r =
      RunSearch(SmallModel(), test_programs::A100System(), Options(8, 4, 3),
                [&](double f) { reported.push_back(f); });
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_GE(reported.size(), 10u);
  for (size_t i = 1; i < reported.size(); ++i) {
    EXPECT_LE(reported[i - 1], reported[i]);
  }
  EXPECT_GE(reported.front(), 0.0);
  EXPECT_EQ(reported.back(), 1.0);
}

TEST(SearchTest, CancelStopsTheSearch) {
  int polls = 0;
  absl::StatusOr<SearchResult> r =
      RunSearch(SmallModel(), test_programs::A100System(), Options(16, 32, 3),
                nullptr, [&]() { return ++polls > 5; });
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(polls, 6);
}

TEST(SearchTest, RejectsUnusableInputs) {
  const System system = test_programs::A100System();
  SearchOptions o = Options(0, 0, 0);
  o.fused_activation.clear();
  absl::StatusOr<SearchResult> r = RunSearch(SmallModel(), system, o);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(r.status().message());
  EXPECT_TRUE(absl::StrContains(message, "--procs (0)")) << message;
  EXPECT_TRUE(absl::StrContains(message, "--max-batch (0)")) << message;
  EXPECT_TRUE(absl::StrContains(message, "--top (0)")) << message;
  EXPECT_TRUE(absl::StrContains(message, "--fused-activation")) << message;

  o = Options(8, 8, 1);
  o.datatype = DataType::kFloat8;  // not in a100_80g
  r = RunSearch(SmallModel(), system, o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);

  TransformerModel bad = SmallModel();
  bad.num_blocks = 0;
  r = RunSearch(bad, system, Options(8, 8, 1));
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "model.num_blocks"));

  System no_networks = system;
  no_networks.networks.clear();
  r = RunSearch(SmallModel(), no_networks, Options(8, 8, 1));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

// A feed-forward size t does not divide: those mappings are bad (Calculon
// asserts; the checker rejects them).
TEST(SearchTest, FeedforwardNotDividedByTensorIsBad) {
  const TransformerModel model = CalculonModel("odd_ff", 256, 1001, 16, 16, 8, 64);
  SearchOptions o = Options(2, 2, 5);
  absl::StatusOr<SearchResult> r =
      RunSearch(model, test_programs::A100System(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const RankedExecution& e : r->top) {
    EXPECT_EQ(e.mapping.parallelism.tensor.degree, 1);
  }
  ExpectExhaustiveEqualsPruned(model, test_programs::A100System(), o);
}

// A model of today (GQA, gated MLP, RMSNorm, an untied vocabulary): every
// ranked mapping's figures, the first and last stage's work included, are
// the full pipeline's on the same mapping, bit for bit.
TEST(SearchTest, VocabularyModelsRankWithTheirStagesWork) {
  TransformerModel model = SmallModel();
  model.kv_heads = 4;
  model.mlp = MlpType::kGated;
  model.norm = NormType::kRmsNorm;
  model.vocabulary.size = 5000;
  model.vocabulary.tied = false;
  const System system = test_programs::A100System();
  SearchOptions options = Options(8, 16, 10);
  absl::StatusOr<SearchResult> result = RunSearch(model, system, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_FALSE(result->top.empty());
  for (const RankedExecution& r : result->top) {
    absl::StatusOr<TypedProgram> program =
        CheckSpec(TrainingSpecOf(model, system, r.mapping));
    ASSERT_TRUE(program.ok()) << program.status();
    EXPECT_GT(r.iteration.stage_imbalance_time, 0);
    ExpectTheFullPipelinesFigures(r, *program);
  }
  ExpectExhaustiveEqualsPruned(model, system, options);
}

//----- Context and expert parallelism, every ZeRO stage ----------------------

// SmallModel with a mixture of experts (routed and shared, a layer pattern
// when `pattern`), latent attention when `latent`, GQA, an untied
// vocabulary and (with latent attention) a multi-token-prediction block.
TransformerModel MoeModel(bool pattern, bool latent) {
  return test_models::WithExperts(
      SmallModel(), 5000,
      test_models::Experts(8, 2, 128, latent ? 256 : 0,
                           pattern ? "01111111" : ""),
      latent ? std::optional(test_models::Latent(64, 32, 12, 4, 16))
             : std::nullopt,
      latent ? 1 : 0);
}

// Every option beyond Calculon's space.
SearchOptions EveryDimension(int64_t procs, int64_t max_batch, int top) {
  SearchOptions o = Options(procs, max_batch, top);
  o.max_context = 4;
  o.context_exchange = {ContextExchange::kRing, ContextExchange::kAllGather};
  o.every_sharding = true;
  o.every_schedule = true;
  return o;
}

TEST(SearchTest, MoeExhaustiveEqualsPruned) {
  for (const System& system : TestSystems(0.08)) {
    for (int top : {1, 40}) {
      SearchOptions o = EveryDimension(8, 8, top);
      o.dp_overlap = false;
      ExpectExhaustiveEqualsPruned(MoeModel(false, false), system, o);
      o = EveryDimension(4, 8, top);
      o.mbs_break = true;
      o.precision = PrecisionAccounting::kMegatronMixed;
      ExpectExhaustiveEqualsPruned(MoeModel(true, true), system, o);
    }
  }
}

// `system` with bfloat16 at its float16 rates (A100), for Megatron-LM's
// bfloat16 precision.
System WithBFloat16(System system) {
  for (Processor* engine : {&system.matrix, &system.vector}) {
    engine->rates[DataType::kBFloat16] = engine->rates.at(DataType::kFloat16);
  }
  return system;
}

// The refined profile's corrections (flash and causal attention, the
// selective recomputation of the core attention, the scheduled in-flight
// microbatches, the float32 gradient reduction of bfloat16 under
// megatron_mixed, the hierarchical expert all-to-all) in every mapping: the
// pruned search still finds the exhaustive one's result.
TEST(SearchTest, RefinedProfileExhaustiveEqualsPruned) {
  for (const System& tested : TestSystems(0.08)) {
    const System system = WithBFloat16(tested);
    SearchOptions o = EveryDimension(8, 8, 40);
    o.profile = ModelProfile::kRefined;
    o.datatype = DataType::kBFloat16;
    o.precision = PrecisionAccounting::kMegatronMixed;
    ExpectExhaustiveEqualsPruned(MoeModel(false, true), system, o);
  }
}

TEST(SearchTest, DenseContextAndShardingExhaustiveEqualsPruned) {
  SearchOptions o = EveryDimension(8, 8, 20);
  o.fused_activation = {true, false};
  ExpectExhaustiveEqualsPruned(SmallModel(), test_programs::A100System(), o);
}

// The options' defaults are Calculon's space: a dense model enumerates the
// same mappings whatever the model's vocabulary and architecture say.
TEST(SearchTest, DefaultsEnumerateCalculonsSpace) {
  SearchOptions o = Options(8, 8, 5);
  absl::StatusOr<SearchResult> r =
      RunSearch(SmallModel(), test_programs::A100System(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->dimensions.context);
  EXPECT_FALSE(r->dimensions.expert);
  EXPECT_FALSE(r->dimensions.sharding);
  EXPECT_FALSE(r->dimensions.schedule);
  EXPECT_EQ(r->work.schedule_simulations, 0);
  for (const RankedExecution& e : r->top) {
    const TransformerTrainingParallelism& par = e.mapping.parallelism;
    EXPECT_EQ(par.context.degree, 1);
    EXPECT_EQ(par.expert.degree, 1);
    EXPECT_FALSE(SimulatedScheduleKind(par.pipeline.schedule).has_value());
  }
}

// The best 20,000 mappings of a search over every new dimension hold each
// new dimension; those with one (a dozen of each kind) and the best are
// specs the checker accepts, and the full pipeline on them gives the
// figures the search ranked them by, bit for bit.
void ExpectRankedMappingsMatchThePipeline(const TransformerModel& model,
                                          const System& system,
                                          SearchOptions options) {
  options.top = 20000;
  absl::StatusOr<SearchResult> result = RunSearch(model, system, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_FALSE(result->top.empty());

  EXPECT_TRUE(result->dimensions.context);
  EXPECT_EQ(result->dimensions.expert, model.moe.has_value());
  EXPECT_TRUE(result->dimensions.sharding);
  EXPECT_TRUE(result->dimensions.schedule);
  // How many of each kind are run through the pipeline.
  constexpr int kEach = 12;
  int best = 0, context = 0, ring = 0, expert = 0, expert_whole = 0,
      zero2 = 0, zero3 = 0, gpipe = 0, zero_bubble = 0, dualpipe = 0,
      zero_bubble_v = 0, zero_bubble_h2 = 0, two_stages = 0;
  for (const RankedExecution& r : result->top) {
    const TransformerTrainingParallelism& par = r.mapping.parallelism;
    const int64_t cp = par.context.degree;
    const int64_t ep = par.expert.degree;
    const ShardingStage sharding = ShardingStageOf(par.data.sharding);
    const std::optional<ScheduleKind> schedule =
        SimulatedScheduleKind(par.pipeline.schedule);
    const bool is_ring = cp > 1 && par.context.exchange == ContextExchange::kRing;
    const bool is_whole = ep > 1 && par.expert.tensor_degree == 1 &&
                          par.tensor.degree > 1;
    bool check = false;
    for (auto [in, count] :
         {std::pair<bool, int*>{true, &best}, {cp > 1, &context},
          {is_ring, &ring}, {ep > 1, &expert},
          {is_whole, &expert_whole},
          {sharding == ShardingStage::kGradients, &zero2},
          {sharding == ShardingStage::kParameters, &zero3},
          {schedule == ScheduleKind::kGPipe, &gpipe},
          {schedule == ScheduleKind::kZbH1, &zero_bubble},
          {schedule == ScheduleKind::kDualPipeV, &dualpipe},
          {schedule == ScheduleKind::kZbV, &zero_bubble_v},
          {schedule == ScheduleKind::kZbH2, &zero_bubble_h2},
          {schedule == ScheduleKind::kDualPipe, &two_stages}}) {
      if (in && *count < kEach) {
        ++*count;
        check = true;
      }
    }
    if (!check) continue;
    absl::StatusOr<TypedProgram> program =
        CheckSpec(TrainingSpecOf(model, system, r.mapping));
    ASSERT_TRUE(program.ok()) << program.status();
    EXPECT_EQ(program->derived.context, cp);
    EXPECT_EQ(program->derived.expert, ep);
    EXPECT_EQ(program->derived.sharding, sharding);
    // dualpipe: two stages per rank, never with DP overlap (the checker's).
    EXPECT_EQ(program->derived.stages_per_rank,
              schedule == ScheduleKind::kDualPipe ? 2 : 1);
    EXPECT_EQ(program->options().precision, options.precision);
    EXPECT_EQ(program->options().profile, options.profile);
    EXPECT_EQ(SimulatedScheduleKind(program->pipeline().schedule), schedule);
    EXPECT_EQ(MappingStepShape(model, system, r.mapping).simulated_schedule,
              MakeStepShape(*program).simulated_schedule);
    ExpectTheFullPipelinesFigures(r, *program);
  }
  EXPECT_EQ(context, kEach);
  EXPECT_EQ(ring, kEach);
  EXPECT_EQ(zero2, kEach);
  EXPECT_EQ(zero3, kEach);
  EXPECT_EQ(gpipe, kEach);
  EXPECT_EQ(zero_bubble, kEach);
  EXPECT_EQ(dualpipe, kEach);
  EXPECT_EQ(zero_bubble_v, kEach);
  EXPECT_EQ(zero_bubble_h2, kEach);
  EXPECT_EQ(two_stages, kEach);
  if (model.moe.has_value()) {
    EXPECT_EQ(expert, kEach);
    EXPECT_EQ(expert_whole, kEach);
  }
}

TEST(SearchTest, NewDimensionsRankAndMatchTheFullPipeline) {
  System system = test_programs::A100System();
  system.mem1.gib = 0.5;  // tight enough that sharding matters
  SearchOptions o = EveryDimension(8, 8, 1);
  o.dp_overlap = false;
  ExpectRankedMappingsMatchThePipeline(MoeModel(false, false), system, o);
  o.precision = PrecisionAccounting::kMegatronMixed;
  ExpectRankedMappingsMatchThePipeline(MoeModel(true, true), system, o);
  ExpectRankedMappingsMatchThePipeline(SmallModel(), system, o);
}

// --profile refined: every ranked mapping's spec carries the profile, and
// the full pipeline on it (with the refined corrections) gives the figures
// the search ranked it by, bit for bit.
TEST(SearchTest, RefinedProfileRanksByTheRefinedModel) {
  System system = WithBFloat16(test_programs::A100System());
  system.mem1.gib = 0.5;
  SearchOptions o = EveryDimension(8, 8, 1);
  o.dp_overlap = false;
  o.profile = ModelProfile::kRefined;
  o.datatype = DataType::kBFloat16;
  o.precision = PrecisionAccounting::kMegatronMixed;
  const TransformerModel model = MoeModel(true, true);
  ExpectRankedMappingsMatchThePipeline(model, system, o);
  ExpectRankedMappingsMatchThePipeline(SmallModel(), system, o);
  // The corrections change the ranking's figures, not the space.
  absl::StatusOr<SearchResult> refined = RunSearch(model, system, o);
  o.profile = ModelProfile::kCalculon;
  absl::StatusOr<SearchResult> calculon = RunSearch(model, system, o);
  ASSERT_TRUE(refined.ok()) << refined.status();
  ASSERT_TRUE(calculon.ok()) << calculon.status();
  EXPECT_EQ(refined->total_executions, calculon->total_executions);
  EXPECT_NE(refined->top.front().iteration.sample_rate,
            calculon->top.front().iteration.sample_rate);

  // With a first tier of 4 of the 8 processors, an expert all-to-all over
  // 8 ranks is hierarchical: such a mapping also ranks by the full
  // pipeline's figures.
  system.networks[0].size = 4;
  system.networks[0].must_be_filled = false;
  o = Options(8, 8, 1000000);  // every good mapping of Calculon's space
  o.profile = ModelProfile::kRefined;
  o.datatype = DataType::kBFloat16;
  o.precision = PrecisionAccounting::kMegatronMixed;
  refined = RunSearch(model, system, o);
  ASSERT_TRUE(refined.ok()) << refined.status();
  bool hierarchical = false;
  for (const RankedExecution& r : refined->top) {
    if (r.mapping.parallelism.expert.degree <= 4) continue;
    absl::StatusOr<TypedProgram> program =
        CheckSpec(TrainingSpecOf(model, system, r.mapping));
    ASSERT_TRUE(program.ok()) << program.status();
    if (ExpertLocalPeersOf(*program, program->derived.expert_network) > 1) {
      hierarchical = true;
      ExpectTheFullPipelinesFigures(r, *program);
      break;
    }
  }
  EXPECT_TRUE(hierarchical);
}

// --stage-layouts all on 9 blocks over 8 processors: p = 2, 4 and 8 do not
// divide the blocks, so Calculon's space has p = 1 only. Every p is ranked
// with the uneven layout and Calculon's schedules only; one mapping of each
// (p, v) passes the checker and gives the full pipeline's figures bit for
// bit.
// With the layer pattern, p = 4 and p = 8 price the same all-MoE stage, so
// the block table lowers one block for both (BlockTable::Canonical): the
// full pipeline on each p's spec proves the figures the same.
TEST(SearchTest, UnevenStagesRankAndMatchTheFullPipeline) {
  for (bool pattern : {false, true}) {
    const TransformerModel model = test_models::WithExperts(
        CalculonModel("nine", 256, 1024, 16, 16, 9, 64), 5000,
        test_models::Experts(8, 2, 128, 0, pattern ? "011111111" : ""),
        std::nullopt);
    System system = test_programs::A100System();
    SearchOptions o = Options(8, 16, 20000);
    o.every_schedule = true;
    absl::StatusOr<SearchResult> calculon = RunSearch(model, system, o);
    ASSERT_TRUE(calculon.ok()) << calculon.status();
    for (const RankedExecution& r : calculon->top) {
      EXPECT_EQ(r.mapping.parallelism.pipeline.degree, 1);
    }
    o.uneven_stages = true;
    absl::StatusOr<SearchResult> result = RunSearch(model, system, o);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_TRUE(result->dimensions.stage_layout);
    EXPECT_GT(result->total_executions, calculon->total_executions);
    std::set<std::pair<int64_t, int64_t>> checked;  // (p, v)
    for (const RankedExecution& r : result->top) {
      const PipelineParallel& pipeline = r.mapping.parallelism.pipeline;
      const int64_t p = pipeline.degree;
      if (p > 1) {
        // The simulated schedules need equal stages.
        EXPECT_FALSE(SimulatedScheduleKind(pipeline.schedule).has_value());
      }
      if (!checked.insert({p, VirtualStages(pipeline.schedule)}).second) {
        continue;
      }
      absl::StatusOr<TypedProgram> program =
          CheckSpec(TrainingSpecOf(model, system, r.mapping));
      ASSERT_TRUE(program.ok()) << program.status();
      EXPECT_EQ(program->pipeline().stage_layout,
                p > 1 ? StageLayout::kUneven : StageLayout::kEven);
      ExpectTheFullPipelinesFigures(r, *program);
    }
    // v divides ceil(9 / p): 5 blocks per stage for p = 2, 3 for p = 4, 2
    // for p = 8.
    EXPECT_EQ(checked, (std::set<std::pair<int64_t, int64_t>>{
                           {1, 1}, {2, 1}, {2, 5}, {4, 1}, {4, 3}, {8, 1},
                           {8, 2}}));
    o.top = 5;
    ExpectExhaustiveEqualsPruned(model, system, o);
  }
}

// --stage-layouts megatron on 14 blocks over 8 processors: p = 4 and 8 do
// not divide the blocks, and each is offered as Megatron-LM's
// --decoder-first/last-pipeline-num-layers lay it out (the middle stages
// even, the first and the last the rest), with Calculon's schedules only
// (--schedules all adds none: the search simulates no layout). Every
// ranked mapping's layout is one PipelineLayoutOf makes; one mapping of each
// (p, v, layout, schedule) passes the checker and gives the full pipeline's
// figures bit for bit. With the layer pattern "01111110111111" (blocks 0
// and 7 dense) p = 1 and p = 2 price stages of 6/7 MoE blocks, and every
// layout a busiest rank of MoE blocks only: that share no even p has, so the
// block table lowers the first layout with it and prices the others' blocks
// by it (Canonical). The pruned search equals the exhaustive one.
TEST(SearchTest, MegatronFirstLastStagesRankAndMatchTheFullPipeline) {
  for (bool pattern : {false, true}) {
    const TransformerModel model = test_models::WithExperts(
        CalculonModel("fourteen", 256, 1024, 16, 16, 14, 64), 5000,
        test_models::Experts(8, 2, 128, 0, pattern ? "01111110111111" : ""),
        std::nullopt);
    System system = test_programs::A100System();
    SearchOptions o = Options(8, 16, 20000);
    o.every_schedule = true;
    o.first_last_stages = true;
    absl::StatusOr<SearchResult> result = RunSearch(model, system, o);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_TRUE(result->dimensions.stage_layout);
    std::set<std::vector<int64_t>> layouts;
    std::set<std::string> checked;
    std::set<std::string> schedules;
    for (const RankedExecution& r : result->top) {
      const PipelineParallel& pipeline = r.mapping.parallelism.pipeline;
      const int64_t p = pipeline.degree;
      if (14 % p == 0) {  // the even layout
        EXPECT_TRUE(pipeline.stage_blocks.empty()) << p;
        continue;
      }
      ASSERT_FALSE(pipeline.stage_blocks.empty()) << p;
      EXPECT_EQ(pipeline.stage_layout, StageLayout::kEven);
      const int64_t v = VirtualStages(pipeline.schedule);
      // Megatron-LM's rule gives the same layout from its first and last
      // stages' blocks.
      PipelineLayoutFlags flags;
      flags.num_layers = 14;
      flags.pipeline = p;
      flags.virtual_stages = v;
      flags.virtual_given = v > 1;
      flags.first = RankBlocks(pipeline.stage_blocks, p, 0);
      flags.last = RankBlocks(pipeline.stage_blocks, p, p - 1);
      const PipelineLayout megatron = PipelineLayoutOf(flags);
      EXPECT_TRUE(megatron.errors.empty());
      EXPECT_EQ(megatron.stage_blocks, pipeline.stage_blocks);
      layouts.insert(pipeline.stage_blocks);
      schedules.insert(PipelineScheduleName(pipeline.schedule));
      std::string key = absl::StrCat(
          PipelineScheduleName(pipeline.schedule), " ",
          absl::StrJoin(pipeline.stage_blocks, ","));
      if (!checked.insert(key).second) continue;
      absl::StatusOr<TypedProgram> program =
          CheckSpec(TrainingSpecOf(model, system, r.mapping));
      ASSERT_TRUE(program.ok()) << program.status() << " " << key;
      ExpectTheFullPipelinesFigures(r, *program);
    }
    // p = 4: middle stages of ceil(14 / 4) = 4, the ends 3 and 3, or with
    // v = 2 2 and 4 either way round (chunk k on rank k % 4); p = 8: middle
    // stages of 2, the ends 1 and 1.
    EXPECT_EQ(layouts, (std::set<std::vector<int64_t>>{
                           {3, 4, 4, 3},
                           {1, 2, 2, 2, 1, 2, 2, 2},
                           {2, 2, 2, 1, 2, 2, 2, 1},
                           {1, 2, 2, 2, 2, 2, 2, 1}}));
    EXPECT_EQ(schedules, (std::set<std::string>{"1f1b", "interleaved_1f1b"}));
    o.top = 5;
    ExpectExhaustiveEqualsPruned(model, system, o);
  }
}

// The workers split the space by (t, cp) and take the costliest runs first;
// the result is the single-threaded one, ties (many equal rates here: the
// offload variants of a mapping) in enumeration order, for any number of
// threads and any top size.
TEST(SearchTest, ThreadsDoNotChangeTheResult) {
  const System system = test_programs::A100System();
  for (const TransformerModel& model :
       {SmallModel(), MoeModel(true, false)}) {
    for (int top : {1, 7, 500}) {
      SearchOptions o = EveryDimension(8, 8, top);
      o.threads = 1;
      absl::StatusOr<SearchResult> one = RunSearch(model, system, o);
      ASSERT_TRUE(one.ok()) << one.status();
      for (int64_t threads : {2, 3, 5}) {
        o.threads = threads;
        absl::StatusOr<SearchResult> many = RunSearch(model, system, o);
        ASSERT_TRUE(many.ok()) << many.status();
        EXPECT_EQ(Observable(*many), Observable(*one))
            << threads << " threads, top " << top;
      }
    }
  }
}

// A search run in N parts (--partition I/N, as the page's Web Workers run
// it) merges into the unpartitioned output byte for byte: the same counts
// and the same ranking, ties (many equal rates here) in enumeration order,
// whatever N (more parts than runs leaves some parts empty) and the order
// the parts are given in; with specs, as the page asks.
TEST(SearchTest, PartitionsMergeIntoTheWholeSearch) {
  const System system = test_programs::A100System();
  for (const TransformerModel& model :
       {SmallModel(), MoeModel(true, false)}) {
    for (int top : {1, 7, 500}) {
      SearchOptions o = EveryDimension(8, 8, top);
      o.threads = 1;
      absl::StatusOr<SearchResult> whole = RunSearch(model, system, o);
      ASSERT_TRUE(whole.ok()) << whole.status();
      const std::string expected = SearchResultJson(*whole, true);
      for (int64_t partitions : {2, 3, 40}) {
        std::vector<std::string> parts;
        int64_t total = 0;
        for (int64_t i = 0; i < partitions; ++i) {
          o.partition = i;
          o.partitions = partitions;
          o.threads = i % 2 + 1;  // and the threads do not matter
          absl::StatusOr<SearchResult> part = RunSearch(model, system, o);
          ASSERT_TRUE(part.ok()) << part.status();
          total += part->total_executions;
          parts.push_back(SearchResultJson(*part, true));
          EXPECT_NE(parts.back(), expected);  // it is a part
        }
        EXPECT_EQ(total, whole->total_executions);
        std::reverse(parts.begin(), parts.end());
        absl::StatusOr<std::string> merged = MergeSearchJson(parts);
        ASSERT_TRUE(merged.ok()) << merged.status();
        EXPECT_EQ(*merged, expected) << partitions << " parts, top " << top;
      }
      o.partition = 0;
      o.partitions = 1;
    }
  }
}

// TP overlap is not modelled with MoE or latent attention (the checker
// rejects it): never tried for those models, so allowing it changes
// nothing.
TEST(SearchTest, NoTensorOverlapWithMoeOrLatentAttention) {
  const auto with_and_without = [](const TransformerModel& model) {
    SearchOptions o = Options(8, 8, 5);
    absl::StatusOr<SearchResult> with =
        RunSearch(model, test_programs::A100System(), o);
    o.tp_overlap = false;
    absl::StatusOr<SearchResult> without =
        RunSearch(model, test_programs::A100System(), o);
    EXPECT_TRUE(with.ok() && without.ok());
    return std::make_pair(*with, *without);
  };
  for (bool latent : {false, true}) {
    const auto [with, without] = with_and_without(MoeModel(!latent, latent));
    EXPECT_EQ(SearchResultJson(with), SearchResultJson(without));
  }
  // A dense model tries it (Calculon's space).
  const auto [with, without] = with_and_without(SmallModel());
  EXPECT_GT(with.total_executions, without.total_executions);
}

TEST(SearchTest, RejectsUnusableNewOptions) {
  SearchOptions o = Options(8, 8, 1);
  o.max_context = 0;
  o.context_exchange.clear();
  absl::StatusOr<SearchResult> r =
      RunSearch(SmallModel(), test_programs::A100System(), o);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(r.status().message());
  EXPECT_TRUE(absl::StrContains(message, "--max-context (0)")) << message;
  EXPECT_TRUE(absl::StrContains(message, "--context-exchange")) << message;
}

}  // namespace
}  // namespace blueprint
