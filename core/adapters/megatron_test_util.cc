#include "core/adapters/megatron_test_util.h"

#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/adapters/calculon.h"
#include "core/adapters/megatron.h"
#include "core/testing/files.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace megatron_test {

using test_files::ReadFile;

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

std::vector<std::string> Args(const std::string& command_line) {
  return absl::StrSplit(command_line, ' ', absl::SkipEmpty());
}

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

std::vector<std::string> Errors(const std::string& command_line) {
  absl::StatusOr<MappingSpec> spec =
      FromMegatronArgs(Args(command_line), A100());
  if (spec.ok()) return {};
  return absl::StrSplit(std::string(spec.status().message()), '\n');
}

std::vector<std::string> Notes(const std::string& command_line) {
  std::vector<std::string> notes;
  (void)FromMegatronArgs(Args(command_line), A100(), &notes);
  return notes;
}

TransformerTrainingMappingSpec Import(const std::string& command_line) {
  absl::StatusOr<MappingSpec> spec =
      FromMegatronArgs(Args(command_line), A100());
  EXPECT_TRUE(spec.ok()) << command_line << "\n" << spec.status();
  if (!spec.ok()) return {};
  return std::get<TransformerTrainingMappingSpec>(*spec);
}

namespace {

// The FieldErrors of `command_line` (none when it imports).
std::vector<FieldError> FieldErrorsOfCommandLine(
    const std::string& command_line) {
  absl::StatusOr<MappingSpec> spec =
      FromMegatronArgs(Args(command_line), A100());
  if (spec.ok()) return {};
  return FieldErrorsOf(spec.status());
}

}  // namespace

std::vector<std::string> Fields(const std::string& command_line) {
  std::vector<std::string> fields;
  for (const FieldError& error : FieldErrorsOfCommandLine(command_line)) {
    fields.push_back(error.field);
  }
  return fields;
}

std::vector<ErrorCode> Codes(const std::string& command_line) {
  std::vector<ErrorCode> codes;
  for (const FieldError& error : FieldErrorsOfCommandLine(command_line)) {
    codes.push_back(error.code);
  }
  return codes;
}

}  // namespace megatron_test
}  // namespace blueprint
