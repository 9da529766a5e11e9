// Test-only builders of serving spec JSON texts and of the presets and
// command lines the imports read (core/serving tests).
#ifndef BLUEPRINTING_CORE_SERVING_SERVING_TEST_UTIL_H_
#define BLUEPRINTING_CORE_SERVING_SERVING_TEST_UTIL_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/adapters/calculon.h"
#include "core/base/field_errors.h"
#include "core/presets/presets.h"
#include "core/serving/engine_flags.h"
#include "core/testing/files.h"
#include "core/serving/serving_spec.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace serving_test {

// A pool object: {"tensor": t, "pipeline": p, ...}.
inline std::string Pool(int64_t t, int64_t p = 1, int64_t e = 1, int64_t a = 1,
                        int64_t replicas = 1) {
  return absl::StrCat("{\"tensor\": ", t, ", \"pipeline\": ", p,
                      ", \"expert\": ", e, ", \"attention_data\": ", a,
                      ", \"replicas\": ", replicas, "}");
}
inline std::string Aggregated(const std::string& pool) {
  return absl::StrCat("{\"type\": \"aggregated\", \"pool\": ", pool, "}");
}
inline std::string Disaggregated(const std::string& prefill,
                                 const std::string& decode) {
  return absl::StrCat("{\"type\": \"disaggregated\", \"prefill\": ", prefill,
                      ", \"decode\": ", decode, "}");
}

struct SpecText {
  std::string model = "\"llama3.1-70b\"";
  std::string system = "\"h100_sxm_80g\"";
  std::string pools = Aggregated(Pool(8));
  int64_t input_tokens = 1024;
  int64_t output_tokens = 256;
  int64_t concurrency = 64;
  std::string weight_datatype = "bfloat16";
  std::string kv_datatype = "bfloat16";
  int64_t block_tokens = 16;
  double memory_utilization = 0.9;

  std::string Json() const {
    return absl::StrCat(
        "{\"format\": \"blueprinting.serving_spec/1\", \"model\": ", model,
        ", \"system\": ", system, ", \"weight_datatype\": \"",
        weight_datatype, "\", \"memory_utilization\": ", memory_utilization,
        ", \"kv_cache\": {\"datatype\": \"", kv_datatype,
        "\", \"block_tokens\": ", block_tokens, "}, \"pools\": ", pools,
        ", \"workload\": {\"input_tokens\": ", input_tokens,
        ", \"output_tokens\": ", output_tokens,
        ", \"concurrency\": ", concurrency,
        "}, \"speculative\": {\"type\": \"none\"}}");
  }
};

// The spec of `text`, which must parse.
inline ServingSpec Parse(const SpecText& text) {
  absl::StatusOr<ServingSpec> spec = ParseServingSpecJson(text.Json());
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : ServingSpec{};
}

// The fields of errors, in order.
inline std::vector<std::string> Fields(const std::vector<FieldError>& errors) {
  std::vector<std::string> out;
  for (const FieldError& e : errors) out.push_back(e.field);
  return out;
}

// The words of a command line.
inline std::vector<std::string> Words(const std::string& text) {
  return absl::StrSplit(text, ' ', absl::SkipEmpty());
}

// A system preset, and a model preset read on it (as `blueprint import
// vllm --hf-config NAME` reads it).
inline System SystemPreset(const char* name) {
  absl::StatusOr<System> system =
      FromCalculonSystem(FindPreset(PresetKind::kSystem, name));
  EXPECT_TRUE(system.ok());
  return system.ok() ? *system : System{};
}
inline TransformerModel ModelPreset(const char* name, const System& system) {
  absl::StatusOr<TransformerModel> model =
      ModelFromHfConfig(FindPreset(PresetKind::kModel, name), system);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : TransformerModel{};
}

// An engine's flag table: every spelling in one row only, every row with
// its line, and core/serving/README.md's section `marker` is `markdown`.
inline void ExpectFlagTableShown(const std::vector<EngineFlag>& flags,
                                 const std::string& markdown,
                                 const std::string& marker) {
  std::set<std::string> names;
  for (const EngineFlag& flag : flags) {
    ASSERT_FALSE(flag.names.empty());
    EXPECT_FALSE(flag.doc.empty()) << flag.names[0];
    for (const std::string& name : flag.names) {
      EXPECT_TRUE(names.insert(name).second) << name << " twice";
    }
  }
  const std::optional<std::string> shown =
      test_files::MarkedSection("core/serving/README.md", marker);
  ASSERT_TRUE(shown.has_value()) << "README.md lacks the markers " << marker;
  EXPECT_EQ(*shown, markdown);
}

}  // namespace serving_test
}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SERVING_SERVING_TEST_UTIL_H_
