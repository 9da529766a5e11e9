// embind surface of Megatron-LM's import (see bindings.cc for the conventions):
// in the full module, and on its own in //wasm:blueprinting_import, which
// web/elements.js loads only for an element with a launch line (the adapter
// and its flag catalogue are kept out of the slim module).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>
#include <vector>

#include "core/api/commands.h"
#include "wasm/js_values.h"

namespace {

using blueprint_wasm::Arguments;
using blueprint_wasm::ToJs;
using emscripten::val;

// `blueprint import megatron --system SYS [--hf-config CONFIG] -- ARGS...`:
// `config_arg` is optional (undefined: no config), else a string.
val ImportMegatron(val sys_arg, val words_arg, val config_arg) {
  std::string sys, config;
  std::vector<std::string> words;
  Arguments args;
  args.String(sys_arg, "system", &sys)
      .Strings(words_arg, "args",
               "importMegatron: args must be an array of strings", &words);
  const bool with_config = !config_arg.isUndefined();
  if (with_config) args.String(config_arg, "hf_config", &config);
  if (!args.ok()) return args.Refusal();
  return ToJs(
      blueprint::ImportMegatron(sys, words, with_config ? &config : nullptr));
}


}  // namespace

EMSCRIPTEN_BINDINGS(blueprinting_import) {
  // guard.js always passes all three arguments (the config may be undefined).
  emscripten::function("importMegatron", &ImportMegatron);
}
