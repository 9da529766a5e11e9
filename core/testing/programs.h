// Test-only builders of small, hand-checkable TypedPrograms for the pass
// tests: a tiny transformer on an A100-like system, with every strategy knob
// settable. The program goes through the real checker.
#ifndef BLUEPRINTING_CORE_TESTING_PROGRAMS_H_
#define BLUEPRINTING_CORE_TESTING_PROGRAMS_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"

namespace blueprint::test_programs {

struct TestMapping {
  int64_t t = 1, p = 1, d = 1, v = 1;
  int64_t global_batch = 8, microbatch = 1;
  TensorCommunication communication = AllReduce{};
  TensorOverlap overlap = TensorOverlap::kNone;
  RecomputePolicy recompute = RecomputePolicy::kNone;
  bool optimizer_sharding = false;
  bool data_overlap = false;
  bool training = true;
  bool multiquery = false;
  bool fused_activation = false;
  Offload offload;
  // The schedule; unset: interleaved_1f1b for v > 1, else single_stage,
  // 1f1b or forward_only by p and training.
  std::optional<PipelineSchedule> schedule;
  // Model: hidden 64, ff 256, 8 heads of 8, 8 blocks, sequence 32.
  int64_t hidden = 64, feedforward = 256, heads = 8, head_size = 8;
  int64_t blocks = 8, seq = 32;
};

// The A100-80GB system of Calculon's a100_80g.json, typed.
System A100System();

// The spec for `m` (training or inference per m.training).
MappingSpec TestSpec(const TestMapping& m);

// The checked program (kInvalidArgument if `m` violates a rule).
absl::StatusOr<TypedProgram> TestProgram(const TestMapping& m);

}  // namespace blueprint::test_programs

#endif  // BLUEPRINTING_CORE_TESTING_PROGRAMS_H_
