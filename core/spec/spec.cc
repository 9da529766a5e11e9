#include "core/spec/spec.h"

#include "core/base/status_macros.h"

namespace blueprint {

const char* DataTypeName(DataType t) {
  switch (t) {
    case DataType::kFloat8:
      return "float8";
    case DataType::kFloat16:
      return "float16";
    case DataType::kBFloat16:
      return "bfloat16";
    case DataType::kFloat32:
      return "float32";
  }
  return "float16";
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
  }
  return 2;
}

const char* TensorOverlapName(TensorOverlap o) {
  switch (o) {
    case TensorOverlap::kNone:
      return "none";
    case TensorOverlap::kRing:
      return "ring";
    case TensorOverlap::kPipe:
      return "pipe";
  }
  return "none";
}

const char* RecomputeName(RecomputePolicy r) {
  switch (r) {
    case RecomputePolicy::kNone:
      return "none";
    case RecomputePolicy::kAttentionOnly:
      return "attn_only";
    case RecomputePolicy::kFull:
      return "full";
  }
  return "none";
}

const char* AttentionName(AttentionType a) {
  switch (a) {
    case AttentionType::kMultiHead:
      return "multihead";
    case AttentionType::kMultiQuery:
      return "multiquery";
  }
  return "multihead";
}

const char* ProcessingModeName(ProcessingMode m) {
  switch (m) {
    case ProcessingMode::kNoOverlap:
      return "no_overlap";
    case ProcessingMode::kRoofline:
      return "roofline";
  }
  return "no_overlap";
}

const char* StageLayoutName(StageLayout l) {
  switch (l) {
    case StageLayout::kEven:
      return "even";
    case StageLayout::kUneven:
      return "uneven";
  }
  return "even";
}

const char* TensorCommunicationName(const TensorCommunication& c) {
  return std::visit(
      Overloaded{[](const AllReduce&) { return "ar"; },
                 [](const ReduceScatterAllGather&) { return "rs_ag"; },
                 [](const EdgeReduceScatterAllGather&) { return "p2p_rs_ag"; }},
      c);
}

const char* PipelineScheduleName(const PipelineSchedule& s) {
  return std::visit(
      Overloaded{[](const SingleStage&) { return "single_stage"; },
                 [](const OneForwardOneBackward&) { return "1f1b"; },
                 [](const InterleavedOneForwardOneBackward&) {
                   return "interleaved_1f1b";
                 },
                 [](const ForwardOnly&) { return "forward_only"; }},
      s);
}

// Each parser accepts exactly the spelling its Name function prints, so the
// two stay inverse by construction: the candidates are the enum's values.
namespace {

template <typename Enum, typename NameFn, size_t N>
std::optional<Enum> ParseByName(const std::string& s, NameFn name,
                                const Enum (&values)[N]) {
  for (Enum value : values) {
    if (s == name(value)) return value;
  }
  return std::nullopt;
}

}  // namespace

std::optional<DataType> ParseDataType(const std::string& s) {
  static constexpr DataType kValues[] = {DataType::kFloat8, DataType::kFloat16,
                                         DataType::kBFloat16,
                                         DataType::kFloat32};
  return ParseByName(s, DataTypeName, kValues);
}

std::optional<TensorOverlap> ParseTensorOverlap(const std::string& s) {
  static constexpr TensorOverlap kValues[] = {
      TensorOverlap::kNone, TensorOverlap::kRing, TensorOverlap::kPipe};
  return ParseByName(s, TensorOverlapName, kValues);
}

std::optional<RecomputePolicy> ParseRecompute(const std::string& s) {
  static constexpr RecomputePolicy kValues[] = {RecomputePolicy::kNone,
                                                RecomputePolicy::kAttentionOnly,
                                                RecomputePolicy::kFull};
  return ParseByName(s, RecomputeName, kValues);
}

std::optional<AttentionType> ParseAttention(const std::string& s) {
  static constexpr AttentionType kValues[] = {AttentionType::kMultiHead,
                                              AttentionType::kMultiQuery};
  return ParseByName(s, AttentionName, kValues);
}

std::optional<ProcessingMode> ParseProcessingMode(const std::string& s) {
  static constexpr ProcessingMode kValues[] = {ProcessingMode::kNoOverlap,
                                               ProcessingMode::kRoofline};
  return ParseByName(s, ProcessingModeName, kValues);
}

std::optional<StageLayout> ParseStageLayout(const std::string& s) {
  static constexpr StageLayout kValues[] = {StageLayout::kEven,
                                            StageLayout::kUneven};
  return ParseByName(s, StageLayoutName, kValues);
}

}  // namespace blueprint
