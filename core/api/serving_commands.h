// The serving commands of the `blueprint` CLI (issue #48), as pure functions
// on strings like every command of commands.h: `blueprint serve check`,
// `blueprint serve` and `blueprint serve explain` on a serving spec
// (core/serving/README.md). Exit codes and errors as commands.h says: 2 with
// one error per violated rule (its field and code), 3 for a bug.
//
// Example:
//   CommandResult result = Serve(spec_text);
//   // result.output: "blueprinting.serving_analysis/1\npools aggregated\n..."
#ifndef BLUEPRINTING_CORE_API_SERVING_COMMANDS_H_
#define BLUEPRINTING_CORE_API_SERVING_COMMANDS_H_

#include <string>
#include <vector>

#include "core/api/commands.h"

namespace blueprint {

// ServeCheck: `blueprint serve check SPEC`. Output: the canonical serving
// spec (every field spelled out, presets expanded); errors: every problem of
// the document, or every violated rule.
CommandResult ServeCheck(const std::string& spec_json);

// Serve: `blueprint serve SPEC`. Output: the serving analysis' canonical
// text (every figure, then its formula and lineage).
CommandResult Serve(const std::string& spec_json);

// ServeExplain: `blueprint serve explain SPEC FIGURE`. Output: the figure's
// value, formula and sources down to the spec's and the system's values.
CommandResult ServeExplain(const std::string& spec_json,
                           const std::string& figure);

// ServeSearch: `blueprint search --serving --system SYS --hf-config CONFIG
// FLAGS...` (core/serving/serving_search.h): every serving mapping of the
// config's model on --procs GPUs of the system, best first. `args` are the
// flags of ServingSearchFlags() (--system and --hf-config skipped: the
// texts are given). Errors: every problem of the flags, the system, the
// model and the rules no mapping changes, at once, each naming its flag.
CommandResult ServeSearch(const std::string& system_json,
                          const std::string& hf_config_json,
                          const std::vector<std::string>& args);

// ServeSearchFlagErrors: the problems of the flags alone (exit 2, or 0 when
// none): what the CLI reports beside an unreadable --system or --hf-config.
CommandResult ServeSearchFlagErrors(const std::vector<std::string>& args);

// The usage line of ServeSearch's flags (made from the flag table), the
// same string on every call.
const char* ServeSearchSynopsis();

// ImportVllm: `blueprint import vllm --system SYS --hf-config CONFIG --
// ARGS...` (core/serving/vllm_import.h): the canonical serving spec of a
// `vllm serve` line and its benchmark's load, serving the config's model on
// the system. `hf_config_json` is required (nullptr: an error naming
// --hf-config). Notes: the ignored flags and the other notes. Only the
// import's errors are reported; run ServeCheck for the rules.
CommandResult ImportVllm(const std::string& system_json,
                         const std::vector<std::string>& args,
                         const std::string* hf_config_json);

// ImportSglang: `blueprint import sglang --system SYS --hf-config CONFIG --
// ARGS...` (core/serving/sglang_import.h): the same for a
// `python -m sglang.launch_server` line and `python -m sglang.bench_serving`'s
// load.
CommandResult ImportSglang(const std::string& system_json,
                           const std::vector<std::string>& args,
                           const std::string* hf_config_json);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_API_SERVING_COMMANDS_H_
