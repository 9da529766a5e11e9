#include "core/adapters/megatron_layout.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "core/adapters/calculon.h"
#include "core/adapters/megatron.h"
#include "core/presets/presets.h"
#include "core/spec/check.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "core/testing/files.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using test_files::ReadFile;

std::vector<int64_t> Decoders(const std::vector<LayoutStage> &stages) {
  std::vector<int64_t> out;
  for (const LayoutStage &s : stages)
    out.push_back(s.decoder);
  return out;
}

TEST(ParsePipelineLayout, UnrollsGroupsThenCharacters) {
  // Megatron-LM's docstring example: "Ettt|(tt|)*29,m|L".
  absl::StatusOr<std::vector<LayoutStage>> stages =
      ParsePipelineLayout("Ettt|(tt|)*29,m|L");
  ASSERT_TRUE(stages.ok()) << stages.status();
  ASSERT_EQ(stages->size(), 32u);
  EXPECT_EQ((*stages)[0].embedding, 1);
  EXPECT_EQ((*stages)[0].decoder, 3);
  for (size_t k = 1; k < 30; ++k)
    EXPECT_EQ((*stages)[k].decoder, 2) << k;
  EXPECT_EQ((*stages)[30].mtp, 1);
  EXPECT_EQ((*stages)[30].decoder, 0);
  EXPECT_EQ((*stages)[31].loss, 1);
  // c*N repeats one character, after the groups: "(t*2|)*2" is "tt|tt|".
  stages = ParsePipelineLayout("Et*3|(t*2|)*2,tL");
  ASSERT_TRUE(stages.ok()) << stages.status();
  EXPECT_EQ(Decoders(*stages), (std::vector<int64_t>{3, 2, 2, 1}));
}

TEST(ParsePipelineLayout, RejectsWhatMegatronRejectsAndBoundsTheWork) {
  for (const char *bad :
       {"Et|x|L", "E(tt|L", "E(tt)|L", "E((t)*2)*2|L",
        "Et*99999999999999999999|L", "E(t*60000|)*60000L", "E()*2|L"}) {
    EXPECT_FALSE(ParsePipelineLayout(bad).ok()) << bad;
  }
  EXPECT_FALSE(ParsePipelineLayout(std::string(5000, 't')).ok());
  const absl::Status status = ParsePipelineLayout("Et|q|L").status();
  EXPECT_TRUE(absl::StrContains(status.message(), "'q' is not a layer"))
      << status;
}

PipelineLayoutFlags Flags(int64_t layers, int64_t p) {
  PipelineLayoutFlags f;
  f.num_layers = layers;
  f.pipeline = p;
  return f;
}

TEST(PipelineLayoutOf, NoFlagsKeepTheEvenSplit) {
  const PipelineLayout layout = PipelineLayoutOf(Flags(96, 8));
  EXPECT_TRUE(layout.stage_blocks.empty());
  EXPECT_TRUE(layout.errors.empty());
}

TEST(PipelineLayoutOf, FirstAndLastStagesWithMiddleRanksSplittingTheRest) {
  // 94 layers, p 8: first 10, last 10, the middle 6 ranks 74 / 6: uneven.
  PipelineLayoutFlags f = Flags(94, 8);
  f.first = 10;
  f.last = 12; // 72 / 6 = 12
  PipelineLayout layout = PipelineLayoutOf(f);
  EXPECT_TRUE(layout.errors.empty());
  EXPECT_EQ(layout.stage_blocks,
            (std::vector<int64_t>{10, 12, 12, 12, 12, 12, 12, 12}));
  f.last = 10;
  layout = PipelineLayoutOf(f);
  ASSERT_EQ(layout.errors.size(), 1u);
  EXPECT_EQ(layout.errors[0].field, "--decoder-first-pipeline-num-layers");
  EXPECT_TRUE(absl::StrContains(layout.errors[0].message, "leaves 74"));
  // With v = 2, each rank's layers over its two chunks (entry k on rank
  // k % p).
  PipelineLayoutFlags v2 = Flags(14, 3);
  v2.virtual_stages = 2;
  v2.first = 4;
  v2.last = 2;
  layout = PipelineLayoutOf(v2);
  EXPECT_TRUE(layout.errors.empty());
  EXPECT_EQ(layout.stage_blocks, (std::vector<int64_t>{2, 4, 1, 2, 4, 1}));
  // Not with the accounting flags.
  f.account_embedding = true;
  EXPECT_EQ(PipelineLayoutOf(f).errors.size(), 1u);
}

TEST(PipelineLayoutOf, AccountingTakesABlockFromTheFirstAndLastChunks) {
  PipelineLayoutFlags f = Flags(94, 16);
  f.account_embedding = f.account_loss = true;
  PipelineLayout layout = PipelineLayoutOf(f);
  EXPECT_TRUE(layout.errors.empty());
  std::vector<int64_t> want(16, 6);
  want.front() = want.back() = 5;
  EXPECT_EQ(layout.stage_blocks, want);
  // Only the embedding: 95 layers do not split over 16 ranks.
  f.account_loss = false;
  layout = PipelineLayoutOf(f);
  ASSERT_EQ(layout.errors.size(), 1u);
  EXPECT_EQ(layout.errors[0].field,
            "--account-for-embedding-in-pipeline-split");
}

TEST(PipelineLayoutOf, LayoutStringSetsTheVirtualStagesAndItsRules) {
  // DeepSeek-V3: 61 layers and one MTP layer, p 16, v 2.
  PipelineLayoutFlags f = Flags(61, 16);
  f.mtp_layers = 1;
  f.layout = "Ettt|(tt|)*29,m|L";
  PipelineLayout layout = PipelineLayoutOf(f);
  EXPECT_TRUE(layout.errors.empty());
  EXPECT_EQ(layout.virtual_stages, 2);
  ASSERT_EQ(layout.stage_blocks.size(), 32u);
  EXPECT_EQ(layout.stage_blocks[0], 3);
  EXPECT_EQ(layout.stage_blocks[31], 0);
  ASSERT_EQ(layout.notes.size(), 1u); // the MTP layer sits on stage 30
  // Every violation at once: 62 layers counted against 60, no MTP layer.
  f.num_layers = 60;
  f.mtp_layers = 0;
  layout = PipelineLayoutOf(f);
  EXPECT_EQ(layout.errors.size(), 2u);
  // Stages not a multiple of p; combined with another layout flag.
  f = Flags(4, 3);
  f.layout = "Et|tt|tL|t";
  EXPECT_EQ(PipelineLayoutOf(f).errors.size(), 1u);
  f.layout = "Et|tt|tL";
  f.first = 1;
  EXPECT_EQ(PipelineLayoutOf(f).errors.size(), 1u);
}

System A100() {
  const std::string seed = ReadFile("core/adapters/fuzz_seeds/system-a100_80g");
  absl::StatusOr<System> system = FromCalculonSystem(seed.substr(1));
  EXPECT_TRUE(system.ok()) << system.status();
  return system.ok() ? *system : System{};
}

System H100() {
  const char *text = FindPreset(PresetKind::kSystem, "h100_sxm_80g");
  EXPECT_NE(text, nullptr);
  absl::StatusOr<System> system =
      FromCalculonSystem(text != nullptr ? text : "");
  EXPECT_TRUE(system.ok()) << system.status();
  return system.ok() ? *system : System{};
}

// Megatron-Bridge's Qwen3-235B-A22B recipe (src/megatron/bridge/recipes/
// qwen/qwen3_235b_a22b.py model_config: TP 4, PP 16, CP 2, EP 8, ETP 1,
// sequence parallel, account_for_embedding_in_pipeline_split and
// account_for_loss_in_pipeline_split; global batch 32, micro batch 1,
// sequence 4096) on the model's Hugging Face config (94 layers), less
// --qk-layernorm, which the adapter rejects (query/key normalization is not
// modelled).
constexpr char kQwen3Recipe[] =
    "--num-layers 94 --hidden-size 4096 --ffn-hidden-size 12288 "
    "--num-attention-heads 64 --group-query-attention --num-query-groups 4 "
    "--kv-channels 128 --swiglu --normalization RMSNorm "
    "--position-embedding-type rope --untie-embeddings-and-output-weights "
    "--disable-bias-linear --vocab-size 151936 --num-experts 128 "
    "--moe-router-topk 8 --moe-ffn-hidden-size 1536 --seq-length 4096 "
    "--max-position-embeddings 40960 --micro-batch-size 1 "
    "--global-batch-size 32 --tensor-model-parallel-size 4 "
    "--pipeline-model-parallel-size 16 --context-parallel-size 2 "
    "--expert-model-parallel-size 8 --expert-tensor-parallel-size 1 "
    "--sequence-parallel --bf16 --use-distributed-optimizer "
    "--world-size 128 --account-for-embedding-in-pipeline-split "
    "--account-for-loss-in-pipeline-split";

TEST(MegatronLayoutImport, Qwen3RecipeImportsFromItsOwnFlagsAndAnalyses) {
  const std::vector<std::string> args =
      absl::StrSplit(kQwen3Recipe, ' ', absl::SkipEmpty());
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(args, H100());
  ASSERT_TRUE(spec.ok()) << spec.status();
  const auto &training = std::get<TransformerTrainingMappingSpec>(*spec);
  std::vector<int64_t> want(16, 6);
  want.front() = want.back() = 5;
  EXPECT_EQ(training.parallelism.pipeline.stage_blocks, want);
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  ASSERT_TRUE(program.ok()) << program.status();
  // The busiest rank holds 6 blocks; the others lack 16 * 6 - 94 = 2.
  EXPECT_EQ(program->derived.blocks_per_stage, 6);
  EXPECT_EQ(program->derived.bubble_reduction_blocks, 2);
  EXPECT_EQ(program->derived.stage_moe_blocks, 6);
}

TEST(MegatronLayoutImport, MalformedLayoutIsOneClearError) {
  const std::string line =
      "--num-layers 4 --hidden-size 1024 --num-attention-heads 16 "
      "--seq-length 1024 --micro-batch-size 2 --vocab-size 50257 "
      "--max-position-embeddings 1024 --pipeline-model-parallel-size 2 "
      "--world-size 2 --pipeline-model-parallel-layout Ett|t(t|L";
  const std::vector<std::string> args =
      absl::StrSplit(line, ' ', absl::SkipEmpty());
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(args, A100());
  ASSERT_FALSE(spec.ok());
  EXPECT_TRUE(absl::StrContains(spec.status().message(),
                                "--pipeline-model-parallel-layout is not a "
                                "layout"))
      << spec.status();
}

} // namespace
} // namespace blueprint
