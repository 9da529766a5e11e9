// The hardware primitives of the system model (calculon/MODEL.md §4.1):
// engine throughput and memory throughput looked up in efficiency tables,
// processing time (no_overlap or roofline) and collective time on a network
// tier. Pure functions of the typed System; no allocation.
#ifndef BLUEPRINTING_CORE_PLAN_HARDWARE_H_
#define BLUEPRINTING_CORE_PLAN_HARDWARE_H_

#include <cstdint>
#include <vector>

#include "core/spec/corrections.h"
#include "core/spec/spec.h"
#include "core/taskir/task_ir.h"

namespace blueprint {

// Index of the first row whose threshold*unit <= size (rows are descending
// and end at 0, so some row always matches; -1 only for an empty table).
int EfficiencyRowIndex(const std::vector<EfficiencyRow>& table, double size,
                       double unit);

// The rate of `engine` in `datatype`, nullptr when it has none (the checker
// rejects that first): looked up once, for many FlopTime calls.
const ProcessorRate* EngineRate(const Processor& engine, DataType datatype);
// FLOP/s at `rate` (nullptr: 0) for an operation of `flops` FLOPs.
double RateThroughput(const ProcessorRate* rate, double flops);
// Seconds for `flops` FLOPs at `rate`: FlopTime(engine, datatype, flops)
// with the rate looked up.
double FlopTime(const ProcessorRate* rate, double flops);

// FLOP/s of `rate`'s maximum achievable matmul rate (its
// achievable_tflops), 0 when it has none or `rate` is nullptr.
double AchievableThroughput(const ProcessorRate* rate);
// Seconds for a GEMM of `flops` FLOPs at `rate`, at most at `achievable`
// FLOP/s (0: no bound): correction kAchievableMatmulRate, where the best
// GEMM shape's measured rate bounds every shape's.
double GemmTime(const ProcessorRate* rate, double achievable, double flops);

// Seconds for `flops` FLOPs of `engine` in `datatype` (0 FLOPs take 0 s).
double FlopTime(const Processor& engine, DataType datatype, double flops);
// Seconds to move `bytes` through a memory tier.
double MemoryTime(const MemoryTier& memory, double bytes);
// Calculon's System.get_processing_time.
double ProcessingTime(ProcessingMode mode, double flop_time, double mem_time);
// Network.time(op, size, n): latency + scaled size / effective bandwidth;
// a collective with a measured bus bandwidth (NetworkOpCost.measured_busbw)
// at that rate instead, as nccl-tests defines it. `op` must not be kNone.
double CollectiveTime(const NetworkTier& net, CollectiveOp op, double bytes,
                      int64_t peers);

// SystemUnderCorrections: `system` as `corrections` price it: without the
// refined profile's measured_collective_rates, the tiers' measured bus
// bandwidths dropped (so Calculon's profile prices this project's presets
// as Calculon would). The analysis (RunPipeline) and the search call it once
// on their copy of the system.
System SystemUnderCorrections(System system, const Corrections& corrections);

// An all-to-all on tier `net` over `peers` ranks of which `local` (the rank
// included) also share the faster tier `fast`: `bytes` leave the rank in
// equal shares per peer, those for the local peers on `fast` and the rest
// on `net`, at the same time (NCCL's all-to-all is one send and receive
// per peer, each on its own transport): the slower of the two. With
// local <= 1 it is CollectiveTime(net, kAllToAll, bytes, peers) exactly.
double HierarchicalAllToAllTime(const NetworkTier& net, const NetworkTier& fast,
                                double bytes, int64_t peers, int64_t local);

// The expert all-to-all of a node-deduplicating dispatcher (DeepEP,
// HybridEP): `bytes` is what the plain all-to-all would send (each token
// once per routed expert on another of the `peers` ranks, topk experts of
// `experts`, spread evenly: the router's top-k are distinct experts, here
// taken as uniformly placed, as forced balancing makes them). With
// n = peers / local nodes, a token crosses `net` once per other node that
// holds one of its experts, (n - 1)(1 - C(E - E/n, k) / C(E, k)) times on
// average, and each of its topk copies that is not for the receiving GPU
// crosses `fast` once, topk (local - 1) / local; both at once, the slower
// of the two. With local <= 1 or one node it is HierarchicalAllToAllTime.
// With `per_rank` (correction rank_deduplicated_dispatch) a token goes to
// each destination rank once, whatever the number of its experts there:
// of the peers, P (1 - C(E - E/P, k) / C(E, k)) hold one of its experts, so
// that many copies replace the topk, on `fast` and, within one node, on the
// only tier.
double DeduplicatedAllToAllTime(const NetworkTier& net, const NetworkTier& fast,
                                double bytes, int64_t peers, int64_t local,
                                int64_t topk, int64_t experts, bool per_rank);

// The expert-parallel peers of a rank that share the tier below the expert
// all-to-all's (the rank included; 1 when that runs on tier 0): expert
// ranks are numbered expert-tensor ranks first, so a tier of N processors
// holds N / etp consecutive expert-parallel peers, at most ep.
int64_t ExpertLocalPeers(const System& system, int64_t expert_network,
                         int64_t ep, int64_t etp);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_PLAN_HARDWARE_H_
