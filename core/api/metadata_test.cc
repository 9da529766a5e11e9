#include "core/api/metadata.h"

#include <string>

#include "core/base/field_errors.h"
#include "core/base/json.h"
#include "core/spec/check.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace blueprint {
namespace {

nlohmann::json MetadataJson() {
  const CommandResult result = Metadata();
  EXPECT_EQ(result.exit_code, kExitOk);
  EXPECT_TRUE(result.errors.empty());
  absl::StatusOr<nlohmann::json> json = ParseJson(result.output);
  EXPECT_TRUE(json.ok()) << json.status();
  // Canonical text: printing it again gives the same bytes.
  EXPECT_EQ(CanonicalJson(*json) + "\n", result.output);
  return *json;
}

TEST(Metadata, ListsEnumsFiguresAndSpecFields) {
  const nlohmann::json m = MetadataJson();
  EXPECT_EQ(m["format"], "blueprinting.metadata/1");
  EXPECT_EQ(m["figures"]["total_time"]["unit"], "s");
  EXPECT_EQ(m["figures"]["total_time"]["group"], "iteration");
  EXPECT_EQ(m["figures"]["total_time"]["label"], "Iteration time");
  EXPECT_EQ(m["figures"]["weight_space"]["unit"], "bytes");
  EXPECT_TRUE(m["figures"]["block_fw_flops"]["label"].is_null());
  EXPECT_EQ(m["figures"]["bubble_fraction"]["formula"],
            "total_time > 0 ? bubble_time / total_time : 0");
  EXPECT_TRUE(m["figures"]["block_fw_flops"]["formula"].is_null());
  const nlohmann::json& schedules = m["enums"]["pipeline_schedule"];
  EXPECT_EQ(schedules["variant"], true);
  EXPECT_EQ(schedules["choices"][2]["name"], "interleaved_1f1b");
  EXPECT_EQ(m["enums"]["datatype"]["choices"][1]["calculon"], "float16");
  EXPECT_TRUE(m["enums"]["stage_layout"]["choices"][0]["calculon"].is_null());

  const nlohmann::json& fields = m["spec_fields"];
  EXPECT_EQ(fields["model.hidden"]["type"], "integer");
  EXPECT_EQ(fields["model.hidden"]["min"], 1);
  EXPECT_EQ(fields["options.datatype"]["choices"], "datatype");
  EXPECT_EQ(fields["parallelism.recompute"]["kinds"],
            nlohmann::json::array({"training"}));
  EXPECT_EQ(fields["parallelism.replica.degree"]["kinds"],
            nlohmann::json::array({"inference"}));
  EXPECT_EQ(fields["parallelism.tensor.degree"]["kinds"],
            nlohmann::json::array({"training", "inference"}));
  EXPECT_EQ(fields["parallelism.pipeline.schedule.virtual_stages"]["when"]["in"],
            nlohmann::json::array({"interleaved_1f1b", "forward_only"}));
  EXPECT_EQ(
      fields["parallelism.tensor.communication.all_gather_redo"]["when"]["in"],
      nlohmann::json::array({"rs_ag"}));
  EXPECT_EQ(fields["system.networks[].ops.p2p[1]"]["type"], "null");
  EXPECT_EQ(fields["system.networks[].ops.all_reduce[1]"]["type"], "number");
  EXPECT_EQ(fields["system.mem1.GiB"]["min"], 1e-6);
  EXPECT_EQ(fields["system.mem1.GiB"]["unit"], "GiB");
  EXPECT_EQ(fields["system.networks"]["max"], kMaxNetworkTiers);
  EXPECT_EQ(fields["parallelism.pipeline.stage_blocks"]["type"], "array");
  EXPECT_EQ(fields["parallelism.pipeline.stage_blocks"]["kinds"],
            nlohmann::json::array({"training", "inference"}));
  EXPECT_EQ(fields["system.matrix.<datatype>.gflops_efficiency[][1]"]["max"], 1);
}

// The error codes come from the one table, in its order.
TEST(Metadata, ListsEveryErrorCodeWithItsMeaning) {
  const nlohmann::json m = MetadataJson();
  const nlohmann::json& codes = m["error_codes"];
  ASSERT_TRUE(codes.is_array());
  ASSERT_EQ(codes.size(), std::size(kErrorCodes));
  for (size_t i = 0; i < codes.size(); ++i) {
    EXPECT_EQ(codes[i]["name"], kErrorCodes[i].name);
    EXPECT_EQ(codes[i]["meaning"], kErrorCodes[i].meaning);
  }
  EXPECT_EQ(codes[0]["name"], "syntax");
}

// Every range of the checker lands on a field of the spec.
TEST(Metadata, EveryCheckedRangeNamesASpecField) {
  const nlohmann::json m = MetadataJson();
  for (const FieldRange& range : CheckedFieldRanges()) {
    EXPECT_TRUE(m["spec_fields"].contains(range.field)) << range.field;
  }
}

// Every integer of the spec has a documented minimum and maximum (issue 49:
// model.moe.shared_ffn had a minimum only), the maximum within 2^31.
TEST(Metadata, EveryIntegerFieldHasAMaximum) {
  const nlohmann::json m = MetadataJson();
  int integers = 0;
  for (auto it = m["spec_fields"].begin(); it != m["spec_fields"].end(); ++it) {
    if (it.value()["type"] != "integer") continue;
    ++integers;
    ASSERT_TRUE(it.value().contains("min")) << it.key();
    ASSERT_TRUE(it.value().contains("max")) << it.key();
    EXPECT_LE(it.value()["max"].get<int64_t>(), kMaxCount) << it.key();
    EXPECT_LE(it.value()["min"].get<int64_t>(), it.value()["max"].get<int64_t>())
        << it.key();
  }
  EXPECT_GE(integers, 30);
}

}  // namespace
}  // namespace blueprint
