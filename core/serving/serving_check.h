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

#include <vector>

#include "absl/status/status.h"
#include "core/base/field_errors.h"
#include "core/serving/serving_spec.h"

namespace blueprint {

// Every violation of `spec`, in a fixed order; empty when it is valid.
std::vector<FieldError> FindServingViolations(const ServingSpec& spec);

// OK, or kInvalidArgument listing the violations (InvalidInputError).
absl::Status CheckServingSpec(const ServingSpec& spec);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SERVING_SERVING_CHECK_H_
