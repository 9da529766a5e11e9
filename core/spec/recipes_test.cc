#include "core/spec/recipes.h"

#include "gtest/gtest.h"

namespace blueprint {
namespace {

// Y[m,k] = X[m,n] W[n,k] with m = 4096 tokens, n = 1024, k = 2048, read in
// bfloat16 (2 bytes): each cast reads the tensor once (twice with an amax
// pass) and writes a row-wise and a column-wise copy with their scales.
constexpr double kM = 4096, kN = 1024, kK = 2048, kSource = 2;

TEST(RecipesTest, NoRecipeNoCasts) {
  const QuantizationBytes q = GemmQuantizationBytes(
      RecipeOf(QuantizationRecipe::kNone), kM, kN, kK, kSource);
  EXPECT_EQ(q.forward, 0);
  EXPECT_EQ(q.backward, 0);
  EXPECT_EQ(q.weights, 0);
}

TEST(RecipesTest, DelayedScalingCastsWithoutAnAmaxPass) {
  const QuantizationBytes q = GemmQuantizationBytes(
      RecipeOf(QuantizationRecipe::kFp8Delayed), kM, kN, kK, kSource);
  // X: 2 bytes read, 1 + 1 written per element; per-tensor scales only.
  EXPECT_EQ(q.forward, kM * kN * (2 + 2));
  EXPECT_EQ(q.backward, kM * kK * (2 + 2));
  EXPECT_EQ(q.weights, kN * kK * (2 + 2));
}

TEST(RecipesTest, CurrentScalingReadsTwice) {
  const QuantizationBytes q = GemmQuantizationBytes(
      RecipeOf(QuantizationRecipe::kFp8Tensorwise), kM, kN, kK, kSource);
  EXPECT_EQ(q.forward, kM * kN * (4 + 2));
}

TEST(RecipesTest, BlockScalesAreStored) {
  const QuantizationBytes mx = GemmQuantizationBytes(
      RecipeOf(QuantizationRecipe::kMxfp8), kM, kN, kK, kSource);
  // One E8M0 byte per 32 elements, in both copies.
  EXPECT_EQ(mx.forward, kM * kN * (2 + 2 * (1 + 1.0 / 32)));
  const QuantizationBytes block = GemmQuantizationBytes(
      RecipeOf(QuantizationRecipe::kFp8Blockwise), kM, kN, kK, kSource);
  // fp32 scales per 1x128 activations and 128x128 weights.
  EXPECT_EQ(block.forward, kM * kN * (2 + 2 * (1 + 4.0 / 128)));
  EXPECT_EQ(block.weights, kN * kK * (2 + 2 * (1 + 4.0 / (128 * 128))));
}

TEST(RecipesTest, Nvfp4HalvesTheElementsAndReadsForItsTensorScale) {
  const RecipeInfo& r = RecipeOf(QuantizationRecipe::kNvfp4);
  EXPECT_EQ(r.gemm_datatype, DataType::kFloat4);
  const QuantizationBytes q = GemmQuantizationBytes(r, kM, kN, kK, kSource);
  // 2 reads of 2 bytes; two copies of half a byte and an E4M3 per 16.
  EXPECT_EQ(q.backward, kM * kK * (4 + 2 * (0.5 + 1.0 / 16)));
  EXPECT_EQ(q.weights, kN * kK * (4 + 2 * (0.5 + 1.0 / 256)));
}

}  // namespace
}  // namespace blueprint
