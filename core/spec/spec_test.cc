#include "core/spec/spec.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>

#include "core/base/status_macros.h"
#include "core/spec/derive.h"
#include "core/spec/program.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

// HandlesEvery<Visitor, Variant>: whether `Visitor` accepts every
// alternative, which is what std::visit requires to compile.
template <typename Visitor, typename Variant>
struct HandlesEvery;
template <typename Visitor, typename... Alternatives>
struct HandlesEvery<Visitor, std::variant<Alternatives...>>
    : std::conjunction<std::is_invocable<Visitor, const Alternatives&>...> {};

// The compile-fail proof of DESIGN.md "Typed strategy": a consumer that
// forgets one schedule constructor cannot call std::visit, because the
// alternatives are distinct structs that convert to nothing and Overloaded
// adds no catch-all. (A file calling std::visit with `incomplete` would not
// compile; the static_asserts state exactly why.)
constexpr auto kComplete =
    Overloaded{[](const SingleStage&) { return 1; },
               [](const OneForwardOneBackward&) { return 2; },
               [](const InterleavedOneForwardOneBackward&) { return 3; },
               [](const ForwardOnly&) { return 4; },
               [](const GPipe&) { return 5; },
               [](const DualPipeV&) { return 6; },
               [](const ZeroBubbleH1&) { return 7; },
               [](const ZeroBubbleV&) { return 8; },
               [](const ZeroBubbleH2&) { return 9; },
               [](const DualPipe&) { return 10; }};
constexpr auto kMissingForwardOnly =
    Overloaded{[](const SingleStage&) { return 1; },
               [](const OneForwardOneBackward&) { return 2; },
               [](const InterleavedOneForwardOneBackward&) { return 3; }};
static_assert(HandlesEvery<decltype(kComplete), PipelineSchedule>::value);
static_assert(
    !HandlesEvery<decltype(kMissingForwardOnly), PipelineSchedule>::value);
static_assert(
    !std::is_invocable_v<decltype(kMissingForwardOnly), const ForwardOnly&>);

constexpr auto kMissingEdge =
    Overloaded{[](const AllReduce&) { return 1; },
               [](const ReduceScatterAllGather&) { return 2; }};
static_assert(
    !HandlesEvery<decltype(kMissingEdge), TensorCommunication>::value);
static_assert(!std::is_convertible_v<ForwardOnly, SingleStage>);
static_assert(!std::is_convertible_v<EdgeReduceScatterAllGather, AllReduce>);

TEST(PipelineSchedule, VisitIsExhaustive) {
  EXPECT_EQ(std::visit(kComplete, PipelineSchedule{ForwardOnly{}}), 4);
  EXPECT_EQ(std::visit(kComplete, PipelineSchedule{DualPipeV{}}), 6);
  EXPECT_EQ(std::visit(kComplete, PipelineSchedule{ZeroBubbleH1{}}), 7);
  EXPECT_EQ(std::visit(kComplete, PipelineSchedule{ZeroBubbleV{}}), 8);
  EXPECT_EQ(std::visit(kComplete, PipelineSchedule{ZeroBubbleH2{}}), 9);
  EXPECT_EQ(std::visit(kComplete, PipelineSchedule{DualPipe{}}), 10);
  EXPECT_EQ(std::visit(kComplete,
                       PipelineSchedule{InterleavedOneForwardOneBackward{3}}),
            3);
}

TEST(Names, SumTypes) {
  EXPECT_STREQ(TensorCommunicationName(AllReduce{}), "ar");
  EXPECT_STREQ(TensorCommunicationName(ReduceScatterAllGather{true}), "rs_ag");
  EXPECT_STREQ(TensorCommunicationName(EdgeReduceScatterAllGather{}),
               "p2p_rs_ag");
  EXPECT_STREQ(PipelineScheduleName(SingleStage{}), "single_stage");
  EXPECT_STREQ(PipelineScheduleName(OneForwardOneBackward{}), "1f1b");
  EXPECT_STREQ(PipelineScheduleName(InterleavedOneForwardOneBackward{2}),
               "interleaved_1f1b");
  EXPECT_STREQ(PipelineScheduleName(ForwardOnly{}), "forward_only");
}

TEST(Names, EnumsRoundTrip) {
  for (DataType t : {DataType::kFloat8, DataType::kFloat16, DataType::kBFloat16,
                     DataType::kFloat32}) {
    EXPECT_EQ(ParseDataType(DataTypeName(t)), t);
  }
  for (TensorOverlap o :
       {TensorOverlap::kNone, TensorOverlap::kRing, TensorOverlap::kPipe}) {
    EXPECT_EQ(ParseTensorOverlap(TensorOverlapName(o)), o);
  }
  for (RecomputePolicy r :
       {RecomputePolicy::kNone, RecomputePolicy::kAttentionOnly,
        RecomputePolicy::kFull}) {
    EXPECT_EQ(ParseRecompute(RecomputeName(r)), r);
  }
  for (AttentionType a :
       {AttentionType::kMultiHead, AttentionType::kMultiQuery}) {
    EXPECT_EQ(ParseAttention(AttentionName(a)), a);
  }
  for (ProcessingMode m :
       {ProcessingMode::kNoOverlap, ProcessingMode::kRoofline}) {
    EXPECT_EQ(ParseProcessingMode(ProcessingModeName(m)), m);
  }
  for (StageLayout l : {StageLayout::kEven, StageLayout::kUneven}) {
    EXPECT_EQ(ParseStageLayout(StageLayoutName(l)), l);
  }
}

TEST(Names, CalculonSpellings) {
  EXPECT_STREQ(DataTypeName(DataType::kBFloat16), "bfloat16");
  EXPECT_EQ(BytesPerElement(DataType::kFloat8), 1);
  EXPECT_EQ(BytesPerElement(DataType::kBFloat16), 2);
  EXPECT_EQ(BytesPerElement(DataType::kFloat32), 4);
  EXPECT_STREQ(RecomputeName(RecomputePolicy::kAttentionOnly), "attn_only");
  EXPECT_STREQ(ProcessingModeName(ProcessingMode::kNoOverlap), "no_overlap");
  EXPECT_EQ(ParseDataType("fp16"), std::nullopt);
  EXPECT_EQ(ParseRecompute("Full"), std::nullopt);
  EXPECT_EQ(ParseStageLayout(""), std::nullopt);
}

TEST(TypedProgram, AccessorsReadEitherKind) {
  TransformerInferenceMappingSpec inference;
  inference.model.hidden = 64;
  inference.parallelism.tensor.degree = 4;
  inference.parallelism.pipeline.schedule = ForwardOnly{};
  inference.batch.microbatch_size = 3;
  inference.options.datatype = DataType::kBFloat16;
  inference.system.name = "sys";
  TypedProgram program;
  program.spec = inference;
  EXPECT_EQ(program.model().hidden, 64);
  EXPECT_EQ(program.tensor().degree, 4);
  EXPECT_TRUE(std::holds_alternative<ForwardOnly>(program.pipeline().schedule));
  EXPECT_EQ(program.batch().microbatch_size, 3);
  EXPECT_EQ(program.options().datatype, DataType::kBFloat16);
  EXPECT_EQ(program.system().name, "sys");

  TransformerTrainingMappingSpec training;
  training.model.num_blocks = 7;
  program.spec = training;
  EXPECT_EQ(program.model().num_blocks, 7);
}

// MoeBlocks and StageMoeBlocks count a layer pattern's '1's eight bytes at
// a time: the same as counting one by one, for every length and offset and
// bytes that differ from '1' in one bit or only in the high bit.
TEST(Derive, LayerPatternCounts) {
  uint64_t state = 12345;
  const auto next = [&state]() {
    state = state * 6364136223846793005u + 1442695040888963407u;
    return state >> 33;
  };
  const char bytes[] = {'0', '1', '1', '3', static_cast<char>(0xb1), '\x30', 'q'};
  for (int length = 1; length <= 70; ++length) {
    TransformerModel model;
    model.num_blocks = length;
    model.moe = MixtureOfExperts{};
    std::string pattern;
    for (int i = 0; i < length; ++i) pattern += bytes[next() % sizeof(bytes)];
    model.moe->layer_pattern = pattern;
    EXPECT_EQ(MoeBlocks(model), std::count(pattern.begin(), pattern.end(), '1'))
        << pattern;
    for (int64_t p = 1; p <= length; ++p) {
      const int64_t per_stage = BlocksPerStage(length, p);
      int64_t most = 0;
      for (int64_t first = 0; first < length; first += per_stage) {
        const int64_t last = std::min<int64_t>(first + per_stage, length);
        most = std::max<int64_t>(
            most, std::count(pattern.begin() + first, pattern.begin() + last, '1'));
      }
      EXPECT_EQ(StageMoeBlocks(model, p), most) << pattern << " p " << p;
    }
  }
}

}  // namespace
}  // namespace blueprint
