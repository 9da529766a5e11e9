// The one size limit on every input file and string (CLI and wasm alike), so
// that a huge or endless input is refused with the same message everywhere
// instead of exhausting memory. A spec, a Calculon file or a Megatron-LM
// command line is a few kilobytes; 16 MiB leaves room for generated inputs.
#ifndef BLUEPRINTING_CORE_BASE_INPUT_LIMITS_H_
#define BLUEPRINTING_CORE_BASE_INPUT_LIMITS_H_

#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace blueprint {

inline constexpr size_t kMaxInputBytes = size_t{16} << 20;  // 16 MiB

// The error for an input over the limit; `name` is a path or an argument name.
inline std::string InputTooLargeMessage(absl::string_view name) {
  return absl::StrCat(name, ": input is larger than the limit of ",
                      kMaxInputBytes, " bytes (16 MiB)");
}

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_BASE_INPUT_LIMITS_H_
