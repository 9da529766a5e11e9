// Prints DigestDemo() natively, for comparison with the wasm module's.
#include <cstdio>

#include "wasm/demo.h"

int main() {
  std::printf("%s\n", blueprinting::DigestDemo().c_str());
  return 0;
}
