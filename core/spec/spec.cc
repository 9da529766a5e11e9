#include "core/spec/spec.h"

#include "core/spec/enums.h"

namespace blueprint {

// Every spelling comes from the tables of enums.h; each parser accepts
// exactly the spelling its Name function prints.

const char* DataTypeName(DataType t) { return EnumName(t); }

int BytesPerElement(DataType t) {
  switch (t) {
    case DataType::kFloat8:
      return 1;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
    case DataType::kFloat32:
      return 4;
  }
  return 2;
}

const char* TensorOverlapName(TensorOverlap o) { return EnumName(o); }
const char* RecomputeName(RecomputePolicy r) { return EnumName(r); }
const char* AttentionName(AttentionType a) { return EnumName(a); }
const char* ProcessingModeName(ProcessingMode m) { return EnumName(m); }
const char* StageLayoutName(StageLayout l) { return EnumName(l); }

const char* TensorCommunicationName(const TensorCommunication& c) {
  return VariantTypeName(c);
}

const char* PipelineScheduleName(const PipelineSchedule& s) {
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
std::optional<AttentionType> ParseAttention(const std::string& s) {
  return ParseEnum<AttentionType>(s);
}
std::optional<ProcessingMode> ParseProcessingMode(const std::string& s) {
  return ParseEnum<ProcessingMode>(s);
}
std::optional<StageLayout> ParseStageLayout(const std::string& s) {
  return ParseEnum<StageLayout>(s);
}

}  // namespace blueprint
