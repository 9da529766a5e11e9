// embind surface of the Blueprinting wasm module (see blueprinting.d.ts).
#include <string>

#include <emscripten/bind.h>

#include "wasm/demo.h"

namespace {

std::string Version() { return "blueprinting 0.1.0"; }

}  // namespace

EMSCRIPTEN_BINDINGS(blueprinting) {
  emscripten::function("version", &Version);
  emscripten::function("digestDemo", &blueprinting::DigestDemo);
}
