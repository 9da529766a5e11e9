#include "core/adapters/megatron.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/adapters/calculon.h"
#include "core/base/field_errors.h"
#include "core/spec/check.h"
#include "core/spec/spec.h"
#include "core/spec/spec_json.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

constexpr char kSeeds[] = "core/adapters/fuzz_seeds/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

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
  // Calculon's files carry no model name, Megatron-LM's flags neither, and
  // the oracle cases use the documented defaults (fp16, tiers 0/1/1, no
  // fused activation): the whole specs are equal, not only the model,
  // degrees, schedule, batch, recompute and TP communication.
  EXPECT_EQ(SpecToJson(*megatron),
            SpecToJson(CalculonCase(GetParam().oracle_case)));
  EXPECT_TRUE(CheckSpec(*megatron).ok());
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
  EXPECT_TRUE(s.parallelism.data.optimizer_sharding);
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
             "--lr 1e-4 stray --fp16 --bf16 --fp16 --sequence-parallel=true "
             "--recompute-method block --tensor-model-parallel-size 0 "
             "--micro-batch-size"),
      (std::vector<std::string>{
          "unsupported Megatron-LM flag --lr: the model cannot represent it "
          "(supported flags: --num-layers --hidden-size --num-attention-heads "
          "--seq-length --ffn-hidden-size --kv-channels "
          "--tensor-model-parallel-size --pipeline-model-parallel-size "
          "--virtual-pipeline-model-parallel-size "
          "--num-layers-per-virtual-pipeline-stage --world-size "
          "--micro-batch-size --global-batch-size --sequence-parallel "
          "--recompute-granularity --recompute-method "
          "--use-distributed-optimizer --overlap-grad-reduce --fp16 --bf16)",
          "unexpected argument \"stray\": expected a Megatron-LM flag such as "
          "--num-layers 96",
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
  for (const std::string value :
       {"+2048", "02048", "2048.0", "2e3", "-2048", "0", "0x800",
        "9223372036854775808"}) {
    EXPECT_EQ(Errors(model + "--seq-length=" + value),
              std::vector<std::string>{
                  "--seq-length needs a positive integer that fits in 64 "
                  "bits (digits only, no sign, spaces or leading zeros; got "
                  "\"" + value + "\")"})
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
  EXPECT_EQ(Errors(model + "--recompute-granularity=\xEF\xBB\xBF" "full --" +
                   std::string(60, 'x')),
            (std::vector<std::string>{
                "--recompute-granularity must be one of full, selective (got "
                "\"\\xEF\\xBB\\xBFfull\")",
                "unsupported Megatron-LM flag \"--" + std::string(30, 'x') +
                    "\"...: the model cannot represent it (supported flags: "
                    "--num-layers --hidden-size --num-attention-heads "
                    "--seq-length --ffn-hidden-size --kv-channels "
                    "--tensor-model-parallel-size "
                    "--pipeline-model-parallel-size "
                    "--virtual-pipeline-model-parallel-size "
                    "--num-layers-per-virtual-pipeline-stage --world-size "
                    "--micro-batch-size --global-batch-size "
                    "--sequence-parallel --recompute-granularity "
                    "--recompute-method --use-distributed-optimizer "
                    "--overlap-grad-reduce --fp16 --bf16)"}));
}

TEST(Megatron, FlagNames) {
  EXPECT_EQ(MegatronFlagNames().size(), 20u);
  EXPECT_EQ(MegatronFlagNames().front(), "--num-layers");
  ASSERT_EQ(MegatronFlagNames().size(), MegatronFlags().size());
  for (size_t i = 0; i < MegatronFlags().size(); ++i) {
    EXPECT_EQ(MegatronFlagNames()[i], MegatronFlags()[i].name);
  }
}

TEST(Megatron, ErrorsNameTheirFlagOrSpecField) {
  const std::string line =
      "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
      "--lr 1e-4 stray --fp16 --bf16 --fp16 --sequence-parallel=true "
      "--recompute-method block --tensor-model-parallel-size 0 "
      "--micro-batch-size";
  // The messages are those of UnrepresentableAndMalformedFlagsAreErrors.
  EXPECT_EQ(Fields(line), (std::vector<std::string>{
                              "--lr",
                              "",  // the stray word concerns no flag
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
            (std::vector<std::string>{
                "\"--" + std::string(30, 'x') + "\"...", "--num-layers",
                "--num-attention-heads", "--seq-length",
                "--micro-batch-size"}));
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
  const std::string supported =
      " (supported flags: " + absl::StrJoin(MegatronFlagNames(), " ") + ")";
  EXPECT_EQ(Errors(model + "--seq-len 2048"),
            (std::vector<std::string>{
                "unsupported Megatron-LM flag --seq-len: did you mean "
                "--seq-length?" + supported,
                "--seq-length is required"}));
  EXPECT_EQ(Errors(model + "--seq-length 2048 --tensor-parallel-size=8"),
            std::vector<std::string>{
                "unsupported Megatron-LM flag --tensor-parallel-size: did you "
                "mean --tensor-model-parallel-size?" + supported});
  EXPECT_EQ(Fields(model + "--seq-length 2048 --tensor-parallel-size=8"),
            std::vector<std::string>{"--tensor-parallel-size"});
  // Nothing close: no guess (--fp32 is two edits from --fp16, too many for
  // a six-letter flag).
  for (const std::string flag : {"--lr", "--fp32", "--use-flash-attn",
                                 "--micro-batch", "--bf8"}) {
    EXPECT_EQ(Errors(model + "--seq-length 2048 " + flag),
              std::vector<std::string>{"unsupported Megatron-LM flag " + flag +
                                       ": the model cannot represent it" +
                                       supported})
        << flag;
  }
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
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
      Args("--num-layers 24 --hidden-size 1024 --num-attention-heads 16 "
           "--seq-length 1024 --micro-batch-size 2"),
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
    EXPECT_EQ(flag.choices.empty(), flag.kind != MegatronFlagKind::kChoice);
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
