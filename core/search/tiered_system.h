// SystemWithTiers: a system whose network tiers are its first two repeated
// into `tiers` tiers of different sizes and bandwidths, for measuring and
// testing the search on many tiers (tools/search_bench --tiers,
// core/search/many_tiers_test.cc). Even tiers are NVLink-like (sizes 8, 16,
// 32, 64 for a100_80g, slower and slower), odd tiers InfiniBand-like (each a
// little faster and using more of the processor).
#ifndef BLUEPRINTING_CORE_SEARCH_TIERED_SYSTEM_H_
#define BLUEPRINTING_CORE_SEARCH_TIERED_SYSTEM_H_

#include <cstddef>

#include "core/spec/spec.h"

namespace blueprint {

// `system` must list at least two network tiers.
inline System SystemWithTiers(const System& system, int tiers) {
  System out = system;
  out.networks.clear();
  for (int i = 0; i < tiers; ++i) {
    NetworkTier net = system.networks[static_cast<size_t>(i % 2)];
    const int k = i / 2;
    if (i % 2 == 0) {
      net.size <<= k;
      net.bandwidth_gbps /= 1 + k;
      net.latency_s *= 1 + k;
    } else {
      net.bandwidth_gbps *= 1 + 0.5 * k;
      net.processor_usage += 0.01 * k;
    }
    out.networks.push_back(net);
  }
  return out;
}

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SEARCH_TIERED_SYSTEM_H_
