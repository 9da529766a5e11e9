// Small local equivalents of the status macros and the variant visitor helper
// that abseil 20220623 does not ship (ABSL_RETURN_IF_ERROR, absl::Overload).
#ifndef BLUEPRINTING_CORE_BASE_STATUS_MACROS_H_
#define BLUEPRINTING_CORE_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// BP_RETURN_IF_ERROR(expr): returns the status of `expr` from the enclosing
// function when it is not OK.
#define BP_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    const ::absl::Status bp_status_ = (expr);     \
    if (!bp_status_.ok()) return bp_status_;      \
  } while (false)

#define BP_STATUS_CONCAT_INNER_(a, b) a##b
#define BP_STATUS_CONCAT_(a, b) BP_STATUS_CONCAT_INNER_(a, b)

// BP_ASSIGN_OR_RETURN(lhs, expr): evaluates the StatusOr `expr`; on error
// returns its status, otherwise moves its value into `lhs` (which may be a
// declaration such as `auto x`).
#define BP_ASSIGN_OR_RETURN(lhs, expr)                                   \
  BP_ASSIGN_OR_RETURN_IMPL_(BP_STATUS_CONCAT_(bp_statusor_, __LINE__), \
                            lhs, expr)
#define BP_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                              \
  if (!statusor.ok()) return statusor.status();        \
  lhs = std::move(*statusor)

namespace blueprint {

// Overloaded: builds a visitor from lambdas for std::visit. Give every
// alternative its own lambda; never add an `auto` catch-all, so that a new
// alternative fails to compile in every consumer until it is handled.
template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_BASE_STATUS_MACROS_H_
