// Reading a Megatron-LM command line (megatron_parse.cc, megatron.cc): the
// syntax errors, their fields, codes and order, unknown flags and their
// suggestions, argparse's arity and the catalogue's classes.
#include "core/adapters/megatron.h"

#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "core/adapters/megatron_test_util.h"
#include "core/base/field_errors.h"
#include "core/spec/spec.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using megatron_test::A100;
using megatron_test::Args;
using megatron_test::Codes;
using megatron_test::Errors;
using megatron_test::Fields;
using megatron_test::Notes;
using megatron_test::kModel;

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
      "--optimizer adam "
      "--distributed-backend nccl --attention-backend auto";
  EXPECT_EQ(Errors(defaults), std::vector<std::string>{});
  EXPECT_EQ(Notes(defaults),
            std::vector<std::string>{
                "ignored 5 Megatron-LM flags that do not change what is "
                "modelled: --moe-paged-stash-page-size --wgrad-deferral-limit "
                "--optimizer --distributed-backend (given "
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

}  // namespace
}  // namespace blueprint
