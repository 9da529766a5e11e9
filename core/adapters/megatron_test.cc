#include "core/adapters/megatron.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/adapters/calculon.h"
#include "core/base/field_errors.h"
#include "core/spec/check.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "core/spec/spec_json.h"
#include "core/testing/files.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

constexpr char kSeeds[] = "core/adapters/fuzz_seeds/";

using test_files::ReadFile;

// The spec Calculon's adapter makes of a shared oracle case.
MappingSpec CalculonCase(const std::string& name) {
  const std::string seed = ReadFile(kSeeds + ("calculon-" + name));
  const std::vector<std::string> parts = absl::StrSplit(seed.substr(1), '\0');
  EXPECT_EQ(parts.size(), 3u) << name;
  if (parts.size() != 3) return {};
  absl::StatusOr<MappingSpec> spec = FromCalculon(parts[0], parts[1], parts[2]);
  EXPECT_TRUE(spec.ok()) << name << ": " << spec.status();
  return spec.ok() ? *spec : MappingSpec{};
}

System A100() {
  const std::string seed = ReadFile(kSeeds + std::string("system-a100_80g"));
  absl::StatusOr<System> system = FromCalculonSystem(seed.substr(1));
  EXPECT_TRUE(system.ok()) << system.status();
  return system.ok() ? *system : System{};
}

std::vector<std::string> Args(const std::string& command_line) {
  return absl::StrSplit(command_line, ' ', absl::SkipEmpty());
}

std::vector<std::string> Errors(const std::string& command_line) {
  absl::StatusOr<MappingSpec> spec =
      FromMegatronArgs(Args(command_line), A100());
  if (spec.ok()) return {};
  return absl::StrSplit(std::string(spec.status().message()), '\n');
}

// The notes of `command_line` (whether or not it has errors).
std::vector<std::string> Notes(const std::string& command_line) {
  std::vector<std::string> notes;
  (void)FromMegatronArgs(Args(command_line), A100(), &notes);
  return notes;
}

// The training spec of `command_line`, which must import.
TransformerTrainingMappingSpec Import(const std::string& command_line) {
  absl::StatusOr<MappingSpec> spec =
      FromMegatronArgs(Args(command_line), A100());
  EXPECT_TRUE(spec.ok()) << command_line << "\n" << spec.status();
  if (!spec.ok()) return {};
  return std::get<TransformerTrainingMappingSpec>(*spec);
}

// The field of each error of `command_line`, in order.
std::vector<std::string> Fields(const std::string& command_line) {
  absl::StatusOr<MappingSpec> spec =
      FromMegatronArgs(Args(command_line), A100());
  std::vector<std::string> fields;
  if (spec.ok()) return fields;
  for (const FieldError& error : FieldErrorsOf(spec.status())) {
    fields.push_back(error.field);
  }
  return fields;
}

// The code of each error of `command_line`, in order.
std::vector<ErrorCode> Codes(const std::string& command_line) {
  absl::StatusOr<MappingSpec> spec =
      FromMegatronArgs(Args(command_line), A100());
  std::vector<ErrorCode> codes;
  if (spec.ok()) return codes;
  for (const FieldError& error : FieldErrorsOf(spec.status())) {
    codes.push_back(error.code);
  }
  return codes;
}

// Korthikanti et al. 2022 (arXiv 2205.05198) as Megatron-LM command lines:
// the configurations of Calculon's validation (MODEL.md §8). "full" is full
// recompute without sequence parallelism; "seqsel" is selective recompute
// with sequence parallelism.
struct Korthikanti {
  const char* oracle_case;
  const char* command_line;
};

class KorthikantiTest : public testing::TestWithParam<Korthikanti> {};

TEST_P(KorthikantiTest, MatchesTheCalculonCase) {
  absl::StatusOr<MappingSpec> megatron =
      FromMegatronArgs(Args(GetParam().command_line), A100());
  ASSERT_TRUE(megatron.ok()) << megatron.status();
  EXPECT_TRUE(CheckSpec(*megatron).ok());
  // Megatron-LM's model has biases on its linear layers, and the import
  // counts bytes as Megatron-LM's mixed precision does; Calculon's block has
  // neither. Without --vocab-size there is no vocabulary, as in Calculon.
  auto& s = std::get<TransformerTrainingMappingSpec>(*megatron);
  EXPECT_TRUE(s.model.linear_bias);
  EXPECT_EQ(s.options.precision, PrecisionAccounting::kMegatronMixed);
  // The import selects the refined profile (Megatron-Core's fused
  // attention); the mapping is Calculon's case all the same.
  EXPECT_EQ(s.options.profile, ModelProfile::kRefined);
  s.model.linear_bias = false;
  s.options.precision = PrecisionAccounting::kCalculon;
  s.options.profile = ModelProfile::kCalculon;
  // Calculon's files carry no model name, Megatron-LM's flags neither, and
  // the oracle cases use the documented defaults (fp16, tiers 0/1/1, no
  // fused activation): the rest of the specs is equal, not only the model,
  // degrees, schedule, batch, recompute and TP communication.
  EXPECT_EQ(SpecToJson(*megatron),
            SpecToJson(CalculonCase(GetParam().oracle_case)));
}

INSTANTIATE_TEST_SUITE_P(
    Paper, KorthikantiTest,
    testing::Values(
        Korthikanti{"v23_22B_t8_full_paperval",
                    "--num-layers 48 --hidden-size 6144 "
                    "--num-attention-heads 64 --seq-length 2048 "
                    "--tensor-model-parallel-size 8 --world-size 8 "
                    "--micro-batch-size 4 --global-batch-size 4 "
                    "--recompute-granularity full --recompute-method uniform "
                    "--fp16"},
        Korthikanti{"v09_175B_t8p8_v3_full_ar_paperval",
                    "--num-layers=96 --hidden-size=12288 "
                    "--num-attention-heads=96 --seq-length=2048 "
                    "--tensor-model-parallel-size=8 "
                    "--pipeline-model-parallel-size=8 "
                    "--num-layers-per-virtual-pipeline-stage=4 "
                    "--world-size=64 --micro-batch-size=1 "
                    "--global-batch-size=64 --recompute-granularity=full "
                    "--recompute-method=uniform --fp16"},
        Korthikanti{"v14_175B_t8p8_seqsel_redo",
                    "--num-layers 96 --hidden-size 12288 "
                    "--num-attention-heads 96 --seq-length 2048 "
                    "--tensor-model-parallel-size 8 "
                    "--pipeline-model-parallel-size 8 "
                    "--num-layers-per-virtual-pipeline-stage 4 "
                    "--world-size 64 --micro-batch-size 1 "
                    "--global-batch-size 64 --sequence-parallel "
                    "--recompute-granularity selective --fp16"},
        Korthikanti{"v24_530B_t8p35_v3_seqsel",
                    "--num-layers 105 --hidden-size 20480 "
                    "--num-attention-heads 128 --seq-length 2048 "
                    "--tensor-model-parallel-size 8 "
                    "--pipeline-model-parallel-size 35 "
                    "--virtual-pipeline-model-parallel-size 3 "
                    "--world-size 280 --micro-batch-size 1 "
                    "--global-batch-size 280 --sequence-parallel "
                    "--recompute-granularity selective --fp16"},
        Korthikanti{"v26_1T_t8p64_full_paperval",
                    "--num-layers 128 --hidden-size 25600 "
                    "--num-attention-heads 160 --kv-channels 160 "
                    "--ffn-hidden-size 102400 --seq-length 2048 "
                    "--tensor-model-parallel-size 8 "
                    "--pipeline-model-parallel-size 64 --world-size 512 "
                    "--micro-batch-size 1 --global-batch-size 512 "
                    "--recompute-granularity full --recompute-method uniform "
                    "--fp16"}),
    [](const testing::TestParamInfo<Korthikanti>& info) {
      return std::string(info.param.oracle_case).substr(0, 3);
    });

TEST(Megatron, DocumentedDefaults) {
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      Args("--num-layers 24 --hidden-size 1024 --num-attention-heads 16 "
           "--seq-length 1024 --micro-batch-size 2 "
           "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
           "--world-size 16 --sequence-parallel"),
      A100());
  ASSERT_TRUE(spec.ok()) << spec.status();
  const auto& s = std::get<TransformerTrainingMappingSpec>(*spec);
  EXPECT_EQ(s.model.name, "");
  EXPECT_EQ(s.model.feedforward, 4096);
  EXPECT_EQ(s.model.attn_size, 64);
  // Megatron-LM's architecture defaults; no vocabulary without --vocab-size.
  EXPECT_EQ(s.model.kv_heads, 16);
  EXPECT_EQ(s.model.mlp, MlpType::kPlain);
  EXPECT_EQ(s.model.norm, NormType::kLayerNorm);
  EXPECT_TRUE(s.model.linear_bias);
  EXPECT_EQ(s.model.vocabulary.size, 0);
  EXPECT_EQ(s.model.vocabulary.divisible_by, 128);
  EXPECT_TRUE(s.model.vocabulary.tied);
  EXPECT_EQ(s.model.vocabulary.position, PositionEmbedding::kNone);
  EXPECT_EQ(s.model.vocabulary.max_positions, 0);
  EXPECT_EQ(s.options.precision, PrecisionAccounting::kMegatronMixed);
  EXPECT_EQ(s.parallelism.data.degree, 4);
  EXPECT_EQ(s.batch.global_batch_size, 8);
  EXPECT_EQ(s.options.datatype, DataType::kFloat32);
  EXPECT_FALSE(s.options.fused_activation);
  EXPECT_EQ(s.options.attention, AttentionType::kMultiHead);
  EXPECT_EQ(s.parallelism.tensor.overlap, TensorOverlap::kNone);
  EXPECT_EQ(s.parallelism.tensor.network_tier, 0);
  EXPECT_EQ(s.parallelism.pipeline.network_tier, 1);
  EXPECT_EQ(s.parallelism.data.network_tier, 1);
  EXPECT_EQ(s.parallelism.pipeline.stage_layout, StageLayout::kEven);
  EXPECT_TRUE(std::holds_alternative<OneForwardOneBackward>(
      s.parallelism.pipeline.schedule));
  EXPECT_EQ(s.parallelism.recompute, RecomputePolicy::kNone);
  // Sequence parallelism without selective recompute: no all-gather redo.
  EXPECT_FALSE(
      std::get<ReduceScatterAllGather>(s.parallelism.tensor.communication)
          .all_gather_redo);
}

TEST(Megatron, DataParallelKnobs) {
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      Args("--num-layers=24 --hidden-size=4096 --num-attention-heads=32 "
           "--seq-length=2048 --micro-batch-size=1 "
           "--tensor-model-parallel-size=1 --world-size=8 "
           "--use-distributed-optimizer --overlap-grad-reduce --bf16 "
           "--sequence-parallel"),
      A100());
  ASSERT_TRUE(spec.ok()) << spec.status();
  const auto& s = std::get<TransformerTrainingMappingSpec>(*spec);
  EXPECT_TRUE(
      std::holds_alternative<ShardOptimizer>(s.parallelism.data.sharding));
  EXPECT_TRUE(s.parallelism.data.overlap);
  EXPECT_EQ(s.parallelism.data.degree, 8);
  EXPECT_EQ(s.options.datatype, DataType::kBFloat16);
  EXPECT_TRUE(
      std::holds_alternative<SingleStage>(s.parallelism.pipeline.schedule));
  // Megatron-LM turns sequence parallelism off with one tensor rank.
  EXPECT_TRUE(
      std::holds_alternative<AllReduce>(s.parallelism.tensor.communication));
}

TEST(Megatron, UnrepresentableAndMalformedFlagsAreErrors) {
  EXPECT_EQ(
      Errors("--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
             "stray --learning-rate 1e-4 --fp16 --bf16 --fp16 "
             "--sequence-parallel=true --recompute-method block "
             "--tensor-model-parallel-size 0 --micro-batch-size"),
      (std::vector<std::string>{
          "unexpected argument \"stray\": expected a Megatron-LM flag such as "
          "--num-layers 96",
          "unknown Megatron-LM flag --learning-rate: Megatron-LM (at commit "
          "d98e8a64ddf3) has no such flag",
          "--fp16 is given more than once",
          "--sequence-parallel takes no value (got \"true\")",
          "--tensor-model-parallel-size needs a positive integer that fits in "
          "64 bits (digits only, no sign, spaces or leading zeros; got \"0\")",
          "--micro-batch-size needs a value",
          "--seq-length is required",
          "--recompute-method only applies to --recompute-granularity full",
          "--fp16 and --bf16 cannot both be given",
      }));
}

TEST(Megatron, RecomputeAndScheduleErrors) {
  const std::string model =
      "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
      "--seq-length 2048 --micro-batch-size 1 ";
  EXPECT_EQ(Errors(model + "--recompute-granularity full"),
            std::vector<std::string>{
                "--recompute-granularity full needs --recompute-method "
                "uniform"});
  EXPECT_EQ(Errors(model + "--recompute-granularity full "
                           "--recompute-method block"),
            std::vector<std::string>{
                "--recompute-method block recomputes only some blocks of "
                "each stage, which the model cannot represent (it recomputes "
                "every block); use --recompute-method uniform"});
  EXPECT_EQ(Errors(model + "--recompute-granularity partial"),
            std::vector<std::string>{
                "--recompute-granularity must be one of full, selective (got "
                "\"partial\")"});
  EXPECT_EQ(Errors(model + "--pipeline-model-parallel-size 8 "
                           "--num-layers-per-virtual-pipeline-stage 5"),
            std::vector<std::string>{
                "--num-layers-per-virtual-pipeline-stage (5) must divide the "
                "layers per pipeline stage (--num-layers 96 / "
                "--pipeline-model-parallel-size 8 = 12)"});
  EXPECT_EQ(
      Errors(model + "--pipeline-model-parallel-size 7 "
                     "--num-layers-per-virtual-pipeline-stage 2"),
      std::vector<std::string>{"--num-layers (96) must be divisible by "
                               "--pipeline-model-parallel-size (7) to use "
                               "--num-layers-per-virtual-pipeline-stage"});
  EXPECT_EQ(Errors(model + "--virtual-pipeline-model-parallel-size 2 "
                           "--num-layers-per-virtual-pipeline-stage 2"),
            std::vector<std::string>{
                "--virtual-pipeline-model-parallel-size and "
                "--num-layers-per-virtual-pipeline-stage cannot both be "
                "given"});
  EXPECT_EQ(Errors(model + "--tensor-model-parallel-size 8 --world-size 12"),
            std::vector<std::string>{"--world-size (12) must be divisible by "
                                     "--tensor-model-parallel-size (8) * "
                                     "--pipeline-model-parallel-size (1)"});
  EXPECT_EQ(Errors("--num-layers 96 --hidden-size 100 --num-attention-heads "
                   "3 --seq-length 2048 --micro-batch-size 1"),
            std::vector<std::string>{
                "--kv-channels defaults to --hidden-size (100) / "
                "--num-attention-heads (3), which must then divide evenly; "
                "give --kv-channels"});
  EXPECT_EQ(Errors(model + "--world-size 99999999999999999999"),
            std::vector<std::string>{
                "--world-size needs a positive integer that fits in 64 bits "
                "(digits only, no sign, spaces or leading zeros; got "
                "\"99999999999999999999\")"});
}

TEST(Megatron, CheckerReportsWhatMegatronWouldReject) {
  // Megatron-LM requires num_layers % pipeline size == 0: the even layout
  // makes the checker say so.
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      Args("--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
           "--seq-length 2048 --micro-batch-size 1 "
           "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 7 "
           "--world-size 56 --fp16"),
      A100());
  ASSERT_TRUE(spec.ok()) << spec.status();
  const std::vector<Violation> violations = FindViolations(*spec);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].field, "parallelism.pipeline.stage_layout");
}

TEST(Megatron, ArbitraryBytesAreReportedOnOneLine) {
  EXPECT_EQ(Errors("--num-layers=\xff\n1 --\xff --hidden-size=1 "
                   "--num-attention-heads=1 --seq-length=1 "
                   "--micro-batch-size=1"),
            (std::vector<std::string>{
                "--num-layers needs a positive integer that fits in 64 bits "
                "(digits only, no sign, spaces or leading zeros; got "
                "\"\\xFF\\x0A1\")",
                "unexpected argument \"--\\xFF\": expected a Megatron-LM "
                "flag such as --num-layers 96",
            }));
}

TEST(Megatron, IntegersAreStrict) {
  const std::string model =
      "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
      "--micro-batch-size 1 ";
  for (const std::string value : {"+2048", "02048", "2048.0", "2e3", "-2048",
                                  "0", "0x800", "9223372036854775808"}) {
    EXPECT_EQ(Errors(model + "--seq-length=" + value),
              std::vector<std::string>{
                  "--seq-length needs a positive integer that fits in 64 "
                  "bits (digits only, no sign, spaces or leading zeros; got "
                  "\"" +
                  value + "\")"})
        << value;
  }
  // A space inside the value (one argv word, e.g. from a quoted shell word).
  std::vector<std::string> args = Args(model);
  args.push_back("--seq-length");
  args.push_back(" 2048");
  const absl::StatusOr<MappingSpec> spec = FromMegatronArgs(args, A100());
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(std::string(spec.status().message()),
            "--seq-length needs a positive integer that fits in 64 bits "
            "(digits only, no sign, spaces or leading zeros; got \" 2048\")");
}

TEST(Megatron, LongAndNonUtf8ValuesAreCutAndEscaped) {
  const std::string model =
      "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
      "--micro-batch-size 1 --seq-length 2048 ";
  // 30 digits then a 4-byte character across the 32-byte limit.
  EXPECT_EQ(Errors(model + "--world-size=" + std::string(30, '1') +
                   "\xF0\x9F\x98\x80"),
            std::vector<std::string>{
                "--world-size needs a positive integer that fits in 64 bits "
                "(digits only, no sign, spaces or leading zeros; got \"" +
                std::string(30, '1') + "\"...)"});
  // A byte-order mark inside the value, and a long unknown flag.
  EXPECT_EQ(Errors(model +
                   "--recompute-granularity=\xEF\xBB\xBF"
                   "full --" +
                   std::string(60, 'x')),
            (std::vector<std::string>{
                "--recompute-granularity must be one of full, selective (got "
                "\"\\xEF\\xBB\\xBFfull\")",
                "unknown Megatron-LM flag \"--" + std::string(30, 'x') +
                    "\"...: Megatron-LM (at commit d98e8a64ddf3) has no such "
                    "flag"}));
}

TEST(Megatron, FlagNames) {
  EXPECT_EQ(MegatronFlagNames().size(), 75u);
  EXPECT_EQ(MegatronFlagNames().front(), "--num-layers");
  ASSERT_EQ(MegatronFlagNames().size(), MegatronFlags().size());
  for (size_t i = 0; i < MegatronFlags().size(); ++i) {
    EXPECT_EQ(MegatronFlagNames()[i], MegatronFlags()[i].name);
  }
}

TEST(Megatron, ErrorsNameTheirFlagOrSpecField) {
  const std::string line =
      "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
      "stray --learning-rate 1e-4 --fp16 --bf16 --fp16 "
      "--sequence-parallel=true --recompute-method block "
      "--tensor-model-parallel-size 0 --micro-batch-size";
  // The messages are those of UnrepresentableAndMalformedFlagsAreErrors.
  EXPECT_EQ(Fields(line), (std::vector<std::string>{
                              "",  // the stray word concerns no flag
                              "--learning-rate",
                              "--fp16",
                              "--sequence-parallel",
                              "--tensor-model-parallel-size",
                              "--micro-batch-size",
                              "--seq-length",
                              "--recompute-method",
                              "options.datatype",
                          }));
  const std::string model =
      "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
      "--seq-length 2048 --micro-batch-size 1 ";
  EXPECT_EQ(Fields(model + "--recompute-granularity full"),
            std::vector<std::string>{"--recompute-method"});
  EXPECT_EQ(Fields(model + "--recompute-granularity partial"),
            std::vector<std::string>{"--recompute-granularity"});
  EXPECT_EQ(
      Fields(model + "--pipeline-model-parallel-size 8 "
                     "--num-layers-per-virtual-pipeline-stage 5"),
      std::vector<std::string>{"--num-layers-per-virtual-pipeline-stage"});
  EXPECT_EQ(Fields(model + "--virtual-pipeline-model-parallel-size 2 "
                           "--num-layers-per-virtual-pipeline-stage 2"),
            std::vector<std::string>{"parallelism.pipeline.schedule"});
  EXPECT_EQ(Fields(model + "--tensor-model-parallel-size 8 --world-size 12"),
            std::vector<std::string>{"--world-size"});
  EXPECT_EQ(Fields("--num-layers 96 --hidden-size 100 --num-attention-heads "
                   "3 --seq-length 2048 --micro-batch-size 1"),
            std::vector<std::string>{"model.attn_size"});
  EXPECT_EQ(Fields("--num-layers 1 --hidden-size 9223372036854775807 "
                   "--num-attention-heads 1 --seq-length 1 "
                   "--micro-batch-size 9223372036854775807 --world-size 2"),
            (std::vector<std::string>{"model.feedforward",
                                      "batch.global_batch_size"}));
  EXPECT_EQ(Fields("--hidden-size 1 --" + std::string(60, 'x')),
            (std::vector<std::string>{"\"--" + std::string(30, 'x') + "\"...",
                                      "--num-layers", "--num-attention-heads",
                                      "--seq-length", "--micro-batch-size"}));
}

TEST(Megatron, ErrorsCarryTheirCode) {
  using C = ErrorCode;
  // The command line of ErrorsNameTheirFlagOrSpecField.
  EXPECT_EQ(Codes("--num-layers 96 --hidden-size 12288 --num-attention-heads "
                  "96 --lr 1e-4 stray --fp16 --bf16 --fp16 "
                  "--sequence-parallel=true --recompute-method block "
                  "--tensor-model-parallel-size 0 --micro-batch-size"),
            (std::vector<C>{C::kSyntax, C::kSyntax, C::kSyntax, C::kOutOfRange,
                            C::kSyntax, C::kMissingField, C::kInconsistent,
                            C::kInconsistent}));
  const std::string model =
      "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
      "--seq-length 2048 --micro-batch-size 1 ";
  EXPECT_EQ(Codes(model + "--recompute-granularity full"),
            std::vector<C>{C::kMissingField});
  EXPECT_EQ(Codes(model + "--no-such-flag"), std::vector<C>{C::kUnknownField});
  EXPECT_EQ(Codes(model + "--recompute-granularity full --recompute-method "
                          "block"),
            std::vector<C>{C::kUnsupported});
  EXPECT_EQ(Codes(model + "--recompute-granularity partial"),
            std::vector<C>{C::kUnknownChoice});
  EXPECT_EQ(Codes(model + "--tensor-model-parallel-size eight"),
            std::vector<C>{C::kWrongType});
  EXPECT_EQ(Codes(model + "--pipeline-model-parallel-size 8 "
                          "--num-layers-per-virtual-pipeline-stage 5"),
            std::vector<C>{C::kNotDivisible});
  EXPECT_EQ(Codes(model + "--virtual-pipeline-model-parallel-size 2 "
                          "--num-layers-per-virtual-pipeline-stage 2"),
            std::vector<C>{C::kInconsistent});
  EXPECT_EQ(Codes(model + "--tensor-model-parallel-size 8 --world-size 12"),
            std::vector<C>{C::kNotDivisible});
  EXPECT_EQ(Codes("--num-layers 96 --hidden-size 100 --num-attention-heads "
                  "3 --seq-length 2048 --micro-batch-size 1"),
            std::vector<C>{C::kNotDivisible});
  EXPECT_EQ(Codes("--num-layers 1 --hidden-size 9223372036854775807 "
                  "--num-attention-heads 1 --seq-length 1 "
                  "--micro-batch-size 9223372036854775807 --world-size 2"),
            (std::vector<C>{C::kOutOfRange, C::kOutOfRange}));
}

TEST(Megatron, ErrorsComeInSectionOrder) {
  // Missing required flags are reported with their spec section: the model's
  // first, the batch's after the parallelism rules, as before the table.
  EXPECT_EQ(Errors("--recompute-granularity full"),
            (std::vector<std::string>{
                "--num-layers is required",
                "--hidden-size is required",
                "--num-attention-heads is required",
                "--seq-length is required",
                "--recompute-granularity full needs --recompute-method "
                "uniform",
                "--micro-batch-size is required",
            }));
}

TEST(Megatron, UnknownFlagsSuggestTheClosestKnownOne) {
  const std::string model =
      "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
      "--micro-batch-size 1 ";
  EXPECT_EQ(Errors(model + "--seq-len 2048"),
            (std::vector<std::string>{
                "unknown Megatron-LM flag --seq-len: did you mean "
                "--seq-length?",
                "--seq-length is required"}));
  EXPECT_EQ(Errors(model + "--seq-length 2048 --tensor-parallel-size=8"),
            std::vector<std::string>{
                "unknown Megatron-LM flag --tensor-parallel-size: did you "
                "mean --tensor-model-parallel-size?"});
  EXPECT_EQ(Fields(model + "--seq-length 2048 --tensor-parallel-size=8"),
            std::vector<std::string>{"--tensor-parallel-size"});
  // Every Megatron-LM flag is a candidate, not only the modelled ones.
  EXPECT_EQ(Errors(model + "--seq-length 2048 --adam-beta 0.9"),
            std::vector<std::string>{
                "unknown Megatron-LM flag --adam-beta: did you mean "
                "--adam-beta1?"});
  // Nothing close: no guess (--fp32 is two edits from --fp16, too many for
  // a six-letter flag).
  for (const std::string flag : {"--frobnicate", "--fp32", "--micro-batch",
                                 "--bf8", "--learning-rate"}) {
    EXPECT_EQ(Errors(model + "--seq-length 2048 " + flag),
              std::vector<std::string>{
                  "unknown Megatron-LM flag " + flag +
                  ": Megatron-LM (at commit d98e8a64ddf3) has no such flag"})
        << flag;
  }
}

//----- The catalogue: arity, classes ------------------------------------------

// A model every test below adds flags to (t = p = d = 1).
constexpr char kModel[] =
    "--num-layers 24 --hidden-size 1024 --num-attention-heads 16 "
    "--seq-length 1024 --micro-batch-size 2 --vocab-size 50257 "
    "--max-position-embeddings 1024 ";

TEST(MegatronArity, ValuesAreTakenAsArgparseTakesThem) {
  // nargs='*' (--data-path) and '+' (--cp-comm-type) take every value up to
  // the next flag; nargs=3 (--rampup-batch-size) exactly three; a negative
  // number is a value; "--flag=value" is one value.
  EXPECT_EQ(Errors(std::string(kModel) +
                   "--data-path 0.3 a 0.7 b --split 98,2,0 "
                   "--cp-comm-type p2p --rampup-batch-size 16 8 300000 "
                   "--null-tokenizer-pad-id -1 --lr=-.5 --min-lr -1 "
                   "--valid-data-path --train-iters=10"),
            std::vector<std::string>{});
  EXPECT_EQ(Errors(std::string(kModel) +
                   "--rampup-batch-size 16 8 --lr --cp-comm-type "
                   "--rampup-batch-size=16 --use-mcore-models 1 "
                   "--use-mcore-models=1"),
            (std::vector<std::string>{
                "--rampup-batch-size needs 3 values",
                "--lr needs a value",
                "--cp-comm-type needs at least one value",
                "--rampup-batch-size needs 3 values (got \"16\" alone)",
                "unexpected argument \"1\": expected a Megatron-LM flag such "
                "as --num-layers 96",
                "--use-mcore-models takes no value (got \"1\")",
            }));
  // A word starting with '-' that is no number is not a value.
  EXPECT_EQ(Errors(std::string(kModel) + "--lr -x"),
            (std::vector<std::string>{
                "--lr needs a value",
                "unexpected argument \"-x\": expected a Megatron-LM flag "
                "such as --num-layers 96"}));
  // A modelled flag reads a negative number as its (bad) value.
  EXPECT_EQ(Errors(std::string(kModel) + "--world-size -8"),
            std::vector<std::string>{
                "--world-size needs a positive integer that fits in 64 bits "
                "(digits only, no sign, spaces or leading zeros; got "
                "\"-8\")"});
}

TEST(MegatronArity, ChoicesAreChecked) {
  EXPECT_EQ(Errors(std::string(kModel) + "--attention-backend flash"),
            std::vector<std::string>{});
  EXPECT_EQ(Errors(std::string(kModel) + "--attention-backend fastest"),
            std::vector<std::string>{
                "--attention-backend must be one of flash, fused, unfused, "
                "local, auto (got \"fastest\")"});
}

TEST(MegatronClasses, IgnoredFlagsAreListedInOneNote) {
  const std::string line =
      std::string(kModel) +
      "--lr 1e-4 --data-path x --min-lr 1e-5 --log-interval 10 "
      "--wgrad-deferral-limit 0 --lr 2e-4";
  EXPECT_EQ(Errors(line), std::vector<std::string>{});
  EXPECT_EQ(Notes(line),
            std::vector<std::string>{
                "ignored 5 Megatron-LM flags that do not change what is "
                "modelled: --lr --min-lr (learning rate and optimizer "
                "hyperparameters); --data-path (data, tokenizer and "
                "dataloader); --log-interval (logging, profiling and "
                "debugging); --wgrad-deferral-limit (given at Megatron-LM's "
                "default value)"});
  EXPECT_EQ(Notes(std::string(kModel) + "--lr 1"),
            std::vector<std::string>{
                "ignored 1 Megatron-LM flag that does not change what is "
                "modelled: --lr (learning rate and optimizer "
                "hyperparameters)"});
  EXPECT_EQ(Notes(kModel), std::vector<std::string>{});
}

TEST(MegatronClasses, UnmodelledFlagsAreErrorsUnlessAtTheirDefault) {
  EXPECT_EQ(
      Errors(std::string(kModel) +
             "--moe-latent-size 8 --wgrad-deferral-limit 2 "
             "--moe-router-topk 2 --expert-model-parallel-size 1 "
             "--recompute-modules core_attn --cp-comm-type p2p "
             "--optimizer adam --init-method-std 0.02 --distributed-backend "
             "gloo --moe-latent-size 4"),
      (std::vector<std::string>{
          "unsupported Megatron-LM flag --moe-latent-size \"4\": MoE latent "
          "projections (routed experts on a smaller latent) are not modelled",
          "unsupported Megatron-LM flag --wgrad-deferral-limit \"2\": "
          "deferring weight-gradient GEMMs into the pipeline flush is not "
          "modelled; only Megatron-LM's default, 0, is accepted",
          "unsupported Megatron-LM flag --distributed-backend \"gloo\": the "
          "network rates are NCCL's; only Megatron-LM's default, nccl, is "
          "accepted",
      }));
  EXPECT_EQ(
      Fields(std::string(kModel) + "--moe-latent-size 8 --fp8-margin 1 "
                                   "--fp8-output-proj"),
      (std::vector<std::string>{"--moe-latent-size", "--fp8-output-proj"}));
  // At their defaults they change nothing.
  const std::string defaults =
      std::string(kModel) +
      "--moe-paged-stash-page-size 64 --wgrad-deferral-limit 0 "
      "--recompute-modules core_attn --optimizer adam "
      "--distributed-backend nccl --attention-backend auto";
  EXPECT_EQ(Errors(defaults), std::vector<std::string>{});
  EXPECT_EQ(Notes(defaults),
            std::vector<std::string>{
                "ignored 6 Megatron-LM flags that do not change what is "
                "modelled: --moe-paged-stash-page-size --wgrad-deferral-limit "
                "--recompute-modules --optimizer --distributed-backend (given "
                "at Megatron-LM's default value); --attention-backend (kernel "
                "backends, fusions and CUDA graphs)"});
}

TEST(MegatronClasses, UnknownFlagsAreOneLineEachAndSkipTheirValues) {
  EXPECT_EQ(
      Errors(std::string(kModel) + "--frobnicate a b c --lr 1 --seq-lenght=4"),
      (std::vector<std::string>{
          "unknown Megatron-LM flag --frobnicate: Megatron-LM (at "
          "commit d98e8a64ddf3) has no such flag",
          "unknown Megatron-LM flag --seq-lenght: did you mean "
          "--seq-length?"}));
}

//----- The model flags
//----------------------------------------------------------

TEST(MegatronModel, GroupedQueryAttention) {
  EXPECT_EQ(Import(std::string(kModel) + "--group-query-attention "
                                         "--num-query-groups 4")
                .model.kv_heads,
            4);
  // Megatron-LM's default number of groups is 1.
  EXPECT_EQ(
      Import(std::string(kModel) + "--group-query-attention").model.kv_heads,
      1);
  // Without --group-query-attention Megatron-LM ignores the groups.
  const std::string alone = std::string(kModel) + "--num-query-groups 4";
  EXPECT_EQ(Import(alone).model.kv_heads, 16);
  EXPECT_EQ(Notes(alone), std::vector<std::string>{
                              "--num-query-groups has no effect without "
                              "--group-query-attention, as in Megatron-LM: "
                              "multi-head attention (model.kv_heads = "
                              "--num-attention-heads)"});
  EXPECT_EQ(Import(std::string(kModel) + "--kv-channels 128").model.attn_size,
            128);
}

TEST(MegatronModel, GatedMlpAndItsDefaultSize) {
  const TransformerTrainingMappingSpec gated =
      Import(std::string(kModel) + "--swiglu");
  EXPECT_EQ(gated.model.mlp, MlpType::kGated);
  // int((4 * 1024 * 2 / 3) / 64) * 64 = 2688.
  EXPECT_EQ(gated.model.feedforward, 2688);
  EXPECT_EQ(Import(std::string(kModel) + "--swiglu --ffn-hidden-size 2816")
                .model.feedforward,
            2816);
  EXPECT_EQ(Import("--num-layers 32 --hidden-size 4096 "
                   "--num-attention-heads 32 --seq-length 4096 "
                   "--micro-batch-size 1 --swiglu")
                .model.feedforward,
            10880);
  EXPECT_EQ(Import(kModel).model.mlp, MlpType::kPlain);
  EXPECT_EQ(
      Errors("--num-layers 2 --hidden-size 16 --num-attention-heads 2 "
             "--seq-length 8 --micro-batch-size 1 --swiglu"),
      std::vector<std::string>{
          "--ffn-hidden-size defaults to --hidden-size (16) * 8 / 3 rounded "
          "down to a multiple of 64 with --swiglu, which is 0; give "
          "--ffn-hidden-size"});
}

TEST(MegatronModel, NormalizationAndBiases) {
  EXPECT_EQ(Import(std::string(kModel) + "--normalization RMSNorm").model.norm,
            NormType::kRmsNorm);
  EXPECT_EQ(
      Import(std::string(kModel) + "--normalization LayerNorm").model.norm,
      NormType::kLayerNorm);
  EXPECT_EQ(Errors(std::string(kModel) + "--normalization rmsnorm"),
            std::vector<std::string>{
                "--normalization must be one of LayerNorm, RMSNorm (got "
                "\"rmsnorm\")"});
  EXPECT_TRUE(Import(kModel).model.linear_bias);
  EXPECT_FALSE(
      Import(std::string(kModel) + "--disable-bias-linear").model.linear_bias);
  // Megatron-LM has QKV biases whenever it has linear biases.
  EXPECT_TRUE(Import(std::string(kModel) + "--add-qkv-bias").model.linear_bias);
  EXPECT_EQ(
      Errors(std::string(kModel) + "--disable-bias-linear --add-qkv-bias"),
      std::vector<std::string>{
          "--add-qkv-bias with --disable-bias-linear puts biases on the "
          "QKV projection only, which the model cannot represent "
          "(model.linear_bias is all or none)"});
}

TEST(MegatronModel, Vocabulary) {
  const TransformerTrainingMappingSpec spec =
      Import(std::string(kModel) +
             "--make-vocab-size-divisible-by 64 "
             "--untie-embeddings-and-output-weights");
  EXPECT_EQ(spec.model.vocabulary.size, 50257);
  EXPECT_EQ(spec.model.vocabulary.divisible_by, 64);
  EXPECT_FALSE(spec.model.vocabulary.tied);
  // Megatron-LM's default position embedding is a learned table.
  EXPECT_EQ(spec.model.vocabulary.position, PositionEmbedding::kLearned);
  EXPECT_EQ(spec.model.vocabulary.max_positions, 1024);
  EXPECT_TRUE(Import(kModel).model.vocabulary.tied);
  EXPECT_EQ(Import(kModel).model.vocabulary.divisible_by, 128);
  // The padding is derived by the checker: 50257 -> a multiple of 128 * t.
  absl::StatusOr<MappingSpec> padded = FromMegatronArgs(
      Args(std::string(kModel) + "--tensor-model-parallel-size 8 "
                                 "--world-size 8 --fp16"),
      A100());
  ASSERT_TRUE(padded.ok()) << padded.status();
  absl::StatusOr<TypedProgram> program = CheckSpec(*padded);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(program->derived.padded_vocabulary, 51200);
}

TEST(MegatronModel, PositionEmbedding) {
  const std::string rope =
      std::string(kModel) + "--position-embedding-type rope";
  EXPECT_EQ(Import(rope).model.vocabulary.position, PositionEmbedding::kRope);
  // Only a learned table has rows.
  EXPECT_EQ(Import(rope).model.vocabulary.max_positions, 0);
  EXPECT_EQ(Import(std::string(kModel) + "--position-embedding-type none")
                .model.vocabulary.position,
            PositionEmbedding::kNone);
  EXPECT_EQ(
      Import(std::string(kModel) + "--position-embedding-type learned_absolute")
          .model.vocabulary.position,
      PositionEmbedding::kLearned);
  EXPECT_EQ(Errors(std::string(kModel) + "--position-embedding-type yarn"),
            std::vector<std::string>{
                "unsupported Megatron-LM flag --position-embedding-type yarn: "
                "the model cannot represent it (modelled: learned_absolute, "
                "rope, none)"});
  EXPECT_EQ(Errors(std::string(kModel) + "--position-embedding-type alibi"),
            std::vector<std::string>{
                "--position-embedding-type must be one of learned_absolute, "
                "rope, none (got \"alibi\")"});
  const std::string no_rows =
      "--num-layers 24 --hidden-size 1024 --num-attention-heads 16 "
      "--seq-length 1024 --micro-batch-size 2 --vocab-size 50257";
  EXPECT_EQ(Errors(no_rows),
            std::vector<std::string>{
                "--max-position-embeddings is required with a learned "
                "position embedding (--position-embedding-type "
                "learned_absolute, Megatron-LM's default): it is the number "
                "of rows of its table"});
  EXPECT_EQ(Errors(no_rows + " --position-embedding-type rope"),
            std::vector<std::string>{});
}

TEST(MegatronModel, WithoutAVocabularyNothingOfItIsModelled) {
  const std::string line =
      "--num-layers 24 --hidden-size 1024 --num-attention-heads 16 "
      "--seq-length 1024 --micro-batch-size 2 --max-position-embeddings 1024";
  const TransformerTrainingMappingSpec spec = Import(line);
  EXPECT_EQ(spec.model.vocabulary.size, 0);
  EXPECT_EQ(spec.model.vocabulary.position, PositionEmbedding::kNone);
  EXPECT_EQ(spec.model.vocabulary.max_positions, 0);
  EXPECT_EQ(Notes(line),
            std::vector<std::string>{
                "without --vocab-size there is no vocabulary to model "
                "(model.vocabulary.size 0): the input embedding, the output "
                "layer and the learned position embedding "
                "(--position-embedding-type learned_absolute, Megatron-LM's "
                "default) are not modelled"});
  EXPECT_EQ(Notes(line + " --position-embedding-type rope"),
            std::vector<std::string>{
                "without --vocab-size there is no vocabulary to model "
                "(model.vocabulary.size 0): the input embedding, the output "
                "layer are not modelled"});
}

//----- The parallelism and precision flags
//----------------------------------------

TEST(MegatronParallelism, VirtualStagesHaveThreeSpellings) {
  const std::string model =
      "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
      "--seq-length 2048 --micro-batch-size 1 --pipeline-model-parallel-size "
      "8 ";
  for (const std::string flags :
       {"--num-virtual-stages-per-pipeline-rank 3",
        "--virtual-pipeline-model-parallel-size 3",
        "--num-layers-per-virtual-pipeline-stage 4"}) {
    const TransformerTrainingMappingSpec spec = Import(model + flags);
    ASSERT_TRUE(std::holds_alternative<InterleavedOneForwardOneBackward>(
        spec.parallelism.pipeline.schedule))
        << flags;
    EXPECT_EQ(std::get<InterleavedOneForwardOneBackward>(
                  spec.parallelism.pipeline.schedule)
                  .virtual_stages,
              3)
        << flags;
  }
  EXPECT_EQ(Errors(model + "--num-virtual-stages-per-pipeline-rank 3 "
                           "--num-layers-per-virtual-pipeline-stage 4"),
            std::vector<std::string>{
                "--num-virtual-stages-per-pipeline-rank and "
                "--num-layers-per-virtual-pipeline-stage cannot both be "
                "given"});
  EXPECT_EQ(Errors(model + "--num-virtual-stages-per-pipeline-rank 3 "
                           "--virtual-pipeline-model-parallel-size 3 "
                           "--num-layers-per-virtual-pipeline-stage 4"),
            std::vector<std::string>{
                "--virtual-pipeline-model-parallel-size, "
                "--num-virtual-stages-per-pipeline-rank and "
                "--num-layers-per-virtual-pipeline-stage cannot be given "
                "together"});
}

TEST(MegatronParallelism, Recompute) {
  EXPECT_EQ(Import(std::string(kModel) + "--recompute-activations")
                .parallelism.recompute,
            RecomputePolicy::kAttentionOnly);
  EXPECT_EQ(Import(std::string(kModel) +
                   "--recompute-granularity full --recompute-method uniform "
                   "--recompute-num-layers 1")
                .parallelism.recompute,
            RecomputePolicy::kFull);
  EXPECT_EQ(Errors(std::string(kModel) +
                   "--recompute-granularity full --recompute-method uniform "
                   "--recompute-num-layers 2"),
            std::vector<std::string>{
                "--recompute-num-layers 2 keeps the input of every 2th block "
                "only, which the model cannot represent (it keeps each "
                "block's input); use --recompute-num-layers 1"});
  EXPECT_EQ(Errors(std::string(kModel) + "--recompute-granularity selective "
                                         "--recompute-num-layers 1"),
            std::vector<std::string>{"--recompute-num-layers only applies to "
                                     "--recompute-granularity full"});
  EXPECT_EQ(
      Errors(std::string(kModel) + "--recompute-modules core_attn mlp"),
      std::vector<std::string>{
          "unsupported Megatron-LM flag --recompute-modules \"core_attn\" "
          "\"mlp\": the recompute is modelled for the core attention "
          "only (selective) or for whole blocks (full)"});
}

TEST(MegatronParallelism, DataParallelKnobsNeedTwoRanks) {
  const std::string knobs = std::string(kModel) +
                            "--use-distributed-optimizer --overlap-grad-reduce "
                            "--overlap-param-gather";
  const TransformerTrainingMappingSpec sharded =
      Import(knobs + " --world-size 8");
  EXPECT_TRUE(std::holds_alternative<ShardOptimizer>(
      sharded.parallelism.data.sharding));
  EXPECT_TRUE(sharded.parallelism.data.overlap);
  const TransformerTrainingMappingSpec one = Import(knobs);
  EXPECT_TRUE(
      std::holds_alternative<NoSharding>(one.parallelism.data.sharding));
  EXPECT_FALSE(one.parallelism.data.overlap);
  EXPECT_EQ(Notes(knobs),
            std::vector<std::string>{
                "--use-distributed-optimizer and --overlap-grad-reduce and "
                "--overlap-param-gather have no effect with one data-parallel "
                "rank (--world-size = --tensor-model-parallel-size * "
                "--pipeline-model-parallel-size)"});
  EXPECT_EQ(Errors(std::string(kModel) + "--overlap-param-gather"),
            (std::vector<std::string>{
                "--overlap-param-gather needs --overlap-grad-reduce, as "
                "Megatron-LM asserts",
                "--overlap-param-gather needs --use-distributed-optimizer or "
                "--use-megatron-fsdp, as Megatron-LM asserts"}));
  EXPECT_EQ(Notes(std::string(kModel) + "--sequence-parallel"),
            std::vector<std::string>{
                "--sequence-parallel has no effect with one tensor-parallel "
                "rank, as in Megatron-LM"});
}

//----- Mixtures of experts, latent attention, multi-token prediction
//------------

TEST(MegatronMixture, ExpertsAndTheirDefaults) {
  const TransformerTrainingMappingSpec dense = Import(kModel);
  EXPECT_FALSE(dense.model.moe.has_value());
  // Megatron-LM's defaults: top-2, experts of --ffn-hidden-size (4h here),
  // no shared experts, every block MoE, dropless routing.
  const TransformerTrainingMappingSpec s =
      Import(std::string(kModel) + "--num-experts 8");
  ASSERT_TRUE(s.model.moe.has_value());
  EXPECT_EQ(s.model.moe->experts, 8);
  EXPECT_EQ(s.model.moe->topk, 2);
  EXPECT_EQ(s.model.moe->ffn, 4096);
  EXPECT_EQ(s.model.moe->shared_ffn, 0);
  EXPECT_EQ(s.model.moe->layer_pattern, "");
  EXPECT_EQ(s.model.moe->capacity_factor, 1);
  EXPECT_EQ(s.model.feedforward, 4096);
  const TransformerTrainingMappingSpec given = Import(
      std::string(kModel) +
      "--num-experts 64 --moe-router-topk 6 --moe-ffn-hidden-size 1408 "
      "--moe-shared-expert-intermediate-size 2816 --ffn-hidden-size 10944");
  ASSERT_TRUE(given.model.moe.has_value());
  EXPECT_EQ(given.model.moe->experts, 64);
  EXPECT_EQ(given.model.moe->topk, 6);
  EXPECT_EQ(given.model.moe->ffn, 1408);
  EXPECT_EQ(given.model.moe->shared_ffn, 2816);
  EXPECT_EQ(given.model.feedforward, 10944);
  // Without --num-experts Megatron-LM ignores the other MoE flags.
  const std::string idle = std::string(kModel) +
                           "--moe-router-topk 4 --moe-layer-freq 2 "
                           "--expert-tensor-parallel-size 2";
  EXPECT_FALSE(Import(idle).model.moe.has_value());
  EXPECT_EQ(Notes(idle),
            (std::vector<std::string>{
                "--moe-router-topk and --moe-layer-freq have no effect "
                "without --num-experts, as in Megatron-LM",
                "--expert-tensor-parallel-size has no effect without "
                "--num-experts, as in Megatron-LM"}));
}

TEST(MegatronMixture, LayerFrequencyIsAnIntegerOrAList) {
  const auto pattern = [](const std::string& freq) {
    const TransformerTrainingMappingSpec s = Import(
        std::string(kModel) + "--num-experts 8 --moe-layer-freq " + freq);
    return s.model.moe.has_value() ? s.model.moe->layer_pattern : "(dense)";
  };
  // An integer k: block i is MoE iff i % k == 0; 1 is every block.
  EXPECT_EQ(pattern("1"), "");
  EXPECT_EQ(pattern("2"), "101010101010101010101010");
  EXPECT_EQ(pattern("5"), "100001000010000100001000");
  EXPECT_EQ(pattern("100"), "1" + std::string(23, '0'));
  // A list expression, as Megatron-LM evaluates it; all 1s is every block.
  EXPECT_EQ(pattern("([0]*3+[1]*21)"), "000" + std::string(21, '1'));
  EXPECT_EQ(pattern("[1]*24"), "");
  EXPECT_EQ(pattern("([1]*3+[0])*6"), "111011101110111011101110");
  const std::string moe = std::string(kModel) + "--num-experts 8 ";
  EXPECT_EQ(Errors(moe + "--moe-layer-freq ([0]*3+[1]*20)"),
            std::vector<std::string>{
                "--moe-layer-freq has 23 elements but --num-layers is 24: "
                "one 0 (dense) or 1 (MoE) per block"});
  EXPECT_EQ(Errors(moe + "--moe-layer-freq [0]*24"),
            std::vector<std::string>{
                "--moe-layer-freq has no MoE block (1): a dense model has no "
                "--num-experts"});
  EXPECT_EQ(Errors(moe + "--moe-layer-freq ([0]*3+[2]*21)"),
            std::vector<std::string>{
                "--moe-layer-freq \"([0]*3+[2]*21)\" is not a list of 0s and "
                "1s: at character 9: a pattern holds 0 (dense) or 1 (MoE), "
                "not 2"});
  EXPECT_EQ(Errors(moe + "--moe-layer-freq=[__import__('os')]"),
            std::vector<std::string>{
                "--moe-layer-freq \"[__import__('os')]\" is not a list of 0s "
                "and 1s: at character 2: \"_\" is not allowed: Megatron-LM's "
                "patterns hold only digits and , [ ] ( ) + *"});
  EXPECT_EQ(Errors(moe + "--moe-layer-freq 0"),
            std::vector<std::string>{
                "--moe-layer-freq needs a positive integer that fits in 64 "
                "bits or a Python list expression holding '[' (digits only, "
                "no sign, spaces or leading zeros; got \"0\")"});
  EXPECT_EQ(Fields(moe + "--moe-layer-freq x"),
            std::vector<std::string>{"--moe-layer-freq"});
  EXPECT_EQ(Codes(moe + "--moe-layer-freq [2]"),
            std::vector<ErrorCode>{ErrorCode::kInvalidValue});
  // A pattern of an integer is built for at most 2^20 blocks.
  EXPECT_EQ(Errors("--num-layers 2000000 --hidden-size 1024 "
                   "--num-attention-heads 16 --seq-length 1024 "
                   "--micro-batch-size 2 --num-experts 8 --moe-layer-freq 2"),
            std::vector<std::string>{
                "--moe-layer-freq 2 with --num-layers 2000000: a pattern of "
                "more than 1048576 blocks is not modelled"});
}

TEST(MegatronMixture, CapacityFactorIsTheBusiestExpertsLoad) {
  const std::string moe =
      std::string(kModel) + "--num-experts 8 --moe-router-topk 2 ";
  const auto factor = [&](const std::string& value) {
    const TransformerTrainingMappingSpec s =
        Import(moe + "--moe-expert-capacity-factor " + value);
    return s.model.moe.has_value() ? s.model.moe->capacity_factor : -1;
  };
  EXPECT_EQ(factor("1.25"), 1.25);
  EXPECT_EQ(factor("1"), 1);
  EXPECT_EQ(factor("4"), 4);
  // Megatron-LM reads a negative factor as none (dropless); above experts /
  // topk no expert can take more than every token.
  EXPECT_EQ(factor("-1"), 1);
  EXPECT_EQ(factor("6.5"), 4);
  EXPECT_EQ(Notes(moe + "--moe-expert-capacity-factor -1"),
            std::vector<std::string>{
                "--moe-expert-capacity-factor -1 is below 0, which "
                "Megatron-LM reads as no capacity (dropless routing): "
                "model.moe.capacity_factor 1"});
  EXPECT_EQ(Notes(moe + "--moe-expert-capacity-factor 6.5"),
            std::vector<std::string>{
                "--moe-expert-capacity-factor 6.5 exceeds --num-experts / "
                "--moe-router-topk (4): no expert receives more than every "
                "token, so model.moe.capacity_factor is 4"});
  EXPECT_EQ(Errors(moe + "--moe-expert-capacity-factor 0.5"),
            std::vector<std::string>{
                "--moe-expert-capacity-factor 0.5 drops tokens even when the "
                "routing is even, which the model cannot represent "
                "(model.moe.capacity_factor is at least 1)"});
  EXPECT_EQ(Errors(moe + "--moe-expert-capacity-factor nan"),
            std::vector<std::string>{
                "--moe-expert-capacity-factor needs a finite decimal number "
                "(got \"nan\")"});
  EXPECT_EQ(Codes(moe + "--moe-expert-capacity-factor x1"),
            std::vector<ErrorCode>{ErrorCode::kWrongType});
}

TEST(MegatronLatentAttention, SizesHeadsAndDefaults) {
  // Megatron-LM's defaults: no query latent, kv 32, heads of 128 + 64 for
  // queries and keys and 128 for values.
  const TransformerTrainingMappingSpec s =
      Import(std::string(kModel) + "--multi-latent-attention");
  ASSERT_TRUE(s.model.latent_attention.has_value());
  EXPECT_EQ(s.model.latent_attention->q_lora_rank, 0);
  EXPECT_EQ(s.model.latent_attention->kv_lora_rank, 32);
  EXPECT_EQ(s.model.latent_attention->qk_head_dim, 128);
  EXPECT_EQ(s.model.latent_attention->qk_rope_head_dim, 64);
  EXPECT_EQ(s.model.latent_attention->v_head_dim, 128);
  EXPECT_EQ(s.model.attn_size, 192);
  EXPECT_EQ(s.model.kv_heads, 16);
  // DeepSeek-V3's attention: hidden / heads (56) is not the head size.
  const TransformerTrainingMappingSpec v3 = Import(
      "--num-layers 4 --hidden-size 7168 --num-attention-heads 128 "
      "--seq-length 4096 --micro-batch-size 1 --multi-latent-attention "
      "--q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 "
      "--qk-pos-emb-head-dim 64 --v-head-dim 128 --kv-channels 56");
  ASSERT_TRUE(v3.model.latent_attention.has_value());
  EXPECT_EQ(v3.model.latent_attention->q_lora_rank, 1536);
  EXPECT_EQ(v3.model.latent_attention->kv_lora_rank, 512);
  EXPECT_EQ(v3.model.attn_size, 192);
  EXPECT_EQ(v3.model.kv_heads, 128);
  EXPECT_EQ(Notes("--num-layers 4 --hidden-size 7168 --num-attention-heads "
                  "128 --seq-length 4096 --micro-batch-size 1 "
                  "--multi-latent-attention --kv-channels 56")
                .front(),
            "--kv-channels has no effect with --multi-latent-attention, as in "
            "Megatron-LM: a query/key head is --qk-head-dim + "
            "--qk-pos-emb-head-dim (model.attn_size)");
  // The head size needs no hidden / heads with latent attention.
  EXPECT_EQ(Errors("--num-layers 4 --hidden-size 100 --num-attention-heads 3 "
                   "--seq-length 64 --micro-batch-size 1 "
                   "--multi-latent-attention"),
            std::vector<std::string>{});
  // Megatron-LM asserts that latent attention has no query groups.
  EXPECT_EQ(Errors(std::string(kModel) + "--multi-latent-attention "
                                         "--group-query-attention "
                                         "--num-query-groups 4"),
            std::vector<std::string>{
                "--multi-latent-attention and --group-query-attention cannot "
                "both be given: Megatron-LM asserts that grouped-query "
                "attention is mutually exclusive with multi-latent "
                "attention"});
  EXPECT_EQ(Fields(std::string(kModel) +
                   "--multi-latent-attention --group-query-attention"),
            std::vector<std::string>{"model.kv_heads"});
  // Without --multi-latent-attention its sizes change nothing.
  const std::string idle =
      std::string(kModel) + "--q-lora-rank 64 --v-head-dim 64";
  EXPECT_FALSE(Import(idle).model.latent_attention.has_value());
  EXPECT_EQ(Notes(idle), std::vector<std::string>{
                             "--q-lora-rank and --v-head-dim have no effect "
                             "without --multi-latent-attention, as in "
                             "Megatron-LM"});
}

TEST(MegatronMultiTokenPrediction, Layers) {
  EXPECT_EQ(Import(kModel).model.mtp_layers, 0);
  EXPECT_EQ(Import(std::string(kModel) + "--mtp-num-layers 2").model.mtp_layers,
            2);
}

//----- Context and expert parallelism, data-parallel sharding
//-------------------

TEST(MegatronParallelism, ContextParallelism) {
  const TransformerTrainingMappingSpec s =
      Import(std::string(kModel) +
             "--context-parallel-size 2 --tensor-model-parallel-size 2 "
             "--world-size 16");
  EXPECT_EQ(s.parallelism.context.degree, 2);
  EXPECT_EQ(s.parallelism.context.exchange, ContextExchange::kRing);
  // t * cp = 4 ranks fit in (and divide) the NVLink tier of 8.
  EXPECT_EQ(s.parallelism.context.network_tier, 0);
  EXPECT_EQ(s.parallelism.data.degree, 4);
  EXPECT_EQ(s.batch.global_batch_size, 8);
  EXPECT_EQ(
      Import(std::string(kModel) + "--context-parallel-size 16 --world-size 16")
          .parallelism.context.network_tier,
      1);
  EXPECT_EQ(Import(std::string(kModel) +
                   "--context-parallel-size 2 --cp-comm-type allgather")
                .parallelism.context.exchange,
            ContextExchange::kAllGather);
  // One type per layer, all the same, is one type.
  EXPECT_EQ(Import(std::string(kModel) +
                   "--context-parallel-size 2 --cp-comm-type allgather "
                   "allgather allgather")
                .parallelism.context.exchange,
            ContextExchange::kAllGather);
  EXPECT_EQ(
      Errors(std::string(kModel) +
             "--context-parallel-size 2 --cp-comm-type p2p a2a --world-size 3"),
      (std::vector<std::string>{
          "unsupported Megatron-LM flag --cp-comm-type \"p2p\" ... \"a2a\": "
          "one value per layer is modelled only when every layer has the "
          "same",
          "--world-size (3) must be divisible by --tensor-model-parallel-size "
          "(1) * --context-parallel-size (2) * --pipeline-model-parallel-size "
          "(1)"}));
  EXPECT_EQ(Errors(std::string(kModel) +
                   "--context-parallel-size 2 --cp-comm-type a2a+p2p"),
            std::vector<std::string>{
                "unsupported Megatron-LM flag --cp-comm-type a2a+p2p: "
                "all-to-all (Ulysses) context parallelism is not modelled "
                "(parallelism.context.exchange is ring, p2p, or all_gather, "
                "allgather)"});
  EXPECT_EQ(Errors(std::string(kModel) + "--cp-comm-type ring"),
            std::vector<std::string>{
                "--cp-comm-type must be one of p2p, allgather, a2a, a2a+p2p "
                "(got \"ring\")"});
  EXPECT_EQ(Notes(std::string(kModel) + "--cp-comm-type allgather"),
            std::vector<std::string>{
                "--cp-comm-type has no effect with one context-parallel "
                "rank"});
}

// The token dispatcher and the expert exchange's overlaps: Megatron-LM's
// flags, each to its spec field, and its assertions as errors.
TEST(MegatronParallelism, ExpertDispatcherAndOverlap) {
  const std::string moe = std::string(kModel) +
                          "--num-experts 8 --bf16 "
                          "--expert-model-parallel-size 8 --world-size 8 ";
  EXPECT_EQ(Import(moe).parallelism.expert.dispatcher,
            ExpertDispatcher::kAllToAll);
  EXPECT_EQ(Import(moe + "--moe-token-dispatcher-type alltoall")
                .parallelism.expert.dispatcher,
            ExpertDispatcher::kAllToAll);
  EXPECT_EQ(Import(moe + "--moe-token-dispatcher-type flex")
                .parallelism.expert.dispatcher,
            ExpertDispatcher::kDeepEp);
  EXPECT_EQ(Import(moe + "--moe-token-dispatcher-type flex "
                         "--moe-flex-dispatcher-backend hybridep")
                .parallelism.expert.dispatcher,
            ExpertDispatcher::kHybridEp);
  EXPECT_EQ(Import(moe + "--moe-token-dispatcher-type flex "
                         "--moe-enable-deepep")
                .parallelism.expert.dispatcher,
            ExpertDispatcher::kDeepEp);
  const TransformerTrainingMappingSpec overlap =
      Import(moe + "--moe-token-dispatcher-type flex "
                   "--overlap-moe-expert-parallel-comm --delay-wgrad-compute");
  EXPECT_TRUE(overlap.parallelism.expert.overlap);
  EXPECT_TRUE(overlap.parallelism.expert.delay_wgrad);
  EXPECT_FALSE(overlap.parallelism.expert.shared_expert_overlap);
  EXPECT_TRUE(Import(moe + "--moe-shared-expert-overlap")
                  .parallelism.expert.shared_expert_overlap);
  EXPECT_EQ(Notes(moe + "--moe-flex-dispatcher-backend hybridep"),
            std::vector<std::string>{
                "--moe-flex-dispatcher-backend has no effect without "
                "--moe-token-dispatcher-type flex"});
  EXPECT_EQ(
      Errors(moe + "--moe-token-dispatcher-type allgather "
                   "--moe-enable-deepep"),
      (std::vector<std::string>{
          "--moe-token-dispatcher-type allgather is not modelled (the model "
          "prices alltoall and flex)",
          "--moe-enable-deepep needs --moe-token-dispatcher-type flex, not "
          "allgather, as Megatron-LM asserts"}));
  EXPECT_EQ(Errors(moe + "--moe-token-dispatcher-type flex "
                         "--moe-flex-dispatcher-backend ncclep"),
            std::vector<std::string>{
                "--moe-flex-dispatcher-backend ncclep is not modelled (deepep "
                "and hybridep are)"});
  // The checker states Megatron-LM's assertions on the overlaps, all at once.
  absl::StatusOr<MappingSpec> bad = FromMegatronArgs(
      Args(std::string(kModel) +
           "--num-experts 8 --fp16 --world-size 8 --delay-wgrad-compute "
           "--moe-token-dispatcher-type flex --moe-shared-expert-overlap"),
      A100());
  ASSERT_TRUE(bad.ok()) << bad.status();
  std::vector<std::string> fields;
  for (const Violation& v : FindViolations(*bad)) fields.push_back(v.field);
  EXPECT_EQ(fields, (std::vector<std::string>{
                        "parallelism.expert.delay_wgrad",
                        "parallelism.expert.shared_expert_overlap"}));
  absl::StatusOr<MappingSpec> lone = FromMegatronArgs(
      Args(std::string(kModel) +
           "--num-experts 8 --fp16 --world-size 8 "
           "--overlap-moe-expert-parallel-comm --moe-shared-expert-overlap "
           "--recompute-granularity full --recompute-method uniform"),
      A100());
  ASSERT_TRUE(lone.ok()) << lone.status();
  fields.clear();
  for (const Violation& v : FindViolations(*lone)) fields.push_back(v.field);
  EXPECT_EQ(fields, (std::vector<std::string>{
                        "parallelism.expert.overlap",
                        "parallelism.expert.overlap",
                        "parallelism.expert.overlap"}));
}

TEST(MegatronParallelism, ExpertParallelism) {
  const std::string moe = std::string(kModel) + "--num-experts 8 --fp16 ";
  const TransformerTrainingMappingSpec s =
      Import(moe + "--expert-model-parallel-size 4 --world-size 8");
  EXPECT_EQ(s.parallelism.expert.degree, 4);
  EXPECT_EQ(s.parallelism.expert.tensor_degree, 0);
  EXPECT_EQ(s.parallelism.expert.network_tier, 0);
  // ep * etp = 16 ranks do not fit in the NVLink tier of 8.
  const TransformerTrainingMappingSpec wide =
      Import(moe +
             "--expert-model-parallel-size 8 --tensor-model-parallel-size 2 "
             "--world-size 16");
  EXPECT_EQ(wide.parallelism.expert.network_tier, 1);
  const TransformerTrainingMappingSpec etp =
      Import(moe +
             "--expert-model-parallel-size 8 --tensor-model-parallel-size 2 "
             "--expert-tensor-parallel-size 1 --world-size 16");
  EXPECT_EQ(etp.parallelism.expert.tensor_degree, 1);
  EXPECT_EQ(etp.parallelism.expert.network_tier, 0);
  EXPECT_TRUE(CheckSpec(MappingSpec(etp)).ok());
  // Megatron-LM asserts that expert parallelism has experts to split.
  EXPECT_EQ(Errors(std::string(kModel) + "--expert-model-parallel-size 2 "
                                         "--world-size 2"),
            std::vector<std::string>{
                "--expert-model-parallel-size (2) needs --num-experts, as "
                "Megatron-LM asserts"});
  // The checker says what else Megatron-LM would refuse.
  absl::StatusOr<MappingSpec> split = FromMegatronArgs(
      Args(moe + "--expert-model-parallel-size 3 --world-size 3"), A100());
  ASSERT_TRUE(split.ok()) << split.status();
  const std::vector<Violation> violations = FindViolations(*split);
  ASSERT_FALSE(violations.empty());
  EXPECT_EQ(violations[0].field, "parallelism.expert.degree");
}

TEST(MegatronParallelism, DataParallelSharding) {
  const std::string base = std::string(kModel) + "--world-size 8 ";
  const auto sharding = [&](const std::string& flags) {
    return Import(base + flags).parallelism.data.sharding;
  };
  EXPECT_TRUE(std::holds_alternative<NoSharding>(sharding("")));
  EXPECT_TRUE(std::holds_alternative<ShardOptimizer>(
      sharding("--use-distributed-optimizer")));
  // Megatron-FSDP: optim_grads_params (ZeRO-3) unless the strategy says
  // otherwise, over every data-parallel rank.
  const DataSharding fsdp = sharding("--use-megatron-fsdp");
  ASSERT_TRUE(std::holds_alternative<ShardParameters>(fsdp));
  EXPECT_EQ(std::get<ShardParameters>(fsdp).group, 0);
  EXPECT_TRUE(std::holds_alternative<ShardGradients>(sharding(
      "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads")));
  EXPECT_TRUE(std::holds_alternative<ShardOptimizer>(
      sharding("--use-megatron-fsdp --data-parallel-sharding-strategy optim "
               "--use-distributed-optimizer")));
  EXPECT_TRUE(std::holds_alternative<NoSharding>(sharding(
      "--use-megatron-fsdp --data-parallel-sharding-strategy no_shard")));
  // The strategy is Megatron-FSDP's only.
  EXPECT_TRUE(std::holds_alternative<ShardOptimizer>(
      sharding("--use-distributed-optimizer --data-parallel-sharding-strategy "
               "optim_grads_params")));
  EXPECT_EQ(Notes(base + "--data-parallel-sharding-strategy optim"),
            std::vector<std::string>{
                "--data-parallel-sharding-strategy has no effect without "
                "--use-megatron-fsdp, as in Megatron-LM"});
  // Megatron-FSDP gathers parameters as the distributed optimizer does.
  EXPECT_EQ(Errors(base + "--use-megatron-fsdp --overlap-grad-reduce "
                          "--overlap-param-gather"),
            std::vector<std::string>{});
  EXPECT_EQ(Notes(std::string(kModel) + "--use-megatron-fsdp"),
            std::vector<std::string>{
                "--use-megatron-fsdp has no effect with one data-parallel rank "
                "(--world-size = --tensor-model-parallel-size * "
                "--pipeline-model-parallel-size)"});
  EXPECT_TRUE(std::holds_alternative<NoSharding>(
      Import(std::string(kModel) + "--use-megatron-fsdp")
          .parallelism.data.sharding));
}

TEST(MegatronPrecision, MixedPrecisionAccounting) {
  EXPECT_EQ(Import(std::string(kModel) + "--bf16").options.precision,
            PrecisionAccounting::kMegatronMixed);
  EXPECT_EQ(Import(std::string(kModel) + "--bf16").options.datatype,
            DataType::kBFloat16);
  // The refined profile counts the fp32 gradient reduction Megatron-LM
  // does with --bf16 (correction fp32_gradient_reduction): nothing to note.
  EXPECT_EQ(Notes(std::string(kModel) + "--bf16 --world-size 2"),
            std::vector<std::string>{});
  EXPECT_FALSE(Import(std::string(kModel) + "--bf16 --world-size 2")
                   .options.grad_reduce_datatype.has_value());
  // --grad-reduce-in-bf16 reduces in bfloat16, as Megatron-LM does; it has
  // no effect with --fp16. --accumulate-allreduce-grads-in-fp32 asks for
  // float32, and --grad-reduce-in-bf16 wins over it (arguments.py).
  EXPECT_EQ(Notes(std::string(kModel) +
                  "--bf16 --world-size 2 --grad-reduce-in-bf16"),
            std::vector<std::string>{});
  EXPECT_EQ(Import(std::string(kModel) +
                   "--bf16 --world-size 2 --grad-reduce-in-bf16")
                .options.grad_reduce_datatype,
            DataType::kBFloat16);
  EXPECT_EQ(Import(std::string(kModel) +
                   "--bf16 --world-size 2 --grad-reduce-in-bf16 "
                   "--accumulate-allreduce-grads-in-fp32")
                .options.grad_reduce_datatype,
            DataType::kBFloat16);
  EXPECT_FALSE(Import(std::string(kModel) +
                      "--fp16 --world-size 2 --grad-reduce-in-bf16")
                   .options.grad_reduce_datatype.has_value());
  EXPECT_EQ(Import(std::string(kModel) +
                   "--fp16 --world-size 2 --accumulate-allreduce-grads-in-fp32")
                .options.grad_reduce_datatype,
            DataType::kFloat32);
  EXPECT_FALSE(Import(std::string(kModel) +
                      "--world-size 2 --accumulate-allreduce-grads-in-fp32")
                   .options.grad_reduce_datatype.has_value());
}

//----- Megatron-LM's own launch scripts
//-------------------------------------------

// The words of a .flags file (core/adapters/testdata/megatron/): one per
// line, '#' lines are comments.
std::vector<std::string> FlagsFile(const std::string& name) {
  const std::string text =
      ReadFile("core/adapters/testdata/megatron/" + name + ".flags");
  EXPECT_FALSE(text.empty()) << name;
  std::vector<std::string> words;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, "#")) words.emplace_back(line);
  }
  return words;
}

// Calculon's h100_80g_nvl8 with bfloat16 rates equal to its float16 ones (as
// on an H100), so that a --bf16 run checks.
System H100WithBfloat16() {
  const std::string seed =
      ReadFile(kSeeds + std::string("system-h100_80g_nvl8"));
  absl::StatusOr<System> system = FromCalculonSystem(seed.substr(1));
  EXPECT_TRUE(system.ok()) << system.status();
  if (!system.ok()) return {};
  for (Processor* engine : {&system->matrix, &system->vector}) {
    engine->rates[DataType::kBFloat16] = engine->rates.at(DataType::kFloat16);
  }
  return *system;
}

TEST(MegatronExamples, Gpt3175bImportsAndChecks) {
  std::vector<std::string> notes;
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      FlagsFile("train_gpt3_175b_distributed"), H100WithBfloat16(), &notes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  ASSERT_TRUE(program.ok()) << program.status();
  const auto& s = std::get<TransformerTrainingMappingSpec>(*spec);
  EXPECT_EQ(s.model.num_blocks, 96);
  EXPECT_EQ(s.model.hidden, 12288);
  EXPECT_EQ(s.parallelism.tensor.degree, 8);
  EXPECT_EQ(s.parallelism.pipeline.degree, 16);
  EXPECT_EQ(s.parallelism.data.degree, 8);
  EXPECT_EQ(s.batch.global_batch_size, 1536);
  EXPECT_EQ(s.options.datatype, DataType::kFloat16);
  ASSERT_EQ(notes.size(), 2u) << absl::StrJoin(notes, "\n");
  EXPECT_TRUE(absl::StartsWith(notes[0], "ignored 24 Megatron-LM flags"))
      << notes[0];
  EXPECT_TRUE(absl::StartsWith(notes[1], "without --vocab-size")) << notes[1];
}

TEST(MegatronExamples, Llama3InBfloat16ImportsAndChecks) {
  std::vector<std::string> notes;
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      FlagsFile("train_llama3_8b_h100_bf16"), H100WithBfloat16(), &notes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  ASSERT_TRUE(program.ok()) << program.status();
  const auto& s = std::get<TransformerTrainingMappingSpec>(*spec);
  EXPECT_EQ(s.model.kv_heads, 8);
  EXPECT_EQ(s.model.attn_size, 128);
  EXPECT_EQ(s.model.feedforward, 14336);
  EXPECT_EQ(s.model.mlp, MlpType::kGated);
  EXPECT_EQ(s.model.norm, NormType::kRmsNorm);
  EXPECT_FALSE(s.model.linear_bias);
  EXPECT_EQ(s.model.vocabulary.size, 128256);
  EXPECT_FALSE(s.model.vocabulary.tied);
  EXPECT_EQ(s.model.vocabulary.position, PositionEmbedding::kRope);
  EXPECT_EQ(s.options.datatype, DataType::kBFloat16);
  EXPECT_EQ(s.parallelism.data.degree, 8);
  EXPECT_TRUE(
      std::holds_alternative<ShardOptimizer>(s.parallelism.data.sharding));
  EXPECT_TRUE(s.parallelism.data.overlap);
  EXPECT_EQ(program->derived.padded_vocabulary, 128256);
  // Its --grad-reduce-in-bf16: the gradients are reduced in bfloat16.
  EXPECT_EQ(s.options.grad_reduce_datatype, DataType::kBFloat16);
  ASSERT_EQ(notes.size(), 2u) << absl::StrJoin(notes, "\n");
  // --context-parallel-size 1 is modelled, not ignored.
  EXPECT_TRUE(absl::StartsWith(notes[0], "ignored 46 Megatron-LM flags"))
      << notes[0];
  EXPECT_EQ(notes[1],
            "--sequence-parallel has no effect with one tensor-parallel rank, "
            "as in Megatron-LM");
}

// The script as it is sets DTYPE=fp8: Transformer Engine's FP8 GEMMs
// (--fp8-format hybrid) on bfloat16 activations, FP8 weights
// (--fp8-param-gather); the scaling recipe's flags change nothing modelled.
TEST(MegatronExamples, Llama3InFp8ImportsAndChecks) {
  std::vector<std::string> notes;
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      FlagsFile("train_llama3_8b_h100_fp8"), H100WithBfloat16(), &notes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(CheckSpec(*spec).ok()) << CheckSpec(*spec).status();
  const auto& s = std::get<TransformerTrainingMappingSpec>(*spec);
  EXPECT_EQ(s.options.datatype, DataType::kBFloat16);
  EXPECT_EQ(s.options.gemm_datatype, DataType::kFloat8);
  EXPECT_EQ(s.options.weight_datatype, DataType::kFloat8);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("--fp8-amax-history-len --fp8-amax-compute-algo"),
            std::string::npos)
      << notes[0];
  // FP8 weights are Transformer Engine's FP8 training: not without it.
  const absl::StatusOr<MappingSpec> alone = FromMegatronArgs(
      Args(std::string(kModel) + "--bf16 --fp8-param-gather"),
      H100WithBfloat16());
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(FieldErrorsOf(alone.status()).at(0).message,
            "--fp8-param-gather needs --fp8-format: FP8 weights are "
            "Transformer Engine's FP8 training");
}

// The path `path` ("a.b.c") in `json`, or nullptr.
const nlohmann::json* AtPath(const nlohmann::json& json,
                             const std::string& path) {
  const nlohmann::json* node = &json;
  for (const std::string& key :
       std::vector<std::string>(absl::StrSplit(path, '.'))) {
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
  }
  return node;
}

TEST(Megatron, TableRowsAreWellFormed) {
  // With experts, latent attention and a stage layout, so that their
  // fields are printed.
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      Args("--num-layers 24 --hidden-size 1024 --num-attention-heads 16 "
           "--seq-length 1024 --micro-batch-size 2 --num-experts 4 "
           "--multi-latent-attention --account-for-loss-in-pipeline-split"),
      A100());
  ASSERT_TRUE(spec.ok()) << spec.status();
  const nlohmann::json canonical = nlohmann::json::parse(SpecToJson(*spec));
  std::set<std::string> names;
  for (const MegatronFlag& flag : MegatronFlags()) {
    SCOPED_TRACE(flag.name);
    EXPECT_TRUE(names.insert(flag.name).second) << "listed twice";
    EXPECT_EQ(flag.name.rfind("--", 0), 0u);
    // The field is a path of the canonical spec, in one of the sections
    // FromMegatronArgs fills.
    EXPECT_NE(AtPath(canonical, flag.field), nullptr) << flag.field;
    const std::string section = flag.field.substr(0, flag.field.find('.'));
    EXPECT_TRUE(section == "model" || section == "parallelism" ||
                section == "batch" || section == "options")
        << flag.field;
    EXPECT_EQ(flag.choices.empty(),
              flag.kind != MegatronFlagKind::kChoice &&
                  flag.kind != MegatronFlagKind::kChoicePerLayer);
    EXPECT_FALSE(flag.absent.empty());
    EXPECT_FALSE(flag.doc.empty());
    for (const std::string& text : {flag.absent, flag.doc}) {
      EXPECT_EQ(text.find('\n'), std::string::npos) << text;
    }
    if (flag.absent == kMegatronRequired) {
      EXPECT_EQ(flag.kind, MegatronFlagKind::kPositiveInteger);
      EXPECT_NE(flag.set, nullptr);
    }
  }
}

// The README's flag table is MegatronFlagsMarkdown(), so that the
// documentation and the parser cannot drift apart.
TEST(Megatron, ReadmeShowsTheFlagTable) {
  constexpr char kBegin[] = "<!-- begin MegatronFlagsMarkdown() -->\n";
  constexpr char kEnd[] = "<!-- end MegatronFlagsMarkdown() -->\n";
  const std::string readme = ReadFile("core/adapters/README.md");
  const size_t begin = readme.find(kBegin);
  const size_t end = readme.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << "no " << kBegin;
  ASSERT_NE(end, std::string::npos) << "no " << kEnd;
  ASSERT_LT(begin, end);
  const size_t start = begin + std::string(kBegin).size();
  const std::string shown = readme.substr(start, end - start);
  const std::string want = MegatronFlagsMarkdown();
  EXPECT_TRUE(shown == want)
      << "core/adapters/README.md's flag table differs from "
         "MegatronFlagsMarkdown(); put this between its markers:\n"
      << want;
}

}  // namespace
}  // namespace blueprint

namespace blueprint {
namespace {

// The recipe flags: --fp8-recipe (default delayed) with --fp8-format, and
// --fp4-format with --fp4-recipe (nvfp4, float4 GEMMs); each recipe flag
// without its format, and the two formats together, are errors.
TEST(MegatronRecipes, ImportEachRecipe) {
  const std::string model = std::string(kModel) + "--bf16 ";
  const struct {
    const char* flags;
    QuantizationRecipe recipe;
    std::optional<DataType> gemm;
  } cases[] = {
      {"", QuantizationRecipe::kNone, std::nullopt},
      {"--fp8-format hybrid", QuantizationRecipe::kFp8Delayed,
       DataType::kFloat8},
      {"--fp8-format e4m3 --fp8-recipe tensorwise",
       QuantizationRecipe::kFp8Tensorwise, DataType::kFloat8},
      {"--fp8-format e4m3 --fp8-recipe blockwise",
       QuantizationRecipe::kFp8Blockwise, DataType::kFloat8},
      {"--fp8-format e4m3 --fp8-recipe mxfp8", QuantizationRecipe::kMxfp8,
       DataType::kFloat8},
      {"--fp4-format e2m1", QuantizationRecipe::kNvfp4, DataType::kFloat4},
      {"--fp4-format e2m1 --fp4-recipe nvfp4", QuantizationRecipe::kNvfp4,
       DataType::kFloat4},
  };
  for (const auto& c : cases) {
    const TransformerTrainingMappingSpec spec = Import(model + c.flags);
    EXPECT_EQ(spec.options.recipe, c.recipe) << c.flags;
    EXPECT_EQ(spec.options.gemm_datatype, c.gemm) << c.flags;
  }
  EXPECT_EQ(Errors(model + "--fp8-recipe mxfp8"),
            std::vector<std::string>{
                "--fp8-recipe mxfp8 needs --fp8-format: the recipe scales FP8 "
                "GEMMs"});
  EXPECT_EQ(Errors(model + "--fp4-recipe nvfp4"),
            std::vector<std::string>{
                "--fp4-recipe needs --fp4-format: the recipe scales FP4 GEMMs"});
  EXPECT_EQ(Fields(model + "--fp8-format e4m3 --fp4-format e2m1"),
            std::vector<std::string>{"options.recipe"});
}

}  // namespace
}  // namespace blueprint
