#include "core/spec/recipes.h"

namespace blueprint {
namespace {

// The bytes of one quantized copy of `elements`: the elements at the
// recipe's width and one scale per block.
double CopyBytes(const RecipeInfo& r, double elements, double block) {
  const double scales = block > 0 ? elements / block * r.scale_bytes : 0;
  return elements * r.element_bits / 8 + scales;
}

// The reads of one cast of `elements` at `source_bytes`: once (twice with an
// amax pass).
double ReadBytes(const RecipeInfo& r, double elements, double source_bytes) {
  return (r.amax_pass ? 2 : 1) * elements * source_bytes;
}

// One cast: its reads, and a row-wise and a column-wise copy written.
double CastBytes(const RecipeInfo& r, double elements, double block,
                 double source_bytes) {
  return ReadBytes(r, elements, source_bytes) +
         2 * CopyBytes(r, elements, block);
}

}  // namespace

const RecipeInfo& RecipeOf(QuantizationRecipe recipe) {
  for (const RecipeInfo& info : kRecipeInfos) {
    if (info.recipe == recipe) return info;
  }
  return kRecipeInfos[0];
}

bool SystemRunsRecipe(const System& system, QuantizationRecipe recipe) {
  if (recipe == QuantizationRecipe::kNone) return true;
  return system.matrix.rates.count(RecipeOf(recipe).hardware_datatype) > 0;
}

QuantizationBytes GemmQuantizationBytes(const RecipeInfo& recipe, double m,
                                        double n, double k,
                                        double source_bytes) {
  QuantizationBytes out;
  if (recipe.recipe == QuantizationRecipe::kNone) return out;
  out.forward = CastBytes(recipe, m * n, recipe.activation_block, source_bytes);
  out.backward =
      CastBytes(recipe, m * k, recipe.activation_block, source_bytes);
  out.weights = CastBytes(recipe, n * k, recipe.weight_block, source_bytes);
  return out;
}

double ForwardCastReadBytes(const RecipeInfo& recipe, double m, double n,
                            double source_bytes) {
  if (recipe.recipe == QuantizationRecipe::kNone) return 0;
  return ReadBytes(recipe, m * n, source_bytes);
}

}  // namespace blueprint
