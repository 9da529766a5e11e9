#include "core/api/commands.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "core/api/analysis_commands.h"
#include "core/api/search_command.h"
#include "core/base/field_errors.h"
#include "core/base/input_limits.h"
#include "core/presets/presets.h"
#include "core/testing/files.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

constexpr char kSeeds[] = "core/adapters/fuzz_seeds/";
constexpr char kExample[] = "core/spec/testdata/175b_t8p8_v3.json";
// What `blueprint check` prints for kExample; the same bytes natively and
// under wasm. Regenerate with
//   bazel run //tools:blueprint -- check
//   $PWD/core/spec/testdata/175b_t8p8_v3.json
//   > core/spec/testdata/175b_t8p8_v3.program.json   (one command line)
constexpr char kExampleProgram[] =
    "core/spec/testdata/175b_t8p8_v3.program.json";

// The messages of a result's errors, in order.
std::vector<std::string> Messages(const CommandResult& result) {
  std::vector<std::string> out;
  for (const FieldError& error : result.errors) out.push_back(error.message);
  return out;
}

using test_files::ReadFile;

// Calculon's three files of an oracle case.
std::vector<std::string> CalculonFiles(const std::string& name) {
  const std::string seed = ReadFile(kSeeds + ("calculon-" + name));
  std::vector<std::string> parts = absl::StrSplit(seed.substr(1), '\0');
  parts.resize(3);
  return parts;
}

TEST(Commands, ImportCalculonThenCheck) {
  const std::vector<std::string> files =
      CalculonFiles("v09_175B_t8p8_v3_full_ar_paperval");
  const CommandResult imported = ImportCalculon(files[0], files[1], files[2]);
  ASSERT_EQ(imported.exit_code, kExitOk);
  EXPECT_TRUE(imported.errors.empty());
  EXPECT_EQ(imported.output.back(), '\n');

  const CommandResult checked = Check(imported.output);
  ASSERT_EQ(checked.exit_code, kExitOk);
  EXPECT_TRUE(checked.errors.empty());
  EXPECT_NE(checked.output.find("\"format\": \"blueprinting.program/1\""),
            std::string::npos);
  EXPECT_NE(checked.output.find("\"blocks_per_chunk\": 4"), std::string::npos);
}

TEST(Commands, ExampleSpecChecksToTheGoldenProgram) {
  const CommandResult checked = Check(ReadFile(kExample));
  ASSERT_EQ(checked.exit_code, kExitOk) << checked.errors.front().message;
  EXPECT_EQ(checked.output, ReadFile(kExampleProgram));
}

TEST(Commands, ViolationsAreOneErrorEach) {
  const std::vector<std::string> files =
      CalculonFiles("x05_interleave_not_factor");
  const CommandResult imported = ImportCalculon(files[0], files[1], files[2]);
  ASSERT_EQ(imported.exit_code, kExitOk);
  const CommandResult checked = Check(imported.output);
  EXPECT_EQ(checked.exit_code, kExitInvalidInput);
  EXPECT_TRUE(checked.output.empty());
  EXPECT_EQ(Messages(checked),
            std::vector<std::string>{
                "parallelism.pipeline.schedule.virtual_stages (5) must divide "
                "blocks_per_stage (12)"});
  EXPECT_EQ(checked.errors[0].field,
            "parallelism.pipeline.schedule.virtual_stages");
  EXPECT_EQ(checked.errors[0].code, ErrorCode::kNotDivisible);
}

TEST(Commands, AdapterErrorsAreInvalidInput) {
  const std::vector<std::string> files = CalculonFiles("x01_procs_mismatch");
  const CommandResult imported = ImportCalculon(files[0], files[1], files[2]);
  EXPECT_EQ(imported.exit_code, kExitInvalidInput);
  EXPECT_TRUE(imported.output.empty());
  ASSERT_EQ(imported.errors.size(), 1u);
  EXPECT_EQ(imported.errors[0].field, "exe.num_procs");
  EXPECT_EQ(imported.errors[0].code, ErrorCode::kInconsistent);

  const CommandResult garbage = Check("not json");
  EXPECT_EQ(garbage.exit_code, kExitInvalidInput);
  ASSERT_EQ(garbage.errors.size(), 1u);
  EXPECT_EQ(garbage.errors[0].message.rfind("malformed JSON: parse error at line 1", 0),
            0u);
  EXPECT_EQ(garbage.errors[0].field, "");
  EXPECT_EQ(garbage.errors[0].code, ErrorCode::kSyntax);
}

TEST(Commands, ImportMegatron) {
  const std::string system =
      ReadFile(kSeeds + std::string("system-a100_80g")).substr(1);
  const CommandResult imported =
      ImportMegatron(system, {"--num-layers",
                              "96",
                              "--hidden-size",
                              "12288",
                              "--num-attention-heads",
                              "96",
                              "--seq-length",
                              "2048",
                              "--micro-batch-size",
                              "1",
                              "--tensor-model-parallel-size",
                              "8",
                              "--pipeline-model-parallel-size",
                              "8",
                              "--num-layers-per-virtual-pipeline-stage",
                              "4",
                              "--world-size",
                              "64",
                              "--global-batch-size",
                              "64",
                              "--recompute-granularity",
                              "full",
                              "--recompute-method",
                              "uniform",
                              "--fp16"});
  ASSERT_EQ(imported.exit_code, kExitOk) << imported.errors.front().message;
  const std::vector<std::string> files =
      CalculonFiles("v09_175B_t8p8_v3_full_ar_paperval");
  // The same spec but for Megatron-LM's linear biases, its mixed-precision
  // accounting and the refined profile, which Calculon's files do not have.
  EXPECT_EQ(
      absl::StrReplaceAll(imported.output,
                          {{"\"linear_bias\": true", "\"linear_bias\": false"},
                           {"\"precision\": \"megatron_mixed\"",
                            "\"precision\": \"calculon\""},
                           {"\"profile\": \"refined\"",
                            "\"profile\": \"calculon\""}}),
      ImportCalculon(files[0], files[1], files[2]).output);
  // Without --vocab-size there is no vocabulary: a note says so.
  ASSERT_EQ(imported.notes.size(), 1u);
  EXPECT_EQ(imported.notes[0].rfind("without --vocab-size", 0), 0u)
      << imported.notes[0];
  const CommandResult ignored = ImportMegatron(
      system,
      {"--num-layers", "2", "--hidden-size", "8", "--num-attention-heads", "2",
       "--seq-length", "8", "--micro-batch-size", "1", "--lr", "1e-4",
       "--vocab-size", "64", "--max-position-embeddings", "8"});
  EXPECT_EQ(ignored.exit_code, kExitOk);
  EXPECT_EQ(ignored.notes,
            std::vector<std::string>{
                "ignored 1 Megatron-LM flag that does not change what is "
                "modelled: --lr (learning rate and optimizer "
                "hyperparameters)"});

  const CommandResult bad_system = ImportMegatron("{}", {});
  EXPECT_EQ(bad_system.exit_code, kExitInvalidInput);
  EXPECT_EQ(bad_system.errors.front().message,
            "sys.matrix: required key is missing");
  EXPECT_EQ(bad_system.errors.front().field, "sys.matrix");
  EXPECT_EQ(bad_system.errors.front().code, ErrorCode::kMissingField);

  const CommandResult bad_flags = ImportMegatron(system, {"--bogus"});
  EXPECT_EQ(bad_flags.exit_code, kExitInvalidInput);
  ASSERT_GE(bad_flags.errors.size(), 2u);
  EXPECT_EQ(bad_flags.errors[0].code, ErrorCode::kUnknownField);
  EXPECT_EQ(bad_flags.errors[1].code, ErrorCode::kMissingField);
}

// Korthikanti et al.'s GPT-3 175B run (oracle case v09) as Megatron-LM
// flags, with `datatype` (--fp16 or --bf16).
std::vector<std::string> Gpt3Flags(const std::string& datatype) {
  return absl::StrSplit(
      "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
      "--seq-length 2048 --micro-batch-size 1 --tensor-model-parallel-size 8 "
      "--pipeline-model-parallel-size 8 "
      "--num-layers-per-virtual-pipeline-stage 4 --world-size 64 "
      "--global-batch-size 64 --recompute-granularity full "
      "--recompute-method uniform " +
          datatype,
      ' ');
}

TEST(Commands, ImportMegatronWithoutAConfigIsTheFlagsImport) {
  const std::string system =
      ReadFile(kSeeds + std::string("system-a100_80g")).substr(1);
  const std::vector<std::string> flags = Gpt3Flags("--fp16");
  const CommandResult imported = ImportMegatron(system, flags, nullptr);
  ASSERT_EQ(imported.exit_code, kExitOk) << Messages(imported)[0];
  EXPECT_EQ(imported.output, ImportMegatron(system, flags).output);
}

TEST(Commands, ImportMegatronReportsTheConfigsErrors) {
  const std::string system =
      ReadFile(kSeeds + std::string("system-a100_80g")).substr(1);
  const std::string config = R"({"model_type": "gpt2", "hidden_size": 1})";
  const CommandResult bad = ImportMegatron(system, {}, &config);
  EXPECT_EQ(bad.exit_code, kExitInvalidInput);
  ASSERT_GE(bad.errors.size(), 2u);
  EXPECT_EQ(bad.errors[0].field, "hf_config.model_type");
  EXPECT_EQ(bad.errors[1].field, "hf_config.num_hidden_layers");
  for (const FieldError& error : bad.errors) {
    EXPECT_TRUE(absl::StartsWith(error.field, "hf_config.")) << error.field;
  }
  // A bad system and a bad config: both, the system's first.
  const CommandResult both = ImportMegatron("{}", {}, &config);
  EXPECT_EQ(both.exit_code, kExitInvalidInput);
  EXPECT_EQ(both.errors.front().field, "sys.matrix");
  EXPECT_EQ(both.errors.back().field.rfind("hf_config.", 0), 0u);
  const std::string huge(kMaxInputBytes + 1, ' ');
  EXPECT_EQ(Messages(ImportMegatron(system, {}, &huge)),
            std::vector<std::string>{InputTooLargeMessage("hf_config")});
}

// An error about a flag that came from the config says so; one about the
// user's flag does not.
TEST(Commands, ImportMegatronSaysWhichFlagsCameFromTheConfig) {
  const std::string system =
      ReadFile(kSeeds + std::string("system-a100_80g")).substr(1);
  const std::string config = FindPreset(PresetKind::kModel, "llama3.1-8b");
  const CommandResult result = ImportMegatron(
      system, {"--micro-batch-size", "1", "--bogus", "--swiglu"}, &config);
  EXPECT_EQ(result.exit_code, kExitInvalidInput);
  bool bogus = false;
  for (const FieldError& error : result.errors) {
    const bool marked =
        absl::StrContains(error.message, "comes from the Hugging Face config");
    if (error.field == "--bogus") bogus = true;
    if (error.field == "--bogus" || error.field == "--swiglu" ||
        error.field.empty()) {
      EXPECT_FALSE(marked) << error.message;
    } else if (absl::StartsWith(error.field, "--")) {
      EXPECT_TRUE(marked) << error.message;
    }
  }
  EXPECT_TRUE(bogus);
}

TEST(Commands, PresetsListsEveryPreset) {
  const CommandResult result = Presets();
  ASSERT_EQ(result.exit_code, kExitOk) << Messages(result)[0];
  EXPECT_EQ(result.output.back(), '\n');
  const nlohmann::json presets = nlohmann::json::parse(result.output);
  EXPECT_EQ(presets["format"], "blueprinting.presets/1");
  for (const PresetKind kind : {PresetKind::kModel, PresetKind::kSystem}) {
    const nlohmann::json& group = presets[PresetDirectory(kind)];
    std::vector<std::string> names;
    for (auto it = group.begin(); it != group.end(); ++it) {
      names.push_back(it.key());
    }
    EXPECT_EQ(names, PresetNames(kind));
  }
  EXPECT_EQ(presets["models"]["llama3.1-405b"]["num_hidden_layers"], 126);
  EXPECT_EQ(presets["systems"]["h200_sxm_141g"]["mem1"]["GiB"], 141);
}

// Every system preset is a system the checker accepts (GPT-3 175B in bf16 on
// t = 8 within a node, p = d = 8 across nodes).
TEST(Commands, SystemPresetsAreValid) {
  for (const std::string& name : PresetNames(PresetKind::kSystem)) {
    const CommandResult imported = ImportMegatron(
        FindPreset(PresetKind::kSystem, name), Gpt3Flags("--bf16"));
    ASSERT_EQ(imported.exit_code, kExitOk) << name << ": "
                                           << Messages(imported)[0];
    const CommandResult checked = Check(imported.output);
    EXPECT_EQ(checked.exit_code, kExitOk)
        << name << ": " << (checked.errors.empty() ? "" : Messages(checked)[0]);
    const CommandResult analyzed = Analyze(imported.output);
    EXPECT_EQ(analyzed.exit_code, kExitOk)
        << name << ": " << (analyzed.errors.empty() ? "" : Messages(analyzed)[0]);
  }
}

TEST(Commands, FailureResultMapsStatusToExitCode) {
  EXPECT_EQ(FailureResult(absl::NotFoundError("x")).exit_code,
            kExitInvalidInput);
  EXPECT_EQ(FailureResult(absl::CancelledError("x")).exit_code,
            kExitCancelled);
  const CommandResult internal =
      FailureResult(absl::InternalError("plan IR: task 2: bad\nsecond"));
  EXPECT_EQ(internal.exit_code, kExitInternal);
  EXPECT_EQ(Messages(internal),
            (std::vector<std::string>{"internal error: plan IR: task 2: bad",
                                      "internal error: second"}));
  EXPECT_EQ(internal.errors[0].code, ErrorCode::kInternal);
  EXPECT_EQ(internal.errors[1].code, ErrorCode::kInternal);
  EXPECT_EQ(FailureResult(absl::CancelledError("x")).errors[0].code,
            ErrorCode::kCancelled);
  // Input problems keep the codes of their payload; without one they are
  // invalid values.
  EXPECT_EQ(FailureResult(InvalidInputError(
                              {{"model.hidden", "m", ErrorCode::kOutOfRange}}))
                .errors[0]
                .code,
            ErrorCode::kOutOfRange);
  EXPECT_EQ(FailureResult(absl::InvalidArgumentError("x")).errors[0].code,
            ErrorCode::kInvalidValue);
}

TEST(Commands, EveryCommandRefusesAnOversizedInput) {
  const std::string huge(kMaxInputBytes + 1, ' ');
  const std::string message = "spec: input is larger than the limit of "
                              "16777216 bytes (16 MiB)";
  for (const CommandResult& result :
       {Check(huge), Analyze(huge), Digest(huge), Explain(huge, "total_time")}) {
    EXPECT_EQ(result.exit_code, kExitInvalidInput);
    EXPECT_EQ(Messages(result), std::vector<std::string>{message});
    EXPECT_EQ(result.errors[0].field, "spec");
    EXPECT_EQ(result.errors[0].code, ErrorCode::kTooLarge);
  }
  const CommandResult calculon = Calculon("{}", huge, huge);
  EXPECT_EQ(Messages(calculon),
            (std::vector<std::string>{InputTooLargeMessage("exe"),
                                      InputTooLargeMessage("system")}));
  EXPECT_EQ(Messages(ImportCalculon(huge, "{}", "{}")),
            std::vector<std::string>{InputTooLargeMessage("app")});
  EXPECT_EQ(Messages(ImportMegatron(huge, {})),
            std::vector<std::string>{InputTooLargeMessage("system")});
  EXPECT_EQ(Messages(Search(huge, "{}", {}, nullptr)),
            std::vector<std::string>{InputTooLargeMessage("app")});
}

TEST(Commands, ExplainStopsAtADepth) {
  const std::string spec = ReadFile(kExample);
  const CommandResult all = Explain(spec, "bubble_time");
  ASSERT_EQ(all.exit_code, kExitOk) << Messages(all)[0];
  EXPECT_EQ(all.output.rfind("bubble_time = simulated_schedule ? "
                             "simulated_bubble(p, v, m, ",
                             0),
            0u)
      << all.output;
  EXPECT_EQ(Explain(spec, "bubble_time", std::nullopt).output, all.output);
  const CommandResult one = Explain(spec, "bubble_time", 1);
  ASSERT_EQ(one.exit_code, kExitOk);
  EXPECT_LT(one.output.size(), all.output.size());
  EXPECT_EQ(one.output.find("    <- "), std::string::npos) << one.output;
  const CommandResult negative = Explain(spec, "bubble_time", -1);
  EXPECT_EQ(negative.exit_code, kExitInvalidInput);
  EXPECT_EQ(Messages(negative), std::vector<std::string>{
                                    "depth: expected an integer >= 0, got -1"});
  EXPECT_EQ(negative.errors[0].field, "depth");
  EXPECT_EQ(negative.errors[0].code, ErrorCode::kOutOfRange);
  const CommandResult unknown = Explain(spec, "no_such_figure");
  EXPECT_EQ(unknown.exit_code, kExitInvalidInput);
  ASSERT_EQ(unknown.errors.size(), 1u);
  EXPECT_EQ(unknown.errors[0].field, "figure");
  EXPECT_EQ(unknown.errors[0].code, ErrorCode::kUnknownChoice);
}

TEST(Commands, OverCapacityViolationsKeepTheReport) {
  std::string spec = ReadFile(kExample);
  const std::string from = "\"GiB\": 80";
  const size_t at = spec.find(from);
  ASSERT_NE(at, std::string::npos);
  spec.replace(at, from.size(), "\"GiB\": 1");
  const CommandResult result = Analyze(spec);
  EXPECT_EQ(result.exit_code, kExitInvalidInput);
  EXPECT_FALSE(result.output.empty());
  ASSERT_FALSE(result.errors.empty());
  EXPECT_EQ(result.errors[0].field, "system.mem1.GiB");
  EXPECT_EQ(result.errors[0].code, ErrorCode::kOverCapacity);
}

TEST(Commands, SearchFlagsAndValidationCarryCodes) {
  const std::vector<std::string> files =
      CalculonFiles("v09_175B_t8p8_v3_full_ar_paperval");
  const CommandResult flags =
      Search(files[0], files[2], {"--procs", "x"}, nullptr);
  EXPECT_EQ(flags.exit_code, kExitInvalidInput);
  ASSERT_EQ(flags.errors.size(), 3u);
  EXPECT_EQ(flags.errors[0].field, "--procs");
  EXPECT_EQ(flags.errors[0].code, ErrorCode::kWrongType);
  EXPECT_EQ(flags.errors[1].code, ErrorCode::kMissingField);
  const std::vector<std::string> args = {"--procs", "8",          "--max-batch",
                                         "8",       "--datatype", "float16"};
  std::vector<std::string> too_many = args;
  too_many[1] = "2147483649";
  const CommandResult range = Search(files[0], files[2], too_many, nullptr);
  ASSERT_EQ(range.errors.size(), 1u);
  EXPECT_EQ(range.errors[0].field, "--procs");
  EXPECT_EQ(range.errors[0].code, ErrorCode::kOutOfRange);
  // The model is judged by the checker: its fields and codes.
  std::string app = files[0];
  const size_t at = app.find("\"hidden\": 12288");
  ASSERT_NE(at, std::string::npos) << app;
  app.replace(at, 15, "\"hidden\": 0");
  const CommandResult model = Search(app, files[2], args, nullptr);
  EXPECT_EQ(model.exit_code, kExitInvalidInput);
  ASSERT_FALSE(model.errors.empty());
  EXPECT_EQ(model.errors[0].field, "model.hidden");
  EXPECT_EQ(model.errors[0].code, ErrorCode::kOutOfRange);
}

TEST(Commands, InvalidInputResultSplitsLines) {
  const CommandResult result =
      FailureResult(absl::InvalidArgumentError("a\nb\n"));
  EXPECT_EQ(result.exit_code, kExitInvalidInput);
  EXPECT_EQ(Messages(result), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace blueprint
