// SplitMix64: the fixed-seed random stream of the randomized tests (random
// mappings, extreme values). Its integer arithmetic is the same natively and
// in wasm, so both builds draw the same cases.
#ifndef BLUEPRINTING_CORE_TESTING_SPLIT_MIX_H_
#define BLUEPRINTING_CORE_TESTING_SPLIT_MIX_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace blueprint::testing {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // A number in [0, n), n > 0.
  size_t Below(size_t n) { return static_cast<size_t>(Next() % n); }
  template <typename T>
  const T& Pick(const std::vector<T>& values) {
    return values[Below(values.size())];
  }
  bool Coin() { return Next() & 1; }

 private:
  uint64_t state_;
};

}  // namespace blueprint::testing

#endif  // BLUEPRINTING_CORE_TESTING_SPLIT_MIX_H_
