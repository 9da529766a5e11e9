// Checked 64-bit integer arithmetic: every product and quotient of user
// supplied sizes goes through these, so that a 2^62 degree is reported as an
// error instead of wrapping around.
#ifndef BLUEPRINTING_CORE_BASE_CHECKED_MATH_H_
#define BLUEPRINTING_CORE_BASE_CHECKED_MATH_H_

#include <cstdint>
#include <optional>

namespace blueprint {

// Returns a*b, or nullopt when the product does not fit in int64_t.
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// Returns a+b, or nullopt on overflow.
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// Returns the product of all factors, or nullopt on overflow.
inline std::optional<int64_t> CheckedProduct(
    std::initializer_list<int64_t> factors) {
  int64_t out = 1;
  for (int64_t f : factors) {
    if (__builtin_mul_overflow(out, f, &out)) return std::nullopt;
  }
  return out;
}

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_BASE_CHECKED_MATH_H_
