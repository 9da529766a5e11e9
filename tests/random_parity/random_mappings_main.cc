// Prints the digest of every stage for mappings drawn at random over the
// option space (a fixed-seed SplitMix64 stream), or of the error text when a
// mapping is rejected. Built natively and to wasm; the test compares the two
// outputs byte for byte, so inputs the golden corpus does not contain are
// checked for native/wasm identity too.
//
// usage: random_mappings [COUNT] [SEED]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/base/sha256.h"
#include "core/pipeline/pipeline.h"
#include "core/report/report.h"
#include "core/spec/check.h"
#include "core/testing/programs.h"
#include "core/testing/split_mix.h"

namespace blueprint {
namespace {

using ::blueprint::testing::SplitMix64;

struct ModelShape {
  int64_t hidden, feedforward, heads, head_size, blocks, seq;
};

MappingSpec RandomSpec(SplitMix64& rng) {
  static const std::vector<ModelShape> kModels = {
      {768, 3072, 16, 48, 12, 2048},      {4096, 16384, 32, 128, 24, 2048},
      {5140, 20560, 40, 128, 40, 2048},   {6144, 24576, 64, 96, 48, 2048},
      {12288, 49152, 96, 128, 96, 2048},  {8192, 32768, 64, 128, 64, 8192},
      {20480, 81920, 128, 160, 105, 2048}};
  const ModelShape& shape = rng.Pick(kModels);
  test_programs::TestMapping m;
  m.hidden = shape.hidden;
  m.feedforward = shape.feedforward;
  m.heads = shape.heads;
  m.head_size = shape.head_size;
  m.blocks = shape.blocks;
  m.seq = shape.seq;
  m.t = rng.Pick(std::vector<int64_t>{1, 2, 4, 8});
  m.p = rng.Pick(std::vector<int64_t>{1, 2, 3, 4, 6, 8, 12});
  m.d = rng.Pick(std::vector<int64_t>{1, 2, 4, 8});
  m.v = m.p > 1 ? rng.Pick(std::vector<int64_t>{1, 1, 2, 3, 4}) : 1;
  m.microbatch = rng.Pick(std::vector<int64_t>{1, 2, 4});
  m.global_batch = m.d * m.microbatch * rng.Pick(std::vector<int64_t>{1, 3, 8, 16});
  m.communication = rng.Pick(std::vector<TensorCommunication>{
      AllReduce{}, ReduceScatterAllGather{false}, ReduceScatterAllGather{true},
      EdgeReduceScatterAllGather{}});
  m.overlap = m.t > 1 ? rng.Pick(std::vector<TensorOverlap>{
                            TensorOverlap::kNone, TensorOverlap::kRing,
                            TensorOverlap::kPipe})
                      : TensorOverlap::kNone;
  m.training = rng.Next() % 5 != 0;
  m.recompute = m.training ? rng.Pick(std::vector<RecomputePolicy>{
                                 RecomputePolicy::kNone,
                                 RecomputePolicy::kAttentionOnly,
                                 RecomputePolicy::kFull})
                           : RecomputePolicy::kNone;
  m.optimizer_sharding = m.training && m.d > 1 && rng.Coin();
  m.data_overlap = m.training && m.d > 1 && rng.Coin();
  m.multiquery = rng.Next() % 4 == 0;
  m.fused_activation = rng.Coin();
  m.offload = {rng.Next() % 4 == 0, rng.Next() % 4 == 0,
               m.training && rng.Next() % 4 == 0};
  return test_programs::TestSpec(m);
}

}  // namespace
}  // namespace blueprint

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 200;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20261129;
  blueprint::SplitMix64 rng(seed);
  int accepted = 0;
  for (int i = 0; i < count; ++i) {
    const blueprint::MappingSpec spec = blueprint::RandomSpec(rng);
    absl::StatusOr<blueprint::TypedProgram> program =
        blueprint::CheckSpec(spec);
    if (!program.ok()) {
      std::printf("%d errors %s\n", i,
                  blueprint::Sha256Hex(std::string(program.status().message()))
                      .c_str());
      continue;
    }
    absl::StatusOr<blueprint::PipelineResult> result =
        blueprint::RunPipeline(*program);
    if (!result.ok()) {
      std::printf("%d pipeline-error %s\n", i,
                  std::string(result.status().message()).c_str());
      continue;
    }
    ++accepted;
    for (const blueprint::StageText& stage : blueprint::StageTexts(*result)) {
      std::printf("%d %s %s\n", i, stage.stage.c_str(),
                  blueprint::Sha256Hex(stage.text).c_str());
    }
  }
  std::printf("accepted %d of %d\n", accepted, count);
  return 0;
}
