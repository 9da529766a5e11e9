#include "core/spec/spec_json.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "core/base/field_errors.h"
#include "core/spec/check.h"
#include "core/spec/spec.h"
#include "core/testing/status_matchers.h"
#include "core/testing/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using ::testing::ElementsAre;
using ::testing::Not;

// Tests run in the runfiles root, natively and under node alike.
constexpr char kExample[] = "core/spec/testdata/175b_t8p8_v3.json";

using test_files::ReadFile;

std::vector<std::string> ErrorLines(const absl::Status& status) {
  return absl::StrSplit(std::string(status.message()), '\n');
}

TEST(SpecJson, ExampleFileIsCanonicalAndValid) {
  const std::string text = ReadFile(kExample);
  ASSERT_FALSE(text.empty()) << "cannot read " << kExample;
  absl::StatusOr<MappingSpec> spec = ParseSpecJson(text);
  ASSERT_THAT(spec, IsOk());
  EXPECT_EQ(SpecToJson(*spec), text);

  const auto* training = std::get_if<TransformerTrainingMappingSpec>(&*spec);
  ASSERT_NE(training, nullptr);
  EXPECT_EQ(training->model.name, "gpt3-175B");
  EXPECT_EQ(training->model.num_blocks, 96);
  EXPECT_EQ(training->system.name, "a100_80g");
  EXPECT_EQ(training->system.networks.size(), 2u);
  EXPECT_EQ(training->system.networks[0].latency_s, 1e-5);
  EXPECT_FALSE(training->system.networks[0].p2p.offset.has_value());
  EXPECT_EQ(training->system.networks[0].all_reduce.offset, -1.0);
  EXPECT_EQ(std::get<InterleavedOneForwardOneBackward>(
                training->parallelism.pipeline.schedule)
                .virtual_stages,
            3);
  EXPECT_THAT(CheckSpec(*spec), IsOk());
}

// A spec/1 document (Calculon's model keys only, no options.precision) still
// reads, as Calculon's block; the architecture keys are spec/2's alone.
TEST(SpecJson, VersionOneDocumentsReadAsCalculonsModel) {
  absl::StatusOr<MappingSpec> v2 = ParseSpecJson(ReadFile(kExample));
  ASSERT_THAT(v2, IsOk());
  nlohmann::json v1 = SpecToJsonValue(*v2);
  v1["format"] = "blueprinting.spec/1";
  for (const char* key : {"kv_heads", "mlp", "norm", "linear_bias",
                          "vocabulary", "moe", "latent_attention",
                          "mtp_layers"}) {
    v1["model"].erase(key);
  }
  v1["options"].erase("precision");
  v1["options"].erase("profile");
  v1["options"].erase("recipe");
  v1["options"].erase("unquantized_first_blocks");
  v1["options"].erase("unquantized_last_blocks");
  v1["options"].erase("gemm_datatype");
  v1["options"].erase("weight_datatype");
  v1["options"].erase("grad_reduce_datatype");
  v1["parallelism"].erase("context");
  v1["parallelism"].erase("expert");
  v1["parallelism"]["data"].erase("sharding");
  v1["parallelism"]["data"]["optimizer_sharding"] = false;
  absl::StatusOr<MappingSpec> read = SpecFromJsonValue(v1);
  ASSERT_THAT(read, IsOk());
  EXPECT_EQ(SpecToJson(*read), SpecToJson(*v2));
  EXPECT_EQ(std::get<TransformerTrainingMappingSpec>(*read).model.kv_heads,
            96);

  v1["model"]["kv_heads"] = 8;
  read = SpecFromJsonValue(v1);
  ASSERT_THAT(read, Not(IsOk()));
  EXPECT_THAT(std::string(read.status().message()),
              ::testing::StartsWith("model.kv_heads: unknown key"));
}

// Specs exercising every alternative of every sum type.
std::vector<MappingSpec> Variants(const MappingSpec& base) {
  std::vector<MappingSpec> out;
  const auto& training = std::get<TransformerTrainingMappingSpec>(base);
  for (const TensorCommunication& communication :
       {TensorCommunication{AllReduce{}},
        TensorCommunication{ReduceScatterAllGather{true}},
        TensorCommunication{ReduceScatterAllGather{false}},
        TensorCommunication{EdgeReduceScatterAllGather{}}}) {
    for (const PipelineSchedule& schedule :
         {PipelineSchedule{SingleStage{}},
          PipelineSchedule{OneForwardOneBackward{}},
          PipelineSchedule{InterleavedOneForwardOneBackward{4}},
          PipelineSchedule{ForwardOnly{}}}) {
      TransformerTrainingMappingSpec t = training;
      t.parallelism.tensor.communication = communication;
      t.parallelism.pipeline.schedule = schedule;
      t.parallelism.pipeline.stage_layout = StageLayout::kUneven;
      t.parallelism.recompute = RecomputePolicy::kAttentionOnly;
      t.options.offload.activations = true;
      t.system.processing_mode = ProcessingMode::kRoofline;
      out.push_back(t);

      TransformerInferenceMappingSpec i;
      i.model = training.model;
      i.system = training.system;
      i.parallelism.tensor = t.parallelism.tensor;
      i.parallelism.pipeline = t.parallelism.pipeline;
      i.parallelism.replica.degree = 3;
      i.parallelism.replica.network_tier = 1;
      i.batch = training.batch;
      i.options = training.options;
      i.options.attention = AttentionType::kMultiQuery;
      i.options.datatype = DataType::kBFloat16;
      out.push_back(i);
    }
  }
  return out;
}

TEST(SpecJson, RoundTripsEveryAlternative) {
  absl::StatusOr<MappingSpec> base = ParseSpecJson(ReadFile(kExample));
  ASSERT_THAT(base, IsOk());
  for (const MappingSpec& spec : Variants(*base)) {
    const std::string text = SpecToJson(spec);
    absl::StatusOr<MappingSpec> parsed = ParseSpecJson(text);
    ASSERT_THAT(parsed, IsOk()) << text;
    EXPECT_EQ(parsed->index(), spec.index());
    EXPECT_EQ(SpecToJson(*parsed), text);
  }
}

// The router's options (model.moe.router_fusion, aux_loss) round-trip, and
// a document from before them reads them as off.
TEST(SpecJson, RouterOptionsRoundTripAndDefaultOff) {
  absl::StatusOr<MappingSpec> base = ParseSpecJson(ReadFile(kExample));
  ASSERT_THAT(base, IsOk());
  auto& training = std::get<TransformerTrainingMappingSpec>(*base);
  MixtureOfExperts moe;
  moe.experts = 8;
  moe.topk = 2;
  moe.ffn = 64;
  moe.router_fusion = true;
  moe.aux_loss = true;
  training.model.moe = moe;
  const std::string text = SpecToJson(*base);
  absl::StatusOr<MappingSpec> parsed = ParseSpecJson(text);
  ASSERT_THAT(parsed, IsOk()) << text;
  const auto& read = std::get<TransformerTrainingMappingSpec>(*parsed);
  ASSERT_TRUE(read.model.moe.has_value());
  EXPECT_TRUE(read.model.moe->router_fusion);
  EXPECT_TRUE(read.model.moe->aux_loss);
  std::string older = text;
  for (const char* key : {"\"router_fusion\": true,", "\"aux_loss\": true,"}) {
    const size_t at = older.find(key);
    ASSERT_NE(at, std::string::npos) << key << " in " << text;
    older.erase(at, std::string(key).size());
  }
  absl::StatusOr<MappingSpec> old_parsed = ParseSpecJson(older);
  ASSERT_THAT(old_parsed, IsOk()) << older;
  const auto& old_read = std::get<TransformerTrainingMappingSpec>(*old_parsed);
  EXPECT_FALSE(old_read.model.moe->router_fusion);
  EXPECT_FALSE(old_read.model.moe->aux_loss);
}

// An explicit layout prints only when given, and round-trips; a bad one
// names each bad entry.
TEST(SpecJson, StageBlocksRoundTripAndAbsentPrintsNothing) {
  TransformerTrainingMappingSpec spec;
  EXPECT_EQ(SpecToJson(spec).find("stage_blocks"), std::string::npos);
  spec.parallelism.pipeline.stage_blocks = {5, 6, 6, 5};
  const std::string text = SpecToJson(spec);
  absl::StatusOr<MappingSpec> back = ParseSpecJson(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(std::get<TransformerTrainingMappingSpec>(*back)
                .parallelism.pipeline.stage_blocks,
            (std::vector<int64_t>{5, 6, 6, 5}));
  EXPECT_EQ(SpecToJson(*back), text);
  std::string bad = text;
  const std::string from = "\"stage_blocks\": [";
  const size_t key = bad.find(from);
  ASSERT_NE(key, std::string::npos);
  bad.replace(key, from.size(), "\"stage_blocks\": [\"x\", 1.5, ");
  const absl::StatusOr<MappingSpec> rejected = ParseSpecJson(bad);
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(std::string(rejected.status().message())
                .find("parallelism.pipeline.stage_blocks[0]"),
            std::string::npos)
      << rejected.status();
  EXPECT_NE(std::string(rejected.status().message())
                .find("parallelism.pipeline.stage_blocks[1]"),
            std::string::npos)
      << rejected.status();
}

TEST(SpecJson, ShortestDoublesSurviveTheRoundTrip) {
  absl::StatusOr<MappingSpec> spec = ParseSpecJson(ReadFile(kExample));
  ASSERT_THAT(spec, IsOk());
  auto& training = std::get<TransformerTrainingMappingSpec>(*spec);
  training.system.networks[0].latency_s = 0.1 + 0.2;
  training.system.mem1.gib = 80e9;
  training.system.networks[1].efficiency = 1.0 / 3.0;
  absl::StatusOr<MappingSpec> parsed = ParseSpecJson(SpecToJson(*spec));
  ASSERT_THAT(parsed, IsOk());
  const auto& back = std::get<TransformerTrainingMappingSpec>(*parsed);
  EXPECT_EQ(back.system.networks[0].latency_s, 0.1 + 0.2);
  EXPECT_EQ(back.system.mem1.gib, 80e9);
  EXPECT_EQ(back.system.networks[1].efficiency, 1.0 / 3.0);
}

// achievable_tflops is optional: printed only when given, so Calculon's
// system files print as they read; read back to the same value.
TEST(SpecJson, AchievableRateIsPrintedOnlyWhenGiven) {
  System system;
  system.matrix.rates[DataType::kBFloat16] = {989.4, {{0, 0.95}}, 794.5};
  system.matrix.rates[DataType::kFloat32] = {66.9, {{0, 0.95}}, std::nullopt};
  const nlohmann::json json = SystemToJsonValue(system, NameKey::kAbsent);
  EXPECT_EQ(json["matrix"]["bfloat16"]["achievable_tflops"], 794.5);
  EXPECT_FALSE(json["matrix"]["float32"].contains("achievable_tflops"));
  std::vector<FieldError> errors;
  System read;
  ReadSystemJson(json, "system", NameKey::kAbsent, &errors, &read);
  EXPECT_THAT(errors, ::testing::IsEmpty());
  EXPECT_EQ(read.matrix.rates.at(DataType::kBFloat16).achievable_tflops,
            794.5);
  EXPECT_FALSE(
      read.matrix.rates.at(DataType::kFloat32).achievable_tflops.has_value());
}

// measured_busbw is optional too: printed only for the collectives that
// have one, read back row for row; an unknown collective is refused.
TEST(SpecJson, MeasuredBusBandwidthIsPrintedOnlyWhenGiven) {
  System system;
  system.matrix.rates[DataType::kBFloat16] = {989.4, {{0, 0.95}}, 794.5};
  system.networks.resize(2);
  system.networks[0].all_reduce.measured_busbw = {{8, 480}, {0, 370}};
  const nlohmann::json json = SystemToJsonValue(system, NameKey::kAbsent);
  EXPECT_EQ(json["networks"][0]["measured_busbw"],
            nlohmann::json::parse(R"({"all_reduce": [[8, 480], [0, 370]]})"));
  EXPECT_FALSE(json["networks"][1].contains("measured_busbw"));
  std::vector<FieldError> errors;
  System read;
  ReadSystemJson(json, "system", NameKey::kAbsent, &errors, &read);
  EXPECT_THAT(errors, ::testing::IsEmpty());
  ASSERT_EQ(read.networks.size(), 2u);
  ASSERT_EQ(read.networks[0].all_reduce.measured_busbw.size(), 2u);
  EXPECT_EQ(read.networks[0].all_reduce.measured_busbw[0].efficiency, 480);
  EXPECT_TRUE(read.networks[0].all_gather.measured_busbw.empty());
  EXPECT_TRUE(read.networks[1].all_reduce.measured_busbw.empty());

  nlohmann::json wrong = json;
  wrong["networks"][0]["measured_busbw"]["p2p"] = {{0, 370}};
  errors.clear();
  ReadSystemJson(wrong, "system", NameKey::kAbsent, &errors, &read);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].field, "system.networks[0].measured_busbw.p2p");
}

TEST(SpecJson, ReportsEveryProblemWithItsPath) {
  std::string text = ReadFile(kExample);
  const auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("\"degree\": 8,\n      \"network_tier\": 0",
          "\"degree\": \"8\",\n      \"network_tier\": 0.5");
  replace("\"global_batch_size\": 64", "\"global_batch_size\": 1e3");
  replace("\"microbatch_size\": 1",
          "\"microbatch_size\": 99999999999999999999");
  replace("\"recompute\": \"full\"", "\"recompute\": \"most\"");
  replace("\"virtual_stages\": 3", "\"virtual_stages\": 3, \"extra\": true");
  replace("\"fused_activation\": false,", "");
  replace("\"size\": 8", "\"size\": 18446744073709551615");
  replace("\"p2p\": [1, null],\n          \"reduce_scatter\": [1.5, -1]",
          "\"p2p\": [1],\n          \"reduce_scatter\": [\"1.5\", -1]");
  replace("\"float16\": {\n        \"gflops_efficiency\"",
          "\"fp16\": {\n        \"gflops_efficiency\"");
  absl::StatusOr<MappingSpec> spec = ParseSpecJson(text);
  ASSERT_THAT(spec, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(
      ErrorLines(spec.status()),
      (std::vector<std::string>{
          "system.matrix.fp16: unknown datatype (expected one of: float8, "
          "float16, bfloat16, float32, float4)",
          "system.networks[0].size: integer 18446744073709551615 is too large "
          "(at most 9223372036854775807)",
          "system.networks[0].ops.p2p: expected a [scalar, offset] pair, got "
          "an array",
          "system.networks[0].ops.reduce_scatter[0]: expected a number, got "
          "string \"1.5\"",
          "batch.global_batch_size: expected an integer, got 1000",
          "batch.microbatch_size: expected an integer, got 1e+20",
          "options.fused_activation: required key is missing",
          "parallelism.tensor.degree: expected an integer, got string \"8\"",
          "parallelism.tensor.network_tier: expected an integer, got 0.5",
          "parallelism.pipeline.schedule.extra: unknown key (expected keys: "
          "type, virtual_stages)",
          "parallelism.recompute: expected one of \"none\", \"attn_only\", "
          "\"full\", got string \"most\"",
      }));
  // Each error's field is its path and its code the kind of problem.
  EXPECT_THAT(spec, ErrorCodesAre(ElementsAre(
                        ErrorCode::kUnknownChoice, ErrorCode::kOutOfRange,
                        ErrorCode::kWrongType, ErrorCode::kWrongType,
                        ErrorCode::kWrongType, ErrorCode::kWrongType,
                        ErrorCode::kMissingField, ErrorCode::kWrongType,
                        ErrorCode::kWrongType, ErrorCode::kUnknownField,
                        ErrorCode::kUnknownChoice)));
  const std::vector<FieldError> errors = FieldErrorsOf(spec.status());
  for (const FieldError& error : errors) {
    EXPECT_EQ(error.message.substr(0, error.message.find(": ")), error.field);
  }
}

TEST(SpecJson, MalformedJsonNamesThePosition) {
  absl::StatusOr<MappingSpec> spec = ParseSpecJson("{\"format\": }");
  ASSERT_THAT(spec, Not(IsOk()));
  EXPECT_EQ(std::string(spec.status().message()),
            "malformed JSON: parse error at line 1, column 12: syntax error "
            "while parsing value - unexpected '}'; expected '[', '{', or a "
            "literal");
  EXPECT_THAT(
      spec,
      FieldErrorsAre(ElementsAre(FieldError{
          "", std::string(spec.status().message()), ErrorCode::kSyntax})));
}

TEST(SpecJson, TopLevelProblems) {
  absl::StatusOr<MappingSpec> spec = ParseSpecJson("[1]");
  ASSERT_THAT(spec, Not(IsOk()));
  EXPECT_EQ(
      ErrorLines(spec.status()),
      std::vector<std::string>{"top level: expected an object, got an array"});
  EXPECT_THAT(spec, FieldErrorsAre(ElementsAre(FieldError{
                        "", "top level: expected an object, got an array",
                        ErrorCode::kWrongType})));

  spec = ParseSpecJson(R"({"format": "blueprinting.spec/4", "kind": "serving",
                           "bonus": 1})");
  ASSERT_THAT(spec, Not(IsOk()));
  EXPECT_EQ(ErrorLines(spec.status()),
            (std::vector<std::string>{
                "format: expected \"blueprinting.spec/3\" (or "
                "\"blueprinting.spec/2\", \"blueprinting.spec/1\"), got "
                "string \"blueprinting.spec/4\"",
                "kind: expected one of \"training\", \"inference\", got "
                "string \"serving\"",
                "model: required key is missing",
                "system: required key is missing",
                "batch: required key is missing",
                "options: required key is missing",
                "parallelism: required key is missing",
                "bonus: unknown key (expected keys: format, kind, model, "
                "system, batch, options, parallelism)",
            }));
  EXPECT_THAT(spec, ErrorCodesAre(ElementsAre(
                        ErrorCode::kUnsupported, ErrorCode::kUnknownChoice,
                        ErrorCode::kMissingField, ErrorCode::kMissingField,
                        ErrorCode::kMissingField, ErrorCode::kMissingField,
                        ErrorCode::kMissingField, ErrorCode::kUnknownField)));
  EXPECT_EQ(FieldErrorsOf(spec.status())[1].field, "kind");
}

TEST(SpecJson, InferenceHasReplicasNotData) {
  std::string text = ReadFile(kExample);
  text.replace(text.find("\"training\""), 10, "\"inference\"");
  absl::StatusOr<MappingSpec> spec = ParseSpecJson(text);
  ASSERT_THAT(spec, Not(IsOk()));
  EXPECT_EQ(ErrorLines(spec.status()),
            (std::vector<std::string>{
                "parallelism.replica: required key is missing",
                "parallelism.context: unknown key (expected keys: tensor, "
                "pipeline, replica)",
                "parallelism.data: unknown key (expected keys: tensor, "
                "pipeline, replica)",
                "parallelism.expert: unknown key (expected keys: tensor, "
                "pipeline, replica)",
                "parallelism.recompute: unknown key (expected keys: tensor, "
                "pipeline, replica)",
            }));
}

TEST(SpecJson, ValuesAreTheCheckersConcern) {
  std::string text = ReadFile(kExample);
  text.replace(text.find("\"degree\": 8"), 11, "\"degree\": -8");
  absl::StatusOr<MappingSpec> spec = ParseSpecJson(text);
  ASSERT_THAT(spec, IsOk());
  const std::vector<Violation> violations = FindViolations(*spec);
  ASSERT_FALSE(violations.empty());
  EXPECT_EQ(violations[0].message,
            "parallelism.pipeline.degree (-8) must be at least 1");
}

TEST(ProgramJson, HoldsSpecAndDerivedValues) {
  absl::StatusOr<MappingSpec> spec = ParseSpecJson(ReadFile(kExample));
  ASSERT_THAT(spec, IsOk());
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  ASSERT_THAT(program, IsOk());
  const std::string text = ProgramToJson(*program);
  nlohmann::json value =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(value.is_object());
  EXPECT_EQ(value["format"], kProgramFormat);
  EXPECT_EQ(value["derived"]["blocks_per_chunk"], 4);
  EXPECT_EQ(value["derived"]["recompute"], "full");
  EXPECT_EQ(value["derived"].size(), 33u);
  EXPECT_EQ(value["spec"], SpecToJsonValue(*spec));
  EXPECT_EQ(text.back(), '\n');
}

}  // namespace
}  // namespace blueprint
