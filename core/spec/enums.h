// The single source of every enum's spellings. One table per enum of the spec
// (spec.h) lists each value once with its canonical spelling (the canonical
// spec JSON, core/spec/README.md), Calculon's spelling (its execution and
// system JSON; nullptr where Calculon has no such key) and a one-line meaning.
// The sum types that are std::variants (the TP communication, the pipeline
// schedule, the spec kind) get a table of their alternatives' type names, in
// the variant's index order.
//
// Everything else derives from these tables: the Name and Parse functions of
// spec.h, the JSON reader's lists of choices (spec_json.cc), the Calculon
// adapter's spellings (core/adapters/calculon.cc) and the metadata that
// `blueprint metadata` and the wasm module's metadata() export (core/api).
//
// Example:
//   EnumName(DataType::kBFloat16)             // "bfloat16"
//   ParseEnum<TensorOverlap>("ring")          // TensorOverlap::kRing
//   EnumChoices<RecomputePolicy>()            // {"none", "attn_only", "full"}
//   VariantTypeName(PipelineSchedule{...})    // "interleaved_1f1b"
//   VariantOfType<PipelineSchedule>("1f1b")   // OneForwardOneBackward{}
#ifndef BLUEPRINTING_CORE_SPEC_ENUMS_H_
#define BLUEPRINTING_CORE_SPEC_ENUMS_H_

#include <array>
#include <cstddef>
#include <optional>
#include <iterator>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/spec/spec.h"

namespace blueprint {

// The spellings of one value (of an enum) or one alternative (of a variant).
struct Spelling {
  const char* name;      // canonical spec JSON
  const char* calculon;  // Calculon's JSON; nullptr: Calculon has no key
  const char* meaning;   // one line, for metadata and the page
};

template <typename Enum>
struct EnumRow {
  Enum value;
  Spelling spelling;
};

//----- The tables ---------------------------------------------------------------

inline constexpr EnumRow<DataType> kDataTypeRows[] = {
    {DataType::kFloat8, {"float8", "float8", "8-bit floating point, 1 byte"}},
    {DataType::kFloat16,
     {"float16", "float16", "IEEE half precision, 2 bytes"}},
    {DataType::kBFloat16,
     {"bfloat16", "bfloat16", "bfloat16 (8-bit exponent), 2 bytes"}},
    {DataType::kFloat32,
     {"float32", "float32", "IEEE single precision, 4 bytes"}},
    {DataType::kFloat4,
     {"float4", nullptr,
      "4-bit E2M1 floating point (NVFP4's GEMMs; a GEMM datatype only)"}},
};

inline constexpr EnumRow<TensorOverlap> kTensorOverlapRows[] = {
    {TensorOverlap::kNone,
     {"none", "none", "TP communication is not overlapped"}},
    {TensorOverlap::kRing,
     {"ring", "ring",
      "TP communication overlapped with the adjacent linear layers, ring "
      "style"}},
    {TensorOverlap::kPipe,
     {"pipe", "pipe",
      "TP communication overlapped with the adjacent linear layers, "
      "pipelined tiles"}},
};

inline constexpr EnumRow<RecomputePolicy> kRecomputeRows[] = {
    {RecomputePolicy::kNone,
     {"none", "none", "no activation recompute: every activation is stored"}},
    {RecomputePolicy::kAttentionOnly,
     {"attn_only", "attn_only",
      "recompute the attention's activations in the backward pass"}},
    {RecomputePolicy::kFull,
     {"full", "full",
      "recompute the whole block from its checkpointed input"}},
};

// Megatron-LM's recompute_modules names (transformer_config.py), but
// "core_attn", which is the recompute policy attn_only.
inline constexpr EnumRow<RecomputeModule> kRecomputeModuleRows[] = {
    {RecomputeModule::kMoeAct,
     {"moe_act", nullptr,
      "recompute the routed experts' activation function, its output not "
      "kept"}},
    {RecomputeModule::kLayerNorm,
     {"layernorm", nullptr,
      "recompute the attention's and the MLP's input norms, their outputs "
      "not kept"}},
    {RecomputeModule::kMlaUpProj,
     {"mla_up_proj", nullptr,
      "recompute latent attention's up projections, their outputs not "
      "kept"}},
    {RecomputeModule::kMlp,
     {"mlp", nullptr, "recompute the dense MLP from its input"}},
    {RecomputeModule::kMoe,
     {"moe", nullptr,
      "recompute the whole MoE layer (router, dispatch, experts, combine) "
      "from its input"}},
    {RecomputeModule::kSharedExperts,
     {"shared_experts", nullptr,
      "recompute the MoE layer's shared experts from their input"}},
};

inline constexpr EnumRow<AttentionType> kAttentionRows[] = {
    {AttentionType::kMultiHead,
     {"multihead", "multihead", "multi-head attention: K and V per head"}},
    {AttentionType::kMultiQuery,
     {"multiquery", "multiquery",
      "multi-query attention: one K and V shared by all heads"}},
};

inline constexpr EnumRow<ProcessingMode> kProcessingModeRows[] = {
    {ProcessingMode::kNoOverlap,
     {"no_overlap", "no_overlap",
      "an operation takes its compute time plus its memory time"}},
    {ProcessingMode::kRoofline,
     {"roofline", "roofline",
      "an operation takes the larger of its compute and memory times"}},
};

inline constexpr EnumRow<StageLayout> kStageLayoutRows[] = {
    {StageLayout::kEven,
     {"even", nullptr,
      "every pipeline stage has num_blocks / p blocks (p divides "
      "num_blocks)"}},
    {StageLayout::kUneven,
     {"uneven", nullptr,
      "blocks per stage rounded up, which shortens the bubble (Calculon's "
      "behaviour when p does not divide num_blocks)"}},
};

inline constexpr EnumRow<MlpType> kMlpTypeRows[] = {
    {MlpType::kPlain,
     {"plain", nullptr, "two matrices, hidden -> feedforward -> hidden (GELU)"}},
    {MlpType::kGated,
     {"gated", nullptr,
      "three matrices, gate and up hidden -> feedforward, down back (SwiGLU, "
      "GeGLU)"}},
};

inline constexpr EnumRow<NormType> kNormTypeRows[] = {
    {NormType::kLayerNorm,
     {"layernorm", nullptr, "LayerNorm: a scale and a bias per hidden unit"}},
    {NormType::kRmsNorm,
     {"rmsnorm", nullptr, "RMSNorm: a scale per hidden unit, no mean"}},
};

inline constexpr EnumRow<PositionEmbedding> kPositionEmbeddingRows[] = {
    {PositionEmbedding::kNone, {"none", nullptr, "no position embedding"}},
    {PositionEmbedding::kRope,
     {"rope", nullptr, "rotary position embedding: no weights"}},
    {PositionEmbedding::kLearned,
     {"learned", nullptr,
      "a learned table of max_positions x hidden on the first stage"}},
};

inline constexpr EnumRow<PrecisionAccounting> kPrecisionRows[] = {
    {PrecisionAccounting::kCalculon,
     {"calculon", nullptr,
      "Calculon's: weights and gradients in the datatype, fp32 master copy "
      "and Adam moments; gradients sharded with the optimizer"}},
    {PrecisionAccounting::kMegatronMixed,
     {"megatron_mixed", nullptr,
      "Megatron-LM's mixed precision: 16-bit weights, fp32 main gradients, "
      "fp32 master weights and Adam moments (18 bytes per parameter, 6 + "
      "12/d with the distributed optimizer)"}},
};

inline constexpr EnumRow<ModelProfile> kModelProfileRows[] = {
    {ModelProfile::kCalculon,
     {"calculon", nullptr,
      "Calculon's performance model, figure for figure (calculon/MODEL.md)"}},
    {ModelProfile::kRefined,
     {"refined", nullptr,
      "Calculon's model with the named corrections of core/spec/corrections.h "
      "(flash attention, causal attention work, ...), each measured against "
      "the published runs of tests/validation"}},
};

inline constexpr EnumRow<QuantizationRecipe> kRecipeRows[] = {
    {QuantizationRecipe::kNone,
     {"none", nullptr,
      "no recipe priced: GEMMs at the gemm_datatype's rate, no casts"}},
    {QuantizationRecipe::kFp8Delayed,
     {"fp8_delayed", nullptr,
      "FP8, a scale per tensor from the amax history (--fp8-recipe delayed)"}},
    {QuantizationRecipe::kFp8Tensorwise,
     {"fp8_tensorwise", nullptr,
      "FP8, a scale per tensor from its current amax (--fp8-recipe "
      "tensorwise)"}},
    {QuantizationRecipe::kFp8Blockwise,
     {"fp8_blockwise", nullptr,
      "FP8, fp32 scales per 1x128 activation and 128x128 weight block "
      "(--fp8-recipe blockwise)"}},
    {QuantizationRecipe::kMxfp8,
     {"mxfp8", nullptr,
      "MXFP8: FP8 with an E8M0 scale per 32 elements (--fp8-recipe mxfp8)"}},
    {QuantizationRecipe::kNvfp4,
     {"nvfp4", nullptr,
      "NVFP4: FP4 E2M1 with an E4M3 scale per 16 elements and an fp32 "
      "tensor scale (--fp4-recipe nvfp4)"}},
};

inline constexpr EnumRow<ContextExchange> kContextExchangeRows[] = {
    {ContextExchange::kRing,
     {"ring", nullptr,
      "K/V blocks passed around a p2p ring of the cp ranks, overlapped with "
      "attention"}},
    {ContextExchange::kAllGather,
     {"all_gather", nullptr,
      "one all-gather of K/V over the cp ranks before attention"}},
};

inline constexpr EnumRow<ExpertDispatcher> kExpertDispatcherRows[] = {
    {ExpertDispatcher::kAllToAll,
     {"all_to_all", nullptr,
      "NCCL all-to-all over the ep ranks: a copy of a token per routed "
      "expert on another rank (Megatron-LM's alltoall dispatcher)"}},
    {ExpertDispatcher::kDeepEp,
     {"deep_ep", nullptr,
      "DeepEP (Megatron-LM's flex dispatcher): a token crosses the scale-out "
      "network once per destination node, then fans out over NVLink"}},
    {ExpertDispatcher::kHybridEp,
     {"hybrid_ep", nullptr,
      "HybridEP (Megatron-LM's flex dispatcher): node-deduplicated like "
      "DeepEP"}},
    {ExpertDispatcher::kAllGather,
     {"all_gather", nullptr,
      "Megatron-LM's allgather dispatcher (its default): every rank "
      "all-gathers the tokens of the etp x ep ranks, runs those routed to "
      "its experts, and reduce-scatters the outputs back"}},
};

// TensorCommunication's alternatives, in variant index order.
inline constexpr Spelling kTensorCommunicationTypes[] = {
    {"ar", "ar", "AllReduce: one all-reduce per TP boundary"},
    {"rs_ag", "rs_ag",
     "ReduceScatterAllGather: sequence parallelism, a reduce-scatter and an "
     "all-gather per TP boundary"},
    {"p2p_rs_ag", "p2p_rs_ag",
     "EdgeReduceScatterAllGather: all-reduce in the base blocks, "
     "reduce-scatter + all-gather in the edge (last) block of each chunk"},
};

// PipelineSchedule's alternatives, in variant index order: the schedule
// table's spec names and meanings (core/schedule/schedule_table.h, whose
// rows are in the variant's order). Calculon has no schedule key: the
// Calculon adapter derives the schedule from pipeline_par,
// pipeline_interleaving and training.
constexpr std::array<Spelling, kScheduleCount> PipelineScheduleSpellings() {
  std::array<Spelling, kScheduleCount> out{};
  for (size_t i = 0; i < kScheduleCount; ++i) {
    out[i] = {kScheduleTable[i].spec_name, nullptr, kScheduleTable[i].meaning};
  }
  return out;
}
inline constexpr std::array<Spelling, kScheduleCount> kPipelineScheduleTypes =
    PipelineScheduleSpellings();

// DataSharding's alternatives (ZeRO stages), in variant index order.
// Calculon's optimizer_sharding is `optimizer`.
inline constexpr Spelling kDataShardingTypes[] = {
    {"none", nullptr, "every data-parallel rank holds all of its state"},
    {"optimizer", nullptr,
     "ZeRO-1 / Megatron-LM's distributed optimizer: optimizer state sharded "
     "over the group"},
    {"gradients", nullptr,
     "ZeRO-2: optimizer state and gradients sharded over the group"},
    {"parameters", nullptr,
     "ZeRO-3 / FSDP: optimizer state, gradients and parameters sharded, "
     "parameters all-gathered before forward and backward"},
};

// MappingSpec's alternatives (the spec's "kind"), in variant index order.
// Calculon's spelling is its boolean "training" key, not a string.
inline constexpr Spelling kSpecKindTypes[] = {
    {"training", nullptr, "a training step: forward, backward, optimizer"},
    {"inference", nullptr, "inference: forward passes on serving replicas"},
};

static_assert(std::size(kTensorCommunicationTypes) ==
                  std::variant_size_v<TensorCommunication>,
              "every TensorCommunication alternative needs a row");
static_assert(std::size(kPipelineScheduleTypes) ==
                  std::variant_size_v<PipelineSchedule>,
              "every PipelineSchedule alternative needs a row");
static_assert(std::size(kDataShardingTypes) ==
                  std::variant_size_v<DataSharding>,
              "every DataSharding alternative needs a row");
static_assert(std::size(kSpecKindTypes) == std::variant_size_v<MappingSpec>,
              "every MappingSpec alternative needs a row");

//----- Which table belongs to which type -------------------------------------------

// EnumTable<Enum>::kRows is the table of Enum; VariantTable<Variant>::kTypes
// the type names of Variant. `kId` names the enum in the metadata.
template <typename Enum>
struct EnumTable;
template <typename Variant>
struct VariantTable;

#define BP_ENUM_TABLE(Enum, rows, id)            \
  template <>                                    \
  struct EnumTable<Enum> {                       \
    static constexpr const auto& kRows = rows;   \
    static constexpr const char* kId = id;       \
  };
BP_ENUM_TABLE(DataType, kDataTypeRows, "datatype")
BP_ENUM_TABLE(TensorOverlap, kTensorOverlapRows, "tensor_overlap")
BP_ENUM_TABLE(RecomputePolicy, kRecomputeRows, "recompute")
BP_ENUM_TABLE(RecomputeModule, kRecomputeModuleRows, "recompute_module")
BP_ENUM_TABLE(AttentionType, kAttentionRows, "attention")
BP_ENUM_TABLE(ProcessingMode, kProcessingModeRows, "processing_mode")
BP_ENUM_TABLE(StageLayout, kStageLayoutRows, "stage_layout")
BP_ENUM_TABLE(MlpType, kMlpTypeRows, "mlp")
BP_ENUM_TABLE(NormType, kNormTypeRows, "norm")
BP_ENUM_TABLE(PositionEmbedding, kPositionEmbeddingRows, "position_embedding")
BP_ENUM_TABLE(PrecisionAccounting, kPrecisionRows, "precision")
BP_ENUM_TABLE(ContextExchange, kContextExchangeRows, "context_exchange")
BP_ENUM_TABLE(ExpertDispatcher, kExpertDispatcherRows, "expert_dispatcher")
BP_ENUM_TABLE(ModelProfile, kModelProfileRows, "profile")
BP_ENUM_TABLE(QuantizationRecipe, kRecipeRows, "recipe")
#undef BP_ENUM_TABLE

#define BP_VARIANT_TABLE(Variant, types, id)     \
  template <>                                    \
  struct VariantTable<Variant> {                 \
    static constexpr const auto& kTypes = types; \
    static constexpr const char* kId = id;       \
  };
BP_VARIANT_TABLE(TensorCommunication, kTensorCommunicationTypes,
                 "tensor_communication")
BP_VARIANT_TABLE(PipelineSchedule, kPipelineScheduleTypes, "pipeline_schedule")
BP_VARIANT_TABLE(DataSharding, kDataShardingTypes, "data_sharding")
BP_VARIANT_TABLE(MappingSpec, kSpecKindTypes, "kind")
#undef BP_VARIANT_TABLE

//----- Derived functions --------------------------------------------------------------

// The row of `value` (every value has one: the tables are checked by
// enums_test).
template <typename Enum>
constexpr const Spelling& EnumSpelling(Enum value) {
  for (const EnumRow<Enum>& row : EnumTable<Enum>::kRows) {
    if (row.value == value) return row.spelling;
  }
  return EnumTable<Enum>::kRows[0].spelling;
}

template <typename Enum>
const char* EnumName(Enum value) {
  return EnumSpelling(value).name;
}

// Calculon's spelling of `value`; nullptr where Calculon has none.
template <typename Enum>
const char* EnumCalculonName(Enum value) {
  return EnumSpelling(value).calculon;
}

// The value whose canonical spelling is `s`.
template <typename Enum>
std::optional<Enum> ParseEnum(const std::string& s) {
  for (const EnumRow<Enum>& row : EnumTable<Enum>::kRows) {
    if (s == row.spelling.name) return row.value;
  }
  return std::nullopt;
}

// The value whose Calculon spelling is `s`.
template <typename Enum>
std::optional<Enum> ParseCalculonEnum(const std::string& s) {
  for (const EnumRow<Enum>& row : EnumTable<Enum>::kRows) {
    if (row.spelling.calculon != nullptr && s == row.spelling.calculon) {
      return row.value;
    }
  }
  return std::nullopt;
}

// The canonical spellings, in table order (the order error messages list).
template <typename Enum>
const std::vector<std::string>& EnumChoices() {
  static const auto* choices = [] {
    auto* out = new std::vector<std::string>;
    for (const EnumRow<Enum>& row : EnumTable<Enum>::kRows) {
      out->push_back(row.spelling.name);
    }
    return out;
  }();
  return *choices;
}

// Calculon's spellings, in table order (values without one are left out).
template <typename Enum>
const std::vector<std::string>& EnumCalculonChoices() {
  static const auto* choices = [] {
    auto* out = new std::vector<std::string>;
    for (const EnumRow<Enum>& row : EnumTable<Enum>::kRows) {
      if (row.spelling.calculon != nullptr) {
        out->push_back(row.spelling.calculon);
      }
    }
    return out;
  }();
  return *choices;
}

// The type name of the alternative `value` holds.
template <typename Variant>
const Spelling& VariantSpelling(const Variant& value) {
  return VariantTable<Variant>::kTypes[value.index()];
}
template <typename Variant>
const char* VariantTypeName(const Variant& value) {
  return VariantSpelling(value).name;
}

// The type names, in variant index order.
template <typename Variant>
const std::vector<std::string>& VariantChoices() {
  static const auto* choices = [] {
    auto* out = new std::vector<std::string>;
    for (const Spelling& type : VariantTable<Variant>::kTypes) {
      out->push_back(type.name);
    }
    return out;
  }();
  return *choices;
}

// Calculon's type names, in variant index order (types without one are left
// out), and the type name of the alternative `value` holds.
template <typename Variant>
const std::vector<std::string>& VariantCalculonChoices() {
  static const auto* choices = [] {
    auto* out = new std::vector<std::string>;
    for (const Spelling& type : VariantTable<Variant>::kTypes) {
      if (type.calculon != nullptr) out->push_back(type.calculon);
    }
    return out;
  }();
  return *choices;
}
template <typename Variant>
const char* VariantCalculonName(const Variant& value) {
  return VariantSpelling(value).calculon;
}

namespace enums_internal {
template <typename Variant, size_t I = 0>
Variant DefaultAlternative(size_t index) {
  if constexpr (I + 1 < std::variant_size_v<Variant>) {
    if (index != I) return DefaultAlternative<Variant, I + 1>(index);
  }
  return Variant(std::in_place_index<I>);
}
}  // namespace enums_internal

// The default-constructed alternative whose canonical type name is `type`
// (its fields then read by the caller), or nullopt for an unknown name.
template <typename Variant>
std::optional<Variant> VariantOfType(const std::string& type) {
  const auto& types = VariantTable<Variant>::kTypes;
  for (size_t i = 0; i < std::size(types); ++i) {
    if (type == types[i].name) {
      return enums_internal::DefaultAlternative<Variant>(i);
    }
  }
  return std::nullopt;
}

// The same by Calculon's type name.
template <typename Variant>
std::optional<Variant> VariantOfCalculonType(const std::string& type) {
  const auto& types = VariantTable<Variant>::kTypes;
  for (size_t i = 0; i < std::size(types); ++i) {
    if (types[i].calculon != nullptr && type == types[i].calculon) {
      return enums_internal::DefaultAlternative<Variant>(i);
    }
  }
  return std::nullopt;
}

// Every table, type-erased, for the metadata: calls
// f(id, is_variant, const std::vector<Spelling>&) per table.
template <typename F>
void ForEachEnumTable(F&& f) {
  auto table = [&](const char* id, bool variant, auto& rows) {
    std::vector<Spelling> spellings;
    for (const auto& row : rows) {
      if constexpr (std::is_same_v<std::decay_t<decltype(row)>, Spelling>) {
        spellings.push_back(row);
      } else {
        spellings.push_back(row.spelling);
      }
    }
    f(id, variant, spellings);
  };
  table(VariantTable<MappingSpec>::kId, true, kSpecKindTypes);
  table(EnumTable<DataType>::kId, false, kDataTypeRows);
  table(EnumTable<TensorOverlap>::kId, false, kTensorOverlapRows);
  table(EnumTable<RecomputePolicy>::kId, false, kRecomputeRows);
  table(EnumTable<AttentionType>::kId, false, kAttentionRows);
  table(EnumTable<ProcessingMode>::kId, false, kProcessingModeRows);
  table(EnumTable<StageLayout>::kId, false, kStageLayoutRows);
  table(EnumTable<MlpType>::kId, false, kMlpTypeRows);
  table(EnumTable<NormType>::kId, false, kNormTypeRows);
  table(EnumTable<PositionEmbedding>::kId, false, kPositionEmbeddingRows);
  table(EnumTable<PrecisionAccounting>::kId, false, kPrecisionRows);
  table(EnumTable<ContextExchange>::kId, false, kContextExchangeRows);
  table(EnumTable<ExpertDispatcher>::kId, false, kExpertDispatcherRows);
  table(EnumTable<ModelProfile>::kId, false, kModelProfileRows);
  table(EnumTable<QuantizationRecipe>::kId, false, kRecipeRows);
  table(VariantTable<TensorCommunication>::kId, true,
        kTensorCommunicationTypes);
  table(VariantTable<PipelineSchedule>::kId, true, kPipelineScheduleTypes);
  table(VariantTable<DataSharding>::kId, true, kDataShardingTypes);
}

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_ENUMS_H_
