// The unit conversions of the system model, in one place. Calculon's system
// files give capacities in GiB (binary), rates in TFLOP/s and GB/s, and
// efficiency-table thresholds in GFLOP and MB (decimal); the model computes
// in bytes, FLOPs and seconds. Each constant is the number of base units in
// one named unit, so `gib * kGiB` is bytes and `bytes / kGiB` is GiB.
//
// Example:
//   const double capacity_bytes = system.mem1.gib * kGiB;
//   const double bytes_per_second = memory.gbps * kGB;
//   const double flops_per_second = rate.tflops * kTFLOP;
#ifndef BLUEPRINTING_CORE_BASE_UNITS_H_
#define BLUEPRINTING_CORE_BASE_UNITS_H_

namespace blueprint {

// Bytes per GiB (2^30): memory capacities.
inline constexpr double kGiB = 1073741824.0;
// Bytes per GB (10^9): memory and network bandwidths in GB/s.
inline constexpr double kGB = 1e9;
// Bytes per MB (10^6): memory efficiency-table thresholds.
inline constexpr double kMB = 1e6;
// FLOPs per GFLOP (10^9): engine efficiency-table thresholds.
inline constexpr double kGFLOP = 1e9;
// FLOPs per TFLOP (10^12): engine peak rates in TFLOP/s.
inline constexpr double kTFLOP = 1e12;

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_BASE_UNITS_H_
