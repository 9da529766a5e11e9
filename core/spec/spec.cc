#include "core/spec/spec.h"

#include <utility>

#include "core/spec/enums.h"

namespace blueprint {

// Every spelling comes from the tables of enums.h; each parser accepts
// exactly the spelling its Name function prints.

const char* DataTypeName(DataType t) { return EnumName(t); }

DataType WeightDatatype(const ExecutionOptions& options) {
  return options.weight_datatype.value_or(options.datatype);
}

int BytesPerElement(DataType t) {
  switch (t) {
    case DataType::kFloat8:
      return 1;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
    case DataType::kFloat32:
      return 4;
    case DataType::kFloat4:
      // Two E2M1 values share a byte; the checker admits float4 only as
      // the GEMM datatype, whose operands' bytes are the recipe's
      // (core/spec/recipes.h), so no stored tensor is priced by this.
      return 1;
  }
  return 2;
}

const char* TensorOverlapName(TensorOverlap o) { return EnumName(o); }
const char* RecomputeName(RecomputePolicy r) { return EnumName(r); }
const char* RecomputeModuleName(RecomputeModule m) { return EnumName(m); }
const char* AttentionName(AttentionType a) { return EnumName(a); }
const char* ProcessingModeName(ProcessingMode m) { return EnumName(m); }
const char* StageLayoutName(StageLayout l) { return EnumName(l); }
const char* MlpTypeName(MlpType m) { return EnumName(m); }
const char* NormTypeName(NormType n) { return EnumName(n); }
const char* PositionEmbeddingName(PositionEmbedding p) { return EnumName(p); }
const char* PrecisionName(PrecisionAccounting p) { return EnumName(p); }
const char* ContextExchangeName(ContextExchange e) { return EnumName(e); }
const char* ExpertDispatcherName(ExpertDispatcher e) { return EnumName(e); }

bool DispatcherRunsExpertOverlap(ExpertDispatcher d) {
  switch (d) {
    case ExpertDispatcher::kAllToAll:
    case ExpertDispatcher::kDeepEp:
    case ExpertDispatcher::kHybridEp:
      return true;
    case ExpertDispatcher::kAllGather:
      return false;
  }
  return false;
}
const char* ModelProfileName(ModelProfile p) { return EnumName(p); }
const char* RecipeName(QuantizationRecipe r) { return EnumName(r); }

TransformerModel CalculonModel(std::string name, int64_t hidden,
                               int64_t feedforward, int64_t attn_heads,
                               int64_t attn_size, int64_t num_blocks,
                               int64_t seq_size) {
  TransformerModel model;
  model.name = std::move(name);
  model.hidden = hidden;
  model.feedforward = feedforward;
  model.attn_heads = attn_heads;
  model.attn_size = attn_size;
  model.num_blocks = num_blocks;
  model.seq_size = seq_size;
  model.kv_heads = attn_heads;
  return model;
}

const char* TensorCommunicationName(const TensorCommunication& c) {
  return VariantTypeName(c);
}

const char* PipelineScheduleName(const PipelineSchedule& s) {
  return VariantTypeName(s);
}

const char* DataShardingName(const DataSharding& s) {
  return VariantTypeName(s);
}

std::optional<DataType> ParseDataType(const std::string& s) {
  return ParseEnum<DataType>(s);
}
std::optional<TensorOverlap> ParseTensorOverlap(const std::string& s) {
  return ParseEnum<TensorOverlap>(s);
}
std::optional<RecomputePolicy> ParseRecompute(const std::string& s) {
  return ParseEnum<RecomputePolicy>(s);
}
std::optional<RecomputeModule> ParseRecomputeModule(const std::string& s) {
  return ParseEnum<RecomputeModule>(s);
}
std::optional<AttentionType> ParseAttention(const std::string& s) {
  return ParseEnum<AttentionType>(s);
}
std::optional<ProcessingMode> ParseProcessingMode(const std::string& s) {
  return ParseEnum<ProcessingMode>(s);
}
std::optional<StageLayout> ParseStageLayout(const std::string& s) {
  return ParseEnum<StageLayout>(s);
}
std::optional<MlpType> ParseMlpType(const std::string& s) {
  return ParseEnum<MlpType>(s);
}
std::optional<NormType> ParseNormType(const std::string& s) {
  return ParseEnum<NormType>(s);
}
std::optional<PositionEmbedding> ParsePositionEmbedding(const std::string& s) {
  return ParseEnum<PositionEmbedding>(s);
}
std::optional<PrecisionAccounting> ParsePrecision(const std::string& s) {
  return ParseEnum<PrecisionAccounting>(s);
}
std::optional<ContextExchange> ParseContextExchange(const std::string& s) {
  return ParseEnum<ContextExchange>(s);
}
std::optional<ExpertDispatcher> ParseExpertDispatcher(const std::string& s) {
  return ParseEnum<ExpertDispatcher>(s);
}

std::optional<ModelProfile> ParseModelProfile(const std::string& s) {
  return ParseEnum<ModelProfile>(s);
}
std::optional<QuantizationRecipe> ParseRecipe(const std::string& s) {
  return ParseEnum<QuantizationRecipe>(s);
}

TransformerTrainingMappingSpec TrainingSpecOf(TransformerModel model,
                                              System system,
                                              const TrainingMapping& mapping) {
  TransformerTrainingMappingSpec spec;
  spec.model = std::move(model);
  spec.system = std::move(system);
  spec.parallelism = mapping.parallelism;
  spec.batch = mapping.batch;
  spec.options = mapping.options;
  return spec;
}

PipelineSchedule OneForwardOneBackwardSchedule(int64_t p, int64_t v) {
  if (v > 1) return InterleavedOneForwardOneBackward{v};
  if (p == 1) return SingleStage{};
  return OneForwardOneBackward{};
}

PipelineParallel CalculonPipeline(int64_t p, int64_t v, int64_t num_blocks,
                                  int64_t network_tier) {
  PipelineParallel pipeline;
  pipeline.degree = p;
  pipeline.network_tier = network_tier;
  pipeline.schedule = OneForwardOneBackwardSchedule(p, v);
  const bool uneven = p > 0 && num_blocks > 0 && num_blocks % p != 0;
  pipeline.stage_layout = uneven ? StageLayout::kUneven : StageLayout::kEven;
  return pipeline;
}

}  // namespace blueprint
