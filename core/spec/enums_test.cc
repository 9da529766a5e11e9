#include "core/spec/enums.h"
#include "core/spec/recipes.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace blueprint {
namespace {

// Every value appears once, every spelling is unique, and the parsers invert
// the names (canonical and Calculon's).
template <typename Enum>
void ExpectConsistent() {
  std::set<Enum> values;
  std::set<std::string> names, calculon;
  for (const EnumRow<Enum>& row : EnumTable<Enum>::kRows) {
    EXPECT_TRUE(values.insert(row.value).second) << row.spelling.name;
    EXPECT_TRUE(names.insert(row.spelling.name).second) << row.spelling.name;
    EXPECT_NE(std::string(row.spelling.meaning), "");
    EXPECT_EQ(EnumName(row.value), std::string(row.spelling.name));
    EXPECT_EQ(ParseEnum<Enum>(row.spelling.name), row.value);
    if (row.spelling.calculon != nullptr) {
      EXPECT_TRUE(calculon.insert(row.spelling.calculon).second);
      EXPECT_EQ(ParseCalculonEnum<Enum>(row.spelling.calculon), row.value);
    }
  }
  EXPECT_EQ(ParseEnum<Enum>("no such spelling"), std::nullopt);
  EXPECT_EQ(EnumChoices<Enum>().size(), std::size(EnumTable<Enum>::kRows));
}

template <typename Variant>
void ExpectVariantConsistent() {
  std::set<std::string> names;
  for (const Spelling& type : VariantTable<Variant>::kTypes) {
    EXPECT_TRUE(names.insert(type.name).second) << type.name;
    const std::optional<Variant> value = VariantOfType<Variant>(type.name);
    ASSERT_TRUE(value.has_value()) << type.name;
    EXPECT_EQ(VariantTypeName(*value), std::string(type.name));
    if (type.calculon != nullptr) {
      EXPECT_EQ(VariantOfCalculonType<Variant>(type.calculon)->index(),
                value->index());
    }
  }
  EXPECT_EQ(VariantOfType<Variant>("no such type"), std::nullopt);
}

TEST(EnumsTest, TablesAreConsistent) {
  ExpectConsistent<DataType>();
  ExpectConsistent<TensorOverlap>();
  ExpectConsistent<RecomputePolicy>();
  ExpectConsistent<AttentionType>();
  ExpectConsistent<ProcessingMode>();
  ExpectConsistent<StageLayout>();
  ExpectConsistent<MlpType>();
  ExpectConsistent<NormType>();
  ExpectConsistent<PositionEmbedding>();
  ExpectConsistent<PrecisionAccounting>();
  ExpectConsistent<QuantizationRecipe>();
  ExpectVariantConsistent<TensorCommunication>();
  ExpectVariantConsistent<PipelineSchedule>();
  ExpectVariantConsistent<MappingSpec>();
}

TEST(EnumsTest, SpellingsAreTheDocumentedOnes) {
  EXPECT_EQ(EnumChoices<DataType>(),
            (std::vector<std::string>{"float8", "float16", "bfloat16",
                                      "float32", "float4"}));
  // Calculon's files have no float4 key: its spellings stay its own.
  EXPECT_EQ(EnumCalculonChoices<DataType>(),
            (std::vector<std::string>{"float8", "float16", "bfloat16",
                                      "float32"}));
  EXPECT_EQ(EnumChoices<QuantizationRecipe>(),
            (std::vector<std::string>{"none", "fp8_delayed", "fp8_tensorwise",
                                      "fp8_blockwise", "mxfp8", "nvfp4"}));
  EXPECT_EQ(EnumChoices<RecomputePolicy>(),
            (std::vector<std::string>{"none", "attn_only", "full"}));
  EXPECT_EQ(VariantChoices<PipelineSchedule>(),
            (std::vector<std::string>{"single_stage", "1f1b",
                                      "interleaved_1f1b", "forward_only",
                                      "gpipe", "dualpipe_v", "zb_h1", "zb_v",
                                      "zb_h2", "dualpipe"}));
  EXPECT_EQ(VariantCalculonChoices<TensorCommunication>(),
            (std::vector<std::string>{"ar", "rs_ag", "p2p_rs_ag"}));
  EXPECT_TRUE(EnumCalculonChoices<StageLayout>().empty());
  EXPECT_EQ(EnumChoices<MlpType>(),
            (std::vector<std::string>{"plain", "gated"}));
  EXPECT_EQ(EnumChoices<NormType>(),
            (std::vector<std::string>{"layernorm", "rmsnorm"}));
  EXPECT_EQ(EnumChoices<PositionEmbedding>(),
            (std::vector<std::string>{"none", "rope", "learned"}));
  EXPECT_EQ(EnumChoices<PrecisionAccounting>(),
            (std::vector<std::string>{"calculon", "megatron_mixed"}));
  EXPECT_EQ(PipelineScheduleName(InterleavedOneForwardOneBackward{3}),
            std::string("interleaved_1f1b"));
  const std::optional<PipelineSchedule> interleaved =
      VariantOfType<PipelineSchedule>("interleaved_1f1b");
  ASSERT_TRUE(interleaved.has_value());
  EXPECT_EQ(std::get<InterleavedOneForwardOneBackward>(*interleaved)
                .virtual_stages,
            2);
}

TEST(EnumsTest, EveryTableIsListed) {
  std::set<std::string> ids;
  ForEachEnumTable([&](const char* id, bool, const std::vector<Spelling>& s) {
    EXPECT_TRUE(ids.insert(id).second) << id;
    EXPECT_FALSE(s.empty()) << id;
  });
  EXPECT_EQ(ids.size(), 18u);
}

// The recipe table of recipes.h has one row per recipe, in the enum
// table's order, and NVFP4 alone runs float4 GEMMs.
TEST(EnumsTest, EveryRecipeHasItsRow) {
  ASSERT_EQ(std::size(kRecipeInfos), std::size(kRecipeRows));
  for (size_t i = 0; i < std::size(kRecipeRows); ++i) {
    EXPECT_EQ(kRecipeInfos[i].recipe, kRecipeRows[i].value) << i;
    EXPECT_EQ(&RecipeOf(kRecipeRows[i].value), &kRecipeInfos[i]) << i;
    EXPECT_EQ(kRecipeInfos[i].gemm_datatype == DataType::kFloat4,
              kRecipeRows[i].value == QuantizationRecipe::kNvfp4)
        << i;
  }
}

}  // namespace
}  // namespace blueprint
