// The dimensions searched as variants of the space (ExecutionVariant,
// mapping.h): the low-precision recipes (--recipes) and, with experts, the
// expert dispatcher and overlap (--expert-dispatchers, --expert-overlap).
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "core/adapters/calculon.h"
#include "core/presets/presets.h"
#include "core/search/full_pipeline_testing.h"
#include "core/search/search.h"
#include "core/search/search_json.h"
#include "core/search/test_models.h"
#include "core/spec/check.h"
#include "core/spec/recipes.h"
#include "core/spec/spec_json.h"
#include "core/testing/programs.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using search_testing::ExpectTheFullPipelinesFigures;

System Preset(const char* name) {
  const char* text = FindPreset(PresetKind::kSystem, name);
  EXPECT_NE(text, nullptr) << name;
  absl::StatusOr<System> system = FromCalculonSystem(text);
  EXPECT_TRUE(system.ok()) << system.status();
  return *system;
}

SearchOptions Options(int64_t procs, int64_t max_batch, int top) {
  SearchOptions o;
  o.procs = procs;
  o.max_batch = max_batch;
  o.datatype = DataType::kBFloat16;
  o.precision = PrecisionAccounting::kMegatronMixed;
  o.profile = ModelProfile::kRefined;
  o.top = top;
  return o;
}

// A dense model whose GEMMs are large enough for a low-precision rate to
// pay for its casts.
TransformerModel DenseModel() {
  return CalculonModel("dense", 4096, 16384, 32, 128, 8, 2048);
}

// A small MoE model (8 experts of top-2, shared experts).
TransformerModel MoeModel() {
  return test_models::WithExperts(
      CalculonModel("moe", 256, 1024, 16, 16, 8, 64), 5000,
      test_models::Experts(8, 2, 128, 256, ""), std::nullopt, 0);
}

// Every ranked mapping the checker accepts, with the figures the full
// pipeline gives its spec (at most `each` per key of `key_of`).
template <typename Key>
void ExpectCheckedAndPipelined(const TransformerModel& model,
                               const System& system, const SearchResult& r,
                               Key (*key_of)(const TrainingMapping&),
                               int each, std::set<Key>* seen) {
  std::vector<std::pair<Key, int>> counts;
  for (const RankedExecution& e : r.top) {
    const Key key = key_of(e.mapping);
    int* count = nullptr;
    for (auto& [k, n] : counts) {
      if (k == key) count = &n;
    }
    if (count == nullptr) {
      counts.push_back({key, 0});
      count = &counts.back().second;
    }
    if (*count >= each) continue;
    ++*count;
    seen->insert(key);
    absl::StatusOr<TypedProgram> program =
        CheckSpec(TrainingSpecOf(model, system, e.mapping));
    ASSERT_TRUE(program.ok()) << program.status();
    SCOPED_TRACE(SpecToJson(program->spec));
    ExpectTheFullPipelinesFigures(e, *program);
  }
}

QuantizationRecipe RecipeOfMapping(const TrainingMapping& m) {
  return m.options.recipe;
}

// --recipes all on Blackwell (a float4 rate): MXFP8 and NVFP4 are offered,
// and a dense model's best mapping runs one of them (their GEMM rates are
// twice and four times bfloat16's); every recipe's mappings are specs the
// checker accepts and the full pipeline prices as the search did.
TEST(VariantSearchTest, RecipesAllOnBlackwellRankAMicroscaledRecipeFirst) {
  const TransformerModel model = DenseModel();
  for (const char* name : {"gb200_nvl72", "b200_sxm_180g"}) {
    const System system = Preset(name);
    EXPECT_TRUE(SystemRunsRecipe(system, QuantizationRecipe::kMxfp8));
    EXPECT_TRUE(SystemRunsRecipe(system, QuantizationRecipe::kNvfp4));
    SearchOptions o = Options(8, 16, 400);
    o.every_recipe = true;
    absl::StatusOr<SearchResult> r = RunSearch(model, system, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_FALSE(r->top.empty());
    EXPECT_TRUE(r->dimensions.recipe);
    const QuantizationRecipe best = r->top.front().mapping.options.recipe;
    EXPECT_TRUE(best == QuantizationRecipe::kNvfp4 ||
                best == QuantizationRecipe::kMxfp8)
        << name << ": " << RecipeName(best);
    std::set<QuantizationRecipe> seen;
    ExpectCheckedAndPipelined(model, system, *r, &RecipeOfMapping, 3, &seen);
    EXPECT_TRUE(seen.count(best));
    // The recipe is in the output only when searched.
    EXPECT_TRUE(absl::StrContains(SearchResultJson(*r), "\"recipe\""));
    EXPECT_TRUE(absl::StrContains(SearchResultText(*r), "recipe"));
    // The FP8 recipes Megatron-Bridge runs with FP8 parameter gathers.
    for (const RankedExecution& e : r->top) {
      const ExecutionOptions& options = e.mapping.options;
      EXPECT_EQ(options.weight_datatype.has_value(),
                RecipeOf(options.recipe).fp8_param_gather);
    }
  }
}

// Hopper has FP8 tensor cores but no block-scaled ones: no MXFP8 or NVFP4,
// and naming one is an error naming --recipes.
TEST(VariantSearchTest, H100OffersNoMicroscaledRecipes) {
  const System h100 = Preset("h100_sxm_80g");
  EXPECT_TRUE(SystemRunsRecipe(h100, QuantizationRecipe::kFp8Tensorwise));
  EXPECT_FALSE(SystemRunsRecipe(h100, QuantizationRecipe::kMxfp8));
  EXPECT_FALSE(SystemRunsRecipe(h100, QuantizationRecipe::kNvfp4));
  SearchOptions o = Options(8, 16, 100000);
  o.every_recipe = true;
  absl::StatusOr<SearchResult> r = RunSearch(DenseModel(), h100, o);
  ASSERT_TRUE(r.ok()) << r.status();
  std::set<QuantizationRecipe> recipes;
  for (const RankedExecution& e : r->top) {
    recipes.insert(e.mapping.options.recipe);
  }
  EXPECT_EQ(recipes, (std::set<QuantizationRecipe>{
                         QuantizationRecipe::kNone,
                         QuantizationRecipe::kFp8Delayed,
                         QuantizationRecipe::kFp8Tensorwise,
                         QuantizationRecipe::kFp8Blockwise}));
  o.every_recipe = false;
  o.recipes = {QuantizationRecipe::kFp8Delayed, QuantizationRecipe::kNvfp4};
  r = RunSearch(DenseModel(), h100, o);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(),
                                "--recipes: the system does not run nvfp4"))
      << r.status();
}

std::tuple<ExpertDispatcher, bool> ExpertVariantOf(const TrainingMapping& m) {
  return {m.parallelism.expert.dispatcher, m.parallelism.expert.overlap};
}

// --expert-dispatchers all --expert-overlap all on an MoE model: every
// (dispatcher, overlap) ranks, each mapping's spec passes the checker and
// the full pipeline (analyze) gives the figures it was ranked by.
TEST(VariantSearchTest, ExpertDispatchersAndOverlapMatchTheFullPipeline) {
  System system = test_programs::A100System();
  for (Processor* engine : {&system.matrix, &system.vector}) {
    engine->rates[DataType::kBFloat16] = engine->rates.at(DataType::kFloat16);
  }
  // Four processors per tier: an all-to-all over 8 ranks crosses tiers.
  system.networks[0].size = 4;
  system.networks[0].must_be_filled = false;
  const TransformerModel model = MoeModel();
  SearchOptions o = Options(8, 8, 20000);
  o.expert_dispatchers = {ExpertDispatcher::kAllToAll,
                          ExpertDispatcher::kDeepEp,
                          ExpertDispatcher::kHybridEp};
  o.expert_overlap = {false, true};
  absl::StatusOr<SearchResult> r = RunSearch(model, system, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->dimensions.dispatcher);
  EXPECT_TRUE(r->dimensions.expert_overlap);
  std::set<std::tuple<ExpertDispatcher, bool>> seen;
  ExpectCheckedAndPipelined(model, system, *r, &ExpertVariantOf, 6, &seen);
  EXPECT_EQ(seen.size(), 6u);
  for (const RankedExecution& e : r->top) {
    const ExpertParallel& expert = e.mapping.parallelism.expert;
    if (expert.dispatcher != ExpertDispatcher::kAllToAll || expert.overlap) {
      EXPECT_GT(expert.degree, 1);
    }
    EXPECT_EQ(expert.overlap, expert.delay_wgrad);
  }
  const std::string json = SearchResultJson(*r);
  EXPECT_TRUE(absl::StrContains(json, "\"expert_dispatcher\""));
  EXPECT_TRUE(absl::StrContains(json, "\"deep_ep\""));
  EXPECT_TRUE(absl::StrContains(json, "\"expert_overlap\""));
}

// The variants' search is pruned as the exhaustive one ranks, and its parts
// merge into the whole search.
TEST(VariantSearchTest, ExhaustiveEqualsPrunedAndPartitionsMerge) {
  const System system = Preset("b200_sxm_180g");
  const TransformerModel model = MoeModel();
  SearchOptions o = Options(8, 8, 30);
  o.every_recipe = true;
  o.expert_dispatchers = {ExpertDispatcher::kAllToAll,
                          ExpertDispatcher::kHybridEp};
  o.expert_overlap = {false, true};
  o.threads = 1;
  absl::StatusOr<SearchResult> pruned = RunSearch(model, system, o);
  o.exhaustive = true;
  absl::StatusOr<SearchResult> exhaustive = RunSearch(model, system, o);
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  ASSERT_TRUE(exhaustive.ok()) << exhaustive.status();
  const std::string whole = SearchResultJson(*pruned, true);
  EXPECT_EQ(whole, SearchResultJson(*exhaustive, true));
  o.exhaustive = false;
  std::vector<std::string> parts;
  for (int64_t i = 0; i < 3; ++i) {
    o.partition = i;
    o.partitions = 3;
    absl::StatusOr<SearchResult> part = RunSearch(model, system, o);
    ASSERT_TRUE(part.ok()) << part.status();
    parts.push_back(SearchResultJson(*part, true));
  }
  absl::StatusOr<std::string> merged = MergeSearchJson(parts);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(*merged, whole);
}

// Calculon's values of the three flags are today's search: nothing of the
// output names them.
TEST(VariantSearchTest, DefaultsAddNothing) {
  SearchOptions o = Options(8, 8, 5);
  o.datatype = DataType::kFloat16;
  absl::StatusOr<SearchResult> r =
      RunSearch(MoeModel(), test_programs::A100System(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->dimensions.recipe);
  EXPECT_FALSE(r->dimensions.dispatcher);
  EXPECT_FALSE(r->dimensions.expert_overlap);
  const std::string json = SearchResultJson(*r);
  EXPECT_FALSE(absl::StrContains(json, "recipe"));
  EXPECT_FALSE(absl::StrContains(json, "expert_dispatcher"));
}

}  // namespace
}  // namespace blueprint
