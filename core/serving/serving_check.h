// The serving checker: every rule a ServingSpec must satisfy for the serving
// model (serving_model.h) to mean something, all violations reported at
// once, each naming the field, the values and the rule. The model's and the
// system's own rules are the training checker's (core/spec/check.h
// FindModelAndSystemViolations); then the datatypes, the workload, each
// pool's degrees against the model (heads, key/value heads, blocks,
// feedforward and experts divisible), the GPUs against the system, and,
// when every structural rule holds, the memory: weights and activations fit
// each pool's ranks and the decode pool's KV cache holds the workload's
// concurrency. A spec the checker accepts is analysed without error.
//
// Example:
//   std::vector<FieldError> violations = FindServingViolations(spec);
//   // {"pools.pool.tensor", "pools.pool.tensor (3) must divide
//   //   model.attn_heads (64) ...", ErrorCode::kNotDivisible}, ...
#ifndef BLUEPRINTING_CORE_SERVING_SERVING_CHECK_H_
#define BLUEPRINTING_CORE_SERVING_SERVING_CHECK_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/base/field_errors.h"
#include "core/serving/serving_model.h"
#include "core/serving/serving_spec.h"

namespace blueprint {

// Every violation of `spec`, in a fixed order; empty when it is valid.
std::vector<FieldError> FindServingViolations(const ServingSpec& spec);

// OK, or kInvalidArgument listing the violations (InvalidInputError).
absl::Status CheckServingSpec(const ServingSpec& spec);

// The rules that change with a mapping's replicas and concurrency, each one
// function that FindServingViolations and the serving search
// (serving_search.h, per mapping) both call. None allocates.

// workload.concurrency is a multiple of the decode (shared) pool's
// attention_data x pipeline (equal groups, one microbatch per stage); true
// while a degree or the concurrency is not a count (their own rules).
bool ServingConcurrencyHolds(const ServingSpec& spec);

// `gpus` fit in the system's last network tier; true for a system without
// tiers (the training checker reports it).
bool ServingGpusFitSystem(const System& system, int64_t gpus);

// The memory rules' verdict, for a spec whose other rules hold: the pools'
// memory and whether each rule holds.
struct ServingCapacity {
  PoolMemory decode;   // the decode (shared) pool's
  PoolMemory prefill;  // the prefill pool's, when disaggregated
  // The decode pool's weights and activations leave room for a KV cache.
  bool decode_has_room = true;
  // workload.concurrency <= max_concurrency (judged when there is room).
  bool concurrency_fits = true;
  // A prefill pool holds its weights, activations and prompts in flight.
  bool prefill_fits = true;
  bool holds() const {
    return decode_has_room && concurrency_fits && prefill_fits;
  }
};
ServingCapacity JudgeServingCapacity(const ServingSpec& spec);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SERVING_SERVING_CHECK_H_
