// Compiled into every embind module: operator new's handler when malloc
// fails (memory cannot grow any further) unwinds to wasm/guard.js with an
// error it reports as out of memory. The default (abort()) would report
// "Aborted(native code called abort())".
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>

#include <new>

EM_JS(void, bp_throw_out_of_memory, (), {
  var error = new Error('out of memory');
  error.blueprintingOutOfMemory = true;
  throw error;
});

namespace {

void OutOfMemory() { bp_throw_out_of_memory(); }

}  // namespace

EMSCRIPTEN_BINDINGS(blueprinting_out_of_memory) {
  std::set_new_handler(&OutOfMemory);
}
