// libFuzzer target over every adapter (core/adapters/fuzz_entry.h). Built by
// tools/fuzz_adapters with clang's -fsanitize=fuzzer,address,undefined; not a
// Bazel target (Bazel's toolchains here are gcc and emscripten).
#include <cstddef>
#include <cstdint>

#include "core/adapters/fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  blueprint::FuzzAdapters(data, size);
  return 0;
}
