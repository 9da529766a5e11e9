#include "core/plan/hardware.h"

#include "core/base/units.h"

namespace blueprint {

int EfficiencyRowIndex(const std::vector<EfficiencyRow>& table, double size,
                       double unit) {
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i].threshold * unit <= size) return static_cast<int>(i);
  }
  return table.empty() ? -1 : static_cast<int>(table.size()) - 1;
}

const ProcessorRate* EngineRate(const Processor& engine, DataType datatype) {
  auto it = engine.rates.find(datatype);
  return it == engine.rates.end() ? nullptr : &it->second;
}

double RateThroughput(const ProcessorRate* rate, double flops) {
  if (rate == nullptr) return 0;  // the checker rejects this first
  const int row = EfficiencyRowIndex(rate->gflops_efficiency, flops, kGFLOP);
  const double eff = row < 0 ? 1.0 : rate->gflops_efficiency[row].efficiency;
  return rate->tflops * kTFLOP * eff;
}

double FlopTime(const ProcessorRate* rate, double flops) {
  return flops / RateThroughput(rate, flops);
}

double AchievableThroughput(const ProcessorRate* rate) {
  if (rate == nullptr || !rate->achievable_tflops.has_value()) return 0;
  return *rate->achievable_tflops * kTFLOP;
}

double GemmTime(const ProcessorRate* rate, double achievable, double flops) {
  const double time = FlopTime(rate, flops);
  if (achievable <= 0) return time;
  const double bound = flops / achievable;
  return bound > time ? bound : time;
}

double FlopTime(const Processor& engine, DataType datatype, double flops) {
  return FlopTime(EngineRate(engine, datatype), flops);
}

double MemoryTime(const MemoryTier& memory, double bytes) {
  const int row = EfficiencyRowIndex(memory.mb_efficiency, bytes, kMB);
  const double eff = row < 0 ? 1.0 : memory.mb_efficiency[row].efficiency;
  return bytes / (memory.gbps * kGB * eff);
}

double ProcessingTime(ProcessingMode mode, double flop_time, double mem_time) {
  switch (mode) {
    case ProcessingMode::kRoofline:
      return flop_time > mem_time ? flop_time : mem_time;
    case ProcessingMode::kNoOverlap:
      return flop_time + mem_time;
  }
  return flop_time + mem_time;
}

double CollectiveTime(const NetworkTier& net, CollectiveOp op, double bytes,
                      int64_t peers) {
  const NetworkOpCost* cost = &net.p2p;
  switch (op) {
    case CollectiveOp::kNone:
    case CollectiveOp::kPointToPoint: cost = &net.p2p; break;
    case CollectiveOp::kAllReduce: cost = &net.all_reduce; break;
    case CollectiveOp::kReduceScatter: cost = &net.reduce_scatter; break;
    case CollectiveOp::kAllGather: cost = &net.all_gather; break;
    // An all-to-all's bytes are what leaves the rank, sent point to point.
    case CollectiveOp::kAllToAll: cost = &net.p2p; break;
  }
  if (!cost->measured_busbw.empty() && peers > 1) {
    // nccl-tests' bus bandwidth (doc/PERFORMANCE.md): busbw = algbw x
    // 2(n-1)/n for an all-reduce and (n-1)/n for an all-gather or a
    // reduce-scatter of S bytes in all, so the time is S times that factor
    // over busbw, whatever the tier's ops say.
    const double n = static_cast<double>(peers);
    const double factor =
        (op == CollectiveOp::kAllReduce ? 2.0 : 1.0) * (n - 1) / n;
    const int row = EfficiencyRowIndex(cost->measured_busbw, n, 1);
    return net.latency_s +
           bytes * factor / (cost->measured_busbw[row].efficiency * kGB);
  }
  double size = bytes * cost->scalar;
  if (cost->offset.has_value()) {
    const double chunk = 1.0 / static_cast<double>(peers) * size;
    size += chunk * *cost->offset;
  }
  return net.latency_s + size / (net.bandwidth_gbps * kGB * net.efficiency);
}

System SystemUnderCorrections(System system, const Corrections& corrections) {
  if (!corrections.On(Correction::kMeasuredCollectiveRates)) {
    for (NetworkTier& net : system.networks) {
      for (const auto& [key, op] : NetworkCollectives(net)) {
        op->measured_busbw.clear();
      }
    }
  }
  return system;
}

double HierarchicalAllToAllTime(const NetworkTier& net, const NetworkTier& fast,
                                double bytes, int64_t peers, int64_t local) {
  if (local <= 1 || peers <= 1) {
    return CollectiveTime(net, CollectiveOp::kAllToAll, bytes, peers);
  }
  const double per_peer = bytes / static_cast<double>(peers - 1);
  const double remote = per_peer * static_cast<double>(peers - local);
  const double near = per_peer * static_cast<double>(local - 1);
  const double slow =
      remote > 0 ? CollectiveTime(net, CollectiveOp::kAllToAll, remote, peers)
                 : 0;
  const double quick =
      CollectiveTime(fast, CollectiveOp::kAllToAll, near, local);
  return slow > quick ? slow : quick;
}

namespace {

// The chance that none of a token's `topk` distinct experts, of `experts`
// spread evenly, is among the experts / groups of one group.
double MissProbability(double experts, double groups, int64_t topk) {
  const double elsewhere = experts - experts / groups;
  double miss = 1;
  for (int64_t j = 0; j < topk; ++j) {
    const double left = elsewhere - static_cast<double>(j);
    miss *= left > 0 ? left / (experts - static_cast<double>(j)) : 0;
  }
  return miss;
}

}  // namespace

double DeduplicatedAllToAllTime(const NetworkTier& net, const NetworkTier& fast,
                                double bytes, int64_t peers, int64_t local,
                                int64_t topk, int64_t experts, bool per_rank) {
  if (topk < 1 || experts < topk || peers <= 1) {
    return HierarchicalAllToAllTime(net, fast, bytes, peers, local);
  }
  const double ep = static_cast<double>(peers);
  const double k = static_cast<double>(topk);
  const double e = static_cast<double>(experts);
  // The copies of a token that leave for other ranks' experts: topk, or
  // per rank the peers that hold one of its experts.
  const double copies = per_rank ? ep * (1 - MissProbability(e, ep, topk)) : k;
  if (local <= 1 || peers <= local) {
    return HierarchicalAllToAllTime(net, fast,
                                    per_rank ? bytes * copies / k : bytes,
                                    peers, local);
  }
  const double nodes = ep / static_cast<double>(local);
  // One token's bytes: `bytes` is topk copies, (ep - 1) / ep of them sent.
  const double token = bytes * ep / ((ep - 1) * k);
  const double remote =
      token * (nodes - 1) * (1 - MissProbability(e, nodes, topk));
  const double near = token * copies * static_cast<double>(local - 1) /
                      static_cast<double>(local);
  const double slow =
      remote > 0 ? CollectiveTime(net, CollectiveOp::kAllToAll, remote,
                                  static_cast<int64_t>(nodes))
                 : 0;
  const double quick =
      CollectiveTime(fast, CollectiveOp::kAllToAll, near, local);
  return slow > quick ? slow : quick;
}

int64_t ExpertLocalPeers(const System& system, int64_t expert_network,
                         int64_t ep, int64_t etp) {
  if (expert_network <= 0 || etp <= 0 ||
      expert_network >= static_cast<int64_t>(system.networks.size())) {
    return 1;
  }
  const int64_t below =
      system.networks[static_cast<size_t>(expert_network - 1)].size;
  const int64_t local = below / etp;
  return local < 1 ? 1 : local > ep ? ep : local;
}

}  // namespace blueprint
