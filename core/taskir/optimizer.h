// File: optimizer.h
//
// The optimizer's per-layer terms (Adam with float32 gradients, master copy
// and state), each formula written once. LowerTensorParallelBlock puts them
// on every task (lower_tasks.cc); the strategy search derives a block's sharded
// optimizer figures from its unsharded task footprints with the same
// formulas (core/search/block_table.cc), bit for bit.
//
// Example:
//   op.flops = OptimizerStepFlops(raw.weight_grads, shard);
#ifndef BLUEPRINTING_CORE_TASKIR_OPTIMIZER_H_
#define BLUEPRINTING_CORE_TASKIR_OPTIMIZER_H_

#include "core/spec/spec.h"

namespace blueprint {

// kAdamFlopsPerElement: Adam's vector FLOPs per weight-gradient element.
inline constexpr double kAdamFlopsPerElement = 11;

// kFloat32Bytes: the bytes of one element of the float32 gradient
// accumulator, master copy and optimizer state.
inline constexpr double kFloat32Bytes = 4;

// OptimizerStepFlops: one optimizer step over `weight_grad_elements`
// gradient elements, sharded `shard` ways (1: unsharded).
inline double OptimizerStepFlops(double weight_grad_elements, double shard) {
  return weight_grad_elements / shard * kAdamFlopsPerElement;
}

// OptimizerStateBytes: the float32 master copy of the weights (none when
// the datatype is float32 already) and the optimizer state, sharded.
inline double OptimizerStateBytes(double weight_elements,
                                  double optimizer_elements,
                                  double bytes_per_element, double shard) {
  const double master_copy =
      bytes_per_element < kFloat32Bytes ? weight_elements * kFloat32Bytes : 0;
  return (master_copy + optimizer_elements * kFloat32Bytes) / shard;
}

// WeightGradBytes: the weight gradients in the datatype, sharded.
inline double WeightGradBytes(double weight_grad_elements,
                              double bytes_per_element, double shard) {
  return weight_grad_elements * bytes_per_element / shard;
}

// UnshardedWeightGradBytes: the float32 gradient accumulator, unsharded.
inline double UnshardedWeightGradBytes(double weight_grad_elements) {
  return weight_grad_elements * kFloat32Bytes;
}

// WeightGradBytesFor: the weight gradients a rank keeps per layer under a
// precision accounting: Calculon's (WeightGradBytes: sharded with the
// optimizer) or Megatron-LM's mixed precision, whose float32 main gradients
// only ZeRO-2 and -3 (`shard_gradients`) shard.
inline double WeightGradBytesFor(PrecisionAccounting precision,
                                 double weight_grad_elements,
                                 double bytes_per_element, double shard,
                                 bool shard_gradients) {
  switch (precision) {
    case PrecisionAccounting::kCalculon:
      return WeightGradBytes(weight_grad_elements, bytes_per_element, shard);
    case PrecisionAccounting::kMegatronMixed:
      return UnshardedWeightGradBytes(weight_grad_elements) /
             (shard_gradients ? shard : 1.0);
  }
  return WeightGradBytes(weight_grad_elements, bytes_per_element, shard);
}

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_TASKIR_OPTIMIZER_H_
