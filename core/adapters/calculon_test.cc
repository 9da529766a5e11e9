#include "core/adapters/calculon.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "core/base/field_errors.h"
#include "core/spec/check.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "core/spec/spec_json.h"
#include "core/testing/status_matchers.h"
#include "core/testing/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

using ::testing::ElementsAre;
using ::testing::Not;
using ::testing::Pair;

// Tests run in the runfiles root, natively and under node alike.
constexpr char kOracleRc[] = "core/adapters/testdata/calculon_oracle_rc.txt";
constexpr char kSeeds[] = "core/adapters/fuzz_seeds/";

using test_files::ReadFile;

// One shared oracle case: Calculon's inputs, verbatim, and its exit code.
struct OracleCase {
  std::string name;
  int rc = 0;
  std::string app, exe, sys;
};

// The cases, from the fuzz seeds that hold their files ('1' app NUL exe NUL
// sys) and the exit codes tools/make_fuzz_seeds recorded.
std::vector<OracleCase> OracleCases() {
  std::vector<OracleCase> cases;
  for (absl::string_view line :
       absl::StrSplit(ReadFile(kOracleRc), '\n', absl::SkipEmpty())) {
    const std::vector<std::string> fields = absl::StrSplit(line, ' ');
    OracleCase c;
    c.name = fields[0];
    c.rc = std::stoi(fields[1]);
    const std::string seed = ReadFile(kSeeds + ("calculon-" + c.name));
    const std::vector<std::string> parts = absl::StrSplit(seed.substr(1), '\0');
    if (parts.size() != 3) continue;
    c.app = parts[0];
    c.exe = parts[1];
    c.sys = parts[2];
    cases.push_back(std::move(c));
  }
  return cases;
}

OracleCase FindCase(const std::string& prefix) {
  for (OracleCase& c : OracleCases()) {
    if (c.name.rfind(prefix, 0) == 0) return c;
  }
  ADD_FAILURE() << "no oracle case " << prefix;
  return {};
}

// Import then check, as `blueprint import calculon` + `blueprint check` do.
absl::Status ImportAndCheck(const OracleCase& c) {
  absl::StatusOr<MappingSpec> spec = FromCalculon(c.app, c.exe, c.sys);
  if (!spec.ok()) return spec.status();
  return CheckSpec(*spec).status();
}

TEST(CalculonOracle, EveryCaseIsAcceptedOrRejectedAsCalculonDid) {
  const std::vector<OracleCase> cases = OracleCases();
  ASSERT_GE(cases.size(), 55u);
  for (const OracleCase& c : cases) {
    // x09 fails only Calculon's memory-capacity check, which belongs to the
    // memory analysis, not to the checker.
    const bool expect_accepted = c.rc == 0 || c.name.rfind("x09_", 0) == 0;
    const absl::Status status = ImportAndCheck(c);
    EXPECT_EQ(status.ok(), expect_accepted) << c.name << ": " << status;
  }
}

// Calculon's bare assertions and terse errors, as named messages.
TEST(CalculonOracle, RejectionsNameTheFieldAndValues) {
  const std::map<std::string, std::string> expected = {
      {"x01_",
       "exe.num_procs (100) must equal tensor_par (8) * pipeline_par "
       "(8) * data_par (1) = 64"},
      {"x02_",
       "batch.global_batch_size (64) must be divisible by "
       "parallelism.data.degree (3)"},
      {"x03_",
       "local batch size (batch.global_batch_size 64 / "
       "parallelism.data.degree 1 = 64) must be divisible by "
       "batch.microbatch_size (3)"},
      {"x04_",
       "parallelism.pipeline.schedule.virtual_stages (24) must be at "
       "most blocks_per_stage (12)"},
      {"x05_",
       "parallelism.pipeline.schedule.virtual_stages (5) must divide "
       "blocks_per_stage (12)"},
      {"x06_",
       "model.hidden (5140) must be divisible by "
       "parallelism.tensor.degree (8)"},
      {"x07_",
       "network tier 0 isn't big enough: parallelism.tensor.degree "
       "(16) mapped to it needs 16 processors, but "
       "system.networks[0].size is 8"},
      {"x08_",
       "network tier 0 isn't fully used: parallelism.tensor.degree "
       "(3) mapped to it uses 3 processors, which does not divide "
       "system.networks[0].size (8) although "
       "system.networks[0].must_be_filled is true"},
      {"x10_",
       "parallelism.data.sharding (optimizer) requires "
       "parallelism.data.degree > 1 (got 1)"},
      {"x11_",
       "exe.seq_par_ag_redo (true) requires exe.tensor_par_comm_type "
       "rs_ag (got ar): only sequence-parallel all-gathers can be "
       "redone"},
      {"x12_",
       "parallelism.pipeline.schedule interleaved_1f1b with "
       "parallelism.pipeline.schedule.virtual_stages (2) requires "
       "parallelism.pipeline.degree > 1 (got 1); use single_stage"},
      {"x13_",
       "options.offload (weights) requires blocks_per_stage >= 3 "
       "(got 2)"},
      {"x14_",
       "parallelism.data.overlap requires parallelism.data.degree > "
       "1 (got 1)"},
      {"x17_",
       "parallelism.tensor.overlap (ring) requires "
       "parallelism.tensor.degree > 1 (got 1)"},
  };
  for (const auto& [prefix, message] : expected) {
    const absl::Status status = ImportAndCheck(FindCase(prefix));
    ASSERT_THAT(status, Not(IsOk())) << prefix;
    EXPECT_EQ(std::string(status.message()), message) << prefix;
  }
}

TEST(CalculonOracle, CanonicalJsonRoundTrips) {
  for (const OracleCase& c : OracleCases()) {
    absl::StatusOr<MappingSpec> spec = FromCalculon(c.app, c.exe, c.sys);
    if (!spec.ok()) continue;
    const std::string text = SpecToJson(*spec);
    absl::StatusOr<MappingSpec> parsed = ParseSpecJson(text);
    ASSERT_THAT(parsed, IsOk()) << c.name;
    EXPECT_EQ(SpecToJson(*parsed), text) << c.name;
  }
}

// A checked case exported back to Calculon's execution JSON gives the very
// keys and values it was imported from.
TEST(CalculonOracle, ExecutionJsonRoundTrips) {
  int exported = 0;
  for (const OracleCase& c : OracleCases()) {
    absl::StatusOr<MappingSpec> spec = FromCalculon(c.app, c.exe, c.sys);
    if (!spec.ok()) continue;
    absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
    if (!program.ok()) continue;
    const nlohmann::json original =
        nlohmann::json::parse(c.exe, nullptr, /*allow_exceptions=*/false);
    EXPECT_EQ(ToCalculonExecutionJson(*program), original) << c.name;
    absl::StatusOr<MappingSpec> back = FromCalculon(
        ToCalculonApplication(program->model()), ToCalculonExecution(*program),
        ToCalculonSystem(program->system()));
    ASSERT_THAT(back, IsOk()) << c.name;
    EXPECT_EQ(SpecToJson(*back), SpecToJson(*spec)) << c.name;
    ++exported;
  }
  EXPECT_GE(exported, 41);
}

TEST(CalculonMapping, SchedulesAndLayouts) {
  const OracleCase v13 = FindCase("v13_");  // t8 p7, 96 blocks
  absl::StatusOr<MappingSpec> spec = FromCalculon(v13.app, v13.exe, v13.sys);
  ASSERT_THAT(spec, IsOk());
  const auto& pipeline =
      std::get<TransformerTrainingMappingSpec>(*spec).parallelism.pipeline;
  EXPECT_EQ(pipeline.stage_layout, StageLayout::kUneven);
  EXPECT_TRUE(std::holds_alternative<OneForwardOneBackward>(pipeline.schedule));

  const OracleCase v31 = FindCase("v31_");  // inference, p2
  spec = FromCalculon(v31.app, v31.exe, v31.sys);
  ASSERT_THAT(spec, IsOk());
  const auto& inference = std::get<TransformerInferenceMappingSpec>(*spec);
  EXPECT_TRUE(std::holds_alternative<ForwardOnly>(
      inference.parallelism.pipeline.schedule));
  EXPECT_EQ(inference.parallelism.replica.degree, 1);
  EXPECT_EQ(inference.parallelism.replica.network_tier, 1);

  const OracleCase v14 = FindCase("v14_");  // seqsel with redo, v3
  spec = FromCalculon(v14.app, v14.exe, v14.sys);
  ASSERT_THAT(spec, IsOk());
  const auto& training = std::get<TransformerTrainingMappingSpec>(*spec);
  EXPECT_TRUE(std::get<ReduceScatterAllGather>(
                  training.parallelism.tensor.communication)
                  .all_gather_redo);
  EXPECT_EQ(std::get<InterleavedOneForwardOneBackward>(
                training.parallelism.pipeline.schedule)
                .virtual_stages,
            3);
  EXPECT_EQ(training.parallelism.recompute, RecomputePolicy::kAttentionOnly);
}

// An execution JSON built from v09's with edits.
class CalculonErrors : public testing::Test {
 protected:
  void SetUp() override {
    v09_ = FindCase("v09_");
    exe_ = nlohmann::json::parse(v09_.exe, nullptr, false);
    ASSERT_TRUE(exe_.is_object());
  }
  // What FromCalculon makes of the edited execution.
  absl::StatusOr<MappingSpec> Import() {
    return FromCalculon(v09_.app, exe_.dump(), v09_.sys);
  }
  std::vector<std::string> Errors() {
    absl::StatusOr<MappingSpec> spec = Import();
    if (spec.ok()) return {};
    return absl::StrSplit(std::string(spec.status().message()), '\n');
  }

  OracleCase v09_;
  nlohmann::json exe_;
};

TEST_F(CalculonErrors, MissingUnknownAndMistypedKeysAreNamed) {
  exe_.erase("data_par_overlap");
  exe_["pipeline_par"] = "8";
  exe_["training"] = 1;
  exe_["tensor_par_comm_type"] = "sp";
  exe_["datatype"] = "fp16";
  exe_["turbo"] = true;
  EXPECT_EQ(Errors(),
            (std::vector<std::string>{
                "exe.pipeline_par: expected an integer, got string \"8\"",
                "exe.datatype: expected one of \"float8\", \"float16\", "
                "\"bfloat16\", \"float32\", got string \"fp16\"",
                "exe.tensor_par_comm_type: expected one of \"ar\", \"rs_ag\", "
                "\"p2p_rs_ag\", got string \"sp\"",
                "exe.data_par_overlap: required key is missing",
                "exe.training: expected a boolean (true or false), got 1",
                "exe.turbo: unknown key (expected keys: num_procs, tensor_par, "
                "pipeline_par, data_par, tensor_par_net, pipeline_par_net, "
                "data_par_net, batch_size, microbatch_size, datatype, "
                "fused_activation, attention_type, activation_recompute, "
                "pipeline_interleaving, optimizer_sharding, "
                "tensor_par_comm_type, tensor_par_overlap, seq_par_ag_redo, "
                "data_par_overlap, weight_offload, activations_offload, "
                "optimizer_offload, training)",
            }));
  EXPECT_THAT(Import(),
              FieldsAndCodesAre(ElementsAre(
                  Pair("exe.pipeline_par", ErrorCode::kWrongType),
                  Pair("exe.datatype", ErrorCode::kUnknownChoice),
                  Pair("exe.tensor_par_comm_type", ErrorCode::kUnknownChoice),
                  Pair("exe.data_par_overlap", ErrorCode::kMissingField),
                  Pair("exe.training", ErrorCode::kWrongType),
                  Pair("exe.turbo", ErrorCode::kUnknownField))));
}

TEST_F(CalculonErrors, TrainingOnlyKnobsNeedTraining) {
  exe_["training"] = false;
  exe_["data_par_overlap"] = true;
  exe_["optimizer_offload"] = true;
  exe_["pipeline_interleaving"] = 0;
  exe_["num_procs"] = 63;
  EXPECT_EQ(Errors(),
            (std::vector<std::string>{
                "exe.num_procs (63) must equal tensor_par (8) * pipeline_par "
                "(8) * data_par (1) = 64",
                "exe.pipeline_interleaving (0) must be at least 1",
                "exe.activation_recompute (full) requires exe.training true: "
                "Calculon only recomputes during training",
                "exe.data_par_overlap (true) requires exe.training true: "
                "Calculon only overlaps DP communication during training",
                "exe.optimizer_offload (true) requires exe.training true: "
                "Calculon only offloads the optimizer during training",
            }));
  EXPECT_THAT(Import(),
              FieldsAndCodesAre(ElementsAre(
                  Pair("exe.num_procs", ErrorCode::kInconsistent),
                  Pair("exe.pipeline_interleaving", ErrorCode::kOutOfRange),
                  Pair("exe.activation_recompute", ErrorCode::kInconsistent),
                  Pair("exe.data_par_overlap", ErrorCode::kInconsistent),
                  Pair("exe.optimizer_offload", ErrorCode::kInconsistent))));
  exe_["training"] = true;
  exe_["data_par_overlap"] = false;
  exe_["optimizer_offload"] = false;
  exe_["pipeline_interleaving"] = 3;
  exe_["num_procs"] = 64;
  exe_["seq_par_ag_redo"] = true;
  EXPECT_THAT(Import(), FieldsAndCodesAre(ElementsAre(Pair(
                            "exe.seq_par_ag_redo", ErrorCode::kInconsistent))));
}

TEST_F(CalculonErrors, HugeDegreesAreErrorsNotOverflows) {
  exe_["tensor_par"] = int64_t{1} << 62;
  exe_["data_par"] = 4;
  EXPECT_EQ(Errors(),
            std::vector<std::string>{
                "exe.num_procs (64) must equal tensor_par "
                "(4611686018427387904) * pipeline_par (8) * data_par (4), "
                "which overflows 64-bit integers"});
  EXPECT_THAT(Import(), FieldsAndCodesAre(ElementsAre(
                            Pair("exe.num_procs", ErrorCode::kOutOfRange))));
}

TEST_F(CalculonErrors, OptimizerShardingIsDroppedForInference) {
  exe_["training"] = false;
  exe_["activation_recompute"] = "none";
  exe_["pipeline_interleaving"] = 1;
  exe_["optimizer_sharding"] = true;
  EXPECT_TRUE(Errors().empty());
  absl::StatusOr<MappingSpec> spec =
      FromCalculon(v09_.app, exe_.dump(), v09_.sys);
  ASSERT_THAT(spec, IsOk());
  EXPECT_TRUE(std::holds_alternative<TransformerInferenceMappingSpec>(*spec));
  EXPECT_THAT(CheckSpec(*spec), IsOk());
}

TEST_F(CalculonErrors, EveryFileIsReported) {
  absl::StatusOr<MappingSpec> spec = FromCalculon("{", "[]", "{}");
  ASSERT_THAT(spec, Not(IsOk()));
  const std::vector<std::string> errors =
      absl::StrSplit(std::string(spec.status().message()), '\n');
  ASSERT_EQ(errors.size(), 8u) << spec.status();
  EXPECT_EQ(errors[0],
            "app: malformed JSON: parse error at line 1, column 2: syntax "
            "error while parsing object key - unexpected end of input; "
            "expected string literal");
  EXPECT_EQ(errors[1], "exe: expected an object, got an array");
  EXPECT_EQ(errors[2], "sys.matrix: required key is missing");
  EXPECT_EQ(errors[7], "sys.networks: required key is missing");
  const std::vector<FieldError> fields = FieldErrorsOf(spec.status());
  EXPECT_EQ(fields[0].field, "app");
  EXPECT_EQ(fields[0].code, ErrorCode::kSyntax);
  EXPECT_EQ(fields[1].field, "exe");
  EXPECT_EQ(fields[1].code, ErrorCode::kWrongType);
  EXPECT_EQ(fields[2].field, "sys.matrix");
  EXPECT_EQ(fields[2].code, ErrorCode::kMissingField);
}

TEST(CalculonSystem, ShippedSystemsRoundTrip) {
  for (const char* name : {"a100_80g", "a100_80e", "h100_80g_nvl8"}) {
    const std::string seed = ReadFile(kSeeds + std::string("system-") + name);
    ASSERT_FALSE(seed.empty()) << name;
    absl::StatusOr<System> system = FromCalculonSystem(seed.substr(1));
    ASSERT_THAT(system, IsOk()) << name;
    const std::string printed = ToCalculonSystem(*system);
    absl::StatusOr<System> again = FromCalculonSystem(printed);
    ASSERT_THAT(again, IsOk());
    EXPECT_EQ(ToCalculonSystem(*again), printed);
    EXPECT_EQ(nlohmann::json::parse(printed, nullptr, false),
              nlohmann::json::parse(seed.substr(1), nullptr, false))
        << name;
  }
}

TEST(CalculonSystem, H100HasFloat8) {
  const std::string seed =
      ReadFile(kSeeds + std::string("system-h100_80g_nvl8"));
  absl::StatusOr<System> system = FromCalculonSystem(seed.substr(1));
  ASSERT_THAT(system, IsOk());
  EXPECT_EQ(system->matrix.rates.count(DataType::kFloat8), 1u);
  EXPECT_EQ(system->matrix.rates.at(DataType::kFloat8).tflops, 2000);
}

// The search's --app takes Calculon's application or a spec/2 model object.
TEST(FromCalculonApplication, TakesCalculonsKeysOrASpecModel) {
  absl::StatusOr<TransformerModel> calculon = FromCalculonApplication(
      R"({"hidden": 256, "feedforward": 1024, "seq_size": 64,
          "attn_heads": 16, "attn_size": 16, "num_blocks": 8})");
  ASSERT_THAT(calculon, IsOk());
  EXPECT_EQ(calculon->kv_heads, 16);
  EXPECT_EQ(calculon->vocabulary.size, 0);

  TransformerModel model = CalculonModel("tiny", 256, 1024, 16, 16, 8, 64);
  model.kv_heads = 4;
  model.mlp = MlpType::kGated;
  model.vocabulary.size = 32000;
  absl::StatusOr<TransformerModel> spec_model = FromCalculonApplication(
      ModelToJsonValue(model, ModelKeys::kSpecV2).dump());
  ASSERT_THAT(spec_model, IsOk());
  EXPECT_EQ(ModelToJsonValue(*spec_model, ModelKeys::kSpecV2),
            ModelToJsonValue(model, ModelKeys::kSpecV2));

  // A spec model must spell every key out.
  absl::StatusOr<TransformerModel> partial = FromCalculonApplication(
      R"({"name": "x", "hidden": 256, "feedforward": 1024, "seq_size": 64,
          "attn_heads": 16, "attn_size": 16, "num_blocks": 8})");
  ASSERT_THAT(partial, Not(IsOk()));
  EXPECT_THAT(std::string(partial.status().message()),
              ::testing::HasSubstr("app.kv_heads: required key is missing"));
}

}  // namespace
}  // namespace blueprint
